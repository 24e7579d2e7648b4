#pragma once
// Helpers shared by the db tests: temporary folders, sample records, child processes.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/device_fingerprint.hpp"
#include "db/bench.hpp"
#include "db/database.hpp"

namespace tunedreduce::db::test {

/// A fresh folder under the system temp dir, removed (permissions restored first) at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

DeviceFingerprint h100();
DeviceFingerprint h200();
RunInfo run_info();
/// An ok measurement of \p kernel_id at \p n with median \p median_us.
Measurement measurement(std::int64_t run, std::int64_t device, const std::string& kernel_id,
                        std::uint64_t n, double median_us, DType dtype = DType::f32,
                        Op op = Op::sum);

/// The lab's bench run information: tool 0.3.0 over /lab/tune.db, 5 repeats.
BenchRunInfo lab_bench_info();

/// A verified CUB bench result of \p op over \p dtype at 2^20 elements with median \p median_us.
BenchResult cub_bench_result(DType dtype, Op op, double median_us);
/// cub_bench_result of wide_sum.
BenchResult wide_sum_bench_result(DType dtype, double median_us);

void write_file(const std::filesystem::path& p, const std::string& bytes);
std::string read_file(const std::filesystem::path& p);
std::filesystem::path fixture(const std::string& name);  // tests/data/db/NAME
/// Copies a fixture into \p dir and returns the copy's path.
std::filesystem::path copy_fixture(const std::string& name, const TempDir& dir);

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out, err;
};
/// Runs \p argv (argv[0] is a path) to completion, capturing stdout and stderr.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env = {});

/// A child that keeps running until killed; its stdout is readable line by line.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv);
  ~Child();  // kills with SIGKILL if still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  /// Reads one line of stdout (without the newline); empty optional on EOF or timeout.
  std::optional<std::string> read_line(int timeout_ms = 20000);
  void kill(int sig);
  /// Waits for exit; exit code or 128 + signal.
  int wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  bool waited_ = false;
};

/// Path of the helper binary (tests/db/writer_helper.cpp).
std::string writer_helper();

/// True when running as root, where permission bits do not stop writes.
bool running_as_root();
/// Runs \p fn in a forked child that first drops to uid/gid 65534 (nobody); returns fn's value
/// (0..255) or -1 when privileges could not be dropped.
int run_as_nobody(int (*fn)(const std::filesystem::path&), const std::filesystem::path& arg);

}  // namespace tunedreduce::db::test
