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

/// An ok measurement of the segmented kernel \p kernel_id ("seg.*", schema version 12) at \p n
/// elements in segments of \p segment_size, with median \p median_us, its parameters stored as
/// kernels::segmented::stored_params stores them (family "seg.FAMILY", block, unroll = the lanes
/// per segment, smem none, finish two_pass for split and single_pass otherwise); its dtype and
/// op are the id's.
Measurement segmented_measurement(std::int64_t run, std::int64_t device,
                                  const std::string& kernel_id, std::uint64_t n,
                                  std::uint64_t segment_size, double median_us,
                                  L2Mode mode = L2Mode::cold);
/// A segmented winner of \p kernel_id's dtype, op and layout over sizes \p size_lo..size_hi and
/// counts \p count_lo..count_hi, with evidence \p measurement_id, CUDA 13.0.
SegmentedWinner segmented_winner(const std::string& kernel_id, std::int64_t measurement_id,
                                 std::uint64_t size_lo, std::uint64_t size_hi,
                                 std::uint64_t count_lo, std::uint64_t count_hi,
                                 L2Mode mode = L2Mode::cold);

/// What write_segmented_sample wrote: the ids of its device, run and segmented measurements.
struct SegmentedSample {
  std::int64_t device = 0, run = 0;
  std::int64_t thread4 = 0, group64 = 0, block4096 = 0, group4096 = 0, offsets = 0, warm = 0;
};
/// Through the writers, into \p db: the device h100() with a GPU, one finished run, a
/// whole-array f32 sum measurement and its winner over 1..2^30, and segmented rows: f32 sum
/// fixed cold measured at 2^20 elements in segments of 4 (seg.thread.b256.v4, 9 us), 64
/// (seg.group.b256.g8.v4, 8 us) and 4096 (seg.block.b256.v4, 7 us; seg.group.b256.g8.v4,
/// 7.5 us), with winners thread over sizes 1..8, group over 9..512 (counts 1..2^40) and block
/// over 513..2^30 (counts 1..2^30, the group's 4096 its runner-up); f64 max offsets32 cold at
/// 2^22 in segments of 1024 (seg.block.b256.v2, 20 us) winning sizes and counts 1..2^30; f32 sum
/// fixed warm at 2^20 in segments of 1024 (seg.group.b256.g32.v4, 4 us) winning 1..2^30 x
/// 1..2^30. tests/data/db/schema_v12.db is this sample.
SegmentedSample write_segmented_sample(Database& db);

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
