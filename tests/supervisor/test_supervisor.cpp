// The supervisor against a fake worker (tests/tuner/fake_worker.cpp): crashes, hangs, sticky
// errors and garbage are recorded and survived; results are committed as they finish; a rerun
// reuses what is final; cancellation stops early. No GPU needed.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "db/database.hpp"
#include "tests/db/test_util.hpp"
#include "common/error.hpp"
#include "tuner/config.hpp"
#include "tuner/driver.hpp"
#include "tuner/gpu_runner.hpp"

namespace tunedreduce::tuner {
namespace {

using db::Outcome;

GpuRunnerOptions options(const std::filesystem::path& db_path) {
  GpuRunnerOptions o;
  o.db_path = db_path;
  o.config_hash = "test";
  o.worker_command = {TR_FAKE_WORKER};
  o.policy.timeout_s = 1.0;
  o.policy.min_repeats = 3;
  return o;
}

constexpr const char* good = "warp_shuffle.b256.u4.single_pass.f32.sum";

std::vector<Request> requests(std::initializer_list<std::uint64_t> ns) {
  std::vector<Request> out;
  for (auto n : ns) {
    Request r;
    r.kernel_id = good;
    r.n = n;
    out.push_back(r);
  }
  return out;
}

TEST(Supervisor, SurvivesCrashesHangsStickyErrorsAndGarbage) {
  db::test::TempDir dir;
  auto runner = make_gpu_runner(options(dir.path() / "t.db"));
  ASSERT_TRUE(runner->recording());
  EXPECT_EQ(runner->attainable_gbps(), 3000.0);
  auto reqs =
      requests({1024, 13, 2048, 17, 4096, 19, 8192, 23, 16384, 29, 32768, 31, 65536, 37, 131072});
  const auto t0 = std::chrono::steady_clock::now();
  auto results = runner->measure(reqs);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(results.size(), reqs.size());
  const Outcome expected[] = {Outcome::ok, Outcome::crashed, Outcome::ok, Outcome::timeout,
                              Outcome::ok, Outcome::crashed, Outcome::ok, Outcome::crashed,
                              Outcome::ok, Outcome::crashed, Outcome::ok, Outcome::crashed,
                              Outcome::ok, Outcome::crashed, Outcome::ok};
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].outcome, expected[i]) << "n=" << reqs[i].n << ": " << results[i].error;
    EXPECT_EQ(results[i].n, reqs[i].n);
    EXPECT_EQ(results[i].dtype, DType::f32);
    ASSERT_TRUE(results[i].measurement_id) << "every result is recorded";
  }
  EXPECT_NE(results[1].error.find("died"), std::string::npos) << results[1].error;
  EXPECT_NE(results[1].error.find("signal 6"), std::string::npos) << results[1].error;
  EXPECT_NE(results[3].error.find("no answer"), std::string::npos) << results[3].error;
  EXPECT_NE(results[5].error.find("cudaErrorIllegalAddress"), std::string::npos)
      << results[5].error;
  EXPECT_NE(results[7].error.find("unreadable"), std::string::npos) << results[7].error;
  EXPECT_NE(results[9].error.find("a line longer than 1048576 bytes"), std::string::npos)
      << results[9].error;
  // Valid JSON that is not a reply: the worker is killed and replaced, the run goes on.
  EXPECT_NE(results[11].error.find("unreadable worker output: protocol message lacks"),
            std::string::npos)
      << results[11].error;
  EXPECT_NE(results[13].error.find("unknown event 'teleport'"), std::string::npos)
      << results[13].error;
  EXPECT_TRUE(results[0].median_us);
  EXPECT_LT(secs, 10.0) << "one hang costs one timeout (1 s), not more";

  auto db = db::Database::open_reader(dir.path() / "t.db");
  auto rows = db.measurements();
  ASSERT_EQ(rows.size(), reqs.size());
  std::map<Outcome, int> by_outcome;
  for (auto& r : rows) ++by_outcome[r.outcome];
  EXPECT_EQ(by_outcome[Outcome::ok], 8);
  EXPECT_EQ(by_outcome[Outcome::crashed], 6);
  EXPECT_EQ(by_outcome[Outcome::timeout], 1);
  ASSERT_EQ(db.runs().size(), 1u);
  ASSERT_EQ(db.runs()[0].attainable.size(), 1u);
  EXPECT_EQ(db.runs()[0].attainable[0].gbps, 3000.0);
}

// ---- several GPUs of one model: one device row, one run, shares of the work ----

GpuRunnerOptions joining(const std::filesystem::path& db_path, int device, const Runner& first) {
  GpuRunnerOptions o = options(db_path);
  o.device = device;
  o.measure_bandwidth = false;
  const auto probed = probe_devices({TR_FAKE_WORKER});
  o.join = GpuRunnerOptions::Join{*first.recording(), probed.front().second.key(),
                                  first.attainable_gbps()};
  return o;
}

TEST(Supervisor, GpusOfOneModelMeasureIntoOneRun) {
  db::test::TempDir dir;
  const auto path = dir.path() / "t.db";
  auto first = make_gpu_runner(options(path));
  auto second = make_gpu_runner(joining(path, 1, *first));
  ASSERT_TRUE(second->recording());
  EXPECT_EQ(second->recording()->run_id, first->recording()->run_id);
  EXPECT_EQ(second->recording()->device_id, first->recording()->device_id);
  EXPECT_EQ(second->attainable_gbps(), 3000.0);
  // Both at once, as the driver's threads call them.
  std::vector<Result> a, b;
  std::thread t([&] { a = first->measure(requests({1024, 2048, 4096, 8192})); });
  b = second->measure(requests({16384, 32768, 65536, 131072}));
  t.join();
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  for (const Result& r : b) EXPECT_TRUE(r.ok() && r.measurement_id) << r.error;
  auto db = db::Database::open_reader(path);
  EXPECT_EQ(db.runs().size(), 1u) << "the second GPU begins no run of its own";
  EXPECT_EQ(db.devices().size(), 1u);
  const auto rows = db.measurements();
  ASSERT_EQ(rows.size(), 8u);
  // Each measurement names the card that made it: the fake worker gives each device its UUID.
  const auto gpus = db.gpus();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].uuid, "GPU-fa4e0000-0000-0000-0000-000000000000");
  EXPECT_EQ(gpus[1].uuid, "GPU-fa4e0000-0000-0000-0000-000000000001");
  std::map<std::uint64_t, std::int64_t> gpu_at;
  for (const auto& m : rows) {
    EXPECT_EQ(m.run_id, first->recording()->run_id);
    EXPECT_EQ(m.device_id, first->recording()->device_id);
    ASSERT_TRUE(m.gpu_id);
    gpu_at[m.n] = *m.gpu_id;
  }
  for (const Result& r : a) EXPECT_EQ(gpu_at.at(r.n), gpus[0].id) << r.n;
  for (const Result& r : b) EXPECT_EQ(gpu_at.at(r.n), gpus[1].id) << r.n;
}

TEST(Supervisor, ARunStoresItsDriverRuntimeAndConfigurationText) {
  db::test::TempDir dir;
  const auto path = dir.path() / "t.db";
  GpuRunnerOptions o = options(path);
  TuneConfig cfg;
  o.config_text = canonical_text(cfg);
  o.config_hash = config_hash(cfg);
  auto runner = make_gpu_runner(o);
  runner->measure(requests({1024}));
  auto db = db::Database::open_reader(path);
  const auto run = db.find_run(runner->recording()->run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->info.driver_version, 13000);  // the fake worker's
  EXPECT_EQ(run->info.runtime_version, 13000);
  EXPECT_EQ(run->info.config_text, o.config_text);
  EXPECT_EQ(run->info.config_hash, o.config_hash);
  // A text that is not the hash's is refused before the run begins.
  o.config_hash = "0000000000000000";
  EXPECT_THROW(make_gpu_runner(o), db::DbError);
}

TEST(Supervisor, AWorkerThatDoesNotKnowItsGpuRecordsMeasurementsWithoutOne) {
  db::test::TempDir dir;
  const auto path = dir.path() / "t.db";
  ::setenv("FAKE_WORKER_NO_UUID", "1", 1);
  auto runner = make_gpu_runner(options(path));
  runner->measure(requests({1024, 2048}));
  ::unsetenv("FAKE_WORKER_NO_UUID");
  auto db = db::Database::open_reader(path);
  EXPECT_TRUE(db.gpus().empty());
  for (const auto& m : db.measurements()) EXPECT_FALSE(m.gpu_id);
}

TEST(Supervisor, AGpuOfAnotherModelCannotJoinARun) {
  db::test::TempDir dir;
  const auto path = dir.path() / "t.db";
  auto first = make_gpu_runner(options(path));
  try {
    make_gpu_runner(joining(path, 100, *first));
    FAIL() << "joined";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("GPU 100 (Other Fake GPU, fingerprint "), std::string::npos) << what;
    EXPECT_NE(what.find("another model"), std::string::npos) << what;
  }
}

TEST(Supervisor, TwoGpusOfOneModelTuneToTheWinnersOfOne) {
  const TuneConfig c = validate_config(parse_config_text(
      "[space]\nfamilies = [\"warp_shuffle\", \"vectorized\"]\nblocks = [128, 256]\nunrolls = [4]\n"
      "finishes = [\"single_pass\"]\ndtypes = [\"f32\", \"i32\"]\nops = [\"sum\"]\n"
      "sizes = [1024, 4096, 16384, 65536]\n[strategy]\nname = \"exhaustive\"\n"
      "[measure]\nmin_repeats = 3\ntimeout_s = 5\n",
      "t.toml"));
  auto winners = [&](std::size_t gpus) {
    db::test::TempDir dir;
    const auto path = dir.path() / "t.db";
    std::vector<std::unique_ptr<Runner>> runners;
    GpuRunnerOptions o = options(path);
    o.policy = c.measure;
    runners.push_back(make_gpu_runner(o));
    for (std::size_t g = 1; g < gpus; ++g) {
      GpuRunnerOptions j = joining(path, static_cast<int>(g), *runners.front());
      j.policy = c.measure;
      runners.push_back(make_gpu_runner(j));
    }
    std::vector<Runner*> p;
    for (auto& r : runners) p.push_back(r.get());
    const TuneOutcome out = run_tuning(c, p);
    std::vector<std::string> w;
    for (const KeyOutcome& k : out.keys) {
      EXPECT_TRUE(k.complete);
      for (const IntervalWinner& iw : k.bisect.intervals)
        w.push_back(std::to_string(iw.n_lo) + ".." + std::to_string(iw.n_hi) + " " +
                    iw.winner.kernel_id + " #" +
                    std::to_string(iw.winner.measurement_id.value_or(0) > 0));
    }
    auto db = db::Database::open_reader(path);
    EXPECT_EQ(db.runs().size(), 1u);
    return w;
  };
  const auto one = winners(1);
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(winners(2), one);
  EXPECT_EQ(winners(3), one);
}

TEST(Supervisor, AResumedHalvingRunMakesItsDecisionsAgainAndMeasuresNothing) {
  // Halving measures a candidate with 3, then 9, 27, 81 repeats; each measurement's median
  // differs (FAKE_WORKER_NOISY). A rerun must give each early-round request the measurement of
  // that round, not the most repeated one, or it ranks differently and measures again.
  const TuneConfig c = validate_config(parse_config_text(
      "[space]\nfamilies = [\"warp_shuffle\", \"vectorized\", \"smem\"]\nblocks = [128, 256, 512]\n"
      "unrolls = [2, 4]\nfinishes = [\"single_pass\"]\ndtypes = [\"f32\"]\nops = [\"sum\"]\n"
      "sizes = [4096, 65536]\n[strategy]\nname = \"halving\"\n[strategy.halving]\nkeep = 0.25\n"
      "first_repeats = 3\ngrowth = 3\nfinal_size = 2\n[measure]\nmin_repeats = 3\ntimeout_s = 5\n",
      "t.toml"));
  db::test::TempDir dir;
  const auto path = dir.path() / "t.db";
  const auto log = dir.path() / "requests.log";
  setenv("FAKE_WORKER_NOISY", "1", 1);
  auto tune = [&] {
    GpuRunnerOptions o = options(path);
    o.policy = c.measure;
    auto runner = make_gpu_runner(o);
    return run_tuning(c, *runner);
  };
  const TuneOutcome first = tune();
  setenv("FAKE_WORKER_LOG", log.c_str(), 1);
  const TuneOutcome again = tune();
  unsetenv("FAKE_WORKER_LOG");
  unsetenv("FAKE_WORKER_NOISY");
  std::ifstream in(log);
  std::size_t asked = 0;
  for (std::string l; std::getline(in, l);) ++asked;
  EXPECT_EQ(asked, 0u) << "the rerun measured again";
  ASSERT_EQ(first.keys.size(), 1u);
  ASSERT_EQ(again.keys.size(), 1u);
  ASSERT_EQ(first.keys[0].bisect.intervals.size(), again.keys[0].bisect.intervals.size());
  for (std::size_t i = 0; i < first.keys[0].bisect.intervals.size(); ++i)
    EXPECT_EQ(first.keys[0].bisect.intervals[i].winner.kernel_id,
              again.keys[0].bisect.intervals[i].winner.kernel_id);
}

TEST(Supervisor, RerunReusesFinalResultsAndRetriesCrashes) {
  db::test::TempDir dir;
  const auto log = dir.path() / "requests.log";
  setenv("FAKE_WORKER_LOG", log.c_str(), 1);
  {
    auto runner = make_gpu_runner(options(dir.path() / "t.db"));
    runner->measure(requests({1024, 2048, 13}));
  }
  std::filesystem::remove(log);
  auto runner = make_gpu_runner(options(dir.path() / "t.db"));
  auto results = runner->measure(requests({1024, 2048, 13, 4096}));
  unsetenv("FAKE_WORKER_LOG");
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].reused);
  EXPECT_TRUE(results[1].reused);
  EXPECT_FALSE(results[2].reused) << "a crash may be the machine's fault: measured again";
  EXPECT_FALSE(results[3].reused);
  std::ifstream in(log);
  std::vector<std::string> measured;
  for (std::string l; std::getline(in, l);) measured.push_back(l);
  ASSERT_EQ(measured.size(), 2u) << "only the crashed and the new candidate reach the worker";
  EXPECT_EQ(measured[0], std::string(good) + " 13");
  EXPECT_EQ(measured[1], std::string(good) + " 4096");

  // More repeats than recorded: measured again. --retune: measured again.
  Request more;
  more.kernel_id = good;
  more.n = 1024;
  more.min_repeats = 50;
  more.max_repeats = 50;
  EXPECT_FALSE(runner->measure(std::span(&more, 1))[0].reused);
  auto o = options(dir.path() / "t.db");
  o.retune = true;
  auto again = make_gpu_runner(o);
  EXPECT_FALSE(again->measure(requests({2048}))[0].reused);
}

TEST(Supervisor, CancellationStopsBeforeTheNextCandidate) {
  db::test::TempDir dir;
  std::atomic<bool> cancel{false};
  auto o = options(dir.path() / "t.db");
  o.cancel = &cancel;
  auto runner = make_gpu_runner(o);
  EXPECT_EQ(runner->measure(requests({1024})).size(), 1u);
  cancel = true;
  EXPECT_EQ(runner->measure(requests({2048, 4096})).size(), 0u);
}

TEST(Supervisor, ProbeListsDevicesWithoutACudaContext) {
  auto devices = probe_devices({TR_FAKE_WORKER});
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].first, 0);
  EXPECT_EQ(devices[0].second.name, "Fake GPU");
}

TEST(Supervisor, AMissingWorkerIsAClearError) {
  db::test::TempDir dir;
  auto o = options(dir.path() / "t.db");
  o.worker_command = {"/nonexistent/worker"};
  try {
    make_gpu_runner(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("worker"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunedreduce::tuner
