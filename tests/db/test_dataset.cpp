// Export, import, merge and check: deterministic, lossless, with provenance.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/exit_codes.hpp"
#include "common/timing.hpp"
#include "db/bench.hpp"
#include "db/check.hpp"
#include "db/dataset.hpp"
#include "db/row_rules.hpp"
#include "db/schema.hpp"
#include "db/statement.hpp"
#include "test_util.hpp"

namespace tunedreduce::db {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

const std::string k_shuffle = "warp_shuffle.b256.u4.two_pass.f32.sum";
const std::string k_smem = "smem.b256.u8.dynamic.single_pass.f32.sum";
const std::string k_vec = "vectorized.b512.u2.two_pass.f32.sum";

Winner winner(std::uint64_t lo, std::uint64_t hi, std::int64_t m, const std::string& id,
              std::int64_t run) {
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

/// A database with one finished run on \p fp: \p id wins [lo, hi] with median \p median at 512.
/// The run, its measurements and the winner are of L2 mode \p mode; a database that exists
/// already gets the run added.
void make_db(const fs::path& path, const DeviceFingerprint& fp, const std::string& id,
             std::uint64_t lo, std::uint64_t hi, double median, const std::string& host,
             L2Mode mode = L2Mode::cold) {
  Database db = Database::open_writer(path);
  const auto dev = db.upsert_device(fp);
  RunInfo info = test::run_info();
  info.host = host;
  info.l2_mode = mode;
  const auto run = db.begin_run(info);
  db.record_attainable_bandwidth(run, dev, 3000);
  Measurement best = test::measurement(run, dev, id, 512, median);
  Measurement second = test::measurement(run, dev, k_vec, 512, median * 2);
  best.l2_mode = second.l2_mode = mode;
  const auto m = db.insert_measurement(best);
  const auto other = db.insert_measurement(second);
  Winner w = winner(lo, hi, m, id, run);
  w.l2_mode = mode;
  w.runner_up_kernel_id = k_vec;
  w.runner_up_measurement_id = other;
  db.replace_winners(dev, DType::f32, Op::sum, std::vector<Winner>{w}, mode);
  db.end_run(run, RunStatus::finished);
}

/// \p doc with the member l2_mode taken off every winner, as exports before schema version 3.
Json without_winner_modes(const Json& doc) {
  Json out = Json::object();
  for (const auto& [key, value] : doc.as_object()) {
    if (key != "winners") {
      out.set(key, value);
      continue;
    }
    Json ws = Json::array();
    for (const Json& w : value.as_array()) {
      Json bare = Json::object();
      for (const auto& [k, v] : w.as_object())
        if (k != "l2_mode") bare.set(k, v);
      ws.push_back(std::move(bare));
    }
    out.set(key, std::move(ws));
  }
  return out;
}

std::string export_of(const fs::path& path) {
  Database db = Database::open_reader(path);
  return dataset_to_json(read_dataset(db)).dump(2);
}

/// How many times \p what stands in \p text.
int occurrences(const std::string& text, const std::string& what) {
  int count = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
    ++count;
  return count;
}

/// \p text with occurrence \p occurrence (from 0) of \p what replaced by \p by; the text as it is
/// (and a test failure) where there is no such occurrence.
std::string replace_occurrence(std::string text, const std::string& what, int occurrence,
                               const std::string& by) {
  std::size_t pos = text.find(what);
  for (int i = 0; i < occurrence && pos != std::string::npos; ++i) pos = text.find(what, pos + 1);
  if (pos == std::string::npos) {
    ADD_FAILURE() << "no occurrence " << occurrence << " of " << what;
    return text;
  }
  return text.replace(pos, what.size(), by);
}

/// Every table an export carries holds exactly one row of (t, op) in \p db: a measurement, a
/// winner and a bench result.
void expect_one_row_in_each_table(Database& db, DType t, Op op) {
  SCOPED_TRACE(fmt::format("{} {}", dtype_name(t), op_name(op)));
  const auto ms = db.measurements();
  EXPECT_EQ(std::count_if(ms.begin(), ms.end(),
                          [&](const auto& m) { return m.op == op && m.dtype == t; }),
            1);
  const auto ws = db.winners();
  EXPECT_EQ(std::count_if(ws.begin(), ws.end(),
                          [&](const auto& w) { return w.op == op && w.dtype == t; }),
            1);
  const auto bs = bench_results(db);
  EXPECT_EQ(std::count_if(bs.begin(), bs.end(),
                          [&](const auto& b) { return b.op == op && b.dtype == t; }),
            1);
}

/// Exported again, \p db (an import of \p text) is the same document but for its provenance
/// (sources).
void expect_exports_again_as(Database& db, const std::string& text) {
  Dataset back = read_dataset(db);
  for (auto& [uuid, r] : back.runs) r.sources.clear();
  back.sources.clear();
  for (auto& w : back.winners) w.source.reset();
  EXPECT_EQ(dataset_to_json(back).dump(), text);
}

TEST(Export, RoundTripsThroughJsonIncludingHostileStrings) {
  TempDir dir;
  const std::string hostile = "x'); DROP TABLE winners; --\n<script>\"\\\xc3\xa9\xf0\x9f\x9a\x80";
  DeviceFingerprint fp = test::h100();
  fp.name = hostile;
  make_db(dir / "a.db", fp, k_shuffle, 1, 4096, 5.0, hostile);
  {
    Database db = Database::open_writer(dir / "a.db");
    const auto run = db.begin_run(test::run_info());  // a running run, a failed measurement
    Measurement m = test::measurement(run, db.devices()[0].id, k_smem, 1 << 20, 0);
    m.outcome = Outcome::timeout;
    m.median_us.reset();
    m.error = hostile;
    db.insert_measurement(m);
  }
  const std::string text = export_of(dir / "a.db");
  Dataset d = dataset_from_json(Json::parse(text), dir / "a.json");
  Database fresh = Database::open_writer(dir / "b.db");
  import_dataset(fresh, d);
  Dataset back = read_dataset(fresh);
  EXPECT_EQ(back.devices.begin()->second.fingerprint.name, hostile);
  // Everything but the import's provenance is identical.
  for (auto& [uuid, r] : back.runs) r.sources.clear();
  back.sources.clear();
  for (auto& w : back.winners) w.source.reset();
  EXPECT_EQ(dataset_to_json(back).dump(2), text);
}

TEST(Export, ImportValidatesAndNamesTheFileAndMember) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "h");
  const Json good = Json::parse(export_of(dir / "a.db"));
  const fs::path file = dir / "in.json";
  const std::string named = "'" + file.string() + "'";
  auto expect_bad = [&](const std::string& text, const std::string& words, Problem p) {
    Database db = Database::open_writer(dir / "target.db");
    try {
      import_dataset(db, dataset_from_json(Json::parse(text), file));
      ADD_FAILURE() << "accepted: " << words;
    } catch (const DbError& e) {
      EXPECT_EQ(e.problem(), p) << e.what();
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_EQ(db.counts().devices, 0);  // nothing half-imported
  };
  std::string t = good.dump();
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = t;
    const auto pos = s.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    return s.replace(pos, from.size(), to);
  };
  expect_bad(replaced("\"dtype\":\"f32\"", "\"dtype\":\"f8\""),
             "$.measurements[0].dtype: 'f8' is not one of i32, u32, i64, u64, f32, f64, f16, bf16",
             Problem::invalid_data);
  // f16 is a type (schema version 8), but sum is not defined for it (op_applies).
  expect_bad(replaced("\"dtype\":\"f32\"", "\"dtype\":\"f16\""),
             "$.measurements[0].op: the operator 'sum' is defined for i32, u32, i64, u64, f32 and "
             "f64 only, not for f16",
             Problem::invalid_data);
  // Version 2 is a document with segmented rows (schema version 12), 3 one with segmented bench
  // results (schema version 13); 4 is newer than this binary.
  expect_bad(replaced("\"format_version\":1", "\"format_version\":4"),
             "export format version 4 is newer than this binary's 3", Problem::too_new);
  expect_bad(replaced("\"seq\":1", "\"seq\":0"), "$.measurements[0].seq: must be at least 1",
             Problem::invalid_data);
  expect_bad(replaced("\"n_hi\":4096", "\"n_hi\":0"), "$.winners[0].n_hi: smaller than n_lo",
             Problem::invalid_data);
  expect_bad(replaced("\"kernel_id\":\"" + k_shuffle + "\",\"measurement\"",
                      "\"kernel_id\":\"" + k_smem + "\",\"measurement\""),
             "not an ok measurement of this kernel", Problem::invalid_data);
  expect_bad(replaced("\"format\":\"tunedreduce-db-export\"", "\"format\":\"other\""), "$.format",
             Problem::invalid_data);
  // The timing's members (common/timing.hpp's mapping), named like every other member.
  expect_bad(replaced("\"sm_clock_mhz\":1980", "\"sm_clock_mhz\":\"fast\""),
             "$.measurements[0].sm_clock_mhz: expected an integer", Problem::invalid_data);
  expect_bad(replaced("\"repeats\":20", "\"repeats\":-1"),
             "$.measurements[0].repeats: must be at least 0", Problem::invalid_data);
  expect_bad(replaced("\"p10_us\":", "\"p10\":"), "$.measurements[0]: missing member \"p10_us\"",
             Problem::invalid_data);
  expect_bad(replaced("\"median_us\":5.0", "\"median_us\":null"),
             "$.measurements[0].median_us: required when outcome is ok", Problem::invalid_data);
}

/// Importing \p json (named \p file) into \p target is refused as invalid data, naming the file,
/// the member and \p why, and leaves nothing half-imported.
void expect_import_refused(const fs::path& target, const std::string& json, const fs::path& file,
                           const std::string& member, const std::string& why) {
  Database db = Database::open_writer(target);
  try {
    import_dataset(db, dataset_from_json(Json::parse(json), file));
    ADD_FAILURE() << "imported it";
  } catch (const DbError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.problem(), Problem::invalid_data) << what;
    // (Built with append: GCC 12's -Wrestrict misfires on "literal" + std::string&&.)
    std::string where = "'";
    where.append(file.string()).append("': ").append(member);
    EXPECT_NE(what.find(where), std::string::npos) << what;
    EXPECT_NE(what.find(why), std::string::npos) << what;
  }
  EXPECT_EQ(db.counts().devices, 0);  // nothing half-imported
}

TEST(Export, WideSumRowsRoundTripAndAreRefusedForTypesItIsNotDefinedFor) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "h");
  const std::string k_wide = "vectorized.b256.u4.single_pass.i32.wide_sum";
  {
    // A wide_sum measurement, winner and bench result of i32: the dtype is the input's.
    Database db = Database::open_writer(dir / "a.db");
    const auto dev = db.devices()[0].id;
    const auto run = db.begin_run(test::run_info());
    const auto m = db.insert_measurement(
        test::measurement(run, dev, k_wide, 1 << 20, 9.5, DType::i32, Op::wide_sum));
    Winner w = winner(1, 1 << 30, m, k_wide, run);
    w.dtype = DType::i32;
    w.op = Op::wide_sum;
    db.replace_winners(dev, DType::i32, Op::wide_sum, std::vector<Winner>{w});
    db.end_run(run, RunStatus::finished);
    const BenchRunInfo info = test::lab_bench_info();
    const BenchResult b = test::wide_sum_bench_result(DType::i32, 9.9);
    record_bench_run(db, test::h100(), info, std::span<const BenchResult>(&b, 1));
  }
  const std::string text = Json::parse(export_of(dir / "a.db")).dump();
  {
    Database fresh = Database::open_writer(dir / "b.db");
    import_dataset(fresh, dataset_from_json(Json::parse(text), dir / "a.json"));
    const auto ms = fresh.measurements();
    EXPECT_EQ(std::count_if(ms.begin(), ms.end(),
                            [](const auto& m) {
                              return m.op == Op::wide_sum && m.dtype == DType::i32;
                            }),
              1);
    const auto ws = fresh.winners();
    EXPECT_EQ(std::count_if(ws.begin(), ws.end(),
                            [](const auto& w) {
                              return w.op == Op::wide_sum && w.dtype == DType::i32;
                            }),
              1);
    const auto bs = bench_results(fresh);
    ASSERT_EQ(bs.size(), 1u);
    EXPECT_EQ(bs[0].op, Op::wide_sum);
    EXPECT_EQ(bs[0].dtype, DType::i32);
  }
  // The same rows of i64 are refused by import, naming the file, the member and the pair: the
  // first occurrence is the measurement's, the second the winner's, the third the bench
  // result's (the document's order).
  const fs::path file = dir / "in.json";
  const std::string pair = "\"dtype\":\"i32\",\"op\":\"wide_sum\"";
  auto with_i64 = [&](int occurrence) {
    return replace_occurrence(text, pair, occurrence, "\"dtype\":\"i64\",\"op\":\"wide_sum\"");
  };
  const std::string why =
      ".op: the operator 'wide_sum' is defined for i32, u32, f32, f16 and bf16 only, not for i64";
  const char* members[] = {"$.measurements[", "$.winners[", "$.bench_runs[0].results[0]"};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(members[i]);
    expect_import_refused(dir / "target.db", with_i64(i), file, members[i], why);
  }
}

TEST(Export, HalfTypeRowsRoundTripForWideSumAndAreRefusedForOtherOperators) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "h");
  {
    // Schema version 8: a wide_sum measurement, winner and bench result of f16 and of bf16.
    Database db = Database::open_writer(dir / "a.db");
    const auto dev = db.devices()[0].id;
    const auto run = db.begin_run(test::run_info());
    std::vector<BenchResult> bench;
    for (DType t : {DType::f16, DType::bf16}) {
      const std::string id =
          fmt::format("vectorized.b256.u4.single_pass.{}.wide_sum", dtype_name(t));
      const auto m =
          db.insert_measurement(test::measurement(run, dev, id, 1 << 20, 4.5, t, Op::wide_sum));
      Winner w = winner(1, 1 << 30, m, id, run);
      w.dtype = t;
      w.op = Op::wide_sum;
      db.replace_winners(dev, t, Op::wide_sum, std::vector<Winner>{w});
      bench.push_back(test::wide_sum_bench_result(t, 4.9));
    }
    db.end_run(run, RunStatus::finished);
    const BenchRunInfo info = test::lab_bench_info();
    record_bench_run(db, test::h100(), info, bench);
  }
  const std::string text = Json::parse(export_of(dir / "a.db")).dump();
  // Written by their short names, three times each (measurement, winner, bench result).
  const std::string f16 = "\"dtype\":\"f16\",\"op\":\"wide_sum\"";
  const std::string bf16 = "\"dtype\":\"bf16\",\"op\":\"wide_sum\"";
  EXPECT_EQ(occurrences(text, f16), 3) << text;
  EXPECT_EQ(occurrences(text, bf16), 3) << text;
  {
    Database fresh = Database::open_writer(dir / "b.db");
    import_dataset(fresh, dataset_from_json(Json::parse(text), dir / "a.json"));
    for (DType t : {DType::f16, DType::bf16}) expect_one_row_in_each_table(fresh, t, Op::wide_sum);
    expect_exports_again_as(fresh, text);
  }
  // The same rows of f16 with any other operator but exact_sum (schema version 10,
  // Export.ExactSumRowsOfHalfTypesRoundTripAndIntegerOnesAreRefused) are refused by import,
  // naming the file, the member and the pair: the first occurrence is the measurement's, the
  // second the winner's, the third the bench result's (the document's order).
  const fs::path file = dir / "in.json";
  auto with_op = [&](int occurrence, Op op) {
    return replace_occurrence(text, f16, occurrence,
                              fmt::format("\"dtype\":\"f16\",\"op\":\"{}\"", op_name(op)));
  };
  const char* members[] = {"$.measurements[", "$.winners[", "$.bench_runs[0].results["};
  for (Op op : {Op::sum, Op::min, Op::max, Op::argmin, Op::argmax}) {
    const std::string why = fmt::format(
        ".op: the operator '{}' is defined for i32, u32, i64, u64, f32 and f64 only, not for f16",
        op_name(op));
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(std::string(op_name(op)) + " " + members[i]);
      expect_import_refused(dir / "target.db", with_op(i, op), file, members[i], why);
    }
  }
}

TEST(Export, ArgminAndArgmaxRowsRoundTripAndAreRefusedForHalfTypes) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "h");
  const DType types[] = {DType::i32, DType::f64};
  const Op ops[] = {Op::argmin, Op::argmax};
  {
    // Schema version 9: an argmin and an argmax measurement, winner and bench result of i32 and
    // of f64; the dtype is the element type (the result an IndexedValue of it).
    Database db = Database::open_writer(dir / "a.db");
    const auto dev = db.devices()[0].id;
    const auto run = db.begin_run(test::run_info());
    std::vector<BenchResult> bench;
    for (DType t : types)
      for (Op op : ops) {
        const std::string id =
            fmt::format("vectorized.b256.u4.single_pass.{}.{}", dtype_name(t), op_name(op));
        const auto m = db.insert_measurement(test::measurement(run, dev, id, 1 << 20, 5.5, t, op));
        Winner w = winner(1, 1 << 30, m, id, run);
        w.dtype = t;
        w.op = op;
        db.replace_winners(dev, t, op, std::vector<Winner>{w});
        bench.push_back(test::cub_bench_result(t, op, 5.9));
      }
    db.end_run(run, RunStatus::finished);
    record_bench_run(db, test::h100(), test::lab_bench_info(), bench);
  }
  const std::string text = Json::parse(export_of(dir / "a.db")).dump();
  EXPECT_NE(text.find(fmt::format("\"schema_version\":{}", schema_version)), std::string::npos);
  // Written by their names, three times each (measurement, winner, bench result).
  for (DType t : types)
    for (Op op : ops) {
      const std::string pair =
          fmt::format("\"dtype\":\"{}\",\"op\":\"{}\"", dtype_name(t), op_name(op));
      EXPECT_EQ(occurrences(text, pair), 3) << pair << "\n" << text;
    }
  {
    Database fresh = Database::open_writer(dir / "b.db");
    import_dataset(fresh, dataset_from_json(Json::parse(text), dir / "a.json"));
    for (DType t : types)
      for (Op op : ops) expect_one_row_in_each_table(fresh, t, op);
    expect_exports_again_as(fresh, text);
  }
  // The same rows of f16 or bf16 are refused by import, naming the file, the member and the
  // pair: the first occurrence of i32 argmin is the measurement's, the second the winner's, the
  // third the bench result's (the document's order).
  const fs::path file = dir / "in.json";
  const std::string i32_argmin = "\"dtype\":\"i32\",\"op\":\"argmin\"";
  auto with = [&](int occurrence, const std::string& replacement) {
    return replace_occurrence(text, i32_argmin, occurrence, replacement);
  };
  const char* members[] = {"$.measurements[", "$.winners[", "$.bench_runs[0].results["};
  for (DType t : {DType::f16, DType::bf16}) {
    const std::string why = fmt::format(
        ".op: the operator 'argmin' is defined for i32, u32, i64, u64, f32 and f64 only, not for "
        "{}",
        dtype_name(t));
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + members[i]);
      const std::string pair = fmt::format("\"dtype\":\"{}\",\"op\":\"argmin\"", dtype_name(t));
      expect_import_refused(dir / "target.db", with(i, pair), file, members[i], why);
    }
  }
  // An operator this binary does not know is refused with the list of those it does.
  expect_import_refused(dir / "target.db", with(0, "\"dtype\":\"i32\",\"op\":\"argmid\""), file,
                        "$.measurements[",
                        ".op: 'argmid' is not one of sum, min, max, exact_sum, wide_sum, argmin, "
                        "argmax");
}

TEST(Export, ExactSumRowsOfHalfTypesRoundTripAndIntegerOnesAreRefused) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "h");
  const DType types[] = {DType::f16, DType::bf16};
  {
    // Schema version 10: an exact_sum measurement, winner and bench result of f16 and of bf16;
    // the dtype is the element type, not the float the sum is rounded to.
    Database db = Database::open_writer(dir / "a.db");
    const auto dev = db.devices()[0].id;
    const auto run = db.begin_run(test::run_info());
    std::vector<BenchResult> bench;
    for (DType t : types) {
      const std::string id = fmt::format("exact.b512.u2.single_pass.{}.exact_sum", dtype_name(t));
      const auto m =
          db.insert_measurement(test::measurement(run, dev, id, 1 << 20, 6.5, t, Op::exact_sum));
      Winner w = winner(1, 1 << 30, m, id, run);
      w.dtype = t;
      w.op = Op::exact_sum;
      db.replace_winners(dev, t, Op::exact_sum, std::vector<Winner>{w});
      bench.push_back(test::cub_bench_result(t, Op::exact_sum, 6.9));
    }
    db.end_run(run, RunStatus::finished);
    record_bench_run(db, test::h100(), test::lab_bench_info(), bench);
  }
  const std::string text = Json::parse(export_of(dir / "a.db")).dump();
  EXPECT_NE(text.find(fmt::format("\"schema_version\":{}", schema_version)), std::string::npos);
  // Written by their names, three times each (measurement, winner, bench result).
  for (DType t : types) {
    const std::string pair = fmt::format("\"dtype\":\"{}\",\"op\":\"exact_sum\"", dtype_name(t));
    EXPECT_EQ(occurrences(text, pair), 3) << pair << "\n" << text;
  }
  {
    Database fresh = Database::open_writer(dir / "b.db");
    import_dataset(fresh, dataset_from_json(Json::parse(text), dir / "a.json"));
    for (DType t : types) expect_one_row_in_each_table(fresh, t, Op::exact_sum);
    expect_exports_again_as(fresh, text);
  }
  // The same rows of an integer type are refused by import, naming the file, the member and the
  // pair: the first occurrence of f16 exact_sum is the measurement's, the second the winner's,
  // the third the bench result's (the document's order).
  const fs::path file = dir / "in.json";
  const std::string f16_exact = "\"dtype\":\"f16\",\"op\":\"exact_sum\"";
  const char* members[] = {"$.measurements[", "$.winners[", "$.bench_runs[0].results["};
  for (DType t : {DType::i32, DType::u64}) {
    const std::string why = fmt::format(
        ".op: the operator 'exact_sum' is defined for f32, f64, f16 and bf16 only, not for {}",
        dtype_name(t));
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + members[i]);
      const std::string pair = fmt::format("\"dtype\":\"{}\",\"op\":\"exact_sum\"", dtype_name(t));
      expect_import_refused(dir / "target.db", replace_occurrence(text, f16_exact, i, pair), file,
                            members[i], why);
    }
  }
}

TEST(Export, AMeasurementsTimingIsTheRecordsOneMapping) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "h");
  Database db = Database::open_reader(dir / "a.db");
  const Dataset d = read_dataset(db);
  const Json doc = dataset_to_json(d);
  const Json& first = doc.find("measurements")->as_array().at(0);
  const Measurement& m = d.measurements.begin()->second.m;
  ASSERT_EQ(first.find("kernel_id")->as_string(), m.kernel_id);
  Json timing = Json::object();
  append_timing(timing, m);
  EXPECT_EQ(timing.as_object().size(), 7u);
  // In the export's order, between the outcome and the error.
  const Json::Object& members = first.as_object();
  auto at = [&](const std::string& key) {
    return std::find_if(members.begin(), members.end(),
                        [&](const auto& kv) { return kv.first == key; }) -
           members.begin();
  };
  std::ptrdiff_t place = at("outcome");
  for (const auto& [key, value] : timing.as_object()) {
    EXPECT_EQ(at(key), ++place) << key;
    EXPECT_EQ(*first.find(key), value) << key;
  }
  EXPECT_EQ(at("error"), place + 1);
  EXPECT_EQ(*m.sm_clock_mhz, 1980);
  EXPECT_EQ(m.gbps, gbps_of(512 * 4, 5.0));
}

TEST(Import, IsIdempotentAndKeepsExistingIds) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "a");
  make_db(dir / "b.db", test::h200(), k_smem, 1, 1 << 20, 7.0, "b");
  Dataset a;
  {
    Database db = Database::open_reader(dir / "a.db");
    a = read_dataset(db);
  }
  add_provenance(a, (dir / "a.json").string(), "import");
  Database b = Database::open_writer(dir / "b.db");
  const auto before = b.measurements();
  MergeStats s1 = import_dataset(b, a);
  EXPECT_EQ(s1.devices_added, 1);
  EXPECT_EQ(s1.runs_added, 1);
  EXPECT_EQ(s1.measurements_added, 2);
  EXPECT_EQ(s1.winner_groups_changed, 1);
  const auto after = b.measurements();
  ASSERT_EQ(after.size(), 4u);
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i].id, before[i].id);
  MergeStats s2 = import_dataset(b, a);
  EXPECT_EQ(s2.devices_added + s2.runs_added + s2.measurements_added + s2.winner_groups_changed, 0);
  EXPECT_EQ(b.counts().winners, 2);
  EXPECT_EQ(b.connection().query_int("SELECT count(*) FROM run_sources"), 1);
  EXPECT_EQ(b.connection().query_text("SELECT kind FROM sources"), "import");
}

TEST(Merge, WinnersConflictsGoToTheLowerMedianAndTiesToTheSmallerId) {
  TempDir dir;
  // A: shuffle wins [1, 1000] in 5 us; B: smem wins [500, 2000] in 4 us; C ties B on [1500, 3000].
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  make_db(dir / "b.db", test::h100(), k_smem, 500, 2000, 4.0, "b");
  make_db(dir / "c.db", test::h100(), k_shuffle, 1500, 3000, 4.0, "c");
  MergeStats s = merge_files({dir / "a.db", dir / "b.db", dir / "c.db"}, dir / "out.db");
  EXPECT_GT(s.winner_conflicts, 0);
  Database out = Database::open_reader(dir / "out.db");
  auto ws = out.winners();
  ASSERT_EQ(ws.size(), 3u);
  EXPECT_EQ(ws[0].kernel_id, k_shuffle);  // [1, 499] only A claims
  EXPECT_EQ(ws[0].n_lo, 1u);
  EXPECT_EQ(ws[0].n_hi, 499u);
  EXPECT_EQ(*ws[0].source, (dir / "a.db").string());
  // [500, 1000]: B beats A (4 < 5 us at n = 512). [1500, 2000]: B and C tie at 4 us, and
  // "smem..." < "warp_shuffle...", so B keeps it; B's pieces join up into one interval.
  EXPECT_EQ(ws[1].n_lo, 500u);
  EXPECT_EQ(ws[1].n_hi, 2000u);
  EXPECT_EQ(ws[1].kernel_id, k_smem);
  EXPECT_EQ(*ws[1].source, (dir / "b.db").string());
  EXPECT_EQ(ws[2].n_lo, 2001u);  // only C claims the rest
  EXPECT_EQ(ws[2].n_hi, 3000u);
  EXPECT_EQ(ws[2].kernel_id, k_shuffle);
}

/// A database with one finished run on the H100 in which \p id wins [lo, hi] with median
/// \p median at n = 512, p10..p90 = median x (1 -+ spread / 2) over \p repeats runs.
void make_noisy_db(const fs::path& path, const std::string& id, std::uint64_t lo, std::uint64_t hi,
                   double median, double spread, int repeats) {
  Database db = Database::open_writer(path);
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(test::run_info());
  Measurement m = test::measurement(run, dev, id, 512, median);
  m.p10_us = median * (1 - spread / 2);
  m.p90_us = median * (1 + spread / 2);
  m.repeats = repeats;
  const auto mid = db.insert_measurement(m);
  db.replace_winners(dev, DType::f32, Op::sum, std::vector<Winner>{winner(lo, hi, mid, id, run)});
  db.end_run(run, RunStatus::finished);
}

std::string winner_at(const fs::path& db_path, std::uint64_t n) {
  Database db = Database::open_reader(db_path);
  for (const WinnerRecord& w : db.winners())
    if (w.n_lo <= n && n <= w.n_hi) return w.kernel_id;
  return "";
}

TEST(Merge, NoiseToleranceIsTwoStandardErrorsOfTheMediansDifferenceClamped) {
  Measurement a = test::measurement(1, 1, k_smem, 512, 10.0);
  a.p10_us = 9.0;
  a.p90_us = 11.0;  // a 20 % spread over 100 runs: 0.489 x 0.2 / 10 = 0.98 %
  a.repeats = 100;
  EXPECT_NEAR(relative_median_error(a), 0.0097796, 1e-6);
  Measurement b = a;
  b.repeats = 10000;  // 0.098 %
  Measurement tight = a;
  tight.p10_us = tight.p90_us = 10.0;
  EXPECT_EQ(relative_median_error(tight), 0.0);
  EXPECT_DOUBLE_EQ(noise_tolerance(tight, tight), merge_noise_floor);  // never below 0.5 %
  EXPECT_DOUBLE_EQ(noise_tolerance(a, a), merge_noise_ceiling);        // 2.8 %, clamped to 1 %
  Measurement c = b;
  c.p10_us = 9.75;
  c.p90_us = 10.25;  // 5 % over 400 runs: 0.12 %; with b: 2 x 0.158 % = 0.32 % -> 0.5 %
  c.repeats = 400;
  EXPECT_DOUBLE_EQ(noise_tolerance(b, c), merge_noise_floor);
  Measurement d = c;
  d.repeats = 64;  // 0.31 %; with c: 2 x 0.33 % = 0.66 %, inside the clamp
  EXPECT_NEAR(noise_tolerance(c, d), 2 * std::sqrt(0.0012224 * 0.0012224 + 0.0030561 * 0.0030561),
              1e-6);
  d.repeats = 16;  // 0.61 %; with c: 1.25 % -> 1 %
  EXPECT_DOUBLE_EQ(noise_tolerance(c, d), merge_noise_ceiling);
  // Times per element are compared: 10 us at 512 and 20.1 us at 1024 differ by 0.5 %.
  Measurement e = tight, f = tight;
  f.n = 1024;
  f.median_us = 20.09;
  EXPECT_TRUE(within_noise(e, f));
  f.median_us = 20.11;
  EXPECT_FALSE(within_noise(e, f));
}

TEST(Merge, AFasterWinnerReplacesAnotherOnlyOutsideTheNoise) {
  TempDir dir;
  // Tight evidence (1 % spread, 100 runs: tolerance 0.5 %). shuffle is 0.4 % faster than smem:
  // inside the noise, so the smaller id (smem) keeps [1, 1000].
  make_noisy_db(dir / "a.db", k_smem, 1, 1000, 5.02, 0.01, 100);
  make_noisy_db(dir / "b.db", k_shuffle, 1, 1000, 5.00, 0.01, 100);
  merge_files({dir / "a.db", dir / "b.db"}, dir / "ab.db");
  EXPECT_EQ(winner_at(dir / "ab.db", 500), k_smem);
  // 0.8 % faster is outside a 0.5 % tolerance: shuffle wins.
  make_noisy_db(dir / "c.db", k_shuffle, 1, 1000, 4.98, 0.01, 100);
  merge_files({dir / "a.db", dir / "c.db"}, dir / "ac.db");
  EXPECT_EQ(winner_at(dir / "ac.db", 500), k_shuffle);
  // The same 0.8 % between noisy measurements (20 % spread over 20 runs: tolerance 1 %) is
  // inside the noise: smem keeps it.
  make_noisy_db(dir / "d.db", k_smem, 1, 1000, 5.02, 0.2, 20);
  make_noisy_db(dir / "e.db", k_shuffle, 1, 1000, 4.98, 0.2, 20);
  merge_files({dir / "e.db", dir / "d.db"}, dir / "de.db");
  EXPECT_EQ(winner_at(dir / "de.db", 500), k_smem);
  // Beyond the 1 % ceiling the faster wins however noisy both are.
  make_noisy_db(dir / "f.db", k_shuffle, 1, 1000, 4.96, 0.2, 20);
  merge_files({dir / "d.db", dir / "f.db"}, dir / "df.db");
  EXPECT_EQ(winner_at(dir / "df.db", 500), k_shuffle);
}

TEST(Merge, AChainOfTiesIsDecidedOverAllInputsInAnyOrder) {
  TempDir dir;
  // shuffle 5.00, vec 5.04 (0.8 % slower), smem 5.08 (1.6 % slower than shuffle, 0.8 % than
  // vec), all with a 1 % tolerance. "Within noise" is not transitive, so deciding input by input
  // would depend on the order: shuffle, vec, smem gives vec (a tie) then smem (a tie); vec, smem,
  // shuffle gives smem (a tie) then shuffle (1.6 % faster). Over the set: shuffle is the fastest,
  // vec is within its noise and smem is not, so vec (the smaller id of the tie) wins, whatever the
  // order.
  make_noisy_db(dir / "a.db", k_shuffle, 1, 1000, 5.00, 0.2, 20);
  make_noisy_db(dir / "b.db", k_vec, 1, 1000, 5.04, 0.2, 20);
  make_noisy_db(dir / "c.db", k_smem, 1, 1000, 5.08, 0.2, 20);
  std::vector<fs::path> inputs = {dir / "a.db", dir / "b.db", dir / "c.db"};
  std::vector<std::string> files;
  int k = 0;
  do {
    const fs::path out = dir / ("out" + std::to_string(k++) + ".db");
    merge_files(inputs, out);
    EXPECT_EQ(winner_at(out, 500), k_vec);
    files.push_back(test::read_file(out));
  } while (std::next_permutation(inputs.begin(), inputs.end()));
  ASSERT_EQ(files.size(), 6u);
  for (const std::string& f : files) EXPECT_EQ(f, files[0]);
}

TEST(Merge, SameInputsInAnyOrderGiveIdenticalFiles) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  make_db(dir / "b.db", test::h100(), k_smem, 500, 2000, 4.0, "b");
  make_db(dir / "c.db", test::h200(), k_vec, 1, 1 << 30, 9.0, "c");
  // d.db shares a's run (imported) and adds its own.
  make_db(dir / "d.db", test::h200(), k_shuffle, 1 << 20, 1 << 21, 8.0, "d");
  {
    Database a = Database::open_reader(dir / "a.db");
    Database d = Database::open_writer(dir / "d.db");
    Dataset ds = read_dataset(a);
    add_provenance(ds, "a.json", "import");
    import_dataset(d, ds);
  }
  std::vector<fs::path> inputs = {dir / "a.db", dir / "b.db", dir / "c.db", dir / "d.db"};
  std::vector<std::string> files;
  int k = 0;
  std::sort(inputs.begin(), inputs.end());
  do {
    const fs::path out = dir / ("out" + std::to_string(k++) + ".db");
    merge_files(inputs, out);
    files.push_back(test::read_file(out));
  } while (std::next_permutation(inputs.begin(), inputs.end()) && k < 6);
  for (const std::string& f : files) EXPECT_EQ(f, files[0]);  // byte for byte

  Database out = Database::open_reader(dir / "out0.db");
  const Counts n = out.counts();
  EXPECT_EQ(n.devices, 2);
  EXPECT_EQ(n.runs, 4);  // a's run once, though it is in a.db and d.db
  EXPECT_EQ(n.measurements, 8);
  // Provenance: every input and the import inside d.db; a's run was found in a.db and d.db.
  EXPECT_EQ(out.connection().query_int("SELECT count(*) FROM sources"), 5);
  Statement st = out.connection().prepare(
      "SELECT count(*) FROM run_sources x JOIN runs r ON r.id = x.run_id WHERE r.host = 'a'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.column_int(0), 3);  // a.db, d.db, a.json
  // Shippable: journal mode DELETE (header bytes 18 and 19 are 1), no -wal beside it.
  const std::string bytes = files[0];
  EXPECT_EQ(bytes[18], 1);
  EXPECT_EQ(bytes[19], 1);
  EXPECT_EQ(out.connection().query_text("PRAGMA quick_check"), "ok");
  // Merging the merge with one of its inputs changes nothing but the provenance.
  merge_files({dir / "out0.db", dir / "a.db"}, dir / "again.db");
  Database again = Database::open_reader(dir / "again.db");
  EXPECT_EQ(again.counts().measurements, n.measurements);
  EXPECT_EQ(again.counts().winners, n.winners);
}

TEST(Merge, RefusesAnExistingOutputAndBadInputs) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  const std::string a_before = test::read_file(dir / "a.db");
  try {
    merge_files({dir / "a.db"}, dir / "a.db");
    ADD_FAILURE();
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::exists);
    EXPECT_EQ(e.exit_code(), exit_code::usage);
  }
  EXPECT_EQ(test::read_file(dir / "a.db"), a_before);
  test::copy_fixture("not_sqlite.db", dir);
  try {
    merge_files({dir / "a.db", dir / "not_sqlite.db"}, dir / "out.db");
    ADD_FAILURE();
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::not_sqlite);
    EXPECT_NE(std::string(e.what()).find((dir / "not_sqlite.db").string()), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(dir / "out.db"));
  EXPECT_THROW(merge_files({dir / "a.db"}, dir / "nope" / "out.db"), DbError);
}

TEST(Merge, NamesTheWinnerWhoseEvidenceRowIsMissing) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  make_db(dir / "b.db", test::h100(), k_shuffle, 1, 1000, 5.0, "b");
  std::string device_key;
  std::int64_t evidence = 0, runner_up = 0;
  {
    Database db = Database::open_reader(dir / "a.db");
    device_key = db.devices().at(0).key;
    evidence = db.winners().at(0).measurement_id;
    runner_up = db.winners().at(0).runner_up_measurement_id.value();
  }
  // The schema's foreign keys forbid this; an edit with them off (the sqlite3 shell's default)
  // makes it.
  auto delete_measurement = [](const fs::path& path, std::int64_t id) {
    Connection c = Connection::open(path, OpenMode::read_write);
    c.exec("PRAGMA foreign_keys = OFF");
    c.exec("DELETE FROM measurements WHERE id = " + std::to_string(id));
  };
  delete_measurement(dir / "a.db", evidence);
  // The winner is skipped by name (with its run's other rows kept), not read as data and not
  // taking the whole merge down with it; the other input's winner is merged.
  const MergeStats stats = merge_files({dir / "b.db", dir / "a.db"}, dir / "out.db");
  ASSERT_EQ(stats.skipped.size(), 1u);
  EXPECT_NE(stats.skipped[0].find(quoted(dir / "a.db") + ": winners id "), std::string::npos)
      << stats.skipped[0];
  EXPECT_NE(stats.skipped[0].find(": its evidence (measurement id " + std::to_string(evidence) +
                                  ") is skipped or missing"),
            std::string::npos)
      << stats.skipped[0];
  {
    Database out = Database::open_reader(dir / "out.db");
    EXPECT_EQ(out.counts().winners, 1);
    EXPECT_EQ(out.winners().at(0).kernel_id, k_shuffle);
  }
  // A missing runner-up row is named the same way, by export as well as merge (both read the
  // whole database).
  delete_measurement(dir / "b.db", runner_up);
  Database b = Database::open_reader(dir / "b.db");
  const Dataset d = read_dataset(b);
  EXPECT_TRUE(d.winners.empty());
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_NE(d.skipped[0].find(": its runner-up (measurement id " + std::to_string(runner_up) +
                              ") is skipped or missing"),
            std::string::npos)
      << d.skipped[0];
  (void)device_key;
}

// --- the row rules (db/row_rules.hpp) -----------------------------------------------------------

/// Runs \p sql on \p path as the sqlite3 shell would with CHECK constraints off: a row that
/// breaks the schema's rules, which SQLite does not see on a read-only connection.
void damage(const fs::path& path, const std::string& sql) {
  Connection c = Connection::open(path, OpenMode::read_write);
  c.exec("PRAGMA ignore_check_constraints = ON; " + sql);
}

bool has_finding(const std::vector<RowFinding>& fs, const std::string& text) {
  for (const RowFinding& f : fs)
    if (f.text().find(text) != std::string::npos) return true;
  return false;
}

std::string all_text(const std::vector<RowFinding>& fs) {
  std::string s;
  for (const RowFinding& f : fs) s += f.text() + "\n";
  return s;
}

// db check said "ok" on every one of these (it opens the file read-only, where SQLite does not
// check CHECK constraints): each is now a named finding (table, row id, column, value, why).
TEST(Check, NamesEveryRowThatBreaksTheRowRules) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  make_db(dir / "a.db", test::h100(), k_smem, 1, 1000, 4.0, "b", L2Mode::warm);
  {
    Database db = Database::open_reader(dir / "a.db");
    const CheckReport clean = check_database(db, {k_shuffle, k_smem, k_vec}, false);
    EXPECT_TRUE(clean.ok()) << all_text(clean.row_findings);
  }
  damage(dir / "a.db",
         "UPDATE winners SET n_lo = 2000 WHERE l2_mode = 'cold';"
         "UPDATE winners SET n_lo = -3, dtype = 'f128' WHERE l2_mode = 'warm';"
         "UPDATE measurements SET median_us = -1.0 WHERE id = 1;"
         "UPDATE measurements SET p90_us = 9e999, repeats = 'many' WHERE id = 2;"
         "UPDATE measurements SET median_us = 0 WHERE id = 3;"
         "UPDATE runs SET host = replace(hex(zeroblob(300)), '00', 'h') WHERE id = 1;");
  for (const bool full : {false, true}) {
    Database db = Database::open_reader(dir / "a.db");
    const CheckReport r = check_database(db, {k_shuffle, k_smem, k_vec}, full);
    EXPECT_TRUE(r.sound());
    EXPECT_FALSE(r.ok());
    const auto& f = r.row_findings;
    EXPECT_TRUE(has_finding(f, "winners id 1: n_lo/n_hi = 2000/1000: n_lo is larger than n_hi"))
        << all_text(f);
    EXPECT_TRUE(has_finding(f,
                            "winners id 2: dtype = 'f128': is not an element type of this "
                            "binary (i32, u32, i64, u64, f32, f64, f16, bf16)"))
        << all_text(f);
    EXPECT_TRUE(has_finding(f, "winners id 2: n_lo = -3: must be at least 0")) << all_text(f);
    EXPECT_TRUE(has_finding(f,
                            "measurements id 1: median_us = -1: must be more than 0 "
                            "microseconds"))
        << all_text(f);
    EXPECT_TRUE(has_finding(f, "measurements id 2: p90_us = inf: must be a finite number"))
        << all_text(f);
    EXPECT_TRUE(has_finding(f, "measurements id 2: repeats = 'many': must be an integer"))
        << all_text(f);
    EXPECT_TRUE(has_finding(f, "measurements id 3: median_us = 0: must be more than 0"))
        << all_text(f);
    EXPECT_TRUE(has_finding(f, "runs id 1: host = 'hhhh")) << all_text(f);
    EXPECT_TRUE(has_finding(f, "(300 bytes): is longer than 256 bytes (300 bytes)")) << all_text(f);
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(f[0].table, "runs");
    EXPECT_EQ(f[0].id, 1);
    EXPECT_EQ(f[0].column, "host");
  }
}

// Text that is not UTF-8 made an export that is not JSON (RFC 8259): the validator names it, export
// leaves the row out, and import refuses such a string.
TEST(Check, TextThatIsNotUtf8IsNamed) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  damage(dir / "a.db", "UPDATE runs SET host = CAST(x'41ff42' AS TEXT)");
  Database db = Database::open_reader(dir / "a.db");
  const CheckReport r = check_database(db, {k_shuffle, k_vec}, false);
  EXPECT_TRUE(has_finding(r.row_findings,
                          "runs id 1: host = 'A\xff"
                          "B': is not valid UTF-8"))
      << all_text(r.row_findings);
  EXPECT_FALSE(read_dataset(db).skipped.empty());
  EXPECT_EQ(bad_text("A\xff"
                     "B",
                     max_name_bytes, false),
            "is not valid UTF-8");
  EXPECT_EQ(bad_text("\xc3\xa9\xf0\x9f\x9a\x80", max_name_bytes, false), std::nullopt);
  EXPECT_EQ(bad_text("\xc0\xaf", max_name_bytes, false), "is not valid UTF-8");      // overlong
  EXPECT_EQ(bad_text("\xed\xa0\x80", max_name_bytes, false), "is not valid UTF-8");  // surrogate
}

// Export and merge skip such rows by name instead of reading them as data: a winner of an element
// type this binary does not know was exported as i32 (value_or in db/columns.cpp), and merge lost
// it or kept it as i32.
TEST(Merge, RowsThatBreakTheRulesAreSkippedByNameNeverRewritten) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  make_db(dir / "b.db", test::h200(), k_smem, 1, 1000, 4.0, "b");
  damage(dir / "a.db",
         "UPDATE winners SET dtype = 'f128';"
         "UPDATE measurements SET dtype = 'f128' WHERE kernel_id = '" +
             k_shuffle + "'");
  {
    Database a = Database::open_reader(dir / "a.db");
    const Dataset d = read_dataset(a);
    EXPECT_TRUE(d.winners.empty());
    EXPECT_EQ(d.measurements.size(), 1u);  // the runner-up, an f32 row, is kept
    ASSERT_EQ(d.skipped.size(), 2u);
    EXPECT_NE(d.skipped[0].find("measurements id 1: dtype = 'f128': is not an element type"),
              std::string::npos)
        << d.skipped[0];
    EXPECT_NE(d.skipped[1].find("winners id 1: dtype = 'f128'"), std::string::npos) << d.skipped[1];
    EXPECT_EQ(dataset_to_json(d).dump().find("\"i32\""), std::string::npos);
  }
  const MergeStats s = merge_files({dir / "a.db", dir / "b.db"}, dir / "m.db");
  EXPECT_EQ(s.skipped.size(), 2u);
  Database m = Database::open_reader(dir / "m.db");
  ASSERT_EQ(m.counts().winners, 1);
  EXPECT_EQ(m.winners().at(0).kernel_id, k_smem);
  EXPECT_EQ(m.connection().query_int("SELECT count(*) FROM measurements WHERE dtype <> 'f32'"), 0);
  // An import into a database with such rows is refused, naming them: they would be taken for
  // absent and written again.
  const Dataset b = [&] {
    Database db = Database::open_reader(dir / "b.db");
    return read_dataset(db);
  }();
  Database a = Database::open_writer(dir / "a.db");
  try {
    import_dataset(a, b);
    ADD_FAILURE() << "imported into a database with rows that break the rules";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::invalid_rows);
    EXPECT_EQ(e.exit_code(), exit_code::db_check_failed);
    EXPECT_NE(std::string(e.what()).find("2 row(s) break the row rules or name such a row (the "
                                         "first: measurements id 1: dtype = 'f128'"),
              std::string::npos)
        << e.what();
  }
}

// Import refused nothing of this kind: an export with every median_us = -1.0 replaced 770 rows.
TEST(Import, RefusesZeroNegativeAndNonFiniteTimesAndOverlongNames) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "h");
  const std::string text = Json::parse(export_of(dir / "a.db")).dump();
  const fs::path file = dir / "in.json";
  auto refused = [&](const std::string& t, const std::string& words) {
    try {
      dataset_from_json(Json::parse(t), file);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const DbError& e) {
      EXPECT_EQ(e.problem(), Problem::invalid_data);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused(replace_occurrence(text, "\"median_us\":5.0", 0, "\"median_us\":-1.0"),
          "$.measurements[0].median_us: must be more than 0 microseconds");
  refused(replace_occurrence(text, "\"median_us\":5.0", 0, "\"median_us\":0"),
          "$.measurements[0].median_us: must be more than 0 microseconds");
  refused(replace_occurrence(text, "\"p10_us\":", 0, "\"p10_us\":-0.5,\"x\":"),
          "$.measurements[0].p10_us: must be more than 0 microseconds");
  refused(replace_occurrence(text, "\"host\":\"h\"", 0,
                             "\"host\":\"" + std::string(300, 'h') + "\""),
          "$.runs[0].host: is longer than 256 bytes (300 bytes)");
  refused(replace_occurrence(text, "\"kernel_id\":\"" + k_shuffle, 0,
                             "\"kernel_id\":\"" + std::string(5000, 'k') + k_shuffle),
          "$.measurements[0].kernel_id: is longer than 256 bytes");
}

// Two copies of one measurement (run, seq) that differ: the better-evidenced copy is kept (an ok
// outcome, more repeats, lower spread, newer), never the one whose JSON sorts first.
TEST(Import, AConflictBetweenTwoCopiesIsDecidedByEvidence) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "h");
  const std::string text = Json::parse(export_of(dir / "a.db")).dump();
  auto stored_median = [&] {
    Database db = Database::open_reader(dir / "a.db");
    return db.measurements().at(0).median_us.value();
  };
  // A copy that claims 1.0 us (it sorts first) from 2 repeats: the 20 repeats stay.
  std::string worse = replace_occurrence(text, "\"median_us\":5.0", 0, "\"median_us\":1.0");
  worse = replace_occurrence(worse, "\"repeats\":20", 0, "\"repeats\":2");
  {
    Database db = Database::open_writer(dir / "a.db");
    const MergeStats s = import_dataset(db, dataset_from_json(Json::parse(worse), dir / "w"));
    EXPECT_EQ(s.measurement_conflicts, 1);
  }
  EXPECT_DOUBLE_EQ(stored_median(), 5.0);
  // A copy of 200 repeats (slower, 9.0 us: it sorts last) replaces it.
  std::string better = replace_occurrence(text, "\"median_us\":5.0", 0, "\"median_us\":9.0");
  better = replace_occurrence(better, "\"repeats\":20", 0, "\"repeats\":200");
  {
    Database db = Database::open_writer(dir / "a.db");
    import_dataset(db, dataset_from_json(Json::parse(better), dir / "b"));
  }
  EXPECT_DOUBLE_EQ(stored_median(), 9.0);
}

// --- L2 modes -----------------------------------------------------------------------------------

TEST(Export, WinnersOfBothL2ModesRoundTrip) {
  TempDir dir;
  // Cold and warm winners of the same sizes in one database.
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "cold-host");
  make_db(dir / "a.db", test::h100(), k_smem, 1, 4096, 3.0, "warm-host", L2Mode::warm);
  const std::string text = export_of(dir / "a.db");
  const Json doc = Json::parse(text);
  const auto& ws = doc.find("winners")->as_array();
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].find("l2_mode")->as_string(), "cold");  // sorted cold first
  EXPECT_EQ(ws[1].find("l2_mode")->as_string(), "warm");
  EXPECT_EQ(ws[1].find("kernel_id")->as_string(), k_smem);

  // Import into a fresh database: the same winners, modes included.
  Database fresh = Database::open_writer(dir / "b.db");
  MergeStats s = import_dataset(fresh, dataset_from_json(doc, dir / "a.json"));
  EXPECT_EQ(s.winner_groups_changed, 2);  // (h100, f32, sum) cold and warm
  EXPECT_EQ(s.winner_conflicts, 0);
  // The same file again: the same winners from another source are no conflict.
  const MergeStats again = import_dataset(fresh, dataset_from_json(doc, dir / "a2.json"));
  EXPECT_EQ(again.winner_conflicts, 0);
  EXPECT_EQ(again.winner_groups_changed, 0);
  Dataset back = read_dataset(fresh);
  for (auto& [uuid, r] : back.runs) r.sources.clear();
  back.sources.clear();
  for (auto& w : back.winners) w.source.reset();
  EXPECT_EQ(dataset_to_json(back).dump(2), text);

  // A merge keeps both: a warm winner does not compete with a cold one.
  merge_files({dir / "a.db"}, dir / "merged.db");
  Database merged = Database::open_reader(dir / "merged.db");
  const auto mw = merged.winners();
  ASSERT_EQ(mw.size(), 2u);
  EXPECT_EQ(mw[0].l2_mode, L2Mode::cold);
  EXPECT_EQ(mw[0].kernel_id, k_shuffle);
  EXPECT_EQ(mw[1].l2_mode, L2Mode::warm);
  EXPECT_EQ(mw[1].kernel_id, k_smem);
  EXPECT_EQ(mw[1].n_lo, 1u);
  EXPECT_EQ(mw[1].n_hi, 4096u);
}

TEST(Export, AnExportWithoutWinnerModesImportsAsTheirEvidencesMode) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "a");
  make_db(dir / "w.db", test::h200(), k_smem, 1, 4096, 3.0, "w", L2Mode::warm);
  for (const char* name : {"a.db", "w.db"}) {
    SCOPED_TRACE(name);
    const Json old = without_winner_modes(Json::parse(export_of(dir / name)));
    ASSERT_EQ(old.dump().find("\"l2_mode\":\"cold\",\"n_lo\""), std::string::npos);
    Database db = Database::open_writer(dir / ("imported-" + std::string(name)));
    import_dataset(db, dataset_from_json(old, dir / "old.json"));
    const auto ws = db.winners();
    ASSERT_EQ(ws.size(), 1u);
    // An older export's winners are cold (every tuning run was, by default); a winner whose
    // evidence is warm takes warm, as the migration to schema version 3 decides it.
    EXPECT_EQ(ws[0].l2_mode, std::string(name) == "a.db" ? L2Mode::cold : L2Mode::warm);
    EXPECT_EQ(db.find_measurement(ws[0].measurement_id)->l2_mode, ws[0].l2_mode);
  }
}

TEST(Export, ImportRefusesAWinnerOfTheOtherModeThanItsEvidenceAndOverlapsWithinAMode) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 4096, 5.0, "a");
  const std::string t = Json::parse(export_of(dir / "a.db")).dump();
  auto expect_bad = [&](const std::string& text, const std::string& words) {
    Database db = Database::open_writer(dir / "target.db");
    try {
      import_dataset(db, dataset_from_json(Json::parse(text), dir / "in.json"));
      ADD_FAILURE() << "accepted: " << words;
    } catch (const DbError& e) {
      EXPECT_EQ(e.problem(), Problem::invalid_data) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_EQ(db.counts().winners, 0);
  };
  const std::string cold = "\"l2_mode\":\"cold\",\"n_lo\"";
  ASSERT_NE(t.find(cold), std::string::npos) << t;
  std::string warm = t;
  warm.replace(t.find(cold), cold.size(), "\"l2_mode\":\"warm\",\"n_lo\"");
  expect_bad(warm, "$.winners[0].measurement: a cold-L2 measurement, but the winner is warm");
  std::string hot = t;
  hot.replace(t.find(cold), cold.size(), "\"l2_mode\":\"hot\",\"n_lo\"");
  expect_bad(hot, "$.winners[0].l2_mode: 'hot' is not one of cold, warm");

  // Two cold winners of the same sizes overlap; a cold and a warm one do not.
  make_db(dir / "a.db", test::h100(), k_smem, 1, 4096, 3.0, "w", L2Mode::warm);
  const Json both = Json::parse(export_of(dir / "a.db"));
  std::string twice = both.dump();
  const std::string warm_mode = "\"l2_mode\":\"warm\",\"n_lo\"";
  ASSERT_NE(twice.find(warm_mode), std::string::npos);
  {
    Database db = Database::open_writer(dir / "both.db");
    import_dataset(db, dataset_from_json(both, dir / "both.json"));
    EXPECT_EQ(db.counts().winners, 2);
  }
  // The warm winner claims cold: its evidence check fails first, so make the evidence cold too.
  const std::string warm_measurement = "\"n\":512,\"l2_mode\":\"warm\"";
  std::size_t pos;
  while ((pos = twice.find(warm_measurement)) != std::string::npos)
    twice.replace(pos, warm_measurement.size(), "\"n\":512,\"l2_mode\":\"cold\"");
  twice.replace(twice.find(warm_mode), warm_mode.size(), cold);
  expect_bad(twice, "overlapping intervals for device " + test::h100().key() + " f32 sum cold");
}

TEST(Merge, WinnersCompeteOnlyWithinTheirL2Mode) {
  TempDir dir;
  // A: shuffle wins [1, 1000] cold in 5 us; B: smem wins [500, 2000] warm in 4 us.
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  make_db(dir / "b.db", test::h100(), k_smem, 500, 2000, 4.0, "b", L2Mode::warm);
  MergeStats s = merge_files({dir / "a.db", dir / "b.db"}, dir / "out.db");
  EXPECT_EQ(s.winner_conflicts, 0);
  Database out = Database::open_reader(dir / "out.db");
  const auto ws = out.winners();
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].l2_mode, L2Mode::cold);  // untouched by the faster warm winner
  EXPECT_EQ(ws[0].n_lo, 1u);
  EXPECT_EQ(ws[0].n_hi, 1000u);
  EXPECT_EQ(ws[1].l2_mode, L2Mode::warm);
  EXPECT_EQ(ws[1].n_lo, 500u);
  EXPECT_EQ(ws[1].n_hi, 2000u);
  EXPECT_TRUE(check_database(out, {k_shuffle, k_smem, k_vec}, false).ok());

  // Importing b into a changes one winner group, the warm one; the cold winner keeps its row.
  Database a = Database::open_writer(dir / "a.db");
  const std::int64_t cold_id = a.winners()[0].id;
  Dataset b;
  {
    Database bdb = Database::open_reader(dir / "b.db");
    b = read_dataset(bdb);
  }
  MergeStats si = import_dataset(a, b);
  EXPECT_EQ(si.winner_groups_changed, 1);
  const auto aw = a.winners();
  ASSERT_EQ(aw.size(), 2u);
  EXPECT_EQ(aw[0].id, cold_id);
  EXPECT_EQ(aw[1].l2_mode, L2Mode::warm);
}

TEST(Check, CountsOverlapsPerL2ModeAndEvidenceOfTheOtherMode) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  make_db(dir / "a.db", test::h100(), k_smem, 1, 1000, 4.0, "w", L2Mode::warm);
  const std::set<std::string> known = {k_shuffle, k_smem, k_vec};
  {
    Database db = Database::open_reader(dir / "a.db");
    const CheckReport r = check_database(db, known, false);
    EXPECT_TRUE(r.ok());  // a cold and a warm winner of the same sizes do not overlap
    EXPECT_EQ(r.overlapping_winners, 0);
  }
  {
    // Rows no writer call would make: a second cold winner over the first, and a warm winner
    // whose evidence is the cold measurement.
    Database db = Database::open_writer(dir / "a.db");
    db.connection().exec(
        "INSERT INTO winners (device_id, dtype, op, l2_mode, n_lo, n_hi, kernel_id,"
        " measurement_id, driver_version, runtime_version)"
        " SELECT device_id, dtype, op, l2_mode, 500, 600, kernel_id, measurement_id,"
        " driver_version, runtime_version FROM winners WHERE l2_mode = 'cold';"
        "INSERT INTO winners (device_id, dtype, op, l2_mode, n_lo, n_hi, kernel_id,"
        " measurement_id, driver_version, runtime_version)"
        " SELECT device_id, dtype, op, 'warm', 5000, 6000, kernel_id, measurement_id,"
        " driver_version, runtime_version FROM winners WHERE l2_mode = 'cold' AND n_lo = 1");
  }
  Database db = Database::open_reader(dir / "a.db");
  const CheckReport r = check_database(db, known, false);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.overlapping_winners, 1);
  EXPECT_EQ(r.overlapping_by_mode[static_cast<int>(L2Mode::cold)], 1);
  EXPECT_EQ(r.overlapping_by_mode[static_cast<int>(L2Mode::warm)], 0);
  EXPECT_EQ(r.winners_without_ok_evidence, 1);
}

TEST(Check, ReportsUnknownIdsAndCorruption) {
  TempDir dir;
  make_db(dir / "a.db", test::h100(), k_shuffle, 1, 1000, 5.0, "a");
  Database db = Database::open_reader(dir / "a.db");
  CheckReport all_known = check_database(db, {k_shuffle, k_vec}, false);
  EXPECT_TRUE(all_known.ok());
  EXPECT_EQ(all_known.schema_version, db::schema_version);
  CheckReport missing = check_database(db, {k_vec}, true);
  EXPECT_TRUE(missing.sound());
  EXPECT_FALSE(missing.ok());
  ASSERT_EQ(missing.unknown_kernel_ids.size(), 1u);
  EXPECT_EQ(missing.unknown_kernel_ids.at(k_shuffle), 2);  // its measurement and its winner

  const auto corrupt = test::copy_fixture("corrupt.db", dir);
  Database bad = Database::open_reader(corrupt);
  CheckReport r = check_database(bad, {}, false);
  EXPECT_FALSE(r.sound());
  EXPECT_FALSE(r.integrity.empty());
}

}  // namespace
}  // namespace tunedreduce::db
