#pragma once
// The library's state and logic behind the public API (tunedreduce.hpp, tunedreduce.h): where
// the database is, the per-device tuning data (loaded once per device, then read lock-free),
// argument checks, the workspace cache and the launch. Everything CUDA goes through a Platform,
// so tests build a Runtime on a fake one.

#include <spdlog/logger.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "runtime/platform.hpp"
#include "runtime/temp_counters.hpp"
#include "runtime/tuning.hpp"
#include "runtime/workspace.hpp"
#include "tunedreduce/tunedreduce.hpp"

namespace tunedreduce::runtime {

/// Throws ReduceError(invalid_argument) for a dtype or op outside its enum, or an op that does
/// not apply to the dtype.
void check_enums(DType dtype, Op op);
/// Largest power of two dividing the address, capped at 256 (what can_implement asks for).
std::size_t alignment_of(const void* p);

/// The tuning data of one device, immutable once published.
struct DeviceState {
  int device = -1;
  DeviceInfo info;
  std::string fingerprint_key;
  /// The database the rows came from; empty when none could be used.
  std::string source;
  /// Config::source of the built-in default: "built-in", with the reason when no database
  /// could be used.
  std::string builtin_source;
  TuningTable table;

  DeviceState(int dev, DeviceInfo i, std::string src, std::string builtin, TuningTable t)
      : device(dev),
        info(std::move(i)),
        fingerprint_key(info.fingerprint.key()),
        source(std::move(src)),
        builtin_source(std::move(builtin)),
        table(std::move(t)) {}
};

struct Options {
  std::unique_ptr<Platform> platform;      // default: the CUDA runtime
  std::shared_ptr<spdlog::logger> logger;  // default: default_logger()
  std::optional<std::string> database;     // default: common/paths.hpp's rules
  db::ReaderOptions reader;                // busy timeout 2 s
  std::optional<CacheState> cache_state;   // default: $TUNEDREDUCE_CACHE_STATE, else cold
};

class Runtime {
 public:
  static constexpr int max_devices = 64;

  explicit Runtime(Options opt = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// The process's runtime (CUDA platform, default logger); never destroyed, so the strings of
  /// every Config it returned stay valid until the process ends.
  static Runtime& global();

  void set_database(std::optional<std::string> path);
  /// The L2 state lookups prefer (TuningTable::choose); throws ReduceError for a bad value.
  void set_cache_state(CacheState s);
  CacheState cache_state() const noexcept {
    return static_cast<CacheState>(cache_state_.load(std::memory_order_relaxed));
  }
  /// cache_state() as the winners' L2 mode (the same numbers).
  db::L2Mode preferred_mode() const noexcept {
    return static_cast<db::L2Mode>(cache_state_.load(std::memory_order_relaxed));
  }
  /// The explicit path, else the resolved default location; empty when none can be derived.
  std::string database_path();

  /// Loads the device's tuning data on first use (one thread loads, others wait), then returns
  /// it without locking.
  const DeviceState& device_state(int device);
  /// Publishes a prepared state as if loaded (tests, benchmarks).
  const DeviceState& install(std::unique_ptr<DeviceState> state);
  /// Builds the state of \p info from the snapshot at \p path (what device_state does, without
  /// CUDA); warns about an unusable database or rows as the library does.
  std::unique_ptr<DeviceState> load(int device, DeviceInfo info);

  /// choose() under cache_state() + the debug log and the once-per-runtime warning on falling
  /// below level 1 or to the other cache state's rows.
  Choice choose(const DeviceState& s, DType dtype, Op op, std::uint64_t n);
  static Config describe(const DeviceState& s, const Choice& c, DType dtype, Op op);

  Config lookup(DType dtype, Op op, std::uint64_t n, int device);
  void reduce(void* d_temp, std::size_t& temp_bytes, const void* d_in, void* d_out, std::uint64_t n,
              DType dtype, Op op, cudaStream_t stream);
  void reduce(const void* d_in, void* d_out, std::uint64_t n, DType dtype, Op op,
              cudaStream_t stream);
  void release_workspace(cudaStream_t stream);

  /// Segmented reductions (runtime/segmented.cpp; the public API's in
  /// tunedreduce/segmented.hpp).
  SegmentedConfig lookup_segmented(DType dtype, Op op, const Segments& seg, int device);
  void segmented_reduce(void* d_temp, std::size_t& temp_bytes, const void* d_in, void* d_out,
                        const Segments& seg, DType dtype, Op op, cudaStream_t stream);
  void segmented_reduce(const void* d_in, void* d_out, const Segments& seg, DType dtype, Op op,
                        cudaStream_t stream);

  /// The two-phase call runs the built-in default (chosen without such kernels there) instead of
  /// a single_pass kernel of more than two_phase_max_single_pass_blocks blocks from
  /// two_phase_large_n up: through it the caller's storage may hold anything, so every block of
  /// a single_pass kernel ends with an acq_rel ticket instead of a flagged slot, and with
  /// thousands of blocks that costs 2-7 % on the H200 (docs/performance.md 3.4).
  static constexpr std::uint64_t two_phase_large_n = std::uint64_t{1} << 24;
  /// scripts/choose-defaults.py leaves the same kernels out of the built-in rules (keep its
  /// --max-single-pass-blocks and its LARGE equal to these).
  static constexpr std::uint64_t two_phase_max_single_pass_blocks = 1056;

  Platform& platform() { return *platform_; }
  WorkspaceCache& workspaces() { return workspaces_; }
  TempCounters& temp_counters() { return temp_counters_; }
  spdlog::logger& log() { return *logger_; }

 private:
  /// The segmented kernel of a call: the tuned winner containing the shape (TuningTable::
  /// choose_segmented, rows of preferred_mode() first) when its entry can run the call, else the
  /// built-in rules' (runtime/segmented_rules.hpp).
  struct SegPick {
    kernels::segmented::SegParams params;
    const kernels::segmented::SegEntry* entry = nullptr;  // nullptr: not in this library
    SegChoice tuned;   // the winner taken (tuned.entry == entry), or none
    std::string rule;  // the built-in rule, with why a tuned winner was passed over
  };
  SegPick pick_segmented(const DeviceState& st, DType dtype, Op op, const Segments& seg,
                         std::size_t in_alignment) const;
  struct SegResolved;
  /// The checks of a segmented call, in the order of prepare(); nullopt-free: throws.
  SegResolved prepare_segmented(const void* d_in, const void* d_out, const Segments& seg,
                                DType dtype, Op op);
  /// Where \p seg asks for it (Segments::checked()), the offsets check before the reduction:
  /// ReduceError naming the first bad segment, or a stream under capture.
  void check_offsets(const Segments& seg, const SegResolved& r, cudaStream_t stream);
  /// The library's completion counter for \p workspace when \p entry is of the split family
  /// (its one-kernel finish), else nullptr.
  unsigned long long* split_counter(const kernels::segmented::SegEntry& entry, int device,
                                    const void* workspace);
  struct Resolved {
    int device;
    const DeviceState* state;
    Choice choice;
  };
  /// The checks every launching call makes, in order: enums, null pointers (before any CUDA
  /// call), the device, pointer kinds and devices, alignment, can_implement.
  Resolved prepare(const void* d_in, const void* d_out, std::uint64_t n, DType dtype, Op op,
                   bool two_phase = false);
  /// The two-phase call's kernel: \p c, unless it is one two_phase_large_n and
  /// two_phase_max_single_pass_blocks say gives way to the built-in default.
  static Choice two_phase_choice(const DeviceState& s, const Choice& c, DType dtype, Op op,
                                 std::uint64_t n, std::size_t in_alignment);
  void check_pointer(const char* name, const void* p, int device, std::size_t alignment);
  /// platform().pointer(p), remembered per thread for device and managed memory: a loop that
  /// passes the same buffers asks CUDA once per buffer and thread.
  PointerInfo pointer_info(const void* p);
  void check_implementable(const DeviceState& s, const Choice& c, std::uint64_t n,
                           std::size_t in_alignment);
  [[noreturn]] void launch_failed(const DeviceState& s, const Choice& c, cudaError_t e);
  void warn_once(const std::string& key, const std::string& message);
  const DeviceState& no_device_state(const std::string& why);
  /// The state a lookup on \p device (-1: the current one) reads: no_device_state() where no
  /// CUDA device is visible at all. Throws ReduceError for an ordinal that is not a device.
  const DeviceState& lookup_state(int device);

  std::unique_ptr<Platform> platform_;
  std::shared_ptr<spdlog::logger> logger_;
  db::ReaderOptions reader_;
  WorkspaceCache workspaces_;
  TempCounters temp_counters_;
  const std::uint64_t id_;  // tells this runtime's entries in per-thread caches

  std::mutex config_mutex_;  // database_, generation_, owned_, warned_
  std::optional<std::string> database_;
  std::uint64_t generation_ = 0;
  std::vector<std::unique_ptr<DeviceState>> owned_;  // every state ever published: Config
                                                     // strings point into them
  std::set<std::string> warned_;
  std::array<std::atomic<const DeviceState*>, max_devices> states_{};
  std::array<std::mutex, max_devices> init_mutex_;
  std::atomic<const DeviceState*> no_device_{nullptr};

  std::atomic<int> cache_state_{0};

  std::atomic<bool> load_warned_{false};      // a load problem was reported
  std::atomic<bool> fallback_warned_{false};  // a lookup below level 1 was reported
};

}  // namespace tunedreduce::runtime
