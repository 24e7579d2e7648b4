#pragma once
// The one column list of a measurements row for the statements of db/ that write or read whole
// measurements (Database's insert and queries, the export's reading, import and merge). Only the
// table's definition and the frozen migrations in db/schema.cpp spell the columns otherwise.
//
//   "INSERT INTO measurements (run_id, seq, device_id, " + measurement_columns() + ") VALUES"
//   " (?1, ?2, ?3, " + measurement_parameters(4) + ")"     then bind_measurement(st, 4, m)
//   "SELECT id, run_id, seq, device_id, " + measurement_columns() + " FROM measurements"
//                                                          then read_measurement(st, 4, m)

#include <string>

#include "db/records.hpp"
#include "db/statement.hpp"

namespace tunedreduce::db {

/// What a row says about its measurement, in this order: kernel_id, family, block, unroll, smem,
/// finish, dtype, op, n, l2_mode, outcome, median_us, p10_us, p90_us, repeats, gbps, sm_clock_mhz,
/// mem_clock_mhz, error, measured_at. Not the row's id and links (run_id, seq, device_id): those
/// differ from file to file, and each statement names them itself.
std::string measurement_columns();
/// "?first, ?first+1, ...": one parameter per column, for an INSERT.
std::string measurement_parameters(int first);
/// "kernel_id = ?first, family = ?first+1, ...", for an UPDATE.
std::string measurement_assignments(int first);

/// Binds \p m's columns to the parameters first, first + 1, ... (measured_at as it is, empty too).
void bind_measurement(Statement& st, int first, const Measurement& m);
/// Reads the columns of a row selected with measurement_columns() from the result column
/// \p first on into \p m.
void read_measurement(const Statement& st, int first, Measurement& m);

}  // namespace tunedreduce::db
