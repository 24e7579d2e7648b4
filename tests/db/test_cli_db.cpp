// `tunedreduce db ...` as a person runs it: output, messages and exit codes (docs/database.md).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "common/exit_codes.hpp"
#include "common/json.hpp"
#include "common/printable.hpp"
#include "db/database.hpp"
#include "test_util.hpp"

namespace tunedreduce::db {
namespace {

namespace fs = std::filesystem;
using test::ProcessResult;
using test::TempDir;

ProcessResult cli(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
  args.insert(args.begin(), TR_CLI);
  // A clean location environment unless the test sets one.
  std::vector<std::string> e = env;
  for (const char* name : {"TUNEDREDUCE_DB", "XDG_DATA_HOME"}) {
    bool set = false;
    for (const auto& kv : env) set |= kv.rfind(std::string(name) + "=", 0) == 0;
    if (!set) e.push_back(std::string(name) + "=");
  }
  return test::run_process(args, e);
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1))
    ++n;
  return n;
}

const std::string real_id = "warp_shuffle.b256.u4.two_pass.f32.sum";

void make_db(const fs::path& path, const std::string& name, const std::string& kernel_id,
             double median) {
  Database db = Database::open_writer(path);
  DeviceFingerprint fp = test::h100();
  fp.name = name;
  const auto dev = db.upsert_device(fp);
  const auto run = db.begin_run(test::run_info());
  const auto m = db.insert_measurement(test::measurement(run, dev, kernel_id, 4096, median));
  Winner w;
  w.dtype = DType::f32;
  w.n_lo = 1;
  w.n_hi = 1 << 20;
  w.kernel_id = kernel_id;
  w.measurement_id = m;
  w.run_id = run;
  db.replace_winners(dev, DType::f32, Op::sum, std::vector<Winner>{w});
  db.end_run(run, RunStatus::finished);
}

TEST(CliDb, MissingDatabaseSaysNoDatabaseOnceAndCreatesNothing) {
  TempDir dir;
  const auto path = dir / "none.db";
  // migrate too: a typo'd --db is not migrated into an empty database.
  for (const char* action : {"info", "check", "export", "migrate"}) {
    ProcessResult r = cli({"db", action, "--db", path.string()});
    EXPECT_EQ(r.exit_code, exit_code::db_unusable) << action;
    EXPECT_EQ(count(r.err, "no database"), 1u) << r.err;
    EXPECT_NE(r.err.find(quoted(path)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("from --db"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// A fresh account has no ~/.local/share/tunedreduce: import creates it (as tune does), and
// migrate says there is nothing to migrate, naming where the location came from.
TEST(CliDb, AFreshAccountImportsIntoItsDefaultLocation) {
  TempDir dir;
  make_db(dir / "src.db", "GPU", real_id, 5);
  ASSERT_EQ(cli({"db", "export", "--db", (dir / "src.db").string(), "-o",
                 (dir / "x.json").string()})
                .exit_code,
            0);
  const std::string home = "HOME=" + (dir / "home").string();
  fs::create_directory(dir / "home");
  ProcessResult r = cli({"db", "migrate"}, {home});
  EXPECT_EQ(r.exit_code, exit_code::db_unusable) << r.err;
  EXPECT_NE(r.err.find("no database"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("came from $HOME"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir / "home"));
  r = cli({"db", "import", (dir / "x.json").string()}, {home});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const fs::path made = dir / "home" / ".local" / "share" / "tunedreduce" / "tune.db";
  EXPECT_TRUE(fs::is_regular_file(made));
  r = cli({"db", "info"}, {home});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(made.string()), std::string::npos) << r.out;
  r = cli({"db", "migrate"}, {home});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("already current"), std::string::npos) << r.out;
}

// One file by two names is given twice to merge, as to deploy: a usage error, no output file.
TEST(CliDb, MergeRefusesAFileGivenTwice) {
  TempDir dir;
  make_db(dir / "a.db", "GPU", real_id, 5);
  const std::string a = (dir / "a.db").string(), dotted = (dir / "." / "a.db").string();
  ProcessResult r = cli({"db", "merge", "--into", (dir / "out.db").string(), a, dotted});
  EXPECT_EQ(r.exit_code, exit_code::usage) << r.err;
  EXPECT_NE(r.err.find("tunedreduce db merge: error: the input " + dotted +
                       " is given twice (the same file as the input " + a + ")"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.db"));
}

TEST(CliDb, LocationComesFromTheEnvironment) {
  TempDir dir;
  make_db(dir / "env.db", "GPU", real_id, 5);
  ProcessResult r = cli({"db", "info"}, {"TUNEDREDUCE_DB=" + (dir / "env.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(from $TUNEDREDUCE_DB)"), std::string::npos) << r.out;
  r = cli({"db", "info"}, {"XDG_DATA_HOME=" + dir.path().string()});
  EXPECT_EQ(r.exit_code, exit_code::db_unusable);
  EXPECT_NE(r.err.find((dir / "tunedreduce" / "tune.db").string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("$XDG_DATA_HOME"), std::string::npos) << r.err;
}

TEST(CliDb, BadFilesMapToTheirExitCodes) {
  struct Case {
    const char* fixture;
    const char* action;
    int code;
    const char* words;  // in stderr
  };
  const Case cases[] = {
      {"empty.db", "info", exit_code::db_unusable, "empty file (0 bytes)"},
      {"not_sqlite.db", "info", exit_code::db_unusable, "not an SQLite database"},
      {"not_sqlite.db", "migrate", exit_code::db_unusable, "not an SQLite database"},
      {"other_app.db", "info", exit_code::db_unusable, "another application"},
      {"other_app_noid.db", "migrate", exit_code::db_unusable, "another application"},
      {"corrupt.db", "check", exit_code::db_unusable, "is corrupt"},
      {"corrupt.db", "export", exit_code::db_unusable, "is corrupt"},
      {"newer_incompatible.db", "info", exit_code::db_too_new, "needs readers of version 14"},
      {"newer_compatible_v14.db", "migrate", exit_code::db_too_new, "never written"},
      {"schema_v0.db", "info", exit_code::db_needs_migration, "tunedreduce db migrate"},
      {"schema_v1.db", "info", exit_code::db_needs_migration, "tunedreduce db migrate"},
      {"schema_v2.db", "info", exit_code::db_needs_migration, "tunedreduce db migrate"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.fixture) + " " + c.action);
    TempDir dir;
    const auto path = test::copy_fixture(c.fixture, dir);
    const std::string before = test::read_file(path);
    ProcessResult r = cli({"db", c.action, "--db", path.string()});
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    EXPECT_NE(r.err.find(quoted(path)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << r.err;
    EXPECT_EQ(test::read_file(path), before);  // nothing was changed
  }
}

TEST(CliDb, NewerCompatibleIsReadableAndOlderIsMigrated) {
  TempDir dir;
  const auto newer = test::copy_fixture("newer_compatible_v14.db", dir);
  ProcessResult r = cli({"db", "info", "--db", newer.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("version 14 (this binary: 13)"), std::string::npos) << r.out;
  // Version 3 lacks only the bench tables, the GPUs and the runs' provenance columns: readers
  // read it as it is, and migrate upgrades it; version 4 lacks only the latter.
  const auto v4 = test::copy_fixture("schema_v4.db", dir);
  const std::string v4_before = test::read_file(v4);
  r = cli({"db", "info", "--db", v4.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("version 4 (this binary: 13)"), std::string::npos) << r.out;
  EXPECT_EQ(test::read_file(v4), v4_before);
  r = cli({"db", "export", "--db", v4.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"gpus\": []"), std::string::npos);
  EXPECT_EQ(test::read_file(v4), v4_before);
  r = cli({"db", "migrate", "--db", v4.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("schema version 4 -> 13"), std::string::npos) << r.out;
  const auto v3 = test::copy_fixture("schema_v3.db", dir);
  const std::string v3_before = test::read_file(v3);
  r = cli({"db", "info", "--db", v3.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("version 3 (this binary: 13)"), std::string::npos) << r.out;
  EXPECT_EQ(test::read_file(v3), v3_before);
  r = cli({"db", "migrate", "--db", v3.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("schema version 3 -> 13"), std::string::npos) << r.out;
  const auto old = test::copy_fixture("schema_v0.db", dir);
  r = cli({"db", "migrate", "--db", old.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("schema version 0 -> 13"), std::string::npos) << r.out;
  r = cli({"db", "info", "--db", old.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 measurements"), std::string::npos) << r.out;
  r = cli({"db", "check", "--db", old.string(), "--full"});
  EXPECT_EQ(r.out.find("FAILED"), std::string::npos) << r.out;
}

TEST(CliDb, MigrateNamesRowsThatBreakTheRowRulesAndExits9) {
  TempDir dir;
  const auto v4 = test::copy_fixture("schema_v4.db", dir);
  {
    // A time of zero breaks no CHECK of the old schema with the checks off, nor quick_check.
    Connection c = Connection::open(v4, OpenMode::read_write);
    c.exec("PRAGMA ignore_check_constraints = ON");
    c.exec("UPDATE measurements SET median_us = 0 WHERE id = (SELECT min(id) FROM measurements)");
  }
  for (const char* done : {"schema version 4 -> 13", "(already current)"}) {
    const ProcessResult r = cli({"db", "migrate", "--db", v4.string()});
    EXPECT_EQ(r.exit_code, exit_code::db_check_failed) << r.err;
    EXPECT_NE(r.out.find(done), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("median_us = 0: must be more than 0 microseconds"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("1 row(s) break the row rules"), std::string::npos) << r.err;
  }
}

TEST(CliDb, AWriterHoldingTheLockPastTheTimeoutGivesExit4) {
  TempDir dir;
  const auto path = dir / "tune.db";
  make_db(dir / "src.db", "GPU", real_id, 5);
  ASSERT_EQ(cli({"db", "export", "--db", (dir / "src.db").string(), "-o",
                 (dir / "x.json").string()})
                .exit_code,
            0);
  test::Child holder({test::writer_helper(), "hold-lock", path.string(), "20"});
  ASSERT_EQ(holder.read_line(), std::optional<std::string>("READY"));
  const auto t0 = std::chrono::steady_clock::now();
  ProcessResult r = cli(
      {"db", "import", (dir / "x.json").string(), "--db", path.string(), "--busy-timeout", "0.3"});
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.exit_code, exit_code::db_busy) << r.err;
  EXPECT_NE(r.err.find(quoted(path)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("busy timeout (0.3 s)"), std::string::npos) << r.err;
  EXPECT_LT(took, std::chrono::seconds(10));
  holder.kill(SIGTERM);
  holder.wait();
  r = cli({"db", "import", (dir / "x.json").string(), "--db", path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliDb, ReadOnlyFileAndFolderGiveExit7) {
  TempDir dir;
  const auto folder = dir / "data";
  fs::create_directory(folder);
  const auto path = folder / "tune.db";
  make_db(path, "GPU", real_id, 5);
  make_db(dir / "src.db", "Other GPU", real_id, 4);
  ASSERT_EQ(cli({"db", "export", "--db", (dir / "src.db").string(), "-o",
                 (dir / "x.json").string()})
                .exit_code,
            0);
  std::vector<std::string> prefix;
  if (test::running_as_root()) {
    // Root ignores permission bits: run the CLI as uid 65534, which owns the files.
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    ASSERT_EQ(::chown(folder.c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chmod((dir / "x.json").c_str(), 0644), 0);
    prefix = {test::writer_helper(), "as-nobody"};
    if (test::run_process({test::writer_helper(), "as-nobody", TR_CLI, "db", "--help"}).exit_code !=
        0)
      GTEST_SKIP() << "running as root, and uid 65534 cannot run " << TR_CLI
                   << " (no CAP_SETUID, or a folder on its path is not searchable)";
  }
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = prefix;
    argv.push_back(TR_CLI);
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, {"TUNEDREDUCE_DB="});
  };
  const std::vector<std::string> import = {"db", "import", (dir / "x.json").string(), "--db",
                                           path.string()};
  ::chmod(path.c_str(), 0444);
  ProcessResult r = run(import);
  EXPECT_EQ(r.exit_code, exit_code::db_readonly) << r.err;
  EXPECT_NE(r.err.find("read-only"), std::string::npos) << r.err;
  EXPECT_EQ(run({"db", "info", "--db", path.string()}).exit_code, 0);
  ::chmod(path.c_str(), 0644);
  // The reader above, running while the file was 0444, made a -wal with the same mode (SQLite
  // copies it): the writer names that file rather than failing inside SQLite.
  if (fs::exists(path.string() + "-wal")) {
    r = run(import);
    EXPECT_EQ(r.exit_code, exit_code::db_readonly) << r.err;
    EXPECT_NE(r.err.find("' is read-only; restore its write permission"), std::string::npos)
        << r.err;
  }
  // The readers' -wal and -shm are empty (nothing was written since the last checkpoint); with
  // them gone a writer must create them, which a read-only folder forbids. (With writable ones
  // present, SQLite can and does write in a read-only folder.)
  for (const char* side : {"-wal", "-shm"}) fs::remove(path.string() + side);
  ::chmod(folder.c_str(), 0555);
  r = run(import);
  EXPECT_EQ(r.exit_code, exit_code::db_readonly) << r.err;
  EXPECT_NE(r.err.find("folder"), std::string::npos) << r.err;
  ::chmod(folder.c_str(), 0755);
  r = run(import);  // the same user, the same command, now allowed
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliDb, HostileStringsArePrintedVerbatimAndSurviveExportImportMerge) {
  TempDir dir;
  const std::string hostile =
      "GPU \"x\"'); DROP TABLE devices; --\n<script>alert('x')</script> \xc3\xa9\xf0\x9f\x9a\x80";
  const auto a = dir / "it's a \"db\"; rm -rf ~.db";
  make_db(a, hostile, real_id, 5);
  make_db(dir / "b.db", "plain", "smem.b256.u8.dynamic.single_pass.f32.sum", 4);
  ProcessResult r = cli({"db", "info", "--db", a.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Shown with its control characters escaped (the newline as \x0a): no escape sequence from a
  // database reaches the terminal.
  EXPECT_NE(r.out.find(printable(hostile, 400)), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(hostile), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(a.string()), std::string::npos);
  r = cli({"db", "export", "--db", a.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json doc = Json::parse(r.out);
  EXPECT_EQ(doc.find("devices")->as_array()[0].find("name")->as_string(), hostile);
  test::write_file(dir / "a.json", r.out);
  r = cli({"db", "import", (dir / "a.json").string(), "--db", (dir / "c.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(cli({"db", "info", "--db", (dir / "c.db").string()}).out.find(printable(hostile, 400)),
            std::string::npos);

  r = cli({"db", "merge", "--into", (dir / "m1.db").string(), a.string(), (dir / "b.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = cli({"db", "merge", "--into", (dir / "m2.db").string(), (dir / "b.db").string(), a.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::read_file(dir / "m1.db"), test::read_file(dir / "m2.db"));
  r = cli({"db", "info", "--db", (dir / "m1.db").string()});
  EXPECT_NE(r.out.find(a.string() + " (merge)"), std::string::npos) << r.out;
  r = cli({"db", "merge", "--into", (dir / "m1.db").string(), a.string()});
  EXPECT_EQ(r.exit_code, exit_code::usage);
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
}

TEST(CliDb, ASkippedRowsTextIsEscapedOnceNotTwice) {
  TempDir dir;
  make_db(dir / "a.db", "GPU", real_id, 5);
  {
    // A host over the 256-byte limit that starts with an escape sequence.
    Connection c = Connection::open(dir / "a.db", OpenMode::read_write);
    c.exec("UPDATE runs SET host = char(27) || '[31m' || replace(hex(zeroblob(300)), '00', 'h')");
  }
  for (const char* action : {"export", "merge"}) {
    std::vector<std::string> args = {"db", action};
    if (std::string(action) == "export") {
      args.insert(args.end(), {"--db", (dir / "a.db").string(), "-o", (dir / "a.json").string()});
    } else {
      args.insert(args.end(), {"--into", (dir / "m.db").string(), (dir / "a.db").string()});
    }
    const ProcessResult r = cli(args);
    EXPECT_EQ(r.exit_code, exit_code::db_check_failed) << action << ": " << r.err;
    // The value as db check shows it: the escape character as \x1b, once.
    EXPECT_NE(r.err.find("host = '\\x1b[31mhhh"), std::string::npos) << action << ": " << r.err;
    EXPECT_EQ(r.err.find("\\\\x1b"), std::string::npos) << action << ": " << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << action << ": " << r.err;
  }
}

TEST(CliDb, EscapesFromATuneTomlAndANumberOutOfRangeAreNamedNotPassedOn) {
  TempDir dir;
  // An escape sequence in a tune.toml key reaches the error message escaped.
  test::write_file(dir / "t.toml", "[space]\n\"\\u001b[31mred\" = 1\n");
  ProcessResult r = cli({"tune", "--dry-run", "--config", (dir / "t.toml").string()});
  EXPECT_EQ(r.exit_code, exit_code::usage) << r.err;
  EXPECT_NE(r.err.find("unknown key '\\x1b[31mred'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  // A time past a double's range in an export is refused, naming where it is.
  make_db(dir / "a.db", "GPU", real_id, 5);
  r = cli({"db", "export", "--db", (dir / "a.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::size_t at = r.out.find("\"median_us\": ");
  ASSERT_NE(at, std::string::npos);
  std::string text = r.out;
  text.replace(at, text.find_first_of(",\n", at) - at, "\"median_us\": 1e999");
  test::write_file(dir / "big.json", text);
  r = cli({"db", "import", (dir / "big.json").string(), "--db", (dir / "b.db").string()});
  EXPECT_EQ(r.exit_code, exit_code::failure) << r.err;
  EXPECT_NE(r.err.find("number out of range"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "b.db"));
}

TEST(CliDb, InfoAsImmutableSaysAFileInWalModeIsOne) {
  TempDir dir;
  make_db(dir / "a.db", "GPU", real_id, 5);  // the writer leaves it in WAL mode
  for (const char* flag : {"--db", "--immutable"}) {
    std::vector<std::string> args = {"db", "info", "--db", (dir / "a.db").string()};
    if (std::string(flag) == "--immutable") args.push_back(flag);
    const ProcessResult r = cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("journal mode wal"), std::string::npos) << flag << ": " << r.out;
  }
}

TEST(CliDb, MergeNamesTheWinnerWhoseEvidenceRowWasDeleted) {
  TempDir dir;
  make_db(dir / "a.db", "GPU", real_id, 5);
  std::string device_key;
  std::int64_t evidence = 0;
  {
    Database db = Database::open_reader(dir / "a.db");
    device_key = db.devices().at(0).key;
    evidence = db.winners().at(0).measurement_id;
  }
  // As the sqlite3 shell does it: foreign keys off, the winner's measurement row deleted.
  {
    Connection c = Connection::open(dir / "a.db", OpenMode::read_write);
    c.exec("PRAGMA foreign_keys = OFF");
    c.exec("DELETE FROM measurements WHERE id = (SELECT measurement_id FROM winners)");
  }
  ProcessResult r =
      cli({"db", "merge", "--into", (dir / "m.db").string(), (dir / "a.db").string()});
  // The winner is skipped by name (exit 9), the rest merged: nothing corrupt is read as data.
  EXPECT_EQ(r.exit_code, exit_code::db_check_failed) << r.err;
  EXPECT_EQ(r.err.find("map::at"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped " + quoted(dir / "a.db") + ": winners id 1: its evidence " +
                       "(measurement id " + std::to_string(evidence) + ") is skipped or missing"),
            std::string::npos)
      << r.err << " (device " << device_key << ")";
  EXPECT_TRUE(fs::exists(dir / "m.db"));
}

TEST(CliDb, CheckListsKernelIdsThisBinaryLacks) {
  TempDir dir;
  make_db(dir / "good.db", "GPU", real_id, 5);
  ProcessResult r = cli({"db", "check", "--db", (dir / "good.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("all known to this binary"), std::string::npos) << r.out;
  make_db(dir / "old.db", "GPU", "retired_family.b64.two_pass.f32.sum", 5);
  r = cli({"db", "check", "--db", (dir / "old.db").string()});
  EXPECT_EQ(r.exit_code, exit_code::db_check_failed) << r.out;
  EXPECT_NE(r.out.find("retired_family.b64.two_pass.f32.sum (2 rows)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(quoted((dir / "old.db"))), std::string::npos) << r.err;
}

// Schema version 12: `db info` counts the segmented winners (per device and L2 mode), `db check`
// knows the segmented registry's kernel ids and names the segmented rows it cannot use.
TEST(CliDb, InfoCountsSegmentedWinnersAndCheckNamesTheBadOnes) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v12.db", dir);
  ProcessResult r = cli({"db", "info", "--db", path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("7 measurements, 1 winners, 5 segmented winners, 0 bench runs"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("7 measurements, 1 winners (1 cold-L2, 0 warm-L2), 5 segmented winners (4 "
                       "cold-L2, 1 warm-L2)"),
            std::string::npos)
      << r.out;
  r = cli({"db", "check", "--db", path.string(), "--full"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("all known to this binary"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("segmented:   0 overlapping (0 cold-L2, 0 warm-L2), 0 without ok "
                       "segmented evidence of their L2 mode and layout\n"),
            std::string::npos)
      << r.out;
  // The same facts as JSON, for scripts.
  r = cli({"db", "info", "--db", path.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  {
    const Json j = Json::parse(r.out);
    EXPECT_EQ(j.find("database")->as_string(), path.string());
    EXPECT_EQ(j.find("schema_version")->as_int(), 12);  // the fixture's
    const Json& rows = *j.find("rows");
    EXPECT_EQ(rows.find("measurements")->as_int(), 7);
    EXPECT_EQ(rows.find("winners")->as_int(), 1);
    EXPECT_EQ(rows.find("segmented_winners")->as_int(), 5);
    EXPECT_EQ(rows.find("bench_runs")->as_int(), 0);
    const Json::Array& devs = j.find("devices")->as_array();
    ASSERT_EQ(devs.size(), 1u);
    EXPECT_EQ(devs[0].find("measurements")->as_int(), 7);
    EXPECT_EQ(devs[0].find("winners")->find("cold")->as_int(), 1);
    EXPECT_EQ(devs[0].find("segmented_winners")->find("cold")->as_int(), 4);
    EXPECT_EQ(devs[0].find("segmented_winners")->find("warm")->as_int(), 1);
    EXPECT_FALSE(j.find("runs")->as_array().empty());
    EXPECT_TRUE(j.find("sources")->is_array());
  }
  // An older file has none.
  const auto v11 = test::copy_fixture("schema_v11.db", dir);
  r = cli({"db", "info", "--db", v11.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" 2 winners, 0 segmented winners, "), std::string::npos) << r.out;
  // A layout this binary lacks, and a copy of the warm row (5) inside its rectangle.
  {
    Connection c = Connection::open(path, OpenMode::read_write);
    c.exec(
        "PRAGMA ignore_check_constraints = ON;"
        "UPDATE segmented_winners SET layout = 'strided' WHERE id = 1;"
        "INSERT INTO segmented_winners (device_id, dtype, op, l2_mode, layout, size_lo, size_hi,"
        " count_lo, count_hi, kernel_id, measurement_id, driver_version, runtime_version)"
        " SELECT device_id, dtype, op, l2_mode, layout, 5, 6, 5, 6, kernel_id, measurement_id,"
        " driver_version, runtime_version FROM segmented_winners WHERE id = 5;");
  }
  r = cli({"db", "check", "--db", path.string()});
  EXPECT_EQ(r.exit_code, exit_code::db_check_failed) << r.out << r.err;
  EXPECT_NE(r.out.find("segmented:   1 overlapping (0 cold-L2, 1 warm-L2), 0 without ok "
                       "segmented evidence of their L2 mode and layout\n  segmented_winners ids: "
                       "5 6\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  segmented_winners id 1: layout = 'strided': is not a layout of segments "
                       "(fixed, offsets32, offsets64)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find(quoted(path)), std::string::npos) << r.err;
}

// `db check --json`: the text form's facts as one object, the same exit codes, every finding
// named; --library (whose check prints text) is refused beside it.
TEST(CliDb, CheckAsJsonNamesEveryFindingWithTheTextFormsExitCode) {
  TempDir dir;
  make_db(dir / "good.db", "GPU", real_id, 5);
  ProcessResult r = cli({"db", "check", "--db", (dir / "good.db").string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  {
    const Json j = Json::parse(r.out);
    EXPECT_EQ(j.find("database")->as_string(), (dir / "good.db").string());
    EXPECT_EQ(j.find("integrity_check")->as_string(), "quick_check");
    EXPECT_TRUE(j.find("sound")->as_bool());
    EXPECT_TRUE(j.find("ok")->as_bool());
    EXPECT_TRUE(j.find("unknown_kernel_ids")->as_array().empty());
    EXPECT_TRUE(j.find("row_findings")->as_array().empty());
    EXPECT_EQ(j.find("winners")->find("overlapping")->find("cold")->as_int(), 0);
    EXPECT_EQ(j.find("binary_schema_version")->as_int(), j.find("schema_version")->as_int());
  }
  r = cli({"db", "check", "--db", (dir / "good.db").string(), "--json", "--full"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out).find("integrity_check")->as_string(), "integrity_check");
  // A retired kernel id and a row that breaks a row rule: exit 9 as the text form, both named.
  make_db(dir / "old.db", "GPU", "retired_family.b64.two_pass.f32.sum", 5);
  {
    Connection c = Connection::open(dir / "old.db", OpenMode::read_write);
    c.exec("PRAGMA ignore_check_constraints = ON; UPDATE winners SET n_lo = -1 WHERE id = 1;");
  }
  const ProcessResult text = cli({"db", "check", "--db", (dir / "old.db").string()});
  r = cli({"db", "check", "--db", (dir / "old.db").string(), "--json"});
  EXPECT_EQ(r.exit_code, exit_code::db_check_failed) << r.out << r.err;
  EXPECT_EQ(r.exit_code, text.exit_code);
  EXPECT_NE(r.err.find(quoted(dir / "old.db")), std::string::npos) << r.err;
  {
    const Json j = Json::parse(r.out);
    EXPECT_FALSE(j.find("ok")->as_bool());
    const Json::Array& unknown = j.find("unknown_kernel_ids")->as_array();
    ASSERT_EQ(unknown.size(), 1u);
    EXPECT_EQ(unknown[0].find("id")->as_string(), "retired_family.b64.two_pass.f32.sum");
    EXPECT_EQ(unknown[0].find("rows")->as_int(), 2);
    const Json::Array& rows = j.find("row_findings")->as_array();
    ASSERT_FALSE(rows.empty()) << r.out;
    EXPECT_EQ(rows[0].find("table")->as_string(), "winners");
    EXPECT_EQ(rows[0].find("id")->as_int(), 1);
    EXPECT_EQ(rows[0].find("column")->as_string(), "n_lo");
    EXPECT_EQ(rows[0].find("value")->as_string(), "-1");
    EXPECT_NE(text.out.find(rows[0].find("why")->as_string()), std::string::npos) << text.out;
  }
  r = cli({"db", "check", "--db", (dir / "good.db").string(), "--json", "--library", "x.so"});
  EXPECT_EQ(r.exit_code, exit_code::usage) << r.err;
  EXPECT_NE(r.err.find("--json and --library exclude each other"), std::string::npos) << r.err;
}

TEST(CliDb, HelpListsOnlyWhatAUserTypes) {
  // Positional arguments are named in the usage line, not listed as options; merge has no --db.
  ProcessResult r = cli({"db", "merge", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--into"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--inputs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--db"), std::string::npos) << r.out;
  r = cli({"db", "import", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("import FILE"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--file"), std::string::npos) << r.out;
  TempDir dir;
  r = cli({"db", "merge", "--db", "x.db", "--into", (dir / "m.db").string(), "a.db"});
  EXPECT_EQ(r.exit_code, exit_code::usage);
  EXPECT_NE(r.err.find("--db"), std::string::npos) << r.err;
}

TEST(CliDb, UsageErrorsGiveExit2) {
  TempDir dir;
  EXPECT_EQ(cli({"db"}).exit_code, exit_code::usage);
  EXPECT_EQ(cli({"db", "frobnicate"}).exit_code, exit_code::usage);
  EXPECT_EQ(cli({"db", "info", "--bogus"}).exit_code, exit_code::usage);
  EXPECT_EQ(cli({"db", "import", "--db", (dir / "x.db").string()}).exit_code, exit_code::usage);
  EXPECT_EQ(cli({"db", "merge", (dir / "x.db").string()}).exit_code, exit_code::usage);
  EXPECT_EQ(cli({"db", "import", "--busy-timeout", "-1", "f.json"}).exit_code, exit_code::usage);
  ProcessResult r = cli({"db", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("merge --into OUT"), std::string::npos);
  test::write_file(dir / "bad.json", "{\"format\": \"tunedreduce-db-export\",\n  oops}");
  r = cli({"db", "import", (dir / "bad.json").string(), "--db", (dir / "x.db").string()});
  EXPECT_EQ(r.exit_code, exit_code::failure);
  EXPECT_NE(r.err.find("not valid JSON: 2:3"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.db"));  // nothing created for a bad import file
}

}  // namespace
}  // namespace tunedreduce::db
