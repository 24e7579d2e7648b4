// The CUB baseline in `best` and `variants`, the `bench` kind, the tie rule's "why", the spread
// columns, the chart of the winners and the charts' views, on small hand-made databases with known
// numbers (bench runs written through db/bench.hpp, as `tunedreduce bench` records them).

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "db/bench.hpp"
#include "demo_db.hpp"
#include "kernels/manifest.hpp"
#include "kernels/registry.hpp"
#include "reports/reports.hpp"
#include "report_test_util.hpp"
#include "test_util.hpp"

namespace tunedreduce::reports {
namespace {

using test::cell;
using test::col;
using test::num;
using test::str;

constexpr std::uint64_t n20 = std::uint64_t{1} << 20;
constexpr std::uint64_t n24 = std::uint64_t{1} << 24;
constexpr const char* winner_id = "vectorized.b256.u4.single_pass.i32.sum";
constexpr const char* other_id = "smem.b256.u8.static.single_pass.i32.sum";

class BenchReport : public ::testing::Test {
 protected:
  void SetUp() override {
    const test::FixtureRun f = test::begin_fixture_run(d);
    dev = f.dev;
    run = f.run;
  }

  // An ok measurement of \p id; p10/p90 at ∓ spread/2 of the median.
  std::int64_t ok(const std::string& id, std::uint64_t n, double us, double spread = 0.02,
                  int repeats = 10, std::int64_t device = 0) {
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
    m.median_us = us;
    m.p10_us = us * (1 - spread / 2);
    m.p90_us = us * (1 + spread / 2);
    m.repeats = repeats;
    m.gbps = static_cast<double>(n) * dtype_size(m.dtype) / (us * 1e3);
    return d.insert_measurement(m);
  }

  void winner(const std::string& id, std::int64_t evidence, std::optional<std::int64_t> runner_up,
              const std::string& runner_up_id = {}, std::uint64_t lo = 1,
              std::uint64_t hi = kernels::max_elements) {
    db::Winner w;
    const auto p = *kernels::parse_id(id);
    w.dtype = p.dtype;
    w.op = p.op;
    w.n_lo = lo;
    w.n_hi = hi;
    w.kernel_id = id;
    w.measurement_id = evidence;
    if (runner_up) {
      w.runner_up_kernel_id = runner_up_id;
      w.runner_up_measurement_id = runner_up;
    }
    w.driver_version = w.runtime_version = 12080;
    w.run_id = run;
    winners.push_back(w);
  }
  void store_winners() {
    d.replace_winners(dev, winners.at(0).dtype, winners.at(0).op, winners);
    winners.clear();
  }

  static db::BenchResult result(db::BenchMethod m, std::uint64_t n, double us, double spread = 0.02,
                                DType t = DType::i32) {
    db::BenchResult r;
    r.dtype = t;
    r.n = n;
    r.method = m;
    r.verified = true;
    r.median_us = us;
    r.p10_us = us * (1 - spread / 2);
    r.p90_us = us * (1 + spread / 2);
    r.repeats = 50;
    if (db::is_tuned(m)) {
      r.kernel_id = winner_id;
      r.lookup_level = "exact";
      r.winner_l2 = db::L2Mode::cold;
    }
    return r;
  }
  std::int64_t bench(const std::vector<db::BenchResult>& rs, db::BenchL2 l2 = db::BenchL2::cold,
                     DeviceFingerprint fp = test::demo_h100()) {
    db::BenchRunInfo i;
    i.tool_version = "0.3.0";
    i.manifest_hash = "0123456789abcdef";
    i.host = "bench-host";
    i.library_database = "/db/tune.db";
    i.l2 = l2;
    i.repeats = 50;
    i.warmups = 2;
    i.seed = 7;
    return db::record_bench_run(d, fp, i, rs);
  }

  Report build(Kind k, ReportOptions o = {}) {
    o.kind = k;
    return build_report(d, o);
  }
  static const LineChart* view(const Section& s, const std::string& name) {
    for (const Chart& c : s.charts)
      if (const auto* l = std::get_if<LineChart>(&c); l && l->view == name) return l;
    return nullptr;
  }

  db::Database d = db::Database::create_in_memory();
  std::int64_t dev = 0, run = 0;
  std::vector<db::Winner> winners;
};

TEST_F(BenchReport, BestSetsTheWinnerAgainstCubAtItsEvidenceSize) {
  const auto w = ok(winner_id, n24, 25.0);
  const auto ru = ok(other_id, n24, 26.0);
  winner(winner_id, w, ru, other_id);
  store_winners();
  // Before any bench the CUB columns are empty, and hidden from people.
  Report r = build(Kind::best);
  ASSERT_EQ(r.sections.size(), 1u);
  EXPECT_TRUE(cell(r.sections[0], 0, "cub_us").is_null());
  EXPECT_EQ(render(r, Format::table).find("× CUB cached"), std::string::npos);
  EXPECT_NE(render(r, Format::csv).find("speedup_cached"), std::string::npos);  // the header stays
  EXPECT_EQ(view(r.sections[0], "speed-up vs CUB"), nullptr);

  // A bench at the evidence's size, cold; another size, a warm one and another device's do not
  // count for this row.
  bench({result(db::BenchMethod::cached, n24, 24.0), result(db::BenchMethod::two_phase, n24, 25.1),
         result(db::BenchMethod::cub, n24, 25.2), result(db::BenchMethod::cub, n20, 99.0),
         result(db::BenchMethod::cached, n20, 1.0)});
  bench({result(db::BenchMethod::cached, n24, 1.0), result(db::BenchMethod::cub, n24, 50.0)},
        db::BenchL2::warm);
  bench({result(db::BenchMethod::cached, n24, 1.0), result(db::BenchMethod::cub, n24, 50.0)},
        db::BenchL2::cold, test::demo_h200());
  r = build(Kind::best, [] {
    ReportOptions o;
    o.devices = {"H100"};
    return o;
  }());
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  EXPECT_DOUBLE_EQ(num(cell(s, 0, "cub_us")), 25.2);
  EXPECT_DOUBLE_EQ(num(cell(s, 0, "speedup_cached")), 25.2 / 24.0);
  EXPECT_EQ(cell(s, 0, "speedup_cached").text, "×1.05");
  // 5 % beyond a noise of ±0.5 %: marked; 0.4 % is within it: not marked.
  EXPECT_TRUE(cell(s, 0, "speedup_cached").mark);
  EXPECT_NE(cell(s, 0, "speedup_cached").detail.find("faster"), std::string::npos);
  EXPECT_NE(cell(s, 0, "speedup_cached").detail.find(winner_id), std::string::npos);
  EXPECT_DOUBLE_EQ(num(cell(s, 0, "speedup_two_phase")), 25.2 / 25.1);
  EXPECT_FALSE(cell(s, 0, "speedup_two_phase").mark);
  EXPECT_NE(cell(s, 0, "speedup_two_phase").detail.find("tie"), std::string::npos);
  EXPECT_NE(render(r, Format::table).find("× CUB cached"), std::string::npos);
  // The speed-up view: the bench's sizes, both calls, a line at 1.
  const LineChart* up = view(s, "speed-up vs CUB");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->y_scale, LineChart::YScale::log);
  ASSERT_EQ(up->series.size(), 2u);
  EXPECT_EQ(up->series[0].name, "i32 sum cached");
  ASSERT_EQ(up->series[0].points.size(), 2u);  // n20 and n24
  EXPECT_DOUBLE_EQ(up->series[0].points[1].y, 25.2 / 24.0);
  ASSERT_EQ(up->references.size(), 1u);
  EXPECT_EQ(up->references[0].y, 1.0);
}

TEST_F(BenchReport, TheLatestBenchOfASizeCounts) {
  const auto w = ok(winner_id, n24, 25.0);
  winner(winner_id, w, std::nullopt);
  store_winners();
  bench({result(db::BenchMethod::cached, n24, 30.0), result(db::BenchMethod::cub, n24, 25.0)});
  bench({result(db::BenchMethod::cached, n24, 24.0), result(db::BenchMethod::cub, n24, 26.4)});
  const Report r = build(Kind::best);
  EXPECT_DOUBLE_EQ(num(cell(r.sections[0], 0, "speedup_cached")), 26.4 / 24.0);
  EXPECT_TRUE(cell(r.sections[0], 0, "speedup_two_phase").is_null());  // not timed in that run
  EXPECT_EQ(str(cell(r.sections[0], 0, "why")), "only candidate");
}

TEST_F(BenchReport, VariantsGetTheCubColumnsAndAViewAgainstCub) {
  ok(winner_id, n20, 5.0);
  ok(other_id, n20, 6.0);
  ok(winner_id, n24, 25.0);
  ok(other_id, n24, 27.0);
  bench({result(db::BenchMethod::cached, n24, 25.5), result(db::BenchMethod::cub, n24, 26.0)});
  const Report r = build(Kind::variants);
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_TRUE(cell(s, 0, "cub_us").is_null());  // n20: no bench
  EXPECT_DOUBLE_EQ(num(cell(s, 1, "cub_us")), 26.0);
  EXPECT_DOUBLE_EQ(num(cell(s, 1, "speedup_cached")), 26.0 / 25.5);
  EXPECT_DOUBLE_EQ(num(cell(s, 1, "best_spread_pct")), 2.0);
  // Views: GB/s with the device's peaks, µs on a log scale with CUB as a baseline, speed-up.
  const LineChart* g = view(s, "GB/s");
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->references.size(), 2u);
  EXPECT_NEAR(g->references[0].y, test::demo_h100().theoretical_gbps(), 1e-9);
  EXPECT_DOUBLE_EQ(g->references[1].y, 3200.0);
  const LineChart* us = view(s, "µs (log)");
  ASSERT_NE(us, nullptr);
  EXPECT_EQ(us->y_scale, LineChart::YScale::log);
  ASSERT_FALSE(us->series.empty());
  EXPECT_TRUE(us->series.back().baseline);
  EXPECT_EQ(us->series.back().name, "CUB (bench)");
  const LineChart* up = view(s, "speed-up vs CUB");
  ASSERT_NE(up, nullptr);
  ASSERT_EQ(up->series.size(), 2u);                             // vectorized, smem
  EXPECT_DOUBLE_EQ(up->series[1].points.at(0).y, 26.0 / 25.0);  // vectorized at n24
  // Every family with a vertical header in HTML, so that the table fits.
  for (const Column& c : s.columns)
    if (c.id == "vectorized_us") {
      EXPECT_TRUE(c.vertical);
    }
  const std::string json = render(r, Format::json);
  EXPECT_NE(json.find("\"scale\": \"log10\""), std::string::npos);
  EXPECT_NE(json.find("\"baseline\": true"), std::string::npos);
  EXPECT_NE(json.find("\"view\": \"speed-up vs CUB\""), std::string::npos);
}

TEST_F(BenchReport, TheBenchKindComparesBothCallsWithCubAndSaysWhatIsBeyondNoise) {
  const std::uint64_t n10 = 1024, n14 = 16384;
  db::BenchResult thrust = result(db::BenchMethod::thrust, n24, 0);
  thrust.verified = false;
  thrust.median_us = thrust.p10_us = thrust.p90_us = std::nullopt;
  thrust.error = "thrust::reduce threw: out of memory";
  bench({result(db::BenchMethod::cached, n10, 4.0), result(db::BenchMethod::two_phase, n10, 4.1),
         result(db::BenchMethod::cub, n10, 4.4), result(db::BenchMethod::thrust, n10, 12.0),
         // 0.3 % apart: a tie; noisy runs (40 % spread) widen the tolerance past 2 %.
         result(db::BenchMethod::cached, n14, 5.0),
         result(db::BenchMethod::two_phase, n14, 5.1, 0.4),
         result(db::BenchMethod::cub, n14, 5.015, 0.4), result(db::BenchMethod::cached, n24, 26.0),
         result(db::BenchMethod::cub, n24, 25.0), thrust});
  bench({result(db::BenchMethod::cached, n20, 6.0), result(db::BenchMethod::cub, n20, 6.6)},
        db::BenchL2::dirty);
  Report r = build(Kind::bench);
  ASSERT_FALSE(r.empty) << *r.empty;
  ASSERT_EQ(r.sections.size(), 3u);  // summary, cold, dirty
  const Section& sum = r.sections[0];
  EXPECT_EQ(sum.table, "summary");
  ASSERT_EQ(sum.rows.size(), 2u);
  EXPECT_EQ(str(cell(sum, 0, "l2")), "cold");
  EXPECT_EQ(str(cell(sum, 0, "cached_verdicts")), "1 / 1 / 1");
  EXPECT_EQ(num(cell(sum, 0, "cached_faster")), 1);
  EXPECT_EQ(num(cell(sum, 0, "cached_slower")), 1);
  EXPECT_NEAR(num(cell(sum, 0, "cached_geomean")),
              std::cbrt((4.4 / 4.0) * (5.015 / 5.0) * (25.0 / 26.0)), 1e-12);
  EXPECT_DOUBLE_EQ(num(cell(sum, 0, "cached_min")), 25.0 / 26.0);
  EXPECT_EQ(str(cell(sum, 0, "two_phase_verdicts")), "1 / 1 / 0");

  const Section& s = r.sections[1];
  EXPECT_EQ(s.table, "bench");
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(str(cell(s, 0, "kernel")), winner_id);
  EXPECT_EQ(str(cell(s, 0, "lookup")), "exact");
  EXPECT_EQ(str(cell(s, 0, "verdict_cached")), "faster");
  EXPECT_EQ(cell(s, 0, "speedup_cached").text, "×1.10 faster");
  EXPECT_EQ(str(cell(s, 1, "verdict_cached")), "tie");
  EXPECT_EQ(str(cell(s, 1, "verdict_two_phase")), "tie");  // 1.7 % slower, within the noise
  EXPECT_EQ(str(cell(s, 2, "verdict_cached")), "slower");
  EXPECT_DOUBLE_EQ(num(cell(s, 0, "cached_spread_pct")), 2.0);
  EXPECT_DOUBLE_EQ(num(cell(s, 1, "two_phase_spread_pct")), 40.0);
  EXPECT_DOUBLE_EQ(num(cell(s, 0, "thrust_us")), 12.0);
  EXPECT_EQ(cell(s, 2, "thrust_us").text, "failed");
  EXPECT_EQ(cell(s, 2, "thrust_us").detail, "thrust::reduce threw: out of memory");
  EXPECT_NEAR(num(cell(s, 0, "cached_gbps")), 1024 * 4 / (4.0 * 1e3), 1e-12);
  // Charts: µs with CUB the baseline, the speed-up of the library's calls only, GB/s.
  const LineChart* us = view(s, "µs (log)");
  ASSERT_NE(us, nullptr);
  ASSERT_EQ(us->series.size(), 4u);
  EXPECT_TRUE(us->series[2].baseline);
  const LineChart* up = view(s, "speed-up vs CUB");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->series.size(), 2u);
  EXPECT_NE(s.notes.back().find("bench-host"), std::string::npos);

  // --l2 picks one mode; dirty runs show only without it.
  ReportOptions o;
  o.l2 = db::L2Mode::cold;
  r = build(Kind::bench, o);
  EXPECT_EQ(r.sections.size(), 2u);
  o.l2 = db::L2Mode::warm;
  r = build(Kind::bench, o);
  ASSERT_TRUE(r.empty);
  EXPECT_NE(r.empty->find("no bench results in the selection"), std::string::npos);
  // Every format renders it, the CSV with a table column (summary and bench rows differ).
  r = build(Kind::bench);
  const std::string csv = render(r, Format::csv);
  EXPECT_TRUE(csv.starts_with("table,"));
  EXPECT_NE(render(r, Format::markdown).find("×1.10 faster"), std::string::npos);
  EXPECT_NE(render(r, Format::html).find("figure class=\"views\""), std::string::npos);
}

// argmin and argmax from `tunedreduce bench` (schema version 9): a section of their own after
// the type's other operators, the winner set against CUB's ArgMin, and the GB/s of the bytes read
// (n elements of the type; the IndexedValue returned is not counted).
TEST_F(BenchReport, ArgminAndArgmaxBenchRowsCountTheBytesRead) {
  const std::string arg_id = "streaming.b512.u4.two_pass.f64.argmin";
  const auto w = ok(arg_id, n24, 52.0);
  winner(arg_id, w, std::nullopt);
  store_winners();
  auto arg = [&](db::BenchMethod m, std::uint64_t n, double us, Op op) {
    db::BenchResult r = result(m, n, us, 0.02, DType::f64);
    r.op = op;
    if (db::is_tuned(m))
      r.kernel_id = op == Op::argmin ? arg_id : "streaming.b512.u4.two_pass.f64.argmax";
    return r;
  };
  db::BenchResult sum = result(db::BenchMethod::cached, n24, 50.0, 0.02, DType::f64);
  sum.kernel_id = "streaming.b512.u4.two_pass.f64.sum";
  bench({arg(db::BenchMethod::cached, n24, 50.0, Op::argmin),
         arg(db::BenchMethod::two_phase, n24, 50.5, Op::argmin),
         arg(db::BenchMethod::cub, n24, 60.0, Op::argmin),
         arg(db::BenchMethod::cached, n24, 51.0, Op::argmax),
         arg(db::BenchMethod::cub, n24, 61.0, Op::argmax), sum,
         result(db::BenchMethod::cub, n24, 49.0, 0.02, DType::f64)});
  Report r = build(Kind::bench);
  ASSERT_FALSE(r.empty) << *r.empty;
  ASSERT_EQ(r.sections.size(), 4u);  // summary, f64 sum, f64 argmin, f64 argmax
  EXPECT_NE(r.sections[1].title.find("f64 sum"), std::string::npos) << r.sections[1].title;
  const Section& s = r.sections[2];
  EXPECT_NE(s.title.find("f64 argmin"), std::string::npos) << s.title;
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(str(cell(s, 0, "kernel")), arg_id);
  EXPECT_DOUBLE_EQ(num(cell(s, 0, "speedup_cached")), 60.0 / 50.0);
  EXPECT_NEAR(num(cell(s, 0, "cached_gbps")), 16777216.0 * 8 / (50.0 * 1e3), 1e-9);
  const LineChart* gbps = view(s, "GB/s");
  ASSERT_NE(gbps, nullptr);
  ASSERT_FALSE(gbps->series.empty());
  EXPECT_NEAR(gbps->series[0].points.at(0).y, 16777216.0 * 8 / (50.0 * 1e3), 1e-9);
  EXPECT_NE(r.sections[3].title.find("f64 argmax"), std::string::npos) << r.sections[3].title;
  // The summary: a row per key, argmin and argmax after sum.
  const Section& summary = r.sections[0];
  ASSERT_EQ(summary.rows.size(), 3u);
  EXPECT_EQ(str(cell(summary, 0, "op")), "sum");
  EXPECT_EQ(str(cell(summary, 1, "op")), "argmin");
  EXPECT_EQ(str(cell(summary, 2, "op")), "argmax");

  // best: the argmin winner against CUB at its evidence size.
  r = build(Kind::best);
  ASSERT_EQ(r.sections.size(), 1u);
  ASSERT_EQ(r.sections[0].rows.size(), 1u);
  EXPECT_EQ(str(cell(r.sections[0], 0, "op")), "argmin");
  EXPECT_DOUBLE_EQ(num(cell(r.sections[0], 0, "cub_us")), 60.0);
  EXPECT_DOUBLE_EQ(num(cell(r.sections[0], 0, "speedup_cached")), 60.0 / 50.0);
  EXPECT_NEAR(num(cell(r.sections[0], 0, "gbps")), 16777216.0 * 8 / 52e3, 1e-9);
}

TEST_F(BenchReport, WithoutBenchRunsTheKindSaysHowToGetThem) {
  ok(winner_id, n24, 25.0);
  const Report r = build(Kind::bench);
  ASSERT_TRUE(r.empty);
  EXPECT_NE(r.empty->find("`tunedreduce bench` records them"), std::string::npos);
}

TEST(BenchReportOnVersion3, AVersion3FileHasNoBenchRunsAndReportsAsBefore) {
  db::test::TempDir dir;
  const auto path = db::test::copy_fixture("schema_v3.db", dir);
  db::Database r = db::Database::open_reader(path);
  EXPECT_EQ(r.file_schema_version(), 3);
  for (Kind k : {Kind::best, Kind::variants, Kind::coverage}) {
    ReportOptions o;
    o.kind = k;
    EXPECT_NO_THROW(build_report(r, o)) << kind_name(k);
  }
  ReportOptions o;
  o.kind = Kind::bench;
  const Report b = build_report(r, o);
  ASSERT_TRUE(b.empty);
  EXPECT_NE(b.empty->find("no bench runs"), std::string::npos);
}

TEST_F(BenchReport, WhyNamesTheTieRulesCriterionAndWhenTodaysRuleDisagrees) {
  // A one-launch winner 0.3 % slower than a two-pass one at 5 µs: the one-launch preference.
  const auto a = ok("vectorized.b256.u4.single_pass.i32.sum", 1024, 5.015, 0.02, 100);
  const auto b = ok("vectorized.b256.u4.two_pass.i32.sum", 1024, 5.0, 0.02, 100);
  winner("vectorized.b256.u4.single_pass.i32.sum", a, b, "vectorized.b256.u4.two_pass.i32.sum", 1,
         2047);
  // At 300 µs a tiled grid 0.2 % slower than a persistent one.
  const auto c = ok("tiled.b256.u4.single_pass.i32.sum", 1 << 26, 300.6, 0.02, 100);
  const auto e = ok("vectorized.b256.u4.single_pass.i32.sum", 1 << 26, 300.0, 0.02, 100);
  winner("tiled.b256.u4.single_pass.i32.sum", c, e, "vectorized.b256.u4.single_pass.i32.sum",
         std::uint64_t{1} << 25, std::uint64_t{1} << 27);
  // The smaller block × unroll, 4 % slower: more than today's 1 % ceiling (an older rule's tie).
  const auto f = ok("vectorized.b128.u4.single_pass.i32.sum", n20, 10.4, 0.02, 100);
  const auto g = ok("vectorized.b256.u4.single_pass.i32.sum", n20, 10.0, 0.02, 100);
  winner("vectorized.b128.u4.single_pass.i32.sum", f, g, "vectorized.b256.u4.single_pass.i32.sum",
         2048, std::uint64_t{1} << 22);
  // Faster than its runner-up.
  const auto h = ok("vectorized.b256.u4.single_pass.i32.sum", n24, 25.0);
  const auto k = ok("smem.b256.u8.static.single_pass.i32.sum", n24, 26.0);
  winner("vectorized.b256.u4.single_pass.i32.sum", h, k, "smem.b256.u8.static.single_pass.i32.sum",
         (std::uint64_t{1} << 22) + 1, (std::uint64_t{1} << 25) - 1);
  store_winners();
  const Report r = build(Kind::best);
  const Section& s = r.sections.at(0);
  ASSERT_EQ(s.rows.size(), 4u);
  EXPECT_EQ(str(cell(s, 0, "why")), "tie: one launch");
  EXPECT_EQ(cell(s, 0, "why").detail.find("would not call it a tie"), std::string::npos);
  EXPECT_EQ(str(cell(s, 1, "why")), "tie: smaller block × unroll");
  EXPECT_NE(cell(s, 1, "why")
                .detail.find("would not call it a tie: its tolerance for these two "
                             "measurements is 0.5 %"),
            std::string::npos)
      << cell(s, 1, "why").detail;
  EXPECT_EQ(str(cell(s, 2, "why")), "fastest");
  EXPECT_EQ(str(cell(s, 3, "why")), "tie: one block per tile");
  EXPECT_LT(num(cell(s, 3, "margin_pct")), 0);
  EXPECT_DOUBLE_EQ(num(cell(s, 2, "spread_pct")), 2.0);
}

TEST_F(BenchReport, TheBestChartPlotsTheWinnerNotTheFastestMeasurement) {
  // At n20 the winner (a tie's one-launch choice) is slower than the fastest measurement.
  const auto w = ok("vectorized.b256.u4.single_pass.i32.sum", n20, 10.02);
  const auto f = ok("vectorized.b256.u4.two_pass.i32.sum", n20, 10.0);
  ok("smem.b256.u8.static.single_pass.i32.sum", n24, 24.0);  // faster, but not the winner at n24
  const auto w24 = ok("vectorized.b256.u4.single_pass.i32.sum", n24, 25.0);
  winner("vectorized.b256.u4.single_pass.i32.sum", w, f, "vectorized.b256.u4.two_pass.i32.sum");
  store_winners();
  (void)w24;
  const Report r = build(Kind::best);
  const LineChart* g = view(r.sections.at(0), "GB/s");
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->series.size(), 1u);
  ASSERT_EQ(g->series[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(g->series[0].points[0].y, static_cast<double>(n20) * 4 / (10.02 * 1e3));
  EXPECT_DOUBLE_EQ(g->series[0].points[1].y, static_cast<double>(n24) * 4 / (25.0 * 1e3));
  EXPECT_EQ(g->series[0].points[1].label, "vectorized.b256.u4.single_pass.i32.sum");
  const LineChart* us = view(r.sections.at(0), "µs (log)");
  ASSERT_NE(us, nullptr);
  EXPECT_DOUBLE_EQ(us->series[0].points[0].y, 10.02);
}

TEST_F(BenchReport, HeatmapsShareOneColourScale) {
  for (int b : {128, 256})
    for (int u : {2, 4}) {
      ok("vectorized.b" + std::to_string(b) + ".u" + std::to_string(u) + ".single_pass.i32.sum",
         n24, 20.0 + b / 64.0 + u);
      ok("tiled.b" + std::to_string(b) + ".u" + std::to_string(u) + ".single_pass.i32.sum", n24,
         40.0 + b / 64.0 + u);
    }
  const Report r = build(Kind::heatmap);
  ASSERT_EQ(r.sections.size(), 2u);
  double lo = INFINITY, hi = 0;
  for (const Section& s : r.sections)
    for (const auto& row : std::get<HeatmapChart>(s.charts.at(0)).values)
      for (const auto& v : row)
        if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
  for (const Section& s : r.sections) {
    const auto& h = std::get<HeatmapChart>(s.charts.at(0));
    ASSERT_TRUE(h.scale_lo && h.scale_hi);
    EXPECT_DOUBLE_EQ(*h.scale_lo, lo);
    EXPECT_DOUBLE_EQ(*h.scale_hi, hi);
  }
  const std::string html = render(r, Format::html);
  EXPECT_NE(html.find("data-shared=\"1\""), std::string::npos);
  EXPECT_NE(render(r, Format::json).find("\"scale\": {"), std::string::npos);
}

TEST(ReportCharts, ElevenFamiliesAndABaselineLookApart) {
  // Every series of a line chart has its own colour and marker shape pair (the palette and the
  // markers do not repeat together before 12 series), the baseline is black.
  LineChart c;
  c.y_label = "µs";
  c.y_scale = LineChart::YScale::log;
  for (int i = 0; i < 12; ++i) {
    LineChart::Series s;
    s.name = "family" + std::to_string(i);
    s.points = {{1024, 3.0 + i, ""}, {4096, 4.0 + i, ""}};
    c.series.push_back(s);
  }
  c.series.back().baseline = true;
  Report r;
  r.kind = Kind::variants;
  r.title = "t";
  Section s;
  s.table = "x";
  s.title = "x";
  s.charts.push_back(c);
  r.sections.push_back(s);
  const std::string html = render(r, Format::html);
  std::set<std::string> styles;
  for (int i = 0; i < 11; ++i) {
    const std::string at = "data-series=\"family" + std::to_string(i) + "\">";
    const auto p = html.find("<g class=\"series\" " + at);
    ASSERT_NE(p, std::string::npos) << i;
    const auto stroke = html.find("stroke=\"", p);
    const std::string colour = html.substr(stroke + 8, 7);
    EXPECT_TRUE(styles.insert(colour).second) << "colour " << colour << " repeats at " << i;
  }
  EXPECT_NE(html.find("<g class=\"series baseline\" data-series=\"family11\">"), std::string::npos);
  EXPECT_NE(html.find("stroke=\"#111111\" stroke-width=\"3\""), std::string::npos);
  // A log axis has 1-2-5 ticks.
  EXPECT_NE(html.find(">5</text>"), std::string::npos);
  EXPECT_NE(html.find(">10</text>"), std::string::npos);
}

}  // namespace
}  // namespace tunedreduce::reports
