#pragma once
// The worker's GPU side: one candidate measured with CUDA events after the L2 state it asks for,
// verified against the host reference (an exact_sum candidate bit for bit, and on the adversarial
// cases of exact/adversarial.hpp too); the pieces (data, flush, references, clocks, bandwidth)
// are measure/'s, shared with `tunedreduce bench`. Lives only in worker processes (the
// supervisor never creates a CUDA context).

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
#include <vector>

#include "common/device_fingerprint.hpp"
#include "kernels/registry.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tuner/runner.hpp"
#include "measure/clocks.hpp"
#include "measure/gpu.hpp"
#include "measure/reference.hpp"

namespace tunedreduce::tuner {

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

  /// Measures one segmented entry on n elements in n / segment_size segments of segment_size
  /// (the fixed layout: contiguous rows; the offsets layouts: begin[s] = s * segment_size, end[s]
  /// = begin[s] + segment_size, made on the device once a measurement), with the data, L2 state
  /// and timing of whole-array measurements. The outcome is launch_failed, naming why, where the
  /// entry cannot run the shape (its can_implement, a segment size that does not divide n, int32
  /// offsets past 2^31 - 1, no memory for the offsets or the results); incorrect where a result
  /// is not its segment's reference (measure::verify_segments) or it wrote outside its results.
  /// gbps counts the input read and the results written. Throws StickyCudaError as measure().
  Result measure(const kernels::segmented::SegEntry& entry, std::uint64_t n,
                 std::uint64_t segment_size, const MeasurePolicy& policy,
                 const std::function<void()>& heartbeat);

 private:
  struct Buffers;
  /// Times \p launch under \p policy (after the L2 state it asks for, in batches, until the
  /// spread, the budget or max_repeats says stop) into r's median, p10, p90 and repeats, and
  /// stamps the clocks. False when a launch failed: r is then launch_failed.
  bool time_launches(Result& r, const MeasurePolicy& policy,
                     const std::function<cudaError_t()>& launch,
                     const std::function<void()>& heartbeat);
  /// Launches \p launch policy.warmup times and waits: false (r launch_failed) when one fails.
  bool warm_up(Result& r, const MeasurePolicy& policy, const std::function<cudaError_t()>& launch);
  /// r becomes launch_failed by \p e where the context survived it; throws StickyCudaError where
  /// it did not.
  void launch_failed(Result& r, cudaError_t e);
  /// Waits for the stream; a failure there ends the context (StickyCudaError naming \p what).
  void sync(const Result& r, const char* what);
  /// The device memory for a segmented measurement's results: \p bytes, or why not.
  std::string ensure_segment_output(std::size_t bytes);
  const void* input(DType dtype, std::uint64_t n, const std::function<void()>& heartbeat);
  const measure::Reference& reference(DType dtype, Op op, std::uint64_t n);
  void ensure_workspace(std::size_t bytes);
  void check(cudaError_t e, const char* what);
  /// exact_sum entries: empty when \p entry gives the exact bits of every adversarial case of
  /// exact/adversarial.hpp (adversarial_cases of f32 and f64, adversarial_half_cases of f16 and
  /// bf16: half bits in, a float out), else which case it got wrong; run once per entry, then
  /// remembered.
  const std::string& adversarial(const kernels::Entry& entry,
                                 const std::function<void()>& heartbeat);
  /// \p cases (exact::AdversarialCase<T> or exact::HalfAdversarialCase) uploaded back to back,
  /// each launched on its slice into a poisoned output element of the result's type
  /// (Case::expected's), compared bit for bit.
  template <class Case>
  std::string adversarial_failure(const kernels::Entry& entry, const std::vector<Case>& cases,
                                  const std::function<void()>& heartbeat);

  int device_;
  std::uint64_t run_seed_;
  DeviceFingerprint fingerprint_;
  kernels::DeviceLimits limits_;
  std::unique_ptr<Buffers> b_;
  std::map<std::tuple<DType, Op, std::uint64_t>, measure::Reference> references_;
  std::map<std::string, std::string> adversarial_;  // entry id -> why it failed ("" passed)
  bool clocks_read_ = false;
  std::chrono::steady_clock::time_point clocks_at_;
  measure::Clocks clocks_;
};

}  // namespace tunedreduce::tuner
