// Strategies on replayed data: exhaustive, random (deterministic, within budget), halving
// (its winner is exhaustive's or within its noise).

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <set>

#include "common/error.hpp"
#include "synthetic.hpp"
#include "tuner/config.hpp"
#include "tuner/replay_runner.hpp"
#include "tuner/search_space.hpp"
#include "tuner/selection.hpp"
#include "tuner/strategies.hpp"

namespace tunedreduce::tuner {
namespace {

class Strategies : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    config_ = new TuneConfig(validate_config(parse_config_file(TR_TUNER_DATA "/small.toml")));
    db_ = new db::Database(db::Database::create_in_memory());
    ids_ = new std::vector<std::string>(candidates_for(config_->space, DType::f32, Op::sum));
    device_ = test::fill_database(*db_, *ids_, config_->space.sizes);
  }
  static void TearDownTestSuite() {
    delete config_;
    delete db_;
    delete ids_;
  }

  ReplayRunner replay() {
    ReplayOptions o;
    o.device_id = device_;
    o.policy = config_->measure;
    o.strict = true;
    return ReplayRunner(*db_, o);
  }

  SearchOutcome run(const std::string& strategy, Runner& r, std::uint64_t n,
                    StrategyConfig sc = config_->strategy) {
    sc.name = strategy;
    SearchContext ctx{r, config_->measure, sc, DType::f32, Op::sum, n, nullptr, {}, 16, {}};
    return find_strategy(strategy)->run(*ids_, ctx);
  }

  static TuneConfig* config_;
  static db::Database* db_;
  static std::vector<std::string>* ids_;
  static std::int64_t device_;
};

TuneConfig* Strategies::config_ = nullptr;
db::Database* Strategies::db_ = nullptr;
std::vector<std::string>* Strategies::ids_ = nullptr;
std::int64_t Strategies::device_ = 0;

TEST_F(Strategies, TableHasEveryStrategy) {
  std::vector<std::string> names;
  for (const StrategyInfo& s : strategies()) names.emplace_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"exhaustive", "random", "halving"}));
  EXPECT_EQ(find_strategy("nope"), nullptr);
}

TEST_F(Strategies, ExhaustiveMeasuresEveryCandidateOnce) {
  ReplayRunner r = replay();
  const SearchOutcome o = run("exhaustive", r, 1 << 20);
  EXPECT_EQ(o.final_results.size(), ids_->size());
  EXPECT_EQ(o.requests, ids_->size());
  EXPECT_EQ(o.rounds, 1);
  for (std::size_t i = 0; i < ids_->size(); ++i) {
    EXPECT_EQ(o.final_results[i].kernel_id, (*ids_)[i]);
    EXPECT_EQ(o.final_results[i].repeats, 20);  // the full measurement was replayed
    EXPECT_TRUE(o.final_results[i].measurement_id);
  }
}

TEST_F(Strategies, HalvingWinnerIsExhaustivesOrWithinItsNoise) {
  std::size_t same = 0;
  for (std::uint64_t n : config_->space.sizes) {
    ReplayRunner r1 = replay(), r2 = replay();
    const SearchOutcome ex = run("exhaustive", r1, n);
    const SearchOutcome hv = run("halving", r2, n);
    const Selection se = select_winner(ex.final_results);
    const Selection sh = select_winner(hv.final_results);
    ASSERT_TRUE(se.winner && sh.winner);
    const Result& we = ex.final_results[*se.winner];
    const Result& wh = hv.final_results[*sh.winner];
    EXPECT_EQ(wh.repeats, 20) << "halving's winner must come from the full-policy round";
    if (we.kernel_id == wh.kernel_id) {
      ++same;
      continue;
    }
    // Exhaustive's measurement of halving's winner is within noise of exhaustive's winner.
    const Result* twin = nullptr;
    for (const Result& x : ex.final_results)
      if (x.kernel_id == wh.kernel_id) twin = &x;
    ASSERT_NE(twin, nullptr);
    EXPECT_TRUE(within_noise(we, *twin))
        << "n=" << n << ": " << we.kernel_id << " " << *we.median_us << " vs " << wh.kernel_id
        << " " << *twin->median_us;
  }
  EXPECT_GE(same, config_->space.sizes.size() / 2);
  std::cerr << "halving picked exhaustive's winner at " << same << " of "
            << config_->space.sizes.size() << " sizes\n";
}

TEST_F(Strategies, HalvingRoundsMatchItsPlan) {
  ReplayRunner r = replay();
  const SearchOutcome o = run("halving", r, 1 << 16);
  // 60 -> 30 -> 15 -> 8 -> 4 -> 3 (final_size), keep 0.5.
  EXPECT_EQ(o.rounds, 6);
  EXPECT_EQ(o.requests, 60u + 30 + 15 + 8 + 4 + 3);
  EXPECT_EQ(o.final_results.size(), 3u);
  const PlannedSearch plan =
      find_strategy("halving")->plan(60, config_->strategy, config_->measure);
  ASSERT_EQ(plan.rounds.size(), 6u);
  double total = 0;
  for (const auto& round : plan.rounds) total += round.measurements;
  EXPECT_EQ(total, static_cast<double>(o.requests));
  EXPECT_EQ(plan.rounds[0].repeats, 3);
  EXPECT_EQ(plan.rounds[1].repeats, 9);
  EXPECT_EQ(plan.rounds[3].repeats, 50);  // 81 capped at max_repeats
  EXPECT_FALSE(plan.rounds.back().repeats);
}

TEST_F(Strategies, HalvingAsksFewRepeatsFirst) {
  auto runner = test::model_runner();
  StrategyConfig sc = config_->strategy;
  sc.name = "halving";
  SearchContext ctx{runner, config_->measure, sc, DType::f32, Op::sum, 4096, nullptr, {}, 64, {}};
  search_halving(*ids_, ctx);
  ASSERT_FALSE(runner.log.empty());
  EXPECT_EQ(runner.log.front().min_repeats, 3);
  EXPECT_EQ(runner.log.front().max_repeats, 3);
  EXPECT_FALSE(runner.log.back().min_repeats);  // the final round: the full policy
}

TEST_F(Strategies, HalvingDropsFailedCandidates) {
  // The fastest kernels are wrong: they never survive a round.
  std::set<std::string> wrong;
  for (const auto& id : *ids_)
    if (id.rfind("vectorized.", 0) == 0) wrong.insert(id);
  auto runner = test::model_runner(wrong);
  StrategyConfig sc = config_->strategy;
  SearchContext ctx{runner,  config_->measure, sc, DType::f32, Op::sum,
                    1 << 24, nullptr,          {}, 64,         {}};
  const SearchOutcome o = search_halving(*ids_, ctx);
  for (const Result& r : o.final_results) EXPECT_TRUE(r.ok()) << r.kernel_id;
  const Selection s = select_winner(o.final_results);
  ASSERT_TRUE(s.winner);
  EXPECT_EQ(wrong.count(o.final_results[*s.winner].kernel_id), 0u);
}

TEST_F(Strategies, HalvingCarriesTheFastestExactWideEntryOfAFloatKeyToTheFinalRound) {
  // The 54 f32 exact entries: exact_registers fastest, then exact, then exact_wide, whose best
  // (b512 u4 single_pass, 1.2 % behind) is never in the fastest quarter of a round.
  std::vector<std::string> ids;
  for (const char* family : {"exact_registers", "exact", "exact_wide"})
    for (const int block : {128, 256, 512})
      for (const int unroll : {1, 2, 4})
        for (const char* finish : {"two_pass", "single_pass"})
          ids.push_back(std::string(family) + ".b" + std::to_string(block) + ".u" +
                        std::to_string(unroll) + "." + finish + ".f32.exact_sum");
  const std::string best_wide = "exact_wide.b512.u4.single_pass.f32.exact_sum";
  test::FnRunner runner([&](const Request& q) {
    const auto i =
        static_cast<double>(std::find(ids.begin(), ids.end(), q.kernel_id) - ids.begin());
    Result r;
    r.kernel_id = q.kernel_id;
    r.n = q.n;
    r.outcome = Outcome::ok;
    r.median_us = q.kernel_id == best_wide ? 101.2 : 100 + 0.05 * i;
    r.p10_us = *r.median_us;
    r.p90_us = *r.median_us;
    r.repeats = q.min_repeats.value_or(20);
    return r;
  });
  StrategyConfig sc = config_->strategy;
  sc.halving.keep = 0.25;
  sc.halving.final_size = 4;
  SearchContext ctx{runner,  config_->measure, sc, DType::f32, Op::exact_sum,
                    1 << 26, nullptr,          {}, 64,         {}};
  const SearchOutcome o = search_halving(ids, ctx);
  ASSERT_EQ(o.final_results.size(), 5u);  // the fastest 4 and exact_wide's best
  EXPECT_EQ(o.final_results.back().kernel_id, best_wide);
  const Selection s = select_winner(o.final_results);
  ASSERT_TRUE(s.winner);
  EXPECT_EQ(o.final_results[*s.winner].kernel_id, best_wide);
  // Beyond the band it loses, and no other key carries an extra candidate.
  TieRule narrow;
  narrow.wide_rounds_relative = 0.01;
  EXPECT_EQ(o.final_results[*select_winner(o.final_results, narrow).winner].kernel_id,
            "exact_registers.b128.u1.single_pass.f32.exact_sum");  // tied with two_pass
  ReplayRunner r = replay();
  EXPECT_EQ(run("halving", r, 1 << 16).final_results.size(), 3u);
}

TEST_F(Strategies, RandomIsDeterministicForASeedAndRespectsItsCount) {
  StrategyConfig sc = config_->strategy;
  sc.random.count = 20;
  sc.seed = 7;
  auto a = test::model_runner(), b = test::model_runner(), c = test::model_runner();
  run("random", a, 1 << 20, sc);
  run("random", b, 1 << 20, sc);
  sc.seed = 8;
  run("random", c, 1 << 20, sc);
  ASSERT_EQ(a.log.size(), 20u);
  ASSERT_EQ(b.log.size(), 20u);
  std::vector<std::string> ia, ib, ic;
  for (const auto& q : a.log) ia.push_back(q.kernel_id);
  for (const auto& q : b.log) ib.push_back(q.kernel_id);
  for (const auto& q : c.log) ic.push_back(q.kernel_id);
  EXPECT_EQ(ia, ib);
  EXPECT_NE(ia, ic);
  const std::set<std::string> distinct(ia.begin(), ia.end());
  EXPECT_EQ(distinct.size(), 20u);  // without replacement
  for (const auto& id : ia) EXPECT_NE(std::find(ids_->begin(), ids_->end(), id), ids_->end()) << id;
  // The same seed draws another sample at another size.
  auto d = test::model_runner();
  sc.seed = 7;
  run("random", d, 1 << 22, sc);
  std::vector<std::string> id_;
  for (const auto& q : d.log) id_.push_back(q.kernel_id);
  EXPECT_NE(ia, id_);
  // A count above the number of candidates measures each once.
  sc.random.count = 1000;
  auto e = test::model_runner();
  run("random", e, 1 << 20, sc);
  EXPECT_EQ(e.log.size(), ids_->size());
}

TEST_F(Strategies, RandomOrderIsAFixedPermutation) {
  const std::vector<std::string> ids = {"a", "b", "c", "d", "e", "f", "g", "h"};
  const auto o = random_order(ids, 42, DType::i32, Op::sum, 1024);
  EXPECT_EQ(o, random_order(ids, 42, DType::i32, Op::sum, 1024));
  std::vector<std::string> sorted = o;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, ids);
}

TEST_F(Strategies, RandomRespectsItsTimeBudget) {
  StrategyConfig sc = config_->strategy;
  sc.random.count.reset();
  sc.random.seconds = 3;
  auto r = test::model_runner();
  r.seconds_per_call = 1;  // every measure() call takes a second of the fake clock
  SearchContext ctx{r,       config_->measure,         sc, DType::f32, Op::sum, 1 << 20,
                    nullptr, [&r] { return r.clock; }, 4,  {}};
  const SearchOutcome o = search_random(*ids_, ctx);
  EXPECT_EQ(r.calls, 3u);  // 0 s, 1 s, 2 s elapsed before each call; stop at 3 s
  EXPECT_EQ(o.final_results.size(), 12u);
}

TEST_F(Strategies, CancellationStopsBetweenChunks) {
  std::atomic<bool> cancel{false};
  auto r = test::model_runner();
  r.cancel = &cancel;
  r.cancel_after = 10;
  StrategyConfig sc = config_->strategy;
  SearchContext ctx{r, config_->measure, sc, DType::f32, Op::sum, 1 << 20, &cancel, {}, 8, {}};
  const SearchOutcome o = search_exhaustive(*ids_, ctx);
  EXPECT_TRUE(o.cancelled);
  EXPECT_EQ(r.log.size(), 16u);  // the chunk in flight finished; no chunk after it
  EXPECT_EQ(r.requests_after_cancel, 6u);
}

TEST_F(Strategies, ARunnerThatAnswersWronglyIsAnError) {
  class Dropping : public Runner {
   public:
    std::vector<Result> measure(std::span<const Request> rs) override {
      std::vector<Result> out;
      for (std::size_t i = 0; i + 1 < rs.size(); ++i)
        out.push_back(test::model_result(rs[i].kernel_id, rs[i].n, 5, 0, 0));
      return out;
    }
  } dropping;
  class Swapping : public Runner {
   public:
    std::vector<Result> measure(std::span<const Request> rs) override {
      std::vector<Result> out;
      for (const auto& q : rs) out.push_back(test::model_result(q.kernel_id, q.n + 1, 5, 0, 0));
      return out;
    }
  } swapping;
  StrategyConfig sc = config_->strategy;
  SearchContext c1{dropping, config_->measure, sc, DType::f32, Op::sum, 1024, nullptr, {}, 8, {}};
  EXPECT_THROW(search_exhaustive(*ids_, c1), Error);
  SearchContext c2{swapping, config_->measure, sc, DType::f32, Op::sum, 1024, nullptr, {}, 8, {}};
  EXPECT_THROW(search_exhaustive(*ids_, c2), Error);
}

}  // namespace
}  // namespace tunedreduce::tuner
