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

 private:
  struct Buffers;
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
