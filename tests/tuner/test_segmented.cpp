// Segmented tuning without a GPU: the plan's grid and candidates, the search at every grid point
// against a runner of known timings, and the winners as rectangles of the (segment size, segment
// count) plane.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "db/database.hpp"
#include "tests/db/test_util.hpp"
#include "tuner/replay_runner.hpp"
#include "tuner/search_space.hpp"
#include "tuner/session.hpp"
#include "tuner/winners_table.hpp"
#include "kernels/segmented/segmented.hpp"
#include "synthetic.hpp"
#include "tuner/config.hpp"
#include "tuner/driver.hpp"
#include "tuner/seg_rectangles.hpp"
#include "tuner/segmented_space.hpp"

namespace tunedreduce::tuner {
namespace {

using kseg::SegFamily;
using kseg::SegLayout;

TuneConfig config_of(const std::string& segmented, const std::string& strategy = "exhaustive") {
  return validate_config(parse_config_text(
      "[space]\nfamilies = [\"vectorized\"]\nblocks = [256]\nunrolls = [4]\n"
      "finishes = [\"single_pass\"]\ndtypes = [\"f32\"]\nops = [\"sum\"]\nsizes = [1048576]\n"
      "[strategy]\nname = \"" +
          strategy + "\"\n[segmented]\n" + segmented,
      "t.toml"));
}

// The synthetic model of segmented entries (synthetic.hpp): the fastest candidate is known.
double seg_us(const std::string& id, std::uint64_t segment_size, std::uint64_t count) {
  return test::seg_model_us(id, segment_size, count);
}

Result seg_result(const Request& q, double us) {
  Result r;
  r.kernel_id = q.kernel_id;
  r.n = q.n;
  r.segment_size = q.segment_size;
  if (const auto p = kseg::parse_seg_id(q.kernel_id)) {
    r.dtype = p->dtype;
    r.op = p->op;
  }
  r.outcome = Outcome::ok;
  r.median_us = us;
  r.p10_us = us * 0.995;
  r.p90_us = us * 1.005;
  r.repeats = q.min_repeats.value_or(20);
  return r;
}

// Answers segmented requests from seg_us (whole-array ones from the synthetic model), checking
// that each carries its segment size and the total as n.
test::FnRunner seg_runner(std::set<std::string> incorrect = {},
                          double (*us)(const std::string&, std::uint64_t, std::uint64_t) = seg_us) {
  return test::FnRunner([incorrect = std::move(incorrect), us](const Request& q) {
    if (!q.segment_size) return test::model_answer(q);
    EXPECT_TRUE(kseg::parse_seg_id(q.kernel_id)) << q.kernel_id;
    EXPECT_GE(*q.segment_size, 1u);
    EXPECT_EQ(q.n % *q.segment_size, 0u) << q.kernel_id;
    Result r = seg_result(q, us(q.kernel_id, *q.segment_size, q.n / *q.segment_size));
    if (incorrect.count(q.kernel_id)) {
      r.outcome = Outcome::incorrect;
      r.error = "result differs from the reference";
    }
    return r;
  });
}

// The fastest ok candidate of a point by the model.
std::string fastest(const SegPoint& p, const std::set<std::string>& incorrect = {}) {
  std::string best;
  for (const std::string& id : p.candidates) {
    if (incorrect.count(id)) continue;
    if (best.empty() || seg_us(id, p.segment_size, p.count) < seg_us(best, p.segment_size, p.count))
      best = id;
  }
  return best;
}

// The rectangles tile the plane [1, 2^40] x [1, max_segments] without gaps or overlaps (every
// elementary cell of their boundaries lies in exactly one), and each grid point lies in one whose
// kernel is the point's winner. Each has its evidence inside, but a rectangle of sizes between
// two runs of a tile winner (rows of 5-7 of a 2-byte type: points 0), which no point or
// measurement is in: its evidence is its kernel's at the point it went to.
// With \p count_cuts a rectangle with no point inside may also be a piece that a boundary along
// the counts cut off a column's rectangle (its evidence the point it came from), of any width.
void expect_tiling(const std::vector<SegRectangle>& rects, std::span<const SegPointWinner> grid,
                   bool gaps_allowed = false, bool count_cuts = false) {
  ASSERT_FALSE(rects.empty());
  std::set<std::uint64_t> sizes = {1}, counts = {1};
  for (const SegRectangle& r : rects) {
    EXPECT_LE(r.size_lo, r.size_hi);
    EXPECT_LE(r.count_lo, r.count_hi);
    EXPECT_LE(r.size_hi, max_segment_size);
    EXPECT_LE(r.count_hi, kseg::max_segments);
    ASSERT_TRUE(r.winner.segment_size);
    if (r.points == 0) {  // a tile's gap: its kernel takes every size of it, which no tile does
      EXPECT_EQ(kseg::parse_seg_id(r.winner.kernel_id)->family == kseg::SegFamily::tile, false);
      if (!count_cuts) {
        EXPECT_LE(r.size_hi - r.size_lo, 6u);
      }
    } else {
      // Its evidence is a grid point, or a measurement, inside it.
      EXPECT_TRUE(r.contains(*r.winner.segment_size, r.winner.n / *r.winner.segment_size));
    }
    sizes.insert(r.size_lo);
    sizes.insert(r.size_hi + 1);
    counts.insert(r.count_lo);
    counts.insert(r.count_hi + 1);
  }
  for (std::uint64_t s : sizes)
    for (std::uint64_t c : counts) {
      if (s > max_segment_size || c > kseg::max_segments) continue;
      const auto n = std::count_if(rects.begin(), rects.end(),
                                   [&](const SegRectangle& r) { return r.contains(s, c); });
      if (gaps_allowed) EXPECT_LE(n, 1) << "size " << s << " count " << c;
      else EXPECT_EQ(n, 1) << "size " << s << " count " << c;
    }
  for (const SegPointWinner& w : grid) {
    const auto it = std::find_if(rects.begin(), rects.end(), [&](const SegRectangle& r) {
      return r.contains(w.segment_size, w.count);
    });
    ASSERT_NE(it, rects.end()) << w.segment_size << " x " << w.count;
    EXPECT_EQ(it->winner.kernel_id, w.winner.kernel_id) << w.segment_size << " x " << w.count;
  }
}

std::vector<SegPointWinner> winners_of(const SegKeyOutcome& k) {
  std::vector<SegPointWinner> out;
  for (const SegPointOutcome& p : k.points)
    if (p.winner) out.push_back(*p.winner);
  return out;
}

// --- the plan -----------------------------------------------------------------------------------

TEST(SegPlan, TheRepositorysGridAndCandidates) {
  const TuneConfig c = load_config(TR_DEFAULT_TUNE_TOML);
  const auto keys = enumerate_segmented(c.segmented);
  ASSERT_EQ(keys.size(), 6u);  // six keys, the fixed layout
  std::size_t measurements = 0;
  for (const SegKeySpace& k : keys) {
    EXPECT_EQ(k.layout, SegLayout::fixed);
    // thread (scalar and vectors), tile, 5 groups, 4 blocks, split.
    EXPECT_EQ(k.candidates.size(), 13u) << seg_key_label(k);
    // 11 sizes x 6 counts, less the 12 points above 2^28 elements.
    ASSERT_EQ(k.points.size(), 54u) << seg_key_label(k);
    for (const SegPoint& p : k.points) {
      EXPECT_LE(p.total(), std::uint64_t{1} << 28);
      // tile takes the rows that divide a 16-byte vector: 4 floats, 2 doubles, 8 bfloat16s.
      const bool tile =
          std::any_of(p.candidates.begin(), p.candidates.end(),
                      [](const std::string& id) { return id.starts_with("seg.tile"); });
      const std::uint64_t v = 16 / dtype_size(k.dtype);
      EXPECT_EQ(tile, v % p.segment_size == 0) << seg_key_label(k) << " L=" << p.segment_size;
      EXPECT_EQ(p.candidates.size(), tile ? 13u : 12u);
      measurements += p.candidates.size();
    }
  }
  // The grid points in order: by count, then size.
  const auto& pts = keys.front().points;
  EXPECT_EQ(pts.front().segment_size, 1u);
  EXPECT_EQ(pts.front().count, 1u);
  EXPECT_EQ(pts[1].segment_size, 4u);
  EXPECT_EQ(pts.back().count, std::uint64_t{1} << 20);
  EXPECT_EQ(pts.back().segment_size, 256u);
  // f32 and i32 (4-byte) have tile at L = 1 and 4, f64 at 1, bf16 at 1 and 4: 12, 12, 6, 12,
  // 12, 12 points with 13 candidates.
  EXPECT_EQ(measurements, 6 * 54 * 12 + 12 + 12 + 6 + 12 + 12 + 12u);
}

TEST(SegPlan, FamiliesAndLayoutsSelectTheCandidates) {
  const TuneConfig c = config_of(
      "keys = [\"f64.max\"]\nfamilies = [\"group\", \"block\"]\n"
      "layouts = [\"offsets64\", \"fixed\"]\nsegment_sizes = [8]\nsegment_counts = [2]\n");
  const auto keys = enumerate_segmented(c.segmented);
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].layout, SegLayout::offsets64);
  EXPECT_EQ(keys[0].candidates, (std::vector<std::string>{"seg.group.b256.g4.v2.offsets64.f64.max",
                                                          "seg.group.b256.g32.v2.offsets64.f64.max",
                                                          "seg.block.b256.v2.offsets64.f64.max"}));
  EXPECT_EQ(keys[1].layout, SegLayout::fixed);
  EXPECT_EQ(keys[1].candidates.size(), 9u);  // 5 groups, 4 blocks
  for (const SegKeySpace& k : keys) {
    ASSERT_EQ(k.points.size(), 1u);
    EXPECT_EQ(k.points[0].candidates, k.candidates);
    EXPECT_EQ(k.points[0].total(), 16u);
  }
  // No key: no plan.
  EXPECT_TRUE(enumerate_segmented(default_config().segmented).empty());
}

// --- the search -----------------------------------------------------------------------------

constexpr const char* grid_25 =
    "keys = [\"f32.sum\"]\nsegment_sizes = { from = 1, to = 1048576, factor = 4 }\n"
    "segment_counts = [1, 256, 65536]\nmax_total = 16777216\n";

TEST(SegDriver, EachPointsWinnerIsItsFastestCandidateAndTheRectanglesTileThePlane) {
  const TuneConfig c = config_of(grid_25);
  const auto plan = enumerate_segmented(c.segmented);
  ASSERT_EQ(plan.size(), 1u);
  ASSERT_EQ(plan[0].points.size(), 11u + 9u + 5u);
  auto runner = seg_runner();
  std::vector<ProgressEvent> events;
  std::size_t points_done = 0;
  DriverOptions o;
  o.progress = [&](const ProgressEvent& e) {
    events.push_back(e);
    // Its outcome, valid while the event is reported.
    if (e.kind == ProgressEvent::Kind::size_done && e.seg_point) {
      ++points_done;
      ASSERT_TRUE(e.layout);
      EXPECT_EQ(e.segment_size, e.seg_point->segment_size);
      EXPECT_EQ(e.n, e.seg_point->segment_size * e.seg_point->count);
    }
    if (e.kind == ProgressEvent::Kind::key_done && e.seg_key) {
      EXPECT_TRUE(e.seg_key->complete);
    }
  };
  const TuneOutcome out = run_tuning(c, runner, o);
  EXPECT_FALSE(out.cancelled);
  ASSERT_EQ(out.keys.size(), 1u);
  ASSERT_EQ(out.segmented.size(), 1u);
  const SegKeyOutcome& k = out.segmented[0];
  EXPECT_TRUE(k.complete);
  EXPECT_EQ(k.dtype, DType::f32);
  EXPECT_EQ(k.op, Op::sum);
  EXPECT_EQ(k.layout, SegLayout::fixed);
  ASSERT_EQ(k.points.size(), plan[0].points.size());
  for (std::size_t i = 0; i < k.points.size(); ++i) {
    const SegPointOutcome& p = k.points[i];
    const SegPoint& planned = plan[0].points[i];
    EXPECT_EQ(p.segment_size, planned.segment_size);
    EXPECT_EQ(p.count, planned.count);
    EXPECT_EQ(p.requests, planned.candidates.size());  // exhaustive: each once
    ASSERT_TRUE(p.winner);
    EXPECT_EQ(p.winner->winner.kernel_id, fastest(planned)) << p.segment_size << " x " << p.count;
    EXPECT_EQ(p.winner->winner.segment_size, p.segment_size);
    EXPECT_EQ(p.winner->winner.n, p.segment_size * p.count);
  }
  // The model's winners along the sizes: a scalar thread for rows of 1, vectors for 4, groups,
  // blocks, and split for 2^20 (the count adds the same to every candidate).
  EXPECT_EQ(k.points[0].winner->winner.kernel_id, "seg.thread.b256.v1.fixed.f32.sum");
  EXPECT_EQ(k.points[1].winner->winner.kernel_id, "seg.thread.b256.v4.fixed.f32.sum");
  EXPECT_EQ(k.points[2].winner->winner.kernel_id, "seg.group.b256.g4.v4.fixed.f32.sum");
  EXPECT_EQ(k.points[4].winner->winner.kernel_id, "seg.block.b128.v4.fixed.f32.sum");
  EXPECT_EQ(k.points[10].winner->winner.kernel_id, "seg.split.b512.v4.fixed.f32.sum");
  const auto grid = winners_of(k);
  expect_tiling(k.rectangles.rectangles, grid);
  // Whole-array keys first, then the segmented requests.
  const auto first_seg = std::find_if(runner.log.begin(), runner.log.end(),
                                      [](const Request& q) { return q.segment_size.has_value(); });
  ASSERT_NE(first_seg, runner.log.end());
  EXPECT_TRUE(std::all_of(first_seg, runner.log.end(),
                          [](const Request& q) { return q.segment_size.has_value(); }));
  EXPECT_EQ(out.requests, runner.log.size());
  // Progress: the grid points are counted with the sizes, the key with the keys.
  for (const ProgressEvent& e : events) {
    EXPECT_EQ(e.sizes_total, 1u + 25u);
    EXPECT_EQ(e.keys_total, 2u);
  }
  EXPECT_EQ(points_done, 25u);
  EXPECT_EQ(events.back().kind, ProgressEvent::Kind::key_done);
  ASSERT_NE(events.back().seg_key, nullptr);
  EXPECT_DOUBLE_EQ(events.back().fraction, 1.0);
}

TEST(SegDriver, HalvingKeepsTheFastestAndMeasuresItWithTheFullPolicy) {
  const TuneConfig c = config_of(grid_25, "halving");
  const auto plan = enumerate_segmented(c.segmented);
  auto runner = seg_runner();
  const TuneOutcome out = run_tuning(c, runner);
  ASSERT_EQ(out.segmented.size(), 1u);
  const SegKeyOutcome& k = out.segmented[0];
  EXPECT_TRUE(k.complete);
  for (std::size_t i = 0; i < k.points.size(); ++i) {
    const SegPointOutcome& p = k.points[i];
    const std::string best = fastest(plan[0].points[i]);
    // 12 or 13 candidates: a first round of 3 repeats each, then the fastest 4 with the policy.
    EXPECT_EQ(p.rounds, 2);
    EXPECT_EQ(p.requests, plan[0].points[i].candidates.size() + 4);
    ASSERT_EQ(p.final_results.size(), 4u);
    EXPECT_TRUE(std::any_of(p.final_results.begin(), p.final_results.end(),
                            [&](const Result& r) { return r.kernel_id == best; }));
    for (const Result& r : p.final_results) EXPECT_EQ(r.repeats, 20);  // the full policy
    ASSERT_TRUE(p.winner);
    EXPECT_EQ(p.winner->winner.kernel_id, best);
  }
  // Every request of the first rounds asked for 3 repeats and carried the segment size.
  std::size_t first_round = 0;
  for (const Request& q : runner.log)
    if (q.segment_size && q.min_repeats) {
      ++first_round;
      EXPECT_EQ(*q.min_repeats, 3);
      EXPECT_EQ(*q.max_repeats, 3);
    }
  std::size_t candidates = 0;
  for (const SegPoint& p : plan[0].points) candidates += p.candidates.size();
  EXPECT_EQ(first_round, candidates);
}

TEST(SegDriver, ACandidateThatIsNotOkNeverWins) {
  const TuneConfig c = config_of(grid_25);
  const auto plan = enumerate_segmented(c.segmented);
  // The fastest candidate of every point comes back incorrect.
  std::set<std::string> bad;
  for (const SegPoint& p : plan[0].points) bad.insert(fastest(p));
  auto runner = seg_runner(bad);
  const TuneOutcome out = run_tuning(c, runner);
  const SegKeyOutcome& k = out.segmented.at(0);
  EXPECT_TRUE(k.complete);
  for (std::size_t i = 0; i < k.points.size(); ++i) {
    const SegPointOutcome& p = k.points[i];
    ASSERT_TRUE(p.winner);
    EXPECT_FALSE(bad.count(p.winner->winner.kernel_id)) << p.winner->winner.kernel_id;
    // The fastest of the others (of several equally fast, the tie rule's choice).
    EXPECT_EQ(seg_us(p.winner->winner.kernel_id, p.segment_size, p.count),
              seg_us(fastest(plan[0].points[i], bad), p.segment_size, p.count));
    EXPECT_GE(p.failed, 1u);
  }
  for (const SegRectangle& r : k.rectangles.rectangles)
    EXPECT_FALSE(bad.count(r.winner.kernel_id)) << r.winner.kernel_id;
  expect_tiling(k.rectangles.rectangles, winners_of(k));
  // A point where no candidate is ok has no winner and no rectangle of its own: its neighbours
  // cover it.
  std::set<std::string> all;
  for (const SegPoint& p : plan[0].points)
    for (const std::string& id : p.candidates) all.insert(id);
  auto none_ok = test::FnRunner([&](const Request& q) {
    if (!q.segment_size) return test::model_answer(q);
    Result r = seg_result(q, seg_us(q.kernel_id, *q.segment_size, q.n / *q.segment_size));
    if (*q.segment_size == 64) {
      r.outcome = Outcome::launch_failed;
      r.median_us.reset();
    }
    return r;
  });
  const TuneOutcome out2 = run_tuning(c, none_ok);
  const SegKeyOutcome& k2 = out2.segmented.at(0);
  EXPECT_TRUE(k2.complete);
  for (const SegPointOutcome& p : k2.points) EXPECT_EQ(p.winner.has_value(), p.segment_size != 64);
  expect_tiling(k2.rectangles.rectangles, winners_of(k2));
}

TEST(SegDriver, StopsCleanlyOnCancellation) {
  const TuneConfig c = config_of(grid_25);
  std::atomic<bool> cancel{false};
  auto runner = seg_runner();
  runner.cancel = &cancel;
  runner.cancel_after = 1 + 100;  // the whole-array key's 1 request, then 100 segmented
  DriverOptions o;
  o.cancel = &cancel;
  const TuneOutcome out = run_tuning(c, runner, o);
  EXPECT_TRUE(out.cancelled);
  ASSERT_EQ(out.keys.size(), 1u);
  EXPECT_TRUE(out.keys[0].complete);
  ASSERT_EQ(out.segmented.size(), 1u);
  EXPECT_FALSE(out.segmented[0].complete);
  EXPECT_TRUE(out.segmented[0].rectangles.rectangles.empty());
  EXPECT_LT(out.segmented[0].points.size(), 25u);
  EXPECT_LE(runner.log.size(), 1u + 100u + 64u);  // at most the batch in flight
}

TEST(SegDriver, TwoRunnersFindTheWinnersOfOne) {
  const TuneConfig c = config_of(grid_25);
  auto one = seg_runner();
  const TuneOutcome a = run_tuning(c, one);
  auto r1 = seg_runner(), r2 = seg_runner();
  Runner* const both[] = {&r1, &r2};
  const TuneOutcome b = run_tuning(c, std::span<Runner* const>(both));
  ASSERT_EQ(b.segmented.size(), 1u);
  EXPECT_TRUE(b.segmented[0].complete);
  EXPECT_EQ(r1.log.size() + r2.log.size(), one.log.size());
  const auto& ra = a.segmented[0].rectangles.rectangles;
  const auto& rb = b.segmented[0].rectangles.rectangles;
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].winner.kernel_id, rb[i].winner.kernel_id);
    EXPECT_EQ(ra[i].size_lo, rb[i].size_lo);
    EXPECT_EQ(ra[i].count_hi, rb[i].count_hi);
  }
}

// --- the rectangles -------------------------------------------------------------------------

SegPointWinner point(std::uint64_t segment_size, std::uint64_t count, const std::string& id,
                     std::int64_t measurement_id = 0, double margin = 0.1) {
  SegPointWinner w;
  w.segment_size = segment_size;
  w.count = count;
  Request q;
  q.kernel_id = id;
  q.n = segment_size * count;
  q.segment_size = segment_size;
  w.winner = seg_result(q, 10);
  if (measurement_id) w.winner.measurement_id = measurement_id;
  w.margin = margin;
  return w;
}

const std::string g4 = "seg.group.b256.g4.v4.fixed.f32.sum";
const std::string g32 = "seg.group.b256.g32.v4.fixed.f32.sum";
const std::string b256 = "seg.block.b256.v4.fixed.f32.sum";
const std::string tile = "seg.tile.b256.v4.fixed.f32.sum";
const std::string thread1 = "seg.thread.b256.v1.fixed.f32.sum";

BisectConfig no_bisect() {
  BisectConfig b;
  b.enabled = false;
  return b;
}

test::FnRunner never_called() {
  return test::FnRunner([](const Request& q) -> Result {
    ADD_FAILURE() << "measured " << q.kernel_id;
    return {};
  });
}

TEST(SegRectangles, OnePerPointSplitAtGeometricMidpoints) {
  const std::vector<SegPointWinner> grid = {point(16, 1, g4), point(256, 1, b256),
                                            point(16, 64, g32), point(256, 64, b256)};
  auto runner = never_called();
  const SegRectangles r = seg_rectangles(grid, runner, no_bisect(), nullptr, {}, {}, false);
  ASSERT_EQ(r.rectangles.size(), 4u);
  // Counts 1 and 64 split at 8, sizes 16 and 256 at 64.
  const auto& a = r.rectangles;
  EXPECT_EQ(a[0].size_lo, 1u);
  EXPECT_EQ(a[0].size_hi, 63u);
  EXPECT_EQ(a[0].count_lo, 1u);
  EXPECT_EQ(a[0].count_hi, 7u);
  EXPECT_EQ(a[1].size_lo, 64u);
  EXPECT_EQ(a[1].size_hi, max_segment_size);
  EXPECT_EQ(a[2].count_lo, 8u);
  EXPECT_EQ(a[2].count_hi, kseg::max_segments);
  EXPECT_EQ(a[2].winner.kernel_id, g32);
  expect_tiling(r.rectangles, grid);
  EXPECT_EQ(r.requests, 0u);
  // Merged: b256's two rectangles have one size range, so they become one; g4 and g32 stay.
  const SegRectangles m = seg_rectangles(grid, runner, no_bisect());
  ASSERT_EQ(m.rectangles.size(), 3u);
  const auto b = std::find_if(m.rectangles.begin(), m.rectangles.end(),
                              [](const SegRectangle& x) { return x.winner.kernel_id == b256; });
  ASSERT_NE(b, m.rectangles.end());
  EXPECT_EQ(b->count_lo, 1u);
  EXPECT_EQ(b->count_hi, kseg::max_segments);
  EXPECT_EQ(b->points, 2u);
  expect_tiling(m.rectangles, grid);
}

// A staircase (large sizes only at small counts, as max_total leaves the grid): a column's
// largest size extends to 2^40 unless a column of fewer segments measured larger sizes, whose
// rectangles above it then go on into its counts; neighbours of one kernel merge only where that
// is a rectangle.
TEST(SegRectangles, AStaircaseGridTilesThePlaneAndMergesOnlyIntoRectangles) {
  const std::vector<SegPointWinner> grid = {
      point(1, 1, thread1),  point(16, 1, g4),         point(256, 1, b256, 0, 0.01),
      point(4096, 1, b256),  point(1, 256, thread1),   point(16, 256, g4),
      point(256, 256, b256), point(1, 65536, thread1), point(16, 65536, g32),
  };
  auto runner = never_called();
  const SegRectangles r = seg_rectangles(grid, runner, no_bisect());
  expect_tiling(r.rectangles, grid);
  // thread1's three cells: one size range, adjacent columns: one rectangle.
  const auto t = std::find_if(r.rectangles.begin(), r.rectangles.end(),
                              [](const SegRectangle& x) { return x.winner.kernel_id == thread1; });
  ASSERT_NE(t, r.rectangles.end());
  EXPECT_EQ(t->points, 3u);
  EXPECT_EQ(t->size_lo, 1u);
  EXPECT_EQ(t->size_hi, 3u);
  EXPECT_EQ(t->count_lo, 1u);
  EXPECT_EQ(t->count_hi, kseg::max_segments);
  // b256 at count 1 (sizes 256, 4096: merged along the sizes, from 64 up) and at count 256 (from
  // 64 up as well): one rectangle, which goes on over the counts of 65536, whose column measured
  // nothing above 16; its evidence is the point of the smallest lead.
  const auto b = std::find_if(r.rectangles.begin(), r.rectangles.end(),
                              [](const SegRectangle& x) { return x.winner.kernel_id == b256; });
  ASSERT_NE(b, r.rectangles.end());
  EXPECT_EQ(b->points, 3u);
  EXPECT_EQ(b->size_lo, 64u);
  EXPECT_EQ(b->size_hi, max_segment_size);
  EXPECT_EQ(b->count_hi, kseg::max_segments);
  EXPECT_EQ(*b->winner.segment_size, 256u);
  EXPECT_EQ(b->winner.n, 256u);
  // g4 at counts 1 and 256 merge; g32 at 65536 takes sizes from 4 up to 63, below b256.
  const auto g = std::find_if(r.rectangles.begin(), r.rectangles.end(),
                              [](const SegRectangle& x) { return x.winner.kernel_id == g32; });
  ASSERT_NE(g, r.rectangles.end());
  EXPECT_EQ(g->size_lo, 4u);
  EXPECT_EQ(g->size_hi, 63u);
  EXPECT_EQ(g->count_lo, 4096u);
  EXPECT_EQ(r.rectangles.size(), 4u);
}

// What the H200's tune with counts up to 2^24 did (docs/performance.md 3.39): at 2^24 segments
// the grid stops at rows of 16 (max_total 2^28), where a thread with vector loads won; before,
// its rectangle took every larger size at 2^22 segments and up, rows of 64 included, never
// measured there (69 % of the floor against 94 % for the group of lanes measured at 2^20).
TEST(SegRectangles, AColumnDoesNotTakeSizesItNeverMeasuredThatAColumnBeforeDid) {
  const std::string thread4 = "seg.thread.b256.v4.fixed.f32.sum";
  const std::vector<SegPointWinner> grid = {point(16, 1 << 20, g4), point(64, 1 << 20, g32),
                                            point(256, 1 << 20, b256), point(16, 1 << 24, thread4)};
  auto runner = never_called();
  for (const bool merge : {false, true}) {
    const SegRectangles r = seg_rectangles(grid, runner, no_bisect(), nullptr, {}, {}, merge);
    expect_tiling(r.rectangles, grid);
    const auto holder = [&](std::uint64_t size, std::uint64_t count) {
      for (const SegRectangle& x : r.rectangles)
        if (x.contains(size, count)) return x.winner.kernel_id;
      return std::string("none");
    };
    EXPECT_EQ(holder(16, 1 << 24), thread4);
    EXPECT_EQ(holder(31, 1 << 24), thread4);  // below the midpoint of 16 and 64
    EXPECT_EQ(holder(64, 1 << 22), g32);
    EXPECT_EQ(holder(64, 1 << 30), g32);
    EXPECT_EQ(holder(4096, 1 << 26), b256);
  }
}

// bf16's tile runs rows of 1, 2, 4 and 8 (a 16-byte vector), not 5-7: between a tile winner at 4
// and a thread at 16 the bisection measures both at 8, where the tile is faster; rows of 8 are
// then the tile's, on that measurement, and rows of 5-7 the thread's.
TEST(SegRectangles, ARunOfSizesTheWinnerTakesAboveAGapIsItsWhereMeasured) {
  const std::string tile16 = "seg.tile.b256.v8.fixed.bf16.wide_sum";
  const std::string thread16 = "seg.thread.b256.v8.fixed.bf16.wide_sum";
  const std::vector<SegPointWinner> grid = {point(4, 1 << 24, tile16),
                                            point(16, 1 << 24, thread16)};
  test::FnRunner runner(
      [&](const Request& q) { return seg_result(q, q.kernel_id == tile16 ? 1 : 5); });
  BisectConfig b;
  b.max_depth = 6;
  const SegRectangles r = seg_rectangles(grid, runner, b, nullptr, {}, {}, false);
  expect_tiling(r.rectangles, grid);
  const auto holder = [&](std::uint64_t size) -> const SegRectangle* {
    for (const SegRectangle& x : r.rectangles)
      if (x.contains(size, 1 << 24)) return &x;
    return nullptr;
  };
  ASSERT_TRUE(holder(4) && holder(8) && holder(6) && holder(9));
  EXPECT_EQ(holder(4)->winner.kernel_id, tile16);
  EXPECT_EQ(holder(8)->winner.kernel_id, tile16);
  EXPECT_EQ(*holder(8)->winner.segment_size, 8u);  // the midpoint's measurement is its evidence
  EXPECT_EQ(holder(8)->size_lo, 8u);
  EXPECT_EQ(holder(8)->size_hi, 8u);
  EXPECT_EQ(holder(6)->winner.kernel_id, thread16);
  EXPECT_EQ(holder(9)->winner.kernel_id, thread16);
  // Rows of 2 between two tile points (1 and 4) stay the tile's, grown up from the point at 1 as
  // far as it runs; rows of 3, which no tile runs, go to the next point's thread.
  const std::vector<SegPointWinner> three = {point(1, 1 << 24, tile16), point(4, 1 << 24, tile16),
                                             point(16, 1 << 24, thread16)};
  auto none = never_called();
  const SegRectangles t = seg_rectangles(three, none, no_bisect(), nullptr, {}, {}, false);
  expect_tiling(t.rectangles, three);
  for (const auto& [size, id] : std::vector<std::pair<std::uint64_t, std::string>>{
           {1, tile16}, {2, tile16}, {3, thread16}, {4, tile16}, {5, thread16}, {16, thread16}})
    for (const SegRectangle& x : t.rectangles)
      if (x.contains(size, 1 << 24)) {
        EXPECT_EQ(x.winner.kernel_id, id) << "rows of " << size;
      }
  // Without bisection nothing was measured at 8: the midpoint of 4 and 16 is the thread's.
  auto quiet = never_called();
  const SegRectangles m = seg_rectangles(grid, quiet, no_bisect(), nullptr, {}, {}, false);
  for (const SegRectangle& x : m.rectangles)
    if (x.contains(8, 1 << 24)) {
      EXPECT_EQ(x.winner.kernel_id, thread16);
    }
}

TEST(SegRectangles, NoRectangleTakesASizeItsWinnerCannotRun) {
  // tile (f32: rows of 1, 2 or 4) wins at 4, between a scalar thread at 1 and a group at 64.
  const std::vector<SegPointWinner> grid = {point(1, 8, thread1), point(4, 8, tile),
                                            point(64, 8, g4)};
  auto runner = never_called();
  const SegRectangles r = seg_rectangles(grid, runner, no_bisect(), nullptr, {}, {}, false);
  ASSERT_EQ(r.rectangles.size(), 3u);
  // Midpoints 2 and 16: tile's cell [2, 15] shrinks to [4, 4]; the thread takes 2 and 3, the
  // group 5..15.
  EXPECT_EQ(r.rectangles[0].size_hi, 3u);
  EXPECT_EQ(r.rectangles[1].size_lo, 4u);
  EXPECT_EQ(r.rectangles[1].size_hi, 4u);
  EXPECT_EQ(r.rectangles[2].size_lo, 5u);
  expect_tiling(r.rectangles, grid);
  EXPECT_EQ(seg_size_interval(tile, 4, 8), (std::pair<std::uint64_t, std::uint64_t>{4, 4}));
  EXPECT_EQ(seg_size_interval(tile, 1, 8), (std::pair<std::uint64_t, std::uint64_t>{1, 2}));
  EXPECT_EQ(seg_size_interval(g4, 64, 8),
            (std::pair<std::uint64_t, std::uint64_t>{1, max_segment_size}));
  // Between two tile winners nothing takes 3: a gap, no rectangle.
  const std::vector<SegPointWinner> tiles = {point(2, 8, tile), point(4, 8, tile)};
  const SegRectangles g = seg_rectangles(tiles, runner, no_bisect(), nullptr, {}, {}, false);
  expect_tiling(g.rectangles, tiles, true);
  for (const SegRectangle& x : g.rectangles) EXPECT_FALSE(x.contains(3, 8));
}

// Between a tile winner at 4 and a group at 16, rows of 8 (which no f32 tile runs) would go to
// the group unmeasured; with the key's candidates every one that runs 8 is measured there, and a
// third family that wins takes the sizes between (a thread with vector loads, here).
TEST(SegRectangles, AMidpointOnlyOneWinnerRunsIsMeasuredWithEveryCandidate) {
  const std::string thread4 = "seg.thread.b256.v4.fixed.f32.sum";
  const std::vector<SegPointWinner> grid = {point(1, 8, thread1), point(4, 8, tile),
                                            point(16, 8, g4)};
  const std::vector<std::string> candidates = {thread1, thread4, tile, g4, g32};
  test::FnRunner runner([&](const Request& q) {
    EXPECT_TRUE(q.segment_size);
    const double us = q.kernel_id == thread4 ? 5 : q.kernel_id == tile ? 1 : 10;
    return seg_result(q, us);
  });
  BisectConfig b;
  b.max_depth = 6;
  const SegRectangles r = seg_rectangles(grid, runner, b, nullptr, {}, {}, false, candidates);
  ASSERT_EQ(r.refinements.size(), 1u);
  EXPECT_EQ(r.refinements[0].segment_size, 8u);
  EXPECT_EQ(r.refinements[0].count, 8u);
  EXPECT_EQ(r.refinements[0].winner.kernel_id, thread4);
  // The tile was not asked for rows of 8; the other four were, once each, at L = 8.
  std::size_t at8 = 0;
  for (const Request& q : runner.log)
    if (q.segment_size == 8u) {
      ++at8;
      EXPECT_NE(q.kernel_id, tile);
      EXPECT_EQ(q.n, 64u);
    }
  EXPECT_EQ(at8, 4u);
  const auto holder = [&](std::uint64_t size) {
    for (const SegRectangle& x : r.rectangles)
      if (x.contains(size, 8)) return x.winner.kernel_id;
    return std::string("none");
  };
  EXPECT_EQ(holder(4), tile);
  EXPECT_EQ(holder(8), thread4);
  EXPECT_EQ(holder(16), g4);
  expect_tiling(r.rectangles, grid);
  // Without the candidates (or without bisection) the group takes 8, as before.
  auto quiet = never_called();
  const SegRectangles old =
      seg_rectangles(grid, quiet, no_bisect(), nullptr, {}, {}, false, candidates);
  EXPECT_TRUE(old.refinements.empty());
  for (const SegRectangle& x : old.rectangles) {
    if (x.contains(8, 8)) {
      EXPECT_EQ(x.winner.kernel_id, g4);
    }
  }
}

// Crossovers along the sizes are bisected at the column's count, with the segment size on both
// requests: g32 suits 2^7 and b256 2^10 in the model, so they meet at 2^8.5 (362).
TEST(SegRectangles, BisectionLocatesTheCrossoverAlongTheSizes) {
  const std::vector<SegPointWinner> grid = {point(16, 32, g32), point(4096, 32, b256)};
  auto runner = seg_runner();
  BisectConfig b;
  b.max_depth = 20;
  b.precision = 0.01;
  const SegRectangles r = seg_rectangles(grid, runner, b);
  ASSERT_EQ(r.crossovers.size(), 1u);
  const SegCrossover& x = r.crossovers[0];
  EXPECT_EQ(x.count, 32u);
  EXPECT_GT(x.probes, 3);
  EXPECT_GE(x.boundary, 340u);
  EXPECT_LE(x.boundary, 380u);
  EXPECT_EQ(r.requests, 2u * x.probes);
  for (const Request& q : runner.log) {
    ASSERT_TRUE(q.segment_size);
    EXPECT_EQ(q.n, *q.segment_size * 32);
    EXPECT_TRUE(q.kernel_id == g32 || q.kernel_id == b256);
  }
  ASSERT_EQ(r.rectangles.size(), 2u);
  EXPECT_EQ(r.rectangles[0].size_hi + 1, x.boundary);
  EXPECT_EQ(r.rectangles[1].size_lo, x.boundary);
  expect_tiling(r.rectangles, grid);
}

// The count model of the next two tests: a group of 32 lanes a row slows with the count (5 us +
// 2 ns a segment) where a block a row takes 7 us, so at rows of 256 they cross at 1000 segments;
// groups of 4 suit rows under 64 and nothing else, and the group of 32 nothing over 1024.
double count_model_us(const std::string& id, std::uint64_t size, std::uint64_t count) {
  if (id == g4) return size < 64 ? 1 : 50;
  if (id == g32) return 5 + 0.002 * static_cast<double>(count) + (size > 1024 ? 50 : 0);
  return size < 64 ? 50 : 7;
}

// Where a size has different winners in two neighbouring columns, the count between them is
// bisected at that size (both candidates measured at the midpoint's count), and the boundary
// between the two columns' rectangles there is the crossover found, not the geometric midpoint.
TEST(SegRectangles, BisectionLocatesTheCrossoverAlongTheCounts) {
  const std::vector<SegPointWinner> grid = {point(256, 16, g32), point(256, 4096, b256)};
  auto runner = seg_runner({}, count_model_us);
  BisectConfig b;
  b.max_depth = 20;
  b.precision = 0.01;
  const SegRectangles r = seg_rectangles(grid, runner, b);
  ASSERT_EQ(r.crossovers.size(), 1u);
  const SegCrossover& x = r.crossovers[0];
  EXPECT_TRUE(x.along_counts);
  EXPECT_EQ(x.segment_size, 256u);
  EXPECT_EQ(x.grid_lo, 16u);
  EXPECT_EQ(x.grid_hi, 4096u);
  EXPECT_EQ(x.from_id, g32);
  EXPECT_EQ(x.to_id, b256);
  EXPECT_GT(x.probes, 3);
  EXPECT_GE(x.boundary, 950u);
  EXPECT_LE(x.boundary, 1050u);
  EXPECT_EQ(r.requests, 2u * x.probes);
  for (const Request& q : runner.log) {
    ASSERT_TRUE(q.segment_size);
    EXPECT_EQ(*q.segment_size, 256u);
    EXPECT_GT(q.n / 256, 16u);
    EXPECT_LT(q.n / 256, 4096u);
  }
  ASSERT_EQ(r.rectangles.size(), 2u);
  EXPECT_EQ(r.rectangles[0].winner.kernel_id, g32);
  EXPECT_EQ(r.rectangles[0].count_hi + 1, x.boundary);
  EXPECT_EQ(r.rectangles[1].count_lo, x.boundary);
  // Each side's evidence is its last probe, inside it.
  for (const SegRectangle& q : r.rectangles) {
    ASSERT_TRUE(q.winner.segment_size);
    EXPECT_TRUE(q.contains(256, q.winner.n / 256));
    EXPECT_TRUE(q.runner_up);
  }
  expect_tiling(r.rectangles, grid);
  // Without bisection the columns split at the geometric midpoint, 256, and nothing is measured.
  auto none = never_called();
  const SegRectangles m = seg_rectangles(grid, none, no_bisect());
  ASSERT_EQ(m.rectangles.size(), 2u);
  EXPECT_EQ(m.rectangles[1].count_lo, 256u);
  EXPECT_TRUE(std::none_of(m.crossovers.begin(), m.crossovers.end(),
                           [](const SegCrossover& c) { return c.along_counts; }));
}

// Only a size measured in both columns with different winners moves the boundary, and only over
// the sizes around it that both columns' rectangles hold: rows of 16 (a group of 4 in both) and
// of 4096 (a block in both) keep the midpoint, rows of 64-1023 (the group of 32's sizes at 16
// segments) cross at about 1000 segments, and the block's rectangle of the upper column is cut
// there, its piece above 1023 keeping the midpoint on the evidence of the point inside it.
TEST(SegRectangles, AlongTheCountsOnlyWhereASizeHasTwoWinners) {
  const std::vector<SegPointWinner> grid = {point(16, 16, g4),      point(256, 16, g32),
                                            point(4096, 16, b256),  point(16, 4096, g4),
                                            point(256, 4096, b256), point(4096, 4096, b256)};
  auto runner = seg_runner({}, count_model_us);
  BisectConfig b;
  b.max_depth = 20;
  b.precision = 0.01;
  const SegRectangles r = seg_rectangles(grid, runner, b);
  const auto along = std::count_if(r.crossovers.begin(), r.crossovers.end(),
                                   [](const SegCrossover& c) { return c.along_counts; });
  ASSERT_EQ(along, 1);
  const auto x = std::find_if(r.crossovers.begin(), r.crossovers.end(),
                              [](const SegCrossover& c) { return c.along_counts; });
  EXPECT_EQ(x->segment_size, 256u);
  EXPECT_GE(x->boundary, 950u);
  EXPECT_LE(x->boundary, 1050u);
  expect_tiling(r.rectangles, grid, false, true);
  const auto holder = [&](std::uint64_t size, std::uint64_t count) -> std::string {
    for (const SegRectangle& q : r.rectangles)
      if (q.contains(size, count)) return q.winner.kernel_id;
    return "";
  };
  EXPECT_EQ(holder(256, 900), g32);
  EXPECT_EQ(holder(256, 1100), b256);
  EXPECT_EQ(holder(1000, 900), g32);
  EXPECT_EQ(holder(16, 200), g4);
  EXPECT_EQ(holder(16, 300), g4);
  EXPECT_EQ(holder(4096, 200), b256);
  EXPECT_EQ(holder(4096, 300), b256);
  for (const SegRectangle& q : r.rectangles) {
    ASSERT_TRUE(q.winner.segment_size);
    EXPECT_GE(q.points, 1u);
    EXPECT_TRUE(q.contains(*q.winner.segment_size, q.winner.n / *q.winner.segment_size))
        << q.winner.kernel_id << " " << q.size_lo << ".." << q.size_hi;
  }
  // The cut pieces of one kernel in both columns (the block over 1024 and up) merged into one.
  const auto blocks =
      std::count_if(r.rectangles.begin(), r.rectangles.end(), [](const SegRectangle& q) {
        return q.winner.kernel_id == b256 && q.size_lo >= 1024 && q.count_lo == 1;
      });
  EXPECT_EQ(blocks, 1);
}

TEST(SegRectangles, DatabaseRowsCarryTheEvidenceAndTheRunnerUp) {
  std::vector<SegPointWinner> grid = {point(16, 1, g4, 11), point(256, 1, b256, 12)};
  grid[1].runner_up = grid[0].winner;
  grid[1].runner_up->measurement_id = 13;
  auto runner = never_called();
  const SegRectangles r = seg_rectangles(grid, runner, no_bisect());
  const auto rows = to_db_segmented_winners(r.rectangles, DType::f32, Op::sum, "fixed",
                                            L2Mode::warm, 13000, 13010, 7);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel_id, g4);
  EXPECT_EQ(rows[0].measurement_id, 11);
  EXPECT_FALSE(rows[0].runner_up_measurement_id);
  EXPECT_EQ(rows[1].measurement_id, 12);
  EXPECT_EQ(rows[1].runner_up_measurement_id, 13);
  EXPECT_EQ(rows[1].runner_up_kernel_id, g4);
  for (const db::SegmentedWinner& w : rows) {
    EXPECT_EQ(w.layout, "fixed");
    EXPECT_EQ(w.l2_mode, L2Mode::warm);
    EXPECT_EQ(w.driver_version, 13000);
    EXPECT_EQ(w.runtime_version, 13010);
    EXPECT_EQ(w.run_id, 7);
    EXPECT_EQ(w.count_lo, 1u);
    EXPECT_EQ(w.count_hi, kseg::max_segments);
  }
  EXPECT_EQ(rows[0].size_hi + 1, rows[1].size_lo);
  // A winner that was not recorded cannot be stored.
  grid[0].winner.measurement_id.reset();
  const SegRectangles u = seg_rectangles(grid, runner, no_bisect());
  EXPECT_THROW(to_db_segmented_winners(u.rectangles, DType::f32, Op::sum, "fixed", L2Mode::cold, 1,
                                       1, 1),
               Error);
}

// --- replay and recording -------------------------------------------------------------------

/// A database file with every candidate of \p c measured (whole-array keys and segmented grid
/// points, 3 and 20 repeats each), and a new run for the session to end.
struct Recorded {
  db::test::TempDir dir;
  std::filesystem::path path = dir / "t.db";
  Recording rec;

  explicit Recorded(const TuneConfig& c) {
    db::Database database = db::Database::open_writer(path);
    std::vector<std::string> ids;
    for (const KeySpace& k : enumerate_space(c.space))
      ids.insert(ids.end(), k.candidates.begin(), k.candidates.end());
    rec.device_id = test::fill_database(database, ids, c.space.sizes);
    EXPECT_EQ(test::fill_segmented_database(database, enumerate_segmented(c.segmented)),
              rec.device_id);
    db::RunInfo info;
    info.tool_version = "test";
    info.manifest_hash = "0000000000000000";
    info.config_hash = config_hash(c);
    info.host = "test-host";
    rec.run_id = database.begin_run(info);
    rec.driver_version = 13000;
    rec.runtime_version = 13010;
  }
};

// The replay answers every grid point's requests from the recorded segmented measurements (not
// the size-axis bisection's midpoints, which were never measured), the winners are the model's,
// and the session stores them as the rectangles, with their evidence and run.
TEST(SegReplay, RecordedMeasurementsReplayIntoWinnersThatTheSessionStores) {
  const TuneConfig c = config_of(grid_25, "halving");
  Recorded r(c);
  TuneOutcome out;
  std::size_t missing = 0, answered = 0;
  {
    db::Database database = db::Database::open_reader(r.path);
    ReplayOptions ro;
    ro.device_id = r.rec.device_id;
    ro.policy = c.measure;
    ReplayRunner runner(database, ro);
    out = run_tuning(c, runner);
    missing = runner.missing();
    answered = runner.answered();
  }
  ASSERT_EQ(out.segmented.size(), 1u);
  const SegKeyOutcome& k = out.segmented[0];
  ASSERT_TRUE(k.complete);
  const auto plan = enumerate_segmented(c.segmented);
  std::size_t point_requests = 0;
  for (std::size_t i = 0; i < k.points.size(); ++i) {
    const SegPointOutcome& p = k.points[i];
    point_requests += p.requests;
    ASSERT_TRUE(p.winner);
    EXPECT_EQ(p.winner->winner.kernel_id, fastest(plan[0].points[i]));
    EXPECT_TRUE(p.winner->winner.reused);
    EXPECT_TRUE(p.winner->winner.measurement_id);
    EXPECT_EQ(p.winner->winner.repeats, 20);  // the final round's measurement
    EXPECT_EQ(p.winner->winner.segment_size, p.segment_size);
  }
  // Every request of the points was recorded; each crossover's first midpoint was not.
  EXPECT_EQ(missing, k.rectangles.requests);
  EXPECT_EQ(missing, 2 * k.rectangles.crossovers.size());
  EXPECT_GT(missing, 0u);
  EXPECT_GE(answered, point_requests);
  expect_tiling(k.rectangles.rectangles, winners_of(k));

  const RunEnded ended = TuningSession(r.path).end(r.rec, out);
  EXPECT_EQ(ended.status, db::RunStatus::finished);
  EXPECT_EQ(ended.keys_stored, 1u);
  EXPECT_EQ(ended.segmented_stored, 1u);
  db::Database database = db::Database::open_reader(r.path);
  const auto rows = database.segmented_winners(r.rec.device_id);
  const auto& rects = k.rectangles.rectangles;
  ASSERT_EQ(rows.size(), rects.size());
  for (const SegRectangle& x : rects) {
    const auto row =
        std::find_if(rows.begin(), rows.end(), [&](const db::SegmentedWinnerRecord& w) {
          return w.size_lo == x.size_lo && w.count_lo == x.count_lo;
        });
    ASSERT_NE(row, rows.end()) << x.size_lo << " x " << x.count_lo;
    EXPECT_EQ(row->kernel_id, x.winner.kernel_id);
    EXPECT_EQ(row->size_hi, x.size_hi);
    EXPECT_EQ(row->count_hi, x.count_hi);
    EXPECT_EQ(row->measurement_id, *x.winner.measurement_id);
    EXPECT_EQ(row->layout, "fixed");
    EXPECT_EQ(row->dtype, DType::f32);
    EXPECT_EQ(row->op, Op::sum);
    EXPECT_EQ(row->l2_mode, L2Mode::cold);
    EXPECT_EQ(row->run_id, r.rec.run_id);
    EXPECT_EQ(row->driver_version, 13000);
    EXPECT_EQ(row->runtime_version, 13010);
    if (x.runner_up) {
      EXPECT_EQ(row->runner_up_kernel_id, x.runner_up->kernel_id);
    }
  }
  EXPECT_EQ(database.winners(r.rec.device_id).size(), out.keys[0].bisect.intervals.size());
}

// A cancelled run stores the winners of what finished: the whole-array key, not the segmented
// key it stopped in.
TEST(SegReplay, AnInterruptedRunStoresNoSegmentedWinnersOfAnIncompleteKey) {
  const TuneConfig c = config_of(grid_25, "halving");
  Recorded r(c);
  TuneOutcome out;
  {
    db::Database database = db::Database::open_reader(r.path);
    ReplayOptions ro;
    ro.device_id = r.rec.device_id;
    ro.policy = c.measure;
    ReplayRunner replay(database, ro);
    std::atomic<bool> cancel{false};
    // Cancels after the whole-array key's request and 50 segmented ones.
    std::size_t seen = 0;
    test::FnRunner runner([&](const Request& q) {
      if (++seen == 51) cancel.store(true);
      return replay.measure(std::span(&q, 1)).at(0);
    });
    DriverOptions o;
    o.cancel = &cancel;
    out = run_tuning(c, runner, o);
  }
  ASSERT_TRUE(out.cancelled);
  ASSERT_EQ(out.segmented.size(), 1u);
  EXPECT_FALSE(out.segmented[0].complete);
  const RunEnded ended = TuningSession(r.path).end(r.rec, out);
  EXPECT_EQ(ended.status, db::RunStatus::interrupted);
  EXPECT_EQ(ended.keys_stored, 1u);
  EXPECT_EQ(ended.segmented_stored, 0u);
  db::Database database = db::Database::open_reader(r.path);
  EXPECT_TRUE(database.segmented_winners(r.rec.device_id).empty());
}

// The winners table: a line per segmented key and layout, and its plane of grid-point winners.
TEST(SegReplay, TheWinnersTableHasASegmentedPart) {
  const TuneConfig c = config_of(grid_25);
  auto runner = seg_runner();
  const TuneOutcome out = run_tuning(c, runner);
  std::ostringstream os;
  print_winners(os, out, "model");
  const std::string s = os.str();
  EXPECT_NE(s.find("\nsegmented winners (rectangles of segment size x segment count):\n"
                   "dtype  op   layout  points  no winner  rectangles  kernels  crossovers\n"
                   "f32    sum  fixed       25          0  "),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("\nf32 sum fixed: the winner at each grid point"), std::string::npos) << s;
  // Rows of sizes, columns of counts: rows of 1 go to a scalar thread, 2^20 to split (count 1
  // only: the others exceed max_total).
  EXPECT_NE(s.find("\n           1  thread  thread  thread\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\n        2^20   split\n"), std::string::npos) << s;
  EXPECT_EQ(seg_short_name("seg.group.b256.g16.v4.fixed.f32.sum"), "g16");
  EXPECT_EQ(seg_short_name("seg.thread.b256.v4.fixed.f32.sum"), "thr.v4");
  EXPECT_EQ(seg_short_name("seg.block.b1024.v2.offsets64.f64.max"), "b1024");
}

// The H200's segmented tune (tests/data/h200-segmented.db: `tunedreduce tune --config
// tests/data/h200-segmented.toml --dtypes f32 --ops sum --sizes 1024`, kernel revision 12, counts
// bisected) replays from its own measurements into exactly the rectangles the GPU run stored,
// the boundaries its bisections along the sizes and the counts found included.
TEST(SegReplay, TheH200TuneReplaysIntoTheRectanglesItStored) {
  ConfigOverrides o;
  o.dtypes = "f32";
  o.ops = "sum";
  o.sizes = "1024";
  const TuneConfig c = load_config(TR_TEST_DATA "/h200-segmented.toml", o);
  db::Database database = db::Database::open_reader(TR_TEST_DATA "/h200-segmented.db");
  const db::DeviceRecord device = choose_replay_device(database, std::nullopt);
  ReplayOptions ro;
  ro.device_id = device.id;
  ro.policy = c.measure;
  ReplayRunner runner(database, ro);
  const TuneOutcome out = run_tuning(c, runner);
  EXPECT_EQ(runner.missing(), 0u);
  ASSERT_EQ(out.segmented.size(), 6u);
  const std::vector<db::SegmentedWinnerRecord> rows = database.segmented_winners(device.id);
  std::size_t rects = 0, along_counts = 0;
  for (const SegKeyOutcome& k : out.segmented) {
    ASSERT_TRUE(k.complete);
    for (const SegRectangle& x : k.rectangles.rectangles) {
      ++rects;
      const auto row =
          std::find_if(rows.begin(), rows.end(), [&](const db::SegmentedWinnerRecord& w) {
            return w.dtype == k.dtype && w.op == k.op && w.size_lo == x.size_lo &&
                   w.count_lo == x.count_lo;
          });
      ASSERT_NE(row, rows.end()) << dtype_name(k.dtype) << " " << op_name(k.op) << " " << x.size_lo
                                 << " x " << x.count_lo;
      EXPECT_EQ(row->kernel_id, x.winner.kernel_id) << x.size_lo << " x " << x.count_lo;
      EXPECT_EQ(row->size_hi, x.size_hi) << x.size_lo << " x " << x.count_lo;
      EXPECT_EQ(row->count_hi, x.count_hi) << x.size_lo << " x " << x.count_lo;
    }
    along_counts +=
        std::count_if(k.rectangles.crossovers.begin(), k.rectangles.crossovers.end(),
                      [](const SegCrossover& x) { return x.along_counts && x.probes > 0; });
  }
  EXPECT_EQ(rects, rows.size());
  // The GPU run measured count boundaries, and the replay found every one of their probes.
  EXPECT_GT(along_counts, 20u);
}

}  // namespace
}  // namespace tunedreduce::tuner
