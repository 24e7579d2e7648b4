// Bench runs in the tuning database (db/bench.hpp): what `tunedreduce bench` records, written
// and read back without a GPU.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include "common/exit_codes.hpp"
#include "db/bench.hpp"
#include "db/database.hpp"
#include "db/dataset.hpp"
#include "db/db_error.hpp"
#include "db/row_rules.hpp"
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
  for (BenchMethod m :
       {BenchMethod::cached, BenchMethod::two_phase, BenchMethod::cub, BenchMethod::thrust})
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
      " repeats, measured_at, lookup_level) VALUES (" +
      std::to_string(run) + ", ";
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 1, 'cub', 1, '', NULL, 1, 'x', NULL)"), DbError);
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 1, 'cuda', 1, '', 1.0, 1, 'x', NULL)"), DbError);
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 0, 'cub', 1, '', 1.0, 1, 'x', NULL)"), DbError);
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 1, 'cub', 1, '', 1.0, 1, 'x', 'guess')"), DbError);
  EXPECT_THROW(c.exec(head + "'i32', 'sum', 1, 'cub', 1, 'oops', 1.0, 1, 'x', NULL)"), DbError);
  c.exec(head + "'i32', 'sum', 1, 'cub', 1, '', 1.0, 1, 'x', NULL)");
  EXPECT_EQ(bench_results(db).size(), 1u);
}

// --- export, import, merge ----------------------------------------------------------------------

// A database at \p path with one finished bench run on \p fp, \p cached and CUB at 2^20.
void bench_db(const std::filesystem::path& path, const DeviceFingerprint& fp, double cached,
              const std::string& host) {
  Database db = Database::open_writer(path);
  BenchRunInfo i = info();
  i.host = host;
  BenchResult failed = result(BenchMethod::thrust, 1 << 20, 1);
  failed.verified = false;
  failed.median_us = failed.p10_us = failed.p90_us = std::nullopt;
  failed.error = "thrust: \"out of memory\"\n<script>";
  record_bench_run(db, fp, i,
                   std::vector<BenchResult>{result(BenchMethod::cached, 1 << 20, cached),
                                            result(BenchMethod::cub, 1 << 20, 8.0), failed});
}

std::string bench_part(Database& db) {
  Dataset d = read_dataset(db);
  Json doc = dataset_to_json(d);
  return doc.find("bench_runs")->dump(2);
}

TEST(BenchDataset, ExportAndImportKeepEveryBenchRow) {
  TempDir dir;
  bench_db(dir / "a.db", test::h100(), 7.0, "host-a");
  Database a = Database::open_reader(dir / "a.db");
  const Json doc = dataset_to_json(read_dataset(a));
  const Json& runs = *doc.find("bench_runs");
  ASSERT_EQ(runs.as_array().size(), 1u);
  const Json& run = runs.as_array()[0];
  EXPECT_EQ(run.find("device")->as_string(), test::h100().key());
  EXPECT_EQ(run.find("seed")->as_string(), "fedcba9876543210");
  EXPECT_EQ(run.find("results")->as_array().size(), 3u);
  // Into a new file: the same bench runs, byte for byte in the export.
  Database b = Database::open_writer(dir / "b.db");
  const MergeStats st =
      import_dataset(b, dataset_from_json(Json::parse(doc.dump()), dir / "a.json"));
  EXPECT_EQ(st.bench_runs_added, 1);
  EXPECT_EQ(bench_part(b), bench_part(a));
  // Again: nothing changes.
  const MergeStats again = import_dataset(b, dataset_from_json(doc, dir / "a.json"));
  EXPECT_EQ(again.bench_runs_added, 0);
  EXPECT_EQ(bench_runs(b).size(), 1u);
  EXPECT_EQ(bench_results(b).size(), 3u);
  // An export of a version-3 binary has no bench_runs: it imports as it always did.
  Json old = doc;
  Json::Object members;
  for (const auto& [k, v] : old.as_object())
    if (k != "bench_runs") members.emplace_back(k, v);
  EXPECT_NO_THROW(dataset_from_json(Json(members), dir / "old.json"));
}

TEST(BenchDataset, ImportValidatesBenchRows) {
  TempDir dir;
  bench_db(dir / "a.db", test::h100(), 7.0, "host-a");
  Database a = Database::open_reader(dir / "a.db");
  const std::string good = dataset_to_json(read_dataset(a)).dump();
  auto refused = [&](const std::string& from, const std::string& to, const std::string& words) {
    std::string text = good;
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    try {
      dataset_from_json(Json::parse(text), dir / "x.json");
      ADD_FAILURE() << "accepted " << to;
    } catch (const DbError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'" + (dir / "x.json").string() + "'"),
                std::string::npos);
    }
  };
  refused("\"method\":\"cub\"", "\"method\":\"cuda\"",
          "$.bench_runs[0].results[1].method: 'cuda' is not one of cached, two_phase, cub, thrust, "
          "floor");
  refused("\"method\":\"cub\"", "\"method\":\"cached\"", "a second result for this dtype");
  refused("\"l2\":\"cold\"", "\"l2\":\"clean\"", "$.bench_runs[0].l2");
  refused("\"device\":\"" + test::h100().key() + "\",\"tool", "\"device\":\"nope\",\"tool",
          "no device 'nope'");
  refused("\"verified\":false", "\"verified\":true", "required when verified");
  refused("\"seed\":\"fedcba9876543210\"", "\"seed\":\"-1\"", "hex digits");
}

TEST(BenchDataset, MergeUnionsBenchRunsInAnyOrderAndAnEndedCopyWins) {
  TempDir dir;
  bench_db(dir / "a.db", test::h100(), 7.0, "host-a");
  bench_db(dir / "b.db", test::h200(), 6.0, "host-b");
  // c.db: a copy of a's run taken while it was running (no end, one result fewer).
  {
    Database a = Database::open_reader(dir / "a.db");
    Dataset d = read_dataset(a);
    for (auto& [uuid, b] : d.bench_runs) {
      b.ended_at.reset();
      b.status = RunStatus::running;
      b.results.pop_back();
    }
    Database c = Database::open_writer(dir / "c.db");
    import_dataset(c, d);
  }
  std::vector<std::string> files;
  std::vector<std::vector<std::filesystem::path>> orders = {
      {dir / "a.db", dir / "b.db", dir / "c.db"},
      {dir / "c.db", dir / "b.db", dir / "a.db"},
      {dir / "b.db", dir / "c.db", dir / "a.db"}};
  int k = 0;
  for (const auto& in : orders) {
    const auto out = dir / ("out" + std::to_string(k++) + ".db");
    merge_files(in, out);
    Database m = Database::open_reader(out);
    files.push_back(bench_part(m));
    const auto runs = bench_runs(m);
    ASSERT_EQ(runs.size(), 2u);
    for (const auto& r : runs) EXPECT_EQ(r.status, RunStatus::finished);
    EXPECT_EQ(bench_results(m).size(), 6u);
  }
  for (const auto& f : files) EXPECT_EQ(f, files[0]);
  // A live database imports the ended copy over its running one.
  Database c = Database::open_writer(dir / "c.db");
  ASSERT_EQ(bench_runs(c).at(0).status, RunStatus::running);
  Database a = Database::open_reader(dir / "a.db");
  import_dataset(c, read_dataset(a));
  EXPECT_EQ(bench_runs(c).at(0).status, RunStatus::finished);
  EXPECT_EQ(bench_results(c).size(), 3u);
}

TEST(BenchDataset, AVersion3InputMergesWithoutBenchRuns) {
  TempDir dir;
  bench_db(dir / "a.db", test::h100(), 7.0, "host-a");
  const auto v3 = test::copy_fixture("schema_v3.db", dir);
  merge_files({dir / "a.db", v3}, dir / "out.db");
  Database m = Database::open_reader(dir / "out.db");
  EXPECT_EQ(m.file_schema_version(), schema_version);
  EXPECT_EQ(bench_runs(m).size(), 1u);
  EXPECT_EQ(m.counts().measurements, 40);
}

// --- segmented bench results (schema version 13) -------------------------------------------------

BenchResult seg_result(BenchMethod m, std::uint64_t n, std::uint64_t size, double median,
                       const char* layout = "fixed") {
  BenchResult r = result(m, n, median, DType::f32, Op::sum);
  if (r.kernel_id) r.kernel_id = "seg.group.b256.g8.v4.fixed.f32.sum";
  r.segment_size = size;
  r.layout = layout;
  return r;
}

TEST(SegmentedBench, ResultsGoToTheirOwnTableAndReadBackWithTheirShape) {
  TempDir dir;
  {
    Database db = Database::open_writer(dir / "tune.db");
    // A whole-array result and segmented ones of the same n, method and key: each its own row.
    const std::vector<BenchResult> rs = {result(BenchMethod::cub, 1 << 20, 8.0, DType::f32,
                                                Op::sum),
                                         seg_result(BenchMethod::cached, 1 << 20, 64, 6.1),
                                         seg_result(BenchMethod::two_phase, 1 << 20, 64, 6.2),
                                         seg_result(BenchMethod::cub, 1 << 20, 64, 20.5),
                                         seg_result(BenchMethod::cub, 1 << 20, 1024, 9.5),
                                         seg_result(BenchMethod::cub, 1 << 20, 64, 31.0,
                                                    "offsets64")};
    record_bench_run(db, test::h200(), info(), rs);
  }
  Database r = Database::open_reader(dir / "tune.db");
  const auto whole = bench_results(r);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_FALSE(whole[0].segmented());
  EXPECT_TRUE(whole[0].layout.empty());
  const auto seg = segmented_bench_results(r);
  ASSERT_EQ(seg.size(), 5u);
  // By layout, segment size, n, then method.
  EXPECT_EQ(seg[0].layout, "fixed");
  EXPECT_EQ(seg[0].segment_size, 64u);
  EXPECT_EQ(seg[0].method, BenchMethod::cached);
  EXPECT_DOUBLE_EQ(*seg[0].median_us, 6.1);
  EXPECT_EQ(seg[0].kernel_id, "seg.group.b256.g8.v4.fixed.f32.sum");
  EXPECT_EQ(seg[1].method, BenchMethod::two_phase);
  EXPECT_EQ(seg[2].method, BenchMethod::cub);
  EXPECT_EQ(seg[3].segment_size, 1024u);
  EXPECT_EQ(seg[4].layout, "offsets64");
  EXPECT_DOUBLE_EQ(*seg[4].median_us, 31.0);
  for (const auto& x : seg) EXPECT_EQ(x.n, 1u << 20);
  EXPECT_EQ(segmented_bench_results(r, seg[0].bench_run_id).size(), 5u);
  EXPECT_TRUE(segmented_bench_results(r, seg[0].bench_run_id + 1).empty());
  // db check finds nothing wrong with them.
  EXPECT_TRUE(validate_table(r.connection(), "segmented_bench_results").empty());
}

TEST(SegmentedBench, InvalidResultsAreRefusedWithAMessage) {
  Database db = Database::create_in_memory();
  const auto dev = db.upsert_device(test::h200());
  const auto run = begin_bench_run(db, dev, info(), 13000, 13000);
  insert_bench_result(db, run, seg_result(BenchMethod::cub, 1 << 20, 64, 20.5));
  auto refused = [&](BenchResult r, const std::string& words) {
    try {
      insert_bench_result(db, run, r);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const DbError& e) {
      EXPECT_EQ(e.problem(), Problem::invalid_data);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused(seg_result(BenchMethod::cub, 1 << 20, 64, 21.0),
          "already has a result for cub at f32 "
          "sum n = 1048576 in segments of 64");
  refused(seg_result(BenchMethod::cub, 1 << 20, 0, 21.0), "the segment size must be 1..n");
  refused(seg_result(BenchMethod::cub, 1 << 20, 1 << 21, 21.0), "the segment size must be 1..n");
  refused(seg_result(BenchMethod::cub, 1 << 20, 64, 21.0, "csr"),
          "'csr' is not a layout of segments");
  refused(seg_result(BenchMethod::thrust, 1 << 20, 64, 21.0), "Thrust has no segmented");
  BenchResult no_size = result(BenchMethod::cub, 1 << 20, 8.0);
  no_size.layout = "fixed";
  refused(no_size, "a layout without a segment size");
  EXPECT_EQ(segmented_bench_results(db).size(), 1u);
  EXPECT_TRUE(bench_results(db).empty());
}

TEST(SegmentedBench, DbCheckNamesARowThatBreaksTheRules) {
  Database db = Database::create_in_memory();
  record_bench_run(db, test::h200(), info(), std::vector<BenchResult>{});
  // Past the writer, with SQL: a segment larger than the total, an unknown layout, Thrust.
  db.connection().exec(
      "INSERT INTO segmented_bench_results (bench_run_id, dtype, op, n, method, verified, error, "
      "median_us, repeats, measured_at, segment_size, layout) VALUES "
      "(1, 'f32', 'sum', 64, 'cub', 1, '', 5.0, 5, 'x', 128, 'fixed'), "
      "(1, 'f32', 'sum', 64, 'cub', 1, '', 5.0, 5, 'x', 8, 'rows')");
  const auto findings = validate_table(db.connection(), "segmented_bench_results");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].column, "segment_size/n");
  EXPECT_NE(findings[0].why.find("larger than the total"), std::string::npos);
  EXPECT_EQ(findings[1].column, "layout");
  // Readers skip the row whose layout this binary does not know, never reading it as another.
  EXPECT_EQ(segmented_bench_results(db).size(), 1u);
}

TEST(SegmentedBench, ExportImportAndMergeKeepTheShapeAndTheFormatSaysSo) {
  TempDir dir;
  {
    Database db = Database::open_writer(dir / "a.db");
    record_bench_run(db, test::h200(), info(),
                     std::vector<BenchResult>{result(BenchMethod::cub, 1 << 20, 8.0),
                                              seg_result(BenchMethod::cached, 1 << 20, 64, 6.1),
                                              seg_result(BenchMethod::cub, 1 << 20, 64, 20.5)});
  }
  Database a = Database::open_reader(dir / "a.db");
  const std::string text = dataset_to_json(read_dataset(a)).dump();
  // Segmented bench results make the document format version 3, which a version-2 reader
  // refuses instead of reading them as whole-array results.
  EXPECT_NE(text.find("\"format_version\":3"), std::string::npos);
  EXPECT_NE(text.find("\"segment_size\":64"), std::string::npos);
  EXPECT_NE(text.find("\"layout\":\"fixed\""), std::string::npos);
  Database b = Database::open_writer(dir / "b.db");
  import_dataset(b, dataset_from_json(Json::parse(text), dir / "a.json"));
  EXPECT_EQ(bench_part(b), bench_part(a));
  EXPECT_EQ(bench_results(b).size(), 1u);
  EXPECT_EQ(segmented_bench_results(b).size(), 2u);
  // A shape in a document of format version 2 is refused, naming the member.
  std::string v2 = text;
  v2.replace(v2.find("\"format_version\":3"), 18, "\"format_version\":2");
  try {
    dataset_from_json(Json::parse(v2), dir / "v2.json");
    ADD_FAILURE() << "a version-2 document with segmented bench results was accepted";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("segment_size: segmented bench results need format "
                                         "version 3"),
              std::string::npos)
        << e.what();
  }
  // A merge of the file with itself and a version-12 file keeps them.
  const auto v12 = test::copy_fixture("schema_v12.db", dir);
  merge_files({dir / "a.db", v12}, dir / "m.db");
  Database m = Database::open_reader(dir / "m.db");
  EXPECT_EQ(segmented_bench_results(m).size(), 2u);
  EXPECT_EQ(bench_results(m).size(), 1u);
}

TEST(SegmentedBench, AVersion12FileReadsNone) {
  TempDir dir;
  const auto v12 = test::copy_fixture("schema_v12.db", dir);
  Database r = Database::open_reader(v12);
  EXPECT_EQ(r.file_schema_version(), 12);
  EXPECT_TRUE(segmented_bench_results(r).empty());
  EXPECT_TRUE(validate_table(r.connection(), "segmented_bench_results").empty());
}

}  // namespace
}  // namespace tunedreduce::db
