// Winner selection and the tie rule.

#include <gtest/gtest.h>

#include "tuner/selection.hpp"

namespace tunedreduce::tuner {
namespace {

Result ok(const std::string& id, double median, double spread = 0) {
  Result r;
  r.kernel_id = id;
  r.n = 1 << 20;
  r.outcome = Outcome::ok;
  r.median_us = median;
  r.p10_us = median * (1 - spread / 2);
  r.p90_us = median * (1 + spread / 2);
  r.repeats = 10;
  return r;
}

Result failed(const std::string& id, Outcome o) {
  Result r;
  r.kernel_id = id;
  r.outcome = o;
  r.median_us = 0.001;  // a wrong kernel can be very fast
  r.error = "wrong";
  return r;
}

const std::string a2 = "smem.b256.u4.dynamic.two_pass.f32.sum";
const std::string a1 = "smem.b256.u4.dynamic.single_pass.f32.sum";
const std::string small = "smem.b128.u4.dynamic.single_pass.f32.sum";
const std::string big = "smem.b512.u4.dynamic.single_pass.f32.sum";

TEST(TieRule, WithinNoise) {
  // ok() results have 10 repeats: a median's relative standard error is 0.1546 x the spread.
  EXPECT_TRUE(within_noise(ok(a1, 100), ok(a2, 100.4)));   // < 0.5%: always a tie
  EXPECT_FALSE(within_noise(ok(a1, 100), ok(a2, 100.6)));  // > 0.5%, no spread
  // Spreads of 2% over 10 runs: the medians are known to 0.31% each, 2 x 0.44% = 0.87%.
  EXPECT_TRUE(within_noise(ok(a1, 100, 0.02), ok(a2, 100.8, 0.02)));
  EXPECT_FALSE(within_noise(ok(a1, 100, 0.02), ok(a2, 100.9, 0.02)));
  // A noisy measurement widens the tolerance of the pair, but never past 1%: 1% is the most the
  // rule may give away, however noisy both are (a 5% cap let winners 3-5% slower than the
  // fastest stand at the single-tile size).
  EXPECT_TRUE(within_noise(ok(a1, 100, 0.2), ok(a2, 100.9, 0.3)));
  EXPECT_FALSE(within_noise(ok(a1, 100, 0.2), ok(a2, 101.1, 0.3)));
  EXPECT_FALSE(within_noise(ok(a1, 102.5, 0.15), ok(a2, 100, 0.002)));
  EXPECT_FALSE(within_noise(ok(a1, 100), failed(a2, Outcome::incorrect)));
  TieRule wide{0.05, 0.05};
  EXPECT_TRUE(within_noise(ok(a1, 100), ok(a2, 104), wide));
  EXPECT_NEAR(relative_spread(ok(a1, 100, 0.04)), 0.04, 1e-12);
}

TEST(TieRule, MoreRepeatsLocateTheMedianBetter) {
  Result a = ok(a1, 100, 0.07), b = ok(a2, 100.8, 0.07);
  a.repeats = b.repeats = 10;  // 2 x sqrt(2) x 0.1546 x 7% = 3.1%: capped at 1%
  EXPECT_TRUE(within_noise(a, b));
  a.repeats = b.repeats = 100;  // 2 x sqrt(2) x 0.0489 x 7% = 0.97%
  EXPECT_TRUE(within_noise(a, b));
  a.repeats = b.repeats = 400;  // 0.48%: the floor, 0.5%
  EXPECT_FALSE(within_noise(a, b));
  EXPECT_NEAR(relative_median_error(a), 0.48898 * 0.07 / 20, 1e-12);
  // Unknown repeats: the spread itself stands for the median's uncertainty.
  a.repeats = 0;
  EXPECT_NEAR(relative_median_error(a), 0.07, 1e-12);
}

TEST(TieRule, Preference) {
  EXPECT_TRUE(preferred_in_tie(a1, a2));  // single_pass before two_pass
  EXPECT_FALSE(preferred_in_tie(a2, a1));
  EXPECT_TRUE(preferred_in_tie(small, a1));  // smaller block x unroll
  EXPECT_TRUE(preferred_in_tie(a1, big));
  EXPECT_TRUE(preferred_in_tie("warp_shuffle.b256.u2.single_pass.f32.sum",
                               "smem.b128.u8.dynamic.single_pass.f32.sum"));  // 512 < 1024
  // Same finish and work: the smaller id.
  EXPECT_TRUE(preferred_in_tie("smem.b256.u4.dynamic.single_pass.f32.sum",
                               "smem.b256.u4.static.single_pass.f32.sum"));
  EXPECT_TRUE(preferred_in_tie(a2, "not-an-id"));
}

// Between two exact entries only the finish (and, from 240 us, the grid) orders a tie; then the
// faster median wins, not the smaller block x unroll (docs/performance.md 3.19, f64 2^24).
TEST(Selection, ATieOfExactEntriesGoesToTheFasterUnlessTheFinishDecides) {
  const std::string u2 = "exact.b512.u2.single_pass.f64.exact_sum";
  const std::string u4 = "exact.b512.u4.single_pass.f64.exact_sum";
  const std::string u1tp = "exact.b256.u1.two_pass.f64.exact_sum";
  EXPECT_FALSE(preferred_in_tie(u2, u4));
  EXPECT_FALSE(preferred_in_tie(u4, u2));
  EXPECT_TRUE(preferred_in_tie(u4, u1tp));  // one launch before two, as for every family
  std::vector<Result> rs = {ok(u2, 57.36, 0.04), ok(u4, 57.02, 0.04)};
  Selection s = select_winner(rs);
  EXPECT_EQ(s.tied, 2u);
  EXPECT_EQ(s.winner, 1u);  // u4, the faster; before: u2, the smaller block x unroll
  EXPECT_NEAR(*s.margin, 57.36 / 57.02 - 1, 1e-12);
  // Either order of the results.
  std::swap(rs[0], rs[1]);
  EXPECT_EQ(select_winner(rs).winner, 0u);
  // A faster two_pass entry in the tie still loses to single_pass below 240 us, and among the
  // single_pass ones the faster wins.
  rs = {ok(u1tp, 56.90, 0.04), ok(u2, 57.30, 0.04), ok(u4, 57.02, 0.04)};
  s = select_winner(rs);
  EXPECT_EQ(s.tied, 3u);
  EXPECT_EQ(s.winner, 2u);
  // The fast families keep the smaller block x unroll.
  rs = {ok(a1, 100.0), ok(small, 99.8)};
  EXPECT_EQ(select_winner(rs).winner, 1u);
  rs = {ok(small, 100.0), ok(a1, 99.8)};
  EXPECT_EQ(select_winner(rs).winner, 0u);
}

TEST(Selection, AFloatExactEntryWithTwoDoublesWinsWithinTheWideRoundsBand) {
  const std::string registers = "exact_registers.b512.u4.single_pass.f32.exact_sum";
  const std::string local = "exact.b512.u4.single_pass.f32.exact_sum";
  const std::string wide = "exact_wide.b512.u4.single_pass.f32.exact_sum";
  const std::string wide_u2 = "exact_wide.b512.u2.single_pass.f32.exact_sum";
  // H100, 2^26 floats (docs/performance.md 3.21): exact_wide 1 % slower, outside the noise.
  std::vector<Result> rs = {ok(registers, 95.4), ok(wide, 96.3), ok(local, 96.9)};
  Selection s = select_winner(rs);
  EXPECT_EQ(s.tied, 1u);
  EXPECT_EQ(s.winner, 1u);
  EXPECT_EQ(s.runner_up, 0u);
  EXPECT_LT(*s.margin, 0);
  // The fastest of the exact_wide entries, and none beyond the band (2 %).
  rs = {ok(registers, 100), ok(wide_u2, 101.9), ok(wide, 101.5)};
  EXPECT_EQ(select_winner(rs).winner, 2u);
  rs = {ok(registers, 100), ok(wide, 102.1)};
  EXPECT_EQ(select_winner(rs).winner, 0u);
  rs = {ok(local, 100), ok(wide, 101.9)};
  EXPECT_EQ(select_winner(rs).winner, 1u);
  TieRule narrow;
  narrow.wide_rounds_relative = 0.01;
  EXPECT_EQ(select_winner(rs, narrow).winner, 0u);
  // Only an ok result, and only for float: doubles of both families hold such data.
  rs = {ok(registers, 100), failed(wide, Outcome::incorrect)};
  EXPECT_EQ(select_winner(rs).winner, 0u);
  rs = {ok("exact.b512.u4.single_pass.f64.exact_sum", 100),
        ok("exact_wide.b512.u4.single_pass.f64.exact_sum", 101)};
  EXPECT_EQ(select_winner(rs).winner, 0u);
  // A faster exact_wide entry wins as it always did.
  rs = {ok(registers, 100), ok(wide, 90)};
  EXPECT_EQ(select_winner(rs).winner, 1u);
}

TEST(Selection, FastestWinsOutsideNoise) {
  std::vector<Result> rs = {ok(a2, 120), ok(a1, 100), ok(big, 110)};
  const Selection s = select_winner(rs);
  ASSERT_TRUE(s.winner);
  EXPECT_EQ(*s.winner, 1u);
  EXPECT_EQ(s.runner_up, 2u);
  EXPECT_EQ(s.tied, 1u);
  EXPECT_EQ(s.ok, 3u);
  EXPECT_NEAR(*s.margin, 0.10, 1e-12);
}

TEST(Selection, NotOkNeverWins) {
  std::vector<Result> rs = {failed(a1, Outcome::incorrect), ok(a2, 100),
                            failed(small, Outcome::crashed), failed(big, Outcome::timeout)};
  const Selection s = select_winner(rs);
  EXPECT_EQ(s.winner, 1u);
  EXPECT_FALSE(s.runner_up);
  EXPECT_FALSE(s.margin);
  EXPECT_EQ(s.ok, 1u);
  std::vector<Result> none = {failed(a1, Outcome::incorrect), failed(a2, Outcome::launch_failed)};
  EXPECT_FALSE(select_winner(none).winner);
  EXPECT_FALSE(select_winner(std::vector<Result>{}).winner);
}

TEST(Selection, TieBrokenByTheRule) {
  // big is fastest, but a1 (smaller block) and a2 (two_pass) are within 0.5%: a1 wins, big is
  // the runner-up and the margin is negative.
  std::vector<Result> rs = {ok(a2, 100.2), ok(big, 100.0), ok(a1, 100.4), ok(small, 100.9)};
  const Selection s = select_winner(rs);
  EXPECT_EQ(s.winner, 2u);
  EXPECT_EQ(s.runner_up, 1u);
  EXPECT_EQ(s.tied, 3u);
  EXPECT_NEAR(*s.margin, 100.0 / 100.4 - 1, 1e-12);
  // small is tied too once the spreads say the medians are that uncertain (up to 1%).
  for (Result& r : rs) r = ok(r.kernel_id, *r.median_us, 0.04);
  EXPECT_EQ(select_winner(rs).winner, 3u);
  EXPECT_EQ(select_winner(rs).tied, 4u);
  // 1.5% slower is never tied, however noisy.
  rs[3] = ok(small, 101.5, 0.3);
  EXPECT_EQ(select_winner(rs).winner, 2u);
}

TEST(Selection, OneLaunchCountsOnlyWhereASecondLaunchIsOutsideTheNoise) {
  // The H200's i64 sum 2^28 finalists (docs/performance.md 3.1): a persistent single_pass kernel
  // and a streaming two_pass one 0.13 % apart. At 473 us a second launch (2.4 us) is 0.5 %, below
  // the 1 % ceiling of the tie: the one-launch preference does not apply, the smaller block x
  // unroll (4096 against 16384) wins.
  const std::string ws = "warp_shuffle.b1024.u16.single_pass.i64.sum";
  const std::string st = "streaming.b1024.u4.two_pass.i64.sum";
  std::vector<Result> rs = {ok(ws, 473.0), ok(st, 473.6)};
  EXPECT_EQ(select_winner(rs).winner, 1u);
  // At 200 us (a second launch is 1.2 %) it applies: the single_pass one wins.
  rs = {ok(ws, 200.0), ok(st, 200.2)};
  EXPECT_EQ(select_winner(rs).winner, 0u);
  // Above the threshold an a1/a2 tie goes to the smaller id (same work): "...single_pass..." <
  // "...two_pass...", whatever the order.
  rs = {ok(a2, 300.0), ok(a1, 300.3)};
  EXPECT_EQ(select_winner(rs).winner, 1u);
  EXPECT_FALSE(preferred_in_tie(ws, st, false));
  EXPECT_TRUE(preferred_in_tie(ws, st, true));
  EXPECT_DOUBLE_EQ(second_launch_us / TieRule{}.max_relative, 240.0);
}

TEST(Selection, WhereASecondLaunchIsNoiseOneTilePerBlockBeatsAPersistentGridInATie) {
  // An H200 run (docs/performance.md 3.1) chose persistent grids that tied streaming ones within
  // 0.2 % at 2^26-2^29; they ran 1-4 % slower in the next call. Above 240 us a tie goes to the grid
  // of one block per tile, even against a smaller block x unroll and either finish.
  const std::string vec = "vectorized.b256.u4.two_pass.f32.sum";       // persistent, 1024
  const std::string ws = "warp_shuffle.b512.u16.single_pass.f32.sum";  // persistent, 8192
  const std::string st = "streaming.b1024.u8.two_pass.f32.sum";        // one tile per block, 8192
  std::vector<Result> rs = {ok(vec, 500.0), ok(ws, 500.5), ok(st, 501.0)};
  EXPECT_EQ(select_winner(rs).winner, 2u);
  EXPECT_TRUE(preferred_in_tie(st, vec, false));
  EXPECT_FALSE(preferred_in_tie(vec, st, false));
  // Outside the noise the faster persistent grid still wins.
  rs = {ok(vec, 500.0), ok(st, 510.0)};
  EXPECT_EQ(select_winner(rs).winner, 0u);
  // Below 240 us the one-launch preference comes first, then block x unroll, as before.
  rs = {ok(vec, 100.0), ok(st, 100.1)};
  EXPECT_EQ(select_winner(rs).winner, 0u);
}

// Segmented entries: the split family launches a second kernel, which counts as two_pass's does.
TEST(Selection, ATieOfSegmentedEntriesPrefersOneKernelWhereASecondLaunchCounts) {
  const std::string split = "seg.split.b512.v4.fixed.f32.sum";
  const std::string block = "seg.block.b256.v4.fixed.f32.sum";
  const std::string thread = "seg.thread.b256.v4.fixed.f32.sum";
  EXPECT_TRUE(preferred_in_tie(thread, split, true));
  EXPECT_FALSE(preferred_in_tie(split, thread, true));
  // Where a second launch is noise: the id.
  EXPECT_TRUE(preferred_in_tie(split, thread, false));
  EXPECT_TRUE(preferred_in_tie(block, thread, true));
  EXPECT_FALSE(preferred_in_tie(thread, block, true));
  // select_winner: split 0.3 % faster at 20 us, tied: the one-kernel thread wins; at 400 us the
  // id decides, split's.
  std::vector<Result> rs = {ok(split, 20.0, 0.01), ok(thread, 20.06, 0.01)};
  EXPECT_EQ(rs[*select_winner(rs).winner].kernel_id, thread);
  rs = {ok(split, 400.0, 0.01), ok(thread, 401.2, 0.01)};
  EXPECT_EQ(rs[*select_winner(rs).winner].kernel_id, split);
}

TEST(Selection, DeterministicForEqualMedians) {
  std::vector<Result> rs = {ok("b", 10), ok("a", 10)};
  EXPECT_EQ(select_winner(rs).winner, 1u);  // neither parses: the smaller id
  std::vector<Result> swapped = {ok("a", 10), ok("b", 10)};
  EXPECT_EQ(swapped[*select_winner(swapped).winner].kernel_id, "a");
}

TEST(Selection, Ranking) {
  std::vector<Result> rs = {failed("x", Outcome::incorrect), ok(a2, 130), ok(a1, 100), ok(big, 120),
                            ok(small, 110)};
  EXPECT_EQ(rank_results(rs), (std::vector<std::size_t>{2, 4, 3, 1, 0}));
}

}  // namespace
}  // namespace tunedreduce::tuner
