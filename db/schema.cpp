#include "db/schema.hpp"

#include <initializer_list>

#include <fmt/format.h>

#include "db/connection.hpp"
#include "db/records.hpp"
#include "db/row_rules.hpp"
#include "db/statement.hpp"

namespace tunedreduce::db {

namespace {

constexpr const char* v1_sql = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE devices (
  id               INTEGER PRIMARY KEY,
  fingerprint      TEXT NOT NULL UNIQUE,
  name             TEXT NOT NULL,
  cc_major         INTEGER NOT NULL,
  cc_minor         INTEGER NOT NULL,
  sm_count         INTEGER NOT NULL,
  bus_width_bits   INTEGER NOT NULL,
  l2_bytes         INTEGER NOT NULL,
  ecc              INTEGER NOT NULL CHECK (ecc IN (0, 1)),
  total_mem_bytes  INTEGER NOT NULL,
  mem_clock_khz    INTEGER NOT NULL,
  theoretical_gbps REAL NOT NULL,
  driver_version   INTEGER NOT NULL,
  runtime_version  INTEGER NOT NULL,
  first_seen       TEXT NOT NULL,
  last_seen        TEXT NOT NULL
);

CREATE TABLE runs (
  id            INTEGER PRIMARY KEY,
  uuid          TEXT NOT NULL UNIQUE,
  tool_version  TEXT NOT NULL,
  manifest_hash TEXT NOT NULL,
  config_hash   TEXT NOT NULL,
  host          TEXT NOT NULL,
  origin        TEXT NOT NULL,
  started_at    TEXT NOT NULL,
  ended_at      TEXT,
  status        TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
  l2_mode       TEXT NOT NULL CHECK (l2_mode IN ('cold', 'warm'))
);

CREATE TABLE run_devices (
  run_id          INTEGER NOT NULL REFERENCES runs (id),
  device_id       INTEGER NOT NULL REFERENCES devices (id),
  attainable_gbps REAL NOT NULL,
  PRIMARY KEY (run_id, device_id)
) WITHOUT ROWID;

CREATE TABLE measurements (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES runs (id),
  seq           INTEGER NOT NULL CHECK (seq >= 1),
  device_id     INTEGER NOT NULL REFERENCES devices (id),
  kernel_id     TEXT NOT NULL CHECK (kernel_id <> ''),
  family        TEXT NOT NULL,
  block         INTEGER NOT NULL,
  unroll        INTEGER NOT NULL,
  smem          TEXT NOT NULL CHECK (smem IN ('none', 'static', 'dynamic')),
  finish        TEXT NOT NULL CHECK (finish IN ('two_pass', 'single_pass')),
  dtype         TEXT NOT NULL CHECK (dtype IN ('i32', 'u32', 'i64', 'u64', 'f32', 'f64')),
  op            TEXT NOT NULL CHECK (op IN ('sum', 'min', 'max')),
  n             INTEGER NOT NULL CHECK (n >= 0),
  l2_mode       TEXT NOT NULL CHECK (l2_mode IN ('cold', 'warm')),
  outcome       TEXT NOT NULL
                CHECK (outcome IN ('ok', 'incorrect', 'launch_failed', 'crashed', 'timeout')),
  median_us     REAL,
  p10_us        REAL,
  p90_us        REAL,
  repeats       INTEGER NOT NULL CHECK (repeats >= 0),
  gbps          REAL,
  sm_clock_mhz  INTEGER,
  mem_clock_mhz INTEGER,
  error         TEXT NOT NULL DEFAULT '',
  measured_at   TEXT NOT NULL,
  UNIQUE (run_id, seq),
  CHECK (outcome <> 'ok' OR median_us IS NOT NULL)
);
CREATE INDEX measurements_by_key ON measurements (device_id, kernel_id, dtype, op, n, l2_mode);

CREATE TABLE sources (
  id   INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('merge', 'import'))
);

CREATE TABLE run_sources (
  run_id    INTEGER NOT NULL REFERENCES runs (id),
  source_id INTEGER NOT NULL REFERENCES sources (id),
  PRIMARY KEY (run_id, source_id)
) WITHOUT ROWID;

CREATE TABLE winners (
  id                       INTEGER PRIMARY KEY,
  device_id                INTEGER NOT NULL REFERENCES devices (id),
  dtype                    TEXT NOT NULL CHECK (dtype IN ('i32', 'u32', 'i64', 'u64', 'f32', 'f64')),
  op                       TEXT NOT NULL CHECK (op IN ('sum', 'min', 'max')),
  n_lo                     INTEGER NOT NULL,
  n_hi                     INTEGER NOT NULL,
  kernel_id                TEXT NOT NULL CHECK (kernel_id <> ''),
  measurement_id           INTEGER NOT NULL REFERENCES measurements (id),
  runner_up_kernel_id      TEXT,
  runner_up_measurement_id INTEGER REFERENCES measurements (id),
  driver_version           INTEGER NOT NULL,
  runtime_version          INTEGER NOT NULL,
  run_id                   INTEGER REFERENCES runs (id),
  source_id                INTEGER REFERENCES sources (id),
  CHECK (0 <= n_lo AND n_lo <= n_hi),
  UNIQUE (device_id, dtype, op, n_lo)
);
)sql";

}  // namespace

bool has_table(Connection& conn, const char* name) {
  Statement st = conn.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  st.bind(1, name);
  return st.step();
}

namespace {

// Version 0 is the prototype layout written by pre-release builds (tests/data/db/schema_v0.sql):
// devices without theoretical bandwidth and first/last seen, runs without uuid, origin and L2
// mode, measurements without seq, L2 mode and clocks, and no winners, sources or meta.
void migrate_0_to_1(Connection& conn) {
  if (!has_table(conn, "devices")) {  // a new, empty file
    conn.exec(v1_sql);
    return;
  }
  conn.exec(
      "ALTER TABLE devices RENAME TO v0_devices;"
      "ALTER TABLE runs RENAME TO v0_runs;"
      "ALTER TABLE measurements RENAME TO v0_measurements;");
  conn.exec(v1_sql);
  const std::string now = utc_timestamp();
  Statement dev = conn.prepare(
      "INSERT INTO devices (id, fingerprint, name, cc_major, cc_minor, sm_count, bus_width_bits,"
      " l2_bytes, ecc, total_mem_bytes, mem_clock_khz, theoretical_gbps, driver_version,"
      " runtime_version, first_seen, last_seen)"
      " SELECT id, fingerprint, name, cc_major, cc_minor, sm_count, bus_width_bits, l2_bytes,"
      " ecc, total_mem_bytes, mem_clock_khz, mem_clock_khz * 1e3 * (bus_width_bits / 8.0) * 2.0"
      " / 1e9, driver_version, runtime_version, ?1, ?1 FROM v0_devices");
  dev.bind(1, now).run();
  // The first seen time of a device is the start of its earliest run, where there is one.
  conn.exec(
      "UPDATE devices SET first_seen = (SELECT min(r.started_at) FROM v0_runs r JOIN"
      " v0_measurements m ON m.run_id = r.id WHERE m.device_id = devices.id),"
      " last_seen = (SELECT max(r.started_at) FROM v0_runs r JOIN v0_measurements m"
      " ON m.run_id = r.id WHERE m.device_id = devices.id)"
      " WHERE EXISTS (SELECT 1 FROM v0_measurements m WHERE m.device_id = devices.id)");
  Statement runs = conn.prepare(
      "INSERT INTO runs (id, uuid, tool_version, manifest_hash, config_hash, host, origin,"
      " started_at, ended_at, status, l2_mode)"
      " SELECT id, lower(hex(randomblob(16))), tool_version, manifest_hash, config_hash, host,"
      " ?1, started_at, ended_at, status, 'cold' FROM v0_runs");
  runs.bind(1, conn.path().string()).run();
  conn.exec(
      "INSERT INTO measurements (id, run_id, seq, device_id, kernel_id, family, block, unroll,"
      " smem, finish, dtype, op, n, l2_mode, outcome, median_us, p10_us, p90_us, repeats, gbps,"
      " sm_clock_mhz, mem_clock_mhz, error, measured_at)"
      " SELECT id, run_id, row_number() OVER (PARTITION BY run_id ORDER BY id), device_id,"
      " kernel_id, family, block, unroll, smem, finish, dtype, op, n, 'cold', outcome,"
      " median_us, p10_us, p90_us, repeats, gbps, NULL, NULL, coalesce(error, ''), measured_at"
      " FROM v0_measurements ORDER BY id;"
      "DROP TABLE v0_measurements; DROP TABLE v0_runs; DROP TABLE v0_devices;");
}

// Version 2 allows the finish 'packed' in measurements. Loosening a CHECK constraint changes no
// stored row, so this uses SQLite's documented procedure for it
// (https://sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes"): edit the
// table's CREATE statement in sqlite_schema under writable_schema, bump schema_version, check.
// Rebuilding the table instead would need foreign keys off, which cannot change inside the
// migration's transaction.
constexpr const char* v1_finish_check = "CHECK (finish IN ('two_pass', 'single_pass'))";
constexpr const char* v2_finish_check = "CHECK (finish IN ('two_pass', 'single_pass', 'packed'))";

/// Replaces \p old_check by \p new_check in the CREATE statements of the tables that
/// \p tables_where selects (a constant condition on sqlite_schema's `name`), under
/// writable_schema, and bumps schema_version; returns how many tables changed. The caller checks
/// that count, then calls quick_check_after: loosening a CHECK changes no stored row.
std::int64_t replace_check(Connection& conn, const char* tables_where, const char* old_check,
                           const char* new_check) {
  const std::int64_t cookie = conn.query_int("PRAGMA schema_version");
  conn.exec("PRAGMA writable_schema = ON");
  Statement st = conn.prepare(
      fmt::format("UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) WHERE type = 'table' AND {}"
                  " AND instr(sql, ?1) > 0",
                  tables_where));
  st.bind(1, old_check);
  st.bind(2, new_check);
  st.run();
  const std::int64_t changed = conn.query_int("SELECT changes()");
  // PRAGMA values cannot be bound; this is an integer read from the file, never input.
  conn.exec(fmt::format("PRAGMA schema_version = {}", cookie + 1));
  conn.exec("PRAGMA writable_schema = OFF");
  return changed;
}

void quick_check_after(Connection& conn, int version) {
  if (conn.query_int("SELECT count(*) FROM pragma_quick_check WHERE quick_check <> 'ok'") == 0)
    return;
  // Name the rows (db/row_rules.hpp): a row that breaks a CHECK constraint is what quick_check
  // finds on a file written with the constraints off.
  std::string rows;
  for (const RowFinding& f : validate_rows(conn, 3)) rows += (rows.empty() ? "" : "; ") + f.text();
  throw DbError(
      rows.empty() ? Problem::io : Problem::invalid_rows, conn.path(),
      fmt::format("{}: quick_check failed after migrating to schema version {}{}; nothing "
                  "was changed{}",
                  quoted(conn.path()), version,
                  rows.empty() ? "" : ": rows break the row rules: " + rows,
                  rows.empty() ? "" : " (`tunedreduce db check` lists them all)"));
}

void migrate_1_to_2(Connection& conn) {
  if (replace_check(conn, "name = 'measurements'", v1_finish_check, v2_finish_check) != 1)
    throw DbError(Problem::io, conn.path(),
                  quoted(conn.path()) +
                      ": cannot migrate to schema version 2: the measurements "
                      "table does not have version 1's finish constraint");
  quick_check_after(conn, 2);
}

// Version 3 gives every winner the L2 mode of its evidence, and makes the mode part of its
// identity, so that cold and warm winners of one (device, dtype, op) can cover the same sizes.
// A UNIQUE constraint cannot be edited in place like a CHECK (its index would no longer match),
// so the table is rebuilt. Unlike measurements, no table references winners: dropping it deletes
// no parent row, so this works with foreign keys on, inside the migration's transaction.
// Before version 3 a merge could mix modes within one (device, dtype, op); each winner keeps its
// own measurement's mode ('cold' where the measurement is missing, which the foreign key check
// below rules out in practice), and since intervals did not overlap then, they do not overlap
// within a mode now.
constexpr const char* v3_winners_sql = R"sql(
CREATE TABLE winners_v3 (
  id                       INTEGER PRIMARY KEY,
  device_id                INTEGER NOT NULL REFERENCES devices (id),
  dtype                    TEXT NOT NULL CHECK (dtype IN ('i32', 'u32', 'i64', 'u64', 'f32', 'f64')),
  op                       TEXT NOT NULL CHECK (op IN ('sum', 'min', 'max')),
  l2_mode                  TEXT NOT NULL CHECK (l2_mode IN ('cold', 'warm')),
  n_lo                     INTEGER NOT NULL,
  n_hi                     INTEGER NOT NULL,
  kernel_id                TEXT NOT NULL CHECK (kernel_id <> ''),
  measurement_id           INTEGER NOT NULL REFERENCES measurements (id),
  runner_up_kernel_id      TEXT,
  runner_up_measurement_id INTEGER REFERENCES measurements (id),
  driver_version           INTEGER NOT NULL,
  runtime_version          INTEGER NOT NULL,
  run_id                   INTEGER REFERENCES runs (id),
  source_id                INTEGER REFERENCES sources (id),
  CHECK (0 <= n_lo AND n_lo <= n_hi),
  UNIQUE (device_id, dtype, op, l2_mode, n_lo)
);
INSERT INTO winners_v3 (id, device_id, dtype, op, l2_mode, n_lo, n_hi, kernel_id, measurement_id,
                        runner_up_kernel_id, runner_up_measurement_id, driver_version,
                        runtime_version, run_id, source_id)
  SELECT w.id, w.device_id, w.dtype, w.op, coalesce(m.l2_mode, 'cold'), w.n_lo, w.n_hi,
         w.kernel_id, w.measurement_id, w.runner_up_kernel_id, w.runner_up_measurement_id,
         w.driver_version, w.runtime_version, w.run_id, w.source_id
  FROM winners w LEFT JOIN measurements m ON m.id = w.measurement_id ORDER BY w.id;
DROP TABLE winners;
ALTER TABLE winners_v3 RENAME TO winners;
)sql";

void migrate_2_to_3(Connection& conn) {
  // With foreign keys on, copying a row whose references dangle (a file some other tool wrote
  // with foreign keys off) would fail with SQLite's bare "FOREIGN KEY constraint failed".
  const std::int64_t dangling =
      conn.query_int("SELECT count(*) FROM pragma_foreign_key_check('winners')");
  if (dangling != 0)
    throw DbError(Problem::invalid_data, conn.path(),
                  fmt::format("{}: cannot migrate to schema version 3: {} rows of winners refer "
                              "to devices, measurements, runs or sources that do not exist (PRAGMA "
                              "foreign_key_check lists them)",
                              quoted(conn.path()), dangling));
  conn.exec(v3_winners_sql);
}

// Version 4 records `tunedreduce bench` (db/bench.hpp): a bench run per invocation, on one
// device, and per (dtype, op, n) one row for each timed call — the library's two API paths
// (cached, two_phase) and the baselines (cub, thrust). Only tables are added, so the migration is
// two CREATE TABLEs and min_reader_version stays 3: a version-3 reader reads the file without them.
constexpr const char* v4_bench_sql = R"sql(
CREATE TABLE bench_runs (
  id               INTEGER PRIMARY KEY,
  uuid             TEXT NOT NULL UNIQUE,
  device_id        INTEGER NOT NULL REFERENCES devices (id),
  tool_version     TEXT NOT NULL,
  manifest_hash    TEXT NOT NULL,
  host             TEXT NOT NULL,
  origin           TEXT NOT NULL,
  library_database TEXT NOT NULL,
  started_at       TEXT NOT NULL,
  ended_at         TEXT,
  status           TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
  l2               TEXT NOT NULL CHECK (l2 IN ('cold', 'dirty', 'warm')),
  repeats          INTEGER NOT NULL CHECK (repeats >= 1),
  warmups          INTEGER NOT NULL CHECK (warmups >= 0),
  seed             TEXT NOT NULL,
  driver_version   INTEGER NOT NULL,
  runtime_version  INTEGER NOT NULL,
  attainable_gbps  REAL,
  sm_clock_mhz     INTEGER,
  mem_clock_mhz    INTEGER
);

CREATE TABLE bench_results (
  id           INTEGER PRIMARY KEY,
  bench_run_id INTEGER NOT NULL REFERENCES bench_runs (id),
  dtype        TEXT NOT NULL CHECK (dtype IN ('i32', 'u32', 'i64', 'u64', 'f32', 'f64')),
  op           TEXT NOT NULL CHECK (op IN ('sum', 'min', 'max')),
  n            INTEGER NOT NULL CHECK (n >= 1),
  method       TEXT NOT NULL CHECK (method IN ('cached', 'two_phase', 'cub', 'thrust')),
  verified     INTEGER NOT NULL CHECK (verified IN (0, 1)),
  error        TEXT NOT NULL DEFAULT '',
  median_us    REAL,
  p10_us       REAL,
  p90_us       REAL,
  repeats      INTEGER NOT NULL CHECK (repeats >= 0),
  temp_bytes   INTEGER,
  kernel_id    TEXT,
  lookup_level TEXT CHECK (lookup_level IN ('exact', 'nearest', 'same_model', 'default')),
  winner_l2    TEXT CHECK (winner_l2 IN ('cold', 'warm')),
  measured_at  TEXT NOT NULL,
  UNIQUE (bench_run_id, dtype, op, n, method),
  CHECK (verified = 0 OR (median_us IS NOT NULL AND error = ''))
);
CREATE INDEX bench_results_by_key ON bench_results (dtype, op, n);
)sql";

void migrate_3_to_4(Connection& conn) { conn.exec(v4_bench_sql); }

// Version 5 keeps the provenance of every measurement in a fleet's merged file: which physical
// GPU measured it (gpus, measurements.gpu_id) and under which driver and CUDA runtime its run
// ran (runs.driver_version, runs.runtime_version), and what the run asked for (runs.config_text,
// the canonical text config_hash is the hash of). A device row is a fingerprint of a model,
// shared by every card of it and every host; since `tune --devices all` shares one run among the
// GPUs of a model, the GPU belongs to the measurement, not to the run. Only a table and nullable
// columns are added, with ALTER TABLE ADD COLUMN (which SQLite does in place, changing no stored
// row; the "Making Other Kinds Of Table Schema Changes" procedure is for what ALTER TABLE cannot
// do), so rows older than version 5 read NULL and min_reader_version stays 3: a version-3 or -4
// reader reads the file without the new columns and table.
constexpr const char* v5_provenance_sql = R"sql(
CREATE TABLE gpus (
  id        INTEGER PRIMARY KEY,
  uuid      TEXT NOT NULL CHECK (uuid <> ''),
  device_id INTEGER NOT NULL REFERENCES devices (id),
  UNIQUE (uuid, device_id)
);
ALTER TABLE runs ADD COLUMN driver_version INTEGER;
ALTER TABLE runs ADD COLUMN runtime_version INTEGER;
ALTER TABLE runs ADD COLUMN config_text TEXT;
ALTER TABLE measurements ADD COLUMN gpu_id INTEGER REFERENCES gpus (id);
)sql";

void migrate_4_to_5(Connection& conn) { conn.exec(v5_provenance_sql); }

// Version 6 admits the operator 'exact_sum' (docs/kernels.md, "Exact sums": the true sum rounded
// once; f32 and f64 only) in measurements, winners and bench_results, and ties it to those element
// types. As in version 2, only CHECK constraints change, and none of them fails for a stored row
// (no row has the new operator yet), so the tables' CREATE statements are edited in place under
// writable_schema. Version-5 readers are kept out (min_reader_version 6): they would meet an
// operator they cannot name.
constexpr const char* v5_op_check = "CHECK (op IN ('sum', 'min', 'max'))";
constexpr const char* v6_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum') AND (op <> 'exact_sum' OR dtype IN ('f32', "
    "'f64')))";

/// One CHECK constraint that a version loosens in measurements, winners and bench_results: the
/// text of version \p to - 1 (\p from) and its replacement. \p what names it in the message of a
/// file that does not have it ("operator", "element type").
struct CheckChange {
  const char* what;
  const char* from;
  const char* to;
};

/// The migration to version \p to when a version admits an operator or an element type: replaces
/// each constraint of \p changes in measurements, winners and bench_results, in place. All three
/// tables must have had each old text; quick_check runs once at the end.
void loosen_row_checks(Connection& conn, std::initializer_list<CheckChange> changes, int to) {
  for (const CheckChange& c : changes) {
    const std::int64_t changed =
        replace_check(conn, "name IN ('measurements', 'winners', 'bench_results')", c.from, c.to);
    if (changed != 3)
      throw DbError(Problem::io, conn.path(),
                    fmt::format("{}: cannot migrate to schema version {}: {} of the tables "
                                "measurements, winners and bench_results have version {}'s "
                                "{} constraint, not 3",
                                quoted(conn.path()), to, changed, to - 1, c.what));
  }
  quick_check_after(conn, to);
}

void migrate_5_to_6(Connection& conn) {
  loosen_row_checks(conn, {{"operator", v5_op_check, v6_op_check}}, 6);
}

// Version 7 admits the operator 'wide_sum' (the sum accumulated in, and returned as, the type
// twice as wide; i32, u32 and f32 only) in the same three tables, and ties it to those element
// types, exactly as version 6 did for 'exact_sum': only the CHECK constraints change, no stored
// row has the new operator yet, so they are edited in place under writable_schema. The dtype
// column keeps the input's element type, not the wider result's. Version-6 readers are kept out
// (min_reader_version 7): they would meet an operator they cannot name.
constexpr const char* v7_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum', 'wide_sum') AND (op <> 'exact_sum' OR dtype "
    "IN ('f32', 'f64')) AND (op <> 'wide_sum' OR dtype IN ('i32', 'u32', 'f32')))";

void migrate_6_to_7(Connection& conn) {
  loosen_row_checks(conn, {{"operator", v6_op_check, v7_op_check}}, 7);
}

// Version 8 admits the element types 'f16' and 'bf16' (IEEE binary16 and bfloat16) in the same
// three tables, for the operator 'wide_sum' only (into a float): the dtype constraint gains both,
// and the operator constraint admits them for wide_sum and refuses them for every other operator,
// as op_applies does. As in versions 6 and 7, only CHECK constraints are loosened (a stored row
// of version 7 has neither type and passes the new constraints), so they are edited in place under
// writable_schema. Version-7 readers are kept out (min_reader_version 8): they would meet an
// element type they cannot name.
constexpr const char* v7_dtype_check =
    "CHECK (dtype IN ('i32', 'u32', 'i64', 'u64', 'f32', 'f64'))";
constexpr const char* v8_dtype_check =
    "CHECK (dtype IN ('i32', 'u32', 'i64', 'u64', 'f32', 'f64', 'f16', 'bf16'))";
constexpr const char* v8_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum', 'wide_sum') AND (op <> 'exact_sum' OR dtype "
    "IN ('f32', 'f64')) AND (op <> 'wide_sum' OR dtype IN ('i32', 'u32', 'f32', 'f16', 'bf16')) "
    "AND (op = 'wide_sum' OR dtype NOT IN ('f16', 'bf16')))";

void migrate_7_to_8(Connection& conn) {
  loosen_row_checks(conn,
                    {{"element type", v7_dtype_check, v8_dtype_check},
                     {"operator", v7_op_check, v8_op_check}},
                    8);
}

// Version 9 admits the operators 'argmin' and 'argmax' (the smallest or largest element and its
// index, an IndexedValue of the element type) in the same three tables, for the six 4- and 8-byte
// types only, as op_applies does: the operator constraint gains both names, and its last clause
// (a half type with wide_sum alone), unchanged, keeps f16 and bf16 out of them. The dtype column
// keeps the element type, as for every operator. As in versions 6 to 8, only a CHECK constraint
// is loosened (no stored row of version 8 has either operator, and each passes the new one), so
// it is edited in place under writable_schema. Version-8 readers are kept out
// (min_reader_version 9): they would meet an operator they cannot name.
constexpr const char* v9_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum', 'wide_sum', 'argmin', 'argmax') AND (op <> "
    "'exact_sum' OR dtype IN ('f32', 'f64')) AND (op <> 'wide_sum' OR dtype IN ('i32', 'u32', "
    "'f32', 'f16', 'bf16')) AND (op = 'wide_sum' OR dtype NOT IN ('f16', 'bf16')))";

void migrate_8_to_9(Connection& conn) {
  loosen_row_checks(conn, {{"operator", v8_op_check, v9_op_check}}, 9);
}

// Version 10 admits the operator 'exact_sum' for the element types 'f16' and 'bf16' as well (the
// true sum of the half-precision inputs rounded once to a float, result_dtype f32) in the same
// three tables, as op_applies does: the operator constraint's exact_sum clause gains both types,
// and its last clause lets a half type go with exact_sum as with wide_sum, so sum, min, max,
// argmin and argmax still refuse them. The dtype column keeps the element type, not the float
// result's. As in versions 6 to 9, only a CHECK constraint is loosened (no stored row of version
// 9 has an exact_sum of a half type, and each passes the new one), so it is edited in place under
// writable_schema. Version-9 readers are kept out (min_reader_version 10): they would meet rows
// of a pair their op_applies refuses (an exact_sum of f16 or bf16, whose result is a float, not
// the element type they would take it for).
constexpr const char* v10_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum', 'wide_sum', 'argmin', 'argmax') AND (op <> "
    "'exact_sum' OR dtype IN ('f32', 'f64', 'f16', 'bf16')) AND (op <> 'wide_sum' OR dtype IN "
    "('i32', 'u32', 'f32', 'f16', 'bf16')) AND (op IN ('wide_sum', 'exact_sum') OR dtype NOT IN "
    "('f16', 'bf16')))";

void migrate_9_to_10(Connection& conn) {
  loosen_row_checks(conn, {{"operator", v9_op_check, v10_op_check}}, 10);
}

// Version 11 takes the lists of operators and element types out of the schema: measurements,
// winners and bench_results lose their dtype and op CHECK constraints, and the C++ code that
// writes and reads rows validates both names (db/row_rules.hpp: the names of
// tunedreduce/types.hpp's dtype_name and op_name, and op_applies for the pair), so a new
// operator or element type needs no migration again. Dropping a CHECK changes no stored row, so
// it is edited in place under writable_schema, as versions 6 to 10 loosened them. Version-10
// readers are kept out (min_reader_version 11): a version-11 file may hold rows of an operator a
// later binary added, which a version-10 reader would read as something else.
void migrate_10_to_11(Connection& conn) {
  loosen_row_checks(conn, {{"element type", v8_dtype_check, ""}, {"operator", v10_op_check, ""}},
                    11);
}

// Version 12 stores segmented measurements and winners (kernels/segmented/: one result per
// segment; ids "seg.FAMILY.bB[.gG].vV.LAYOUT.DTYPE.OP"). A measurement gains segment_size, the
// elements per segment (n stays the total, so num_segments = n / segment_size), NULL for a
// whole-array measurement; the resume index covers it, since the same kernel at the same n is
// another measurement for another segment size. The table segmented_winners holds rectangles in
// (segment size, segment count) per (device, dtype, op, L2 mode, layout), each citing its ok
// segmented measurement as evidence. A nullable column and a table are added in place (ALTER
// TABLE ADD COLUMN changes no stored row, and its CHECK holds for the NULL every older row
// reads); the index is dropped and created again with the new column. Its layout, like dtype and
// op since version 11, has no list in the schema: the row validator checks the names
// (db/row_rules.hpp). Version-11 readers are kept out (min_reader_version 12): they would take a
// segmented measurement for a whole-array one of n elements.
constexpr const char* v12_segmented_sql = R"sql(
ALTER TABLE measurements ADD COLUMN segment_size INTEGER
  CHECK (segment_size IS NULL OR segment_size >= 1);
DROP INDEX measurements_by_key;
CREATE INDEX measurements_by_key
  ON measurements (device_id, kernel_id, dtype, op, n, l2_mode, segment_size);
CREATE TABLE segmented_winners (
  id                       INTEGER PRIMARY KEY,
  device_id                INTEGER NOT NULL REFERENCES devices (id),
  dtype                    TEXT NOT NULL,
  op                       TEXT NOT NULL,
  l2_mode                  TEXT NOT NULL CHECK (l2_mode IN ('cold', 'warm')),
  layout                   TEXT NOT NULL,
  size_lo                  INTEGER NOT NULL,
  size_hi                  INTEGER NOT NULL,
  count_lo                 INTEGER NOT NULL,
  count_hi                 INTEGER NOT NULL,
  kernel_id                TEXT NOT NULL CHECK (kernel_id <> ''),
  measurement_id           INTEGER NOT NULL REFERENCES measurements (id),
  runner_up_kernel_id      TEXT,
  runner_up_measurement_id INTEGER REFERENCES measurements (id),
  driver_version           INTEGER NOT NULL,
  runtime_version          INTEGER NOT NULL,
  run_id                   INTEGER REFERENCES runs (id),
  source_id                INTEGER REFERENCES sources (id),
  CHECK (1 <= size_lo AND size_lo <= size_hi AND 1 <= count_lo AND count_lo <= count_hi),
  UNIQUE (device_id, dtype, op, l2_mode, layout, size_lo, count_lo)
);
)sql";

void migrate_11_to_12(Connection& conn) { conn.exec(v12_segmented_sql); }

// Version 13 records `tunedreduce bench --segments` (db/bench.hpp): the segmented bench results
// of a bench run, one row per (dtype, op, total n, segment size, layout, timed call), in a table
// of their own beside bench_results, whose rows stay whole-array reductions of n elements. Only a
// table is added, so min_reader_version stays 12: a version-12 reader reads the file without it.
// Its layout, like segmented_winners', has no list in the schema: the row validator checks the
// names (db/row_rules.hpp).
constexpr const char* v13_segmented_bench_sql = R"sql(
CREATE TABLE segmented_bench_results (
  id           INTEGER PRIMARY KEY,
  bench_run_id INTEGER NOT NULL REFERENCES bench_runs (id),
  dtype        TEXT NOT NULL,
  op           TEXT NOT NULL,
  n            INTEGER NOT NULL CHECK (n >= 1),
  method       TEXT NOT NULL CHECK (method IN ('cached', 'two_phase', 'cub', 'floor')),
  verified     INTEGER NOT NULL CHECK (verified IN (0, 1)),
  error        TEXT NOT NULL DEFAULT '',
  median_us    REAL,
  p10_us       REAL,
  p90_us       REAL,
  repeats      INTEGER NOT NULL CHECK (repeats >= 0),
  temp_bytes   INTEGER,
  kernel_id    TEXT,
  lookup_level TEXT CHECK (lookup_level IN ('exact', 'nearest', 'same_model', 'default')),
  winner_l2    TEXT CHECK (winner_l2 IN ('cold', 'warm')),
  measured_at  TEXT NOT NULL,
  segment_size INTEGER NOT NULL CHECK (segment_size >= 1),
  layout       TEXT NOT NULL,
  UNIQUE (bench_run_id, dtype, op, n, segment_size, layout, method),
  CHECK (verified = 0 OR (median_us IS NOT NULL AND error = ''))
);
CREATE INDEX segmented_bench_results_by_key
  ON segmented_bench_results (dtype, op, layout, segment_size, n);
)sql";

void migrate_12_to_13(Connection& conn) { conn.exec(v13_segmented_bench_sql); }

constexpr Migration history[] = {
    {0, "create the schema, or upgrade the version-0 prototype layout", migrate_0_to_1},
    {1, "allow the finish 'packed' in measurements", migrate_1_to_2},
    {2, "give winners an L2 mode, part of their identity", migrate_2_to_3},
    {3, "add the bench tables (bench_runs, bench_results)", migrate_3_to_4},
    {4, "add the GPUs, each measurement's GPU, each run's driver, runtime and configuration",
     migrate_4_to_5},
    {5,
     "allow the operator 'exact_sum' (f32 and f64 only) in measurements, winners and bench "
     "results",
     migrate_5_to_6},
    {6,
     "allow the operator 'wide_sum' (i32, u32 and f32 only) in measurements, winners and bench "
     "results",
     migrate_6_to_7},
    {7,
     "allow the element types 'f16' and 'bf16' (for the operator 'wide_sum' only) in "
     "measurements, winners and bench results",
     migrate_7_to_8},
    {8,
     "allow the operators 'argmin' and 'argmax' (i32, u32, i64, u64, f32 and f64 only) in "
     "measurements, winners and bench results",
     migrate_8_to_9},
    {9,
     "allow the operator 'exact_sum' for the element types 'f16' and 'bf16' (into a float) in "
     "measurements, winners and bench results",
     migrate_9_to_10},
    {10,
     "drop the lists of operators and element types from the schema: the row validator checks "
     "them (db/row_rules.hpp)",
     migrate_10_to_11},
    {11,
     "add segmented measurements (measurements.segment_size, in the resume index) and the table "
     "segmented_winners",
     migrate_11_to_12},
    {12, "add the table segmented_bench_results (tunedreduce bench --segments)", migrate_12_to_13},
};

}  // namespace

const char* schema_v1_sql() { return v1_sql; }

std::span<const Migration> migrations() { return history; }

SchemaState read_schema_state(Connection& conn) {
  SchemaState s;
  s.application_id = static_cast<std::int32_t>(conn.query_int("PRAGMA application_id"));
  s.user_version = static_cast<int>(conn.query_int("PRAGMA user_version"));
  s.table_count = static_cast<int>(conn.query_int(
      "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%'"
      " ESCAPE '\\'"));
  if (s.application_id == application_id && has_table(conn, "meta")) {
    Statement st = conn.prepare("SELECT value FROM meta WHERE key = 'min_reader_version'");
    if (st.step()) s.min_reader_version = static_cast<int>(st.column_int(0));
  }
  return s;
}

SchemaAction classify(const SchemaState& s, const Connection& conn, bool for_writing,
                      int binary_version, int oldest_readable) {
  const std::string file = quoted(conn.path());
  if (s.application_id != application_id) {
    if (s.application_id == 0 && s.table_count == 0) {
      if (for_writing) return SchemaAction::create;
      throw DbError(Problem::empty, conn.path(),
                    file + ": an empty SQLite file, not a tuning database yet (no tables)");
    }
    throw DbError(Problem::foreign, conn.path(),
                  fmt::format("{}: an SQLite database of another application (application_id "
                              "{:#010x}, {} tables), not a tunedreduce database (application_id "
                              "0x54524442)",
                              file, static_cast<unsigned>(s.application_id), s.table_count));
  }
  // Stamped as ours but unlike any file a tunedreduce writer leaves: named as damaged, never
  // taken for a current file ("already current") or sent to a migration that cannot work.
  if (s.table_count == 0)
    throw DbError(Problem::corrupt, conn.path(),
                  file +
                      ": is corrupt: it has tunedreduce's application_id (0x54524442) but no "
                      "tables; restore it from a copy or remove it");
  if (s.user_version < 0)
    throw DbError(Problem::corrupt, conn.path(),
                  fmt::format("{}: is corrupt: schema version {} is no version of tunedreduce's "
                              "(they count from 0); restore it from a copy",
                              file, s.user_version));
  if (s.user_version == binary_version) return SchemaAction::use;
  if (s.user_version < binary_version) {
    if (for_writing) return SchemaAction::migrate;
    // An older schema that lacks only tables added since: read as is, the tables taken for empty.
    if (s.user_version >= oldest_readable) return SchemaAction::use;
    throw DbError(Problem::too_old, conn.path(),
                  fmt::format("{}: schema version {} is older than this binary's {}; readers never "
                              "migrate: upgrade it with `tunedreduce db migrate --db PATH`",
                              file, s.user_version, binary_version));
  }
  const std::string versions = fmt::format("schema version {} is newer than this binary's {}",
                                           s.user_version, binary_version);
  if (for_writing)
    throw DbError(Problem::too_new, conn.path(),
                  file + ": " + versions + "; it is never written by an older binary");
  if (s.min_reader_version && *s.min_reader_version <= binary_version) return SchemaAction::use;
  throw DbError(Problem::too_new, conn.path(),
                fmt::format("{}: {} and needs readers of version {} or later", file, versions,
                            s.min_reader_version ? std::to_string(*s.min_reader_version)
                                                 : std::string("(unknown)")));
}

void apply_migrations(Connection& conn, std::span<const Migration> steps, int target) {
  int version = static_cast<int>(conn.query_int("PRAGMA user_version"));
  while (version < target) {
    const Migration* step = nullptr;
    for (const Migration& m : steps)
      if (m.from == version) step = &m;
    if (!step)
      throw DbError(Problem::io, conn.path(),
                    fmt::format("{}: no migration from schema version {}", quoted(conn.path()),
                                version));
    step->apply(conn);
    ++version;
    // PRAGMA values cannot be bound; these are integers of ours, never input.
    conn.exec(fmt::format("PRAGMA user_version = {}", version));
  }
  conn.exec(fmt::format("PRAGMA application_id = {}", application_id));
  Statement meta = conn.prepare(
      "INSERT INTO meta (key, value) VALUES ('min_reader_version', ?1)"
      " ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  meta.bind(1, std::to_string(min_reader_version)).run();
}

}  // namespace tunedreduce::db
