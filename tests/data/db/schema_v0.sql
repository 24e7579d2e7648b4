-- The version-0 prototype layout of the tuning database (pre-release builds), with a few rows.
-- make_fixtures.sh turns this into schema_v0.db; the db tests prove that a writer migrates it
-- to the current schema without losing a row, and that a reader refuses it.
PRAGMA application_id = 1414677570;  -- 0x54524442, 'TRDB'
PRAGMA user_version = 0;
CREATE TABLE devices (
  id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
  cc_major INTEGER NOT NULL, cc_minor INTEGER NOT NULL, sm_count INTEGER NOT NULL,
  bus_width_bits INTEGER NOT NULL, l2_bytes INTEGER NOT NULL, ecc INTEGER NOT NULL,
  total_mem_bytes INTEGER NOT NULL, mem_clock_khz INTEGER NOT NULL,
  driver_version INTEGER NOT NULL, runtime_version INTEGER NOT NULL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY, tool_version TEXT NOT NULL, manifest_hash TEXT NOT NULL,
  config_hash TEXT NOT NULL, host TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT,
  status TEXT NOT NULL);
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, device_id INTEGER NOT NULL,
  kernel_id TEXT NOT NULL, family TEXT NOT NULL, block INTEGER NOT NULL, unroll INTEGER NOT NULL,
  smem TEXT NOT NULL, finish TEXT NOT NULL, dtype TEXT NOT NULL, op TEXT NOT NULL,
  n INTEGER NOT NULL, outcome TEXT NOT NULL, median_us REAL, p10_us REAL, p90_us REAL,
  repeats INTEGER NOT NULL, gbps REAL, error TEXT, measured_at TEXT NOT NULL);
INSERT INTO devices VALUES (1, 'a1b2c3d4e5f60718', 'NVIDIA H100 80GB HBM3', 9, 0, 132, 5120,
  52428800, 1, 85045395456, 2619000, 12080, 12080);
INSERT INTO runs VALUES (1, '0.0.9', '00000000deadbeef', '1111111111111111', 'proto-host',
  '2025-11-01T10:00:00.000Z', '2025-11-01T10:30:00.000Z', 'finished');
INSERT INTO runs VALUES (2, '0.0.9', '00000000deadbeef', '1111111111111111', 'proto-host',
  '2025-11-02T10:00:00.000Z', NULL, 'interrupted');
INSERT INTO measurements VALUES
  (1, 1, 1, 'warp_shuffle.b256.u4.two_pass.f32.sum', 'warp_shuffle', 256, 4, 'none', 'two_pass',
   'f32', 'sum', 1048576, 'ok', 9.5, 9.3, 9.9, 30, 441.5, NULL, '2025-11-01T10:01:00.000Z'),
  (2, 1, 1, 'smem.b256.u8.dynamic.single_pass.f32.sum', 'smem', 256, 8, 'dynamic', 'single_pass',
   'f32', 'sum', 1048576, 'ok', 8.7, 8.6, 8.9, 30, 482.1, NULL, '2025-11-01T10:02:00.000Z'),
  (3, 1, 1, 'neighbored.b128.two_pass.f32.sum', 'neighbored', 128, 1, 'none', 'two_pass',
   'f32', 'sum', 1048576, 'incorrect', NULL, NULL, NULL, 0, NULL, 'result 3.5 != 4.0',
   '2025-11-01T10:03:00.000Z'),
  (4, 2, 1, 'vectorized.b512.u2.two_pass.i32.max', 'vectorized', 512, 2, 'none', 'two_pass',
   'i32', 'max', 4096, 'timeout', NULL, NULL, NULL, 0, NULL, 'no answer within 10 s',
   '2025-11-02T10:01:00.000Z');
