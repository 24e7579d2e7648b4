// Resume (tuner/resume.hpp) over a database file and a fake GPU runner: what the database has
// final is answered from it, the rest reaches the GPU runner in one call, results in request
// order; --retune, the fixed-repeats rule, too few repeats, cancellation and this run's own
// results. No GPU needed.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/timing.hpp"
#include "db/database.hpp"
#include "kernels/manifest.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tests/db/test_util.hpp"
#include "tuner/resume.hpp"

namespace tunedreduce::tuner {
namespace {

using db::Outcome;

constexpr const char* a = "warp_shuffle.b256.u4.single_pass.f32.sum";
constexpr const char* b = "vectorized.b256.u4.single_pass.f32.sum";

/// A recording runner that measures nothing and writes nothing: each request comes back ok with
/// the repeats its policy asks for (or with the outcome `outcomes` names for its n), numbered
/// from first_id on; the batches it is asked are kept. So whatever resume answers without it
/// comes from the database or from resume's memory of this run.
class FakeGpu final : public Runner {
 public:
  static constexpr std::int64_t first_id = 1000;

  FakeGpu(Recording rec, MeasurePolicy policy) : rec_(rec), policy_(policy) {}

  std::vector<Result> measure(std::span<const Request> requests) override {
    asked.emplace_back(requests.begin(), requests.end());
    std::vector<Result> out;
    for (const Request& q : requests) {
      if (out.size() == answer_at_most) break;  // cancelled
      Result r;
      r.kernel_id = q.kernel_id;
      r.n = q.n;
      r.segment_size = q.segment_size;
      const kernels::ManifestEntry* m = kernels::manifest_find(q.kernel_id);
      const auto seg = kernels::segmented::parse_seg_id(q.kernel_id);
      EXPECT_TRUE(m || seg) << q.kernel_id;
      if (m) {
        r.dtype = m->params.dtype;
        r.op = m->params.op;
      } else if (seg) {
        r.dtype = seg->dtype;
        r.op = seg->op;
      }
      r.run_id = rec_.run_id;
      r.device_id = rec_.device_id;
      r.l2_mode = policy_.l2;
      r.outcome = outcomes.contains(q.n) ? outcomes.at(q.n) : Outcome::ok;
      if (r.outcome == Outcome::ok) {
        r.repeats = policy_for(policy_, q).min_repeats;
        r.median_us = 10.0;
        r.p10_us = 9.9;
        r.p90_us = 10.2;
      } else {
        r.error = "fake";
      }
      r.measurement_id = next_id_++;
      out.push_back(std::move(r));
    }
    return out;
  }
  std::optional<double> attainable_gbps() const override { return 3000.0; }
  std::optional<Recording> recording() const override { return rec_; }

  std::vector<std::vector<Request>> asked;
  std::map<std::uint64_t, Outcome> outcomes;  // by n; ok where not named
  std::size_t answer_at_most = std::numeric_limits<std::size_t>::max();

 private:
  Recording rec_;
  MeasurePolicy policy_;
  std::int64_t next_id_ = first_id;
};

/// A database file with a device and a run, measurements added at will, and resume over a fake
/// GPU runner recording into it.
struct Resumed {
  db::test::TempDir dir;
  std::filesystem::path path = dir / "t.db";
  Recording rec;
  MeasurePolicy policy;    // min_repeats 5, max_repeats 100, cold
  FakeGpu* gpu = nullptr;  // owned by the ResumeRunner resume() made

  Resumed() {
    db::Database database = db::Database::open_writer(path);
    rec.device_id = database.upsert_device(db::test::h100());
    rec.run_id = database.begin_run(db::test::run_info());
  }

  /// Records a measurement of \p kernel_id at \p n of the run's device (or \p device); its id.
  std::int64_t add(const std::string& kernel_id, std::uint64_t n, int repeats,
                   Outcome outcome = Outcome::ok, db::L2Mode l2 = db::L2Mode::cold,
                   std::optional<std::int64_t> device = std::nullopt) {
    db::Database database = db::Database::open_writer(path);
    db::Measurement m = db::test::measurement(rec.run_id, device.value_or(rec.device_id), kernel_id,
                                              n, 10.0 + repeats);
    m.repeats = repeats;
    m.outcome = outcome;
    m.l2_mode = l2;
    if (outcome != Outcome::ok) {
      m.median_us = m.p10_us = m.p90_us = m.gbps = std::nullopt;
      m.error = "recorded";
    }
    return database.insert_measurements(std::span(&m, 1)).at(0);
  }

  /// Records an ok segmented measurement of \p kernel_id at \p n in segments of \p segment_size.
  std::int64_t add_segmented(const std::string& kernel_id, std::uint64_t n,
                             std::uint64_t segment_size, int repeats) {
    db::Database database = db::Database::open_writer(path);
    db::Measurement m =
        db::test::measurement(rec.run_id, rec.device_id, kernel_id, n, 10.0 + repeats);
    const auto p = kernels::segmented::parse_seg_id(kernel_id);
    m.params = kernels::segmented::stored_params(*p);
    m.dtype = p->dtype;
    m.op = p->op;
    m.segment_size = segment_size;
    m.repeats = repeats;
    m.gbps = gbps_of(n * dtype_size(p->dtype), m.median_us);
    return database.insert_measurements(std::span(&m, 1)).at(0);
  }

  std::unique_ptr<ResumeRunner> resume(bool retune = false) {
    auto fake = std::make_unique<FakeGpu>(rec, policy);
    gpu = fake.get();
    ResumeOptions o;
    o.policy = policy;
    o.retune = retune;
    o.db_path = path;
    return std::make_unique<ResumeRunner>(std::move(fake), o);
  }
};

Request req(const char* id, std::uint64_t n, std::optional<int> min_repeats = std::nullopt,
            std::optional<int> max_repeats = std::nullopt) {
  Request q;
  q.kernel_id = id;
  q.n = n;
  q.min_repeats = min_repeats;
  q.max_repeats = max_repeats;
  return q;
}

std::vector<std::uint64_t> ns(const std::vector<Request>& requests) {
  std::vector<std::uint64_t> out;
  for (const Request& q : requests) out.push_back(q.n);
  return out;
}

TEST(Resume, TheKernelsOfTheseTestsAreInTheManifest) {
  EXPECT_TRUE(kernels::manifest_find(a));
  EXPECT_TRUE(kernels::manifest_find(b));
}

TEST(Resume, AnswersWhatTheDatabaseHasAndAsksTheRestInOneCallInRequestOrder) {
  Resumed t;
  const std::int64_t ok = t.add(a, 1024, 20);
  t.add(a, 2048, 20, Outcome::crashed);  // may be the machine's fault: measured again
  const std::int64_t failed = t.add(a, 4096, 0, Outcome::launch_failed);
  t.add(a, 8192, 20, Outcome::ok, db::L2Mode::warm);  // the other L2 mode
  const std::int64_t other = db::Database::open_writer(t.path).upsert_device(db::test::h200());
  t.add(b, 1024, 20, Outcome::ok, db::L2Mode::cold, other);  // another device
  auto resume = t.resume();
  EXPECT_EQ(resume->attainable_gbps(), 3000.0);
  ASSERT_TRUE(resume->recording());
  EXPECT_EQ(resume->recording()->run_id, t.rec.run_id);

  const std::vector<Request> asked = {req(a, 1024), req(a, 2048), req(a, 4096), req(a, 8192),
                                      req(b, 1024)};
  const std::vector<Result> results = resume->measure(asked);
  ASSERT_EQ(t.gpu->asked.size(), 1u) << "one call for all that the database lacks";
  EXPECT_EQ(ns(t.gpu->asked[0]), (std::vector<std::uint64_t>{2048, 8192, 1024}));
  EXPECT_EQ(t.gpu->asked[0].back().kernel_id, b);
  ASSERT_EQ(results.size(), asked.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].kernel_id, asked[i].kernel_id) << i;
    EXPECT_EQ(results[i].n, asked[i].n) << i;
    EXPECT_TRUE(results[i].measurement_id) << i;
  }
  EXPECT_TRUE(results[0].reused);
  EXPECT_EQ(results[0].measurement_id, ok);
  EXPECT_EQ(results[0].repeats, 20);
  EXPECT_EQ(results[0].median_us, 30.0);
  EXPECT_TRUE(results[2].reused);
  EXPECT_EQ(results[2].measurement_id, failed);
  EXPECT_EQ(results[2].outcome, Outcome::launch_failed);
  for (std::size_t i : {std::size_t{1}, std::size_t{3}, std::size_t{4}}) {
    EXPECT_FALSE(results[i].reused) << i;
    EXPECT_GE(*results[i].measurement_id, FakeGpu::first_id) << i;
  }
}

// A segmented request is answered by a final measurement of its segment size only: the same
// kernel at the same total in segments of another size is another shape.
TEST(Resume, ASegmentedRequestIsAnsweredByItsSegmentSizeOnly) {
  const char* s = "seg.block.b256.v2.fixed.f64.max";
  Resumed t;
  const std::int64_t at64 = t.add_segmented(s, 1 << 16, 64, 20);
  auto resume = t.resume();
  std::vector<Request> asked = {req(s, 1 << 16), req(s, 1 << 16), req(s, 1 << 16, 3, 3)};
  asked[0].segment_size = 64;
  asked[1].segment_size = 1024;
  asked[2].segment_size = 64;  // halving's first round: 3 repeats, none recorded with them
  const std::vector<Result> results = resume->measure(asked);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].reused);
  EXPECT_EQ(results[0].measurement_id, at64);
  EXPECT_EQ(results[0].segment_size, 64u);
  EXPECT_EQ(results[0].dtype, DType::f64);
  // The other segment size reaches the GPU; a fixed-repeats request takes the one with more
  // repeats as any other request would (the rule of the whole-array keys).
  ASSERT_EQ(t.gpu->asked.size(), 1u);
  ASSERT_EQ(t.gpu->asked[0].size(), 1u);
  EXPECT_EQ(t.gpu->asked[0][0].segment_size, 1024u);
  EXPECT_FALSE(results[1].reused);
  EXPECT_EQ(results[1].segment_size, 1024u);
  EXPECT_TRUE(results[2].reused);
  EXPECT_EQ(results[2].measurement_id, at64);
  // What the GPU measured (final) answers its repeat in this run.
  std::vector<Request> again = {asked[1]};
  const std::vector<Result> repeat = resume->measure(again);
  EXPECT_EQ(t.gpu->asked.size(), 1u);
  ASSERT_EQ(repeat.size(), 1u);
  EXPECT_EQ(repeat[0].measurement_id, results[1].measurement_id);
}

TEST(Resume, RetuneAsksForEverything) {
  Resumed t;
  t.add(a, 1024, 20);
  t.add(a, 4096, 0, Outcome::launch_failed);
  auto resume = t.resume(/*retune=*/true);
  const std::vector<Result> results = resume->measure(std::vector{req(a, 1024), req(a, 4096)});
  ASSERT_EQ(t.gpu->asked.size(), 1u);
  EXPECT_EQ(ns(t.gpu->asked[0]), (std::vector<std::uint64_t>{1024, 4096}));
  ASSERT_EQ(results.size(), 2u);
  for (const Result& r : results) EXPECT_FALSE(r.reused);
  // Nor does what it measured answer a repeat.
  resume->measure(std::vector{req(a, 1024)});
  EXPECT_EQ(t.gpu->asked.size(), 2u);
}

TEST(Resume, AFixedRepeatsRequestGetsTheMeasurementWithThoseRepeatsElseTheMostRepeated) {
  // Halving asked for 3 repeats, then 9, then 81; a later run asked for 9 again.
  Resumed t;
  const std::int64_t three = t.add(a, 1024, 3);
  t.add(a, 1024, 9);
  t.add(a, 1024, 81);
  const std::int64_t nine = t.add(a, 1024, 9);
  const std::int64_t latest_most = t.add(a, 1024, 81);
  t.add(a, 1024, 27, Outcome::crashed);  // not final
  auto resume = t.resume();
  const std::vector<Result> results =
      resume->measure(std::vector{req(a, 1024, 3, 3), req(a, 1024, 9, 9), req(a, 1024, 27, 27),
                                  req(a, 1024), req(a, 1024, 9)});
  EXPECT_TRUE(t.gpu->asked.empty());
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0].measurement_id, three);
  EXPECT_EQ(results[1].measurement_id, nine) << "exactly 9 repeats, the latest of those";
  EXPECT_EQ(results[2].measurement_id, latest_most) << "none with 27: the most repeated, latest";
  EXPECT_EQ(results[3].measurement_id, latest_most) << "not fixed: the most repeated";
  EXPECT_EQ(results[4].measurement_id, latest_most) << "at least 9, up to 100: not fixed";
  for (const Result& r : results) EXPECT_TRUE(r.reused);
}

TEST(Resume, AnOkMeasurementWithFewerRepeatsThanAskedIsMeasuredAgain) {
  Resumed t;
  const std::int64_t twenty = t.add(a, 1024, 20);
  const std::int64_t failed = t.add(a, 4096, 0, Outcome::launch_failed);
  auto resume = t.resume();
  const std::vector<Result> results =
      resume->measure(std::vector{req(a, 1024, 50, 50), req(a, 1024, 20), req(a, 4096, 50, 50)});
  ASSERT_EQ(t.gpu->asked.size(), 1u);
  ASSERT_EQ(t.gpu->asked[0].size(), 1u);
  EXPECT_EQ(t.gpu->asked[0][0].min_repeats, 50);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_FALSE(results[0].reused);
  EXPECT_EQ(results[0].repeats, 50);
  EXPECT_EQ(results[1].measurement_id, twenty);
  EXPECT_EQ(results[2].measurement_id, failed) << "a kernel that cannot launch needs no repeats";
}

TEST(Resume, ACancelledCallGivesTheResultsInOrderUpToTheFirstRequestWithoutOne) {
  Resumed t;
  const std::int64_t at2048 = t.add(a, 2048, 20);
  t.add(a, 8192, 20);
  auto resume = t.resume();
  t.gpu->answer_at_most = 1;  // measures 1024, then is cancelled before 4096
  std::vector<Result> results =
      resume->measure(std::vector{req(a, 1024), req(a, 2048), req(a, 4096), req(a, 8192)});
  ASSERT_EQ(t.gpu->asked.size(), 1u);
  EXPECT_EQ(ns(t.gpu->asked[0]), (std::vector<std::uint64_t>{1024, 4096}));
  ASSERT_EQ(results.size(), 2u) << "8192 is in the database, but 4096 before it has no result";
  EXPECT_EQ(results[0].n, 1024u);
  EXPECT_FALSE(results[0].reused);
  EXPECT_EQ(results[1].measurement_id, at2048);

  t.gpu->answer_at_most = 0;
  results = resume->measure(std::vector{req(a, 2048), req(a, 4096), req(a, 8192)});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].measurement_id, at2048);
}

TEST(Resume, AFinalResultMeasuredInThisRunAnswersARepeatOfItsRequest) {
  Resumed t;
  auto resume = t.resume();
  t.gpu->outcomes[13] = Outcome::crashed;
  const std::vector<Result> first = resume->measure(std::vector{req(a, 1024), req(a, 13)});
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(t.gpu->asked.size(), 1u);
  // The fake GPU wrote nothing to the database: the answer is resume's memory of this run.
  const std::vector<Result> again = resume->measure(std::vector{req(a, 1024), req(a, 13)});
  ASSERT_EQ(t.gpu->asked.size(), 2u);
  EXPECT_EQ(ns(t.gpu->asked[1]), (std::vector<std::uint64_t>{13})) << "a crash is asked again";
  ASSERT_EQ(again.size(), 2u);
  EXPECT_TRUE(again[0].reused);
  EXPECT_EQ(again[0].measurement_id, first[0].measurement_id);
  EXPECT_EQ(again[0].repeats, first[0].repeats);
  EXPECT_FALSE(again[1].reused);
  // More repeats than it was measured with: measured again.
  resume->measure(std::vector{req(a, 1024, 50, 50)});
  EXPECT_EQ(t.gpu->asked.size(), 3u);
}

TEST(Resume, NeedsARunnerThatRecords) {
  class Unrecorded final : public Runner {
   public:
    std::vector<Result> measure(std::span<const Request>) override { return {}; }
  };
  Resumed t;
  ResumeOptions o;
  o.db_path = t.path;
  try {
    ResumeRunner r(std::make_unique<Unrecorded>(), o);
    FAIL() << "a runner that records nothing was wrapped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("records nothing"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunedreduce::tuner
