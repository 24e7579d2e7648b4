#pragma once
// The worker's GPU side: data, references, timing with CUDA events, verification, clocks and the
// attainable read bandwidth. Lives only in worker processes (the supervisor never creates a
// CUDA context).

#include <cuda_runtime_api.h>

#include <chrono>
#include <optional>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "common/device_fingerprint.hpp"
#include "kernels/registry.hpp"
#include "tuner/runner.hpp"
#include "tuner/worker/reference.hpp"

namespace tunedreduce::tuner {

/// A CUDA error that leaves the context unusable (illegal address, trap, ...): the worker must
/// report it and exit.
class StickyCudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// SM and memory clocks (MHz) of a CUDA device, read through NVML when the driver has it.
struct Clocks {
  std::optional<int> sm_mhz, mem_mhz;
};
/// Defined in clocks.cpp.
Clocks read_clocks(int cuda_device);

class Measurer {
 public:
  Measurer(int device, std::uint64_t run_seed);
  ~Measurer();
  Measurer(const Measurer&) = delete;
  Measurer& operator=(const Measurer&) = delete;

  const DeviceFingerprint& fingerprint() const { return fingerprint_; }
  const kernels::DeviceLimits& limits() const { return limits_; }

  /// Median GB/s of a plain streaming read of a buffer many times the L2 (CUDA events, L2 cold).
  double attainable_read_gbps();

  /// Measures one entry at n under the policy. \p heartbeat is called between batches of timed
  /// launches and during data preparation so a supervisor can tell slow from hung. Throws
  /// StickyCudaError when the context is lost.
  Result measure(const kernels::Entry& entry, std::uint64_t n, const MeasurePolicy& policy,
                 const std::function<void()>& heartbeat);

 private:
  struct Buffers;
  const void* input(DType dtype, std::uint64_t n, const std::function<void()>& heartbeat);
  const Reference& reference(DType dtype, Op op, std::uint64_t n);
  void ensure_workspace(std::size_t bytes);
  void check(cudaError_t e, const char* what);

  int device_;
  std::uint64_t run_seed_;
  DeviceFingerprint fingerprint_;
  kernels::DeviceLimits limits_;
  std::unique_ptr<Buffers> b_;
  std::map<std::tuple<DType, Op, std::uint64_t>, Reference> references_;
  bool clocks_read_ = false;
  std::chrono::steady_clock::time_point clocks_at_;
  Clocks clocks_;
};

/// Median GB/s of a plain streaming read of min(4 GiB, free memory / 4) with 16-byte loads: each
/// read timed with CUDA events right after an L2 flush (a cudaMemsetAsync of \p flush_bytes at
/// \p flush, so the GPU is busy when the start event is recorded), 2 warm-ups, 10 timed reads.
/// The attainable bandwidth of the tuner's workers and of `tunedreduce bench`. Throws
/// StickyCudaError.
double measure_attainable_read_gbps(int sm_count, void* flush, std::size_t flush_bytes,
                                    cudaStream_t stream);

/// Writes data_value<T>(seed, i) to p[i] for i < n (tuner/worker/datagen.hpp), so
/// compute_reference gives the host reference of every prefix: the input of the tuner's workers
/// and of `tunedreduce bench`. Returns the launch's error.
cudaError_t fill_input(DType dtype, void* p, std::uint64_t n, std::uint64_t seed, int sm_count,
                       cudaStream_t stream);

/// Enqueues a kernel that keeps the GPU busy for about \p ns without touching memory: what
/// precedes a warm-L2 timed launch, so its start event is not recorded on an idle GPU.
void enqueue_busy_wait(std::uint64_t ns, cudaStream_t stream);

/// Bytes of the read that precedes every cold timed run, in the tuner and in `tunedreduce
/// bench`: 4 times the L2, at least 256 MiB, so that no line of the input survives it.
std::size_t cold_flush_bytes(std::int64_t l2_bytes);

/// Enqueues the streaming read of measure_attainable_read_gbps over the \p bytes at \p p (16-byte
/// aligned, initialised; 4 blocks per multiprocessor; \p sink is written practically never):
/// the cold L2 flush of the tuner and of `tunedreduce bench`, which leaves L2 holding clean
/// lines of \p p only. Returns the launch's error.
cudaError_t enqueue_read(const void* p, std::size_t bytes, int sm_count, unsigned* sink,
                         cudaStream_t stream);

}  // namespace tunedreduce::tuner
