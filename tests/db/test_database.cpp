// The writer and reader API: what a tuner, a report and the runtime library rely on.

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "common/exit_codes.hpp"
#include "common/names.hpp"
#include "db/bench.hpp"
#include "db/check.hpp"
#include "db/database.hpp"
#include "db/row_rules.hpp"
#include "db/schema.hpp"
#include "db/snapshot.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"
#include "test_util.hpp"

namespace tunedreduce::db {
namespace {

/// A bench run of the lab's: tool 0.3.0 over /lab/tune.db, 5 repeats, CUDA 13.0.
std::int64_t lab_bench_run(Database& db, std::int64_t dev) {
  return begin_bench_run(db, dev, test::lab_bench_info(), 13000, 13000);
}

/// \p db's schema is exactly a new file's (made in \p dir).
void expect_the_schema_of_a_new_file(Database& db, const test::TempDir& dir) {
  Database fresh = Database::open_writer(dir / "fresh.db");
  const char* q =
      "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_schema ORDER BY name)";
  EXPECT_EQ(db.connection().query_text(q), fresh.connection().query_text(q));
}

/// A measurement of \p op over \p t at 2^20 (vectorized.b256.u4.single_pass, median
/// \p median_us, read back with its type and operator), the winner over 1..2^30 that cites it,
/// and a CUB bench result 0.4 us slower, each through its writer.
void write_key_rows(Database& db, std::int64_t run, std::int64_t dev, std::int64_t bench_run,
                    DType t, Op op, double median_us) {
  const std::string id =
      fmt::format("vectorized.b256.u4.single_pass.{}.{}", dtype_name(t), op_name(op));
  Measurement m = test::measurement(run, dev, id, 1 << 20, median_us, t, op);
  m.params = {"vectorized", 256, 4, "none", "single_pass"};
  const auto mid = db.insert_measurement(m);
  ASSERT_TRUE(db.find_measurement(mid));
  EXPECT_EQ(db.find_measurement(mid)->op, op);
  EXPECT_EQ(db.find_measurement(mid)->dtype, t);
  Winner w;
  w.dtype = t;
  w.op = op;
  w.n_lo = 1;
  w.n_hi = std::uint64_t{1} << 30;
  w.kernel_id = id;
  w.measurement_id = mid;
  db.replace_winners(dev, t, op, std::vector<Winner>{w});
  insert_bench_result(db, bench_run, test::cub_bench_result(t, op, median_us + 0.4));
}

using test::TempDir;
namespace fs = std::filesystem;

TEST(Database, WriterCreatesACurrentSchemaInWalMode) {
  TempDir dir;
  const auto path = dir / "tune.db";
  {
    Database db = Database::open_writer(path);
    EXPECT_TRUE(db.writable());
    EXPECT_EQ(db.file_schema_version(), schema_version);
    EXPECT_EQ(db.connection().query_text("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(db.connection().query_int("PRAGMA application_id"), application_id);
    EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
              std::to_string(min_reader_version));
  }
  Database reader = Database::open_reader(path);
  EXPECT_FALSE(reader.writable());
  EXPECT_EQ(reader.counts().devices, 0);
}

TEST(Database, DeviceUpsertKeepsOneRowAndRefreshesSoftAttributes) {
  TempDir dir;
  Database db = Database::open_writer(dir / "tune.db");
  DeviceFingerprint fp = test::h100();
  const auto id = db.upsert_device(fp);
  fp.driver_version = 13010;
  fp.runtime_version = 13010;
  EXPECT_EQ(db.upsert_device(fp), id);
  EXPECT_NE(db.upsert_device(test::h200()), id);
  auto dev = db.find_device(fp.key());
  ASSERT_TRUE(dev);
  EXPECT_EQ(dev->id, id);
  EXPECT_EQ(dev->fingerprint.name, fp.name);
  EXPECT_EQ(dev->fingerprint.driver_version, 13010);
  EXPECT_EQ(dev->fingerprint.total_mem_bytes, fp.total_mem_bytes);
  EXPECT_DOUBLE_EQ(dev->theoretical_gbps, fp.theoretical_gbps());
  EXPECT_LE(dev->first_seen, dev->last_seen);
  EXPECT_EQ(db.devices().size(), 2u);
}

TEST(Database, RunAndMeasurementsRoundTrip) {
  TempDir dir;
  Database db = Database::open_writer(dir / "tune.db");
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  db.record_attainable_bandwidth(run, dev, 3193.5);
  Measurement ok = test::measurement(run, dev, "smem.b256.u8.dynamic.single_pass.f32.sum",
                                     std::uint64_t{1} << 40, 123.25);
  ok.params = {"smem", 256, 8, "dynamic", "single_pass"};
  const auto id1 = db.insert_measurement(ok);
  Measurement bad =
      test::measurement(run, dev, "neighbored.b128.two_pass.i64.min", 4096, 0, DType::i64, Op::min);
  bad.outcome = Outcome::incorrect;
  bad.median_us.reset();
  bad.error = "got 7, expected 3";
  const auto id2 = db.insert_measurement(bad);
  db.end_run(run, RunStatus::finished);

  auto m1 = db.find_measurement(id1);
  ASSERT_TRUE(m1);
  EXPECT_EQ(m1->seq, 1);
  EXPECT_EQ(m1->n, std::uint64_t{1} << 40);
  EXPECT_EQ(m1->params, ok.params);
  EXPECT_EQ(m1->median_us, 123.25);
  EXPECT_EQ(m1->sm_clock_mhz, 1980);
  auto m2 = db.find_measurement(id2);
  ASSERT_TRUE(m2);
  EXPECT_EQ(m2->seq, 2);
  EXPECT_EQ(m2->outcome, Outcome::incorrect);
  EXPECT_EQ(m2->dtype, DType::i64);
  EXPECT_EQ(m2->op, Op::min);
  EXPECT_FALSE(m2->median_us);
  EXPECT_EQ(m2->error, "got 7, expected 3");

  auto r = db.find_run(run);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, RunStatus::finished);
  EXPECT_TRUE(r->ended_at);
  EXPECT_EQ(r->uuid.size(), 32u);
  EXPECT_EQ(r->origin, (dir / "tune.db").string());
  ASSERT_EQ(r->attainable.size(), 1u);
  EXPECT_DOUBLE_EQ(r->attainable[0].gbps, 3193.5);
  MeasurementFilter f;
  f.device_id = dev;
  f.dtype = DType::i64;
  EXPECT_EQ(db.measurements(f).size(), 1u);
  EXPECT_EQ(db.counts().measurements, 2);
}

TEST(Database, ARunIsSettledOnlyWhenNoLiveProcessHoldsItsLease) {
  TempDir dir;
  const auto path = dir / "tune.db";
  RunInfo here = test::run_info();
  here.host.clear();  // this machine
  RunInfo elsewhere = test::run_info();
  elsewhere.host = "another-host";
  std::int64_t live = 0, orphan = 0, foreign = 0;
  std::string live_uuid;
  Database settler = Database::open_writer(path);
  {
    Database tuner = Database::open_writer(path);
    live = tuner.begin_run(here);
    live_uuid = tuner.find_run(live)->uuid;
    EXPECT_TRUE(fs::exists(RunLease::file(path, live_uuid)));
    EXPECT_TRUE(RunLease::held(path, live_uuid));
    // Another connection, in this very process, still sees the lease held: nothing to settle.
    EXPECT_TRUE(settler.settle_abandoned_runs().empty());
    EXPECT_EQ(settler.find_run(live)->status, RunStatus::running);
    {
      Database dead = Database::open_writer(path);
      orphan = dead.begin_run(here);
      foreign = dead.begin_run(elsewhere);
    }  // gone without end_run, as a killed tuner: the leases are released
    EXPECT_EQ(settler.settle_abandoned_runs(), std::vector<std::int64_t>{orphan});
    EXPECT_EQ(settler.find_run(orphan)->status, RunStatus::interrupted);
    EXPECT_EQ(settler.find_run(orphan)->ended_at, settler.find_run(orphan)->started_at);
    EXPECT_EQ(settler.find_run(foreign)->status, RunStatus::running);  // not this host's to judge
    EXPECT_EQ(settler.find_run(live)->status, RunStatus::running);
    tuner.end_run(live, RunStatus::finished);
    EXPECT_FALSE(fs::exists(RunLease::file(path, live_uuid)));  // end_run released it
    EXPECT_FALSE(RunLease::held(path, live_uuid));
  }
  EXPECT_EQ(settler.find_run(live)->status, RunStatus::finished);
  EXPECT_TRUE(settler.settle_abandoned_runs().empty());
  // An in-memory database has no file to lease beside.
  Database mem = Database::create_in_memory();
  const auto run = mem.begin_run(here);
  EXPECT_TRUE(mem.settle_abandoned_runs().empty());  // its runs live and die with this process
  EXPECT_EQ(mem.find_run(run)->status, RunStatus::running);
}

TEST(Database, InvalidMeasurementsAreRefusedWithTheirReason) {
  TempDir dir;
  Database db = Database::open_writer(dir / "tune.db");
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  Measurement m = test::measurement(run, dev, "unroll.b256.u4.two_pass.f32.sum", 10, 1.0);
  m.median_us.reset();
  try {
    db.insert_measurement(m);
    FAIL() << "an ok measurement without a median was stored";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::invalid_data);
    EXPECT_NE(std::string(e.what()).find("no median"), std::string::npos);
  }
  m = test::measurement(run + 100, dev, "unroll.b256.u4.two_pass.f32.sum", 10, 1.0);
  EXPECT_THROW(db.insert_measurement(m), DbError);  // no such run: foreign key
  m = test::measurement(run, dev, "unroll.b256.u4.two_pass.f32.sum", ~std::uint64_t{0}, 1.0);
  EXPECT_THROW(db.insert_measurement(m), DbError);  // n beyond int64
  EXPECT_THROW(db.end_run(run + 100, RunStatus::failed), DbError);
  EXPECT_EQ(db.counts().measurements, 0);
}

TEST(Database, ResumeQueriesCountOnlyFinalOutcomes) {
  TempDir dir;
  Database db = Database::open_writer(dir / "tune.db");
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  Measurement ok = test::measurement(run, dev, "unroll.b256.u4.two_pass.f32.sum", 1024, 3.0);
  db.insert_measurement(ok);
  Measurement crashed = test::measurement(run, dev, "unroll.b512.u4.two_pass.f32.sum", 1024, 0);
  crashed.outcome = Outcome::crashed;
  crashed.median_us.reset();
  db.insert_measurement(crashed);
  Measurement failed = test::measurement(run, dev, "unroll.b1024.u4.two_pass.f32.sum", 1024, 0);
  failed.outcome = Outcome::launch_failed;
  db.insert_measurement(failed);

  EXPECT_TRUE(db.has_final_measurement(ok.key()));
  EXPECT_FALSE(db.has_final_measurement(crashed.key()));
  EXPECT_TRUE(db.has_final_measurement(failed.key()));
  MeasurementKey other = ok.key();
  other.l2_mode = L2Mode::warm;
  EXPECT_FALSE(db.has_final_measurement(other));
  other = ok.key();
  other.n = 2048;
  EXPECT_FALSE(db.has_final_measurement(other));
  auto keys = db.final_measured_keys(dev);
  EXPECT_EQ(keys.size(), 2u);
  EXPECT_TRUE(keys.count(ok.key()));
  EXPECT_TRUE(keys.count(failed.key()));
  // A later run sees the earlier run's results.
  const auto run2 = db.begin_run(test::run_info());
  (void)run2;
  EXPECT_TRUE(db.has_final_measurement(ok.key()));
}

struct WinnerFixture : ::testing::Test {
  TempDir dir;
  Database db = Database::open_writer(dir / "tune.db");
  std::int64_t dev = db.upsert_device(test::h100());
  std::int64_t run = db.begin_run(test::run_info());
  std::int64_t m_small = db.insert_measurement(
      test::measurement(run, dev, "warp_shuffle.b256.u4.two_pass.f32.sum", 1024, 4.0));
  std::int64_t m_small_2nd = db.insert_measurement(
      test::measurement(run, dev, "smem.b256.u8.dynamic.single_pass.f32.sum", 1024, 4.5));
  std::int64_t m_large = db.insert_measurement(
      test::measurement(run, dev, "vectorized.b512.u2.two_pass.f32.sum", 1 << 24, 40.0));

  Winner winner(std::uint64_t lo, std::uint64_t hi, std::int64_t m, const std::string& id) {
    Winner w;
    w.dtype = DType::f32;
    w.op = Op::sum;
    w.n_lo = lo;
    w.n_hi = hi;
    w.kernel_id = id;
    w.measurement_id = m;
    w.driver_version = 13000;
    w.runtime_version = 13000;
    w.run_id = run;
    return w;
  }
};

TEST_F(WinnerFixture, ReplaceWinnersIsAllOrNothing) {
  std::vector<Winner> ws = {winner(1, 65535, m_small, "warp_shuffle.b256.u4.two_pass.f32.sum"),
                            winner(65536, 1 << 30, m_large, "vectorized.b512.u2.two_pass.f32.sum")};
  ws[0].runner_up_kernel_id = "smem.b256.u8.dynamic.single_pass.f32.sum";
  ws[0].runner_up_measurement_id = m_small_2nd;
  db.replace_winners(dev, DType::f32, Op::sum, ws);
  auto stored = db.winners(dev);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].runner_up_measurement_id, m_small_2nd);
  EXPECT_EQ(stored[1].n_hi, std::uint64_t{1} << 30);

  // Overlapping intervals: refused, and the stored winners are untouched.
  std::vector<Winner> overlap = {winner(1, 2000, m_small, "warp_shuffle.b256.u4.two_pass.f32.sum"),
                                 winner(2000, 4000, m_large,
                                        "vectorized.b512.u2.two_pass.f32.sum")};
  EXPECT_THROW(db.replace_winners(dev, DType::f32, Op::sum, overlap), DbError);
  // Evidence that is not an ok measurement of that kernel: refused.
  std::vector<Winner> wrong = {winner(1, 10, m_large, "warp_shuffle.b256.u4.two_pass.f32.sum")};
  EXPECT_THROW(db.replace_winners(dev, DType::f32, Op::sum, wrong), DbError);
  std::vector<Winner> other_op = {winner(1, 10, m_small, "warp_shuffle.b256.u4.two_pass.f32.sum")};
  EXPECT_THROW(db.replace_winners(dev, DType::f32, Op::max, other_op), DbError);
  EXPECT_EQ(db.winners(dev).size(), 2u);

  // A valid replacement replaces all of them.
  std::vector<Winner> one = {winner(1, 1 << 20, m_small, "warp_shuffle.b256.u4.two_pass.f32.sum")};
  db.replace_winners(dev, DType::f32, Op::sum, one);
  ASSERT_EQ(db.winners(dev).size(), 1u);
  EXPECT_EQ(db.winners(dev)[0].n_hi, 1u << 20);
  db.replace_winners(dev, DType::f32, Op::sum, {});
  EXPECT_TRUE(db.winners(dev).empty());
}

TEST_F(WinnerFixture, SnapshotLoadsExactAndSimilarDevices) {
  db.replace_winners(dev, DType::f32, Op::sum,
                     std::vector<Winner>{
                         winner(1, 65535, m_small, "warp_shuffle.b256.u4.two_pass.f32.sum"),
                         winner(1 << 20, 1 << 30, m_large, "vectorized.b512.u2.two_pass.f32.sum")});
  // Another device with the same compute capability and SM count, and one without.
  DeviceFingerprint twin = test::h100();
  twin.ecc = false;  // another fingerprint, same cc + SMs
  const auto twin_id = db.upsert_device(twin);
  const auto m_twin =
      db.insert_measurement(test::measurement(run, twin_id, "unroll.b128.u2.two_pass.i32.max", 100,
                                              2.0, DType::i32, Op::max));
  Winner tw = winner(1, 1000, m_twin, "unroll.b128.u2.two_pass.i32.max");
  tw.dtype = DType::i32;
  tw.op = Op::max;
  db.replace_winners(twin_id, DType::i32, Op::max, std::vector<Winner>{tw});

  Snapshot s = load_snapshot(dir / "tune.db", test::h100());
  ASSERT_FALSE(s.problem) << s.message;
  ASSERT_EQ(s.exact.size(), 2u);
  const WinnerTable& exact = s.exact[L2Mode::cold];
  ASSERT_EQ(exact.size(), 2u);
  EXPECT_TRUE(s.exact[L2Mode::warm].empty());
  const SnapshotEntry* e = exact.find(DType::f32, Op::sum, 4096);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kernel_id, "warp_shuffle.b256.u4.two_pass.f32.sum");
  EXPECT_EQ(e->l2_mode, L2Mode::cold);
  EXPECT_DOUBLE_EQ(e->median_us, 4.0);
  EXPECT_FALSE(e->stale(13000, 13000));
  EXPECT_TRUE(e->stale(13010, 13000));
  EXPECT_FALSE(exact.find(DType::f32, Op::sum, 100000));  // in the gap
  EXPECT_FALSE(exact.find(DType::f32, Op::sum, 0));
  EXPECT_EQ(exact.nearest(DType::f32, Op::sum, 100000)->n_hi, 65535u);     // closer below
  EXPECT_EQ(exact.nearest(DType::f32, Op::sum, 1000000)->n_lo, 1u << 20);  // closer above
  EXPECT_EQ(exact.nearest(DType::f32, Op::sum, std::uint64_t{1} << 40)->n_lo, 1u << 20);
  EXPECT_FALSE(exact.find(DType::i32, Op::max, 10));
  ASSERT_EQ(s.similar.size(), 1u);
  EXPECT_EQ(s.similar[L2Mode::cold].find(DType::i32, Op::max, 10)->device_key, twin.key());

  DeviceFingerprint other = test::h100();
  other.sm_count = 114;  // H100 PCIe-like: no similar device
  Snapshot t = load_snapshot(dir / "tune.db", other);
  EXPECT_TRUE(t.exact.empty());
  EXPECT_TRUE(t.similar.empty());
}

// A winner row that breaks the row rules (db/row_rules.hpp) comes from a damaged or hand-edited
// file (SQLite does not check CHECK constraints on a read-only connection, nor with
// ignore_check_constraints): the loader skips that row by name and reads the others, instead of
// reading it as something else (it read an unknown type as i32) or dropping the whole file as
// corrupt (every key fell back to the built-in rules).
TEST_F(WinnerFixture, SnapshotSkipsARowThatBreaksTheRowRulesByNameAndKeepsTheOthers) {
  db.replace_winners(
      dev, DType::f32, Op::sum,
      std::vector<Winner>{winner(1, 65535, m_small, "warp_shuffle.b256.u4.two_pass.f32.sum"),
                          winner(65536, 1 << 30, m_large, "vectorized.b512.u2.two_pass.f32.sum")});
  ASSERT_FALSE(load_snapshot(dir / "tune.db", test::h100()).problem);
  const std::string first = "(SELECT min(id) FROM winners)";
  struct Damage {
    std::string sql, repair, finding;
  };
  const std::string w = "UPDATE winners SET ";
  const std::string where = " WHERE id = " + first;
  const std::string m = "UPDATE measurements SET ";
  const std::string ms = " WHERE id = " + std::to_string(m_small);
  const Damage damages[] = {
      {w + "dtype = 'q8'" + where, w + "dtype = 'f32'" + where,
       "dtype = 'q8': is not an element type"},
      {w + "op = 'avg'" + where, w + "op = 'sum'" + where, "op = 'avg': is not an operator"},
      {w + "l2_mode = 'tepid'" + where, w + "l2_mode = 'cold'" + where,
       "l2_mode = 'tepid': is not one of"},
      {w + "kernel_id = ''" + where,
       w + "kernel_id = 'warp_shuffle.b256.u4.two_pass.f32.sum'" + where,
       "kernel_id = '': must not be empty"},
      {w + "n_lo = 70000" + where, w + "n_lo = 1" + where,
       "n_lo/n_hi = 70000/65535: n_lo is larger"},
      {w + "n_lo = -5" + where, w + "n_lo = 1" + where, "n_lo = -5: must be at least 0"},
      {w + "n_lo = 'one'" + where, w + "n_lo = 1" + where, "n_lo = 'one': must be an integer"},
      {w + "kernel_id = replace(hex(zeroblob(2600)), '00', 'k')" + where,
       w + "kernel_id = 'warp_shuffle.b256.u4.two_pass.f32.sum'" + where,
       "is longer than 256 bytes (2600 bytes)"},
      {m + "median_us = -1.0" + ms, m + "median_us = 4.0" + ms,
       "median_us = -1: must be more than 0"},
      {m + "median_us = 9e999" + ms, m + "median_us = 4.0" + ms,
       "median_us = inf: must be a finite number"},
  };
  for (const Damage& d : damages) {
    db.connection().exec("PRAGMA ignore_check_constraints = ON; " + d.sql);
    const Snapshot s = load_snapshot(dir / "tune.db", test::h100());
    db.connection().exec(d.repair + "; PRAGMA ignore_check_constraints = OFF");
    EXPECT_FALSE(s.problem) << d.sql << ": " << s.message;
    ASSERT_EQ(s.skipped.size(), 1u) << d.sql;
    EXPECT_NE(s.skipped[0].find("winners id "), std::string::npos) << s.skipped[0];
    EXPECT_NE(s.skipped[0].find(d.finding), std::string::npos) << d.sql << ": " << s.skipped[0];
    // The other winner is read as it is.
    const SnapshotEntry* large = s.exact[L2Mode::cold].find(DType::f32, Op::sum, 1 << 20);
    ASSERT_TRUE(large) << d.sql;
    EXPECT_EQ(large->kernel_id, "vectorized.b512.u2.two_pass.f32.sum");
    EXPECT_FALSE(s.exact[L2Mode::cold].find(DType::f32, Op::sum, 1024)) << d.sql;
  }
  const Snapshot repaired = load_snapshot(dir / "tune.db", test::h100());
  EXPECT_FALSE(repaired.problem);
  EXPECT_TRUE(repaired.skipped.empty()) << repaired.skipped[0];
  EXPECT_TRUE(repaired.exact[L2Mode::cold].find(DType::f32, Op::sum, 1024));
}

// --- L2 modes -----------------------------------------------------------------------------------

struct ModeFixture : WinnerFixture {
  RunInfo warm_info() {
    RunInfo info = test::run_info();
    info.l2_mode = L2Mode::warm;
    return info;
  }
  std::int64_t warm_run = db.begin_run(warm_info());
  std::int64_t m_warm = insert_warm("vectorized.b512.u2.two_pass.f32.sum", 1024, 2.5);
  std::int64_t m_warm_2nd = insert_warm("warp_shuffle.b256.u4.two_pass.f32.sum", 1024, 2.75);

  std::int64_t insert_warm(const std::string& id, std::uint64_t n, double us) {
    Measurement m = test::measurement(warm_run, dev, id, n, us);
    m.l2_mode = L2Mode::warm;
    return db.insert_measurement(m);
  }
  Winner warm(std::uint64_t lo, std::uint64_t hi) {
    Winner w = winner(lo, hi, m_warm, "vectorized.b512.u2.two_pass.f32.sum");
    w.l2_mode = L2Mode::warm;
    w.run_id = warm_run;
    return w;
  }
  std::vector<Winner> cold() {
    return {winner(1, 65535, m_small, "warp_shuffle.b256.u4.two_pass.f32.sum"),
            winner(65536, 1 << 30, m_large, "vectorized.b512.u2.two_pass.f32.sum")};
  }
  static std::size_t count(const std::vector<WinnerRecord>& ws, L2Mode m) {
    return static_cast<std::size_t>(
        std::count_if(ws.begin(), ws.end(), [m](const WinnerRecord& w) { return w.l2_mode == m; }));
  }
};

TEST_F(ModeFixture, ReplacingWinnersOfOneModeKeepsTheOther) {
  db.replace_winners(dev, DType::f32, Op::sum, cold());  // the default mode: cold
  db.replace_winners(dev, DType::f32, Op::sum, std::vector<Winner>{warm(1, 1 << 30)}, L2Mode::warm);
  auto stored = db.winners(dev);
  ASSERT_EQ(stored.size(), 3u);  // the same sizes, once per mode
  EXPECT_EQ(stored[0].l2_mode, L2Mode::cold);
  EXPECT_EQ(stored[1].l2_mode, L2Mode::cold);
  EXPECT_EQ(stored[2].l2_mode, L2Mode::warm);  // ordered by mode, then n_lo
  EXPECT_EQ(stored[2].n_lo, 1u);
  EXPECT_EQ(stored[2].measurement_id, m_warm);

  // A cold run's winners replace the cold ones only ...
  db.replace_winners(dev, DType::f32, Op::sum,
                     std::vector<Winner>{
                         winner(1, 4096, m_small, "warp_shuffle.b256.u4.two_pass.f32.sum")});
  stored = db.winners(dev);
  EXPECT_EQ(count(stored, L2Mode::cold), 1u);
  EXPECT_EQ(count(stored, L2Mode::warm), 1u);
  // ... and a warm run's the warm ones only.
  std::vector<Winner> two_warm = {warm(1, 100), warm(101, 1 << 20)};
  two_warm[1].runner_up_kernel_id = "warp_shuffle.b256.u4.two_pass.f32.sum";
  two_warm[1].runner_up_measurement_id = m_warm_2nd;
  db.replace_winners(dev, DType::f32, Op::sum, two_warm, L2Mode::warm);
  stored = db.winners(dev);
  EXPECT_EQ(count(stored, L2Mode::cold), 1u);
  EXPECT_EQ(count(stored, L2Mode::warm), 2u);
  EXPECT_EQ(stored[0].n_hi, 4096u);
  db.replace_winners(dev, DType::f32, Op::sum, {}, L2Mode::warm);
  stored = db.winners(dev);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].l2_mode, L2Mode::cold);
}

TEST_F(ModeFixture, AWinnerOfTheOtherModeOrWithEvidenceOfTheOtherModeIsRefused) {
  auto expect_refused = [&](std::vector<Winner> ws, L2Mode mode, const std::string& words) {
    try {
      db.replace_winners(dev, DType::f32, Op::sum, ws, mode);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const DbError& e) {
      EXPECT_EQ(e.problem(), Problem::invalid_data);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  db.replace_winners(dev, DType::f32, Op::sum, cold());
  // A cold winner passed to replace the warm ones (its mode says cold) ...
  expect_refused(cold(), L2Mode::warm, "warm winners of f32 sum: a cold winner");
  // ... and winners whose evidence is of the other mode.
  Winner w = winner(1, 100, m_small, "warp_shuffle.b256.u4.two_pass.f32.sum");
  w.l2_mode = L2Mode::warm;
  expect_refused({w}, L2Mode::warm,
                 "measurement " + std::to_string(m_small) +
                     " of 'warp_shuffle.b256.u4.two_pass.f32.sum' is a cold-L2 measurement, not"
                     " warm");
  Winner c = warm(1, 100);
  c.l2_mode = L2Mode::cold;
  expect_refused({c}, L2Mode::cold, "is a warm-L2 measurement, not cold");
  Winner ru = warm(1, 100);
  ru.runner_up_kernel_id = "warp_shuffle.b256.u4.two_pass.f32.sum";
  ru.runner_up_measurement_id = m_small;
  expect_refused({ru}, L2Mode::warm,
                 "runner-up measurement " + std::to_string(m_small) + " is a cold-L2 measurement");
  // Nothing changed.
  const auto stored = db.winners(dev);
  EXPECT_EQ(count(stored, L2Mode::cold), 2u);
  EXPECT_EQ(count(stored, L2Mode::warm), 0u);
}

TEST_F(ModeFixture, SnapshotHoldsEachModeInATableOfItsOwn) {
  db.replace_winners(dev, DType::f32, Op::sum, cold());
  db.replace_winners(dev, DType::f32, Op::sum, std::vector<Winner>{warm(1, 1 << 20)}, L2Mode::warm);
  // Two devices of the same model: one with cold winners of i32 max, one with warm ones.
  DeviceFingerprint twin = test::h100(), other_twin = test::h100();
  twin.ecc = false;
  other_twin.total_mem_bytes -= 1 << 30;
  const auto twin_id = db.upsert_device(twin), other_id = db.upsert_device(other_twin);
  for (auto [device, mode] :
       {std::pair(twin_id, L2Mode::cold), std::pair(other_id, L2Mode::warm)}) {
    Measurement m = test::measurement(mode == L2Mode::cold ? run : warm_run, device,
                                      "unroll.b128.u2.two_pass.i32.max", 100, 2.0, DType::i32,
                                      Op::max);
    m.l2_mode = mode;
    Winner w = winner(1, 1000, db.insert_measurement(m), "unroll.b128.u2.two_pass.i32.max");
    w.dtype = DType::i32;
    w.op = Op::max;
    w.l2_mode = mode;
    db.replace_winners(device, DType::i32, Op::max, std::vector<Winner>{w}, mode);
  }

  Snapshot s = load_snapshot(dir / "tune.db", test::h100());
  ASSERT_FALSE(s.problem) << s.message;
  EXPECT_EQ(s.exact.size(), 3u);
  ASSERT_EQ(s.exact[L2Mode::cold].size(), 2u);
  ASSERT_EQ(s.exact[L2Mode::warm].size(), 1u);
  const SnapshotEntry* c = s.exact[L2Mode::cold].find(DType::f32, Op::sum, 4096);
  const SnapshotEntry* w = s.exact[L2Mode::warm].find(DType::f32, Op::sum, 4096);
  ASSERT_TRUE(c && w);
  EXPECT_EQ(c->kernel_id, "warp_shuffle.b256.u4.two_pass.f32.sum");
  EXPECT_EQ(c->l2_mode, L2Mode::cold);
  EXPECT_EQ(w->kernel_id, "vectorized.b512.u2.two_pass.f32.sum");
  EXPECT_EQ(w->l2_mode, L2Mode::warm);
  EXPECT_DOUBLE_EQ(w->median_us, 2.5);
  EXPECT_FALSE(s.exact[L2Mode::warm].find(DType::f32, Op::sum, 1 << 21));
  EXPECT_EQ(s.exact[L2Mode::warm].nearest(DType::f32, Op::sum, 1 << 21)->n_hi, 1u << 20);
  EXPECT_EQ(s.exact[L2Mode::cold].find(DType::f32, Op::sum, 1 << 21)->n_lo, 65536u);
  // Same model: each mode takes the first device that has winners of that mode.
  ASSERT_EQ(s.similar[L2Mode::cold].size(), 1u);
  ASSERT_EQ(s.similar[L2Mode::warm].size(), 1u);
  EXPECT_EQ(s.similar[L2Mode::cold].find(DType::i32, Op::max, 10)->device_key, twin.key());
  EXPECT_EQ(s.similar[L2Mode::warm].find(DType::i32, Op::max, 10)->device_key, other_twin.key());
}

TEST(WinnerTable, HoldsTheRowsOfOneL2ModeOnly) {
  SnapshotEntry cold, warm;
  cold.n_lo = warm.n_lo = 1;
  cold.n_hi = warm.n_hi = 10;
  warm.l2_mode = L2Mode::warm;
  EXPECT_THROW((void)WinnerTable({cold, warm}), std::invalid_argument);
  const WinnerTables t = WinnerTables::split({warm, cold});
  EXPECT_EQ(t[L2Mode::cold].size(), 1u);
  EXPECT_EQ(t[L2Mode::warm].size(), 1u);
  EXPECT_EQ(t[L2Mode::warm].find(DType::i32, Op::sum, 5)->l2_mode, L2Mode::warm);
}

TEST(Database, SnapshotOfAMissingFileSaysNoDatabaseOnce) {
  TempDir dir;
  Snapshot s = load_snapshot(dir / "absent.db", test::h100());
  ASSERT_TRUE(s.problem);
  EXPECT_EQ(*s.problem, Problem::missing);
  EXPECT_EQ(s.message,
            "'" + (dir / "absent.db").string() + "': no database (the file does not exist)");
  EXPECT_FALSE(std::filesystem::exists(dir / "absent.db"));  // a reader never creates
}

TEST(Database, ReadersCannotWrite) {
  TempDir dir;
  { Database::open_writer(dir / "tune.db").upsert_device(test::h100()); }
  Database r = Database::open_reader(dir / "tune.db");
  try {
    r.upsert_device(test::h200());
    FAIL();
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::readonly);
    EXPECT_EQ(e.exit_code(), exit_code::db_readonly);
  }
  // Even raw SQL through the connection is refused by SQLite itself.
  EXPECT_THROW(r.connection().exec("DELETE FROM devices"), DbError);
  EXPECT_EQ(r.counts().devices, 1);
}

TEST(Database, ImmutableReaderReadsAShippedFile) {
  TempDir dir;
  const auto path = dir / "ship it 'quoted' %20 ?x=1 #frag.db";
  {
    Database db = Database::open_writer(path);
    db.upsert_device(test::h100());
  }
  ReaderOptions ro;
  ro.immutable = true;
  Database r = Database::open_reader(path, ro);
  EXPECT_EQ(r.counts().devices, 1);
  EXPECT_FALSE(std::filesystem::exists(path.string() + "-shm"));
}

// --- migrations ----------------------------------------------------------------------------------

void add_v2_column(Connection& c) { c.exec("ALTER TABLE runs ADD COLUMN note TEXT"); }
void broken_v2(Connection& c) {
  c.exec("ALTER TABLE runs ADD COLUMN note TEXT");
  c.exec("THIS IS NOT SQL");
}

TEST(Migration, AFailingStepRollsBackEverything) {
  TempDir dir;
  { Database::open_writer(dir / "tune.db").upsert_device(test::h100()); }
  Connection c = Connection::open(dir / "tune.db", OpenMode::read_write);
  std::vector<Migration> steps(migrations().begin(), migrations().end());
  steps.push_back({schema_version, "test: broken", broken_v2});
  {
    Transaction tx(c, TxKind::immediate);
    EXPECT_THROW(apply_migrations(c, steps, schema_version + 1), DbError);
  }  // rolled back
  EXPECT_EQ(c.query_int("PRAGMA user_version"), schema_version);
  EXPECT_EQ(c.query_int("SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'note'"), 0);
  steps.back() = {schema_version, "test: add a column", add_v2_column};
  {
    Transaction tx(c, TxKind::immediate);
    apply_migrations(c, steps, schema_version + 1);
    tx.commit();
  }
  EXPECT_EQ(c.query_int("PRAGMA user_version"), schema_version + 1);
  EXPECT_EQ(c.query_int("SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'note'"), 1);
  EXPECT_EQ(c.query_int("SELECT count(*) FROM devices"), 1);
}

TEST(Migration, Version0PrototypeIsMigratedWithoutLosingARow) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v0.db", dir);
  // Readers never migrate: they refuse, and the file stays as it was.
  try {
    Database::open_reader(path);
    FAIL() << "a reader opened a version-0 file";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::too_old);
    EXPECT_EQ(e.exit_code(), exit_code::db_needs_migration);
    EXPECT_NE(std::string(e.what()).find("schema version 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::read_file(path), test::read_file(test::fixture("schema_v0.db")));

  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);
  EXPECT_EQ(db.counts().devices, 1);
  EXPECT_EQ(db.counts().runs, 2);
  EXPECT_EQ(db.counts().measurements, 4);
  auto devs = db.devices();
  EXPECT_EQ(devs[0].key, "a1b2c3d4e5f60718");
  EXPECT_NEAR(devs[0].theoretical_gbps, 3352.32, 0.01);
  EXPECT_EQ(devs[0].first_seen, "2025-11-01T10:00:00.000Z");
  auto runs = db.runs();
  EXPECT_EQ(runs[1].status, RunStatus::interrupted);
  EXPECT_FALSE(runs[1].ended_at);
  EXPECT_EQ(runs[0].uuid.size(), 32u);
  EXPECT_NE(runs[0].uuid, runs[1].uuid);
  auto ms = db.measurements();
  EXPECT_EQ(ms[2].error, "result 3.5 != 4.0");
  EXPECT_EQ(ms[3].seq, 1);  // first of run 2
  EXPECT_EQ(ms[1].seq, 2);
  // The migrated file has exactly the schema of a new one.
  expect_the_schema_of_a_new_file(db, dir);
  EXPECT_EQ(db.connection().query_text("PRAGMA quick_check"), "ok");
  EXPECT_EQ(db.connection().query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  // It is usable: new runs continue the sequence.
  const auto run = db.begin_run(test::run_info());
  EXPECT_GT(run, 2);
}

TEST(Migration, Version1GainsThePackedFinishWithEveryRowKept) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v1.db", dir);
  {
    Connection c = Connection::open(path, OpenMode::read_only);
    EXPECT_EQ(c.query_int("PRAGMA user_version"), 1);
  }
  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);  // 1 -> 2 -> ... -> 9 -> 10
  EXPECT_EQ(db.counts().measurements, 40);
  EXPECT_EQ(db.connection().query_text("PRAGMA quick_check"), "ok");
  EXPECT_EQ(db.connection().query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  // The migrated file has exactly the schema of a new one ...
  expect_the_schema_of_a_new_file(db, dir);
  // ... and takes a packed measurement, which version 1 refused.
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  Measurement m = test::measurement(run, dev, "tiled.b512.u2.packed.i32.sum", 1 << 20, 6.5);
  m.params = {"tiled", 512, 2, "none", "packed"};
  const auto id = db.insert_measurement(m);
  ASSERT_TRUE(db.find_measurement(id));
  EXPECT_EQ(db.find_measurement(id)->params.finish, "packed");
  EXPECT_EQ(db.counts().measurements, 41);
}

TEST(Migration, Version2WinnersTakeTheL2ModeOfTheirMeasurement) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v2.db", dir);
  std::vector<std::tuple<std::int64_t, std::string, std::int64_t, std::int64_t>> before;
  {
    Connection c = Connection::open(path, OpenMode::read_only);
    EXPECT_EQ(c.query_int("PRAGMA user_version"), 2);
    EXPECT_EQ(c.query_int("SELECT count(*) FROM pragma_table_info('winners')"
                          " WHERE name = 'l2_mode'"),
              0);
    Statement st = c.prepare("SELECT id, kernel_id, n_lo, measurement_id FROM winners ORDER BY id");
    while (st.step())
      before.emplace_back(st.column_int(0), st.column_text(1), st.column_int(2), st.column_int(3));
  }
  ASSERT_EQ(before.size(), 3u);
  // Readers never migrate: this binary's reader refuses the older file.
  try {
    Database::open_reader(path);
    FAIL() << "a reader opened a version-2 file";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::too_old);
    EXPECT_NE(std::string(e.what()).find("schema version 2 is older"), std::string::npos);
  }

  Database db = Database::open_writer(path);            // foreign keys on, as for every writer
  EXPECT_EQ(db.file_schema_version(), schema_version);  // 2 -> 3 -> ... -> 9 -> 10
  EXPECT_EQ(db.connection().query_int("PRAGMA foreign_keys"), 1);
  EXPECT_EQ(db.connection().query_text("PRAGMA quick_check"), "ok");
  EXPECT_EQ(db.connection().query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  // Every winner is kept, with its id, and takes the mode of its measurement.
  auto ws = db.winners();
  ASSERT_EQ(ws.size(), before.size());
  std::sort(ws.begin(), ws.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (std::size_t i = 0; i < ws.size(); ++i) {
    SCOPED_TRACE(ws[i].kernel_id);
    EXPECT_EQ(ws[i].id, std::get<0>(before[i]));
    EXPECT_EQ(ws[i].kernel_id, std::get<1>(before[i]));
    EXPECT_EQ(static_cast<std::int64_t>(ws[i].n_lo), std::get<2>(before[i]));
    EXPECT_EQ(ws[i].measurement_id, std::get<3>(before[i]));
    EXPECT_EQ(ws[i].l2_mode, db.find_measurement(ws[i].measurement_id)->l2_mode);
    // f32 sum below 2^16 came from the cold run (with a runner-up); f32 sum above and f32 max
    // from the warm one.
    const bool from_warm_run = ws[i].op == Op::max || ws[i].n_lo == 65536;
    EXPECT_EQ(ws[i].l2_mode, from_warm_run ? L2Mode::warm : L2Mode::cold);
    EXPECT_EQ(ws[i].runner_up_measurement_id.has_value(), !from_warm_run);
  }
  EXPECT_EQ(std::count_if(ws.begin(), ws.end(),
                          [](const WinnerRecord& w) { return w.l2_mode == L2Mode::warm; }),
            2);
  // The migrated file has exactly the schema of a new one.
  expect_the_schema_of_a_new_file(db, dir);
  // Cold winners for every size now leave the warm ones alone.
  const auto cold_m = db.measurements()[0];
  Winner w;
  w.dtype = DType::f32;
  w.op = Op::sum;
  w.n_lo = 1;
  w.n_hi = std::uint64_t{1} << 40;
  w.kernel_id = cold_m.kernel_id;
  w.measurement_id = cold_m.id;
  db.replace_winners(cold_m.device_id, DType::f32, Op::sum, std::vector<Winner>{w});
  EXPECT_EQ(db.winners().size(), 3u);
}

TEST(Migration, Version2WithDanglingWinnerReferencesIsRefusedAndLeftAsItWas) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v2.db", dir);
  {
    Connection c = Connection::open(path, OpenMode::read_write);
    c.exec("PRAGMA foreign_keys = OFF");
    c.exec("UPDATE winners SET measurement_id = 999 WHERE op = 'max'");
  }
  try {
    Database::open_writer(path);
    FAIL() << "migrated a file whose winners refer to a missing measurement";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot migrate to schema version 3: 1 rows of winners"),
              std::string::npos)
        << e.what();
  }
  Connection c = Connection::open(path, OpenMode::read_only);
  EXPECT_EQ(c.query_int("PRAGMA user_version"), 2);  // the whole migration rolled back
  EXPECT_EQ(c.query_int("SELECT count(*) FROM winners"), 3);
}

TEST(Migration, AVersion2ReaderIsRefusedAVersion3File) {
  TempDir dir;
  { Database::open_writer(dir / "tune.db"); }
  {
    // A version-3 file, as a binary of that version left it.
    Connection w = Connection::open(dir / "tune.db", OpenMode::read_write);
    w.exec(
        "DROP TABLE bench_results; DROP TABLE bench_runs; PRAGMA user_version = 3;"
        "UPDATE meta SET value = '3' WHERE key = 'min_reader_version'");
  }
  Connection c = Connection::open(dir / "tune.db", OpenMode::read_only);
  const SchemaState state = read_schema_state(c);
  EXPECT_EQ(state.user_version, 3);
  EXPECT_EQ(state.min_reader_version, 3);
  EXPECT_EQ(classify(state, c, false), SchemaAction::use);
  // A binary of schema version 2 would take a cold and a warm winner of the same sizes for an
  // overlap: min_reader_version 3 keeps it out, cleanly.
  try {
    classify(state, c, false, 2);
    FAIL() << "a version-2 reader was let in";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::too_new);
    EXPECT_EQ(e.exit_code(), exit_code::db_too_new);
    EXPECT_NE(std::string(e.what()).find("schema version 3 is newer than this binary's 2 and needs"
                                         " readers of version 3 or later"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(classify(state, c, true, 2), DbError);
}

/// Readers and writers playing each version of \p older are refused a file of schema
/// \p version (whose min_reader_version is \p min_reader, 0: \p version) with a message naming
/// both versions.
void expect_older_binaries_refused(const SchemaState& state, const Connection& c, int version,
                                   std::initializer_list<int> older_versions, int min_reader = 0) {
  if (!min_reader) min_reader = version;
  for (int older : older_versions) {
    SCOPED_TRACE(older);
    try {
      classify(state, c, false, older, 3);
      FAIL() << "an older reader was let in";
    } catch (const DbError& e) {
      EXPECT_EQ(e.problem(), Problem::too_new);
      EXPECT_EQ(e.exit_code(), exit_code::db_too_new);
      EXPECT_NE(std::string(e.what()).find(fmt::format(
                    "schema version {} is newer than this binary's {} and needs readers of "
                    "version {} or later",
                    version, older, min_reader)),
                std::string::npos)
          << e.what();
    }
    try {
      classify(state, c, true, older, 3);
      FAIL() << "an older writer was let in";
    } catch (const DbError& e) {
      EXPECT_EQ(e.problem(), Problem::too_new);
      EXPECT_NE(std::string(e.what()).find(fmt::format(
                    "schema version {} is newer than this binary's {}; it is never written",
                    version, older)),
                std::string::npos)
          << e.what();
    }
  }
}

/// Since schema version 11 the schema takes any names: the row just written to \p table with SQL
/// (an operator with a type it is not defined for) must be named by the row validator, which
/// every reader and writer shares, as breaking the dtype/op rule; it is then removed.
void expect_validator_names_last_row(Connection& c, const std::string& table) {
  const std::int64_t id = c.last_insert_rowid();
  bool named = false;
  for (const RowFinding& f : validate_table(c, table))
    if (f.id == id && f.column == "dtype/op" && f.why.find(" is defined for ") != std::string::npos)
      named = true;
  EXPECT_TRUE(named) << table << " id " << id << " was not named";
  c.exec(fmt::format("DELETE FROM {} WHERE id = {}", table, id));
}

TEST(Migration, OlderBinariesAreRefusedAVersion11FileCleanly) {
  TempDir dir;
  // The version-11 writer's own file (tests/data/db/make_fixtures.sh).
  const auto path = test::copy_fixture("schema_v11.db", dir);
  Connection c = Connection::open(path, OpenMode::read_only);
  const SchemaState state = read_schema_state(c);
  EXPECT_EQ(state.user_version, 11);
  // Version 11 has no lists of operators and element types in its schema: a file may hold rows
  // of an operator a later binary added, which a version-10 (or older) reader would read as
  // something else; min_reader_version 11 keeps them out, for reading and writing. This binary
  // reads it as it is, and a writer migrates it.
  EXPECT_EQ(state.min_reader_version, 11);
  EXPECT_EQ(classify(state, c, false), SchemaAction::use);
  EXPECT_EQ(classify(state, c, true), SchemaAction::migrate);
  EXPECT_EQ(classify(state, c, false, 11, 11), SchemaAction::use);
  EXPECT_EQ(classify(state, c, true, 11, 11), SchemaAction::use);
  expect_older_binaries_refused(state, c, 11, {3, 4, 5, 6, 7, 8, 9, 10});
}

TEST(Migration, OlderBinariesAreRefusedAVersion12FileCleanly) {
  TempDir dir;
  // The version-12 writer's own file (tests/data/db/make_fixtures.sh).
  const auto path = test::copy_fixture("schema_v12.db", dir);
  Connection c = Connection::open(path, OpenMode::read_only);
  const SchemaState state = read_schema_state(c);
  EXPECT_EQ(state.user_version, 12);
  // Version 12 stores segmented measurements, whose n is the total of many segments: a
  // version-11 (or older) reader, blind to segment_size, would take them for whole-array
  // measurements of n elements; min_reader_version 12 keeps it out, for reading and writing.
  EXPECT_EQ(state.min_reader_version, 12);
  EXPECT_EQ(classify(state, c, false), SchemaAction::use);
  EXPECT_EQ(classify(state, c, true), SchemaAction::migrate);
  EXPECT_EQ(classify(state, c, false, 12, 12), SchemaAction::use);
  EXPECT_EQ(classify(state, c, true, 12, 12), SchemaAction::use);
  expect_older_binaries_refused(state, c, 12, {3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST(Migration, Version13IsReadByVersion12ReadersAndWrittenByNoOlderBinary) {
  TempDir dir;
  { Database::open_writer(dir / "tune.db").upsert_device(test::h100()); }
  Connection c = Connection::open(dir / "tune.db", OpenMode::read_only);
  const SchemaState state = read_schema_state(c);
  EXPECT_EQ(state.user_version, 13);
  // Version 13 only adds the table segmented_bench_results: a version-12 reader reads the file
  // without it (min_reader_version stays 12); a version-12 writer may not write it.
  EXPECT_EQ(state.min_reader_version, 12);
  EXPECT_EQ(classify(state, c, false), SchemaAction::use);
  EXPECT_EQ(classify(state, c, true), SchemaAction::use);
  EXPECT_EQ(classify(state, c, false, 12, 12), SchemaAction::use);
  try {
    classify(state, c, true, 12, 12);
    ADD_FAILURE() << "a version-12 writer was let in";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::too_new);
    EXPECT_NE(std::string(e.what()).find("never written"), std::string::npos) << e.what();
  }
  expect_older_binaries_refused(state, c, 13, {3, 4, 5, 6, 7, 8, 9, 10, 11}, 12);
}

TEST(Migration, OlderBinariesAreRefusedAVersion9FileCleanly) {
  TempDir dir;
  // A version-9 file as the version-9 writer left it (tests/data/db/make_fixtures.sh).
  const auto path = test::copy_fixture("schema_v9.db", dir);
  Connection c = Connection::open(path, OpenMode::read_only);
  const SchemaState state = read_schema_state(c);
  EXPECT_EQ(state.user_version, 9);
  // Version 9 admits the operators argmin and argmax, which a version-8 (or older) reader cannot
  // name (it would read them as sum): min_reader_version 9 keeps them out, while a version-9
  // binary reads and writes it.
  EXPECT_EQ(state.min_reader_version, 9);
  EXPECT_EQ(classify(state, c, false, 9, 3), SchemaAction::use);
  EXPECT_EQ(classify(state, c, true, 9, 3), SchemaAction::use);
  expect_older_binaries_refused(state, c, 9, {3, 4, 5, 6, 7, 8});
}

TEST(Migration, OlderBinariesAreRefusedAVersion8FileCleanly) {
  TempDir dir;
  // A version-8 file as the version-8 writer left it (tests/data/db/make_fixtures.sh).
  const auto path = test::copy_fixture("schema_v8.db", dir);
  Connection c = Connection::open(path, OpenMode::read_only);
  const SchemaState state = read_schema_state(c);
  EXPECT_EQ(state.user_version, 8);
  // Version 8 admits the element types f16 and bf16, which a version-7 (or older) reader cannot
  // name (it would read them as another type): min_reader_version 8 keeps them out, while a
  // version-8 binary reads and writes it.
  EXPECT_EQ(state.min_reader_version, 8);
  EXPECT_EQ(classify(state, c, false, 8, 3), SchemaAction::use);
  EXPECT_EQ(classify(state, c, true, 8, 3), SchemaAction::use);
  expect_older_binaries_refused(state, c, 8, {3, 4, 5, 6, 7});
}

TEST(Migration, OlderBinariesAreRefusedAVersion7FileCleanly) {
  TempDir dir;
  // A version-7 file as the version-7 writer left it (tests/data/db/make_fixtures.sh).
  const auto path = test::copy_fixture("schema_v7.db", dir);
  Connection c = Connection::open(path, OpenMode::read_only);
  const SchemaState state = read_schema_state(c);
  EXPECT_EQ(state.user_version, 7);
  // Version 7 admits the operator wide_sum, which a version-6 (or older) reader cannot name:
  // min_reader_version 7 keeps them out, while a version-7 binary reads and writes it.
  EXPECT_EQ(state.min_reader_version, 7);
  EXPECT_EQ(classify(state, c, false, 7, 3), SchemaAction::use);
  EXPECT_EQ(classify(state, c, true, 7, 3), SchemaAction::use);
  expect_older_binaries_refused(state, c, 7, {3, 4, 5, 6});
}

TEST(Migration, OlderBinariesAreRefusedAVersion6FileCleanly) {
  TempDir dir;
  // A version-6 file as the version-6 writer left it (tests/data/db/make_fixtures.sh).
  const auto path = test::copy_fixture("schema_v6.db", dir);
  Connection c = Connection::open(path, OpenMode::read_only);
  const SchemaState state = read_schema_state(c);
  EXPECT_EQ(state.user_version, 6);
  // Version 6 admits the operator exact_sum, which a version-5 (or older) reader cannot name:
  // min_reader_version 6 keeps them out, while a version-6 binary reads and writes it.
  EXPECT_EQ(state.min_reader_version, 6);
  EXPECT_EQ(classify(state, c, false, 6, 3), SchemaAction::use);
  EXPECT_EQ(classify(state, c, true, 6, 3), SchemaAction::use);
  expect_older_binaries_refused(state, c, 6, {3, 4, 5});
}

TEST(Migration, Version5IsReadAsItIsAndMigratedToTakeExactSums) {
  TempDir dir;
  // Written by the version-5 writer (tests/data/db/make_fixtures.sh): 40 f32 sum measurements.
  const auto path = test::copy_fixture("schema_v5.db", dir);
  const std::string before = test::read_file(path);
  {
    Database r = Database::open_reader(path);  // readers read it as it is
    EXPECT_EQ(r.file_schema_version(), 5);
    EXPECT_EQ(r.counts().measurements, 40);
  }
  EXPECT_EQ(test::read_file(path), before);
  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);  // 5 -> 6 -> ... -> 9 -> 10
  EXPECT_EQ(db.counts().measurements, 40);
  EXPECT_EQ(db.connection().query_text("PRAGMA quick_check"), "ok");
  EXPECT_EQ(db.connection().query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  // The migrated file has exactly the schema of a new one ...
  expect_the_schema_of_a_new_file(db, dir);
  // ... and takes exact_sum measurements and winners of f32 and f64, which version 5 refused.
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  for (DType t : {DType::f32, DType::f64}) {
    const std::string id = fmt::format("exact.b512.u2.single_pass.{}.exact_sum", dtype_name(t));
    Measurement m = test::measurement(run, dev, id, 1 << 20, 9.5, t, Op::exact_sum);
    m.params = {"exact", 512, 2, "none", "single_pass"};
    const auto mid = db.insert_measurement(m);
    ASSERT_TRUE(db.find_measurement(mid));
    EXPECT_EQ(db.find_measurement(mid)->op, Op::exact_sum);
    Winner w;
    w.dtype = t;
    w.op = Op::exact_sum;
    w.n_lo = 1;
    w.n_hi = std::uint64_t{1} << 30;
    w.kernel_id = id;
    w.measurement_id = mid;
    db.replace_winners(dev, t, Op::exact_sum, std::vector<Winner>{w});
  }
  EXPECT_EQ(db.counts().measurements, 42);
  const auto ws = db.winners();
  EXPECT_EQ(std::count_if(ws.begin(), ws.end(),
                          [](const WinnerRecord& w) { return w.op == Op::exact_sum; }),
            2);
  // An integer exact_sum written with SQL is named by the row validator (since version 11 the
  // schema has no lists of names).
  db.connection().exec(
      "INSERT INTO measurements (run_id, seq, device_id, kernel_id, family, block, unroll, "
      "smem, finish, dtype, op, n, l2_mode, outcome, median_us, repeats, measured_at) VALUES "
      "(1, 999, 1, 'exact.b512.u2.single_pass.i32.exact_sum', 'exact', 512, 2, 'none', "
      "'single_pass', 'i32', 'exact_sum', 1024, 'cold', 'ok', 1.0, 5, "
      "'2026-11-26T00:00:00.000Z')");
  expect_validator_names_last_row(db.connection(), "measurements");
  EXPECT_EQ(db.counts().measurements, 42);
}

// The constraints the migrations 5 -> 6, 6 -> 7, 7 -> 8, 8 -> 9 and 9 -> 10 change in
// measurements, winners and bench_results (db/schema.cpp), as a file of each version has them.
const std::string v6_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum') AND (op <> 'exact_sum' OR dtype IN "
    "('f32', 'f64')))";
const std::string v7_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum', 'wide_sum') AND (op <> 'exact_sum' OR "
    "dtype IN ('f32', 'f64')) AND (op <> 'wide_sum' OR dtype IN ('i32', 'u32', 'f32')))";
const std::string v8_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum', 'wide_sum') AND (op <> 'exact_sum' OR "
    "dtype IN ('f32', 'f64')) AND (op <> 'wide_sum' OR dtype IN ('i32', 'u32', 'f32', 'f16', "
    "'bf16')) AND (op = 'wide_sum' OR dtype NOT IN ('f16', 'bf16')))";
const std::string v9_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum', 'wide_sum', 'argmin', 'argmax') AND (op <> "
    "'exact_sum' OR dtype IN ('f32', 'f64')) AND (op <> 'wide_sum' OR dtype IN ('i32', 'u32', "
    "'f32', 'f16', 'bf16')) AND (op = 'wide_sum' OR dtype NOT IN ('f16', 'bf16')))";
const std::string v10_op_check =
    "CHECK (op IN ('sum', 'min', 'max', 'exact_sum', 'wide_sum', 'argmin', 'argmax') AND (op <> "
    "'exact_sum' OR dtype IN ('f32', 'f64', 'f16', 'bf16')) AND (op <> 'wide_sum' OR dtype IN "
    "('i32', 'u32', 'f32', 'f16', 'bf16')) AND (op IN ('wide_sum', 'exact_sum') OR dtype NOT IN "
    "('f16', 'bf16')))";
const std::string v7_dtype_check = "CHECK (dtype IN ('i32', 'u32', 'i64', 'u64', 'f32', 'f64'))";
const std::string v8_dtype_check =
    "CHECK (dtype IN ('i32', 'u32', 'i64', 'u64', 'f32', 'f64', 'f16', 'bf16'))";

/// The tables whose CREATE statement contains \p check, by name, separated by spaces.
std::string tables_with(Connection& c, const std::string& check) {
  Statement st = c.prepare(
      "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_schema WHERE type = "
      "'table' AND instr(sql, ?1) > 0 ORDER BY name)");
  st.bind(1, check);
  return st.step() && !st.is_null(0) ? st.column_text(0) : std::string();
}

/// The tables and columns a schema version added since the files these tests migrate (version
/// 12: segmented measurements and winners), which every_row leaves out when asked for the rows of
/// an older version: a migration adds them empty (NULL), and the tests say so apart.
struct Addition {
  int version;
  const char* table;
  const char* column;  // empty: the whole table
};
constexpr Addition additions[] = {{12, "measurements", "segment_size"},
                                  {12, "segmented_winners", ""},
                                  {13, "segmented_bench_results", ""}};

/// Every row of every table but meta, as SQL literals, sorted: equal before and after a
/// migration that keeps every row as it was. Without the additions of versions after
/// \p as_of_version.
std::string every_row(Connection& c, int as_of_version = schema_version) {
  std::string out;
  Statement tables = c.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE "
      "'\\' AND name <> 'meta' ORDER BY name");
  auto added = [&](const std::string& table, const std::string& column) {
    for (const Addition& a : additions)
      if (a.version > as_of_version && table == a.table && column == a.column) return true;
    return false;
  };
  while (tables.step()) {
    const std::string table = tables.column_text(0);
    if (added(table, "")) continue;
    std::string skipped_columns;
    for (const Addition& a : additions)
      if (a.version > as_of_version && table == a.table && *a.column)
        skipped_columns += std::string(skipped_columns.empty() ? "" : ", ") + "'" + a.column + "'";
    Statement cols = c.prepare(
        "SELECT group_concat('quote(' || name || ')', ' || '','' || ') FROM "
        "pragma_table_info(?1) WHERE name NOT IN (" +
        (skipped_columns.empty() ? std::string("''") : skipped_columns) + ")");
    cols.bind(1, table);
    EXPECT_TRUE(cols.step());
    // Names read from the file's own schema, never input.
    Statement rows = c.prepare(
        fmt::format("SELECT group_concat(r, char(10)) FROM (SELECT {} AS r FROM \"{}\" ORDER BY r)",
                    cols.column_text(0), table));
    EXPECT_TRUE(rows.step());
    out += table + ":\n" + (rows.is_null(0) ? std::string() : rows.column_text(0)) + "\n";
  }
  return out;
}

/// Writes a row of each (dtype, op) into measurements, winners and bench_results with SQL, past
/// the writers (which refuse a pair op_applies refuses before SQL does): the schema's CHECK
/// constraints must take exactly the pairs op_applies takes, and refuse the others themselves.
void expect_checks_match_op_applies(Database& db) {
  Connection& c = db.connection();
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  const auto bench_run = lab_bench_run(db, dev);
  // Since schema version 11 SQL takes any names: the row validator (db/row_rules.hpp), which
  // every writer, import, merge, check and the snapshot loader share, refuses the pairs
  // op_applies refuses. Each pair is written with SQL, checked, and a refused one removed again.
  const auto written = [](Statement& st) {
    st.run();
    return true;
  };
  std::vector<std::string> refused_rows;  // "table id"
  const std::int64_t rows_before = c.query_int(
      "SELECT (SELECT count(*) FROM measurements) + (SELECT count(*) FROM winners) + "
      "(SELECT count(*) FROM bench_results)");
  const auto half_rows = [&](const char* also) {
    return c.query_int(fmt::format(
        "SELECT (SELECT count(*) FROM measurements WHERE dtype IN ('f16', 'bf16') {0}) + (SELECT "
        "count(*) FROM winners WHERE dtype IN ('f16', 'bf16') {0}) + (SELECT count(*) FROM "
        "bench_results WHERE dtype IN ('f16', 'bf16') {0})",
        also));
  };
  const std::int64_t half_rows_before = half_rows("");
  const std::int64_t half_rows_before_exact = half_rows("AND op = 'exact_sum'");
  const auto arg_rows = [&] {
    return c.query_int(
        "SELECT (SELECT count(*) FROM measurements WHERE op IN ('argmin', 'argmax')) + (SELECT "
        "count(*) FROM winners WHERE op IN ('argmin', 'argmax')) + (SELECT count(*) FROM "
        "bench_results WHERE op IN ('argmin', 'argmax'))");
  };
  const std::int64_t arg_rows_before = arg_rows();
  int seq = 0, taken = 0;
  for (DType t : all_dtypes)
    for (Op o : all_ops) {
      SCOPED_TRACE(fmt::format("{} {}", dtype_name(t), op_name(o)));
      const std::string id =
          fmt::format("vectorized.b256.u4.single_pass.{}.{}", dtype_name(t), op_name(o));
      Statement m = c.prepare(
          "INSERT INTO measurements (run_id, seq, device_id, kernel_id, family, block, unroll, "
          "smem, finish, dtype, op, n, l2_mode, outcome, median_us, repeats, measured_at) VALUES "
          "(?1, ?2, ?3, ?4, 'vectorized', 256, 4, 'none', 'single_pass', ?5, ?6, 1024, 'cold', "
          "'ok', 1.0, 5, '2026-11-26T00:00:00.000Z')");
      m.bind_all(run, ++seq, dev, id, dtype_name(t), op_name(o));
      written(m);
      if (!op_applies(t, o))
        refused_rows.push_back(fmt::format("measurements id {}", c.last_insert_rowid()));
      Statement w = c.prepare(
          "INSERT INTO winners (device_id, dtype, op, l2_mode, n_lo, n_hi, kernel_id, "
          "measurement_id, driver_version, runtime_version) SELECT ?1, ?2, ?3, 'cold', "
          "1099511627776, 1099511628800, ?4, max(id), 13000, 13000 FROM measurements");
      w.bind_all(dev, dtype_name(t), op_name(o), id);
      written(w);
      if (!op_applies(t, o))
        refused_rows.push_back(fmt::format("winners id {}", c.last_insert_rowid()));
      Statement b = c.prepare(
          "INSERT INTO bench_results (bench_run_id, dtype, op, n, method, verified, median_us, "
          "repeats, measured_at) VALUES (?1, ?2, ?3, 1024, 'cub', 1, 1.0, 5, "
          "'2026-11-26T00:00:00.000Z')");
      b.bind_all(bench_run, dtype_name(t), op_name(o));
      written(b);
      if (!op_applies(t, o))
        refused_rows.push_back(fmt::format("bench_results id {}", c.last_insert_rowid()));
      taken += op_applies(t, o) ? 3 : 0;
    }
  // The validator names exactly the rows of the pairs op_applies refuses, and why.
  std::vector<std::string> named;
  for (const RowFinding& f : validate_rows(c))
    if (f.column == "dtype/op") {
      named.push_back(f.table + " " + f.row);
      EXPECT_NE(f.why.find(" is defined for "), std::string::npos) << f.text();
    }
  std::sort(named.begin(), named.end());
  std::sort(refused_rows.begin(), refused_rows.end());
  EXPECT_EQ(named, refused_rows);
  for (const bool measurements : {false, true})  // the winners before their evidence
    for (const std::string& r : refused_rows) {
      const auto space = r.find(' ');
      if ((r.substr(0, space) == "measurements") == measurements)
        c.exec(
            fmt::format("DELETE FROM {} WHERE id = {}", r.substr(0, space), r.substr(space + 4)));
    }
  EXPECT_EQ(c.query_int("SELECT (SELECT count(*) FROM measurements) + (SELECT count(*) FROM "
                        "winners) + (SELECT count(*) FROM bench_results)"),
            rows_before + taken);
  // Of the half types, wide_sum's, (version 10) exact_sum's and absmax's rows alone: one more
  // of each type and operator in each table.
  EXPECT_EQ(half_rows(""), half_rows_before + 18);
  EXPECT_EQ(half_rows("AND op = 'exact_sum'"), half_rows_before_exact + 6);
  EXPECT_EQ(half_rows("AND op NOT IN ('wide_sum', 'exact_sum', 'absmax')"), 0);
  // argmin and argmax (version 9) of the six other types: 2 x 6 more rows in each table.
  EXPECT_EQ(arg_rows(), arg_rows_before + 36);
}

TEST(Migration, Version6IsReadAsItIsAndMigratedToTakeWideSums) {
  TempDir dir;
  // Made by tests/data/db/make_fixtures.sh from a current file with version 6's operator
  // constraint put back: 40 f32 sum measurements.
  const auto path = test::copy_fixture("schema_v6.db", dir);
  const std::string before = test::read_file(path);
  {
    Database r = Database::open_reader(path);  // readers read it as it is
    EXPECT_EQ(r.file_schema_version(), 6);
    EXPECT_EQ(r.counts().measurements, 40);
    EXPECT_EQ(tables_with(r.connection(), v6_op_check), "bench_results measurements winners");
    EXPECT_EQ(tables_with(r.connection(), v7_op_check), "");
  }
  EXPECT_EQ(test::read_file(path), before);
  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);  // 6 -> 7 -> ... -> 9 -> 10
  EXPECT_EQ(db.counts().measurements, 40);
  EXPECT_EQ(db.connection().query_text("PRAGMA quick_check"), "ok");
  EXPECT_EQ(db.connection().query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  // The constraint changed in all three tables (through version 7's to 9's to version 10's), and
  // nowhere else ...
  // Version 11 then dropped it, and the dtype list, from all three tables: the row validator
  // checks the names.
  EXPECT_EQ(tables_with(db.connection(), v10_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v8_dtype_check), "");
  EXPECT_EQ(tables_with(db.connection(), v6_op_check), "");
  // ... so the migrated file has exactly the schema of a new one ...
  expect_the_schema_of_a_new_file(db, dir);
  // ... and takes wide_sum measurements, winners and bench results of i32, u32 and f32, which
  // version 6 refused. The dtype stored is the input's, not the wider result's.
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  const auto bench_run = lab_bench_run(db, dev);
  for (DType t : {DType::i32, DType::u32, DType::f32}) {
    write_key_rows(db, run, dev, bench_run, t, Op::wide_sum, 9.5);
  }
  EXPECT_EQ(db.counts().measurements, 43);
  const auto ws = db.winners();
  EXPECT_EQ(std::count_if(ws.begin(), ws.end(),
                          [](const WinnerRecord& w) { return w.op == Op::wide_sum; }),
            3);
  EXPECT_EQ(bench_results(db).size(), 3u);
  // The schema itself takes a wide_sum row of i32 and refuses one of f64, whoever writes it.
  const auto insert = [&](const char* dtype, int seq) {
    Statement st = db.connection().prepare(
        "INSERT INTO measurements (run_id, seq, device_id, kernel_id, family, block, unroll, "
        "smem, finish, dtype, op, n, l2_mode, outcome, median_us, repeats, measured_at) VALUES "
        "(?1, ?2, ?3, 'vectorized.b256.u4.single_pass.' || ?4 || '.wide_sum', 'vectorized', 256, "
        "4, 'none', 'single_pass', ?4, 'wide_sum', 1024, 'cold', 'ok', 1.0, 5, "
        "'2026-11-26T00:00:00.000Z')");
    st.bind_all(run, seq, dev, dtype);
    st.run();
  };
  insert("i32", 998);
  EXPECT_EQ(db.counts().measurements, 44);
  for (const char* t : {"f64", "i64", "u64"}) {
    SCOPED_TRACE(t);
    insert(t, 999);
    expect_validator_names_last_row(db.connection(), "measurements");
  }
  EXPECT_EQ(db.counts().measurements, 44);
}

TEST(Migration, Version7IsReadAsItIsAndMigratedToTakeHalfTypes) {
  TempDir dir;
  // Made by tests/data/db/make_fixtures.sh from a current file with version 7's constraints put
  // back (its schema is a version-7 writer's): 40 f32 sum measurements, and rows of version 7's
  // operator in each table the migration changes (an i32 wide_sum measurement, the winner it is
  // the evidence of, an f32 wide_sum bench result), which the new constraints must take.
  const auto path = test::copy_fixture("schema_v7.db", dir);
  const std::string before = test::read_file(path);
  std::string rows;
  {
    Database r = Database::open_reader(path);  // readers read it as it is
    EXPECT_EQ(r.file_schema_version(), 7);
    EXPECT_EQ(r.counts().measurements, 41);
    EXPECT_EQ(r.counts().winners, 1);
    EXPECT_EQ(bench_results(r).size(), 1u);
    EXPECT_EQ(tables_with(r.connection(), v7_dtype_check), "bench_results measurements winners");
    EXPECT_EQ(tables_with(r.connection(), v7_op_check), "bench_results measurements winners");
    EXPECT_EQ(tables_with(r.connection(), v8_dtype_check), "");
    EXPECT_EQ(tables_with(r.connection(), v8_op_check), "");
    rows = every_row(r.connection(), 11);
  }
  EXPECT_EQ(test::read_file(path), before);
  {
    // Version 7's constraints refuse a half type, even for wide_sum.
    const auto copy = dir / "v7.db";
    fs::copy_file(path, copy);
    Connection c = Connection::open(copy, OpenMode::read_write);
    EXPECT_THROW(c.exec("UPDATE measurements SET dtype = 'f16', kernel_id = "
                        "'vectorized.b256.u4.single_pass.f16.wide_sum' WHERE op = 'wide_sum'"),
                 DbError);
  }
  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);  // 7 -> 8 -> 9 -> 10
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  // Every row is kept as it was, and the file is sound: integrity_check (which checks every
  // row against the new constraints), the foreign keys, and `db check` in full.
  EXPECT_EQ(every_row(db.connection(), 11), rows);
  EXPECT_EQ(db.connection().query_text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(db.connection().query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  const CheckReport check = check_database(db,
                                           {"warp_shuffle.b256.u1.two_pass.f32.sum",
                                            "vectorized.b256.u4.single_pass.i32.wide_sum"},
                                           true);
  EXPECT_TRUE(check.ok()) << check.integrity.front();
  EXPECT_EQ(check.schema_version, schema_version);
  // Both constraints changed in all three tables (the operator's through version 8's and 9's to
  // version 10's), and nowhere else ...
  EXPECT_EQ(tables_with(db.connection(), v8_dtype_check), "");
  // Version 11 then dropped it, and the dtype list, from all three tables: the row validator
  // checks the names.
  EXPECT_EQ(tables_with(db.connection(), v10_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v8_dtype_check), "");
  EXPECT_EQ(tables_with(db.connection(), v7_dtype_check), "");
  EXPECT_EQ(tables_with(db.connection(), v7_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v8_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v9_op_check), "");
  // ... so the migrated file has exactly the schema of a new one ...
  expect_the_schema_of_a_new_file(db, dir);
  // ... and takes wide_sum measurements, winners and bench results of f16 and bf16, which
  // version 7 refused, through the writers.
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  const auto bench_run = lab_bench_run(db, dev);
  for (DType t : {DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    write_key_rows(db, run, dev, bench_run, t, Op::wide_sum, 4.5);
  }
  EXPECT_EQ(db.counts().measurements, 43);
  const auto ws = db.winners();
  for (DType t : {DType::f16, DType::bf16})
    EXPECT_EQ(std::count_if(ws.begin(), ws.end(),
                            [&](const WinnerRecord& w) {
                              return w.dtype == t && w.op == Op::wide_sum;
                            }),
              1);
  const auto bs = bench_results(db);
  EXPECT_EQ(std::count_if(bs.begin(), bs.end(),
                          [](const BenchResultRecord& b) { return is_half(b.dtype); }),
            2);
  // The runtime library's snapshot reads them back under their own types.
  const Snapshot snap = load_snapshot(path, test::h100());
  EXPECT_FALSE(snap.problem) << snap.message;
  for (DType t : {DType::f16, DType::bf16}) {
    const auto* e = snap.exact[L2Mode::cold].find(t, Op::wide_sum, 1 << 20);
    ASSERT_NE(e, nullptr) << dtype_name(t);
    EXPECT_EQ(e->kernel_id,
              fmt::format("vectorized.b256.u4.single_pass.{}.wide_sum", dtype_name(t)));
  }
  // The constraints take exactly the pairs op_applies takes: f16 and bf16 for wide_sum and
  // (version 10) exact_sum alone.
  expect_checks_match_op_applies(db);
}

TEST(Migration, Version7WithoutVersion7sConstraintsIsRefusedAndLeftAsItWas) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v7.db", dir);
  {
    // One table's dtype constraint is not version 7's (a file some other tool rewrote).
    Connection c = Connection::open(path, OpenMode::read_write);
    c.exec("PRAGMA writable_schema = ON");
    c.exec(
        "UPDATE sqlite_schema SET sql = replace(sql, 'CHECK (dtype IN (''i32'', ''u32'', "
        "''i64'', ''u64'', ''f32'', ''f64''))', 'CHECK (dtype IN (''i32'', ''u32'', ''i64'', "
        "''u64'', ''f64'', ''f32''))') WHERE name = 'bench_results'");
    c.exec("PRAGMA writable_schema = OFF");
  }
  try {
    Database::open_writer(path);
    FAIL() << "migrated a file without version 7's constraints";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "cannot migrate to schema version 8: 2 of the tables measurements, winners and "
                  "bench_results have version 7's element type constraint, not 3"),
              std::string::npos)
        << e.what();
  }
  Connection c = Connection::open(path, OpenMode::read_only);
  EXPECT_EQ(c.query_int("PRAGMA user_version"), 7);  // the whole migration rolled back
  EXPECT_EQ(tables_with(c, v7_dtype_check), "measurements winners");
  EXPECT_EQ(tables_with(c, v7_op_check), "bench_results measurements winners");
  EXPECT_EQ(tables_with(c, v8_dtype_check), "");
  EXPECT_EQ(c.query_int("SELECT count(*) FROM measurements"), 41);
}

TEST(Migration, Version8IsReadAsItIsAndMigratedToTakeArgminAndArgmax) {
  TempDir dir;
  // Made by tests/data/db/make_fixtures.sh from a current file with version 8's operator
  // constraint put back (its schema is exactly a version-8 writer's): 40 f32 sum measurements,
  // and rows of version 8's element types in each table the migration changes (an f16 wide_sum
  // measurement, the winner it is the evidence of, a bf16 wide_sum bench result), which the new
  // constraint must take.
  const auto path = test::copy_fixture("schema_v8.db", dir);
  const std::string before = test::read_file(path);
  std::string rows;
  {
    Database r = Database::open_reader(path);  // readers read it as it is
    EXPECT_EQ(r.file_schema_version(), 8);
    EXPECT_EQ(r.counts().measurements, 41);
    EXPECT_EQ(r.counts().winners, 1);
    EXPECT_EQ(bench_results(r).size(), 1u);
    EXPECT_EQ(tables_with(r.connection(), v8_dtype_check), "bench_results measurements winners");
    EXPECT_EQ(tables_with(r.connection(), v8_op_check), "bench_results measurements winners");
    EXPECT_EQ(tables_with(r.connection(), v9_op_check), "");
    rows = every_row(r.connection(), 11);
  }
  EXPECT_EQ(test::read_file(path), before);
  {
    // Version 8's constraint refuses argmin and argmax, even for i32.
    const auto copy = dir / "v8.db";
    fs::copy_file(path, copy);
    Connection c = Connection::open(copy, OpenMode::read_write);
    EXPECT_THROW(c.exec("UPDATE measurements SET op = 'argmin', kernel_id = "
                        "'vectorized.b256.u4.single_pass.f32.argmin' WHERE id = 1"),
                 DbError);
    EXPECT_THROW(c.exec("UPDATE bench_results SET dtype = 'i32', op = 'argmax'"), DbError);
  }
  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);  // 8 -> 9 -> 10
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  // Every row is kept as it was, and the file is sound: integrity_check (which checks every
  // row against the new constraint), the foreign keys, and `db check` in full.
  EXPECT_EQ(every_row(db.connection(), 11), rows);
  EXPECT_EQ(db.connection().query_text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(db.connection().query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  const CheckReport check = check_database(db,
                                           {"warp_shuffle.b256.u1.two_pass.f32.sum",
                                            "vectorized.b256.u4.single_pass.f16.wide_sum"},
                                           true);
  EXPECT_TRUE(check.ok()) << check.integrity.front();
  EXPECT_EQ(check.schema_version, schema_version);
  // The operator constraint changed in all three tables (through version 9's to version 10's),
  // the element type's did not ...
  // Version 11 then dropped it, and the dtype list, from all three tables: the row validator
  // checks the names.
  EXPECT_EQ(tables_with(db.connection(), v10_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v8_dtype_check), "");
  EXPECT_EQ(tables_with(db.connection(), v9_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v8_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v8_dtype_check), "");
  // ... so the migrated file has exactly the schema of a new one ...
  expect_the_schema_of_a_new_file(db, dir);
  // ... and takes argmin and argmax measurements, winners and bench results of i32 and f64,
  // which version 8 refused, through the writers. The dtype stored is the element type (the
  // result is an IndexedValue of it).
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  const auto bench_run = lab_bench_run(db, dev);
  for (DType t : {DType::i32, DType::f64})
    for (Op op : {Op::argmin, Op::argmax}) {
      SCOPED_TRACE(fmt::format("{} {}", dtype_name(t), op_name(op)));
      write_key_rows(db, run, dev, bench_run, t, op, 5.5);
    }
  EXPECT_EQ(db.counts().measurements, 45);
  const auto ws = db.winners();
  EXPECT_EQ(std::count_if(ws.begin(), ws.end(),
                          [](const WinnerRecord& w) { return is_arg_op(w.op); }),
            4);
  const auto bs = bench_results(db);
  EXPECT_EQ(std::count_if(bs.begin(), bs.end(),
                          [](const BenchResultRecord& b) { return is_arg_op(b.op); }),
            4);
  // The runtime library's snapshot reads them back under their own operators.
  const Snapshot snap = load_snapshot(path, test::h100());
  EXPECT_FALSE(snap.problem) << snap.message;
  for (DType t : {DType::i32, DType::f64})
    for (Op op : {Op::argmin, Op::argmax}) {
      const auto* e = snap.exact[L2Mode::cold].find(t, op, 1 << 20);
      ASSERT_NE(e, nullptr) << dtype_name(t) << " " << op_name(op);
      EXPECT_EQ(e->kernel_id,
                fmt::format("vectorized.b256.u4.single_pass.{}.{}", dtype_name(t), op_name(op)));
    }
  // An argmin or argmax of a half type is refused, by the writers with a message that names
  // the pair and the types the operator is defined for, and by the schema itself.
  for (DType t : {DType::f16, DType::bf16})
    for (Op op : {Op::argmin, Op::argmax}) {
      SCOPED_TRACE(fmt::format("{} {}", dtype_name(t), op_name(op)));
      const std::string id =
          fmt::format("vectorized.b256.u4.single_pass.{}.{}", dtype_name(t), op_name(op));
      try {
        db.insert_measurement(test::measurement(run, dev, id, 1 << 20, 5.5, t, op));
        ADD_FAILURE() << "the writer took it";
      } catch (const DbError& e) {
        EXPECT_EQ(e.problem(), Problem::invalid_data) << e.what();
        EXPECT_NE(std::string(e.what()).find(fmt::format(
                      "the operator '{}' is defined for i32, u32, i64, u64, f32 and f64 only, "
                      "not for {}",
                      op_name(op), dtype_name(t))),
                  std::string::npos)
            << e.what();
      }
      Statement st = db.connection().prepare(
          "INSERT INTO bench_results (bench_run_id, dtype, op, n, method, verified, median_us, "
          "repeats, measured_at) VALUES (?1, ?2, ?3, 1024, 'cub', 1, 1.0, 5, "
          "'2026-11-26T00:00:00.000Z')");
      st.bind_all(bench_run, dtype_name(t), op_name(op));
      st.run();
      expect_validator_names_last_row(db.connection(), "bench_results");
    }
  EXPECT_EQ(db.counts().measurements, 45);
  EXPECT_EQ(bench_results(db).size(), 5u);
  // The constraints take exactly the pairs op_applies takes: argmin and argmax for the six 4- and
  // 8-byte types alone.
  expect_checks_match_op_applies(db);
}

TEST(Migration, Version8WithoutVersion8sConstraintIsRefusedAndLeftAsItWas) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v8.db", dir);
  {
    // One table's operator constraint is not version 8's (a file some other tool rewrote).
    Connection c = Connection::open(path, OpenMode::read_write);
    c.exec("PRAGMA writable_schema = ON");
    c.exec(
        "UPDATE sqlite_schema SET sql = replace(sql, '(op = ''wide_sum'' OR dtype NOT IN "
        "(''f16'', ''bf16''))', '(op = ''wide_sum'' OR dtype NOT IN (''bf16'', ''f16''))') WHERE "
        "name = 'winners'");
    c.exec("PRAGMA writable_schema = OFF");
  }
  try {
    Database::open_writer(path);
    FAIL() << "migrated a file without version 8's constraint";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "cannot migrate to schema version 9: 2 of the tables measurements, winners and "
                  "bench_results have version 8's operator constraint, not 3"),
              std::string::npos)
        << e.what();
  }
  Connection c = Connection::open(path, OpenMode::read_only);
  EXPECT_EQ(c.query_int("PRAGMA user_version"), 8);  // the whole migration rolled back
  EXPECT_EQ(tables_with(c, v8_op_check), "bench_results measurements");
  EXPECT_EQ(tables_with(c, v9_op_check), "");
  EXPECT_EQ(c.query_int("SELECT count(*) FROM measurements"), 41);
}

TEST(Migration, Version9IsReadAsItIsAndMigratedToTakeExactSumsOfHalfTypes) {
  TempDir dir;
  // Made by tests/data/db/make_fixtures.sh from a current file with version 9's operator
  // constraint put back (its schema is exactly a version-9 writer's): 40 f32 sum measurements,
  // and rows of version 9's operators in each table the migration changes (an i32 argmin
  // measurement, the winner it is the evidence of, an f64 argmin bench result), which the new
  // constraint must take.
  const auto path = test::copy_fixture("schema_v9.db", dir);
  const std::string before = test::read_file(path);
  std::string rows;
  {
    Database r = Database::open_reader(path);  // readers read it as it is
    EXPECT_EQ(r.file_schema_version(), 9);
    EXPECT_EQ(r.counts().measurements, 41);
    EXPECT_EQ(r.counts().winners, 1);
    EXPECT_EQ(bench_results(r).size(), 1u);
    const auto ms = r.measurements();
    EXPECT_EQ(std::count_if(ms.begin(), ms.end(),
                            [](const auto& m) {
                              return m.dtype == DType::i32 && m.op == Op::argmin;
                            }),
              1);
    EXPECT_EQ(r.winners().at(0).op, Op::argmin);
    EXPECT_EQ(bench_results(r).at(0).dtype, DType::f64);
    EXPECT_EQ(tables_with(r.connection(), v8_dtype_check), "bench_results measurements winners");
    EXPECT_EQ(tables_with(r.connection(), v9_op_check), "bench_results measurements winners");
    EXPECT_EQ(tables_with(r.connection(), v10_op_check), "");
    rows = every_row(r.connection(), 11);
  }
  EXPECT_EQ(test::read_file(path), before);
  {
    // Version 9's constraint refuses exact_sum of a half type.
    const auto copy = dir / "v9.db";
    fs::copy_file(path, copy);
    Connection c = Connection::open(copy, OpenMode::read_write);
    EXPECT_THROW(c.exec("UPDATE measurements SET dtype = 'f16', op = 'exact_sum', kernel_id = "
                        "'exact.b512.u2.single_pass.f16.exact_sum' WHERE id = 1"),
                 DbError);
    EXPECT_THROW(c.exec("UPDATE bench_results SET dtype = 'bf16', op = 'exact_sum'"), DbError);
  }
  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);  // 9 -> 10
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  // Every row is kept as it was, and the file is sound: integrity_check (which checks every
  // row against the new constraint), the foreign keys, and `db check` in full.
  EXPECT_EQ(every_row(db.connection(), 11), rows);
  EXPECT_EQ(db.connection().query_text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(db.connection().query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  const CheckReport check = check_database(db,
                                           {"warp_shuffle.b256.u1.two_pass.f32.sum",
                                            "vectorized.b256.u4.single_pass.i32.argmin"},
                                           true);
  EXPECT_TRUE(check.ok()) << check.integrity.front();
  EXPECT_EQ(check.schema_version, schema_version);
  // The operator constraint changed in all three tables, the element type's did not ...
  // Version 11 then dropped it, and the dtype list, from all three tables: the row validator
  // checks the names.
  EXPECT_EQ(tables_with(db.connection(), v10_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v8_dtype_check), "");
  EXPECT_EQ(tables_with(db.connection(), v9_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v8_dtype_check), "");
  // ... so the migrated file has exactly the schema of a new one ...
  expect_the_schema_of_a_new_file(db, dir);
  // ... and takes exact_sum measurements, winners and bench results of f16 and bf16, which
  // version 9 refused, through the writers. The dtype stored is the element type, not the
  // float the sum is rounded to.
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  const auto bench_run = lab_bench_run(db, dev);
  for (DType t : {DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    write_key_rows(db, run, dev, bench_run, t, Op::exact_sum, 6.5);
  }
  EXPECT_EQ(db.counts().measurements, 43);
  const auto ws = db.winners();
  for (DType t : {DType::f16, DType::bf16})
    EXPECT_EQ(std::count_if(ws.begin(), ws.end(),
                            [&](const WinnerRecord& w) {
                              return w.dtype == t && w.op == Op::exact_sum;
                            }),
              1);
  const auto bs = bench_results(db);
  EXPECT_EQ(std::count_if(bs.begin(), bs.end(),
                          [](const BenchResultRecord& b) {
                            return is_half(b.dtype) && b.op == Op::exact_sum;
                          }),
            2);
  // The runtime library's snapshot reads them back under their own type and operator.
  const Snapshot snap = load_snapshot(path, test::h100());
  EXPECT_FALSE(snap.problem) << snap.message;
  for (DType t : {DType::f16, DType::bf16}) {
    const auto* e = snap.exact[L2Mode::cold].find(t, Op::exact_sum, 1 << 20);
    ASSERT_NE(e, nullptr) << dtype_name(t);
    EXPECT_EQ(e->kernel_id,
              fmt::format("vectorized.b256.u4.single_pass.{}.exact_sum", dtype_name(t)));
  }
  // An exact_sum of an integer type is still refused, by the writers with a message that names
  // the pair and the types exact_sum is defined for, and by the schema itself; so are the half
  // types with every operator but wide_sum and exact_sum (by the schema here; the writers'
  // refusal is Database.AnOperatorIsRefusedWithATypeItIsNotDefinedFor's).
  const auto schema_refuses = [&](DType t, Op op) {
    SCOPED_TRACE(fmt::format("{} {}", dtype_name(t), op_name(op)));
    Statement st = db.connection().prepare(
        "INSERT INTO bench_results (bench_run_id, dtype, op, n, method, verified, median_us, "
        "repeats, measured_at) VALUES (?1, ?2, ?3, 1024, 'cub', 1, 1.0, 5, "
        "'2026-11-26T00:00:00.000Z')");
    st.bind_all(bench_run, dtype_name(t), op_name(op));
    st.run();
    expect_validator_names_last_row(db.connection(), "bench_results");
  };
  for (DType t : {DType::i32, DType::u32, DType::i64, DType::u64}) {
    SCOPED_TRACE(dtype_name(t));
    const std::string id = fmt::format("exact.b512.u2.single_pass.{}.exact_sum", dtype_name(t));
    try {
      db.insert_measurement(test::measurement(run, dev, id, 1 << 20, 6.5, t, Op::exact_sum));
      ADD_FAILURE() << "the writer took it";
    } catch (const DbError& e) {
      EXPECT_EQ(e.problem(), Problem::invalid_data) << e.what();
      EXPECT_NE(std::string(e.what()).find(fmt::format(
                    "the operator 'exact_sum' is defined for f32, f64, f16 and bf16 only, not "
                    "for {}",
                    dtype_name(t))),
                std::string::npos)
          << e.what();
    }
    schema_refuses(t, Op::exact_sum);
  }
  for (DType t : {DType::f16, DType::bf16})
    for (Op op : {Op::sum, Op::min, Op::max, Op::argmin, Op::argmax}) schema_refuses(t, op);
  EXPECT_EQ(db.counts().measurements, 43);
  EXPECT_EQ(bench_results(db).size(), 3u);
  // The constraints take exactly the pairs op_applies takes: exact_sum for f32, f64, f16 and
  // bf16 alone, and the half types for wide_sum and exact_sum alone.
  expect_checks_match_op_applies(db);
}

TEST(Migration, Version9WithoutVersion9sConstraintIsRefusedAndLeftAsItWas) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v9.db", dir);
  {
    // One table's operator constraint is not version 9's (a file some other tool rewrote).
    Connection c = Connection::open(path, OpenMode::read_write);
    c.exec("PRAGMA writable_schema = ON");
    c.exec(
        "UPDATE sqlite_schema SET sql = replace(sql, '(op <> ''exact_sum'' OR dtype IN (''f32'', "
        "''f64''))', '(op <> ''exact_sum'' OR dtype IN (''f64'', ''f32''))') WHERE name = "
        "'measurements'");
    c.exec("PRAGMA writable_schema = OFF");
  }
  try {
    Database::open_writer(path);
    FAIL() << "migrated a file without version 9's constraint";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "cannot migrate to schema version 10: 2 of the tables measurements, winners and "
                  "bench_results have version 9's operator constraint, not 3"),
              std::string::npos)
        << e.what();
  }
  Connection c = Connection::open(path, OpenMode::read_only);
  EXPECT_EQ(c.query_int("PRAGMA user_version"), 9);  // the whole migration rolled back
  EXPECT_EQ(tables_with(c, v9_op_check), "bench_results winners");
  EXPECT_EQ(tables_with(c, v10_op_check), "");
  EXPECT_EQ(c.query_int("SELECT count(*) FROM measurements"), 41);
}

// The version-10 writer's own file: read as it is (readers never migrate), migrated once by a
// writer to version 11 (and on to this binary's) with every row kept and both lists gone from all
// three tables; then a row of a name this binary does not know, written with SQL (as a later
// binary's operator would be), is no CHECK failure but a row the validator names, which every
// reader skips by name.
TEST(Migration, Version12IsMigratedToTakeSegmentedBenchResults) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v12.db", dir);
  std::string rows_before;
  {
    Connection c = Connection::open(path, OpenMode::read_only);
    rows_before = every_row(c, 12);
  }
  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);
  EXPECT_EQ(every_row(db.connection(), 12), rows_before);
  EXPECT_TRUE(segmented_bench_results(db).empty());
  EXPECT_EQ(db.connection().query_int("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            12);
}

TEST(Migration, Version10IsReadAsItIsAndMigratedToNoListsOfNames) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v10.db", dir);
  const std::string before = test::read_file(path);
  {
    Database r = Database::open_reader(path);
    EXPECT_EQ(r.file_schema_version(), 10);
    EXPECT_EQ(r.counts().measurements, 40);
    EXPECT_EQ(tables_with(r.connection(), v10_op_check), "bench_results measurements winners");
    EXPECT_EQ(tables_with(r.connection(), v8_dtype_check), "bench_results measurements winners");
    EXPECT_TRUE(
        check_database(r, {"vectorized.b256.u4.two_pass.f32.sum"}, false).row_findings.empty());
  }
  EXPECT_EQ(test::read_file(path), before);
  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);
  EXPECT_EQ(db.counts().measurements, 40);
  EXPECT_EQ(db.connection().query_text("PRAGMA quick_check"), "ok");
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  EXPECT_EQ(tables_with(db.connection(), v10_op_check), "");
  EXPECT_EQ(tables_with(db.connection(), v8_dtype_check), "");
  expect_the_schema_of_a_new_file(db, dir);
  db.connection().exec(
      "INSERT INTO measurements (run_id, seq, device_id, kernel_id, family, block, unroll, smem,"
      " finish, dtype, op, n, l2_mode, outcome, median_us, repeats, measured_at) SELECT run_id,"
      " 1000, device_id, 'vectorized.b256.u4.single_pass.f32.absmin', 'vectorized', 256, 4,"
      " 'none', 'single_pass', 'f32', 'absmin', 1024, 'cold', 'ok', 1.0, 5,"
      " '2026-11-28T00:00:00.000Z' FROM measurements LIMIT 1");
  const auto findings = validate_rows(db.connection());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].text(),
            "measurements id 41: op = 'absmin': is not an operator of this binary (" +
                op_choices() + ")");
  EXPECT_EQ(db.measurements().size(), 40u);  // skipped by name, never read as 'sum'
}

// Concurrent `db migrate` runs all printed that they migrated: what each open did is decided in
// its own BEGIN IMMEDIATE transaction, so one migrates and the others find the file current.
// `report best` on a file whose runs.host is 10 MB took 11 GB: a reader reads each text up to its
// limit (db/row_rules.hpp), and the row validator names the row.
TEST(Database, ReadersReadEachTextUpToItsLimitOnly) {
  TempDir dir;
  Database db = Database::open_writer(dir / "tune.db");
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  db.insert_measurement(
      test::measurement(run, dev, "vectorized.b256.u4.single_pass.f32.sum", 1024, 2.0));
  db.connection().exec(
      "UPDATE runs SET host = replace(hex(zeroblob(5000000)), '00', 'h');"
      "UPDATE measurements SET kernel_id = replace(hex(zeroblob(5000000)), '00', 'k')");
  EXPECT_EQ(db.runs().at(0).info.host.size(), max_name_bytes);
  EXPECT_EQ(db.measurements().at(0).kernel_id.size(), max_name_bytes);
  const auto findings = validate_rows(db.connection());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].text().substr(0, 14), "runs id 1: hos");
  EXPECT_NE(findings[0].why.find("(5000000 bytes)"), std::string::npos) << findings[0].why;
}

// `db migrate` of a file with a row that breaks a CHECK failed with only "quick_check failed
// after migrating to schema version N", naming no row: the row validator names it.
TEST(Migration, AFailedQuickCheckNamesTheRows) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v9.db", dir);
  {
    Connection c = Connection::open(path, OpenMode::read_write);
    c.exec("PRAGMA ignore_check_constraints = ON; UPDATE winners SET n_lo = n_hi + 1");
  }
  const std::string before = test::read_file(path);
  try {
    Database::open_writer(path);
    ADD_FAILURE() << "migrated a file with a row that breaks a CHECK";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::invalid_rows) << e.what();
    EXPECT_EQ(e.exit_code(), exit_code::db_check_failed);
    EXPECT_NE(std::string(e.what()).find("quick_check failed after migrating to schema version "
                                         "10: rows break the row rules: winners id "),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("n_lo is larger than n_hi"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(Database::open_reader(path).file_schema_version(), 9);
}

TEST(Migration, OnlyTheWriterThatMigratedSaysSo) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v10.db", dir);
  std::vector<std::optional<int>> from(4);
  std::vector<std::thread> writers;
  for (std::size_t i = 0; i < from.size(); ++i)
    writers.emplace_back([&, i] { from[i] = Database::open_writer(path).migrated_from(); });
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(std::count(from.begin(), from.end(), std::optional<int>(10)), 1);
  EXPECT_EQ(std::count(from.begin(), from.end(), std::nullopt), 3);
  EXPECT_EQ(Database::open_writer(dir / "new.db").migrated_from(), -1);
}

TEST(Database, TheSchemaTakesEachTypeForTheOperatorsDefinedForItAlone) {
  TempDir dir;
  Database db = Database::open_writer(dir / "tune.db");
  expect_checks_match_op_applies(db);
}

TEST(Database, AnOperatorIsRefusedWithATypeItIsNotDefinedFor) {
  TempDir dir;
  Database db = Database::open_writer(dir / "tune.db");
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  const auto bench_run = lab_bench_run(db, dev);
  // The writer names the pair and the types the operator is defined for (op_applies) before the
  // schema's CHECK, which would name only itself, refuses the row.
  const struct {
    DType dtype;
    Op op;
    const char* why;
  } cases[] = {
      {DType::i64, Op::wide_sum,
       "the operator 'wide_sum' is defined for i32, u32, f32, f16 and bf16 only, not for i64"},
      {DType::u64, Op::wide_sum,
       "the operator 'wide_sum' is defined for i32, u32, f32, f16 and bf16 only, not for u64"},
      {DType::f64, Op::wide_sum,
       "the operator 'wide_sum' is defined for i32, u32, f32, f16 and bf16 only, not for f64"},
      {DType::i32, Op::exact_sum,
       "the operator 'exact_sum' is defined for f32, f64, f16 and bf16 only, not for i32"},
      {DType::u32, Op::exact_sum,
       "the operator 'exact_sum' is defined for f32, f64, f16 and bf16 only, not for u32"},
      {DType::i64, Op::exact_sum,
       "the operator 'exact_sum' is defined for f32, f64, f16 and bf16 only, not for i64"},
      {DType::u64, Op::exact_sum,
       "the operator 'exact_sum' is defined for f32, f64, f16 and bf16 only, not for u64"},
      // The half types (schema version 8) are for wide_sum and (version 10) exact_sum alone.
      {DType::f16, Op::sum,
       "the operator 'sum' is defined for i32, u32, i64, u64, f32 and f64 only, not for f16"},
      {DType::f16, Op::min,
       "the operator 'min' is defined for i32, u32, i64, u64, f32 and f64 only, not for f16"},
      {DType::f16, Op::max,
       "the operator 'max' is defined for i32, u32, i64, u64, f32 and f64 only, not for f16"},
      {DType::bf16, Op::sum,
       "the operator 'sum' is defined for i32, u32, i64, u64, f32 and f64 only, not for bf16"},
      {DType::bf16, Op::min,
       "the operator 'min' is defined for i32, u32, i64, u64, f32 and f64 only, not for bf16"},
      {DType::bf16, Op::max,
       "the operator 'max' is defined for i32, u32, i64, u64, f32 and f64 only, not for bf16"},
      // argmin and argmax (schema version 9) are for the 4- and 8-byte types alone.
      {DType::f16, Op::argmin,
       "the operator 'argmin' is defined for i32, u32, i64, u64, f32 and f64 only, not for f16"},
      {DType::f16, Op::argmax,
       "the operator 'argmax' is defined for i32, u32, i64, u64, f32 and f64 only, not for f16"},
      {DType::bf16, Op::argmin,
       "the operator 'argmin' is defined for i32, u32, i64, u64, f32 and f64 only, not for bf16"},
      {DType::bf16, Op::argmax,
       "the operator 'argmax' is defined for i32, u32, i64, u64, f32 and f64 only, not for bf16"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    const std::string id =
        fmt::format("vectorized.b256.u4.single_pass.{}.{}", dtype_name(c.dtype), op_name(c.op));
    auto expect_refused = [&](auto&& write, const std::string& what) {
      try {
        write();
        ADD_FAILURE() << "written: " << what;
      } catch (const DbError& e) {
        EXPECT_EQ(e.problem(), Problem::invalid_data) << e.what();
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.why), std::string::npos) << e.what();
      }
    };
    expect_refused(
        [&] { db.insert_measurement(test::measurement(run, dev, id, 1024, 1.0, c.dtype, c.op)); },
        "measurement of '" + id + "'");
    Winner w;
    w.dtype = c.dtype;
    w.op = c.op;
    w.n_lo = 1;
    w.n_hi = 1024;
    w.kernel_id = id;
    w.measurement_id = 1;
    expect_refused([&] { db.replace_winners(dev, c.dtype, c.op, std::vector<Winner>{w}); },
                   fmt::format("cold winners of {} {}", dtype_name(c.dtype), op_name(c.op)));
    BenchResult b;
    b.dtype = c.dtype;
    b.op = c.op;
    b.n = 1024;
    b.method = BenchMethod::cub;
    b.verified = true;
    b.median_us = 1.0;
    b.repeats = 5;
    expect_refused([&] { insert_bench_result(db, bench_run, b); },
                   fmt::format("bench result cub at {} {} n = 1024", dtype_name(c.dtype),
                               op_name(c.op)));
  }
  EXPECT_EQ(db.counts().measurements, 0);
  EXPECT_EQ(db.counts().winners, 0);
  EXPECT_TRUE(bench_results(db).empty());
}

TEST(Migration, Version3IsReadAsItIsAndMigratedByWriters) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v3.db", dir);
  const std::string before = test::read_file(path);
  {
    // Readers take the missing bench tables for empty, and change nothing.
    Database r = Database::open_reader(path);
    EXPECT_EQ(r.file_schema_version(), 3);
    EXPECT_EQ(r.counts().measurements, 40);
    EXPECT_FALSE(has_bench_tables(r));
    EXPECT_TRUE(bench_runs(r).empty());
    EXPECT_TRUE(bench_results(r).empty());
    EXPECT_FALSE(r.has_provenance());
    EXPECT_TRUE(r.gpus().empty());
  }
  EXPECT_EQ(test::read_file(path), before);
  // Older than version 3 stays refused.
  try {
    Database::open_reader(test::copy_fixture("schema_v2.db", dir));
    FAIL() << "a reader opened a version-2 file";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::too_old);
  }
  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);  // 3 -> 4 -> ... -> 9 -> 10
  EXPECT_TRUE(has_bench_tables(db));
  EXPECT_TRUE(db.has_provenance());
  EXPECT_EQ(db.counts().measurements, 40);
  EXPECT_EQ(db.connection().query_text("PRAGMA quick_check"), "ok");
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  expect_the_schema_of_a_new_file(db, dir);
}

// --- hostile strings ----------------------------------------------------------------------------

TEST(Database, HostileStringsAreStoredVerbatimInHostilePaths) {
  TempDir dir;
  const std::string hostile =
      "it's \"quoted\"; '); DROP TABLE measurements; --\nline 2 <script>alert(1)</script> "
      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x9a\x80 %s %n \\ \t end";
  const auto folder = dir / "d'ir; DROP TABLE runs;--\n<script>\xc3\xa9";
  std::filesystem::create_directory(folder);
  const auto path = folder / "t\"une'; DROP TABLE devices;--.db";
  {
    Database db = Database::open_writer(path);
    DeviceFingerprint fp = test::h100();
    fp.name = hostile;
    const auto dev = db.upsert_device(fp);
    RunInfo info = test::run_info();
    info.host = hostile;
    info.config_hash = hostile;
    const auto run = db.begin_run(info);
    Measurement m = test::measurement(run, dev, hostile, 10, 1.0);
    m.outcome = Outcome::crashed;
    m.error = hostile;
    m.params.family = hostile;
    db.insert_measurement(m);
  }
  Database r = Database::open_reader(path);
  auto devs = r.devices();
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_EQ(devs[0].fingerprint.name, hostile);
  EXPECT_EQ(r.runs()[0].info.host, hostile);
  EXPECT_EQ(r.runs()[0].origin, path.string());
  auto ms = r.measurements();
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].kernel_id, hostile);
  EXPECT_EQ(ms[0].error, hostile);
  EXPECT_EQ(ms[0].params.family, hostile);
  EXPECT_EQ(
      r.connection().query_int(
          "SELECT count(*) FROM sqlite_schema WHERE name IN ('measurements','runs','devices')"),
      3);
}

}  // namespace
}  // namespace tunedreduce::db
