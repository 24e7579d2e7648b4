// Where `tunedreduce bench` records, and the recording, without a GPU (cli/bench_record.hpp):
// the bench opens the database before timing anything, so every way it can fail is tested here
// with synthetic rows.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cli/bench_record.hpp"
#include "common/exit_codes.hpp"
#include "db/bench.hpp"
#include "db/db_error.hpp"
#include "db/schema.hpp"
#include "tests/db/test_util.hpp"
#include "tests/support/env_guard.hpp"

namespace tunedreduce::cli {
namespace {

namespace fs = std::filesystem;
using db::test::TempDir;

// Points every location the database may come from into \p dir (nothing there yet).
class Locations {
 public:
  explicit Locations(const TempDir& dir) {
    unsetenv("TUNEDREDUCE_DB");
    setenv("HOME", (dir / "home").c_str(), 1);
    setenv("XDG_DATA_HOME", (dir / "data").c_str(), 1);
    setenv("XDG_DATA_DIRS", (dir / "system").c_str(), 1);
  }

 private:
  test::EnvGuard db_{"TUNEDREDUCE_DB"}, home_{"HOME"}, data_{"XDG_DATA_HOME"},
      dirs_{"XDG_DATA_DIRS"};
};

db::BenchRunInfo info() {
  db::BenchRunInfo i;
  i.tool_version = "0.3.0";
  i.manifest_hash = "0123456789abcdef";
  i.repeats = 10;
  i.warmups = 2;
  i.seed = 42;
  return i;
}

db::BenchResult row(db::BenchMethod m, double median) {
  db::BenchResult r;
  r.n = 1 << 20;
  r.method = m;
  r.verified = true;
  r.median_us = r.p10_us = r.p90_us = median;
  r.repeats = 10;
  return r;
}

TEST(BenchRecord, NoRecordAndHostCallsRecordNothing) {
  TempDir dir;
  Locations loc(dir);
  std::string note;
  EXPECT_FALSE(BenchRecorder::open((dir / "x.db").string(), true, false, note));
  EXPECT_EQ(note, "not recorded (--no-record)");
  EXPECT_FALSE(BenchRecorder::open((dir / "x.db").string(), false, true, note));
  EXPECT_NE(note.find("--host-calls"), std::string::npos) << note;
  EXPECT_FALSE(fs::exists(dir / "x.db"));
}

TEST(BenchRecord, TheSystemWideDatabaseIsNeverWritten) {
  TempDir dir;
  Locations loc(dir);
  fs::create_directories(dir / "system" / "tunedreduce");
  { db::Database::open_writer(dir / "system" / "tunedreduce" / "tune.db"); }
  const std::string before = db::test::read_file(dir / "system" / "tunedreduce" / "tune.db");
  std::string note;
  EXPECT_FALSE(BenchRecorder::open(std::nullopt, false, false, note));
  EXPECT_NE(note.find("system-wide"), std::string::npos) << note;
  EXPECT_NE(note.find("--db"), std::string::npos) << note;
  EXPECT_EQ(db::test::read_file(dir / "system" / "tunedreduce" / "tune.db"), before);
}

TEST(BenchRecord, TheDefaultLocationIsCreatedWithItsFolder) {
  TempDir dir;
  Locations loc(dir);
  std::string note;
  auto rec = BenchRecorder::open(std::nullopt, false, false, note);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->path(), dir / "data" / "tunedreduce" / "tune.db");
  EXPECT_TRUE(fs::exists(rec->path()));
}

TEST(BenchRecord, ADatabaseThatCannotBeWrittenIsAnErrorNamingNoRecord) {
  TempDir dir;
  Locations loc(dir);
  auto refused = [&](const fs::path& path, int code, const std::string& words) {
    std::string note;
    try {
      BenchRecorder::open(path.string(), false, false, note);
      ADD_FAILURE() << "opened " << path;
    } catch (const db::DbError& e) {
      EXPECT_EQ(e.exit_code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--no-record"), std::string::npos) << e.what();
    }
  };
  const auto newer = db::test::copy_fixture("newer_incompatible.db", dir);
  const std::string before = db::test::read_file(newer);
  refused(newer, exit_code::db_too_new, "newer than this binary");
  EXPECT_EQ(db::test::read_file(newer), before);
  refused(db::test::copy_fixture("not_sqlite.db", dir), exit_code::db_unusable, "not an SQLite");
  // --db is taken as given: its folder is not made up.
  refused(dir / "no" / "such" / "folder" / "tune.db", exit_code::db_unusable, "does not exist");
}

TEST(BenchRecord, ARunIsRecordedIntoAnOlderFileMigratedFirst) {
  TempDir dir;
  Locations loc(dir);
  const auto path = db::test::copy_fixture("schema_v3.db", dir);
  std::string note;
  {
    auto rec = BenchRecorder::open(path.string(), false, false, note);
    ASSERT_TRUE(rec);
    EXPECT_TRUE(note.empty());
    rec->begin(db::test::h100(), info());
    rec->add(row(db::BenchMethod::cached, 7.0));
    rec->add(row(db::BenchMethod::cub, 7.7));
    EXPECT_THROW(rec->add(row(db::BenchMethod::cub, 7.7)), db::DbError);  // twice: refused
    rec->finish(db::RunStatus::finished);
    EXPECT_EQ(rec->results(), 2);
  }
  db::Database r = db::Database::open_reader(path);
  EXPECT_EQ(r.file_schema_version(), db::schema_version);
  EXPECT_EQ(r.counts().measurements, 40);  // the tuning rows are still there
  const auto runs = db::bench_runs(r);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, db::RunStatus::finished);
  EXPECT_EQ(db::bench_results(r).size(), 2u);
}

TEST(BenchRecord, ABenchThatThrowsLeavesAFailedRunWithTheRowsItMeasured) {
  TempDir dir;
  Locations loc(dir);
  std::string note;
  try {
    auto rec = BenchRecorder::open((dir / "tune.db").string(), false, false, note);
    rec->begin(db::test::h200(), info());
    rec->add(row(db::BenchMethod::two_phase, 3.0));
    throw std::runtime_error("benchmark aborted: cudaErrorIllegalAddress");
  } catch (const std::runtime_error&) {
  }
  db::Database r = db::Database::open_reader(dir / "tune.db");
  const auto runs = db::bench_runs(r);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, db::RunStatus::failed);
  EXPECT_TRUE(runs[0].ended_at);
  EXPECT_EQ(db::bench_results(r).size(), 1u);
}

#ifdef TR_CLI  // not in a host-only build (TUNEDREDUCE_HOST_ONLY), which has no CLI
// The command itself: without a GPU it stops (exit 6) before it creates or opens a database;
// with one (the GPU machine) a small bench is recorded, and --no-record records nothing.
TEST(BenchCli, RecordsIntoItsDatabaseOrStopsBeforeTouchingIt) {
  TempDir dir;
  auto bench = [&](const std::string& db, bool no_record) {
    std::vector<std::string> argv{TR_CLI,    "bench", "--db",      (dir / db).string(),
                                  "--sizes", "2^10",  "--dtypes",  "i32",
                                  "--ops",   "sum",   "--repeats", "3"};
    if (no_record) argv.push_back("--no-record");
    return db::test::run_process(argv, {"TUNEDREDUCE_DB=", "HOME=" + dir.path().string(),
                                        "XDG_DATA_HOME=" + (dir / "data").string()});
  };
  const auto r = bench("tune.db", false);
  if (r.exit_code == exit_code::no_gpu) {
    EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "tune.db"));
  } else {
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("recorded bench run"), std::string::npos) << r.out;
    db::Database d = db::Database::open_reader(dir / "tune.db");
    const auto runs = db::bench_runs(d);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, db::RunStatus::finished);
    EXPECT_EQ(runs[0].info.repeats, 3);
    EXPECT_EQ(db::bench_results(d).size(), 3u);  // cached, two_phase, cub
  }
  const auto n = bench("other.db", true);
  EXPECT_TRUE(n.exit_code == 0 || n.exit_code == exit_code::no_gpu) << n.err;
  EXPECT_FALSE(fs::exists(dir / "other.db"));
}
#endif

}  // namespace
}  // namespace tunedreduce::cli
