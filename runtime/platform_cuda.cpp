// The CUDA runtime behind runtime::Platform.

#include <cuda.h>
#include <cudaTypedefs.h>

#include <array>
#include <atomic>
#include <mutex>

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

/// This thread's stream-capture mode set to relaxed while it lives. Another thread's capture in
/// global mode (the default of cudaStreamBeginCapture) makes every thread's cudaMallocAsync
/// "potentially unsafe" and invalidates that capture, even on a stream nobody captures. The
/// library's allocations are stream-ordered on the caller's stream (captured into the graph when
/// that stream is the one being captured) and never synchronise, so they are safe in fact: the
/// relaxed mode lets them through without breaking the neighbour's capture.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() {
    if (cudaThreadExchangeStreamCaptureMode(&mode_) != cudaSuccess) {
      (void)cudaGetLastError();
      ok_ = false;
    }
  }
  ~RelaxedCaptureMode() {
    if (ok_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
  bool ok_ = true;
};

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
      case cudaMemoryTypeDevice:
        return {MemoryKind::device, a.device};
      case cudaMemoryTypeManaged:
        return {MemoryKind::managed, a.device};
      case cudaMemoryTypeHost:
        return {MemoryKind::host, a.device};
      default:
        return {};
    }
  }

  cudaError_t alloc_async(void** p, std::size_t bytes, cudaStream_t stream) override {
    int d = current_device();
    if (pools_supported(d)) {
      RelaxedCaptureMode relaxed;
      return cudaMallocAsync(p, bytes, stream);
    }
    return cudaMalloc(p, bytes);
  }

  cudaError_t free_async(void* p, cudaStream_t stream) override {
    int d = current_device();
    if (pools_supported(d)) {
      RelaxedCaptureMode relaxed;
      return cudaFreeAsync(p, stream);
    }
    // Without stream-ordered allocation: wait for the work that may still use it.
    if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) return e;
    return cudaFree(p);
  }

  cudaError_t memset_async(void* p, int value, std::size_t bytes, cudaStream_t stream) override {
    return cudaMemsetAsync(p, value, bytes, stream);
  }

  bool capturing(cudaStream_t stream) override {
    // Asked on every cached call: the driver's entry point directly costs less than the
    // runtime's wrapper (bench/experiments/capture_query.cpp). Same handles: 0 is the legacy
    // stream in both, cudaStreamPerThread is CU_STREAM_PER_THREAD.
    std::call_once(is_capturing_once_, [this] {
      void* f = nullptr;
      cudaDriverEntryPointQueryResult q{};
      if (cudaGetDriverEntryPointByVersion("cuStreamIsCapturing", &f, 10000, cudaEnableDefault,
                                           &q) == cudaSuccess &&
          q == cudaDriverEntryPointSuccess && f)
        is_capturing_ = reinterpret_cast<PFN_cuStreamIsCapturing_v10000>(f);
      else (void)cudaGetLastError();
    });
    if (const auto f = is_capturing_) {
      CUstreamCaptureStatus cst = CU_STREAM_CAPTURE_STATUS_NONE;
      if (f(reinterpret_cast<CUstream>(stream), &cst) == CUDA_SUCCESS)
        return cst != CU_STREAM_CAPTURE_STATUS_NONE;
      // An error: let the runtime's call say which.
    }
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
  std::once_flag is_capturing_once_;
  PFN_cuStreamIsCapturing_v10000 is_capturing_ = nullptr;  // set once, under is_capturing_once_
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
