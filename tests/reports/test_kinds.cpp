// The report kinds on small hand-made databases with known numbers, and on the synthetic demo
// database (demo_db.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "demo_db.hpp"
#include "kernels/manifest.hpp"
#include "kernels/registry.hpp"
#include "reports/reports.hpp"
#include "report_test_util.hpp"

namespace tunedreduce::reports {
namespace {

using test::cell;
using test::col;
using test::num;
using test::str;

constexpr std::uint64_t n20 = std::uint64_t{1} << 20;
constexpr std::uint64_t n24 = std::uint64_t{1} << 24;

const LineChart& line_chart(const Section& s) {
  EXPECT_FALSE(s.charts.empty());
  return std::get<LineChart>(s.charts.at(0));
}

class Kinds : public ::testing::Test {
 protected:
  void SetUp() override {
    const test::FixtureRun f = test::begin_fixture_run(d);
    dev = f.dev;
    run = f.run;
  }

  // An ok i32 measurement of \p id (a registry id) on \p device.
  std::int64_t ok(const std::string& id, std::uint64_t n, double us, std::int64_t device = 0,
                  db::L2Mode l2 = db::L2Mode::cold) {
    db::Measurement m = base(id, n, device);
    m.l2_mode = l2;
    m.median_us = us;
    m.p10_us = us * 0.99;
    m.p90_us = us * 1.01;
    m.repeats = 10;
    m.gbps = static_cast<double>(n) * dtype_size(m.dtype) / (us * 1e3);
    return d.insert_measurement(m);
  }

  std::int64_t failed(const std::string& id, std::uint64_t n, db::Outcome o,
                      const std::string& error) {
    db::Measurement m = base(id, n, 0);
    m.outcome = o;
    m.error = error;
    return d.insert_measurement(m);
  }

  db::Measurement base(const std::string& id, std::uint64_t n, std::int64_t device) {
    const auto p = kernels::parse_id(id);
    EXPECT_TRUE(p) << id;
    db::Measurement m;
    m.run_id = run;
    m.device_id = device ? device : dev;
    m.kernel_id = id;
    m.params = kernels::stored_params(*p);
    m.dtype = p->dtype;
    m.op = p->op;
    m.n = n;
    return m;
  }

  Report build(Kind k, ReportOptions o = {}) {
    o.kind = k;
    return build_report(d, o);
  }

  db::Database d = db::Database::create_in_memory();
  std::int64_t dev = 0, run = 0;
};

TEST_F(Kinds, BestGivesPercentagesOfTheoreticalAndAttainableAndTheMargin) {
  const auto w = ok("vectorized.b256.u4.single_pass.i32.sum", n24, 25.0);
  const auto ru = ok("smem.b256.u8.static.single_pass.i32.sum", n24, 26.0);
  db::Winner win;
  win.dtype = DType::i32;
  win.op = Op::sum;
  win.n_lo = 1;
  win.n_hi = kernels::max_elements;
  win.kernel_id = "vectorized.b256.u4.single_pass.i32.sum";
  win.measurement_id = w;
  win.runner_up_kernel_id = "smem.b256.u8.static.single_pass.i32.sum";
  win.runner_up_measurement_id = ru;
  win.driver_version = win.runtime_version = 12080;
  win.run_id = run;
  d.replace_winners(dev, DType::i32, Op::sum, std::span(&win, 1));

  Report r = build(Kind::best);
  ASSERT_FALSE(r.empty) << *r.empty;
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  ASSERT_EQ(s.rows.size(), 1u);
  const double gbps = 16777216.0 * 4 / 25e3;
  EXPECT_NEAR(num(cell(s, 0, "gbps")), gbps, 1e-9);
  EXPECT_NEAR(num(cell(s, 0, "pct_theoretical")), 100 * gbps / 3352.32, 1e-9);
  EXPECT_NEAR(num(cell(s, 0, "pct_attainable")), 100 * gbps / 3200.0, 1e-9);
  EXPECT_NEAR(num(cell(s, 0, "margin_pct")), 4.0, 1e-9);
  EXPECT_EQ(cell(s, 0, "margin_pct").text, "+4.0%");
  EXPECT_EQ(num(cell(s, 0, "n_lo")), 1);
  EXPECT_EQ(cell(s, 0, "n_hi").text, "2^40");
  EXPECT_EQ(num(cell(s, 0, "measured_n")), static_cast<double>(n24));
  EXPECT_EQ(str(cell(s, 0, "kernel")), "vectorized.b256.u4.single_pass.i32.sum");
  EXPECT_EQ(str(cell(s, 0, "runner_up")), "smem.b256.u8.static.single_pass.i32.sum");
  EXPECT_EQ(str(cell(s, 0, "stale")), "no");
  EXPECT_FALSE(cell(s, 0, "stale").mark);

  // A driver update makes the winner stale.
  auto fp = test::demo_h100();
  fp.driver_version = 13000;
  d.upsert_device(fp);
  r = build(Kind::best);
  EXPECT_EQ(str(cell(r.sections[0], 0, "stale")), "yes");
  EXPECT_TRUE(cell(r.sections[0], 0, "stale").mark);
  EXPECT_NE(cell(r.sections[0], 0, "stale").detail.find("driver 12.8"), std::string::npos);

  // The chart: the fastest measurement at each size, one line per type and operator.
  const LineChart& c = line_chart(r.sections[0]);
  ASSERT_EQ(c.series.size(), 1u);
  EXPECT_EQ(c.series[0].name, "i32 sum");
  ASSERT_EQ(c.series[0].points.size(), 1u);
  EXPECT_NEAR(c.series[0].points[0].y, gbps, 1e-9);
}

TEST_F(Kinds, BestWithMeasurementsButNoWinnersSaysSo) {
  ok("vectorized.b256.u4.single_pass.i32.sum", n24, 25.0);
  const Report r = build(Kind::best);
  ASSERT_TRUE(r.empty);
  EXPECT_NE(r.empty->find("no winners"), std::string::npos) << *r.empty;
  EXPECT_NE(r.empty->find("coverage"), std::string::npos) << *r.empty;
  EXPECT_TRUE(r.sections.empty());
}

TEST_F(Kinds, VariantsTakeTheFastestOfEachFamilyAtEachSize) {
  ok("neighbored.b128.two_pass.i32.sum", n20, 100.0);
  ok("neighbored.b256.two_pass.i32.sum", n20, 90.0);
  ok("vectorized.b256.u4.single_pass.i32.sum", n20, 10.0);
  ok("vectorized.b256.u4.single_pass.i32.sum", n24, 25.0);
  ok("vectorized.b512.u4.single_pass.i32.sum", n24, 24.0);
  const Report r = build(Kind::variants);
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(num(cell(s, 0, "n")), static_cast<double>(n20));
  EXPECT_EQ(num(cell(s, 0, "neighbored_us")), 90.0);
  EXPECT_EQ(str(cell(s, 0, "neighbored_kernel")), "neighbored.b256.two_pass.i32.sum");
  EXPECT_FALSE(cell(s, 0, "neighbored_us").mark);
  EXPECT_TRUE(cell(s, 0, "vectorized_us").mark);
  EXPECT_TRUE(cell(s, 1, "neighbored_us").is_null());
  EXPECT_EQ(num(cell(s, 1, "vectorized_us")), 24.0);
  EXPECT_EQ(str(cell(s, 1, "best_family")), "vectorized");
  EXPECT_EQ(str(cell(s, 1, "best_kernel")), "vectorized.b512.u4.single_pass.i32.sum");
  EXPECT_TRUE(cell(s, 1, "smem_us").is_null());

  const LineChart& c = line_chart(s);
  ASSERT_EQ(c.series.size(), 2u);  // families without data draw no line
  EXPECT_EQ(c.series[0].name, "neighbored");
  EXPECT_EQ(c.series[1].name, "vectorized");
  EXPECT_EQ(c.series[1].points.size(), 2u);

  // Every family is a CSV column; people see only the families with data.
  const std::string csv = render(r, Format::csv);
  EXPECT_NE(csv.find("smem_us"), std::string::npos);
  const std::string table = render(r, Format::table);
  EXPECT_EQ(table.find("warp_shuffle"), std::string::npos);
  EXPECT_NE(table.find("neighbored"), std::string::npos);

  ReportOptions only;
  only.families = {"vectorized"};
  const Report f = build(Kind::variants, only);
  ASSERT_EQ(f.sections.size(), 1u);
  EXPECT_EQ(line_chart(f.sections[0]).series.size(), 1u);
}

TEST_F(Kinds, LadderStepsSpeedUpsAndMissingSteps) {
  ok("neighbored.b256.two_pass.i32.sum", n24, 100.0);
  ok("interleaved.b256.two_pass.i32.sum", n24, 50.0);
  ok("unroll.b256.u2.two_pass.i32.sum", n24, 40.0);
  ok("unroll.b256.u4.two_pass.i32.sum", n24, 32.0);
  ok("unroll.b512.u4.single_pass.i32.sum", n24, 30.0);
  ok("unroll.b512.u4.single_pass.i32.sum", n20, 5.0);  // another size: not taken
  ok("vectorized.b256.u4.single_pass.i32.sum", n24, 20.0);
  const Report r = build(Kind::ladder);
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  ASSERT_EQ(s.rows.size(), 14u);
  const std::vector<std::string> names{"neighbored",   "neighbored_less", "interleaved",
                                       "unroll ×2",    "unroll ×4",       "unroll ×8",
                                       "unroll_warps", "complete_unroll", "smem static",
                                       "smem dynamic", "warp_shuffle",    "vectorized",
                                       "tiled",        "streaming"};
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(str(cell(s, i, "name")), names[i]);
  EXPECT_TRUE(cell(s, 1, "kernel").is_null());
  EXPECT_EQ(cell(s, 1, "kernel").text, "not measured");
  EXPECT_EQ(num(cell(s, 2, "speedup")), 2.0);
  EXPECT_EQ(str(cell(s, 2, "speedup_over")), "neighbored");  // the last measured step
  EXPECT_EQ(cell(s, 2, "speedup").text, "×2.00");
  EXPECT_EQ(str(cell(s, 4, "kernel")), "unroll.b512.u4.single_pass.i32.sum");
  EXPECT_NEAR(num(cell(s, 4, "speedup")), 40.0 / 30.0, 1e-12);
  EXPECT_EQ(str(cell(s, 11, "speedup_over")), "unroll ×4");
  EXPECT_NEAR(num(cell(s, 11, "speedup")), 1.5, 1e-12);
  EXPECT_NEAR(num(cell(s, 11, "total_speedup")), 5.0, 1e-12);
  EXPECT_TRUE(cell(s, 0, "speedup").is_null());
  const auto& bars = std::get<BarChart>(s.charts.at(0)).bars;
  ASSERT_EQ(bars.size(), 14u);
  EXPECT_FALSE(bars[1].value);
  EXPECT_FALSE(bars[12].value);  // tiled and streaming were not measured
  EXPECT_FALSE(bars[13].value);
  EXPECT_NEAR(*bars[11].value, 16777216.0 * 4 / 20e3, 1e-9);
  EXPECT_TRUE(s.notes.empty());

  // A size that was not measured: the nearest measured one, said so.
  ReportOptions o;
  o.n = std::uint64_t{1} << 23;
  const Report near = build(Kind::ladder, o);
  ASSERT_EQ(near.sections.size(), 1u);
  ASSERT_EQ(near.sections[0].notes.size(), 1u);
  EXPECT_NE(near.sections[0].notes[0].find("2^23 was not measured"), std::string::npos);
  EXPECT_NE(near.sections[0].title.find("n = 2^24"), std::string::npos);
}

TEST_F(Kinds, HeatmapCellsAreTheBestOverFinishAndSharedMemoryMode) {
  ok("smem.b256.u8.static.two_pass.i32.sum", n24, 30.0);
  ok("smem.b256.u8.dynamic.single_pass.i32.sum", n24, 28.0);
  ok("smem.b128.u4.static.single_pass.i32.sum", n24, 35.0);
  ok("warp_shuffle.b256.u4.single_pass.i32.sum", n24, 27.0);
  ReportOptions o;
  o.families = {"smem"};
  const Report r = build(Kind::heatmap, o);
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  ASSERT_EQ(s.rows.size(), 2u);  // blocks 128 and 256
  EXPECT_EQ(num(cell(s, 0, "block")), 128);
  EXPECT_EQ(num(cell(s, 1, "block")), 256);
  EXPECT_NEAR(num(cell(s, 1, "u8_gbps")), 16777216.0 * 4 / 28e3, 1e-9);
  EXPECT_TRUE(cell(s, 1, "u8_gbps").mark);
  EXPECT_FALSE(cell(s, 0, "u4_gbps").mark);
  EXPECT_TRUE(cell(s, 0, "u8_gbps").is_null());
  const auto& h = std::get<HeatmapChart>(s.charts.at(0));
  EXPECT_EQ(h.rows, (std::vector<std::string>{"128", "256"}));
  EXPECT_EQ(h.cols, (std::vector<std::string>{"u4", "u8"}));
  EXPECT_FALSE(h.values[0][1]);

  // Without --family: one heatmap per family measured.
  EXPECT_EQ(build(Kind::heatmap).sections.size(), 2u);
  ReportOptions bad;
  bad.families = {"fastest"};
  EXPECT_THROW(build(Kind::heatmap, bad), Error);
}

TEST_F(Kinds, CompareNamesTheFastestDeviceAndTheSpread) {
  const auto h200 = d.upsert_device(test::demo_h200());
  d.record_attainable_bandwidth(run, h200, 4300.0);
  ok("vectorized.b256.u4.single_pass.i32.sum", n24, 25.0);
  ok("vectorized.b256.u4.single_pass.i32.sum", n24, 20.0, h200);
  ok("vectorized.b256.u4.single_pass.i32.sum", n20, 4.0);  // only the H100
  const Report r = build(Kind::compare);
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  ASSERT_EQ(s.rows.size(), 2u);
  const std::string k100 = test::demo_h100().key(), k200 = test::demo_h200().key();
  EXPECT_TRUE(cell(s, 0, "gbps_" + k200).is_null());
  EXPECT_EQ(str(cell(s, 0, "fastest")), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(str(cell(s, 1, "fastest")), "NVIDIA H200");
  EXPECT_NEAR(num(cell(s, 1, "spread")), 1.25, 1e-12);
  EXPECT_TRUE(cell(s, 1, "gbps_" + k200).mark);
  EXPECT_NEAR(num(cell(s, 1, "pct_theoretical_" + k200)),
              100 * (16777216.0 * 4 / 20e3) / test::demo_h200().theoretical_gbps(), 1e-9);
  EXPECT_EQ(line_chart(s).series.size(), 2u);

  ReportOptions one;
  one.devices = {"H200"};
  const Report alone = build(Kind::compare, one);
  ASSERT_EQ(alone.sections.size(), 1u);
  EXPECT_TRUE(std::any_of(alone.notes.begin(), alone.notes.end(), [](const std::string& n) {
    return n.find("Only one device") != std::string::npos;
  }));
}

TEST_F(Kinds, DevicesAreChosenByNameFingerprintPrefixOrPartOfTheName) {
  d.upsert_device(test::demo_h200());
  ok("vectorized.b256.u4.single_pass.i32.sum", n24, 25.0);
  const std::string key = test::demo_h100().key();
  for (const std::string& want :
       {std::string("nvidia h100 80gb hbm3"), key, key.substr(0, 6), std::string("H100")}) {
    ReportOptions o;
    o.devices = {want};
    const Report r = build(Kind::variants, o);
    ASSERT_EQ(r.sections.size(), 1u) << want;
    EXPECT_EQ(r.sections[0].key.at(1).second, key) << want;
  }
  ReportOptions o;
  o.devices = {"A100"};
  try {
    build(Kind::variants, o);
    FAIL() << "no error for an unknown device";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown device 'A100'"), std::string::npos) << m;
    EXPECT_NE(m.find("NVIDIA H200"), std::string::npos) << m;  // says what there is
  }
}

TEST_F(Kinds, AnEmptyDatabaseOrSelectionSaysSo) {
  db::Database empty = db::Database::create_in_memory();
  for (Kind k : {Kind::best, Kind::variants, Kind::ladder, Kind::heatmap, Kind::compare,
                 Kind::coverage, Kind::segmented}) {
    ReportOptions o;
    o.kind = k;
    const Report r = build_report(empty, o);
    ASSERT_TRUE(r.empty) << kind_name(k);
    EXPECT_NE(r.empty->find("the database is empty"), std::string::npos);
    EXPECT_TRUE(r.sections.empty());
  }
  ok("vectorized.b256.u4.single_pass.i32.sum", n24, 25.0);
  for (Kind k : {Kind::variants, Kind::ladder, Kind::heatmap, Kind::compare, Kind::coverage}) {
    ReportOptions o;
    o.dtypes = {DType::f64};
    const Report r = build(k, o);
    ASSERT_TRUE(r.empty) << kind_name(k);
    EXPECT_NE(r.empty->find("nothing matches the selection (dtype f64)"), std::string::npos)
        << *r.empty;
  }
}

TEST_F(Kinds, OneL2ModeAtATime) {
  ok("vectorized.b256.u4.single_pass.i32.sum", n24, 22.0, 0, db::L2Mode::warm);
  Report r = build(Kind::variants);  // only warm measurements: the default takes them
  ASSERT_EQ(r.sections.size(), 1u);
  EXPECT_EQ(r.filters.back(), (std::pair<std::string, std::string>{"l2", "warm"}));
  ok("vectorized.b256.u4.single_pass.i32.sum", n24, 25.0);
  r = build(Kind::variants);  // both: cold by default, and a note says so
  EXPECT_EQ(num(cell(r.sections[0], 0, "vectorized_us")), 25.0);
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("cold- and warm-L2") != std::string::npos;
  }));
  ReportOptions o;
  o.l2 = db::L2Mode::warm;
  r = build(Kind::variants, o);
  EXPECT_EQ(num(cell(r.sections[0], 0, "vectorized_us")), 22.0);
}

TEST_F(Kinds, BestListsTheWinnersOfEachL2Mode) {
  const std::string cold_id = "vectorized.b256.u4.single_pass.i32.sum";
  const std::string warm_id = "smem.b256.u8.static.single_pass.i32.sum";
  db::Winner win;
  win.dtype = DType::i32;
  win.op = Op::sum;
  win.n_lo = 1;
  win.n_hi = kernels::max_elements;
  win.kernel_id = cold_id;
  win.measurement_id = ok(cold_id, n24, 25.0);
  win.driver_version = win.runtime_version = 12080;
  win.run_id = run;
  d.replace_winners(dev, DType::i32, Op::sum, std::span(&win, 1));
  // The same sizes, warm: a winner of its own, not a replacement of the cold one.
  win.l2_mode = db::L2Mode::warm;
  win.kernel_id = warm_id;
  win.measurement_id = ok(warm_id, n24, 12.0, 0, db::L2Mode::warm);
  d.replace_winners(dev, DType::i32, Op::sum, std::span(&win, 1), db::L2Mode::warm);

  Report r = build(Kind::best);
  ASSERT_FALSE(r.empty) << *r.empty;
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(str(cell(s, 0, "l2")), "cold");
  EXPECT_EQ(str(cell(s, 0, "kernel")), cold_id);
  EXPECT_EQ(num(cell(s, 0, "median_us")), 25.0);
  EXPECT_NE(cell(s, 0, "median_us").detail.find("L2 cold"), std::string::npos);
  EXPECT_EQ(str(cell(s, 1, "l2")), "warm");
  EXPECT_EQ(str(cell(s, 1, "kernel")), warm_id);
  EXPECT_EQ(num(cell(s, 1, "median_us")), 12.0);
  EXPECT_NE(cell(s, 1, "median_us").detail.find("L2 warm"), std::string::npos);
  EXPECT_EQ(num(cell(s, 1, "n_lo")), 1);
  EXPECT_EQ(cell(s, 1, "n_hi").text, "2^40");
  for (Format f : {Format::table, Format::markdown, Format::csv, Format::json, Format::html}) {
    std::string text = render(r, f);
    // HTML lets ids break at their dots.
    for (std::size_t pos; (pos = text.find("<wbr>")) != std::string::npos;) text.erase(pos, 5);
    EXPECT_NE(text.find(cold_id), std::string::npos) << format_name(f);
    EXPECT_NE(text.find(warm_id), std::string::npos) << format_name(f);
  }

  // --l2 picks one mode, and says so.
  ReportOptions o;
  o.l2 = db::L2Mode::warm;
  r = build(Kind::best, o);
  ASSERT_EQ(r.sections.size(), 1u);
  ASSERT_EQ(r.sections[0].rows.size(), 1u);
  EXPECT_EQ(str(cell(r.sections[0], 0, "kernel")), warm_id);
  EXPECT_EQ(r.filters.back(), (std::pair<std::string, std::string>{"l2", "warm"}));
}

TEST_F(Kinds, CoverageCountsEachL2ModeApart) {
  const std::string id = "vectorized.b256.u4.single_pass.i32.sum";
  db::Winner win;
  win.dtype = DType::i32;
  win.op = Op::sum;
  win.n_lo = 1;
  win.n_hi = kernels::max_elements;
  win.kernel_id = id;
  win.measurement_id = ok(id, n24, 25.0);
  win.driver_version = win.runtime_version = 12080;
  d.replace_winners(dev, DType::i32, Op::sum, std::span(&win, 1));
  ok(id, n20, 2.0, 0, db::L2Mode::warm);  // measured warm, but no warm winner

  const Report r = build(Kind::coverage);
  ASSERT_EQ(r.sections.size(), 5u);
  const Section& keys = r.sections[0];
  ASSERT_EQ(keys.rows.size(), 2u);
  EXPECT_EQ(str(cell(keys, 0, "l2")), "cold");
  EXPECT_EQ(str(cell(keys, 0, "status")), "tuned");  // the warm measurement is not its concern
  EXPECT_EQ(num(cell(keys, 0, "winners")), 1);
  EXPECT_EQ(str(cell(keys, 1, "l2")), "warm");
  EXPECT_EQ(str(cell(keys, 1, "status")), "no winner");  // the cold winner does not cover it
  EXPECT_EQ(num(cell(keys, 1, "winners")), 0);
  const Section& not_tuned = r.sections[1];
  ASSERT_EQ(not_tuned.rows.size(), 1u);
  EXPECT_EQ(str(cell(not_tuned, 0, "l2")), "warm");
  EXPECT_EQ(str(cell(not_tuned, 0, "sizes")), std::to_string(n20));
}

TEST_F(Kinds, CoverageWhenEveryCandidateFailed) {
  failed("vectorized.b256.u4.single_pass.i32.sum", n24, db::Outcome::launch_failed, "no");
  failed("smem.b256.u4.static.single_pass.i32.sum", n24, db::Outcome::timeout, "");
  const Report r = build(Kind::coverage);
  ASSERT_EQ(r.sections.size(), 5u);
  EXPECT_EQ(str(cell(r.sections[0], 0, "status")), "every candidate failed");
  ASSERT_EQ(r.sections[1].rows.size(), 1u);
  EXPECT_EQ(str(cell(r.sections[1], 0, "reason")), "every candidate failed at these sizes");
  EXPECT_EQ(str(cell(r.sections[1], 0, "sizes")), "16777216");
  ASSERT_EQ(r.sections[3].rows.size(), 2u);
  EXPECT_EQ(str(cell(r.sections[3], 0, "outcome")), "timeout");  // smem… sorts first
  EXPECT_EQ(cell(r.sections[3], 0, "error").text, "(no message)");
  EXPECT_EQ(str(cell(r.sections[3], 1, "error")), "no");
}

TEST_F(Kinds, CoverageReadsWhatARunAskedForFromItsStoredConfiguration) {
  // A run of schema version 5 stores its canonical configuration: i32 and f32, sum, two sizes,
  // cold. It measured i32 sum at 2^20 only (interrupted), on the fixture's device.
  const std::string text =
      "space.families=vectorized\nspace.dtypes=i32,f32\nspace.ops=sum\n"
      "space.sizes=" +
      std::to_string(n20) + "," + std::to_string(n24) + "\nmeasure.l2=cold\n";
  db::RunInfo info;
  info.tool_version = "0.3.0";
  info.manifest_hash = "0123456789abcdef";
  info.config_hash = hex64(fnv1a64(text));
  info.config_text = text;
  info.host = "test-host";
  run = d.begin_run(info);
  d.record_attainable_bandwidth(run, dev, 3200.0);
  const std::string id = "vectorized.b256.u4.single_pass.i32.sum";
  db::Winner win;
  win.dtype = DType::i32;
  win.op = Op::sum;
  win.n_lo = 1;
  win.n_hi = n20;
  win.kernel_id = id;
  win.measurement_id = ok(id, n20, 2.0);
  win.driver_version = win.runtime_version = 12080;
  d.replace_winners(dev, DType::i32, Op::sum, std::span(&win, 1));

  const Report r = build(Kind::coverage);
  ASSERT_EQ(r.sections.size(), 5u);
  const Section& keys = r.sections[0];
  // f32 sum was never measured: only the configuration says it was asked for (the guess from
  // the measurements, all a run without one has, would not list it at all).
  ASSERT_EQ(keys.rows.size(), 2u);
  EXPECT_EQ(str(cell(keys, 0, "dtype")), "i32");
  EXPECT_EQ(str(cell(keys, 0, "status")), "partly tuned");
  EXPECT_EQ(str(cell(keys, 0, "asked")), "configuration");
  EXPECT_EQ(num(cell(keys, 0, "sizes_asked")), 2);
  EXPECT_EQ(str(cell(keys, 1, "dtype")), "f32");
  EXPECT_EQ(str(cell(keys, 1, "status")), "not measured");
  EXPECT_EQ(str(cell(keys, 1, "asked")), "configuration");
  const Section& not_tuned = r.sections[1];
  ASSERT_EQ(not_tuned.rows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_EQ(str(cell(not_tuned, i, "reason")),
              "asked for by the run's configuration, never measured");
  EXPECT_EQ(str(cell(not_tuned, 0, "sizes")), std::to_string(n24));  // i32: 2^20 is tuned
  EXPECT_EQ(str(cell(not_tuned, 1, "sizes")), std::to_string(n20) + " " + std::to_string(n24));

  // A run without a stored configuration (older than version 5) is still inferred from what it
  // measured: the fixture's run measures i32 max.
  run = test::begin_fixture_run(d).run;
  ok("vectorized.b256.u4.single_pass.i32.max", n24, 2.5);
  const Report r2 = build(Kind::coverage);
  const Section& keys2 = r2.sections[0];
  bool found = false;
  for (std::size_t i = 0; i < keys2.rows.size(); ++i)
    if (str(cell(keys2, i, "op")) == "max") {
      found = true;
      EXPECT_EQ(str(cell(keys2, i, "asked")), "inferred");
      EXPECT_TRUE(cell(keys2, i, "sizes_asked").is_null());
    }
  EXPECT_TRUE(found);
}

TEST_F(Kinds, BestShowsWhereEachWinnersEvidenceWasMeasured) {
  db::RunInfo info;
  info.tool_version = "0.3.0";
  info.manifest_hash = "e90613cdf9164a37";
  info.config_hash = "fedcba9876543210";
  info.host = "node-7";
  info.driver_version = 13010;
  info.runtime_version = 13000;
  run = d.begin_run(info);
  const std::string id = "vectorized.b256.u4.single_pass.i32.sum";
  db::Measurement m = base(id, n24, 0);
  m.median_us = 25.0;
  m.repeats = 10;
  m.sm_clock_mhz = 1980;
  m.mem_clock_mhz = 2619;
  m.gpu_id = d.upsert_gpu("GPU-5eed0001-0000-4000-8000-000000000007", dev);
  db::Winner win;
  win.dtype = DType::i32;
  win.op = Op::sum;
  win.n_lo = 1;
  win.n_hi = kernels::max_elements;
  win.kernel_id = id;
  win.measurement_id = d.insert_measurement(m);
  win.driver_version = 13010;
  win.runtime_version = 13000;
  win.run_id = run;
  d.replace_winners(dev, DType::i32, Op::sum, std::span(&win, 1));

  const Report r = build(Kind::best);
  const Section& s = r.sections.at(0);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(str(cell(s, 0, "host")), "node-7");
  EXPECT_EQ(str(cell(s, 0, "gpu")), "GPU-5eed0001-0000-4000-8000-000000000007");
  EXPECT_EQ(num(cell(s, 0, "driver")), 13010);
  EXPECT_EQ(cell(s, 0, "driver").detail, "the run's");
  EXPECT_EQ(num(cell(s, 0, "cuda")), 13000);
  EXPECT_EQ(num(cell(s, 0, "sm_clock_mhz")), 1980);
  EXPECT_EQ(num(cell(s, 0, "mem_clock_mhz")), 2619);
  EXPECT_EQ(str(cell(s, 0, "tool_version")), "0.3.0");
  EXPECT_EQ(str(cell(s, 0, "manifest")), "e90613cdf9164a37");
  EXPECT_EQ(str(cell(s, 0, "run")), d.find_run(run)->uuid);
  EXPECT_TRUE(cell(s, 0, "source").is_null());  // recorded here, not merged in
  EXPECT_NE(render(r, Format::csv).find("GPU-5eed0001-0000-4000-8000-000000000007"),
            std::string::npos);
  // For people: the tooltip of 'measured at' says it in words.
  const std::string& words = cell(s, 0, "measured_n").detail;
  EXPECT_NE(words.find("measured on node-7, GPU-5eed0001-0000-4000-8000-000000000007"),
            std::string::npos)
      << words;
  EXPECT_NE(words.find(
                "SM 1980 MHz, memory 2619 MHz, tunedreduce 0.3.0, manifest e90613cdf9164a37"),
            std::string::npos)
      << words;
}

// argmin and argmax rows (schema version 9): every kind takes them as a key of their own, after
// the other operators of the type; their GB/s counts the bytes read (n elements of the type), not
// the 16-byte IndexedValue they return; their variants have the three families that implement
// them.
TEST_F(Kinds, ArgminAndArgmaxRowsInEveryKind) {
  const std::string vec = "vectorized.b256.u4.single_pass.i32.argmin";
  const std::string str_id = "streaming.b512.u4.two_pass.i32.argmin";
  const auto w = ok(str_id, n24, 28.0);
  const auto ru = ok(vec, n24, 30.0);
  ok("single_tile.b256.u4.single_pass.i32.argmin", 4096, 3.0);
  ok(str_id, 4096, 3.5);
  const auto min_w = ok("vectorized.b256.u4.single_pass.i32.min", n24, 25.0);
  const auto f64_w = ok("streaming.b256.u2.two_pass.f64.argmax", n24, 52.0);
  // A measurement without a stored GB/s: the report computes it from the element's bytes.
  db::Measurement bare = base("vectorized.b128.u2.two_pass.f64.argmax", n24, 0);
  bare.median_us = 50.0;
  bare.repeats = 10;
  d.insert_measurement(bare);
  auto store = [&](const std::string& id, std::int64_t evidence, std::optional<std::int64_t> r,
                   const std::string& r_id) {
    const auto p = *kernels::parse_id(id);
    db::Winner win;
    win.dtype = p.dtype;
    win.op = p.op;
    win.n_lo = 1;
    win.n_hi = kernels::max_elements;
    win.kernel_id = id;
    win.measurement_id = evidence;
    if (r) {
      win.runner_up_kernel_id = r_id;
      win.runner_up_measurement_id = r;
    }
    win.driver_version = win.runtime_version = 12080;
    win.run_id = run;
    d.replace_winners(dev, p.dtype, p.op, std::span(&win, 1));
  };
  store(str_id, w, ru, vec);
  store("streaming.b256.u2.two_pass.f64.argmax", f64_w, std::nullopt, {});
  store("vectorized.b256.u4.single_pass.i32.min", min_w, std::nullopt, {});

  // best: one row per winner, i32 min before i32 argmin (the operators' order), f64 after.
  Report r = build(Kind::best);
  ASSERT_FALSE(r.empty) << *r.empty;
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& best = r.sections[0];
  ASSERT_EQ(best.rows.size(), 3u);
  EXPECT_EQ(str(cell(best, 0, "op")), "min");
  EXPECT_EQ(str(cell(best, 1, "op")), "argmin");
  EXPECT_EQ(str(cell(best, 1, "dtype")), "i32");
  EXPECT_EQ(str(cell(best, 1, "kernel")), str_id);
  EXPECT_EQ(str(cell(best, 1, "runner_up")), vec);
  EXPECT_NEAR(num(cell(best, 1, "margin_pct")), 100 * (30.0 / 28.0 - 1), 1e-9);
  EXPECT_NEAR(num(cell(best, 1, "gbps")), 16777216.0 * 4 / 28e3, 1e-9);  // 4 bytes, not 16
  EXPECT_EQ(str(cell(best, 2, "op")), "argmax");
  EXPECT_EQ(str(cell(best, 2, "dtype")), "f64");
  EXPECT_NEAR(num(cell(best, 2, "gbps")), 16777216.0 * 8 / 52e3, 1e-9);
  const LineChart& chart = line_chart(best);
  std::vector<std::string> names;
  for (const auto& series : chart.series) names.push_back(series.name);
  EXPECT_EQ(names, (std::vector<std::string>{"i32 min", "i32 argmin", "f64 argmax"}));

  // variants: a section per key; argmin's columns are its three families, no others.
  r = build(Kind::variants);
  ASSERT_EQ(r.sections.size(), 3u);
  EXPECT_NE(r.sections[0].title.find("i32 min"), std::string::npos) << r.sections[0].title;
  const Section& var = r.sections[1];
  EXPECT_NE(var.title.find("i32 argmin"), std::string::npos) << var.title;
  std::vector<std::string> families;
  for (const Column& c : var.columns)
    if (c.id.ends_with("_us") && c.id != "cub_us") families.push_back(c.id);
  EXPECT_EQ(families,
            (std::vector<std::string>{"vectorized_us", "streaming_us", "single_tile_us"}));
  ASSERT_EQ(var.rows.size(), 2u);  // 2^12, 2^24
  EXPECT_EQ(num(cell(var, 0, "single_tile_us")), 3.0);
  EXPECT_EQ(str(cell(var, 0, "best_family")), "single_tile");
  EXPECT_EQ(str(cell(var, 1, "best_kernel")), str_id);
  EXPECT_NEAR(num(cell(var, 1, "best_gbps")), 16777216.0 * 4 / 28e3, 1e-9);
  const Section& f64 = r.sections[2];
  EXPECT_NE(f64.title.find("f64 argmax"), std::string::npos) << f64.title;
  ASSERT_EQ(f64.rows.size(), 1u);
  EXPECT_EQ(str(cell(f64, 0, "best_kernel")), "vectorized.b128.u2.two_pass.f64.argmax");
  EXPECT_NEAR(num(cell(f64, 0, "vectorized_gbps")), 16777216.0 * 8 / 50e3, 1e-9);  // computed

  // --ops argmin: that key alone; argmax: the f64 key alone.
  ReportOptions only;
  only.ops = {op_from_text("argmin")};
  r = build(Kind::variants, only);
  ASSERT_EQ(r.sections.size(), 1u);
  EXPECT_NE(r.sections[0].title.find("i32 argmin"), std::string::npos);
  EXPECT_EQ(r.filters.at(2), (std::pair<std::string, std::string>{"op", "argmin"}));
  only.ops = {Op::argmax};
  r = build(Kind::best, only);
  ASSERT_EQ(r.sections.size(), 1u);
  ASSERT_EQ(r.sections[0].rows.size(), 1u);
  EXPECT_EQ(str(cell(r.sections[0], 0, "dtype")), "f64");

  // ladder: vectorized and streaming are the measured steps of i32 argmin at 2^24.
  r = build(Kind::ladder);
  ASSERT_EQ(r.sections.size(), 3u);
  const Section& lad = r.sections[1];
  EXPECT_NE(lad.title.find("i32 argmin"), std::string::npos) << lad.title;
  std::size_t measured = 0;
  for (std::size_t i = 0; i < lad.rows.size(); ++i)
    if (!cell(lad, i, "kernel").is_null()) ++measured;
  EXPECT_EQ(measured, 2u);
  EXPECT_EQ(str(cell(lad, 11, "kernel")), vec);
  EXPECT_EQ(str(cell(lad, 13, "kernel")), str_id);

  // coverage: i32 argmin tuned, against the 100 configurations compiled for it (the run,
  // which stored no configuration, is taken to have asked for i32 and f64 x min, argmin and
  // argmax: f64 argmin is "not measured").
  r = build(Kind::coverage);
  const Section& keys = r.sections.at(0);
  std::map<std::string, std::string> status;
  for (std::size_t i = 0; i < keys.rows.size(); ++i) {
    const std::string key = str(cell(keys, i, "dtype")) + " " + str(cell(keys, i, "op"));
    status[key] = str(cell(keys, i, "status"));
    if (key == "i32 argmin") {
      EXPECT_EQ(num(cell(keys, i, "configs_compiled")), 100);
    }
  }
  EXPECT_EQ(status["i32 argmin"], "tuned");
  EXPECT_EQ(status["f64 argmax"], "tuned");
  EXPECT_EQ(status["f64 argmin"], "not measured");

  // Every kind in every format.
  for (Kind k :
       {Kind::best, Kind::variants, Kind::ladder, Kind::heatmap, Kind::compare, Kind::coverage}) {
    const Report rk = build(k);
    ASSERT_FALSE(rk.empty) << kind_name(k);
    for (Format f : {Format::table, Format::markdown, Format::csv, Format::json, Format::html}) {
      const std::string text = render(rk, f);
      EXPECT_NE(text.find("argmin"), std::string::npos) << kind_name(k) << " " << format_name(f);
    }
  }
}

// --- the synthetic demo database
// ------------------------------------------------------------------

class Demo : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db_ = new db::Database(db::Database::create_in_memory());
    test::DemoOptions o;
    o.log2_step = 2;      // 2^10, 2^12, ..., 2^30
    o.config_stride = 2;  // every other configuration of each family
    ids_ = test::build_demo(*db_, o);
  }
  static void TearDownTestSuite() {
    delete db_;
    db_ = nullptr;
  }
  static Report build(Kind k, ReportOptions o = {}) {
    o.kind = k;
    return build_report(*db_, o);
  }
  static db::Database* db_;
  static test::DemoIds ids_;
};
db::Database* Demo::db_ = nullptr;
test::DemoIds Demo::ids_;

std::string text_of(const Section& s, std::size_t row, const std::string& id) {
  for (std::size_t i = 0; i < s.columns.size(); ++i)
    if (s.columns[i].id == id) {
      const Cell& c = s.rows.at(row).at(i);
      if (auto* v = std::get_if<std::string>(&c.value)) return *v;
      if (auto* v = std::get_if<std::int64_t>(&c.value)) return std::to_string(*v);
      return c.text;
    }
  return "<no column " + id + ">";
}

TEST_F(Demo, TheModelIsAnH100) {
  const auto p = *kernels::parse_id("vectorized.b256.u4.single_pass.i32.sum");
  EXPECT_NEAR(test::model_us(p, 1024), 4.0, 0.3);
  EXPECT_NEAR(test::model_us(p, std::uint64_t{1} << 30), 1400, 20);
  EXPECT_NEAR(test::demo_h100().theoretical_gbps(), 3352.32, 1e-9);
}

TEST_F(Demo, CoverageFindsUntunedKeysStaleWinnersAndFailures) {
  const Report r = build(Kind::coverage);
  ASSERT_EQ(r.sections.size(), 5u);
  const Section& keys = r.sections[0];
  std::map<std::string, std::string> status;
  for (std::size_t i = 0; i < keys.rows.size(); ++i)
    status[text_of(keys, i, "device") + "/" + text_of(keys, i, "dtype") + " " +
           text_of(keys, i, "op")] = text_of(keys, i, "status");
  const std::string h100 = "NVIDIA H100 80GB HBM3/", h200 = "NVIDIA H200/";
  EXPECT_EQ(status[h100 + "i32 sum"], "tuned");
  EXPECT_EQ(status[h100 + "f32 sum"], "tuned");
  EXPECT_EQ(status[h100 + "i32 min"], "no winner");
  EXPECT_EQ(status[h100 + "f32 max"], "no winner");
  EXPECT_EQ(status[h100 + "i32 max"], "not measured");  // the run's cross product
  EXPECT_EQ(status[h100 + "f32 min"], "not measured");
  EXPECT_EQ(status[h200 + "i32 sum"], "tuned");
  EXPECT_EQ(status.size(), 8u);

  const Section& nt = r.sections[1];
  EXPECT_EQ(nt.rows.size(), 4u);
  for (std::size_t i = 0; i < nt.rows.size(); ++i) {
    if (text_of(nt, i, "dtype") == "i32" && text_of(nt, i, "op") == "min") {
      EXPECT_EQ(text_of(nt, i, "sizes"), "1024 4096 16384");
    }
  }

  const Section& stale = r.sections[2];
  ASSERT_EQ(stale.rows.size(), 2u);  // the H100's i32 sum and f32 sum; the H200 is current
  for (std::size_t i = 0; i < stale.rows.size(); ++i) {
    EXPECT_EQ(text_of(stale, i, "device"), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(text_of(stale, i, "tuned_driver"), "12080");
    EXPECT_EQ(text_of(stale, i, "device_driver"), "13000");
    EXPECT_EQ(text_of(stale, i, "n_lo"), "1");
  }

  const Section& fail = r.sections[3];
  bool crashed = false, timeout = false, incorrect = false, launch = false;
  for (std::size_t i = 0; i < fail.rows.size(); ++i) {
    const std::string outcome = text_of(fail, i, "outcome");
    if (outcome == "crashed") {
      crashed = true;
      EXPECT_EQ(text_of(fail, i, "later_ok"), "1");  // the retry measured it
    } else if (outcome == "timeout") {
      timeout = true;
      EXPECT_EQ(text_of(fail, i, "later_ok"), "0");
    } else if (outcome == "incorrect") {
      incorrect = true;
      EXPECT_NE(text_of(fail, i, "error").find("differs from the reference"), std::string::npos);
    } else if (outcome == "launch_failed") {
      launch = true;
      EXPECT_EQ(text_of(fail, i, "count"), "11");  // every size of the grid
    }
  }
  EXPECT_TRUE(crashed && timeout && incorrect && launch);
  EXPECT_TRUE(r.sections[4].rows.empty());
}

TEST_F(Demo, EveryKindAndFormatRendersAndIsDeterministic) {
  for (Kind k :
       {Kind::best, Kind::variants, Kind::ladder, Kind::heatmap, Kind::compare, Kind::coverage}) {
    const Report r = build(k);
    ASSERT_FALSE(r.empty) << kind_name(k);
    ASSERT_FALSE(r.sections.empty()) << kind_name(k);
    for (Format f : {Format::table, Format::markdown, Format::csv, Format::json, Format::html}) {
      const std::string a = render(r, f);
      EXPECT_GT(a.size(), 200u) << kind_name(k) << " " << format_name(f);
      EXPECT_EQ(a, render(build(k), f)) << kind_name(k) << " " << format_name(f);
    }
  }
}

TEST(DemoWithBothL2Modes, EveryKindAndFormatRendersAndBestListsBoth) {
  db::Database d = db::Database::create_in_memory();
  test::DemoOptions o;
  o.log2_step = 4;  // 2^10, 2^14, ..., 2^30
  o.config_stride = 4;
  o.warm_run = true;
  const test::DemoIds ids = test::build_demo(d, o);
  std::size_t cold = 0, warm = 0;  // i32 sum winners of the H100
  for (const auto& w : d.winners(ids.h100))
    if (w.dtype == DType::i32) (w.l2_mode == db::L2Mode::cold ? cold : warm) += 1;
  ASSERT_GT(cold, 0u);
  ASSERT_GT(warm, 0u);
  for (Kind k :
       {Kind::best, Kind::variants, Kind::ladder, Kind::heatmap, Kind::compare, Kind::coverage}) {
    ReportOptions ro;
    ro.kind = k;
    const Report r = build_report(d, ro);
    ASSERT_FALSE(r.empty) << kind_name(k);
    for (Format f : {Format::table, Format::markdown, Format::csv, Format::json, Format::html})
      EXPECT_GT(render(r, f).size(), 200u) << kind_name(k) << " " << format_name(f);
  }
  ReportOptions ro;
  ro.kind = Kind::best;
  ro.devices = {"H100"};
  ro.dtypes = {DType::i32};
  const Report best = build_report(d, ro);
  ASSERT_EQ(best.sections.size(), 1u);
  const Section& s = best.sections[0];
  ASSERT_EQ(s.rows.size(), cold + warm);  // every winner of both modes, cold first
  for (std::size_t i = 0; i < s.rows.size(); ++i)
    EXPECT_EQ(text_of(s, i, "l2"), i < cold ? "cold" : "warm") << i;
  ro.kind = Kind::coverage;
  const Report cov = build_report(d, ro);
  std::size_t warm_keys = 0;
  for (std::size_t i = 0; i < cov.sections[0].rows.size(); ++i)
    if (text_of(cov.sections[0], i, "l2") == "warm") {
      ++warm_keys;
      EXPECT_EQ(text_of(cov.sections[0], i, "status"), "tuned");
    }
  EXPECT_EQ(warm_keys, 1u);  // i32 sum on the H100
}

TEST_F(Demo, TheLadderAtTheSeedsSizeClimbs) {
  ReportOptions o;
  o.devices = {"H100"};
  o.dtypes = {DType::i32};
  o.ops = {Op::sum};
  const Report r = build(Kind::ladder, o);
  ASSERT_EQ(r.sections.size(), 1u);
  const auto& bars = std::get<BarChart>(r.sections[0].charts.at(0)).bars;
  ASSERT_EQ(bars.size(), 14u);
  for (const auto& b : bars) EXPECT_TRUE(b.value) << b.label;
  EXPECT_LT(*bars[0].value * 4, *bars[11].value);  // vectorized is > 4x neighbored at 2^24
}

}  // namespace
}  // namespace tunedreduce::reports
