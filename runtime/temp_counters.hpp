#pragma once
// The completion counters of the two-phase call (kernels/counters.hpp): one per caller buffer
// (d_temp) and device, taken from the device's counter table the first time the buffer is seen
// and kept for the process's life. Launches that share a temporary buffer are ordered by the
// caller (CUB's contract), so a counter is never used by two launches at once, and every launch
// leaves it zero: the caller's buffer may hold anything, and nothing but the kernel is enqueued.
// When the table is full, a new buffer gets no counter and its launches zero a counter inside
// the buffer first (one cudaMemsetAsync, still correct).

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "runtime/platform.hpp"

namespace tunedreduce::runtime {

class TempCounters {
 public:
  static constexpr int max_devices = 64;

  explicit TempCounters(Platform& platform);
  TempCounters(const TempCounters&) = delete;
  TempCounters& operator=(const TempCounters&) = delete;

  /// The counter of (device, d_temp); nullptr when the device's table is full or unavailable
  /// (\p why then says why, the first time only: the caller logs it).
  unsigned long long* counter(int device, const void* d_temp, std::string& why);

  /// Buffers given a counter on \p device so far (tests).
  std::size_t assigned(int device);

 private:
  struct Device {
    std::mutex m;
    bool asked = false;
    unsigned long long* table = nullptr;
    std::size_t entries = 0, stride = 0;
    bool full_reported = false;
    std::unordered_map<std::uintptr_t, std::size_t> index;
  };

  Platform& platform_;
  const std::uint64_t id_;  // tells this instance's entries in the per-thread cache
  std::array<Device, max_devices> devices_;
};

}  // namespace tunedreduce::runtime
