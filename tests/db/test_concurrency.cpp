// Several writer processes at once, and a writer killed in the middle of a transaction.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>

#include "db/database.hpp"
#include "db/statement.hpp"
#include "test_util.hpp"

namespace tunedreduce::db {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

TEST(Concurrency, SixWriterProcessesStartedTogetherLoseNothing) {
  constexpr int workers = 6, per_worker = 25;
  TempDir dir;
  const auto path = dir / "tune.db";  // does not exist yet: the creation races too
  const auto start = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count() +
                     500;
  std::vector<std::unique_ptr<test::Child>> children;
  for (int w = 0; w < workers; ++w)
    children.push_back(std::make_unique<test::Child>(
        std::vector<std::string>{test::writer_helper(), "write", path.string(), std::to_string(w),
                                 std::to_string(per_worker), std::to_string(start)}));
  for (auto& c : children) EXPECT_EQ(c->wait(), 0) << "a writer failed (SQLITE_BUSY escaped?)";

  Database db = Database::open_reader(path);
  const Counts n = db.counts();
  EXPECT_EQ(n.devices, 1);
  EXPECT_EQ(n.runs, workers);
  EXPECT_EQ(n.measurements, workers * per_worker);
  for (const RunRecord& r : db.runs()) {
    EXPECT_EQ(r.status, RunStatus::finished) << r.info.host;
    MeasurementFilter f;
    f.run_id = r.id;
    auto ms = db.measurements(f);
    ASSERT_EQ(ms.size(), static_cast<std::size_t>(per_worker)) << r.info.host;
    for (int i = 0; i < per_worker; ++i) EXPECT_EQ(ms[static_cast<std::size_t>(i)].seq, i + 1);
  }
  EXPECT_EQ(db.connection().query_text("PRAGMA quick_check"), "ok");
}

TEST(Concurrency, KillNineInTheMiddleOfATransactionKeepsEveryCommittedRow) {
  TempDir dir;
  const auto path = dir / "tune.db";
  constexpr int committed = 20;
  {
    // 2000 pending rows of 2 KB overflow SQLite's page cache, so uncommitted frames are already
    // in the -wal file when the process dies.
    test::Child writer(
        {test::writer_helper(), "hang", path.string(), std::to_string(committed), "2000"});
    ASSERT_EQ(writer.read_line(), std::optional<std::string>("READY"));
    ASSERT_GT(fs::file_size(path.string() + "-wal"), 1u << 20);
    writer.kill(SIGKILL);
    EXPECT_EQ(writer.wait(), 128 + SIGKILL);
  }
  {
    Database r = Database::open_reader(path);
    EXPECT_EQ(r.counts().measurements, committed);
    EXPECT_EQ(r.connection().query_text("PRAGMA quick_check"), "ok");
    EXPECT_EQ(r.connection().query_int(
                  "SELECT count(*) FROM measurements WHERE kernel_id LIKE 'pending%'"),
              0);
  }
  // The lock died with the process: a new writer goes on at once.
  WriterOptions opt;
  opt.busy_timeout = std::chrono::milliseconds(500);
  Database w = Database::open_writer(path, opt);
  auto runs = w.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::running);  // never ended
  // Its lease died with it: the next tuner on this host marks the run interrupted, ended at its
  // last committed measurement, and removes the stale lease file.
  EXPECT_TRUE(fs::exists(RunLease::file(path, runs[0].uuid)));
  EXPECT_EQ(w.settle_abandoned_runs(), std::vector<std::int64_t>{runs[0].id});
  runs = w.runs();
  EXPECT_EQ(runs[0].status, RunStatus::interrupted);
  ASSERT_TRUE(runs[0].ended_at);
  EXPECT_EQ(*runs[0].ended_at,
            w.connection().query_text("SELECT max(measured_at) FROM measurements"));
  EXPECT_FALSE(fs::exists(RunLease::file(path, runs[0].uuid)));
  EXPECT_TRUE(w.settle_abandoned_runs().empty());
  w.insert_measurement(test::measurement(runs[0].id, w.devices()[0].id,
                                         "smem.b256.u8.dynamic.single_pass.f32.sum", 999, 1.0));
  MeasurementFilter f;
  f.run_id = runs[0].id;
  EXPECT_EQ(w.measurements(f).back().seq, committed + 1);
  EXPECT_EQ(w.connection().query_text("PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace tunedreduce::db
