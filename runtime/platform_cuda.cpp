// The CUDA runtime behind runtime::Platform.

#include <array>
#include <atomic>

#include "common/error.hpp"
#include "kernels/counters.hpp"
#include "kernels/device.hpp"
#include "runtime/platform.hpp"
#include "tunedreduce/tunedreduce.hpp"

namespace tunedreduce::runtime {

namespace {

std::string text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

[[noreturn]] void fail(const std::string& what, cudaError_t e) {
  throw ReduceError(Status::cuda_error, what + " failed: " + text(e));
}

class CudaPlatform final : public Platform {
 public:
  int device_count(std::string& why) override { return kernels::device_count(&why); }

  int current_device() override {
    int d = -1;
    if (cudaError_t e = cudaGetDevice(&d); e != cudaSuccess) {
      (void)cudaGetLastError();
      fail("no usable CUDA device: cudaGetDevice", e);
    }
    return d;
  }

  DeviceInfo describe(int device) override {
    try {
      return {kernels::query_fingerprint(device), kernels::query_device_limits(device)};
    } catch (const Error& e) {
      throw ReduceError(Status::cuda_error, e.what());
    }
  }

  PointerInfo pointer(const void* p) override {
    cudaPointerAttributes a{};
    cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e == cudaErrorInvalidValue) {  // older drivers: memory CUDA does not know
      (void)cudaGetLastError();
      return {};
    }
    if (e != cudaSuccess) fail("cudaPointerGetAttributes", e);
    switch (a.type) {
      case cudaMemoryTypeDevice: return {MemoryKind::device, a.device};
      case cudaMemoryTypeManaged: return {MemoryKind::managed, a.device};
      case cudaMemoryTypeHost: return {MemoryKind::host, a.device};
      default: return {};
    }
  }

  cudaError_t alloc_async(void** p, std::size_t bytes, cudaStream_t stream) override {
    int d = current_device();
    if (pools_supported(d)) return cudaMallocAsync(p, bytes, stream);
    return cudaMalloc(p, bytes);
  }

  cudaError_t free_async(void* p, cudaStream_t stream) override {
    int d = current_device();
    if (pools_supported(d)) return cudaFreeAsync(p, stream);
    // Without stream-ordered allocation: wait for the work that may still use it.
    if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) return e;
    return cudaFree(p);
  }

  cudaError_t memset_async(void* p, int value, std::size_t bytes, cudaStream_t stream) override {
    return cudaMemsetAsync(p, value, bytes, stream);
  }

  bool capturing(cudaStream_t stream) override {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (cudaError_t e = cudaStreamIsCapturing(stream, &st); e != cudaSuccess) {
      (void)cudaGetLastError();
      fail("asking whether the stream is being captured into a CUDA graph: cudaStreamIsCapturing",
           e);
    }
    return st != cudaStreamCaptureStatusNone;
  }

  bool stream_ordered_allocation(int device) override { return pools_supported(device); }

  cudaError_t counter_table(CounterTable& table) override {
    unsigned long long* base = nullptr;
    if (cudaError_t e = kernels::counter_table(&base); e != cudaSuccess) {
      (void)cudaGetLastError();
      return e;
    }
    table = {base, kernels::counter_table_entries, kernels::counter_stride_words};
    return cudaSuccess;
  }

  cudaError_t launch(const kernels::Entry& entry, const kernels::LaunchArgs& args,
                     const kernels::DeviceLimits& dev) override {
    return entry.launch(args, dev);
  }

  std::string error_text(cudaError_t e) override { return text(e); }

 private:
  static constexpr int max_devices = 64;
  // 0: not asked yet, 1: yes, 2: no.
  bool pools_supported(int device) {
    if (device < 0 || device >= max_devices) return false;
    int v = pools_[device].load(std::memory_order_relaxed);
    if (v == 0) {
      int supported = 0;
      if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) !=
          cudaSuccess) {
        (void)cudaGetLastError();
        supported = 0;
      }
      v = supported ? 1 : 2;
      pools_[device].store(v, std::memory_order_relaxed);
    }
    return v == 1;
  }
  std::array<std::atomic<int>, max_devices> pools_{};
};

}  // namespace

std::unique_ptr<Platform> make_cuda_platform() { return std::make_unique<CudaPlatform>(); }

}  // namespace tunedreduce::runtime
