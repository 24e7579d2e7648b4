// The driver: every key and size, progress, and a clean stop on cancellation.

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "common/error.hpp"
#include "kernels/manifest.hpp"
#include "synthetic.hpp"
#include "tuner/config.hpp"
#include "tuner/driver.hpp"
#include "tuner/progress.hpp"
#include "tuner/replay_runner.hpp"
#include "tuner/search_space.hpp"
#include "tuner/winners_table.hpp"

namespace tunedreduce::tuner {
namespace {

TuneConfig small() { return validate_config(parse_config_file(TR_TUNER_DATA "/small.toml")); }

void expect_complete(const KeyOutcome& k) {
  const auto& iv = k.bisect.intervals;
  ASSERT_FALSE(iv.empty());
  EXPECT_EQ(iv.front().n_lo, 1u);
  EXPECT_EQ(iv.back().n_hi, kernels::max_elements);
  for (std::size_t i = 1; i < iv.size(); ++i) EXPECT_EQ(iv[i].n_lo, iv[i - 1].n_hi + 1);
}

TEST(Driver, TunesEveryKeyAndReportsProgress) {
  const TuneConfig c = small();
  auto runner = test::model_runner();
  std::vector<ProgressEvent> events;
  DriverOptions o;
  o.device_label = "model";
  o.progress = [&](const ProgressEvent& e) { events.push_back(e); };
  const TuneOutcome out = run_tuning(c, runner, o);
  EXPECT_FALSE(out.cancelled);
  ASSERT_EQ(out.keys.size(), 2u);
  for (const KeyOutcome& k : out.keys) {
    EXPECT_TRUE(k.complete);
    EXPECT_EQ(k.candidates, 60u);
    ASSERT_EQ(k.sizes.size(), 8u);
    for (const SizeOutcome& s : k.sizes) {
      ASSERT_TRUE(s.winner);
      EXPECT_EQ(s.requests, 120u);  // halving: 60+30+15+8+4+3
      EXPECT_EQ(s.final_results.size(), 3u);
    }
    expect_complete(k);
  }
  EXPECT_EQ(out.requests, runner.log.size());
  std::size_t sizes_done = 0, keys_done = 0;
  for (const ProgressEvent& e : events) {
    EXPECT_EQ(e.device, "model");
    EXPECT_EQ(e.keys_total, 2u);
    EXPECT_EQ(e.sizes_total, 16u);
    EXPECT_EQ(e.candidates, 60u);
    if (e.kind == ProgressEvent::Kind::size_done) {
      ++sizes_done;
      ASSERT_NE(e.size, nullptr);
      EXPECT_EQ(e.sizes_done, sizes_done);
      EXPECT_TRUE(e.eta_s);
    }
    if (e.kind == ProgressEvent::Kind::key_done) {
      ++keys_done;
      ASSERT_NE(e.key, nullptr);
      EXPECT_EQ(e.keys_done, keys_done);
    }
  }
  EXPECT_EQ(sizes_done, 16u);
  EXPECT_EQ(keys_done, 2u);
  EXPECT_DOUBLE_EQ(events.back().fraction, 1.0);
  EXPECT_EQ(events.back().requests, runner.log.size());
}

TEST(Driver, StopsCleanlyOnCancellation) {
  const TuneConfig c = small();
  // Requests of the first key: measure it alone once.
  auto probe = test::model_runner();
  TuneConfig first = c;
  first.space.dtypes = {c.space.dtypes.front()};
  run_tuning(first, probe);
  const std::size_t first_key = probe.log.size();

  std::atomic<bool> cancel{false};
  auto runner = test::model_runner();
  runner.cancel = &cancel;
  runner.cancel_after = first_key + 200;  // inside the second key's grid
  DriverOptions o;
  o.cancel = &cancel;
  o.chunk = 16;
  const TuneOutcome out = run_tuning(c, runner, o);
  EXPECT_TRUE(out.cancelled);
  ASSERT_EQ(out.keys.size(), 2u);
  EXPECT_TRUE(out.keys[0].complete);
  expect_complete(out.keys[0]);
  EXPECT_FALSE(out.keys[1].complete);
  EXPECT_TRUE(out.keys[1].bisect.intervals.empty());
  EXPECT_LT(out.keys[1].sizes.size(), 8u);
  // Nothing was asked after the flag, beyond the rest of the batch in flight.
  EXPECT_LT(runner.requests_after_cancel, o.chunk);
  EXPECT_EQ(runner.log.size(), runner.cancel_after + runner.requests_after_cancel);
}

TEST(Driver, CancelledBeforeStartMeasuresNothing) {
  std::atomic<bool> cancel{true};
  auto runner = test::model_runner();
  DriverOptions o;
  o.cancel = &cancel;
  const TuneOutcome out = run_tuning(small(), runner, o);
  EXPECT_TRUE(out.cancelled);
  EXPECT_TRUE(runner.log.empty());
  for (const KeyOutcome& k : out.keys) EXPECT_FALSE(k.complete);
}

TEST(Driver, CancelledWhileBisectingLeavesTheKeyIncomplete) {
  std::atomic<bool> cancel{false};
  auto runner = test::model_runner();
  DriverOptions o;
  o.cancel = &cancel;
  o.progress = [&](const ProgressEvent& e) {
    if (e.kind == ProgressEvent::Kind::measured && e.n == 0) cancel = true;  // n == 0: bisecting
  };
  const TuneOutcome out = run_tuning(small(), runner, o);
  EXPECT_TRUE(out.cancelled);
  ASSERT_EQ(out.keys.size(), 1u);
  EXPECT_FALSE(out.keys[0].complete);
  EXPECT_EQ(out.keys[0].sizes.size(), 8u);  // the grid finished
  EXPECT_TRUE(out.keys[0].bisect.cancelled);
}

TEST(Driver, SizesWithoutAnOkCandidateHaveNoWinner) {
  TuneConfig c = small();
  c.space.dtypes = {DType::f32};
  test::FnRunner runner([](const Request& q) {
    Result r = test::model_result(q.kernel_id, q.n, 10, 0, 0.01);
    if (q.n == 65536) {
      r.outcome = Outcome::crashed;
      r.error = "worker died";
    }
    return r;
  });
  const TuneOutcome out = run_tuning(c, runner);
  ASSERT_EQ(out.keys.size(), 1u);
  const KeyOutcome& k = out.keys[0];
  EXPECT_TRUE(k.complete);
  for (const SizeOutcome& s : k.sizes) EXPECT_EQ(s.winner.has_value(), s.n != 65536) << s.n;
  expect_complete(k);
}

TEST(Driver, ASingleTileEntryIsMeasuredOnlyWhereItTakesN) {
  const TuneConfig c = validate_config(parse_config_text(
      "[space]\nfamilies = [\"single_tile\", \"warp_shuffle\"]\nblocks = [256]\nunrolls = [4]\n"
      "finishes = [\"single_pass\"]\ndtypes = [\"f32\"]\nops = [\"sum\"]\n"
      "sizes = [1024, 4096, 16384, 65536]\n[strategy]\nname = \"exhaustive\"\n",
      "t.toml"));
  const std::string tile = "single_tile.b256.u4.single_pass.f32.sum";  // 4096 elements
  test::FnRunner runner([&](const Request& q) {
    Result r = test::model_result(q.kernel_id, q.n, 10, 0, 0.01);
    if (q.kernel_id == tile) r.median_us = r.p10_us = r.p90_us = 1.0;  // the fastest where it runs
    return r;
  });
  std::vector<std::size_t> candidates_seen;
  DriverOptions o;
  o.progress = [&](const ProgressEvent& e) {
    if (e.kind == ProgressEvent::Kind::size_done) candidates_seen.push_back(e.candidates);
  };
  const TuneOutcome out = run_tuning(c, runner, o);
  for (const Request& q : runner.log) {
    if (q.kernel_id == tile) {
      EXPECT_LE(q.n, 4096u) << "measured past its tile";
    }
  }
  ASSERT_EQ(out.keys.size(), 1u);
  const KeyOutcome& k = out.keys[0];
  EXPECT_EQ(k.candidates, 2u);
  ASSERT_EQ(k.sizes.size(), 4u);
  EXPECT_EQ(k.sizes[1].candidates, 2u);
  EXPECT_EQ(k.sizes[2].candidates, 1u);
  EXPECT_EQ(candidates_seen, (std::vector<std::size_t>{2, 2, 1, 1}));
  ASSERT_TRUE(k.sizes[1].winner);
  EXPECT_EQ(k.sizes[1].winner->winner.kernel_id, tile);
  expect_complete(k);
  ASSERT_EQ(k.bisect.intervals.size(), 2u);
  EXPECT_EQ(k.bisect.intervals[0].winner.kernel_id, tile);
  EXPECT_EQ(k.bisect.intervals[0].n_hi, 4096u);
  EXPECT_EQ(k.bisect.intervals[1].n_lo, 4097u);
}

TEST(Driver, ReplayedRunGivesWinnersAndATable) {
  const TuneConfig c = small();
  auto db = db::Database::create_in_memory();
  std::vector<std::string> ids;
  for (const KeySpace& k : enumerate_space(c.space))
    ids.insert(ids.end(), k.candidates.begin(), k.candidates.end());
  // The grid sizes only: the bisection's midpoints come back "not recorded" and each crossover
  // stops at its first midpoint.
  const std::int64_t dev = test::fill_database(db, ids, c.space.sizes);
  ReplayOptions ro;
  ro.device_id = dev;
  ro.policy = c.measure;
  ReplayRunner runner(db, ro);
  const TuneOutcome out = run_tuning(c, runner);
  ASSERT_EQ(out.keys.size(), 2u);
  for (const KeyOutcome& k : out.keys) {
    EXPECT_TRUE(k.complete);
    expect_complete(k);
    db.replace_winners(dev, k.dtype, k.op,
                       to_db_winners(k.bisect.intervals, k.dtype, k.op, k.l2_mode, 13000, 13000,
                                     std::nullopt),
                       k.l2_mode);
    EXPECT_EQ(k.l2_mode, c.measure.l2);
  }
  EXPECT_GT(runner.answered(), 0u);
  std::ostringstream table;
  print_winners(table, out, "test device");
  EXPECT_NE(table.str().find("winners on test device, cold L2:"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("runner-up"), std::string::npos);
  EXPECT_NE(table.str().find(out.keys[0].bisect.intervals[0].winner.kernel_id), std::string::npos);
  EXPECT_NE(table.str().find("1099511627776"), std::string::npos);
}

// ---- several runners of one model (the GPUs of one model in a host) ----

/// The winners of every key: per key, (n_lo, n_hi, kernel) of each interval.
std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string>> intervals_of(
    const TuneOutcome& out) {
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string>> v;
  for (const KeyOutcome& k : out.keys)
    for (const IntervalWinner& w : k.bisect.intervals)
      v.emplace_back(w.n_lo, w.n_hi, w.winner.kernel_id);
  return v;
}

/// \p n runners over the model that take 20 us a request, so that every runner's thread is
/// running before the work is gone.
std::vector<test::FnRunner> model_runners(std::size_t n) {
  std::vector<test::FnRunner> v;
  for (std::size_t i = 0; i < n; ++i)
    v.emplace_back([](const Request& q) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      return test::model_answer(q);
    });
  return v;
}

std::vector<Runner*> pointers(std::vector<test::FnRunner>& runners) {
  std::vector<Runner*> p;
  for (test::FnRunner& r : runners) p.push_back(&r);
  return p;
}

TEST(DriverSplit, SeveralRunnersGiveTheWinnersOfOne) {
  // The model's answers depend only on the request, so the winners cannot depend on who measured.
  const TuneConfig c = small();
  auto one = test::model_runner();
  const TuneOutcome alone = run_tuning(c, one);
  for (std::size_t n : {2u, 3u, 5u}) {
    std::vector<test::FnRunner> runners = model_runners(n);
    const TuneOutcome split = run_tuning(c, pointers(runners));
    EXPECT_FALSE(split.cancelled);
    ASSERT_EQ(split.keys.size(), alone.keys.size());
    for (std::size_t k = 0; k < split.keys.size(); ++k) {
      EXPECT_TRUE(split.keys[k].complete);
      EXPECT_EQ(split.keys[k].dtype, alone.keys[k].dtype);
      EXPECT_EQ(split.keys[k].op, alone.keys[k].op);
      ASSERT_EQ(split.keys[k].sizes.size(), alone.keys[k].sizes.size());
      for (std::size_t i = 0; i < split.keys[k].sizes.size(); ++i)
        EXPECT_EQ(split.keys[k].sizes[i].n, alone.keys[k].sizes[i].n);  // ascending, as alone
      expect_complete(split.keys[k]);
    }
    EXPECT_EQ(intervals_of(split), intervals_of(alone)) << n << " runners";
    std::size_t asked = 0;
    for (const test::FnRunner& r : runners) {
      EXPECT_GT(r.log.size(), 0u) << "a runner was left idle";
      asked += r.log.size();
    }
    EXPECT_EQ(asked, one.log.size());
    EXPECT_EQ(split.requests, one.log.size());
  }
}

TEST(DriverSplit, EachGridSizeAndEachBisectionIsMeasuredOnOneRunner) {
  // So a winner is always chosen among measurements of one GPU.
  const TuneConfig c = small();
  std::vector<test::FnRunner> runners = model_runners(2);
  const TuneOutcome out = run_tuning(c, pointers(runners));
  const std::set<std::uint64_t> grid(c.space.sizes.begin(), c.space.sizes.end());
  std::map<std::tuple<DType, Op, std::uint64_t>, std::set<std::size_t>> who;  // (key, n): runners
  std::map<std::pair<DType, Op>, std::set<std::size_t>> bisected_by;
  for (std::size_t r = 0; r < runners.size(); ++r)
    for (const Request& q : runners[r].log) {
      const kernels::ManifestEntry* m = kernels::manifest_find(q.kernel_id);
      ASSERT_NE(m, nullptr);
      if (grid.count(q.n)) who[{m->params.dtype, m->params.op, q.n}].insert(r);
      else bisected_by[{m->params.dtype, m->params.op}].insert(r);
    }
  EXPECT_EQ(who.size(), 16u);
  std::set<std::size_t> used;
  for (const auto& [key, rs] : who) {
    EXPECT_EQ(rs.size(), 1u) << "a grid size measured on " << rs.size() << " runners";
    used.insert(rs.begin(), rs.end());
  }
  EXPECT_EQ(used.size(), 2u);
  for (const auto& [key, rs] : bisected_by) EXPECT_EQ(rs.size(), 1u);
  EXPECT_EQ(out.keys.size(), 2u);
}

TEST(DriverSplit, ProgressCountsEverySizeAndKeyOnce) {
  const TuneConfig c = small();
  std::vector<test::FnRunner> runners = model_runners(3);
  std::vector<ProgressEvent> events;
  DriverOptions o;
  o.progress = [&](const ProgressEvent& e) { events.push_back(e); };  // never concurrent
  run_tuning(c, pointers(runners), o);
  std::size_t sizes = 0, keys = 0;
  for (const ProgressEvent& e : events) {
    if (e.kind == ProgressEvent::Kind::size_done) {
      EXPECT_EQ(e.sizes_done, ++sizes);
    }
    if (e.kind == ProgressEvent::Kind::key_done) {
      EXPECT_EQ(e.keys_done, ++keys);
    }
  }
  EXPECT_EQ(sizes, 16u);
  EXPECT_EQ(keys, 2u);
  EXPECT_DOUBLE_EQ(events.back().fraction, 1.0);
}

TEST(DriverSplit, StopsEveryRunnerOnCancellation) {
  const TuneConfig c = small();
  std::atomic<bool> cancel{false};
  std::vector<test::FnRunner> runners = model_runners(2);
  runners[1].cancel = &cancel;
  runners[1].cancel_after = 300;
  DriverOptions o;
  o.cancel = &cancel;
  o.chunk = 16;
  const TuneOutcome out = run_tuning(c, pointers(runners), o);
  EXPECT_TRUE(out.cancelled);
  bool incomplete = false;
  for (const KeyOutcome& k : out.keys) {
    if (k.complete) {
      expect_complete(k);
    } else {
      incomplete = true;
      EXPECT_TRUE(k.bisect.intervals.empty());
    }
  }
  EXPECT_TRUE(incomplete);
  // After the flag each runner finishes at most the batch it had (the other runner cannot know
  // the flag went up mid-batch, so it may answer one more batch of its own).
  EXPECT_LT(runners[1].requests_after_cancel, o.chunk);
  auto full = test::model_runner();
  run_tuning(c, full);
  EXPECT_LT(runners[0].log.size() + runners[1].log.size(), full.log.size());
}

TEST(DriverSplit, AFailingRunnerStopsTheOthersAndItsErrorIsRethrown) {
  const TuneConfig c = small();
  std::vector<test::FnRunner> runners = model_runners(2);
  std::size_t answered = 0;
  test::FnRunner failing([&](const Request& q) -> Result {
    if (++answered > 50) throw Error("worker pool exhausted");
    return test::model_result(q.kernel_id, q.n, 10, 0, 0.01);
  });
  std::vector<Runner*> p = {&runners[0], &failing};
  try {
    run_tuning(c, p);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "worker pool exhausted");
  }
  auto full = test::model_runner();
  run_tuning(c, full);
  EXPECT_LT(runners[0].log.size(), full.log.size());  // the healthy runner stopped too
}

TEST(DriverSplit, NoRunnerIsAnError) {
  EXPECT_THROW(run_tuning(small(), std::span<Runner* const>()), Error);
}

TEST(Output, ProgressPlainLinesAndBar) {
  const TuneConfig c = small();
  auto runner = test::model_runner();
  std::ostringstream plain, bar;
  ProgressPrinter p(plain, false), b(bar, true);
  DriverOptions o;
  o.progress = [&](const ProgressEvent& e) {
    p(e);
    b(e);
  };
  run_tuning(c, runner, o);
  b.finish();
  std::size_t lines = 0;
  for (char ch : plain.str()) lines += ch == '\n';
  EXPECT_EQ(lines, 16u + 2u);  // a line per size and per key
  EXPECT_NE(plain.str().find("tune: f32 sum n=2^10: "), std::string::npos) << plain.str();
  EXPECT_NE(plain.str().find("tune: i64 sum done: "), std::string::npos) << plain.str();
  EXPECT_NE(bar.str().find("\r["), std::string::npos);
  EXPECT_NE(bar.str().find("100%"), std::string::npos);
  EXPECT_EQ(bar.str().back(), '\n');
  EXPECT_EQ(format_size(1024), "2^10");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(1), "1");
}

}  // namespace
}  // namespace tunedreduce::tuner
