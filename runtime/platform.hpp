#pragma once
// What the runtime asks of CUDA, behind an interface: the library uses the CUDA runtime
// (make_cuda_platform), tests use a fake, so the lookup, the argument checks, the workspace cache
// and the launch path are tested without a GPU.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "common/device_fingerprint.hpp"
#include "kernels/registry.hpp"
#include "kernels/segmented/check.hpp"
#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::runtime {

struct DeviceInfo {
  DeviceFingerprint fingerprint;
  kernels::DeviceLimits limits;
};

enum class MemoryKind { unregistered, host, device, managed };

struct PointerInfo {
  MemoryKind kind = MemoryKind::unregistered;
  int device = -1;  // for device memory
};

/// The completion counters of the two-phase call on the current device (kernels/counters.hpp):
/// counter i is at base[i * stride_words]; all zero when not in use.
struct CounterTable {
  unsigned long long* base = nullptr;
  std::size_t entries = 0;
  std::size_t stride_words = 1;
};

/// Every member may be called from many threads at once. CUDA failures are returned as
/// cudaError_t or thrown as ReduceError(Status::cuda_error) with the call named.
class Platform {
 public:
  virtual ~Platform() = default;

  /// Number of visible devices; 0 with \p why set when there is none (or no driver).
  virtual int device_count(std::string& why) = 0;
  /// The calling thread's current device. Throws ReduceError(cuda_error).
  virtual int current_device() = 0;
  /// Fingerprint and limits of a device. Throws ReduceError(cuda_error).
  virtual DeviceInfo describe(int device) = 0;
  /// What \p p points to. Throws ReduceError(cuda_error).
  virtual PointerInfo pointer(const void* p) = 0;

  /// Stream-ordered allocation on the current device; free in the order of \p stream.
  virtual cudaError_t alloc_async(void** p, std::size_t bytes, cudaStream_t stream) = 0;
  virtual cudaError_t free_async(void* p, cudaStream_t stream) = 0;
  virtual cudaError_t memset_async(void* p, int value, std::size_t bytes, cudaStream_t stream) = 0;
  /// Whether \p stream is being captured into a CUDA graph (cudaStreamIsCapturing). Throws
  /// ReduceError(cuda_error) when CUDA cannot say (the legacy default stream while another
  /// thread captures in global mode).
  virtual bool capturing(cudaStream_t stream) = 0;
  /// Whether \p device has stream-ordered allocation (memory pools): a captured allocation is
  /// then a node of the graph, owned by it.
  virtual bool stream_ordered_allocation(int device) = 0;
  /// The current device's counter table (loads the kernels' module).
  virtual cudaError_t counter_table(CounterTable& table) = 0;
  /// entry.launch(args, dev) (a fake records the call instead).
  virtual cudaError_t launch(const kernels::Entry& entry, const kernels::LaunchArgs& args,
                             const kernels::DeviceLimits& dev) = 0;
  /// entry.launch(args, dev) of a segmented entry (a fake may record the call instead).
  virtual cudaError_t launch_segmented(const kernels::segmented::SegEntry& entry,
                                       const kernels::segmented::SegLaunchArgs& args,
                                       const kernels::DeviceLimits& dev) {
    return entry.launch(args, dev);
  }
  /// kernels::segmented::find_bad_offsets over a word of alloc_async (a fake may answer a
  /// verdict of its own): the first segment of \p count with a negative begin or an end before
  /// its begin; the stream waits.
  virtual cudaError_t find_bad_offsets(bool wide, const void* begin, const void* end,
                                       std::uint64_t count, cudaStream_t stream,
                                       kernels::segmented::OffsetsVerdict& verdict) {
    void* word = nullptr;
    if (cudaError_t e = alloc_async(&word, sizeof(unsigned long long), stream); e != cudaSuccess)
      return e;
    const cudaError_t e =
        kernels::segmented::find_bad_offsets(wide, begin, end, count,
                                             static_cast<unsigned long long*>(word), stream,
                                             verdict);
    const cudaError_t freed = free_async(word, stream);
    return e != cudaSuccess ? e : freed;
  }
  virtual std::string error_text(cudaError_t e) = 0;
};

/// The CUDA runtime.
std::unique_ptr<Platform> make_cuda_platform();

}  // namespace tunedreduce::runtime
