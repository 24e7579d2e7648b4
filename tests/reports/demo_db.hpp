#pragma once
// Synthetic tuning databases for the report tests and for screenshots, written through the db
// API as a tuner would. The numbers follow a simple model of an H100 (132 SMs, 3352 GB/s
// theoretical, ~3190 GB/s attainable) and an H200: launch overhead plus bytes over a fraction of
// the attainable bandwidth that grows along the seeds' ladder, with ±1.5 % deterministic noise.
// An int32 sum takes ~4 µs at 2^10 and ~1400 µs at 2^30 on the H100.

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/device_fingerprint.hpp"
#include "db/database.hpp"
#include "kernels/registry.hpp"
#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::reports::test {

struct DemoOptions {
  bool second_device = true;  // an H200 too (compare)
  bool f32_sum = true;        // f32 sum besides i32 sum
  int log2_from = 10, log2_to = 30, log2_step = 1;
  /// Keep every k-th configuration of a family only (1: the whole compiled space).
  int config_stride = 1;
  /// The H100's driver moves from 12.8 to 13.0 after tuning: its winners become stale.
  bool stale = true;
  /// launch_failed, incorrect, timeout and crashed candidates.
  bool failures = true;
  /// A second, interrupted run on the H100 that measured i32 min and f32 max in part: i32 max and
  /// f32 min are then asked for (the cross product) but never measured.
  bool interrupted_run = true;
  /// A warm-L2 run on the H100 that tuned i32 sum too (every 8th configuration): warm winners
  /// over the same sizes as the cold ones, faster where the input fits in L2.
  bool warm_run = false;
  /// `tunedreduce bench` on the H100, cold L2, every size of each key: the library's cached call
  /// 1 % and its two-phase call 0.5 % slower than the best candidate (the kernel it runs), CUB 6 %
  /// slower than the best below 2^16 and level with it from 2^24, Thrust 8 µs slower than CUB
  /// (its allocation), failed at the largest size; before it an older run at 2^10..2^14 with
  /// other numbers, which the newer run replaces; and a dirty-flush run at 2^20. Hostile: the
  /// bench's host, database path and Thrust error too.
  bool bench = false;
  /// i32 argmin and f64 argmax besides the sums (a database of schema version 9): the
  /// configurations of vectorized and streaming (single_tile is never measured here), with
  /// winners, the failures that exist for them, and bench results where `bench` is set.
  bool arg_ops = false;
  /// Segmented tuning (schema version 12) of f32 sum on each device, in a run of its own: fixed
  /// rows and 32-bit offsets, totals 2^16, 2^20 and 2^24 in segments of 1, 4, 32, 256, 4096 and
  /// 65536 elements (where they fit), every configuration of the segmented space that can take
  /// the shape, medians from a model of the families, and a winner per shape (a rectangle of that
  /// one shape) with its runner-up.
  bool segmented = false;
  /// Quotes, commas, <script>, CR/LF, ESC, invalid UTF-8 and emoji in the H200's name, hosts,
  /// error texts, a kernel id and a family name.
  bool hostile = false;
};

/// The H200's name in hostile mode.
std::string hostile_name();
/// The error text of the hostile failure.
std::string hostile_error();
/// The hostile kernel id (an ok measurement of i32 sum, family hostile_family()).
std::string hostile_kernel();
std::string hostile_family();

DeviceFingerprint demo_h100();  // driver/runtime 12.8 (13.0 after the stale update)

/// The demo H100 and a run on it (host "test-host", attainable read 3200 GB/s): where the report
/// tests' fixtures start.
struct FixtureRun {
  std::int64_t dev = 0, run = 0;
};
FixtureRun begin_fixture_run(db::Database& d);
DeviceFingerprint demo_h200();

struct DemoIds {
  std::int64_t h100 = 0, h200 = 0;
  std::int64_t run1_h100 = 0, run1_h200 = 0, run2 = 0, run_warm = 0;
  std::int64_t bench_old = 0, bench = 0, bench_dirty = 0;
  std::int64_t run_seg_h100 = 0, run_seg_h200 = 0;
};

/// The model's median in µs of configuration \p p at n on the H100 (h200: on the H200).
double model_us(const kernels::KernelParams& p, std::uint64_t n, bool h200 = false);

/// The model's median in µs of the segmented configuration \p p for \p count segments of
/// \p size elements on the H100 (h200: on the H200).
double seg_model_us(const kernels::segmented::SegParams& p, std::uint64_t size, std::uint64_t count,
                    bool h200 = false);

/// Fills \p d (normally empty) and returns the ids.
DemoIds build_demo(db::Database& d, const DemoOptions& o = {});
/// Builds in memory and writes \p out (which must not exist) with VACUUM INTO.
void write_demo(const std::filesystem::path& out, const DemoOptions& o = {});

}  // namespace tunedreduce::reports::test
