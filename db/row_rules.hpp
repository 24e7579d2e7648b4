#pragma once
// The one row validator: the rules every row of every table must keep, checked by the C++ code
// and not left to SQLite's CHECK constraints (which SQLite does not verify on a read-only
// connection, and which no longer list the operators and element types: schema version 11).
// `db check` runs it over every table; the snapshot loader, export, merge and import skip or
// refuse the rows it names; writers and import apply the same field rules before they write.
// Rules and limits: docs/database.md, "Row rules".

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunedreduce/types.hpp"

namespace tunedreduce::db {

class Connection;

/// Text limits (bytes), at import, merge, every write and every read.
inline constexpr std::size_t max_name_bytes = 256;        // kernel ids, names, hosts, hashes, uuids
inline constexpr std::size_t max_path_bytes = 4096;       // origins, sources, library paths
inline constexpr std::size_t max_error_bytes = 4096;      // a measurement's or result's error
inline constexpr std::size_t max_config_bytes = 1 << 20;  // a run's configuration text

/// One rule a row breaks.
struct RowFinding {
  std::string table;
  std::string row;      // "id 12", or the key of a table without ids ("run_id 3, device_id 1")
  std::int64_t id = 0;  // the row id (0 in a table without ids)
  std::string column;   // the column, or several joined by '/' for a rule between columns
  std::string value;    // as stored, printable (common/printable.hpp), cut
  std::string why;
  /// "winners id 12: n_lo = -1: must be at least 0"
  std::string text() const;
};

/// Field rules, shared by the row validator, import (db/dataset.cpp) and the writers: each
/// returns why \p v breaks the rule, or nothing.
/// A time in microseconds (a median, p10, p90): finite and more than 0; a failed measurement's
/// (\p of_ok_result false) may be 0.
std::optional<std::string> bad_time(double v, bool of_ok_result = true);
std::optional<std::string> bad_rate(double v);  // finite and >= 0 (GB/s)
std::optional<std::string> bad_text(std::string_view v, std::size_t max, bool may_be_empty);
std::optional<std::string> bad_dtype_name(std::string_view v);  // a short name of dtype_name
std::optional<std::string> bad_op_name(std::string_view v);     // a name of op_name

/// Segmented kernels (schema version 12; kernels/segmented/): their ids are
/// "seg.FAMILY.bBLOCK[.gGROUP].vVEC.LAYOUT.DTYPE.OP" ("seg.group.b256.g8.v4.fixed.f32.sum"; only
/// the group family has the g part), and every id that begins "seg." is one. db/ links no
/// kernels (nor CUDA), so the form is read here; tests/db compares this reading with
/// kernels::segmented::parse_seg_id over the whole segmented registry and with ids it refuses.
struct SegmentedId {
  std::string family;  // thread, group, block, split, tile
  std::string layout;  // fixed, offsets32, offsets64 (kernels::segmented::seg_layout_name)
  DType dtype = DType::i32;
  Op op = Op::sum;
};
/// Whether \p kernel_id names a segmented kernel: it begins with "seg.".
bool is_segmented_id(std::string_view kernel_id);
/// The parts of a segmented id, or nothing when \p kernel_id is not one of that form (as
/// kernels::segmented::parse_seg_id: the family, layout, element type and operator are names of
/// this binary, the numbers positive decimals without a leading zero that fit an int).
std::optional<SegmentedId> parse_segmented_id(std::string_view kernel_id);
/// A layout of segments: "fixed", "offsets32" or "offsets64".
std::optional<std::string> bad_layout_name(std::string_view v);
/// The segmentation rules of a measurement: a segmented kernel's measurement has a segment_size
/// (at least 1) that divides n, and its id is of the form above with the measurement's dtype and
/// op; a whole-array kernel's has none. Why \p kernel_id, \p dtype, \p op, \p n and
/// \p segment_size break them, or nothing.
std::optional<std::string> bad_segmentation(std::string_view kernel_id, DType dtype, Op op,
                                            std::uint64_t n,
                                            std::optional<std::uint64_t> segment_size);
/// Why \p kernel_id cannot be the kernel of a segmented winner (or its runner-up) of
/// \p dtype, \p op and \p layout, or nothing.
std::optional<std::string> bad_segmented_kernel(std::string_view kernel_id, DType dtype, Op op,
                                                std::string_view layout);

/// The tables the validator knows, in the order `db check` reports them.
const std::vector<std::string_view>& validated_tables();

/// Runs the rules over every row of \p table (a table the file lacks has no rows); stops after
/// \p limit findings. Reads only.
std::vector<RowFinding> validate_table(Connection& conn, std::string_view table,
                                       std::size_t limit = 1000);
/// Every table of validated_tables().
std::vector<RowFinding> validate_rows(Connection& conn, std::size_t limit = 1000);

/// The rows of \p table that break a rule, by id, with the first rule each breaks (for readers
/// that skip them by name).
std::map<std::int64_t, RowFinding> invalid_rows(Connection& conn, std::string_view table);

}  // namespace tunedreduce::db
