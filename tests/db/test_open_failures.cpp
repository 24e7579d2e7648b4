// Every way a database file can be wrong, for readers and for writers: the expected behaviour, a
// message that names the file and the problem, and the exit code (docs/database.md, "Failures").

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "common/exit_codes.hpp"
#include "db/bench.hpp"
#include "db/database.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"
#include "test_util.hpp"

namespace tunedreduce::db {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

/// Runs \p fn, expects a DbError of \p problem whose message quotes \p path and contains
/// \p words; returns the message.
template <class Fn>
std::string expect_failure(Fn&& fn, Problem problem, int exit_code, const fs::path& path,
                           const std::string& words) {
  try {
    fn();
  } catch (const DbError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.problem(), problem) << msg;
    EXPECT_EQ(e.exit_code(), exit_code) << msg;
    EXPECT_NE(msg.find("'" + path.string() + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(words), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << "no DbError for " << path;
  return {};
}

TEST(OpenFailures, MissingFileReaderSaysNoDatabaseAndCreatesNothing) {
  TempDir dir;
  const auto path = dir / "tune.db";
  const std::string msg = expect_failure([&] { Database::open_reader(path); }, Problem::missing,
                                         exit_code::db_unusable, path, "no database");
  // Said once: one line, one mention.
  EXPECT_EQ(msg.find("no database"), msg.rfind("no database"));
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(OpenFailures, MissingFileWriterCreatesItButNotItsFolder) {
  TempDir dir;
  { Database::open_writer(dir / "tune.db"); }
  EXPECT_TRUE(fs::exists(dir / "tune.db"));
  const auto nested = dir / "no" / "such" / "tune.db";
  expect_failure([&] { Database::open_writer(nested); }, Problem::missing_folder,
                 exit_code::db_unusable, nested, "does not exist");
  EXPECT_FALSE(fs::exists(dir / "no"));
}

TEST(OpenFailures, ADirectoryIsNotADatabase) {
  TempDir dir;
  fs::create_directory(dir / "tune.db");
  expect_failure([&] { Database::open_reader(dir / "tune.db"); }, Problem::not_a_file,
                 exit_code::db_unusable, dir / "tune.db", "not a regular file");
  expect_failure([&] { Database::open_writer(dir / "tune.db"); }, Problem::not_a_file,
                 exit_code::db_unusable, dir / "tune.db", "not a regular file");
}

TEST(OpenFailures, ZeroByteFileReaderRefusesWriterInitialises) {
  TempDir dir;
  const auto path = test::copy_fixture("empty.db", dir);
  ASSERT_EQ(fs::file_size(path), 0u);
  expect_failure([&] { Database::open_reader(path); }, Problem::empty, exit_code::db_unusable, path,
                 "empty file (0 bytes)");
  EXPECT_EQ(fs::file_size(path), 0u);  // the reader left it alone
  {
    Database db = Database::open_writer(path);
    db.upsert_device(test::h100());
  }
  EXPECT_EQ(Database::open_reader(path).counts().devices, 1);
}

TEST(OpenFailures, EmptySqliteFileReaderRefuses) {
  TempDir dir;
  const auto path = dir / "blank.db";
  {
    Connection c = Connection::open(path, OpenMode::read_write);
    c.exec("PRAGMA user_version = 0; VACUUM");
  }
  expect_failure([&] { Database::open_reader(path); }, Problem::empty, exit_code::db_unusable, path,
                 "not a tuning database yet");
}

TEST(OpenFailures, NotSqliteIsRefusedByBothAndLeftUntouched) {
  TempDir dir;
  const auto path = test::copy_fixture("not_sqlite.db", dir);
  const std::string before = test::read_file(path);
  expect_failure([&] { Database::open_reader(path); }, Problem::not_sqlite, exit_code::db_unusable,
                 path, "not an SQLite database");
  expect_failure([&] { Database::open_writer(path); }, Problem::not_sqlite, exit_code::db_unusable,
                 path, "not an SQLite database");
  EXPECT_EQ(test::read_file(path), before);
  // A long file of random-looking bytes too (past the 100-byte header).
  test::write_file(path, std::string(5000, '\x5a'));
  expect_failure([&] { Database::open_writer(path); }, Problem::not_sqlite, exit_code::db_unusable,
                 path, "without the SQLite header");
}

TEST(OpenFailures, AnotherApplicationsSqliteFileIsRefusedAndLeftUntouched) {
  for (const char* name : {"other_app.db", "other_app_noid.db"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    const auto path = test::copy_fixture(name, dir);
    const std::string before = test::read_file(path);
    expect_failure([&] { Database::open_reader(path); }, Problem::foreign, exit_code::db_unusable,
                   path, "another application");
    expect_failure([&] { Database::open_writer(path); }, Problem::foreign, exit_code::db_unusable,
                   path, "another application");
    EXPECT_EQ(test::read_file(path), before);
    EXPECT_FALSE(fs::exists(path.string() + "-wal"));
  }
  TempDir dir;
  const auto path = test::copy_fixture("other_app.db", dir);
  expect_failure([&] { Database::open_reader(path); }, Problem::foreign, exit_code::db_unusable,
                 path, "application_id 0x46534921");
}

TEST(OpenFailures, CorruptPagesAreReportedAsCorrupt) {
  TempDir dir;
  const auto path = test::copy_fixture("corrupt.db", dir);
  // The header and the schema are intact, so opening works; reading the damaged table fails.
  Database db = Database::open_reader(path);
  expect_failure([&] { db.measurements(); }, Problem::corrupt, exit_code::db_unusable, path,
                 "corrupt");
  EXPECT_NE(db.connection().query_text("PRAGMA quick_check"), "ok");
}

TEST(OpenFailures, NewerCompatibleSchemaIsReadButNeverWritten) {
  TempDir dir;
  // Version 14, declaring version-13 readers compatible (tests/data/db/make_fixtures.sh).
  const auto path = test::copy_fixture("newer_compatible_v14.db", dir);
  const std::string before = test::read_file(path);
  {
    Database r = Database::open_reader(path);
    EXPECT_EQ(r.file_schema_version(), 14);
    EXPECT_EQ(r.counts().measurements, 40);
    // A newer file that declares this binary compatible has everything of this version.
    EXPECT_TRUE(r.has_provenance());
    EXPECT_TRUE(r.has_segmented());
    EXPECT_EQ(r.gpus().size(), 1u);
    EXPECT_EQ(r.counts().segmented_winners, 0);
    EXPECT_TRUE(r.segmented_winners().empty());
    EXPECT_TRUE(segmented_bench_results(r).empty());
  }
  expect_failure([&] { Database::open_writer(path); }, Problem::too_new, exit_code::db_too_new,
                 path, "schema version 14 is newer than this binary's 13");
  EXPECT_EQ(test::read_file(path), before);
  EXPECT_FALSE(fs::exists(path.string() + "-wal"));
}

TEST(OpenFailures, NewerIncompatibleSchemaIsRefusedByReaders) {
  TempDir dir;
  const auto path = test::copy_fixture("newer_incompatible.db", dir);
  expect_failure([&] { Database::open_reader(path); }, Problem::too_new, exit_code::db_too_new,
                 path, "needs readers of version 14");
  expect_failure([&] { Database::open_writer(path); }, Problem::too_new, exit_code::db_too_new,
                 path, "never written");
}

// --- read-only file and folder ------------------------------------------------------------------
// Permission bits do not stop root (CAP_DAC_OVERRIDE). As root the attempt runs in a child that
// has dropped to uid 65534 and owns the files, so the bits are what decides, as for any user.

int try_write(const fs::path& p) {
  try {
    Database db = Database::open_writer(p);
    db.upsert_device(test::h200());
    return 0;
  } catch (const DbError& e) {
    return e.exit_code();
  }
}

int try_read(const fs::path& p) {
  try {
    return Database::open_reader(p).counts().devices == 1 ? 0 : 99;
  } catch (const DbError& e) {
    return e.exit_code();
  }
}

struct ReadOnly : ::testing::Test {
  TempDir dir;
  fs::path folder = dir / "data";
  fs::path path = folder / "tune.db";
  void SetUp() override {
    fs::create_directory(folder);
    { Database::open_writer(path).upsert_device(test::h100()); }
    ASSERT_FALSE(fs::exists(path.string() + "-wal"));  // closed cleanly: checkpointed
    if (test::running_as_root()) {
      if (test::run_as_nobody([](const fs::path&) { return 0; }, path) != 0)
        GTEST_SKIP() << "running as root and cannot drop to uid 65534 (no CAP_SETUID?): "
                        "permission bits cannot be tested here";
      ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
      ASSERT_EQ(::chown(folder.c_str(), 65534, 65534), 0);
      ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
    }
  }
  int attempt(int (*fn)(const fs::path&)) {
    if (!test::running_as_root()) return fn(path);
    const int code = test::run_as_nobody(fn, path);
    if (code < 0) ADD_FAILURE() << "cannot drop root to uid 65534 here";
    return code;
  }
};

TEST_F(ReadOnly, AReadOnlyFileIsReadButNotWritten) {
  ASSERT_EQ(attempt(try_read), 0);
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  EXPECT_EQ(attempt(try_write), exit_code::db_readonly);
  EXPECT_EQ(attempt(try_read), 0);
  if (!test::running_as_root()) {
    expect_failure([&] { Database::open_writer(path); }, Problem::readonly, exit_code::db_readonly,
                   path, "the file is read-only");
  }
  // Positive control: the same user writes once the file is writable again, and the -wal that
  // the reader left behind while the file was read-only (SQLite copies the mode) is too.
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  if (fs::exists(path.string() + "-wal") && !test::running_as_root()) {
    expect_failure([&] { Database::open_writer(path); }, Problem::readonly, exit_code::db_readonly,
                   path, "-wal' is read-only");
  }
  for (const char* side : {"-wal", "-shm"})
    if (fs::exists(path.string() + side))
      fs::permissions(path.string() + side, fs::perms::owner_write, fs::perm_options::add);
  EXPECT_EQ(attempt(try_write), 0);
}

TEST_F(ReadOnly, AReadOnlyFolderStopsWritersAndNewFiles) {
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
  EXPECT_EQ(attempt(try_write), exit_code::db_readonly);
  EXPECT_FALSE(fs::exists(path.string() + "-wal"));
  // Readers cannot create the -shm file a WAL database needs there: they say so (exit 7);
  // opened as immutable, the file reads fine.
  EXPECT_EQ(attempt(try_read), exit_code::db_readonly);
  const int immutable = attempt([](const fs::path& p) {
    ReaderOptions ro;
    ro.immutable = true;
    try {
      return Database::open_reader(p, ro).counts().devices == 1 ? 0 : 99;
    } catch (const DbError& e) {
      return e.exit_code();
    }
  });
  EXPECT_EQ(immutable, 0);
  const int create =
      attempt([](const fs::path& p) { return try_write(p.parent_path() / "new.db"); });
  EXPECT_EQ(create, exit_code::db_readonly);
  EXPECT_FALSE(fs::exists(folder / "new.db"));
  fs::permissions(folder, fs::perms::owner_write, fs::perm_options::add);
  EXPECT_EQ(attempt(try_write), 0);
}

// --- locks --------------------------------------------------------------------------------------

TEST(Locking, AWriterHeldPastTheTimeoutIsReportedAsBusy) {
  TempDir dir;
  const auto path = dir / "tune.db";
  Database holder = Database::open_writer(path);
  const auto dev = holder.upsert_device(test::h100());
  WriterOptions opt;
  opt.busy_timeout = std::chrono::milliseconds(300);
  Database other = Database::open_writer(path, opt);
  Transaction held(holder.connection(), TxKind::immediate);
  const auto t0 = std::chrono::steady_clock::now();
  expect_failure([&] { other.upsert_device(test::h200()); }, Problem::busy, exit_code::db_busy,
                 path, "busy timeout (0.3 s)");
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(290));
  EXPECT_LT(waited, std::chrono::seconds(3));
  // A writer opening while the lock is held fails the same way.
  expect_failure([&] { Database::open_writer(path, opt); }, Problem::busy, exit_code::db_busy, path,
                 "locked by another connection");
  held.rollback();
  // Released: the same call now goes through, and nothing was half-written.
  other.upsert_device(test::h200());
  EXPECT_EQ(other.counts().devices, 2);
  (void)dev;
}

TEST(Locking, AWriterWaitsWithBackoffForALockReleasedInTime) {
  TempDir dir;
  const auto path = dir / "tune.db";
  Database holder = Database::open_writer(path);
  Database waiter = Database::open_writer(path);  // default timeout: 30 s
  auto held = std::make_unique<Transaction>(holder.connection(), TxKind::immediate);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    held->commit();
  });
  const auto t0 = std::chrono::steady_clock::now();
  waiter.upsert_device(test::h100());
  const auto waited = std::chrono::steady_clock::now() - t0;
  release.join();
  EXPECT_GE(waited, std::chrono::milliseconds(200));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_EQ(waiter.counts().devices, 1);
}

TEST(Locking, ReadersAreNotBlockedByAWriter) {
  TempDir dir;
  const auto path = dir / "tune.db";
  Database writer = Database::open_writer(path);
  writer.upsert_device(test::h100());
  Transaction held(writer.connection(), TxKind::immediate);
  Statement st = writer.connection().prepare("DELETE FROM devices");
  st.run();  // uncommitted
  Database reader = Database::open_reader(path);
  EXPECT_EQ(reader.counts().devices, 1);  // sees the last commit, without waiting
}

// A file stamped with our application id but without tables gave a raw SQLite message to
// readers, and `db migrate` called it "already current"; a user_version of -5 sent readers to
// `db migrate`, which then failed. Both are damaged files, named as such (exit 3).
TEST(OpenFailures, OurApplicationIdWithoutTablesOrANegativeVersionIsCorrupt) {
  TempDir dir;
  const auto bare = dir / "bare.db";
  {
    Connection c = Connection::open(bare, OpenMode::read_write);
    c.exec("PRAGMA application_id = 1414677570; PRAGMA user_version = 11");
  }
  for (const bool writer : {false, true})
    expect_failure(
        [&] { writer ? (void)Database::open_writer(bare) : (void)Database::open_reader(bare); },
        Problem::corrupt, exit_code::db_unusable, bare,
        "is corrupt: it has tunedreduce's application_id (0x54524442) but no tables");
  const auto negative = dir / "negative.db";
  { Database::open_writer(negative); }
  {
    Connection c = Connection::open(negative, OpenMode::read_write);
    c.exec("PRAGMA user_version = -5");
  }
  for (const bool writer : {false, true})
    expect_failure(
        [&] {
          writer ? (void)Database::open_writer(negative) : (void)Database::open_reader(negative);
        },
        Problem::corrupt, exit_code::db_unusable, negative,
        "is corrupt: schema version -5 is no version of tunedreduce's");
}

// `--db 'file:x.db?mode=rwc'` was opened as an SQLite URI: it is the file of that name.
TEST(OpenFailures, APathThatBeginsWithFileIsAFileNotAUri) {
  TempDir dir;
  const fs::path here = fs::current_path();
  fs::current_path(dir.path());
  {
    Database db = Database::open_writer("file:x.db?mode=memory");
    db.upsert_device(test::h100());
  }
  EXPECT_TRUE(fs::exists(dir / "file:x.db?mode=memory"));
  EXPECT_FALSE(fs::exists(dir / "x.db"));
  EXPECT_EQ(Database::open_reader("file:x.db?mode=memory").counts().devices, 1);
  fs::current_path(here);
}

}  // namespace
}  // namespace tunedreduce::db
