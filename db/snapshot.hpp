#pragma once
// Loading winners for the runtime library: each table in one query, from a read-only database.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/device_fingerprint.hpp"
#include "db/database.hpp"
#include "db/db_error.hpp"
#include "db/winner_table.hpp"

namespace tunedreduce::db {

/// Every winner of the device with fingerprint key \p device_key (lookup levels 1 and 2), per
/// L2 mode.
/// Rows that break the row rules (db/row_rules.hpp) are skipped, each named in \p skipped.
WinnerTables load_device_winners(Database& db, std::string_view device_key,
                                 std::vector<std::string>* skipped = nullptr);

/// Winners tuned on *other* devices of the same model (lookup level 3): the same compute
/// capability and SM count and the same memory system (bus width, memory clock, L2 size), so
/// that a winner's timing carries over; an H200 is not served an H100's rows (same compute
/// capability and SM count, another memory). For each (dtype, op) the table holds the winners
/// of one device only: a device with the same name first, then the smallest fingerprint key; so
/// intervals never overlap. The choice is made per (dtype, op, L2 mode): the warm table may come
/// from another device than the cold one where the first device has no warm winners.
WinnerTables load_similar_winners(Database& db, const DeviceFingerprint& fp,
                                  std::vector<std::string>* skipped = nullptr);

/// Every segmented winner of the device with fingerprint key \p device_key (schema version 12;
/// empty for an older file), per L2 mode. Rows that break the row rules, or whose evidence's
/// median is not a positive finite time, are skipped, each named in \p skipped, and so is a row
/// whose rectangle overlaps an earlier row's (by size_lo, count_lo, id) of its group, which
/// SegWinnerTable would refuse.
SegWinnerTables load_device_segmented_winners(Database& db, std::string_view device_key,
                                              std::vector<std::string>* skipped = nullptr);

/// The segmented winners of *other* devices of the same model, by load_similar_winners' rule:
/// per (dtype, op, layout, L2 mode) the rows of one device only, a device with the same name
/// first, then the smallest fingerprint key. Skipped rows as above.
SegWinnerTables load_similar_segmented_winners(Database& db, const DeviceFingerprint& fp,
                                               std::vector<std::string>* skipped = nullptr);

/// What the runtime library loads once per device. Never throws for database problems: they
/// are reported in `problem` and `message` (one line naming the file), and the tables are empty.
/// Each table is per L2 mode: `exact[L2Mode::cold]`, `similar[L2Mode::warm]`, ...
struct Snapshot {
  WinnerTables exact;    // this device
  WinnerTables similar;  // same model: compute capability, SM count, memory system
  /// The segmented winners (schema version 12), at the same two levels (this device, then the
  /// same model chosen per (dtype, op, layout, L2 mode) as for `similar`); empty for older files.
  SegWinnerTables seg_exact;
  SegWinnerTables seg_similar;
  std::optional<Problem> problem;
  std::string message;
  /// Winner rows skipped because they (or their device, or their evidence's median) break the
  /// row rules, one line each naming the table, row, column, value and why; the other rows are
  /// in the tables.
  std::vector<std::string> skipped;
};

/// Opens \p path read-only (never creates, never migrates), loads both tables, closes the file.
Snapshot load_snapshot(const std::filesystem::path& path, const DeviceFingerprint& fp,
                       const ReaderOptions& opt = {});

}  // namespace tunedreduce::db
