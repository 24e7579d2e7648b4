#pragma once
// The one column list of each kind of row that db/ writes or reads whole in more than one place
// — a measurement (Database's insert and queries, the export's reading, import and merge), a
// bench run and a bench result (db/bench.cpp, and the export's import and merge) — with the
// functions that bind and read those columns in that order. Only the tables' definitions and the
// frozen migrations in db/schema.cpp spell the columns otherwise.
//
//   "INSERT INTO measurements (run_id, seq, device_id, gpu_id, " + measurement_columns.names() +
//   ") VALUES (?1, ?2, ?3, ?4, " + measurement_columns.parameters(5) + ")"
//                                                then bind_measurement(st, 5, m)
//   "SELECT id, run_id, seq, device_id, gpu_id, " + measurement_columns.names() +
//   " FROM measurements"                         then read_measurement(st, 5, m)

#include <span>
#include <string>
#include <string_view>

#include "db/bench.hpp"
#include "db/records.hpp"
#include "db/statement.hpp"

namespace tunedreduce::db {

/// A list of columns as statements spell it.
class ColumnList {
 public:
  constexpr explicit ColumnList(std::span<const std::string_view> names) : names_(names) {}
  /// "a, b, c"
  std::string names() const;
  /// "a, NULL, c": the names, each column of \p absent read as NULL (a file older than the
  /// column: measurements' segment_size before schema version 12).
  std::string names_reading(std::span<const std::string_view> absent) const;
  /// "?first, ?first+1, ...": one parameter per column, for an INSERT.
  std::string parameters(int first) const;
  /// "a = ?first, b = ?first+1, ...", for an UPDATE.
  std::string assignments(int first) const;

 private:
  std::span<const std::string_view> names_;
};

/// What a measurements row says about its measurement: kernel_id, family, block, unroll, smem,
/// finish, dtype, op, n, l2_mode, outcome, median_us, p10_us, p90_us, repeats, gbps, sm_clock_mhz,
/// mem_clock_mhz, error, measured_at, segment_size (schema version 12: read it with
/// names_reading({"segment_size"}) from an older file). Not the row's id and links (run_id, seq,
/// device_id, gpu_id): those differ from file to file, and each statement names them itself.
extern const ColumnList measurement_columns;
/// Binds \p m's columns to the parameters first, first + 1, ... (measured_at as it is, empty
/// too).
void bind_measurement(Statement& st, int first, const Measurement& m);
/// Reads them from the result column \p first on into \p m.
void read_measurement(const Statement& st, int first, Measurement& m);

/// Whether the measurement columns from \p first on name an element type, operator, L2 mode and
/// outcome this binary has (and an operator defined for the type). A row that does not (a later
/// binary's operator, a hand edit) is skipped by readers, never read as the enums' first values;
/// `db check` names it (db/row_rules.hpp).
bool measurement_names_known(const Statement& st, int first);
/// The same for the bench_results columns from \p first on (dtype, op, method; and the layout of
/// segmented_bench_result_columns where the statement has it).
bool bench_result_names_known(const Statement& st, int first);
/// The same for a dtype, an op and an L2 mode at the columns given.
bool names_known(const Statement& st, int dtype_col, int op_col, int l2_col);

/// A bench_runs row but its id: uuid, device_id, tool_version, manifest_hash, host, origin,
/// library_database, started_at, ended_at, status, l2, repeats, warmups, seed, driver_version,
/// runtime_version, attainable_gbps, sm_clock_mhz, mem_clock_mhz.
extern const ColumnList bench_run_columns;
void bind_bench_run(Statement& st, int first, const BenchRunRecord& r);  // r.id unused
void read_bench_run(const Statement& st, int first, BenchRunRecord& r);  // r.id unset

/// A bench_results row but its id: bench_run_id, dtype, op, n, method, verified, error,
/// median_us, p10_us, p90_us, repeats, temp_bytes, kernel_id, lookup_level, winner_l2,
/// measured_at.
extern const ColumnList bench_result_columns;
/// A segmented_bench_results row but its id (schema version 13): bench_result_columns, then
/// segment_size and layout.
extern const ColumnList segmented_bench_result_columns;
/// Binds \p r's columns: segment_size and layout after the others when \p r is segmented, so the
/// statement's columns are segmented_bench_result_columns then. r.id unused.
void bind_bench_result(Statement& st, int first, const BenchResultRecord& r);
/// Reads bench_result_columns from \p first on, and segment_size and layout after them when the
/// statement has them (segmented_bench_result_columns). r.id unset.
void read_bench_result(const Statement& st, int first, BenchResultRecord& r);
/// "INSERT INTO bench_results (...) VALUES (?1, ...)", or segmented_bench_results' for a
/// segmented result: the statement bind_bench_result binds from 1 on.
std::string insert_bench_result_sql(bool segmented);

}  // namespace tunedreduce::db
