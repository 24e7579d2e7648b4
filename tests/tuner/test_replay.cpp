// The replay runner: matching, the choice among several recordings, missing measurements, device
// choice.

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "kernels/segmented/segmented.hpp"
#include "synthetic.hpp"
#include "tuner/replay_runner.hpp"

namespace tunedreduce::tuner {
namespace {

const std::string K = "warp_shuffle.b256.u4.single_pass.f32.sum";

db::Measurement rec(std::int64_t run, std::int64_t dev, const std::string& id, std::uint64_t n,
                    int repeats, double median, db::Outcome outcome = db::Outcome::ok,
                    db::L2Mode l2 = db::L2Mode::cold) {
  db::Measurement m;
  m.run_id = run;
  m.device_id = dev;
  m.kernel_id = id;
  m.params.family = id.substr(0, id.find('.'));
  m.dtype = DType::f32;
  m.n = n;
  m.l2_mode = l2;
  m.outcome = outcome;
  if (outcome == db::Outcome::ok) {
    m.median_us = median;
    m.p10_us = median * 0.99;
    m.p90_us = median * 1.01;
  } else {
    m.error = "it went wrong";
  }
  m.repeats = repeats;
  return m;
}

struct Fixture {
  db::Database db = db::Database::create_in_memory();
  std::int64_t dev = 0, run = 0;
  Fixture() {
    dev = db.upsert_device(test::h100());
    db::RunInfo info;
    info.tool_version = "t";
    run = db.begin_run(info);
  }
  ReplayRunner runner(int min_repeats = 10, db::L2Mode l2 = db::L2Mode::cold, bool strict = false) {
    ReplayOptions o;
    o.device_id = dev;
    o.policy.min_repeats = min_repeats;
    o.policy.l2 = l2;
    o.strict = strict;
    return ReplayRunner(db, o);
  }
};

Request req(const std::string& id, std::uint64_t n, std::optional<int> repeats = std::nullopt) {
  Request q;
  q.kernel_id = id;
  q.n = n;
  q.min_repeats = q.max_repeats = repeats;
  return q;
}

TEST(Replay, AnswersFromTheRecordedMeasurement) {
  Fixture f;
  const auto id = f.db.insert_measurement(rec(f.run, f.dev, K, 4096, 20, 7.5));
  auto r = f.runner();
  const Request q[] = {req(K, 4096)};
  const auto got = r.measure(q);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].ok());
  EXPECT_EQ(got[0].kernel_id, K);
  EXPECT_EQ(got[0].n, 4096u);
  EXPECT_EQ(got[0].dtype, DType::f32);
  EXPECT_EQ(*got[0].median_us, 7.5);
  EXPECT_EQ(got[0].measurement_id, id);
  EXPECT_TRUE(got[0].reused);
  EXPECT_EQ(r.answered(), 1u);
  EXPECT_EQ(r.missing(), 0u);
}

TEST(Replay, MissingIsAClearFailureNotACrash) {
  Fixture f;
  f.db.insert_measurement(rec(f.run, f.dev, K, 4096, 20, 7.5));
  auto r = f.runner();
  const Request q[] = {req(K, 8192), req("smem.b64.u1.static.two_pass.f32.sum", 4096)};
  const auto got = r.measure(q);
  ASSERT_EQ(got.size(), 2u);
  for (const Result& x : got) {
    EXPECT_FALSE(x.ok());
    EXPECT_EQ(x.outcome, Outcome::launch_failed);
    EXPECT_NE(x.error.find("not recorded in the replay database"), std::string::npos) << x.error;
  }
  EXPECT_NE(got[0].error.find("'" + K + "' at n=8192 with L2 cold"), std::string::npos);
  EXPECT_EQ(r.missing(), 2u);
  auto strict = f.runner(10, db::L2Mode::cold, true);
  EXPECT_THROW(strict.measure(q), Error);
}

// A segmented request matches the measurements of its segment size alone; a whole-array request
// of the same id and n (there is none in practice: the ids differ) none of them.
TEST(Replay, ASegmentedRequestMatchesItsSegmentSize) {
  Fixture f;
  const std::string S = "seg.group.b256.g8.v4.fixed.f32.sum";
  auto seg = [&](std::uint64_t segment_size, double median) {
    db::Measurement m = rec(f.run, f.dev, S, 4096, 20, median);
    m.segment_size = segment_size;
    m.params = kernels::segmented::stored_params(*kernels::segmented::parse_seg_id(S));
    return f.db.insert_measurement(m);
  };
  const auto at16 = seg(16, 3.0);
  const auto at64 = seg(64, 4.0);
  auto r = f.runner();
  Request q16 = req(S, 4096), q64 = req(S, 4096), q256 = req(S, 4096), whole = req(S, 4096);
  q16.segment_size = 16;
  q64.segment_size = 64;
  q256.segment_size = 256;
  const Request q[] = {q64, q16, q256, whole};
  const auto got = r.measure(q);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].measurement_id, at64);
  EXPECT_EQ(*got[0].median_us, 4.0);
  EXPECT_EQ(got[0].segment_size, 64u);
  EXPECT_EQ(got[1].measurement_id, at16);
  EXPECT_EQ(got[1].dtype, DType::f32);
  EXPECT_EQ(got[1].op, Op::sum);
  EXPECT_FALSE(got[2].ok());
  EXPECT_EQ(got[2].segment_size, 256u);
  EXPECT_NE(got[2].error.find("'" + S + "' at n=4096 segment_size=256 with L2 cold"),
            std::string::npos)
      << got[2].error;
  EXPECT_FALSE(got[3].ok());
  EXPECT_FALSE(got[3].segment_size);
  EXPECT_EQ(r.answered(), 2u);
  EXPECT_EQ(r.missing(), 2u);
}

TEST(Replay, MatchesTheL2ModeAndTheDevice) {
  Fixture f;
  f.db.insert_measurement(rec(f.run, f.dev, K, 4096, 20, 7.5, db::Outcome::ok, db::L2Mode::warm));
  auto other = test::h100();
  other.name = "NVIDIA H200";
  other.total_mem_bytes *= 2;
  const auto dev2 = f.db.upsert_device(other);
  f.db.insert_measurement(rec(f.run, dev2, K, 4096, 20, 5.0));
  auto cold = f.runner();
  const Request q[] = {req(K, 4096)};
  EXPECT_FALSE(cold.measure(q)[0].ok());
  auto warm = f.runner(10, db::L2Mode::warm);
  EXPECT_EQ(*warm.measure(q)[0].median_us, 7.5);
}

TEST(Replay, ChoosesByRepeatsAskedFor) {
  Fixture f;
  const auto cheap = f.db.insert_measurement(rec(f.run, f.dev, K, 4096, 3, 8.0));
  const auto full = f.db.insert_measurement(rec(f.run, f.dev, K, 4096, 20, 7.5));
  const auto longer = f.db.insert_measurement(rec(f.run, f.dev, K, 4096, 50, 7.4));
  auto r = f.runner(10);
  const Request q[] = {req(K, 4096, 3), req(K, 4096), req(K, 4096, 30), req(K, 4096, 99)};
  const auto got = r.measure(q);
  EXPECT_EQ(got[0].measurement_id, cheap);   // fewest repeats >= 3
  EXPECT_EQ(got[1].measurement_id, full);    // the policy's 10
  EXPECT_EQ(got[2].measurement_id, longer);  // >= 30
  EXPECT_EQ(got[3].measurement_id, longer);  // none has 99: the most repeats
}

TEST(Replay, AnIncorrectRecordingWins) {
  Fixture f;
  f.db.insert_measurement(rec(f.run, f.dev, K, 4096, 20, 7.5));
  f.db.insert_measurement(rec(f.run, f.dev, K, 4096, 0, 0, db::Outcome::incorrect));
  f.db.insert_measurement(rec(f.run, f.dev, K, 8192, 0, 0, db::Outcome::crashed));
  const auto later_ok = f.db.insert_measurement(rec(f.run, f.dev, K, 8192, 20, 9.0));
  f.db.insert_measurement(rec(f.run, f.dev, K, 16384, 0, 0, db::Outcome::timeout));
  auto r = f.runner();
  const Request q[] = {req(K, 4096), req(K, 8192), req(K, 16384)};
  const auto got = r.measure(q);
  EXPECT_EQ(got[0].outcome, Outcome::incorrect);
  EXPECT_EQ(got[1].measurement_id, later_ok);  // ok beats a crash
  EXPECT_EQ(got[2].outcome, Outcome::timeout);
  EXPECT_EQ(got[2].error, "it went wrong");
}

TEST(Replay, AttainableBandwidthOfTheDevice) {
  Fixture f;
  f.db.record_attainable_bandwidth(f.run, f.dev, 3190.5);
  EXPECT_EQ(f.runner().attainable_gbps(), 3190.5);
}

TEST(Replay, ChoosingTheDevice) {
  Fixture f;
  EXPECT_EQ(choose_replay_device(f.db, std::nullopt).id, f.dev);
  auto other = test::h100();
  other.name = "NVIDIA H200";
  other.total_mem_bytes *= 2;
  const auto dev2 = f.db.upsert_device(other);
  try {
    choose_replay_device(f.db, std::nullopt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("has 2 devices; choose one with --replay-device"),
              std::string::npos);
  }
  EXPECT_EQ(choose_replay_device(f.db, "H200").id, dev2);
  EXPECT_EQ(choose_replay_device(f.db, other.key()).id, dev2);
  EXPECT_EQ(choose_replay_device(f.db, std::to_string(f.dev)).id, f.dev);
  EXPECT_THROW(choose_replay_device(f.db, "NVIDIA"), Error);  // both match
  EXPECT_THROW(choose_replay_device(f.db, "A100"), Error);
  auto empty = db::Database::create_in_memory();
  EXPECT_THROW(choose_replay_device(empty, std::nullopt), Error);
}

}  // namespace
}  // namespace tunedreduce::tuner
