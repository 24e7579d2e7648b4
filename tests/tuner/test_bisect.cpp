// Bisection into size intervals: a synthetic runner with a known crossover, complete and
// non-overlapping intervals, and winners the database accepts.

#include <gtest/gtest.h>

#include "kernels/registry.hpp"
#include "synthetic.hpp"
#include "tuner/bisect.hpp"
#include "tuner/replay_runner.hpp"
#include "tuner/search_space.hpp"
#include "tuner/strategies.hpp"

namespace tunedreduce::tuner {
namespace {

const std::string A = "smem.b256.u4.dynamic.single_pass.f32.sum";  // 2 + n/1000 us
const std::string B = "vectorized.b256.u4.single_pass.f32.sum";    // 10 + n/2000 us

Result exact(const std::string& id, std::uint64_t n) {
  Result r;
  r.kernel_id = id;
  r.n = n;
  r.dtype = DType::f32;
  r.outcome = Outcome::ok;
  const double x = static_cast<double>(n);
  r.median_us = id == A ? 2 + x / 1000 : 10 + x / 2000;
  r.p10_us = r.p90_us = r.median_us;  // no spread: the tie tolerance is the 0.5% floor
  r.repeats = 10;
  r.measurement_id = static_cast<std::int64_t>(n) * 2 + (id == A ? 0 : 1);
  return r;
}

std::vector<SizeWinner> grid_of(Runner& r, const std::vector<std::string>& ids,
                                const std::vector<std::uint64_t>& sizes) {
  std::vector<SizeWinner> grid;
  for (std::uint64_t n : sizes) {
    std::vector<Request> qs;
    for (const auto& id : ids) {
      Request q;
      q.kernel_id = id;
      q.n = n;
      qs.push_back(std::move(q));
    }
    const auto rs = r.measure(qs);
    const Selection s = select_winner(rs);
    if (!s.winner) continue;
    SizeWinner w{n, rs[*s.winner], std::nullopt, s.margin};
    if (s.runner_up) w.runner_up = rs[*s.runner_up];
    grid.push_back(w);
  }
  return grid;
}

void expect_complete(const std::vector<IntervalWinner>& iv) {
  ASSERT_FALSE(iv.empty());
  EXPECT_EQ(iv.front().n_lo, 1u);
  EXPECT_EQ(iv.back().n_hi, kernels::max_elements);
  for (std::size_t i = 0; i < iv.size(); ++i) {
    EXPECT_LE(iv[i].n_lo, iv[i].n_hi);
    EXPECT_GE(iv[i].winner.n, iv[i].n_lo) << "the evidence lies in its interval";
    EXPECT_LE(iv[i].winner.n, iv[i].n_hi);
    if (i > 0) {
      EXPECT_EQ(iv[i].n_lo, iv[i - 1].n_hi + 1) << "contiguous, no overlap";
      EXPECT_NE(iv[i].winner.kernel_id, iv[i - 1].winner.kernel_id) << "merged runs";
    }
  }
}

TEST(Bisect, FindsAKnownCrossover) {
  test::FnRunner r([](const Request& q) { return exact(q.kernel_id, q.n); });
  const auto grid = grid_of(r, {A, B}, {1024, 4096, 65536, 262144});
  ASSERT_EQ(grid.size(), 4u);
  r.log.clear();
  BisectConfig cfg{true, 40, 1e-9};
  const BisectOutcome o = bisect_intervals(grid, r, cfg);
  ASSERT_EQ(o.intervals.size(), 2u);
  expect_complete(o.intervals);
  // Equal at 16000; A stays preferred while within 0.5% of B (the tie rule: same finish, same
  // block x unroll, "smem..." < "vectorized..."), so B wins from n >= 16180.9 on.
  EXPECT_EQ(o.intervals[0].winner.kernel_id, A);
  EXPECT_EQ(o.intervals[0].n_hi, 16180u);
  EXPECT_EQ(o.intervals[1].n_lo, 16181u);
  ASSERT_EQ(o.crossovers.size(), 1u);
  EXPECT_EQ(o.crossovers[0].hi - o.crossovers[0].lo, 1u);
  EXPECT_EQ(o.crossovers[0].grid_lo, 4096u);
  EXPECT_EQ(o.crossovers[0].grid_hi, 65536u);
  EXPECT_EQ(o.requests, r.log.size());
  EXPECT_EQ(o.requests, 2u * o.crossovers[0].probes);
  for (const Request& q : r.log) {
    EXPECT_GT(q.n, 4096u);
    EXPECT_LT(q.n, 65536u);
    EXPECT_FALSE(q.min_repeats) << "probes use the full policy";
  }
  // The evidence is the grid size with the smallest lead: 4096 for A, 65536 for B.
  EXPECT_EQ(o.intervals[0].winner.n, 4096u);
  EXPECT_EQ(o.intervals[1].winner.n, 65536u);
  EXPECT_EQ(o.intervals[0].runner_up->kernel_id, B);
}

TEST(Bisect, StopsAtPrecisionOrDepth) {
  test::FnRunner r([](const Request& q) { return exact(q.kernel_id, q.n); });
  const auto grid = grid_of(r, {A, B}, {4096, 65536});
  r.log.clear();
  const BisectOutcome shallow = bisect_intervals(grid, r, BisectConfig{true, 3, 1e-9});
  EXPECT_EQ(shallow.crossovers[0].probes, 3);
  EXPECT_EQ(r.log.size(), 6u);
  const auto& x = shallow.crossovers[0];
  EXPECT_LE(x.lo, 16181u);
  EXPECT_GE(x.hi, 16181u);
  EXPECT_EQ(shallow.intervals[1].n_lo, x.boundary);
  EXPECT_GT(x.boundary, x.lo);
  EXPECT_LE(x.boundary, x.hi);
  r.log.clear();
  const BisectOutcome coarse = bisect_intervals(grid, r, BisectConfig{true, 40, 0.05});
  const auto& y = coarse.crossovers[0];
  EXPECT_LE(static_cast<double>(y.hi) / y.lo, 1.05);
  EXPECT_LE(y.lo, 16181u);
  EXPECT_GE(y.hi, 16181u);
  EXPECT_LT(y.probes, 10);
}

TEST(Bisect, DisabledUsesTheGeometricMidpointWithoutMeasuring) {
  test::FnRunner r([](const Request& q) { return exact(q.kernel_id, q.n); });
  const auto grid = grid_of(r, {A, B}, {4096, 65536});
  r.log.clear();
  const BisectOutcome o = bisect_intervals(grid, r, BisectConfig{false, 5, 0.05});
  EXPECT_TRUE(r.log.empty());
  ASSERT_EQ(o.intervals.size(), 2u);
  EXPECT_EQ(o.intervals[1].n_lo, 16384u);
  expect_complete(o.intervals);
}

TEST(Bisect, UndecidedMidpointStopsRefining) {
  // Both candidates fail at every size that is not a grid size.
  test::FnRunner r([](const Request& q) {
    Result x = exact(q.kernel_id, q.n);
    if (q.n != 4096 && q.n != 65536) {
      x.outcome = Outcome::launch_failed;
      x.error = "not recorded";
    }
    return x;
  });
  const auto grid = grid_of(r, {A, B}, {4096, 65536});
  const BisectOutcome o = bisect_intervals(grid, r, BisectConfig{true, 10, 0.01});
  ASSERT_EQ(o.crossovers.size(), 1u);
  EXPECT_TRUE(o.crossovers[0].undecided);
  EXPECT_EQ(o.crossovers[0].probes, 1);
  EXPECT_EQ(o.intervals[1].n_lo, 16384u);
}

TEST(Bisect, OneWinnerCoversEverything) {
  test::FnRunner r([](const Request& q) { return exact(q.kernel_id, q.n); });
  const auto grid = grid_of(r, {A, B}, {1024, 2048, 4096});
  const BisectOutcome o = bisect_intervals(grid, r, BisectConfig{});
  ASSERT_EQ(o.intervals.size(), 1u);
  EXPECT_EQ(o.intervals[0].n_lo, 1u);
  EXPECT_EQ(o.intervals[0].n_hi, kernels::max_elements);
  EXPECT_TRUE(bisect_intervals({}, r, BisectConfig{}).intervals.empty());
}

TEST(Bisect, ManyCrossoversOnTheModelAreCompleteAndConsistent) {
  auto cfg = validate_config(parse_config_text(
      "[space]\nfamilies = [\"smem\", \"warp_shuffle\", \"vectorized\", \"unroll\"]\n"
      "dtypes = [\"f64\"]\nops = [\"max\"]\nsizes = { from = 1, to = 1099511627776, factor = 2 }\n",
      "t.toml"));
  auto r = test::model_runner();
  const auto ids = candidates_for(cfg.space, DType::f64, Op::max);
  const auto grid = grid_of(r, ids, cfg.space.sizes);
  ASSERT_EQ(grid.size(), cfg.space.sizes.size());
  const BisectOutcome o = bisect_intervals(grid, r, BisectConfig{true, 6, 0.01});
  expect_complete(o.intervals);
  EXPECT_GE(o.intervals.size(), 2u);
  // Every grid size falls in the interval of its own winner.
  for (const SizeWinner& g : grid) {
    const auto it =
        std::find_if(o.intervals.begin(), o.intervals.end(),
                     [&](const IntervalWinner& w) { return w.n_lo <= g.n && g.n <= w.n_hi; });
    ASSERT_NE(it, o.intervals.end());
    EXPECT_EQ(it->winner.kernel_id, g.winner.kernel_id) << "n=" << g.n;
  }
  EXPECT_EQ(geometric_midpoint(1, 2), 2u);
  EXPECT_EQ(geometric_midpoint(4, 16), 8u);
  EXPECT_EQ(geometric_midpoint(10, 12), 11u);
  const std::uint64_t top = kernels::max_elements;
  EXPECT_EQ(geometric_midpoint(top / 4, top), top / 2);
}

TEST(Bisect, WinnersGoIntoTheDatabase) {
  auto cfg = validate_config(parse_config_file(TR_TUNER_DATA "/small.toml"));
  auto db = db::Database::create_in_memory();
  const auto ids = candidates_for(cfg.space, DType::f32, Op::sum);
  const std::int64_t dev = test::fill_database(db, ids, cfg.space.sizes);
  ReplayOptions ro;
  ro.device_id = dev;
  ro.policy = cfg.measure;
  ReplayRunner r(db, ro);
  const auto grid = grid_of(r, ids, cfg.space.sizes);
  const BisectOutcome o = bisect_intervals(grid, r, cfg.bisect);
  expect_complete(o.intervals);
  EXPECT_GE(o.intervals.size(), 2u);
  const auto winners =
      to_db_winners(o.intervals, DType::f32, Op::sum, db::L2Mode::cold, 13000, 13000, std::nullopt);
  db.replace_winners(dev, DType::f32, Op::sum, winners);
  const auto stored = db.winners(dev);
  ASSERT_EQ(stored.size(), o.intervals.size());
  for (std::size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(stored[i].l2_mode, db::L2Mode::cold);
    EXPECT_EQ(stored[i].kernel_id, o.intervals[i].winner.kernel_id);
    EXPECT_EQ(stored[i].n_lo, o.intervals[i].n_lo);
    EXPECT_EQ(stored[i].n_hi, o.intervals[i].n_hi);
    EXPECT_EQ(stored[i].measurement_id, *o.intervals[i].winner.measurement_id);
  }
  // A winner without a recorded measurement cannot be stored.
  std::vector<IntervalWinner> bare = o.intervals;
  bare[0].winner.measurement_id.reset();
  EXPECT_THROW(to_db_winners(bare, DType::f32, Op::sum, db::L2Mode::cold, 0, 0, std::nullopt),
               Error);
}

TEST(Bisect, AWarmRunsWinnersKeepTheColdOnes) {
  auto cfg = validate_config(parse_config_file(TR_TUNER_DATA "/small.toml"));
  auto db = db::Database::create_in_memory();
  const auto ids = candidates_for(cfg.space, DType::f32, Op::sum);
  const std::int64_t dev = test::fill_database(db, ids, cfg.space.sizes);
  EXPECT_EQ(test::fill_database(db, ids, cfg.space.sizes, {}, db::L2Mode::warm), dev);
  std::size_t count[2] = {};
  for (db::L2Mode mode : {db::L2Mode::cold, db::L2Mode::warm}) {
    ReplayOptions ro;
    ro.device_id = dev;
    ro.policy = cfg.measure;
    ro.policy.l2 = mode;  // the replay answers with the measurements of this mode
    ReplayRunner r(db, ro);
    const BisectOutcome o = bisect_intervals(grid_of(r, ids, cfg.space.sizes), r, cfg.bisect);
    expect_complete(o.intervals);
    const auto ws =
        to_db_winners(o.intervals, DType::f32, Op::sum, mode, 13000, 13000, std::nullopt);
    for (const db::Winner& w : ws) EXPECT_EQ(w.l2_mode, mode);
    db.replace_winners(dev, DType::f32, Op::sum, ws, mode);
    count[static_cast<int>(mode)] = ws.size();
    // Storing them under the other mode is refused: their evidence is of this one.
    EXPECT_THROW(db.replace_winners(dev, DType::f32, Op::sum, ws,
                                    mode == db::L2Mode::cold ? db::L2Mode::warm : db::L2Mode::cold),
                 db::DbError);
  }
  const auto stored = db.winners(dev);
  ASSERT_EQ(stored.size(), count[0] + count[1]);  // the warm run replaced no cold winner
  for (const auto& w : stored) {
    const auto m = db.find_measurement(w.measurement_id);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->l2_mode, w.l2_mode);
  }
  EXPECT_EQ(stored.front().l2_mode, db::L2Mode::cold);  // ordered cold first
  EXPECT_EQ(stored.back().l2_mode, db::L2Mode::warm);
}

// A single_tile entry (one tile: 256 threads x 4 vectors x 4 floats = 4096 elements) that is
// the fastest wherever it runs: no interval reaches past its tile, and a midpoint beyond it goes
// to the next winner without a measurement.
const std::string S = "single_tile.b256.u4.single_pass.f32.sum";

Result tile_model(const Request& q) {
  Result r = exact(q.kernel_id == S ? A : q.kernel_id, q.n);
  r.kernel_id = q.kernel_id;
  if (q.kernel_id == S) {
    EXPECT_LE(q.n, 4096u) << "a single_tile entry measured past its tile";
    r.median_us = 1.0;
    r.p10_us = r.p90_us = r.median_us;
    r.measurement_id = static_cast<std::int64_t>(q.n) * 2 + 7;
  }
  return r;
}

TEST(Bisect, ASingleTileWinnersIntervalEndsAtItsTile) {
  test::FnRunner r(tile_model);
  // Grid 2^10, 2^12 (S wins: it takes them), 2^14, 2^16 (only A and B take those).
  std::vector<SizeWinner> grid = grid_of(r, {S, A, B}, {1024, 4096});
  for (const SizeWinner& w : grid_of(r, {A, B}, {16384, 65536})) grid.push_back(w);
  ASSERT_EQ(grid.size(), 4u);
  EXPECT_EQ(grid[1].winner.kernel_id, S);
  for (const bool enabled : {true, false}) {
    r.log.clear();
    const BisectOutcome o = bisect_intervals(grid, r, BisectConfig{enabled, 40, 1e-9});
    expect_complete(o.intervals);
    ASSERT_GE(o.intervals.size(), 2u);
    EXPECT_EQ(o.intervals[0].winner.kernel_id, S);
    EXPECT_EQ(o.intervals[0].n_hi, 4096u) << (enabled ? "bisected" : "midpoints");
    for (const Request& q : r.log) EXPECT_NE(q.kernel_id, S) << "measured at " << q.n;
  }
}

TEST(Bisect, ALastIntervalOfASingleTileWinnerStopsAtItsTile) {
  test::FnRunner r(tile_model);
  const auto grid = grid_of(r, {S, A, B}, {1024, 2048, 4096});
  const BisectOutcome o = bisect_intervals(grid, r, BisectConfig{true, 40, 1e-9});
  ASSERT_EQ(o.intervals.size(), 1u);
  EXPECT_EQ(o.intervals[0].n_lo, 1u);
  EXPECT_EQ(o.intervals[0].n_hi, 4096u);  // not kernels::max_elements: S takes no more
}

}  // namespace
}  // namespace tunedreduce::tuner
