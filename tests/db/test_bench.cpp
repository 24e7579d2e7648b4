// Bench runs in the tuning database (db/bench.hpp): what `tunedreduce bench` records, written
// and read back without a GPU.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include "common/exit_codes.hpp"
#include "db/bench.hpp"
#include "db/database.hpp"
#include "db/db_error.hpp"
#include "db/schema.hpp"
#include "test_util.hpp"

namespace tunedreduce::db {
namespace {

using test::TempDir;

BenchRunInfo info() {
  BenchRunInfo i;
  i.tool_version = "0.3.0";
  i.manifest_hash = "0123456789abcdef";
  i.host = "gpu-host";
  i.library_database = "/home/u/.local/share/tunedreduce/tune.db";
  i.l2 = BenchL2::cold;
  i.repeats = 50;
  i.warmups = 2;
  i.seed = 0xfedcba9876543210ull;  // above 2^63: stored as text, read back whole
  i.attainable_gbps = 3190.5;
  i.sm_clock_mhz = 1980;
  i.mem_clock_mhz = 2619;
  return i;
}

BenchResult result(BenchMethod m, std::uint64_t n, double median, DType t = DType::i32,
                   Op op = Op::sum) {
  BenchResult r;
  r.dtype = t;
  r.op = op;
  r.n = n;
  r.method = m;
  r.verified = true;
  r.median_us = median;
  r.p10_us = median * 0.98;
  r.p90_us = median * 1.05;
  r.repeats = 50;
  if (is_tuned(m)) {
    r.kernel_id = "streaming.b128.u2.packed.i32.sum";
    r.lookup_level = "exact";
    r.winner_l2 = L2Mode::cold;
  }
  if (m == BenchMethod::two_phase || m == BenchMethod::cub) r.temp_bytes = 512;
  return r;
}

TEST(Bench, ARunIsWrittenAndReadBackWithEveryField) {
  TempDir dir;
  Database db = Database::open_writer(dir / "tune.db");
  const auto dev = db.upsert_device(test::h100());
  const auto run = begin_bench_run(db, dev, info(), 13000, 13000);
  insert_bench_result(db, run, result(BenchMethod::cached, 1 << 20, 7.1));
  insert_bench_result(db, run, result(BenchMethod::two_phase, 1 << 20, 7.2));
  insert_bench_result(db, run, result(BenchMethod::cub, 1 << 20, 8.0));
  BenchResult wrong = result(BenchMethod::thrust, 1 << 20, 0);
  wrong.verified = false;
  wrong.median_us = wrong.p10_us = wrong.p90_us = std::nullopt;
  wrong.error = "incorrect: got 3, expected 4";
  insert_bench_result(db, run, wrong);
  {
    // Another process sees the running run and its rows: each call committed.
    Database r = Database::open_reader(dir / "tune.db");
    const auto runs = bench_runs(r);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, RunStatus::running);
    EXPECT_FALSE(runs[0].ended_at);
    EXPECT_EQ(bench_results(r).size(), 4u);
  }
  end_bench_run(db, run, RunStatus::finished);

  Database r = Database::open_reader(dir / "tune.db");
  const auto runs = bench_runs(r);
  ASSERT_EQ(runs.size(), 1u);
  const BenchRunRecord& b = runs[0];
  EXPECT_EQ(b.id, run);
  EXPECT_EQ(b.uuid.size(), 32u);
  EXPECT_EQ(b.device_id, dev);
  EXPECT_EQ(b.info.tool_version, "0.3.0");
  EXPECT_EQ(b.info.manifest_hash, "0123456789abcdef");
  EXPECT_EQ(b.info.host, "gpu-host");
  EXPECT_EQ(b.info.library_database, "/home/u/.local/share/tunedreduce/tune.db");
  EXPECT_EQ(b.origin, (dir / "tune.db").string());
  EXPECT_EQ(b.info.l2, BenchL2::cold);
  EXPECT_EQ(b.info.repeats, 50);
  EXPECT_EQ(b.info.warmups, 2);
  EXPECT_EQ(b.info.seed, 0xfedcba9876543210ull);
  EXPECT_DOUBLE_EQ(*b.info.attainable_gbps, 3190.5);
  EXPECT_EQ(b.info.sm_clock_mhz, 1980);
  EXPECT_EQ(b.info.mem_clock_mhz, 2619);
  EXPECT_EQ(b.driver_version, 13000);
  EXPECT_EQ(b.status, RunStatus::finished);
  ASSERT_TRUE(b.ended_at);
  EXPECT_LE(b.started_at, *b.ended_at);
  EXPECT_EQ(bench_runs(r, dev).size(), 1u);
  EXPECT_EQ(bench_runs(r, dev + 1).size(), 0u);

  const auto rs = bench_results(r, run);
  ASSERT_EQ(rs.size(), 4u);
  // In method order: cached, two_phase, cub, thrust.
  EXPECT_EQ(rs[0].method, BenchMethod::cached);
  EXPECT_EQ(rs[1].method, BenchMethod::two_phase);
  EXPECT_EQ(rs[2].method, BenchMethod::cub);
  EXPECT_EQ(rs[3].method, BenchMethod::thrust);
  EXPECT_TRUE(rs[0].verified);
  EXPECT_DOUBLE_EQ(*rs[0].median_us, 7.1);
  EXPECT_DOUBLE_EQ(*rs[0].p10_us, 7.1 * 0.98);
  EXPECT_DOUBLE_EQ(*rs[0].p90_us, 7.1 * 1.05);
  EXPECT_EQ(rs[0].repeats, 50);
  EXPECT_EQ(rs[0].kernel_id, "streaming.b128.u2.packed.i32.sum");
  EXPECT_EQ(rs[0].lookup_level, "exact");
  EXPECT_EQ(rs[0].winner_l2, L2Mode::cold);
  EXPECT_FALSE(rs[0].temp_bytes);
  EXPECT_EQ(rs[1].temp_bytes, 512);
  EXPECT_FALSE(rs[2].kernel_id);
  EXPECT_FALSE(rs[2].lookup_level);
  EXPECT_FALSE(rs[3].verified);
  EXPECT_EQ(rs[3].error, "incorrect: got 3, expected 4");
  EXPECT_FALSE(rs[3].median_us);
  for (const auto& x : rs) {
    EXPECT_EQ(x.bench_run_id, run);
    EXPECT_EQ(x.n, 1u << 20);
    EXPECT_EQ(x.dtype, DType::i32);
    EXPECT_FALSE(x.measured_at.empty());
  }
}

TEST(Bench, InvalidResultsAreRefusedWithAMessageAndWriteNothing) {
  Database db = Database::create_in_memory();
  const auto dev = db.upsert_device(test::h100());
  const auto run = begin_bench_run(db, dev, info(), 13000, 13000);
  auto refused = [&](const BenchResult& r, const std::string& words) {
    try {
      insert_bench_result(db, run, r);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const DbError& e) {
      EXPECT_EQ(e.problem(), Problem::invalid_data);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  BenchResult no_median = result(BenchMethod::cub, 1024, 5);
  no_median.median_us = std::nullopt;
  refused(no_median, "cub at i32 sum n = 1024 is verified but has no median");
  BenchResult no_why = result(BenchMethod::cub, 1024, 5);
  no_why.verified = false;
  refused(no_why, "is not verified and says no why");
  insert_bench_result(db, run, result(BenchMethod::cub, 1024, 5));
  refused(result(BenchMethod::cub, 1024, 6), "already has a result for cub at i32 sum n = 1024");
  EXPECT_THROW(insert_bench_result(db, run + 7, result(BenchMethod::cub, 2048, 5)), DbError);
  EXPECT_EQ(bench_results(db).size(), 1u);
  BenchRunInfo none = info();
  none.repeats = 0;
  EXPECT_THROW(begin_bench_run(db, dev, none, 13000, 13000), DbError);
  EXPECT_THROW(end_bench_run(db, run + 7, RunStatus::finished), DbError);
}

TEST(Bench, AWholeRunInOneCall) {
  Database db = Database::create_in_memory();
  const std::vector<BenchResult> rs = {result(BenchMethod::cached, 1024, 4.0),
                                       result(BenchMethod::cub, 1024, 4.4),
                                       result(BenchMethod::cached, 1024, 9.0, DType::f32, Op::max)};
  BenchRunInfo warm = info();
  warm.l2 = BenchL2::warm;
  const auto run = record_bench_run(db, test::h200(), warm, rs);
  const auto runs = bench_runs(db);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, run);
  EXPECT_EQ(runs[0].status, RunStatus::finished);
  EXPECT_EQ(runs[0].info.l2, BenchL2::warm);
  EXPECT_EQ(db.devices().at(0).key, test::h200().key());
  EXPECT_EQ(runs[0].driver_version, test::h200().driver_version);
  const auto back = bench_results(db);
  ASSERT_EQ(back.size(), 3u);
  // Ordered by dtype, op, n, method: f32 max first.
  EXPECT_EQ(back[0].dtype, DType::f32);
  // One bad row: nothing of the run is written.
  std::vector<BenchResult> bad = rs;
  bad.push_back(rs[0]);
  EXPECT_THROW(record_bench_run(db, test::h200(), warm, bad), DbError);
  EXPECT_EQ(bench_runs(db).size(), 1u);
  EXPECT_EQ(bench_results(db).size(), 3u);
}

TEST(Bench, NamesRoundTrip) {
  for (BenchL2 l : {BenchL2::cold, BenchL2::dirty, BenchL2::warm})
    EXPECT_EQ(parse_bench_l2(bench_l2_name(l)), l);
  for (BenchMethod m : {BenchMethod::cached, BenchMethod::two_phase, BenchMethod::cub,
                        BenchMethod::thrust})
    EXPECT_EQ(parse_bench_method(bench_method_name(m)), m);
  EXPECT_FALSE(parse_bench_l2("clean"));
  EXPECT_FALSE(parse_bench_method("two-phase"));
  EXPECT_EQ(tuned_l2_of(BenchL2::cold), L2Mode::cold);
  EXPECT_EQ(tuned_l2_of(BenchL2::warm), L2Mode::warm);
  EXPECT_FALSE(tuned_l2_of(BenchL2::dirty));
}

TEST(Bench, AReaderCannotWriteABenchRun) {
  TempDir dir;
  { Database::open_writer(dir / "tune.db").upsert_device(test::h100()); }
  Database r = Database::open_reader(dir / "tune.db");
  try {
    begin_bench_run(r, 1, info(), 13000, 13000);
    FAIL() << "a reader began a bench run";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::readonly);
    EXPECT_EQ(e.exit_code(), exit_code::db_readonly);
  }
}

TEST(Bench, TheCheckConstraintsHoldAgainstDirectSql) {
  Database db = Database::create_in_memory();
  const auto dev = db.upsert_device(test::h100());
  const auto run = begin_bench_run(db, dev, info(), 13000, 13000);
  Connection& c = db.connection();
  const std::string head =
      "INSERT INTO bench_results (bench_run_id, dtype, op, n, method, verified, error, median_us,"
      " repeats, measured_at, lookup_level) VALUES (" + std::to_string(run) + ", ";
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 1, 'cub', 1, '', NULL, 1, 'x', NULL)"), DbError);
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 1, 'cuda', 1, '', 1.0, 1, 'x', NULL)"), DbError);
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 0, 'cub', 1, '', 1.0, 1, 'x', NULL)"), DbError);
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 1, 'cub', 1, '', 1.0, 1, 'x', 'guess')"), DbError);
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 1, 'cub', 1, 'oops', 1.0, 1, 'x', NULL)"), DbError);
  c.exec(head + "'i32', 'sum', 1, 'cub', 1, '', 1.0, 1, 'x', NULL)");
  EXPECT_EQ(bench_results(db).size(), 1u);
}

}  // namespace
}  // namespace tunedreduce::db
