#pragma once
// A Platform without CUDA, for tests and the CPU benchmark: devices described by hand, pointers
// registered by hand, allocations handed out from a counter, launches recorded, not run.

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/platform.hpp"
#include "tunedreduce/tunedreduce.hpp"

namespace tunedreduce::runtime {

class FakePlatform final : public Platform {
 public:
  struct Launch {
    std::string kernel_id;
    kernels::LaunchArgs args;
  };
  struct Event {  // alloc, free, memset, launch, check offsets, in the order they were enqueued
    std::string what;
    void* ptr = nullptr;
    std::size_t bytes = 0;
    cudaStream_t stream = nullptr;
  };

  /// devices described: index = ordinal. Empty: "no CUDA device".
  std::vector<DeviceInfo> devices;
  int current = 0;
  cudaError_t launch_result = cudaSuccess;
  cudaError_t alloc_result = cudaSuccess;
  /// Streams being captured into a graph (capturing() answers from it).
  std::vector<cudaStream_t> capturing_streams;
  bool pools = true;
  /// Every call that would reach CUDA.
  std::atomic<int> cuda_calls{0};
  std::atomic<int> describe_calls{0};

  void set_pointer(const void* p, PointerInfo info) {
    std::lock_guard lk(m_);
    pointers_[p] = info;
  }
  std::vector<Launch> launches() {
    std::lock_guard lk(m_);
    return launches_;
  }
  std::vector<Event> events() {
    std::lock_guard lk(m_);
    return events_;
  }

  int device_count(std::string& why) override {
    ++cuda_calls;
    if (devices.empty()) why = "cudaErrorNoDevice (fake: no CUDA-capable device is detected)";
    return static_cast<int>(devices.size());
  }
  int current_device() override {
    ++cuda_calls;
    if (devices.empty())
      throw ReduceError(Status::cuda_error,
                        "no usable CUDA device: cudaGetDevice failed: cudaErrorNoDevice (fake)");
    return current;
  }
  DeviceInfo describe(int device) override {
    ++cuda_calls;
    ++describe_calls;
    if (device < 0 || device >= static_cast<int>(devices.size()))
      throw ReduceError(Status::cuda_error, "cudaGetDeviceProperties failed for device " +
                                                std::to_string(device) +
                                                ": cudaErrorInvalidDevice");
    return devices[static_cast<std::size_t>(device)];
  }
  PointerInfo pointer(const void* p) override {
    ++cuda_calls;
    std::lock_guard lk(m_);
    auto it = pointers_.find(p);
    return it == pointers_.end() ? PointerInfo{} : it->second;
  }
  cudaError_t alloc_async(void** p, std::size_t bytes, cudaStream_t stream) override {
    ++cuda_calls;
    if (alloc_result != cudaSuccess) return alloc_result;
    std::lock_guard lk(m_);
    next_ += (bytes + 255) / 256 * 256 + 256;
    *p = reinterpret_cast<void*>(next_);
    events_.push_back({"alloc", *p, bytes, stream});
    return cudaSuccess;
  }
  cudaError_t free_async(void* p, cudaStream_t stream) override {
    ++cuda_calls;
    std::lock_guard lk(m_);
    events_.push_back({"free", p, 0, stream});
    return cudaSuccess;
  }
  cudaError_t memset_async(void* p, int, std::size_t bytes, cudaStream_t stream) override {
    ++cuda_calls;
    std::lock_guard lk(m_);
    events_.push_back({"memset", p, bytes, stream});
    return cudaSuccess;
  }
  bool capturing(cudaStream_t stream) override {
    ++cuda_calls;
    std::lock_guard lk(m_);
    for (cudaStream_t s : capturing_streams)
      if (s == stream) return true;
    return false;
  }
  bool stream_ordered_allocation(int) override { return pools; }
  /// The fake counter table: counters[i * 4], `table_entries` of them per device (0: no table,
  /// counter_table fails).
  /// Set before the first two-phase call.
  std::size_t table_entries = 64;
  cudaError_t counter_table(CounterTable& table) override {
    ++cuda_calls;
    if (table_entries == 0 || current < 0 || current >= 8) return cudaErrorInvalidSymbol;
    std::lock_guard lk(m_);
    if (counters_.empty()) counters_.assign(table_entries * 4 * 8, 0);
    table = {counters_.data() + static_cast<std::size_t>(current) * table_entries * 4,
             table_entries, 4};
    return cudaSuccess;
  }
  cudaError_t launch(const kernels::Entry& entry, const kernels::LaunchArgs& args,
                     const kernels::DeviceLimits&) override {
    ++cuda_calls;
    std::lock_guard lk(m_);
    launches_.push_back({entry.id, args});
    events_.push_back(
        {std::string("launch ") + entry.id, args.workspace, args.workspace_bytes, args.stream});
    return launch_result;
  }
  /// Segmented launches recorded: the entry's id and the arguments.
  struct SegLaunch {
    std::string id;
    kernels::segmented::SegLaunchArgs args;
  };
  std::vector<SegLaunch> seg_launches() {
    std::lock_guard lk(m_);
    return seg_launches_;
  }
  cudaError_t launch_segmented(const kernels::segmented::SegEntry& entry,
                               const kernels::segmented::SegLaunchArgs& args,
                               const kernels::DeviceLimits&) override {
    ++cuda_calls;
    std::lock_guard lk(m_);
    seg_launches_.push_back({entry.id, args});
    events_.push_back(
        {std::string("launch ") + entry.id, args.workspace, args.workspace_bytes, args.stream});
    return launch_result;
  }
  /// Offsets checks: how many were asked, and the verdict (and error) each answers.
  std::atomic<int> offsets_checks{0};
  kernels::segmented::OffsetsVerdict offsets_verdict;
  cudaError_t offsets_check_result = cudaSuccess;
  cudaError_t find_bad_offsets(bool, const void*, const void*, std::uint64_t, cudaStream_t stream,
                               kernels::segmented::OffsetsVerdict& verdict) override {
    ++cuda_calls;
    std::lock_guard lk(m_);
    ++offsets_checks;
    events_.push_back({"check offsets", nullptr, 0, stream});
    verdict = offsets_verdict;
    return offsets_check_result;
  }
  std::string error_text(cudaError_t e) override {
    return "cudaError " + std::to_string(static_cast<int>(e)) + " (fake)";
  }

 private:
  std::mutex m_;
  std::map<const void*, PointerInfo> pointers_;
  std::vector<unsigned long long> counters_;
  std::vector<Launch> launches_;
  std::vector<SegLaunch> seg_launches_;
  std::vector<Event> events_;
  std::uintptr_t next_ = 0x7f0000000000;
};

}  // namespace tunedreduce::runtime
