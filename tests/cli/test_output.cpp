// Nothing lost on a failed write, nothing endless on bad input: every output of the CLI is checked
// to the end (standard output, -o files, exports, bench JSON) and every input it reads whole is
// bounded. Each case runs the real binary with its standard output on /dev/full, on a pipe whose
// reader is gone, or under a file-size limit (RLIMIT_FSIZE) that makes a regular file "full".

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/exit_codes.hpp"
#include "tests/db/test_util.hpp"

namespace tunedreduce {
namespace {

namespace fs = std::filesystem;
using db::test::read_file;
using db::test::TempDir;

struct Result {
  int exit_code = -1;
  std::string err;
  double seconds = 0;
};

enum class Stdout { dev_full, dev_null, broken_pipe };

/// Runs the CLI with \p args, its standard output as \p where, SIGPIPE and SIGXFSZ ignored (so a
/// write fails with EPIPE or EFBIG, as in a process that handles them), and files limited to
/// \p fsize_limit bytes when given.
Result run(const std::vector<std::string>& args, Stdout where,
           std::optional<rlim_t> fsize_limit = std::nullopt) {
  TempDir tmp;
  const fs::path err_path = tmp / "stderr";
  std::vector<std::string> all{TR_CLI};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  int pipe_fds[2] = {-1, -1};
  if (where == Stdout::broken_pipe) {
    if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
    close(pipe_fds[0]);  // nobody will ever read
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    if (fsize_limit) {
      rlimit rl{*fsize_limit, *fsize_limit};
      setrlimit(RLIMIT_FSIZE, &rl);
    }
    int out = where == Stdout::broken_pipe
                  ? pipe_fds[1]
                  : open(where == Stdout::dev_full ? "/dev/full" : "/dev/null", O_WRONLY);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (pipe_fds[1] >= 0) close(pipe_fds[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  Result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = read_file(err_path);
  return r;
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

/// A copy of a recorded database in rollback-journal mode: reading it writes nothing (a WAL
/// file's reader creates -shm, which a file-size limit would refuse before the output is tried).
fs::path copy_of(const char* recorded, const fs::path& p) {
  fs::copy_file(recorded, p);
  sqlite3* c = nullptr;
  if (sqlite3_open(p.c_str(), &c) != SQLITE_OK ||
      sqlite3_exec(c, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr) != SQLITE_OK)
    throw std::runtime_error("cannot convert " + p.string());
  sqlite3_close(c);
  return p;
}

fs::path sample(const TempDir& dir) {
  return copy_of(TR_TEST_DATA "/h100-sample.db", dir / "sample.db");
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Output, AFullStandardOutputIsAnIoErrorForEveryCommand) {
  TempDir dir;
  const std::string db = sample(dir).string();
  const std::vector<std::vector<std::string>> commands{
      {"list"},
      {"list", "--json"},
      {"--help"},
      {"--version"},
      {"db", "info", "--db", db},
      {"db", "export", "--db", db},
      {"db", "export", "--db", db, "-o", "-"},
      {"report", "best", "--db", db},
      {"report", "variants", "--db", db, "--format", "html"},
      {"tune", "--dry-run", "--config", TR_TEST_DATA "/h100-sample.toml"},
  };
  for (const auto& args : commands) {
    const Result r = run(args, Stdout::dev_full);
    EXPECT_EQ(r.exit_code, exit_code::io)
        << args[0] << " " << (args.size() > 1 ? args[1] : "") << "\n"
        << r.err;
    EXPECT_HAS(r.err, "cannot write to standard output: No space left on device");
    // The same command with a working standard output succeeds: the failure is the write's.
    EXPECT_EQ(run(args, Stdout::dev_null).exit_code, 0) << args[0];
  }
}

TEST(Output, AStandardOutputWhoseReaderIsGoneIsAnIoError) {
  TempDir dir;
  // Large enough to fill the pipe's buffer, and small.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"list"}, {"db", "export", "--db", sample(dir).string()}, {"--version"}}) {
    const Result r = run(args, Stdout::broken_pipe);
    EXPECT_EQ(r.exit_code, exit_code::io) << args[0] << "\n" << r.err;
    EXPECT_HAS(r.err, "cannot write to standard output: Broken pipe");
  }
}

TEST(Output, AFileOnAFullDeviceIsAnIoErrorAndNothingClaimsSuccess) {
  TempDir dir;
  const std::string db = sample(dir).string();
  Result r = run({"db", "export", "--db", db, "-o", "/dev/full"}, Stdout::dev_null);
  EXPECT_EQ(r.exit_code, exit_code::io) << r.err;
  EXPECT_HAS(r.err,
             "tunedreduce db export: error: cannot write '/dev/full': No space left on device");
  EXPECT_EQ(r.err.find("exported"), std::string::npos) << r.err;
  r = run({"report", "best", "--db", db, "-o", "/dev/full"}, Stdout::dev_null);
  EXPECT_EQ(r.exit_code, exit_code::io) << r.err;
  EXPECT_HAS(r.err, "cannot write '/dev/full': No space left on device");
}

TEST(Output, AFileThatCannotBeWrittenCompletelyLeavesNothingPartialBehind) {
  TempDir dir;
  const std::string db = sample(dir).string();
  const fs::path out_dir = dir / "out";
  fs::create_directory(out_dir);
  const fs::path json = out_dir / "export.json", html = out_dir / "best.html";
  // A file-size limit of 4 KiB: every export and HTML report is larger, so the write fails
  // part-way (EFBIG) as on a full disk.
  Result r = run({"db", "export", "--db", db, "-o", json.string()}, Stdout::dev_null, 4096);
  EXPECT_EQ(r.exit_code, exit_code::io) << r.err;
  EXPECT_HAS(r.err, "cannot write '" + json.string() + "': File too large");
  r = run({"report", "best", "--db", db, "-o", html.string()}, Stdout::dev_null, 4096);
  EXPECT_EQ(r.exit_code, exit_code::io) << r.err;
  EXPECT_TRUE(files_in(out_dir).empty()) << "left behind: " << files_in(out_dir).front();

  // An earlier complete file survives a failed rewrite unchanged.
  ASSERT_EQ(run({"db", "export", "--db", db, "-o", json.string()}, Stdout::dev_null).exit_code, 0);
  const std::string before = read_file(json);
  ASSERT_GT(before.size(), 4096u);
  r = run({"db", "export", "--db", db, "-o", json.string()}, Stdout::dev_null, 4096);
  EXPECT_EQ(r.exit_code, exit_code::io) << r.err;
  EXPECT_EQ(read_file(json), before);
  EXPECT_EQ(files_in(out_dir), std::vector<std::string>{"export.json"});

  // A folder that does not exist, and a folder as the target.
  r = run({"report", "best", "--db", db, "-o", (dir / "no-such-folder" / "x.html").string()},
          Stdout::dev_null);
  EXPECT_EQ(r.exit_code, exit_code::io) << r.err;
  EXPECT_HAS(r.err, "No such file or directory");
  r = run({"db", "export", "--db", db, "-o", out_dir.string()}, Stdout::dev_null);
  EXPECT_EQ(r.exit_code, exit_code::io) << r.err;
  EXPECT_HAS(r.err, "it is a folder");
}

TEST(Output, DashOReplacesAReadOnlyFileAndASymbolicLinkNeverItsTarget) {
  TempDir dir;
  const std::string db = sample(dir).string();
  // A read-only file is replaced (docs/cli.md: its folder decides, as for any rename).
  const fs::path ro = dir / "ro.json";
  db::test::write_file(ro, "old");
  fs::permissions(ro, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  Result r = run({"db", "export", "--db", db, "-o", ro.string()}, Stdout::dev_null);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(ro).rfind("{", 0), 0u);
  // A symbolic link is replaced by the new file; its target is not written through.
  const fs::path target = dir / "target.txt", link = dir / "link.csv";
  db::test::write_file(target, "target");
  fs::create_symlink(target, link);
  r = run({"report", "best", "--db", db, "--format", "csv", "-o", link.string()}, Stdout::dev_null);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_NE(read_file(link), "target");
  EXPECT_EQ(read_file(target), "target");
}

TEST(Output, AMergeThatCannotBeWrittenLeavesNoFile) {
  TempDir dir;
  const std::string db = sample(dir).string();
  const fs::path out_dir = dir / "out";
  fs::create_directory(out_dir);
  const fs::path merged = out_dir / "merged.db";
  const fs::path h200 = copy_of(TR_TEST_DATA "/h200-sample.db", dir / "h200.db");
  Result r =
      run({"db", "merge", "--into", merged.string(), db, h200.string()}, Stdout::dev_null, 8192);
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.err, "tunedreduce db merge: error: ");
  EXPECT_TRUE(files_in(out_dir).empty()) << "left behind: " << files_in(out_dir).front();
  r = run({"db", "merge", "--into", merged.string(), db, h200.string()}, Stdout::dev_null);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(files_in(out_dir), std::vector<std::string>{"merged.db"});
}

TEST(Input, AConfigurationWithoutAnEndIsRefusedQuickly) {
  for (const char* endless : {"/dev/zero", "/dev/urandom"}) {
    const Result r = run({"tune", "--dry-run", "--config", endless}, Stdout::dev_null);
    EXPECT_EQ(r.exit_code, exit_code::usage) << endless << "\n" << r.err;
    EXPECT_HAS(r.err,
               std::string(endless) + ": more than 1048576 bytes, larger than a tune.toml may be");
    EXPECT_LT(r.seconds, 10) << endless;
  }
  // A regular file over the limit is refused from its size, before it is read.
  TempDir dir;
  const fs::path big = dir / "big.toml";
  db::test::write_file(big, std::string((1u << 20) + 1, '#'));
  const Result r = run({"tune", "--dry-run", "--config", big.string()}, Stdout::dev_null);
  EXPECT_EQ(r.exit_code, exit_code::usage) << r.err;
  EXPECT_HAS(r.err, "1048577 bytes is larger than a tune.toml may be (at most 1048576 bytes)");
}

TEST(Input, AnImportWithoutAnEndIsRefused) {
  TempDir dir;
  const fs::path into = dir / "into.db";
  const Result r =
      run({"db", "import", "--db", into.string(), "--file", "/dev/zero"}, Stdout::dev_null);
  EXPECT_EQ(r.exit_code, exit_code::failure) << r.err;
  EXPECT_HAS(r.err,
             "/dev/zero: more than 1073741824 bytes, larger than an export to import may be");
  EXPECT_LT(r.seconds, 30);
}

}  // namespace
}  // namespace tunedreduce
