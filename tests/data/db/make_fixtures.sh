#!/usr/bin/env bash
# Regenerates the database fixtures of the db tests (run it when the schema changes):
#   tests/data/db/make_fixtures.sh BUILD_DIR
# needs the sqlite3 shell and BUILD_DIR/tests/db/tr_db_test_writer. The fixtures are small
# (page size 512) and checked in; the tests say what each one must provoke. It rewrites every
# fixture, with new run uuids and times: check in those a schema change affects (the newer_*
# files and the new schema_vN.db) and keep the others as they are, or run it in a copy of this
# folder (with schema_v0.sql) and take those files from there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
helper=$(find "$(cd "$1" && pwd)" -name tr_db_test_writer -type f | sed -n 1p)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here"

shrink() {  # self-contained (no -wal), small pages
  sqlite3 "$1" "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;" >/dev/null
}

# Not SQLite at all, and a 0-byte file.
printf 'This is a plain text file that someone named tune.db.\n' > not_sqlite.db
: > empty.db

# SQLite files of other applications: one with its own application_id, one with none.
rm -f other_app.db other_app_noid.db
sqlite3 other_app.db "PRAGMA application_id=1179863329; CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES('not ours');"
sqlite3 other_app_noid.db "CREATE TABLE devices(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO devices(name) VALUES('a table called devices is not enough');"
shrink other_app.db; shrink other_app_noid.db

# The version-0 prototype layout.
rm -f schema_v0.db
sqlite3 schema_v0.db < schema_v0.sql
shrink schema_v0.db

# A fixture of schema version VERSION: the writer's 40 f32 sums, and one row of the operator OP
# in each of the three tables the migrations change (a measurement of MEAS_DTYPE and the winner
# it is the evidence of, a CUB bench result of BENCH_DTYPE), which the next version's constraints
# must take.
#   versioned_fixture VERSION OP MEAS_DTYPE "MEDIAN, P10, P90" BENCH_DTYPE "MEDIAN, P10, P90"
versioned_fixture() {
  local v=$1 op=$2 mdt=$3 mus=$4 bdt=$5 bus=$6
  cp "$tmp/base.db" "schema_v$v.db"
  sqlite3 "schema_v$v.db" "
INSERT INTO measurements (run_id, seq, device_id, kernel_id, family, block, unroll, smem, finish,
  dtype, op, n, l2_mode, outcome, median_us, p10_us, p90_us, repeats, gbps, sm_clock_mhz,
  mem_clock_mhz, error, measured_at, gpu_id)
  SELECT r.id, (SELECT max(seq) + 1 FROM measurements WHERE run_id = r.id), g.device_id,
    'vectorized.b256.u4.single_pass.$mdt.$op', 'vectorized', 256, 4, 'none', 'single_pass',
    '$mdt', '$op', 1048576, 'cold', 'ok', $mus, 20, NULL, 1980, 2619, '',
    r.ended_at, g.id FROM runs r, gpus g;
INSERT INTO winners (device_id, dtype, op, l2_mode, n_lo, n_hi, kernel_id, measurement_id,
  runner_up_kernel_id, runner_up_measurement_id, driver_version, runtime_version, run_id)
  SELECT m.device_id, m.dtype, m.op, m.l2_mode, 1, 1073741824, m.kernel_id, m.id, NULL, NULL,
    13000, 13000, m.run_id FROM measurements m WHERE m.op = '$op';
INSERT INTO bench_runs (uuid, device_id, tool_version, manifest_hash, host, origin,
  library_database, started_at, ended_at, status, l2, repeats, warmups, seed, driver_version,
  runtime_version, attainable_gbps, sm_clock_mhz, mem_clock_mhz)
  SELECT '0000000000000000000000000000be7c', id, '0.3.0', '0123456789abcdef', 'bench-host',
    '/lab/tune.db', '/lab/tune.db', '2026-11-26T11:00:00.000Z', '2026-11-26T11:01:00.000Z',
    'finished', 'cold', 5, 1, '2a', 13000, 13000, NULL, 1980, 2619 FROM devices;
INSERT INTO bench_results (bench_run_id, dtype, op, n, method, verified, error, median_us, p10_us,
  p90_us, repeats, temp_bytes, kernel_id, lookup_level, winner_l2, measured_at)
  SELECT id, '$bdt', '$op', 1048576, 'cub', 1, '', $bus, 5, 512, NULL, NULL, NULL,
    '2026-11-26T11:00:30.000Z' FROM bench_runs;
PRAGMA user_version=$v; UPDATE meta SET value='$v' WHERE key='min_reader_version';"
  test "$(sqlite3 "schema_v$v.db" "SELECT (SELECT count(*) FROM measurements WHERE dtype = '$mdt' AND op = '$op') || (SELECT count(*) FROM winners) || (SELECT count(*) FROM bench_results WHERE dtype = '$bdt')")" = 111
  sqlite3 "schema_v$v.db" "PRAGMA integrity_check; PRAGMA foreign_key_check;" | tr '\n' ' ' | grep -x 'ok ' > /dev/null
  shrink "schema_v$v.db"
}

# A current database with rows, made by the real writer.
"$helper" write "$tmp/base.db" 0 40 0
shrink "$tmp/base.db"

# schema_v10.db is not made here: it is the version-10 writer's own file (40 f32 sums), kept as
# it is, as the last version with the lists of operators and element types in its CHECKs.

# schema_v11.db is not made here either: it is the version-11 writer's own file, the last version
# without segmented measurements and winners, made at commit a34b3e3 (schema version 11) with
#   tr_db_test_writer write base_v11.db 0 40 0
# (40 f32 sums; its run's origin is 'base_v11.db'), shrunk as above, and then these rows added with the version-11 schema's own
# constraints on (an i64 max measurement, the winner over 1..2^30 it is the evidence of, a cold
# winner of the f32 sum over 1..1024 citing measurement 1 with measurement 2 as its runner-up, and
# an f32 max CUB bench result), checked (integrity_check and foreign_key_check: ok) and shrunk:
#   INSERT INTO measurements (run_id, seq, device_id, kernel_id, family, block, unroll, smem,
#     finish, dtype, op, n, l2_mode, outcome, median_us, p10_us, p90_us, repeats, gbps,
#     sm_clock_mhz, mem_clock_mhz, error, measured_at, gpu_id)
#     SELECT r.id, (SELECT max(seq) + 1 FROM measurements WHERE run_id = r.id), g.device_id,
#       'vectorized.b256.u4.single_pass.i64.max', 'vectorized', 256, 4, 'none', 'single_pass',
#       'i64', 'max', 1048576, 'cold', 'ok', 6.5, 6.4, 6.6, 20, NULL, 1980, 2619, '',
#       r.ended_at, g.id FROM runs r, gpus g;
#   INSERT INTO winners (...) SELECT m.device_id, m.dtype, m.op, m.l2_mode, 1, 1073741824,
#     m.kernel_id, m.id, NULL, NULL, 13000, 13000, m.run_id FROM measurements m WHERE m.op = 'max';
#   INSERT INTO winners (...) SELECT m.device_id, m.dtype, m.op, m.l2_mode, 1, 1024, m.kernel_id,
#     m.id, 'warp_shuffle.b256.u1.two_pass.f32.sum', 2, 13000, 13000, m.run_id FROM measurements m
#     WHERE m.id = 1;
#   and the bench run and result of versioned_fixture below, with 'f32', 'max' and 7.5, 7.4, 7.6.
# Migrating it to version 12 must keep every row and read each measurement as a whole-array one.

# schema_v12.db is not made here any more: it is the version-12 writer's own file, the last
# version without segmented bench results, made at commit b5dbac1 (schema version 12) with
#   tr_db_test_writer write-segmented schema_v12.db
# (tests/db/test_util.cpp's write_segmented_sample: whole-array and segmented measurements,
# winners and segmented winners of both L2 modes and two layouts), shrunk as above.

# Newer schemas (this binary writes version 13): version 14 that declares version-13 readers
# compatible, and version 14 that does not. (newer_compatible.db, version 12 declaring version-11
# readers compatible, and newer_compatible_v13.db, version 13 declaring version-12 readers
# compatible, were the compatible newer files of the binaries before: they are no longer made.)
cp "$tmp/base.db" newer_compatible_v14.db
sqlite3 newer_compatible_v14.db "PRAGMA user_version=14; UPDATE meta SET value='13' WHERE key='min_reader_version'; CREATE TABLE future_notes(id INTEGER PRIMARY KEY, body TEXT);"
cp "$tmp/base.db" newer_incompatible.db
sqlite3 newer_incompatible.db "PRAGMA user_version=14; UPDATE meta SET value='14' WHERE key='min_reader_version';"
shrink newer_compatible_v14.db; shrink newer_incompatible.db

# Versions 3 to 9 had the lists of operators and element types in their CHECK constraints, which
# version 11 dropped: they are made from the version-10 writer's own file (schema_v10.db, kept as
# it is: 40 f32 sums, no winners), whose constraints the steps below put back a version at a time.
cp schema_v10.db "$tmp/base.db"

# Versions before 10 had no exact_sum of f16 and bf16: the operator constraint of version 9, put
# back as the migration to version 10 changed it (in place, under writable_schema).
drop_half_exact_sum() {
  sqlite3 "$1" "PRAGMA writable_schema=ON;
UPDATE sqlite_schema SET sql = replace(sql,
  'CHECK (op IN (''sum'', ''min'', ''max'', ''exact_sum'', ''wide_sum'', ''argmin'', ''argmax'') AND (op <> ''exact_sum'' OR dtype IN (''f32'', ''f64'', ''f16'', ''bf16'')) AND (op <> ''wide_sum'' OR dtype IN (''i32'', ''u32'', ''f32'', ''f16'', ''bf16'')) AND (op IN (''wide_sum'', ''exact_sum'') OR dtype NOT IN (''f16'', ''bf16'')))',
  'CHECK (op IN (''sum'', ''min'', ''max'', ''exact_sum'', ''wide_sum'', ''argmin'', ''argmax'') AND (op <> ''exact_sum'' OR dtype IN (''f32'', ''f64'')) AND (op <> ''wide_sum'' OR dtype IN (''i32'', ''u32'', ''f32'', ''f16'', ''bf16'')) AND (op = ''wide_sum'' OR dtype NOT IN (''f16'', ''bf16'')))')
  WHERE type = 'table' AND name IN ('measurements', 'winners', 'bench_results');
PRAGMA writable_schema=OFF;"
  test "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%op IN (''wide_sum'', ''exact_sum'')%'")" = 0
  test "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%(op <> ''exact_sum'' OR dtype IN (''f32'', ''f64''))%'")" = 3
}
drop_half_exact_sum "$tmp/base.db"

# Version 9, the last one without it, with rows: the writer's 40 f32 sums, and rows of version
# 9's operators in each of the three tables whose constraint the migration to version 10 changes
# (an i32 argmin measurement and the winner it is the evidence of, an f64 argmin bench result),
# which must pass the new constraint. Readers of version 10 read it as it is, writers migrate it.
versioned_fixture 9 argmin i32 "5.5, 5.4, 5.6" f64 "5.9, 5.8, 6.0"

# Versions before 9 had no operators argmin and argmax either: the operator constraint of version
# 8, put back as the migration to version 9 changed it (in place, under writable_schema). It
# replaces version 9's text, so it runs after drop_half_exact_sum.
drop_arg_ops() {
  sqlite3 "$1" "PRAGMA writable_schema=ON;
UPDATE sqlite_schema SET sql = replace(sql,
  'CHECK (op IN (''sum'', ''min'', ''max'', ''exact_sum'', ''wide_sum'', ''argmin'', ''argmax'') AND (op <> ''exact_sum'' OR dtype IN (''f32'', ''f64'')) AND (op <> ''wide_sum'' OR dtype IN (''i32'', ''u32'', ''f32'', ''f16'', ''bf16'')) AND (op = ''wide_sum'' OR dtype NOT IN (''f16'', ''bf16'')))',
  'CHECK (op IN (''sum'', ''min'', ''max'', ''exact_sum'', ''wide_sum'') AND (op <> ''exact_sum'' OR dtype IN (''f32'', ''f64'')) AND (op <> ''wide_sum'' OR dtype IN (''i32'', ''u32'', ''f32'', ''f16'', ''bf16'')) AND (op = ''wide_sum'' OR dtype NOT IN (''f16'', ''bf16'')))')
  WHERE type = 'table' AND name IN ('measurements', 'winners', 'bench_results');
PRAGMA writable_schema=OFF;"
  test "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%argm%'")" = 0
  test "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%(op = ''wide_sum'' OR dtype NOT IN (''f16'', ''bf16''))%'")" = 3
}
drop_arg_ops "$tmp/base.db"

# Version 8, the last one without them, with rows: the writer's 40 f32 sums, and rows of version
# 8's element types in each of the three tables whose constraint the migration to version 9
# changes (an f16 wide_sum measurement and the winner it is the evidence of, a bf16 wide_sum bench
# result), which must pass the new constraint. Readers of version 10 read it as it is, writers
# migrate it.
versioned_fixture 8 wide_sum f16 "4.5, 4.4, 4.6" bf16 "4.9, 4.8, 5.0"

# Versions before 8 had no element types f16 and bf16 either: the CHECK constraints of version 7
# (the dtype's and the operator's), put back as the migration to version 8 changed them (in
# place, under writable_schema). It replaces version 8's text, so it runs after drop_arg_ops.
drop_half_types() {
  sqlite3 "$1" "PRAGMA writable_schema=ON;
UPDATE sqlite_schema SET sql = replace(replace(sql,
  'CHECK (dtype IN (''i32'', ''u32'', ''i64'', ''u64'', ''f32'', ''f64'', ''f16'', ''bf16''))',
  'CHECK (dtype IN (''i32'', ''u32'', ''i64'', ''u64'', ''f32'', ''f64''))'),
  'CHECK (op IN (''sum'', ''min'', ''max'', ''exact_sum'', ''wide_sum'') AND (op <> ''exact_sum'' OR dtype IN (''f32'', ''f64'')) AND (op <> ''wide_sum'' OR dtype IN (''i32'', ''u32'', ''f32'', ''f16'', ''bf16'')) AND (op = ''wide_sum'' OR dtype NOT IN (''f16'', ''bf16'')))',
  'CHECK (op IN (''sum'', ''min'', ''max'', ''exact_sum'', ''wide_sum'') AND (op <> ''exact_sum'' OR dtype IN (''f32'', ''f64'')) AND (op <> ''wide_sum'' OR dtype IN (''i32'', ''u32'', ''f32'')))')
  WHERE type = 'table' AND name IN ('measurements', 'winners', 'bench_results');
PRAGMA writable_schema=OFF;"
  test "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%f16%'")" = 0
  test "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%(op <> ''wide_sum'' OR dtype IN (''i32'', ''u32'', ''f32''))%'")" = 3
}
drop_half_types "$tmp/base.db"

# Version 7, the last one without them, with rows: the writer's 40 f32 sums, and rows of
# version 7's operator wide_sum in each of the three tables whose constraints the migration to
# version 8 changes (an i32 measurement and the winner it is the evidence of, an f32 bench
# result), which must pass the new constraints. Readers of version 10 read it as it is, writers
# migrate it.
versioned_fixture 7 wide_sum i32 "9.5, 9.4, 9.6" f32 "9.9, 9.8, 10.0"

# Versions before 7 had no operator wide_sum either: the CHECK constraints of version 6, put back
# as the migration to version 7 changed them. It replaces version 7's text, so it runs after
# drop_half_types.
drop_wide_sum() {
  sqlite3 "$1" "PRAGMA writable_schema=ON;
UPDATE sqlite_schema SET sql = replace(sql,
  'CHECK (op IN (''sum'', ''min'', ''max'', ''exact_sum'', ''wide_sum'') AND (op <> ''exact_sum'' OR dtype IN (''f32'', ''f64'')) AND (op <> ''wide_sum'' OR dtype IN (''i32'', ''u32'', ''f32'')))',
  'CHECK (op IN (''sum'', ''min'', ''max'', ''exact_sum'') AND (op <> ''exact_sum'' OR dtype IN (''f32'', ''f64'')))')
  WHERE type = 'table' AND name IN ('measurements', 'winners', 'bench_results');
PRAGMA writable_schema=OFF;"
  test "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%wide_sum%'")" = 0
}
drop_wide_sum "$tmp/base.db"

# Version 6, the last one without it, with rows: readers of version 10 read it as it is, writers
# migrate it.
cp "$tmp/base.db" schema_v6.db
sqlite3 schema_v6.db "PRAGMA user_version=6; UPDATE meta SET value='6' WHERE key='min_reader_version';"
sqlite3 schema_v6.db "PRAGMA integrity_check; PRAGMA foreign_key_check;" | tr '\n' ' ' | grep -x 'ok ' > /dev/null
shrink schema_v6.db

# Versions before 6 had no operator exact_sum either: the CHECK constraints of version 5, put
# back as the migration to version 6 changed them. It replaces version 6's text, so it runs after
# drop_wide_sum (which runs after drop_half_types, itself after drop_arg_ops, itself after
# drop_half_exact_sum): together they turn a version-10 file's constraints into version 5's.
drop_exact_sum() {
  sqlite3 "$1" "PRAGMA writable_schema=ON;
UPDATE sqlite_schema SET sql = replace(sql,
  'CHECK (op IN (''sum'', ''min'', ''max'', ''exact_sum'') AND (op <> ''exact_sum'' OR dtype IN (''f32'', ''f64'')))',
  'CHECK (op IN (''sum'', ''min'', ''max''))')
  WHERE type = 'table' AND name IN ('measurements', 'winners', 'bench_results');
PRAGMA writable_schema=OFF;"
  test "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%exact_sum%'")" = 0
}
drop_exact_sum "$tmp/base.db"

# Version 5, the last one without it, with rows: readers of version 10 read it as it is, writers
# migrate it. (The checked-in schema_v5.db was written by the version-5 writer itself.)
cp "$tmp/base.db" schema_v5.db
sqlite3 schema_v5.db "PRAGMA user_version=5; UPDATE meta SET value='3' WHERE key='min_reader_version';"
sqlite3 schema_v5.db "PRAGMA integrity_check; PRAGMA foreign_key_check;" | tr '\n' ' ' | grep -x 'ok ' > /dev/null
shrink schema_v5.db

# Versions before 5 had no GPUs and no runs' driver, runtime or configuration text. DROP COLUMN
# restores each table's CREATE text exactly as it was before ADD COLUMN appended the column.
drop_provenance() {
  sqlite3 "$1" "ALTER TABLE measurements DROP COLUMN gpu_id; ALTER TABLE runs DROP COLUMN config_text;
ALTER TABLE runs DROP COLUMN runtime_version; ALTER TABLE runs DROP COLUMN driver_version;
DROP TABLE gpus;"
}

# Version 4, the last one without them, with rows: readers of version 10 read it as it is.
cp "$tmp/base.db" schema_v4.db
drop_provenance schema_v4.db
sqlite3 schema_v4.db "PRAGMA user_version=4; UPDATE meta SET value='3' WHERE key='min_reader_version';"
sqlite3 schema_v4.db "PRAGMA integrity_check; PRAGMA foreign_key_check;" | tr '\n' ' ' | grep -x 'ok ' > /dev/null
shrink schema_v4.db

# Versions before 4 had no bench tables.
drop_bench_tables() {
  sqlite3 "$1" "DROP INDEX bench_results_by_key; DROP TABLE bench_results; DROP TABLE bench_runs;"
}

# Version 3, the last one without them, with rows: readers of version 10 read it as it is.
cp "$tmp/base.db" schema_v3.db
drop_provenance schema_v3.db
drop_bench_tables schema_v3.db
sqlite3 schema_v3.db "PRAGMA user_version=3; UPDATE meta SET value='3' WHERE key='min_reader_version';"
sqlite3 schema_v3.db "PRAGMA integrity_check;" | grep -x ok > /dev/null
shrink schema_v3.db

# Versions 1 and 2 had winners without an L2 mode, unique per (device, dtype, op, n_lo) (schema.cpp's
# v1_sql). The table is recreated under its own name, so sqlite_schema holds the old text exactly.
old_winners_layout() {
  sqlite3 "$1" "
CREATE TEMP TABLE old_winners AS SELECT id, device_id, dtype, op, n_lo, n_hi, kernel_id,
  measurement_id, runner_up_kernel_id, runner_up_measurement_id, driver_version, runtime_version,
  run_id, source_id FROM winners;
DROP TABLE winners;
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
INSERT INTO winners SELECT * FROM old_winners;"
}

# Version 2 with winners of both L2 modes, as a merge of a cold and a warm database could leave
# them: f32 sum cold below 2^16 and warm above (one (device, dtype, op), no overlap), f32 max warm.
# Migrating it to version 3 must give each winner its measurement's mode.
cp "$tmp/base.db" schema_v2.db
drop_provenance schema_v2.db
drop_bench_tables schema_v2.db
sqlite3 schema_v2.db "
INSERT INTO runs (uuid, tool_version, manifest_hash, config_hash, host, origin, started_at,
  ended_at, status, l2_mode) VALUES ('0000000000000000000000000000feed', '0.1.0',
  '0123456789abcdef', 'fedcba9876543210', 'warm-host', '/lab/warm.db', '2026-11-20T10:00:00.000Z',
  '2026-11-20T10:05:00.000Z', 'finished', 'warm');
INSERT INTO measurements (run_id, seq, device_id, kernel_id, family, block, unroll, smem, finish,
  dtype, op, n, l2_mode, outcome, median_us, p10_us, p90_us, repeats, gbps, sm_clock_mhz,
  mem_clock_mhz, error, measured_at)
  SELECT r.id, 1, 1, 'vectorized.b256.u4.single_pass.f32.sum', 'vectorized', 256, 4, 'none',
    'single_pass', 'f32', 'sum', 1048576, 'warm', 'ok', 3.0, 2.9, 3.1, 20, NULL, 1980, 2619, '',
    '2026-11-20T10:01:00.000Z' FROM runs r WHERE r.uuid = '0000000000000000000000000000feed'
  UNION ALL
  SELECT r.id, 2, 1, 'vectorized.b256.u4.single_pass.f32.max', 'vectorized', 256, 4, 'none',
    'single_pass', 'f32', 'max', 1048576, 'warm', 'ok', 3.5, 3.4, 3.6, 20, NULL, 1980, 2619, '',
    '2026-11-20T10:02:00.000Z' FROM runs r WHERE r.uuid = '0000000000000000000000000000feed';
INSERT INTO winners (device_id, dtype, op, l2_mode, n_lo, n_hi, kernel_id, measurement_id,
  runner_up_kernel_id, runner_up_measurement_id, driver_version, runtime_version, run_id)
  SELECT 1, 'f32', 'sum', 'cold', 1, 65535, m.kernel_id, m.id, m.kernel_id, m.id + 1, 13000,
    13000, m.run_id FROM measurements m WHERE m.run_id = 1 AND m.seq = 1
  UNION ALL
  SELECT 1, m.dtype, m.op, 'warm', CASE m.op WHEN 'sum' THEN 65536 ELSE 1 END, 1099511627776,
    m.kernel_id, m.id, NULL, NULL, 13000, 13000, m.run_id FROM measurements m
    WHERE m.l2_mode = 'warm';"
old_winners_layout schema_v2.db
sqlite3 schema_v2.db "PRAGMA user_version=2; UPDATE meta SET value='2' WHERE key='min_reader_version';"
sqlite3 schema_v2.db "PRAGMA integrity_check; PRAGMA foreign_key_check;" | tr '\n' ' ' | grep -x 'ok ' > /dev/null
shrink schema_v2.db

# Version 1, the first release, with rows: its measurements table allows only the finishes
# two_pass and single_pass (version 2 added packed).
cp "$tmp/base.db" schema_v1.db
drop_provenance schema_v1.db
drop_bench_tables schema_v1.db
old_winners_layout schema_v1.db
sqlite3 schema_v1.db ".dbconfig defensive off" "PRAGMA writable_schema=ON; UPDATE sqlite_schema SET sql=replace(sql, 'CHECK (finish IN (''two_pass'', ''single_pass'', ''packed''))', 'CHECK (finish IN (''two_pass'', ''single_pass''))') WHERE name='measurements'; PRAGMA writable_schema=OFF; PRAGMA user_version=1; UPDATE meta SET value='1' WHERE key='min_reader_version';" >/dev/null
sqlite3 schema_v1.db "PRAGMA integrity_check;" | grep -x ok > /dev/null
shrink schema_v1.db

# Corrupt pages: the b-tree header of a leaf page of measurements overwritten with 0xff.
cp "$tmp/base.db" corrupt.db
page=$(sqlite3 corrupt.db "SELECT pageno FROM dbstat WHERE name='measurements' AND pagetype='leaf' ORDER BY pageno LIMIT 1 OFFSET 1;")
head -c 64 /dev/zero | tr '\0' '\377' | dd of=corrupt.db bs=1 seek=$(( (page - 1) * 512 )) conv=notrunc status=none
ls -l "$here"
