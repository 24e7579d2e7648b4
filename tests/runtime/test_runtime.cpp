// The runtime on the fake platform: bad databases give the defaults and exactly one warning;
// argument errors are reported before anything is enqueued (null pointers before any CUDA
// call); the two-phase size query; the workspace cache's stream-ordered growth and clean flag.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "db/dataset.hpp"
#include "runtime/defaults.hpp"
#include "runtime_test_util.hpp"
#include "tests/db/test_util.hpp"
#include "tests/support/env_guard.hpp"

namespace tunedreduce::runtime::test {
namespace {

namespace fs = std::filesystem;
using db::test::TempDir;

/// A copy of the sample database in \p dir (a reader of a WAL file writes its -shm beside it).
fs::path sample_copy(const TempDir& dir) {
  const fs::path p = dir / "tune.db";
  fs::copy_file(sample_db(), p);
  return p;
}

template <class F>
ReduceError expect_error(F&& f, Status status, const std::string& needle) {
  try {
    f();
  } catch (const ReduceError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
    return e;
  }
  ADD_FAILURE() << "no ReduceError (expected one containing '" << needle << "')";
  return ReduceError(Status::success, "");
}

// ---- databases -------------------------------------------------------------------------------

TEST(Database, TheSampleGivesExactLevelsWithoutWarnings) {
  TempDir dir;
  TestRuntime t({sample_device()}, sample_copy(dir).string());
  const Config c = t.rt->lookup(DType::i32, Op::sum, 1 << 20, -1);
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_STREQ(c.kernel_id, "vectorized.b128.u1.packed.i32.sum");
  EXPECT_STREQ(c.family, "vectorized");
  EXPECT_EQ(c.block, 128);
  EXPECT_EQ(c.unroll, 1);
  EXPECT_STREQ(c.smem, "none");
  EXPECT_STREQ(c.finish, "packed");
  EXPECT_EQ(c.n_lo, 524288u);
  EXPECT_EQ(c.n_hi, 2097151u);
  EXPECT_EQ(std::string(c.source), (dir / "tune.db").string());
  EXPECT_STREQ(c.tuned_on, "09b523d0aee380fb");
  EXPECT_GT(c.tuned_median_us, 0);
  EXPECT_FALSE(c.stale);
  EXPECT_EQ(c.device, 0);
  EXPECT_TRUE(t.log.lines("warning").empty()) << t.log.all();
  // The level is in the debug log.
  EXPECT_NE(t.log.all().find("vectorized.b128.u1.packed.i32.sum (exact)"), std::string::npos)
      << t.log.all();
}

TEST(Database, LoadedOncePerDevice) {
  TempDir dir;
  TestRuntime t({sample_device(), other_model_device()}, sample_copy(dir).string());
  for (int i = 0; i < 100; ++i) {
    t.rt->lookup(DType::f32, Op::max, 1000 + i, 0);
    t.rt->lookup(DType::f32, Op::max, 1000 + i, 1);
  }
  EXPECT_EQ(t.fake->describe_calls.load(), 2);
  EXPECT_EQ(t.rt->lookup(DType::f32, Op::max, 1000, 0).level, Level::exact);
  EXPECT_EQ(t.rt->lookup(DType::f32, Op::max, 1000, 1).level, Level::builtin_default);
}

TEST(Database, AStaleWinnerIsUsedAndMarked) {
  TempDir dir;
  DeviceFingerprint newer_driver = sample_device();
  newer_driver.driver_version = 13010;  // soft attribute: same key
  TestRuntime t({newer_driver}, sample_copy(dir).string());
  const Config c = t.rt->lookup(DType::i32, Op::sum, 1 << 20, 0);
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_TRUE(c.stale);
}

struct BadCase {
  const char* name;
  std::function<fs::path(const TempDir&)> make;
  const char* message;  // part of the one warning
};

void expect_defaults_and_one_warning(TestRuntime& t, const std::string& needle) {
  for (int round = 0; round < 3; ++round)
    for (DType d : all_dtypes)
      for (Op o : all_ops) {
        if (!op_applies(d, o)) continue;
        const Config c = t.rt->lookup(d, o, 1 << 20, 0);
        EXPECT_EQ(c.level, Level::builtin_default);
        EXPECT_EQ(std::string(c.source).rfind("built-in (", 0), 0u) << c.source;
        EXPECT_NE(std::string(c.source).find(needle), std::string::npos) << c.source;
      }
  const auto warnings = t.log.lines("warning");
  ASSERT_EQ(warnings.size(), 1u) << t.log.all();
  EXPECT_NE(warnings[0].find(needle), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("built-in defaults"), std::string::npos) << warnings[0];
}

TEST(BadDatabase, MissingFile) {
  TempDir dir;
  TestRuntime t({sample_device()}, (dir / "nothing-here.db").string());
  expect_defaults_and_one_warning(t, "no database (the file does not exist)");
  EXPECT_NE(t.log.lines("warning")[0].find("nothing-here.db"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "nothing-here.db"));  // never created
}

TEST(BadDatabase, CorruptWinnersPage) {
  TempDir dir;
  const fs::path path = dir / "tune.db";
  std::vector<Row> rows;
  for (std::uint64_t i = 0; i < 200; ++i)  // enough rows for the table to span pages
    rows.push_back({DType::i32, Op::sum, 1000 * i + 1, 1000 * i + 1000,
                    "vectorized.b128.u2.single_pass.i32.sum"});
  add_device_rows(path, sample_device(), rows);
  // The b-tree header of the winners table's root page overwritten, as a disk error would.
  std::int64_t page = 0, page_size = 0;
  {
    sqlite3* c = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &c), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(c,
                       "SELECT rootpage, (SELECT page_size FROM pragma_page_size) "
                       "FROM sqlite_master WHERE name = 'winners'",
                       -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    page = sqlite3_column_int64(st, 0);
    page_size = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    sqlite3_close(c);
  }
  ASSERT_GT(page, 1);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((page - 1) * page_size);
    const std::string junk(64, '\xff');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  TestRuntime t({sample_device()}, path.string());
  expect_defaults_and_one_warning(t, "corrupt");
}

TEST(BadDatabase, CorruptMeasurementsOfAnotherDevice) {
  // tests/data/db/corrupt.db: the damage is in measurements the snapshot never reads (no row of
  // this device): it loads, finds nothing for this device, and the one warning is the fallback's.
  TempDir dir;
  TestRuntime t({sample_device()}, db::test::copy_fixture("corrupt.db", dir).string());
  for (DType d : all_dtypes)
    for (Op o : all_ops) {
      if (!op_applies(d, o)) continue;
      EXPECT_EQ(t.rt->lookup(d, o, 1 << 20, 0).level, Level::builtin_default);
    }
  ASSERT_EQ(t.log.lines("warning").size(), 1u) << t.log.all();
  EXPECT_NE(t.log.lines("warning")[0].find("no tuned cold-L2 winner"), std::string::npos);
}

TEST(BadDatabase, NotSqlite) {
  TempDir dir;
  TestRuntime t({sample_device()}, db::test::copy_fixture("not_sqlite.db", dir).string());
  expect_defaults_and_one_warning(t, "not an SQLite database");
}

TEST(BadDatabase, NewerIncompatibleSchema) {
  TempDir dir;
  TestRuntime t({sample_device()}, db::test::copy_fixture("newer_incompatible.db", dir).string());
  expect_defaults_and_one_warning(t, "needs readers of version");
}

TEST(BadDatabase, OlderSchema) {
  TempDir dir;
  TestRuntime t({sample_device()}, db::test::copy_fixture("schema_v0.db", dir).string());
  expect_defaults_and_one_warning(t, "older than this binary");
}

TEST(BadDatabase, LockedPastTheBusyTimeout) {
  TempDir dir;
  const fs::path path = dir / "tune.db";
  add_device_rows(path, sample_device(),
                  {{DType::i32, Op::sum, 1, 1 << 30, "vectorized.b128.u2.single_pass.i32.sum"}});
  // Another process's exclusive lock: a rollback-journal file in the middle of a write
  // transaction (WAL readers are never blocked, so switch the journal mode first).
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  TestRuntime t({sample_device()}, path.string(), /*busy_timeout_ms=*/300);
  const auto t0 = std::chrono::steady_clock::now();
  expect_defaults_and_one_warning(t, "busy timeout");
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(waited, std::chrono::seconds(5));  // waited once, never hung
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  // Released: a new database setting loads it.
  t.rt->set_database(path.string());
  EXPECT_EQ(t.rt->lookup(DType::i32, Op::sum, 1000, 0).level, Level::exact);
}

TEST(BadDatabase, RowsNamingUnknownKernelsAreIgnoredWithOneWarning) {
  TempDir dir;
  const fs::path path = dir / "tune.db";
  add_device_rows(path, sample_device(),
                  {{DType::i32, Op::sum, 1, 1000, "vectorized.b128.u2.single_pass.i32.sum"},
                   {DType::i32, Op::sum, 1001, 1 << 30, "from_the_future.b256.single_pass.i32.sum"},
                   {DType::f64, Op::max, 1, 1 << 30, "from_the_future.b512.single_pass.f64.max"}});
  TestRuntime t({sample_device()}, path.string());
  EXPECT_EQ(t.rt->lookup(DType::i32, Op::sum, 500, 0).level, Level::exact);
  // The unknown rows' sizes: the nearest usable row of this device within a factor of 4 of its
  // interval, else the default.
  const Config near = t.rt->lookup(DType::i32, Op::sum, 4000, 0);
  EXPECT_EQ(near.level, Level::nearest);
  EXPECT_STREQ(near.kernel_id, "vectorized.b128.u2.single_pass.i32.sum");
  EXPECT_EQ(t.rt->lookup(DType::i32, Op::sum, 1 << 20, 0).level, Level::builtin_default);
  for (int i = 0; i < 5; ++i) {
    const Config c = t.rt->lookup(DType::f64, Op::max, 1 << 20, 0);
    EXPECT_EQ(c.level, Level::builtin_default);
    EXPECT_STREQ(c.kernel_id, builtin_default_id(DType::f64, Op::max, 1 << 20));
    EXPECT_STREQ(c.source, "built-in");
  }
  const auto warnings = t.log.lines("warning");
  ASSERT_EQ(warnings.size(), 1u) << t.log.all();
  EXPECT_NE(warnings[0].find("2 winner row(s) cannot be used"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("which this binary does not have"), std::string::npos) << warnings[0];
  // Both are listed at debug level.
  EXPECT_NE(t.log.all().find("from_the_future.b512.single_pass.f64.max"), std::string::npos);
}

TEST(BadDatabase, RowsBreakingTheRowRulesAreSkippedByNameWithOneWarning) {
  TempDir dir;
  const fs::path path = dir / "tune.db";
  add_device_rows(path, sample_device(),
                  {{DType::i32, Op::sum, 1, 1000, "vectorized.b128.u2.single_pass.i32.sum"},
                   {DType::f64, Op::max, 1, 1 << 30, "vectorized.b128.u2.single_pass.f64.max"}});
  {
    // A winner with n_lo > n_hi, written past the CHECK constraints (as a damaged file has it).
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h,
                           "PRAGMA ignore_check_constraints = ON; UPDATE winners SET n_lo = 5000 "
                           "WHERE dtype = 'i32'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(h);
  }
  TestRuntime t({sample_device()}, path.string());
  for (int i = 0; i < 3; ++i) {
    // The damaged row is not read as data; the other row of the file still serves its key.
    EXPECT_EQ(t.rt->lookup(DType::i32, Op::sum, 500, 0).level, Level::builtin_default);
    EXPECT_EQ(t.rt->lookup(DType::f64, Op::max, 1 << 20, 0).level, Level::exact);
  }
  const auto warnings = t.log.lines("warning");
  ASSERT_EQ(warnings.size(), 1u) << t.log.all();
  EXPECT_NE(warnings[0].find("1 winner row(s) break the database's row rules and are skipped"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("n_lo is larger"), std::string::npos) << warnings[0];
}

TEST(BadDatabase, NoLocationAtAll) {
  // No --db, no $TUNEDREDUCE_DB, $XDG_DATA_HOME or $HOME: nothing to open.
  ::tunedreduce::test::EnvGuard g1("TUNEDREDUCE_DB"), g2("XDG_DATA_HOME"), g3("HOME"),
      g4("XDG_DATA_DIRS");
  for (const char* name : {"TUNEDREDUCE_DB", "XDG_DATA_HOME", "HOME"}) unsetenv(name);
  TempDir empty;
  setenv("XDG_DATA_DIRS", empty.path().c_str(), 1);  // no system-wide database either
  {
    TestRuntime t({sample_device()}, std::nullopt);
    EXPECT_EQ(t.rt->database_path(), "");
    expect_defaults_and_one_warning(t, "cannot locate the tuning database");
  }
}

TEST(Location, AServiceWithoutADatabaseOfItsOwnReadsTheSystemsImmutably) {
  // A database installed under $XDG_DATA_DIRS (e.g. /usr/share/tunedreduce/tune.db), a user
  // without one: the lookup uses the system's, and opens it immutable (no -shm beside it, which
  // a read-only open of a WAL database writes).
  TempDir dir;
  fs::create_directories(dir / "share" / "tunedreduce");
  fs::create_directories(dir / "home");
  const fs::path db = dir / "share" / "tunedreduce" / "tune.db";
  fs::copy_file(sample_db(), db);
  ::tunedreduce::test::EnvGuard g1("TUNEDREDUCE_DB"), g2("XDG_DATA_HOME"), g3("HOME"),
      g4("XDG_DATA_DIRS");
  unsetenv("TUNEDREDUCE_DB");
  unsetenv("XDG_DATA_HOME");
  setenv("HOME", (dir / "home").c_str(), 1);
  setenv("XDG_DATA_DIRS", ("/nonexistent:" + (dir / "share").string()).c_str(), 1);
  {
    TestRuntime t({sample_device()}, std::nullopt);
    EXPECT_EQ(t.rt->database_path(), db.string());
    const Config c = t.rt->lookup(DType::f32, Op::sum, 1 << 24, 0);
    EXPECT_EQ(c.level, Level::exact);
    EXPECT_EQ(std::string(c.source), db.string());
    EXPECT_FALSE(fs::exists(db.string() + "-shm"));
    EXPECT_FALSE(fs::exists(db.string() + "-wal"));
    EXPECT_TRUE(t.log.lines("warning").empty()) << t.log.all();
  }
}

TEST(Location, AFleetDatabaseRenamedOverTheSystemsReplacesItWithoutDisturbingRunningProcesses) {
  // docs/library.md, "Replacing the database under running processes": a new database is made
  // beside the installed one (here by db merge, in journal mode DELETE) and renamed over it.
  TempDir dir;
  const fs::path share = dir / "share" / "tunedreduce";
  fs::create_directories(share);
  fs::create_directories(dir / "home");
  fs::create_directories(dir / "staging");
  const fs::path installed = share / "tune.db";
  fs::copy_file(sample_db(), installed);
  // The new fleet database: the sample with another winner for i32 sum, every size.
  const std::string old_kernel = "vectorized.b128.u1.packed.i32.sum";
  const std::string new_kernel = "tiled.b256.u4.packed.i32.sum";
  {
    const fs::path edited = dir / "staging" / "tune.db";
    fs::copy_file(sample_db(), edited);
    {
      db::Database w = db::Database::open_writer(edited);
      std::int64_t dev = 0;
      for (const db::DeviceRecord& d : w.devices())
        if (d.key == sample_device().key()) dev = d.id;
      ASSERT_NE(dev, 0);
      const std::int64_t evidence = w.connection().query_int(
          "SELECT id FROM measurements WHERE kernel_id = '" + new_kernel +
          "' AND n = 1048576 AND outcome = 'ok' AND l2_mode = 'cold' ORDER BY id LIMIT 1");
      db::Winner win;
      win.dtype = DType::i32;
      win.op = Op::sum;
      win.n_lo = 1;
      win.n_hi = std::uint64_t{1} << 40;
      win.kernel_id = new_kernel;
      win.measurement_id = evidence;
      win.driver_version = win.runtime_version = 13000;
      w.replace_winners(dev, DType::i32, Op::sum, std::vector<db::Winner>{win});
    }
    db::merge_files({edited}, share / "tune.db.new");  // beside the target: one file system
  }
  // Only the installer writes the folder; the processes that read it need no write permission
  // (as root the bits do not bind, so the test checks below that nothing is written there).
  fs::permissions(share, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  auto listing = [&] {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(share)) names.insert(e.path().filename().string());
    return names;
  };
  const std::set<std::string> before = listing();

  ::tunedreduce::test::EnvGuard g1("TUNEDREDUCE_DB"), g2("XDG_DATA_HOME"), g3("HOME"),
      g4("XDG_DATA_DIRS");
  unsetenv("TUNEDREDUCE_DB");
  unsetenv("XDG_DATA_HOME");
  setenv("HOME", (dir / "home").c_str(), 1);
  setenv("XDG_DATA_DIRS", (dir / "share").c_str(), 1);

  TestRuntime running({sample_device()}, std::nullopt);
  Config c = running.rt->lookup(DType::i32, Op::sum, 1 << 20, 0);
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_EQ(std::string(c.kernel_id), old_kernel);
  // A reader that has the old file open (a load in flight) while the new one is renamed over it.
  db::ReaderOptions immutable;
  immutable.immutable = true;
  db::Database in_flight = db::Database::open_reader(installed, immutable);
  EXPECT_EQ(listing(), before) << "an immutable open writes nothing beside the file";

  fs::permissions(share, fs::perms::owner_write, fs::perm_options::add);
  fs::rename(share / "tune.db.new", installed);  // rename(2): atomic
  fs::permissions(share, fs::perms::owner_write, fs::perm_options::remove);

  // The open connection goes on reading the old file (its inode lives while it is open).
  std::set<std::string> old_winners;
  for (const db::WinnerRecord& w : in_flight.winners())
    if (w.dtype == DType::i32 && w.op == Op::sum) old_winners.insert(w.kernel_id);
  EXPECT_TRUE(old_winners.count(old_kernel));
  EXPECT_FALSE(old_winners.count(new_kernel));
  // The running process keeps its snapshot: the same answer, no error, no warning.
  c = running.rt->lookup(DType::i32, Op::sum, 1 << 20, 0);
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_EQ(std::string(c.kernel_id), old_kernel);
  // A new process reads the new file ...
  {
    TestRuntime fresh({sample_device()}, std::nullopt);
    const Config n = fresh.rt->lookup(DType::i32, Op::sum, 1 << 20, 0);
    EXPECT_EQ(n.level, Level::exact);
    EXPECT_EQ(std::string(n.kernel_id), new_kernel);
    EXPECT_EQ(std::string(n.source), installed.string());
    EXPECT_TRUE(fresh.log.lines("warning").empty()) << fresh.log.all();
  }
  // ... and so does the running one after set_database (here: back to the location rules).
  running.rt->set_database(std::nullopt);
  c = running.rt->lookup(DType::i32, Op::sum, 1 << 20, 0);
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_EQ(std::string(c.kernel_id), new_kernel);
  EXPECT_TRUE(running.log.lines("warning").empty()) << running.log.all();
  EXPECT_EQ(listing(), std::set<std::string>{"tune.db"}) << "no -wal, -shm or -journal written";
  fs::permissions(share, fs::perms::owner_write, fs::perm_options::add);
}

TEST(Location, TheEnvironmentDecidesAsForTheCli) {
  TempDir dir;
  const fs::path path = sample_copy(dir);
  const char* old = std::getenv("TUNEDREDUCE_DB");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  setenv("TUNEDREDUCE_DB", path.c_str(), 1);
  {
    TestRuntime t({sample_device()}, std::nullopt);
    EXPECT_EQ(t.rt->database_path(), path.string());
    EXPECT_EQ(t.rt->lookup(DType::f32, Op::sum, 1 << 24, 0).level, Level::exact);
    // set_database wins over the environment, and an empty path restores the rules.
    t.rt->set_database((dir / "other.db").string());
    EXPECT_EQ(t.rt->database_path(), (dir / "other.db").string());
    EXPECT_EQ(t.rt->lookup(DType::f32, Op::sum, 1 << 24, 0).level, Level::builtin_default);
    t.rt->set_database(std::nullopt);
    EXPECT_EQ(t.rt->lookup(DType::f32, Op::sum, 1 << 24, 0).level, Level::exact);
  }
  if (saved) setenv("TUNEDREDUCE_DB", saved->c_str(), 1);
  else unsetenv("TUNEDREDUCE_DB");
}

TEST(Fallback, OneWarningForTheFirstLookupBelowLevelOneThenDebugOnly) {
  TempDir dir;
  TestRuntime t({sample_device()}, sample_copy(dir).string());
  EXPECT_EQ(t.rt->lookup(DType::f64, Op::sum, 1 << 20, 0).level, Level::builtin_default);
  EXPECT_EQ(t.rt->lookup(DType::u32, Op::min, 1 << 20, 0).level, Level::builtin_default);
  EXPECT_EQ(t.rt->lookup(DType::i32, Op::sum, 0, 0).level, Level::nearest);
  const auto warnings = t.log.lines("warning");
  ASSERT_EQ(warnings.size(), 1u) << t.log.all();
  EXPECT_NE(warnings[0].find("no tuned cold-L2 winner for f64 sum n=1048576"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find(std::string(builtin_default_id(DType::f64, Op::sum, 1 << 20)) +
                             " (default)"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(t.log.all().find(std::string("debug device 0 u32 min n=1048576: ") +
                             builtin_default_id(DType::u32, Op::min, 1 << 20) + " (default)"),
            std::string::npos)
      << t.log.all();
}

TEST(CacheState, TheLookupPrefersTheRowsOfTheStateSetAndSaysWhichItUsed) {
  TempDir dir;
  const fs::path path = sample_copy(dir);  // cold rows of i32/f32 sum, min, max
  add_device_rows(path, sample_device(),
                  {{DType::f32, Op::sum, 1, std::uint64_t{1} << 40,
                    "smem.b128.u2.dynamic.single_pass.f32.sum", 3.25}},
                  db::L2Mode::warm);
  TestRuntime t({sample_device()}, path.string());
  EXPECT_EQ(t.rt->cache_state(), CacheState::cold);
  Config c = t.rt->lookup(DType::f32, Op::sum, 1 << 20, 0);
  EXPECT_EQ(c.cache_state, CacheState::cold);
  EXPECT_STRNE(c.kernel_id, "smem.b128.u2.dynamic.single_pass.f32.sum");
  t.rt->set_cache_state(CacheState::warm);
  EXPECT_EQ(t.rt->cache_state(), CacheState::warm);
  c = t.rt->lookup(DType::f32, Op::sum, 1 << 20, 0);  // no reload: the same state serves both
  EXPECT_EQ(c.cache_state, CacheState::warm);
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_STREQ(c.kernel_id, "smem.b128.u2.dynamic.single_pass.f32.sum");
  EXPECT_EQ(c.tuned_median_us, 3.25);
  // Warm preferred, only cold rows: this device's cold row, reported as such, one warning.
  c = t.rt->lookup(DType::i32, Op::max, 1 << 20, 0);
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_EQ(c.cache_state, CacheState::cold);
  const auto warnings = t.log.lines("warning");
  ASSERT_EQ(warnings.size(), 1u) << t.log.all();
  EXPECT_NE(warnings[0].find("no tuned warm-L2 winner for i32 max n=1048576"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("(exact), tuned with cold L2"), std::string::npos) << warnings[0];
  // The built-in default says cold (it was chosen from cold measurements).
  c = t.rt->lookup(DType::u64, Op::sum, 1 << 20, 0);
  EXPECT_EQ(c.level, Level::builtin_default);
  EXPECT_EQ(c.cache_state, CacheState::cold);
  expect_error([&] { t.rt->set_cache_state(static_cast<CacheState>(7)); }, Status::invalid_argument,
               "cache state 7 is not a CacheState");
  EXPECT_EQ(t.rt->cache_state(), CacheState::warm);
}

TEST(CacheState, TheEnvironmentSetsTheInitialStateAndABadValueIsReportedOnce) {
  const char* old = std::getenv("TUNEDREDUCE_CACHE_STATE");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  setenv("TUNEDREDUCE_CACHE_STATE", "warm", 1);
  {
    TestRuntime t({sample_device()}, std::nullopt);
    EXPECT_EQ(t.rt->cache_state(), CacheState::warm);
    EXPECT_TRUE(t.log.lines("warning").empty()) << t.log.all();
  }
  setenv("TUNEDREDUCE_CACHE_STATE", "tepid", 1);
  {
    TestRuntime t({sample_device()}, std::nullopt);
    EXPECT_EQ(t.rt->cache_state(), CacheState::cold);
    const auto warnings = t.log.lines("warning");
    ASSERT_EQ(warnings.size(), 1u) << t.log.all();
    EXPECT_NE(warnings[0].find(
                  "TUNEDREDUCE_CACHE_STATE='tepid' is not a cache state (cold or warm)"),
              std::string::npos)
        << warnings[0];
  }
  setenv("TUNEDREDUCE_CACHE_STATE", "", 1);
  {
    TestRuntime t({sample_device()}, std::nullopt);
    EXPECT_EQ(t.rt->cache_state(), CacheState::cold);
  }
  if (saved) setenv("TUNEDREDUCE_CACHE_STATE", saved->c_str(), 1);
  else unsetenv("TUNEDREDUCE_CACHE_STATE");
}

TEST(NoDevice, LookupReportsTheDefaultsAndReductionsFail) {
  TempDir dir;
  TestRuntime t({}, sample_copy(dir).string());
  const Config c = t.rt->lookup(DType::f32, Op::sum, 1 << 20, -1);
  EXPECT_EQ(c.level, Level::builtin_default);
  EXPECT_EQ(c.device, -1);
  EXPECT_STREQ(c.kernel_id, builtin_default_id(DType::f32, Op::sum, 1 << 20));
  EXPECT_NE(std::string(c.source).find("no CUDA device"), std::string::npos) << c.source;
  t.rt->lookup(DType::i32, Op::max, 10, -1);
  EXPECT_EQ(t.log.lines("warning").size(), 1u) << t.log.all();
  float* in = reinterpret_cast<float*>(0x10000);
  float* out = reinterpret_cast<float*>(0x20000);
  expect_error([&] { t.rt->reduce(in, out, 100, DType::f32, Op::sum, nullptr); },
               Status::cuda_error, "no usable CUDA device");
  std::size_t bytes = 0;
  expect_error([&] { t.rt->reduce(nullptr, bytes, in, out, 100, DType::f32, Op::sum, nullptr); },
               Status::cuda_error, "no usable CUDA device");
  expect_error([&] { t.rt->lookup(DType::f32, Op::sum, 1, 3); }, Status::invalid_argument,
               "device 3 does not exist");
}

// ---- arguments -------------------------------------------------------------------------------

struct Device0 {
  TempDir dir;
  TestRuntime t{{sample_device(), sample_device()}, sample_copy(dir).string()};
  float* in = reinterpret_cast<float*>(0x7000'0000'0000);
  float* out = reinterpret_cast<float*>(0x7000'1000'0000);
  Device0() {
    t.fake->set_pointer(in, {MemoryKind::device, 0});
    t.fake->set_pointer(out, {MemoryKind::device, 0});
  }
};

TEST(Arguments, NullPointersFailBeforeAnyCudaCall) {
  Device0 d;
  expect_error([&] { d.t.rt->reduce(d.in, nullptr, 10, DType::f32, Op::sum, nullptr); },
               Status::invalid_argument, "d_out is a null pointer");
  expect_error([&] { d.t.rt->reduce(nullptr, d.out, 10, DType::f32, Op::sum, nullptr); },
               Status::invalid_argument, "d_in is a null pointer (n = 10)");
  std::size_t bytes = 1 << 20;
  void* temp = reinterpret_cast<void*>(0x7000'2000'0000);
  expect_error(
      [&] { d.t.rt->reduce(temp, bytes, nullptr, d.out, 10, DType::f32, Op::sum, nullptr); },
      Status::invalid_argument, "d_in is a null pointer");
  expect_error(
      [&] { d.t.rt->reduce(temp, bytes, d.in, nullptr, 10, DType::f32, Op::sum, nullptr); },
      Status::invalid_argument, "d_out is a null pointer");
  EXPECT_EQ(d.t.fake->cuda_calls.load(), 0);
  // n = 0 reads nothing: a null d_in is fine, the empty result is written.
  d.t.rt->reduce(nullptr, d.out, 0, DType::f32, Op::sum, nullptr);
  ASSERT_EQ(d.t.fake->launches().size(), 1u);
  EXPECT_EQ(d.t.fake->launches()[0].args.n, 0u);
}

TEST(Arguments, BadEnumsFailBeforeAnyCudaCall) {
  Device0 d;
  expect_error([&] { d.t.rt->reduce(d.in, d.out, 10, static_cast<DType>(8), Op::sum, nullptr); },
               Status::invalid_argument, "dtype 8 is not an element type");
  expect_error([&] { d.t.rt->reduce(d.in, d.out, 10, DType::f32, static_cast<Op>(8), nullptr); },
               Status::invalid_argument, "op 8 is not an operator");
  expect_error([&] { d.t.rt->lookup(DType::f32, static_cast<Op>(9), 10, 0); },
               Status::invalid_argument, "op 9");
  expect_error([&] { d.t.rt->lookup(DType::f32, Op::sum, 10, -2); }, Status::invalid_argument,
               "device -2 is not a CUDA device ordinal");
  EXPECT_EQ(d.t.fake->cuda_calls.load(), 0);
}

TEST(Arguments, ExactSumOfAnIntegerTypeIsRefusedByNameBeforeAnyCudaCall) {
  Device0 d;
  const std::string why = "op exact_sum is defined for f32, f64, f16 and bf16 only, not dtype ";
  expect_error([&] { d.t.rt->reduce(d.in, d.out, 10, DType::i32, Op::exact_sum, nullptr); },
               Status::invalid_argument, why + "i32");
  std::size_t bytes = 0;
  expect_error(
      [&] { d.t.rt->reduce(nullptr, bytes, d.in, d.out, 10, DType::u64, Op::exact_sum, nullptr); },
      Status::invalid_argument, why + "u64");
  expect_error([&] { d.t.rt->lookup(DType::i64, Op::exact_sum, 10, 0); }, Status::invalid_argument,
               why + "i64");
  EXPECT_EQ(d.t.fake->cuda_calls.load(), 0);
  EXPECT_TRUE(d.t.fake->launches().empty());
}

TEST(Arguments, WideSumOfA64BitTypeIsRefusedByNameBeforeAnyCudaCall) {
  Device0 d;
  const std::string why = "op wide_sum is defined for i32, u32, f32, f16 and bf16 only, not dtype ";
  expect_error([&] { d.t.rt->reduce(d.in, d.out, 10, DType::i64, Op::wide_sum, nullptr); },
               Status::invalid_argument, why + "i64");
  std::size_t bytes = 0;
  expect_error(
      [&] { d.t.rt->reduce(nullptr, bytes, d.in, d.out, 10, DType::f64, Op::wide_sum, nullptr); },
      Status::invalid_argument, why + "f64");
  expect_error([&] { d.t.rt->lookup(DType::u64, Op::wide_sum, 10, 0); }, Status::invalid_argument,
               why + "u64");
  // The result is 8 bytes: an output aligned for the 4-byte element only is refused.
  expect_error(
      [&] {
        d.t.rt->reduce(d.in, reinterpret_cast<char*>(d.out) + 4, 10, DType::i32, Op::wide_sum,
                       nullptr);
      },
      Status::invalid_argument, "is not aligned to 8 bytes");
  EXPECT_TRUE(d.t.fake->launches().empty());
}

TEST(WideSum, RunsTheBuiltInDefaultThroughBothPaths) {
  Device0 d;  // the sample database has no wide_sum rows: the built-in default
  for (DType t : {DType::i32, DType::u32, DType::f32}) {
    const Config c = d.t.rt->lookup(t, Op::wide_sum, 1 << 20, 0);
    EXPECT_EQ(c.level, Level::builtin_default);
    EXPECT_EQ(c.op, Op::wide_sum);
    EXPECT_STREQ(c.kernel_id, runtime::builtin_default_id(t, Op::wide_sum, 1 << 20));
    EXPECT_NE(std::string(c.kernel_id).find(std::string(".") + dtype_name(t) + ".wide_sum"),
              std::string::npos)
        << c.kernel_id;
  }
  cudaStream_t s = reinterpret_cast<cudaStream_t>(0x51);
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::i32, Op::wide_sum, s);
  std::size_t bytes = 0;
  d.t.rt->reduce(nullptr, bytes, d.in, d.out, 1 << 20, DType::f32, Op::wide_sum, s);
  EXPECT_GT(bytes, 0u);
  const auto l = d.t.fake->launches();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].kernel_id, runtime::builtin_default_id(DType::i32, Op::wide_sum, 1 << 20));
}

TEST(ExactSum, RunsTheExactDefaultThroughBothPathsWithTheLibrarysCounters) {
  Device0 d;  // the sample database has no exact_sum rows: the built-in default
  const Config c = d.t.rt->lookup(DType::f32, Op::exact_sum, 1 << 20, 0);
  EXPECT_STREQ(c.kernel_id, "exact_registers.b512.u1.single_pass.f32.exact_sum");
  EXPECT_EQ(c.level, Level::builtin_default);
  EXPECT_STREQ(d.t.rt->lookup(DType::f64, Op::exact_sum, 1 << 20, 0).kernel_id,
               "exact.b512.u1.single_pass.f64.exact_sum");
  cudaStream_t s = reinterpret_cast<cudaStream_t>(0x4321);
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::exact_sum, s);
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::exact_sum, s);
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, s);
  std::size_t bytes = 0;
  d.t.rt->reduce(nullptr, bytes, d.in, d.out, 1 << 20, DType::f32, Op::exact_sum, s);
  const kernels::Entry* e = kernels::find("exact_registers.b512.u1.single_pass.f32.exact_sum");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(bytes, e->workspace_bytes(1 << 20, d.t.fake->devices[0].limits));
  void* temp = reinterpret_cast<void*>(0x7000'2000'0000);
  d.t.fake->set_pointer(temp, {MemoryKind::device, 0});
  d.t.rt->reduce(temp, bytes, d.in, d.out, 1 << 20, DType::f32, Op::exact_sum, s);
  const auto l = d.t.fake->launches();
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0].kernel_id, "exact_registers.b512.u1.single_pass.f32.exact_sum");
  EXPECT_TRUE(l[0].args.workspace_clean);  // a new workspace is zeroed whole
  // exact_sum leaves its slots written: the next launch is told to zero what it uses, and an
  // exact launch gets the library's counter of the workspace, so its ticket needs no memset.
  EXPECT_FALSE(l[1].args.workspace_clean);
  EXPECT_NE(l[0].args.counter, nullptr);
  EXPECT_EQ(l[1].args.counter, l[0].args.counter);
  EXPECT_NE(l[2].kernel_id.find(".f32.sum"), std::string::npos);
  EXPECT_FALSE(l[2].args.workspace_clean);
  EXPECT_EQ(l[2].args.counter, nullptr);  // the other families keep the cached workspace's
  // The two-phase call: the caller's buffer and the library's counter.
  EXPECT_EQ(l[3].kernel_id, "exact_registers.b512.u1.single_pass.f32.exact_sum");
  EXPECT_EQ(l[3].args.workspace, temp);
  EXPECT_NE(l[3].args.counter, nullptr);
}

TEST(Arguments, HostPointersAreRefusedAndNothingLaunches) {
  Device0 d;
  std::vector<float> host(100);
  expect_error([&] { d.t.rt->reduce(host.data(), d.out, 100, DType::f32, Op::sum, nullptr); },
               Status::invalid_argument, "d_in (0x");
  expect_error([&] { d.t.rt->reduce(host.data(), d.out, 100, DType::f32, Op::sum, nullptr); },
               Status::invalid_argument, "is host memory (CUDA does not know it)");
  float* pinned = reinterpret_cast<float*>(0x6000'0000'0000);
  d.t.fake->set_pointer(pinned, {MemoryKind::host, -1});
  expect_error([&] { d.t.rt->reduce(d.in, pinned, 100, DType::f32, Op::sum, nullptr); },
               Status::invalid_argument, "d_out (0x600000000000) is page-locked host memory");
  EXPECT_TRUE(d.t.fake->launches().empty());
  EXPECT_TRUE(d.t.fake->events().empty());
}

TEST(Arguments, PointersOfAnotherDeviceAreRefused) {
  Device0 d;
  float* other = reinterpret_cast<float*>(0x7100'0000'0000);
  d.t.fake->set_pointer(other, {MemoryKind::device, 1});
  expect_error([&] { d.t.rt->reduce(other, d.out, 100, DType::f32, Op::sum, nullptr); },
               Status::invalid_argument,
               "d_in (0x710000000000) is memory of device 1, but the current device is 0");
  d.t.fake->current = 1;  // the same call on device 1 is fine for d_in, not for d_out
  expect_error([&] { d.t.rt->reduce(other, d.out, 100, DType::f32, Op::sum, nullptr); },
               Status::invalid_argument, "d_out (0x700010000000) is memory of device 0");
  EXPECT_TRUE(d.t.fake->launches().empty());
  // Managed memory is accessible from every device.
  float* managed = reinterpret_cast<float*>(0x7200'0000'0000);
  d.t.fake->set_pointer(managed, {MemoryKind::managed, 0});
  d.t.fake->current = 0;
  d.t.rt->reduce(managed, d.out, 100, DType::f32, Op::sum, nullptr);
  EXPECT_EQ(d.t.fake->launches().size(), 1u);
}

TEST(Arguments, MisalignedPointersAreRefused) {
  Device0 d;
  const float* odd = reinterpret_cast<const float*>(reinterpret_cast<char*>(d.in) + 2);
  expect_error([&] { d.t.rt->reduce(odd, d.out, 100, DType::f32, Op::sum, nullptr); },
               Status::invalid_argument, "is not aligned to 4 bytes");
  // One element in: aligned to the element, fine.
  d.t.fake->set_pointer(d.in + 1, {MemoryKind::device, 0});
  d.t.rt->reduce(d.in + 1, d.out, 100, DType::f32, Op::sum, nullptr);
  EXPECT_EQ(d.t.fake->launches().size(), 1u);
}

TEST(Arguments, NTooLargeForTheKernelIsUnsupported) {
  Device0 d;
  const std::uint64_t n = (std::uint64_t{1} << 40) + 1;
  expect_error([&] { d.t.rt->reduce(d.in, d.out, n, DType::f32, Op::sum, nullptr); },
               Status::unsupported,
               "n = 1099511627777: kernel 'streaming.b1024.u2.single_pass.f32.sum'");
  expect_error([&] { d.t.rt->reduce(d.in, d.out, n, DType::f32, Op::sum, nullptr); },
               Status::unsupported, "exceeds the limit of 1099511627776 elements");
  std::size_t bytes = 0;
  expect_error(
      [&] { d.t.rt->reduce(nullptr, bytes, d.in, d.out, n, DType::f32, Op::sum, nullptr); },
      Status::unsupported, "cannot run this reduction");
  EXPECT_TRUE(d.t.fake->launches().empty());
}

TEST(TwoPhase, TheQuerySetsTheSizeAndChecksNoPointer) {
  Device0 d;
  const std::uint64_t n = 1 << 20;
  std::size_t bytes = 0;
  d.t.rt->reduce(nullptr, bytes, nullptr, nullptr, n, DType::f32, Op::sum, nullptr);
  const kernels::Entry* e = kernels::find("tiled.b512.u1.single_pass.f32.sum");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(bytes, e->workspace_bytes(n, d.t.fake->devices[0].limits));
  EXPECT_GE(bytes, 256u);
  EXPECT_TRUE(d.t.fake->events().empty());
  std::size_t zero = 0;
  d.t.rt->reduce(nullptr, zero, nullptr, nullptr, 0, DType::f32, Op::sum, nullptr);
  EXPECT_EQ(zero, 1u);  // never 0, so an allocation of that size is a real pointer
}

TEST(TwoPhase, TheRunChecksTheTempBufferAndLaunchesWithTheLibrarysCounter) {
  Device0 d;
  const std::uint64_t n = 1 << 20;
  std::size_t bytes = 0;
  d.t.rt->reduce(nullptr, bytes, d.in, d.out, n, DType::f32, Op::sum, nullptr);
  void* temp = reinterpret_cast<void*>(0x7000'2000'0000);
  d.t.fake->set_pointer(temp, {MemoryKind::device, 0});
  std::size_t small = bytes - 1;
  expect_error([&] { d.t.rt->reduce(temp, small, d.in, d.out, n, DType::f32, Op::sum, nullptr); },
               Status::temp_too_small,
               "temp_bytes = " + std::to_string(small) + " is smaller than the " +
                   std::to_string(bytes));
  void* misaligned = static_cast<char*>(temp) + 64;
  expect_error(
      [&] { d.t.rt->reduce(misaligned, bytes, d.in, d.out, n, DType::f32, Op::sum, nullptr); },
      Status::invalid_argument, "d_temp (0x700020000040) is not aligned to 256 bytes");
  std::vector<char> host(bytes);
  expect_error(
      [&] { d.t.rt->reduce(host.data(), bytes, d.in, d.out, n, DType::f32, Op::sum, nullptr); },
      Status::invalid_argument, "d_temp");
  EXPECT_TRUE(d.t.fake->launches().empty());
  cudaStream_t s = reinterpret_cast<cudaStream_t>(0x1234);
  d.t.rt->reduce(temp, bytes, d.in, d.out, n, DType::f32, Op::sum, s);
  d.t.rt->reduce(temp, bytes, d.in, d.out, n, DType::f32, Op::sum, s);
  const auto launches = d.t.fake->launches();
  ASSERT_EQ(launches.size(), 2u);
  for (const auto& l : launches) {
    EXPECT_EQ(l.kernel_id, "tiled.b512.u1.single_pass.f32.sum");
    EXPECT_EQ(l.args.workspace, temp);
    EXPECT_EQ(l.args.workspace_bytes, bytes);
    EXPECT_FALSE(l.args.workspace_clean);  // the caller's memory: never trusted to be zero
    EXPECT_NE(l.args.counter, nullptr);    // ... so the counter is the library's
    EXPECT_EQ(l.args.counter, launches[0].args.counter);  // one per buffer
    EXPECT_EQ(l.args.stream, s);
    EXPECT_EQ(l.args.in, d.in);
    EXPECT_EQ(l.args.out, d.out);
    EXPECT_EQ(l.args.n, n);
  }
  // Nothing but the launches was enqueued: no memset, no workspace of the library's own.
  for (const auto& ev : d.t.fake->events()) EXPECT_EQ(ev.what.rfind("launch", 0), 0u) << ev.what;
}

TEST(TwoPhase, AManyBlockSinglePassWinnerGivesWayToTheBuiltInDefaultFromTwoToThe24) {
  // The sample's f32 sum winner from 2^23 up is streaming.b1024.u2.single_pass: 8192 blocks at
  // 2^26. The cached call runs it; the two-phase call (query and launch) runs the built-in
  // default, which has no single_pass kernel of more than 1056 blocks there.
  Device0 d;
  const std::uint64_t big = std::uint64_t{1} << 26, below = std::uint64_t{1} << 23;
  const kernels::DeviceLimits& lim = d.t.fake->devices[0].limits;
  const kernels::Entry* tuned = kernels::find("streaming.b1024.u2.single_pass.f32.sum");
  const kernels::Entry* dflt = kernels::find(builtin_default_id(DType::f32, Op::sum, big));
  ASSERT_NE(tuned, nullptr);
  ASSERT_NE(dflt, nullptr);
  ASSERT_GT(tuned->grid_size(big, lim), Runtime::two_phase_max_single_pass_blocks);
  ASSERT_TRUE(dflt->params.finish != kernels::Finish::single_pass ||
              dflt->grid_size(big, lim) <= Runtime::two_phase_max_single_pass_blocks)
      << dflt->id;
  EXPECT_STREQ(d.t.rt->lookup(DType::f32, Op::sum, big, 0).kernel_id, tuned->id);
  std::size_t bytes = 0;
  d.t.rt->reduce(nullptr, bytes, d.in, d.out, big, DType::f32, Op::sum, nullptr);
  EXPECT_EQ(bytes, std::max<std::size_t>(dflt->workspace_bytes(big, lim), 1));
  void* temp = reinterpret_cast<void*>(0x7000'2000'0000);
  d.t.fake->set_pointer(temp, {MemoryKind::device, 0});
  std::size_t below_bytes = 0;
  d.t.rt->reduce(nullptr, below_bytes, d.in, d.out, below, DType::f32, Op::sum, nullptr);
  std::size_t cap = std::max(bytes, below_bytes);
  d.t.rt->reduce(temp, cap, d.in, d.out, big, DType::f32, Op::sum, nullptr);
  d.t.rt->reduce(d.in, d.out, big, DType::f32, Op::sum, nullptr);
  d.t.rt->reduce(temp, cap, d.in, d.out, below, DType::f32, Op::sum, nullptr);  // below 2^24
  const auto l = d.t.fake->launches();
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].kernel_id, dflt->id);                                  // two-phase, 2^26
  EXPECT_EQ(l[1].kernel_id, tuned->id);                                 // cached, 2^26
  EXPECT_EQ(l[2].kernel_id, "streaming.b1024.u2.single_pass.f32.sum");  // two-phase, 2^23: tuned
  // A persistent-grid winner stays: i32 min's sample winners are not replaced at 2^26 unless
  // they have more than 1056 blocks.
  const Config c = d.t.rt->lookup(DType::i32, Op::min, big, 0);
  const kernels::Entry* m = kernels::find(c.kernel_id);
  ASSERT_NE(m, nullptr);
  std::size_t mb = 0;
  d.t.rt->reduce(nullptr, mb, d.in, d.out, big, DType::i32, Op::min, nullptr);
  const bool replaced = m->params.finish == kernels::Finish::single_pass &&
                        m->grid_size(big, lim) > Runtime::two_phase_max_single_pass_blocks;
  if (!replaced) {
    EXPECT_EQ(mb, std::max<std::size_t>(m->workspace_bytes(big, lim), 1)) << m->id;
  }
}

TEST(TwoPhase, EachTempBufferHasItsOwnCounterOnEachDevice) {
  Device0 d;
  const std::uint64_t n = 1 << 20;
  std::size_t bytes = 0;
  d.t.rt->reduce(nullptr, bytes, d.in, d.out, n, DType::f32, Op::sum, nullptr);
  char* a = reinterpret_cast<char*>(0x7000'2000'0000);
  char* b = a + bytes / 256 * 256 + 256;                // another buffer right after a
  char* c = reinterpret_cast<char*>(0x7100'2000'0000);  // device 1
  float* in1 = reinterpret_cast<float*>(0x7100'0000'0000);
  float* out1 = reinterpret_cast<float*>(0x7100'1000'0000);
  d.t.fake->set_pointer(a, {MemoryKind::device, 0});
  d.t.fake->set_pointer(b, {MemoryKind::device, 0});
  d.t.fake->set_pointer(c, {MemoryKind::device, 1});
  d.t.fake->set_pointer(in1, {MemoryKind::device, 1});
  d.t.fake->set_pointer(out1, {MemoryKind::device, 1});
  d.t.rt->reduce(a, bytes, d.in, d.out, n, DType::f32, Op::sum, nullptr);
  d.t.rt->reduce(b, bytes, d.in, d.out, n, DType::i32, Op::sum, nullptr);  // packed finish
  d.t.rt->reduce(a, bytes, d.in, d.out, n, DType::f32, Op::max, nullptr);
  d.t.fake->current = 1;
  d.t.rt->reduce(c, bytes, in1, out1, n, DType::f32, Op::sum, nullptr);
  std::thread([&] {  // another thread, the same buffer: the same counter
    d.t.fake->current = 0;
    d.t.rt->reduce(b, bytes, d.in, d.out, n, DType::f32, Op::sum, nullptr);
  })
      .join();
  const auto l = d.t.fake->launches();
  ASSERT_EQ(l.size(), 5u);
  for (const auto& x : l) ASSERT_NE(x.args.counter, nullptr);
  EXPECT_NE(l[0].args.counter, l[1].args.counter);
  EXPECT_EQ(l[0].args.counter, l[2].args.counter);
  EXPECT_NE(l[3].args.counter, l[0].args.counter);
  EXPECT_NE(l[3].args.counter, l[1].args.counter);
  EXPECT_EQ(l[4].args.counter, l[1].args.counter);
  EXPECT_EQ(d.t.rt->temp_counters().assigned(0), 2u);
  EXPECT_EQ(d.t.rt->temp_counters().assigned(1), 1u);
  // Each counter on its own 32-byte sector.
  EXPECT_GE(std::abs(reinterpret_cast<char*>(l[0].args.counter) -
                     reinterpret_cast<char*>(l[1].args.counter)),
            32);
  // The cached path keeps its own workspace and counter.
  d.t.rt->reduce(d.in, d.out, n, DType::f32, Op::sum, nullptr);
  EXPECT_EQ(d.t.fake->launches().back().args.counter, nullptr);
}

TEST(TwoPhase, AFullCounterTableFallsBackToZeroingInTheBufferAndSaysSoOnce) {
  TempDir dir;
  TestRuntime t{{sample_device()}, sample_copy(dir).string()};
  t.fake->table_entries = 2;
  float* in = reinterpret_cast<float*>(0x7000'0000'0000);
  float* out = reinterpret_cast<float*>(0x7000'1000'0000);
  t.fake->set_pointer(in, {MemoryKind::device, 0});
  t.fake->set_pointer(out, {MemoryKind::device, 0});
  const std::uint64_t n = 1 << 20;
  std::size_t bytes = 0;
  t.rt->reduce(nullptr, bytes, in, out, n, DType::f32, Op::sum, nullptr);
  std::vector<char*> temps;
  for (int i = 0; i < 4; ++i) {
    temps.push_back(reinterpret_cast<char*>(0x7000'2000'0000 + std::uintptr_t(i) * 0x100000));
    t.fake->set_pointer(temps.back(), {MemoryKind::device, 0});
  }
  for (char* p : temps) t.rt->reduce(p, bytes, in, out, n, DType::f32, Op::sum, nullptr);
  t.rt->reduce(temps[0], bytes, in, out, n, DType::f32, Op::sum, nullptr);  // still has one
  const auto l = t.fake->launches();
  ASSERT_EQ(l.size(), 5u);
  EXPECT_NE(l[0].args.counter, nullptr);
  EXPECT_NE(l[1].args.counter, nullptr);
  EXPECT_EQ(l[2].args.counter, nullptr);  // the launch zeroes a counter in the buffer itself
  EXPECT_EQ(l[3].args.counter, nullptr);
  EXPECT_EQ(l[4].args.counter, l[0].args.counter);
  const auto warnings = t.log.lines("warning");
  int said = 0;
  for (const auto& w : warnings) said += w.find("distinct temporary buffers") != std::string::npos;
  EXPECT_EQ(said, 1) << t.log.all();
}

TEST(TwoPhase, WithoutACounterTableTheLaunchZeroesTheBufferAndSaysSoOnce) {
  TempDir dir;
  TestRuntime t{{sample_device()}, sample_copy(dir).string()};
  t.fake->table_entries = 0;
  float* in = reinterpret_cast<float*>(0x7000'0000'0000);
  float* out = reinterpret_cast<float*>(0x7000'1000'0000);
  char* temp = reinterpret_cast<char*>(0x7000'2000'0000);
  for (const void* p : {static_cast<const void*>(in), static_cast<const void*>(out),
                        static_cast<const void*>(temp)})
    t.fake->set_pointer(p, {MemoryKind::device, 0});
  std::size_t bytes = 1 << 20;
  for (int i = 0; i < 3; ++i)
    t.rt->reduce(temp, bytes, in, out, 1 << 20, DType::f32, Op::sum, nullptr);
  for (const auto& x : t.fake->launches()) EXPECT_EQ(x.args.counter, nullptr);
  int said = 0;
  for (const auto& w : t.log.lines("warning")) said += w.find("counter table") != std::string::npos;
  EXPECT_EQ(said, 1) << t.log.all();
}

TEST(Arguments, ABufferThatPassedIsNotAskedAboutAgainButABadOneIsAlwaysRefused) {
  Device0 d;
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, nullptr);
  const int after_first = d.t.fake->cuda_calls.load();
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, nullptr);
  const int per_call = d.t.fake->cuda_calls.load() - after_first;
  // The current device, whether the stream is being captured, the launch: no pointer query.
  EXPECT_EQ(per_call, 3);
  std::vector<float> host(16);
  for (int i = 0; i < 3; ++i)
    expect_error([&] { d.t.rt->reduce(host.data(), d.out, 16, DType::f32, Op::sum, nullptr); },
                 Status::invalid_argument, "is host memory");
}

TEST(Launch, AFailedLaunchIsACudaErrorAndTheNextOneZeroesTheCounter) {
  Device0 d;
  d.t.fake->launch_result = cudaErrorLaunchOutOfResources;
  expect_error([&] { d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, nullptr); },
               Status::cuda_error,
               "launching kernel 'tiled.b512.u1.single_pass.f32.sum' on device 0 failed");
  d.t.fake->launch_result = cudaSuccess;
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, nullptr);
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, nullptr);
  const auto l = d.t.fake->launches();
  ASSERT_EQ(l.size(), 3u);
  EXPECT_TRUE(l[0].args.workspace_clean);   // fresh, zeroed
  EXPECT_FALSE(l[1].args.workspace_clean);  // after the failure
  EXPECT_TRUE(l[2].args.workspace_clean);
}

TEST(Launch, ALibraryWithoutCodeForThisGpuSaysSoAndHowToRebuild) {
  Device0 d;
  d.t.fake->launch_result = cudaErrorNoKernelImageForDevice;
  expect_error([&] { d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, nullptr); },
               Status::cuda_error,
               std::string("failed: this library has no code for device 0 (") +
                   sample_device().name +
                   ", compute capability 9.0): its kernels were compiled "
                   "for CUDA architectures " +
                   tunedreduce::cuda_architectures() +
                   "; rebuild it with -DTUNEDREDUCE_CUDA_ARCHS including 90 (");
  EXPECT_FALSE(std::string(tunedreduce::cuda_architectures()).empty());
}

// ---- the workspace cache ---------------------------------------------------------------------

TEST(Workspace, AllocatedOnceZeroedOnceAndReusedClean) {
  Device0 d;
  cudaStream_t a = reinterpret_cast<cudaStream_t>(0xA000);
  for (int i = 0; i < 5; ++i) d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, a);
  const auto ev = d.t.fake->events();
  ASSERT_EQ(ev.size(), 7u);
  EXPECT_EQ(ev[0].what, "alloc");
  EXPECT_EQ(ev[0].stream, a);
  EXPECT_EQ(ev[1].what, "memset");
  EXPECT_EQ(ev[1].ptr, ev[0].ptr);
  EXPECT_EQ(ev[1].bytes, ev[0].bytes);  // the whole workspace: counter and partial slots
  EXPECT_EQ(ev[1].stream, a);
  for (std::size_t i = 2; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i].what, "launch tiled.b512.u1.single_pass.f32.sum");
    EXPECT_EQ(ev[i].ptr, ev[0].ptr);
    EXPECT_EQ(ev[i].stream, a);
  }
  for (const auto& l : d.t.fake->launches()) EXPECT_TRUE(l.args.workspace_clean);
}

TEST(Workspace, GrowsInStreamOrderAndPerStream) {
  Device0 d;
  WorkspaceCache& ws = d.t.rt->workspaces();
  cudaStream_t a = reinterpret_cast<cudaStream_t>(0xA000);
  cudaStream_t b = reinterpret_cast<cudaStream_t>(0xB000);
  std::vector<std::pair<void*, bool>> used;
  auto use = [&](void* p, std::size_t, bool clean) {
    used.push_back({p, clean});
    return cudaSuccess;
  };
  ws.run(0, a, 1000, use);
  ws.run(0, a, 65536, use);    // still fits the first 64 KiB
  ws.run(0, a, 1 << 20, use);  // grows
  ws.run(0, b, 1000, use);     // another stream, another workspace
  ws.run(0, a, 1000, use);     // a keeps its grown one
  EXPECT_EQ(ws.held(0, a), std::size_t{1} << 20);
  EXPECT_EQ(ws.held(0, b), 65536u);
  const auto ev = d.t.fake->events();
  std::vector<std::string> seq;
  for (const auto& e : ev) seq.push_back(e.what + "@" + (e.stream == a ? "a" : "b"));
  EXPECT_EQ(seq, (std::vector<std::string>{"alloc@a", "memset@a", "free@a", "alloc@a", "memset@a",
                                           "alloc@b", "memset@b"}));
  EXPECT_EQ(ev[2].ptr, ev[0].ptr);  // the old one freed in a's order, after a's launches
  EXPECT_EQ(used[0].first, used[1].first);
  EXPECT_NE(used[2].first, used[0].first);
  EXPECT_EQ(used[4].first, used[2].first);
  for (const auto& u : used) EXPECT_TRUE(u.second);
  ws.release(0, a);
  EXPECT_EQ(ws.held(0, a), 0u);
  EXPECT_EQ(d.t.fake->events().back().what, "free");
  ws.run(0, a, 1000, use);
  EXPECT_EQ(ws.held(0, a), 65536u);
}

TEST(Workspace, ThePerThreadDefaultStreamGetsOneWorkspacePerThread) {
  Device0 d;
  WorkspaceCache& ws = d.t.rt->workspaces();
  auto use = [](void*, std::size_t, bool) { return cudaSuccess; };
  ws.run(0, cudaStreamPerThread, 1000, use);
  std::thread([&] { ws.run(0, cudaStreamPerThread, 1000, use); }).join();
  ws.run(0, cudaStreamPerThread, 1000, use);
  int allocs = 0;
  for (const auto& e : d.t.fake->events()) allocs += e.what == "alloc";
  EXPECT_EQ(allocs, 2);
}

TEST(Workspace, AnAllocationFailureIsACudaErrorAndNothingLaunches) {
  Device0 d;
  d.t.fake->alloc_result = cudaErrorMemoryAllocation;
  expect_error([&] { d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, nullptr); },
               Status::cuda_error, "allocating a workspace of 65536 bytes failed");
  EXPECT_TRUE(d.t.fake->launches().empty());
  d.t.fake->alloc_result = cudaSuccess;
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, nullptr);
  ASSERT_EQ(d.t.fake->launches().size(), 1u);
  EXPECT_TRUE(d.t.fake->launches()[0].args.workspace_clean);
}

TEST(Workspace, ACallCapturedIntoAGraphGetsAWorkspaceTheGraphOwnsAndLeavesTheCacheAlone) {
  Device0 d;
  cudaStream_t a = reinterpret_cast<cudaStream_t>(0xA000);
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, a);  // a cached workspace for a
  const std::size_t held = d.t.rt->workspaces().held(0, a);
  ASSERT_GT(held, 0u);
  d.t.fake->capturing_streams = {a};
  const std::size_t before = d.t.fake->events().size();
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, a);
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, a);
  const auto ev = d.t.fake->events();
  ASSERT_EQ(ev.size(), before + 6);
  for (std::size_t call = 0; call < 2; ++call) {
    const auto* e = &ev[before + 3 * call];
    EXPECT_EQ(e[0].what, "alloc");  // an allocation node of the graph ...
    EXPECT_EQ(e[1].what, "launch tiled.b512.u1.single_pass.f32.sum");
    EXPECT_EQ(e[1].ptr, e[0].ptr);  // ... used by the launch ...
    EXPECT_EQ(e[2].what, "free");   // ... and freed inside the graph
    EXPECT_EQ(e[2].ptr, e[0].ptr);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(e[i].stream, a);
    EXPECT_NE(e[0].ptr, ev[0].ptr);  // not the cache's workspace
  }
  // Not zeroed beforehand: the launch zeroes what it uses (its own memset node).
  const auto l = d.t.fake->launches();
  ASSERT_EQ(l.size(), 3u);
  EXPECT_FALSE(l[1].args.workspace_clean);
  EXPECT_FALSE(l[2].args.workspace_clean);
  EXPECT_EQ(d.t.rt->workspaces().held(0, a), held);  // the cache is untouched
  expect_error([&] { d.t.rt->release_workspace(a); }, Status::invalid_argument,
               "release_workspace: the stream is being captured into a CUDA graph");
  // Capture ended: the cache's workspace again, still clean.
  d.t.fake->capturing_streams.clear();
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, a);
  EXPECT_EQ(d.t.fake->events().back().ptr, ev[0].ptr);
  EXPECT_TRUE(d.t.fake->launches().back().args.workspace_clean);
}

TEST(Workspace, AStreamsFirstCallInsideACaptureCachesNothing) {
  Device0 d;
  cudaStream_t a = reinterpret_cast<cudaStream_t>(0xA000);
  d.t.fake->capturing_streams = {a};
  d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, a);
  EXPECT_EQ(d.t.rt->workspaces().held(0, a), 0u);
  std::vector<std::string> seq;
  for (const auto& e : d.t.fake->events()) seq.push_back(e.what);
  EXPECT_EQ(seq, (std::vector<std::string>{"alloc", "launch tiled.b512.u1.single_pass.f32.sum",
                                           "free"}));
}

TEST(Workspace, ACaptureOnADeviceWithoutMemoryPoolsIsRefusedWithTheWayOut) {
  Device0 d;
  cudaStream_t a = reinterpret_cast<cudaStream_t>(0xA000);
  d.t.fake->capturing_streams = {a};
  d.t.fake->pools = false;
  expect_error([&] { d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, a); },
               Status::unsupported,
               "this call is being captured into a CUDA graph, and device 0 has no stream-ordered "
               "allocation (memory pools) for a workspace the graph owns: use the two-phase call");
  EXPECT_TRUE(d.t.fake->events().empty());
}

TEST(Workspace, AFailedCapturedLaunchStillFreesItsWorkspace) {
  Device0 d;
  cudaStream_t a = reinterpret_cast<cudaStream_t>(0xA000);
  d.t.fake->capturing_streams = {a};
  d.t.fake->launch_result = cudaErrorStreamCaptureInvalidated;
  expect_error([&] { d.t.rt->reduce(d.in, d.out, 1 << 20, DType::f32, Op::sum, a); },
               Status::cuda_error, "launching kernel 'tiled.b512.u1.single_pass.f32.sum'");
  std::vector<std::string> seq;
  for (const auto& e : d.t.fake->events()) seq.push_back(e.what);
  EXPECT_EQ(seq, (std::vector<std::string>{"alloc", "launch tiled.b512.u1.single_pass.f32.sum",
                                           "free"}));
}

}  // namespace
}  // namespace tunedreduce::runtime::test
