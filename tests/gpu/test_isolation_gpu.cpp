// The tuner's isolation on a real GPU: a kernel that traps and one that never returns (both only
// in the test build) are recorded as `crashed` and `timeout`, the worker is replaced, and the
// candidates around them are measured and verified as usual.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "db/database.hpp"
#include "kernels/device.hpp"
#include "tests/db/test_util.hpp"
#include "tuner/gpu_runner.hpp"
#include "tests/gpu/gpu_main.hpp"

namespace tunedreduce::tuner {
namespace {

using db::Outcome;

TEST(Isolation, TrapAndHangAreRecordedAndSurvived) {
  db::test::TempDir dir;
  GpuRunnerOptions o;
  o.db_path = dir.path() / "iso.db";
  o.config_hash = "isolation-test";
  // The device machine runs unpacked copies: $TR_TEST_WORKER points at the test worker there.
  const char* worker = std::getenv("TR_TEST_WORKER");
  o.worker_command = {worker && *worker ? worker : TR_TEST_WORKER};
  o.policy.timeout_s = 5;
  o.policy.min_repeats = 5;
  o.measure_bandwidth = true;
  auto runner = make_gpu_runner(o);
  ASSERT_TRUE(runner->attainable_gbps());
  EXPECT_GT(*runner->attainable_gbps(), 100.0);
  const std::string good = "vectorized.b256.u4.single_pass.i32.sum";
  std::vector<Request> reqs = {{good, 1 << 20, {}, {}, {}, {}},
                               {"test.trap.i32.sum", 1000, {}, {}, {}, {}},
                               {good, 1 << 22, {}, {}, {}, {}},
                               {"test.hang.i32.sum", 1000, {}, {}, {}, {}},
                               {good, 1 << 24, {}, {}, {}, {}},
                               {"interleaved.b256.two_pass.f64.max", 999983, {}, {}, {}, {}}};
  const auto t0 = std::chrono::steady_clock::now();
  auto results = runner->measure(reqs);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(results.size(), reqs.size());
  const Outcome expected[] = {Outcome::ok,      Outcome::crashed, Outcome::ok,
                              Outcome::timeout, Outcome::ok,      Outcome::ok};
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].outcome, expected[i]) << reqs[i].kernel_id << ": " << results[i].error;
    std::printf("  %-42s n=%-9llu %-8s %s\n", reqs[i].kernel_id.c_str(),
                static_cast<unsigned long long>(reqs[i].n), db::outcome_name(results[i].outcome),
                results[i].ok() ? (std::to_string(*results[i].median_us) + " us").c_str()
                                : results[i].error.c_str());
  }
  for (std::size_t i : {0u, 2u, 4u, 5u}) {
    ASSERT_TRUE(results[i].median_us);
    EXPECT_GT(*results[i].median_us, 0);
    EXPECT_LE(*results[i].p10_us, *results[i].median_us);
    EXPECT_LE(*results[i].median_us, *results[i].p90_us);
    EXPECT_GE(results[i].repeats, 5);
    EXPECT_TRUE(results[i].gbps);
  }
  EXPECT_LT(secs, 60) << "a hang costs one timeout";
  auto db = db::Database::open_reader(o.db_path);
  EXPECT_EQ(db.measurements().size(), reqs.size());
}

}  // namespace
}  // namespace tunedreduce::tuner

int main(int argc, char** argv) { return tunedreduce::test::gpu_test_main(argc, argv); }
