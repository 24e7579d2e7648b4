// `report segmented` on small hand-made databases with known numbers: the plane's cells and its
// blank ones, the table's rows in CSV and JSON, the HTML map; and that the whole-array kinds
// never take a segmented measurement for a candidate (docs/reports.md).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"
#include "common/json.hpp"
#include "demo_db.hpp"
#include "kernels/manifest.hpp"
#include "kernels/registry.hpp"
#include "kernels/segmented/segmented.hpp"
#include "reports/reports.hpp"
#include "report_test_util.hpp"

namespace tunedreduce::reports {
namespace {

namespace seg = kernels::segmented;
using test::cell;
using test::num;
using test::str;

constexpr std::uint64_t n24 = std::uint64_t{1} << 24;

seg::SegParams f32_sum(seg::SegFamily f, int block, int group, int vec,
                       seg::SegLayout l = seg::SegLayout::fixed) {
  return {f, block, group, vec, l, DType::f32, Op::sum};
}
const seg::SegParams tile = f32_sum(seg::SegFamily::tile, 256, 1, 4);
const seg::SegParams thread4 = f32_sum(seg::SegFamily::thread, 256, 1, 4);
const seg::SegParams block256 = f32_sum(seg::SegFamily::block, 256, 256, 4);
const seg::SegParams split512 = f32_sum(seg::SegFamily::split, 512, 512, 4);
const seg::SegParams group8 = f32_sum(seg::SegFamily::group, 256, 8, 4);
const seg::SegParams offsets_group4 =
    f32_sum(seg::SegFamily::group, 256, 4, 4, seg::SegLayout::offsets32);

class SegmentedReport : public ::testing::Test {
 protected:
  void SetUp() override {
    const test::FixtureRun f = test::begin_fixture_run(d);  // attainable 3200 GB/s
    dev = f.dev;
    run = f.run;
  }

  // An ok segmented measurement: \p count segments of \p size elements.
  std::int64_t seg_ok(const seg::SegParams& p, std::uint64_t size, std::uint64_t count, double us,
                      db::L2Mode l2 = db::L2Mode::cold, int repeats = 10) {
    db::Measurement m;
    m.run_id = run;
    m.device_id = dev;
    m.kernel_id = seg::make_seg_id(p);
    m.params = seg::stored_params(p);
    m.dtype = p.dtype;
    m.op = p.op;
    m.n = size * count;
    m.segment_size = size;
    m.l2_mode = l2;
    m.median_us = us;
    m.p10_us = us * 0.99;
    m.p90_us = us * 1.01;
    m.repeats = repeats;
    m.gbps = static_cast<double>(m.n) * dtype_size(m.dtype) / (us * 1e3);
    return d.insert_measurement(m);
  }

  // A whole-array ok measurement of a registry id.
  std::int64_t ok(const std::string& id, std::uint64_t n, double us) {
    const auto p = kernels::parse_id(id);
    EXPECT_TRUE(p) << id;
    db::Measurement m;
    m.run_id = run;
    m.device_id = dev;
    m.kernel_id = id;
    m.params = kernels::stored_params(*p);
    m.dtype = p->dtype;
    m.op = p->op;
    m.n = n;
    m.median_us = us;
    m.p10_us = us * 0.99;
    m.p90_us = us * 1.01;
    m.repeats = 10;
    m.gbps = static_cast<double>(n) * dtype_size(m.dtype) / (us * 1e3);
    return d.insert_measurement(m);
  }

  db::SegmentedWinner winner(const seg::SegParams& p, std::uint64_t size_lo, std::uint64_t size_hi,
                             std::uint64_t count_lo, std::uint64_t count_hi, std::int64_t evidence,
                             const seg::SegParams* runner_up = nullptr,
                             std::int64_t runner_up_evidence = 0) {
    db::SegmentedWinner w;
    w.dtype = p.dtype;
    w.op = p.op;
    w.layout = seg::seg_layout_name(p.layout);
    w.size_lo = size_lo;
    w.size_hi = size_hi;
    w.count_lo = count_lo;
    w.count_hi = count_hi;
    w.kernel_id = seg::make_seg_id(p);
    w.measurement_id = evidence;
    if (runner_up) {
      w.runner_up_kernel_id = seg::make_seg_id(*runner_up);
      w.runner_up_measurement_id = runner_up_evidence;
    }
    w.driver_version = w.runtime_version = 12080;  // the fixture device's: not stale
    w.run_id = run;
    return w;
  }

  Report build(Kind k, ReportOptions o = {}) {
    o.kind = k;
    return build_report(d, o);
  }

  // The plane of the section tests build: f32 sum, fixed rows.
  //   segments \ size   4                        8                    1024
  //   2^10              —                        —                    no winner (measured)
  //   2^14              —                        —                    block b256, 83.968 %, +4 %
  //   2^20              tile v4, 32.768 %, +25 % tile (not measured)  —
  void build_plane() {
    const std::int64_t t = seg_ok(tile, 4, 1 << 20, 20.0);
    const std::int64_t th = seg_ok(thread4, 4, 1 << 20, 25.0);
    seg_ok(thread4, 8, 1 << 20, 30.0);  // the tile winner's rectangle holds it; tile not measured
    const std::int64_t b = seg_ok(block256, 1024, 1 << 14, 25.0);
    const std::int64_t s = seg_ok(split512, 1024, 1 << 14, 26.0);
    seg_ok(block256, 1024, 1 << 10, 3.0);  // measured, outside every rectangle
    seg_ok(split512, 1024, 1 << 10, 4.0);
    const db::SegmentedWinner ws[] = {winner(tile, 1, 8, 1 << 16, 1 << 24, t, &thread4, th),
                                      winner(block256, 512, 2048, 1 << 12, 1 << 16, b, &split512,
                                             s)};
    d.replace_segmented_winners(dev, DType::f32, Op::sum, "fixed", ws);
  }

  db::Database d = db::Database::create_in_memory();
  std::int64_t dev = 0, run = 0;
};

TEST_F(SegmentedReport, ThePlaneHasACellPerTunedShapeAndBlanksElsewhere) {
  build_plane();
  const Report r = build(Kind::segmented);
  ASSERT_FALSE(r.empty) << *r.empty;
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  EXPECT_EQ(s.table, "segmented");
  EXPECT_NE(s.title.find("f32 sum · fixed"), std::string::npos) << s.title;
  EXPECT_NE(std::find(s.key.begin(), s.key.end(),
                      std::pair<std::string, std::string>{"layout", "fixed"}),
            s.key.end());
  ASSERT_EQ(s.charts.size(), 1u);
  const auto& h = std::get<HeatmapChart>(s.charts[0]);
  EXPECT_EQ(h.cols, (std::vector<std::string>{"4", "8", "2^10"}));        // segment sizes
  EXPECT_EQ(h.rows, (std::vector<std::string>{"2^10", "2^14", "2^20"}));  // segments
  ASSERT_EQ(h.values.size(), 3u);
  ASSERT_EQ(h.labels.size(), 3u);
  // 2^20 rows of 4 floats: 16 MiB read and 4 MiB of results in 20 µs against 3200 GB/s.
  ASSERT_TRUE(h.values[2][0]);
  EXPECT_NEAR(*h.values[2][0], 100.0 * (20971520.0 / 20e3) / 3200, 1e-9);
  EXPECT_EQ(h.labels[2][0], "tile v4\n33% · +25.0%");
  // 2^14 rows of 1024 floats in 25 µs; the split runner-up 26 µs: 4 % slower.
  ASSERT_TRUE(h.values[1][2]);
  EXPECT_NEAR(*h.values[1][2], 100.0 * (67174400.0 / 25e3) / 3200, 1e-9);
  EXPECT_EQ(h.labels[1][2], "block b256\n84% · +4.0%");
  // The tile winner's rectangle holds rows of 8 too, where only thread was measured.
  EXPECT_FALSE(h.values[2][1]);
  EXPECT_EQ(h.labels[2][1], "tile v4\nnot measured");
  // Measured, but no winner's rectangle holds it.
  EXPECT_FALSE(h.values[0][2]);
  EXPECT_EQ(h.labels[0][2], "no winner");
  // Blank, not zero, where nothing was measured.
  for (auto [i, j] : {std::pair{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 2}}) {
    EXPECT_FALSE(h.values[i][j]) << i << "," << j;
    EXPECT_EQ(h.labels[i][j], "") << i << "," << j;
    EXPECT_EQ(h.details[i][j], "not measured") << i << "," << j;
  }
}

TEST_F(SegmentedReport, TheTableHasARowPerShapeWithWinnerFloorAndMargin) {
  build_plane();
  const Report r = build(Kind::segmented);
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  // By segment size, then segments.
  ASSERT_EQ(s.rows.size(), 4u);
  EXPECT_EQ(num(cell(s, 0, "segment_size")), 4);
  EXPECT_EQ(num(cell(s, 0, "segments")), 1 << 20);
  EXPECT_EQ(num(cell(s, 0, "total")), 1 << 22);
  EXPECT_EQ(str(cell(s, 0, "kernel")), "seg.tile.b256.v4.fixed.f32.sum");
  EXPECT_EQ(str(cell(s, 0, "family")), "tile v4");
  EXPECT_EQ(num(cell(s, 0, "median_us")), 20.0);
  EXPECT_NEAR(num(cell(s, 0, "gbps")), 1048.576, 1e-9);
  EXPECT_NEAR(num(cell(s, 0, "pct_floor")), 32.768, 1e-9);
  EXPECT_EQ(str(cell(s, 0, "runner_up")), "seg.thread.b256.v4.fixed.f32.sum");
  EXPECT_NEAR(num(cell(s, 0, "margin_pct")), 25.0, 1e-9);
  EXPECT_EQ(cell(s, 0, "margin_pct").text, "+25.0%");
  EXPECT_EQ(num(cell(s, 0, "candidates")), 2);
  EXPECT_EQ(str(cell(s, 0, "stale")), "no");
  EXPECT_EQ(num(cell(s, 0, "size_lo")), 1);
  EXPECT_EQ(num(cell(s, 0, "count_hi")), 1 << 24);

  EXPECT_EQ(num(cell(s, 1, "segment_size")), 8);  // held by the tile winner, not measured
  EXPECT_EQ(str(cell(s, 1, "kernel")), "seg.tile.b256.v4.fixed.f32.sum");
  EXPECT_TRUE(cell(s, 1, "median_us").is_null());
  EXPECT_TRUE(cell(s, 1, "pct_floor").is_null());
  EXPECT_TRUE(cell(s, 1, "margin_pct").is_null());

  EXPECT_EQ(num(cell(s, 2, "segments")), 1 << 10);  // no winner
  EXPECT_TRUE(cell(s, 2, "kernel").is_null());
  EXPECT_EQ(cell(s, 2, "kernel").text, "no winner");
  EXPECT_NE(cell(s, 2, "kernel").detail.find("seg.block.b256.v4.fixed.f32.sum: 3.00 µs"),
            std::string::npos)
      << cell(s, 2, "kernel").detail;
  EXPECT_EQ(num(cell(s, 2, "candidates")), 2);

  EXPECT_EQ(str(cell(s, 3, "family")), "block b256");
  EXPECT_NEAR(num(cell(s, 3, "pct_floor")), 83.968, 1e-9);
  EXPECT_NEAR(num(cell(s, 3, "margin_pct")), 4.0, 1e-9);
}

TEST_F(SegmentedReport, AtAShapeOtherThanItsEvidenceTheLastRoundCounts) {
  // One rectangle over rows of 2 and 4; its evidence and runner-up at 4. At 2, successive
  // halving measured both kernels in a first round of 3 repeats (faster by chance) and then in a
  // last round of 10: the report takes the last round's, not the fastest.
  constexpr db::L2Mode cold = db::L2Mode::cold;
  const std::int64_t t = seg_ok(tile, 4, 1 << 20, 20.0);
  const std::int64_t th = seg_ok(thread4, 4, 1 << 20, 25.0);
  seg_ok(tile, 2, 1 << 20, 11.0, cold, 3);
  seg_ok(thread4, 2, 1 << 20, 11.5, cold, 3);
  seg_ok(tile, 2, 1 << 20, 12.5, cold, 10);
  seg_ok(thread4, 2, 1 << 20, 15.0, cold, 10);
  const db::SegmentedWinner w = winner(tile, 1, 4, 1, 1 << 24, t, &thread4, th);
  d.replace_segmented_winners(dev, DType::f32, Op::sum, "fixed", std::span(&w, 1));
  const Report r = build(Kind::segmented);
  ASSERT_EQ(r.sections.size(), 1u);
  const Section& s = r.sections[0];
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(num(cell(s, 0, "segment_size")), 2);
  EXPECT_EQ(num(cell(s, 0, "median_us")), 12.5);
  EXPECT_NEAR(num(cell(s, 0, "margin_pct")), 20.0, 1e-9);  // 15 / 12.5
  EXPECT_NE(cell(s, 0, "margin_pct").detail.find("(10 repeats)"), std::string::npos)
      << cell(s, 0, "margin_pct").detail;
  EXPECT_EQ(num(cell(s, 1, "median_us")), 20.0);  // the evidence
  EXPECT_NEAR(num(cell(s, 1, "margin_pct")), 25.0, 1e-9);
}

TEST_F(SegmentedReport, CsvAndJsonHaveARowPerShape) {
  build_plane();
  ReportOptions o;
  o.kind = Kind::segmented;
  const Report r = build_report(d, o);
  const auto csv = test::parse_csv(render(r, Format::csv));
  ASSERT_EQ(csv.size(), 5u);  // the header and four shapes
  const auto& head = csv[0];
  auto at = [&](const std::string& id) {
    const auto it = std::find(head.begin(), head.end(), id);
    EXPECT_NE(it, head.end()) << id;
    return static_cast<std::size_t>(it - head.begin());
  };
  for (const char* id :
       {"device", "fingerprint", "dtype", "op", "layout", "segment_size", "segments", "total",
        "kernel", "median_us", "pct_floor", "runner_up", "margin_pct"})
    at(id);
  EXPECT_EQ(csv[1][at("device")], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(csv[1][at("dtype")], "f32");
  EXPECT_EQ(csv[1][at("op")], "sum");
  EXPECT_EQ(csv[1][at("layout")], "fixed");
  EXPECT_EQ(csv[1][at("segment_size")], "4");
  EXPECT_EQ(csv[1][at("segments")], "1048576");
  EXPECT_EQ(csv[1][at("total")], "4194304");
  EXPECT_EQ(csv[1][at("kernel")], "seg.tile.b256.v4.fixed.f32.sum");
  EXPECT_EQ(csv[1][at("median_us")], "20");
  EXPECT_EQ(csv[1][at("pct_floor")], "32.768");
  EXPECT_EQ(csv[1][at("margin_pct")], "25");
  EXPECT_EQ(csv[3][at("kernel")], "");  // no winner: empty, not a name
  EXPECT_EQ(csv[3][at("pct_floor")], "");

  const Json doc = Json::parse(render(r, Format::json));
  EXPECT_EQ(doc.find("kind")->as_string(), "segmented");
  EXPECT_EQ(doc.find("filters")->find("layout")->as_string(), "all");
  EXPECT_EQ(doc.find("filters")->find("l2")->as_string(), "cold");
  const Json& sec = doc.find("sections")->as_array().at(0);
  EXPECT_EQ(sec.find("key")->find("layout")->as_string(), "fixed");
  const auto& rows = sec.find("rows")->as_array();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[3].find("segment_size")->as_int(), 1024);
  EXPECT_EQ(rows[3].find("segments")->as_int(), 16384);
  EXPECT_EQ(rows[3].find("kernel")->as_string(), "seg.block.b256.v4.fixed.f32.sum");
  EXPECT_NEAR(rows[3].find("pct_floor")->as_double(), 83.968, 1e-9);
  EXPECT_TRUE(rows[2].find("kernel")->is_null());
  const Json& chart = sec.find("charts")->as_array().at(0);
  EXPECT_EQ(chart.find("type")->as_string(), "heatmap");
  const auto& values = chart.find("values")->as_array();
  EXPECT_TRUE(values.at(0).as_array().at(0).is_null());  // blank: null, not 0
  EXPECT_NEAR(values.at(2).as_array().at(0).as_double(), 32.768, 1e-9);
  EXPECT_EQ(chart.find("labels")->as_array().at(1).as_array().at(2).as_string(),
            "block b256\n84% · +4.0%");
  const auto& notes = doc.find("notes")->as_array();
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const Json& n) {
    return n.as_string().starts_with(
        "No segmented bench results in the selection: `tunedreduce "
        "bench --segments` records");
  }));
}

TEST_F(SegmentedReport, HtmlDrawsTheMapWithItsLabelsAndBlankCells) {
  build_plane();
  const std::string html = render(build(Kind::segmented), Format::html);
  EXPECT_NE(html.find("<svg class=\"chart heatmap\""), std::string::npos);
  EXPECT_NE(html.find(">tile v4</text>"), std::string::npos);
  EXPECT_NE(html.find(">33% · +25.0%</text>"), std::string::npos);
  EXPECT_NE(html.find(">no winner</text>"), std::string::npos);
  // A blank cell is an empty rectangle: no value, no dash.
  const std::string blank = "<g class=\"cell\" data-row=\"2^10\" data-col=\"4\">";
  const auto at = html.find(blank);
  ASSERT_NE(at, std::string::npos);
  const std::string g = html.substr(at, html.find("</g>", at) - at);
  EXPECT_EQ(g.find("<text"), std::string::npos) << g;
  EXPECT_EQ(g.find("stroke="), std::string::npos) << g;  // labelled maps outline no cell
  // The table: the runner-up column is there for people in HTML (not in the terminal's table).
  EXPECT_NE(html.find("seg.<wbr>thread.<wbr>b256"), std::string::npos);
  const std::string table = render(build(Kind::segmented), Format::table);
  const auto header = table.find("segment size  segments");
  ASSERT_NE(header, std::string::npos) << table;
  const std::string header_line = table.substr(header, table.find('\n', header) - header);
  EXPECT_NE(header_line.find("margin"), std::string::npos) << header_line;
  EXPECT_EQ(header_line.find("runner-up"), std::string::npos) << header_line;
}

TEST_F(SegmentedReport, LayoutsAreSectionsOfTheirOwnAndFilterable) {
  build_plane();
  const std::int64_t g = seg_ok(offsets_group4, 64, 1 << 16, 10.0);
  const db::SegmentedWinner w = winner(offsets_group4, 64, 64, 1 << 16, 1 << 16, g);
  d.replace_segmented_winners(dev, DType::f32, Op::sum, "offsets32", std::span(&w, 1));
  Report r = build(Kind::segmented);
  ASSERT_EQ(r.sections.size(), 2u);
  EXPECT_NE(r.sections[1].title.find("· offsets32"), std::string::npos);
  EXPECT_EQ(str(cell(r.sections[1], 0, "family")), "group g4");
  EXPECT_EQ(cell(r.sections[1], 0, "margin_pct").text, "only candidate");
  // Two maps: one colour scale.
  const auto& a = std::get<HeatmapChart>(r.sections[0].charts[0]);
  const auto& b = std::get<HeatmapChart>(r.sections[1].charts[0]);
  ASSERT_TRUE(a.scale_lo && b.scale_lo);
  EXPECT_EQ(*a.scale_lo, *b.scale_lo);
  EXPECT_EQ(*a.scale_hi, *b.scale_hi);

  ReportOptions o;
  o.layouts = {"offsets32"};
  r = build(Kind::segmented, o);
  ASSERT_EQ(r.sections.size(), 1u);
  EXPECT_EQ(r.sections[0].key.back().second, "offsets32");
  o.layouts = {"offsets64"};
  r = build(Kind::segmented, o);
  ASSERT_TRUE(r.empty);
  EXPECT_NE(r.empty->find("nothing matches the selection (layout offsets64)"), std::string::npos)
      << *r.empty;
  o.layouts = {"ragged"};
  try {
    build(Kind::segmented, o);
    ADD_FAILURE() << "an unknown layout was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("unknown layout 'ragged' (choose from fixed, offsets32, "
                                         "offsets64)"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(SegmentedReport, TheL2ModeIsTheSegmentedMeasurementsOwn) {
  // Whole-array measurements are cold, the segmented ones warm: the default takes warm.
  ok("vectorized.b256.u4.single_pass.f32.sum", n24, 25.0);
  const std::int64_t t = seg_ok(tile, 4, 1 << 20, 20.0, db::L2Mode::warm);
  db::SegmentedWinner w = winner(tile, 4, 4, 1 << 20, 1 << 20, t);
  w.l2_mode = db::L2Mode::warm;
  d.replace_segmented_winners(dev, DType::f32, Op::sum, "fixed", std::span(&w, 1),
                              db::L2Mode::warm);
  const Report r = build(Kind::segmented);
  ASSERT_FALSE(r.empty) << *r.empty;
  EXPECT_EQ(r.filters.back(), (std::pair<std::string, std::string>{"l2", "warm"}));
  EXPECT_EQ(str(cell(r.sections.at(0), 0, "kernel")), "seg.tile.b256.v4.fixed.f32.sum");
}

TEST_F(SegmentedReport, WithoutSegmentedMeasurementsTheReportSaysSo) {
  ok("vectorized.b256.u4.single_pass.f32.sum", n24, 25.0);
  const Report r = build(Kind::segmented);
  ASSERT_TRUE(r.empty);
  EXPECT_NE(r.empty->find("no segmented measurements or segmented bench results in the selection "
                          "(1 measurement of whole arrays)"),
            std::string::npos)
      << *r.empty;
  EXPECT_EQ(render(r, Format::csv), "");
}

// Every whole-array kind on a database where segmented measurements of the same key would be
// the fastest per element by far: none of them may show one.
TEST_F(SegmentedReport, WholeArrayReportsIgnoreSegmentedMeasurements) {
  const std::string vec = "vectorized.b256.u4.single_pass.f32.sum";
  const std::string smem = "smem.b256.u8.static.single_pass.f32.sum";
  db::Winner win;
  win.dtype = DType::f32;
  win.op = Op::sum;
  win.n_lo = 1;
  win.n_hi = kernels::max_elements;
  win.kernel_id = vec;
  win.measurement_id = ok(vec, n24, 25.0);
  win.runner_up_kernel_id = smem;
  win.runner_up_measurement_id = ok(smem, n24, 26.0);
  win.driver_version = win.runtime_version = 12080;
  win.run_id = run;
  d.replace_winners(dev, DType::f32, Op::sum, std::span(&win, 1));
  // The same total, 2^24 elements, as segments: 1 µs, 25 times faster than the whole array.
  const std::int64_t t = seg_ok(tile, 4, n24 / 4, 1.0);
  seg_ok(thread4, 4, n24 / 4, 2.0);
  seg_ok(group8, 1 << 12, 1 << 12, 1.5);
  const db::SegmentedWinner sw = winner(tile, 4, 4, n24 / 4, n24 / 4, t);
  d.replace_segmented_winners(dev, DType::f32, Op::sum, "fixed", std::span(&sw, 1));
  // Segmented i32 max in the same run, which stored no configuration: what it asked for is
  // inferred from its whole-array measurements alone (f32 sum), not i32 and max too.
  const seg::SegParams i32_max{seg::SegFamily::thread, 256,        1,      4,
                               seg::SegLayout::fixed,  DType::i32, Op::max};
  seg_ok(i32_max, 4, n24 / 4, 2.5);

  for (Kind k :
       {Kind::best, Kind::variants, Kind::ladder, Kind::heatmap, Kind::compare, Kind::coverage}) {
    SCOPED_TRACE(kind_name(k));
    ReportOptions o;
    o.kind = k;
    const Report r = build_report(d, o);
    ASSERT_FALSE(r.empty) << *r.empty;
    for (Format f : {Format::table, Format::csv, Format::json, Format::html})
      EXPECT_EQ(render(r, f).find("seg."), std::string::npos) << format_name(f);
  }
  const Report v = build(Kind::variants);
  ASSERT_EQ(v.sections.size(), 1u);
  EXPECT_EQ(num(cell(v.sections[0], 0, "n")), n24);
  EXPECT_EQ(v.sections[0].rows.size(), 1u);  // 2^22 and 2^24 totals of segments are not sizes
  EXPECT_EQ(str(cell(v.sections[0], 0, "best_family")), "vectorized");
  const Report h = build(Kind::heatmap);
  EXPECT_EQ(h.sections.size(), 2u);  // vectorized and smem: no "seg.tile" map

  const Report c = build(Kind::coverage);
  const Section& keys = c.sections.at(0);
  ASSERT_EQ(keys.rows.size(), 1u);  // f32 sum: not i32 sum, f32 max or i32 max "not measured"
  EXPECT_EQ(str(cell(keys, 0, "dtype")), "f32");
  EXPECT_EQ(str(cell(keys, 0, "status")), "tuned");
  for (const Section& s : c.sections)
    if (s.table == "unknown_kernels") {
      EXPECT_TRUE(s.rows.empty());  // segmented ids are not kernels this binary lacks
    }
}

}  // namespace
}  // namespace tunedreduce::reports
