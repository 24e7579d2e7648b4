// kill -9 of `tunedreduce tune` in the middle of a run, then a rerun: the rerun marks the killed
// run interrupted, finishes, and no candidate finished before the kill is measured again.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "db/database.hpp"
#include "kernels/device.hpp"
#include "tests/db/test_util.hpp"
#include "tests/gpu/gpu_main.hpp"

namespace tunedreduce {
namespace {

std::string tool() {
  const char* bin = std::getenv("TUNEDREDUCE_BIN");  // the device machine runs unpacked copies
  return bin && *bin ? bin : TR_CLI;
}

std::size_t count_rows(const std::filesystem::path& db_path) {
  try {
    return db::Database::open_reader(db_path).measurements().size();
  } catch (const std::exception&) {
    return 0;  // not created yet
  }
}

TEST(Resume, KillNineThenRerunMeasuresNothingTwice) {
  db::test::TempDir dir;
  const auto config = dir / "small.toml";
  std::ofstream(config) << R"(
[space]
families = ["warp_shuffle", "vectorized", "smem"]
dtypes = ["i32"]
ops = ["sum"]
sizes = [1048576, 4194304, 16777216]
[measure]
min_repeats = 5
max_repeats = 20
[strategy]
name = "exhaustive"
[bisect]
enabled = false
)";
  const auto db_path = dir / "resume.db";
  const std::vector<std::string> argv = {tool(), "tune",           "--config",   config.string(),
                                         "--db", db_path.string(), "--progress", "off"};
  std::size_t before_kill = 0;
  {
    db::test::Child tuner(argv);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while ((before_kill = count_rows(db_path)) < 40) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the tuner recorded too little";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    tuner.kill(SIGKILL);
    EXPECT_EQ(tuner.wait(), 128 + SIGKILL);
  }
  const std::size_t after_kill = count_rows(db_path);
  ASSERT_GE(after_kill, before_kill);

  auto rerun = db::test::run_process(argv);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;

  auto database = db::Database::open_reader(db_path);
  auto runs = database.runs();
  ASSERT_EQ(runs.size(), 2u);
  // The rerun found the killed run's lease released and marked it interrupted.
  EXPECT_EQ(runs[0].status, db::RunStatus::interrupted);
  EXPECT_NE(rerun.err.find("run " + std::to_string(runs[0].id) +
                           " was left running by a tuner that is gone; marked interrupted"),
            std::string::npos)
      << rerun.err;
  EXPECT_EQ(runs[1].status, db::RunStatus::finished);
  std::map<std::pair<std::string, std::uint64_t>, int> measured;  // final rows per candidate key
  std::size_t second_run_rows = 0;
  for (const auto& m : database.measurements()) {
    if (db::is_final(m.outcome)) ++measured[{m.kernel_id, m.n}];
    if (m.run_id == runs[1].id) ++second_run_rows;
  }
  for (const auto& [key, count] : measured)
    EXPECT_EQ(count, 1) << key.first << " n=" << key.second << " was measured " << count
                        << " times";
  // 3 families at 3 sizes: (50 smem ... ) -- the total is whatever the space holds; every candidate
  // of it is measured exactly once over the two runs.
  EXPECT_EQ(measured.size(), after_kill + second_run_rows);
  EXPECT_GT(second_run_rows, 0u);
  EXPECT_EQ(database.winners().size() > 0, true);
  std::printf("rows before kill %zu, after kill %zu, measured by the rerun %zu, candidates %zu\n",
              before_kill, after_kill, second_run_rows, measured.size());
}

}  // namespace
}  // namespace tunedreduce

int main(int argc, char** argv) { return tunedreduce::test::gpu_test_main(argc, argv); }
