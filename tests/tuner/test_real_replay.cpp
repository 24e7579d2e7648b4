// Strategies replayed against databases recorded on an H100 and an H200 (tests/data/h100-sample.db,
// h200-sample.db: exhaustive, every candidate of i32/f32 x sum/max at seven sizes): halving and
// random against the full truth, on each GPU's own measurements.

#include <gtest/gtest.h>

#include <iostream>

#include "tuner/config.hpp"
#include "tuner/driver.hpp"
#include "tuner/replay_runner.hpp"
#include "tuner/search_space.hpp"
#include "tuner/selection.hpp"
#include "tuner/strategies.hpp"

namespace tunedreduce::tuner {
namespace {

/// The recorded sample of one GPU: "h100-sample" or "h200-sample" (.db and .toml).
class RealReplay : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    db::ReaderOptions ro;
    ro.immutable = true;
    const std::string base = std::string(TR_TEST_DATA "/") + GetParam();
    db_.emplace(db::Database::open_reader(base + ".db", ro));
    config_ = validate_config(parse_config_file(base + ".toml"));
    device_ = choose_replay_device(*db_, std::nullopt).id;
  }
  ReplayRunner runner() {
    ReplayOptions o;
    o.device_id = device_;
    o.policy = config_.measure;
    o.strict = true;  // every candidate at every grid size was recorded
    return ReplayRunner(*db_, o);
  }
  std::optional<db::Database> db_;
  TuneConfig config_;
  std::int64_t device_ = 0;
};

TEST_P(RealReplay, HalvingWinnerIsExhaustivesOrWithinItsNoise) {
  std::size_t keys = 0, same = 0;
  auto r1 = runner(), r2 = runner();
  for (const KeySpace& k : enumerate_space(config_.space)) {
    for (std::uint64_t n : k.sizes) {
      ++keys;
      StrategyConfig sc = config_.strategy;
      SearchContext c1{r1, config_.measure, sc, k.dtype, k.op, n, nullptr, {}, 64, {}};
      SearchContext c2{r2, config_.measure, sc, k.dtype, k.op, n, nullptr, {}, 64, {}};
      const SearchOutcome ex = search_exhaustive(k.candidates, c1);
      const SearchOutcome hv = search_halving(k.candidates, c2);
      ASSERT_EQ(ex.final_results.size(), k.candidates.size());
      const Selection se = select_winner(ex.final_results), sh = select_winner(hv.final_results);
      ASSERT_TRUE(se.winner && sh.winner);
      const Result& we = ex.final_results[*se.winner];
      const Result& wh = hv.final_results[*sh.winner];
      if (we.kernel_id == wh.kernel_id) {
        ++same;
        continue;
      }
      EXPECT_TRUE(within_noise(we, wh)) << dtype_name(k.dtype) << " " << op_name(k.op) << " n=" << n
                                        << ": exhaustive " << we.kernel_id << " " << *we.median_us
                                        << " us, halving " << wh.kernel_id << " " << *wh.median_us;
    }
  }
  EXPECT_EQ(keys, 28u);
  std::cerr << "halving chose exhaustive's winner at " << same << " of " << keys
            << " recorded sizes, the others within its noise\n";
}

TEST_P(RealReplay, RandomIsDeterministicAndItsWinnerNeverBeatsExhaustive) {
  for (const KeySpace& k : enumerate_space(config_.space)) {
    const std::uint64_t n = k.sizes[3];
    StrategyConfig sc = config_.strategy;
    sc.random.count = 50;
    sc.seed = 3;
    auto r1 = runner(), r2 = runner(), r3 = runner();
    SearchContext c1{r1, config_.measure, sc, k.dtype, k.op, n, nullptr, {}, 64, {}};
    SearchContext c2{r2, config_.measure, sc, k.dtype, k.op, n, nullptr, {}, 64, {}};
    SearchContext c3{r3, config_.measure, sc, k.dtype, k.op, n, nullptr, {}, 64, {}};
    const SearchOutcome a = search_random(k.candidates, c1), b = search_random(k.candidates, c2);
    ASSERT_EQ(a.final_results.size(), 50u);
    for (std::size_t i = 0; i < 50; ++i)
      EXPECT_EQ(a.final_results[i].measurement_id, b.final_results[i].measurement_id);
    const SearchOutcome ex = search_exhaustive(k.candidates, c3);
    const Result& best = ex.final_results[*select_winner(ex.final_results).winner];
    const Result& sampled = a.final_results[*select_winner(a.final_results).winner];
    EXPECT_GE(*sampled.median_us * (1 + 0.05), *best.median_us);
  }
}

TEST_P(RealReplay, TheDriverGivesCompleteIntervalsForEveryKey) {
  TuneConfig c = config_;
  c.strategy.name = "halving";
  c.bisect.enabled = true;  // midpoints were not recorded: each crossover stops at its first
  ReplayOptions o;
  o.device_id = device_;
  o.policy = c.measure;
  ReplayRunner r(*db_, o);
  const TuneOutcome out = run_tuning(c, r);
  ASSERT_EQ(out.keys.size(), 4u);
  for (const KeyOutcome& k : out.keys) {
    ASSERT_TRUE(k.complete);
    const auto& iv = k.bisect.intervals;
    ASSERT_FALSE(iv.empty());
    EXPECT_EQ(iv.front().n_lo, 1u);
    EXPECT_EQ(iv.back().n_hi, kernels::max_elements);
    for (std::size_t i = 1; i < iv.size(); ++i) EXPECT_EQ(iv[i].n_lo, iv[i - 1].n_hi + 1);
    for (const SizeOutcome& s : k.sizes) EXPECT_TRUE(s.winner) << s.n;
  }
  EXPECT_EQ(
      r.missing(), 2 * [&] {
        std::size_t crossovers = 0;
        for (const KeyOutcome& k : out.keys) crossovers += k.bisect.crossovers.size();
        return crossovers;
      }());
}

INSTANTIATE_TEST_SUITE_P(Recorded, RealReplay, ::testing::Values("h100-sample", "h200-sample"),
                         [](const auto& info) {
                           return std::string(info.param).substr(0, 4);  // h100, h200
                         });

}  // namespace
}  // namespace tunedreduce::tuner
