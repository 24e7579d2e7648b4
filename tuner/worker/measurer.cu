// The worker's GPU side. See measurer.hpp.

#include "tuner/worker/measurer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "exact/adversarial.hpp"
#include "common/percentile.hpp"
#include "common/timing.hpp"
#include "kernels/counters.hpp"
#include "kernels/device.hpp"
#include "kernels/thread/ops.cuh"

namespace tunedreduce::tuner {

using namespace measure;

namespace {

constexpr unsigned char poison_byte = 0xA5;
constexpr int batch_size = 10;

template <class T>
auto bits_of(T x) {
  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t> b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

/// What a message names a measurement by: its kernel, n, and a segmented one's segment size.
std::string label(const Result& r) {
  std::string s = r.kernel_id + " n=" + std::to_string(r.n);
  if (r.segment_size) s += " segment_size=" + std::to_string(*r.segment_size);
  return s;
}

/// An adversarial case's inputs: floats or doubles, or a half type's bits (laid out as __half
/// and __nv_bfloat16).
template <class T>
const std::vector<T>& inputs_of(const exact::AdversarialCase<T>& c) {
  return c.values;
}
const std::vector<std::uint16_t>& inputs_of(const exact::HalfAdversarialCase& c) { return c.bits; }

}  // namespace

struct Measurer::Buffers {
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> start, stop;
  void* input = nullptr;
  std::size_t input_bytes = 0;
  DType input_dtype = DType::i32;
  std::uint64_t input_elems = 0;  // valid elements of input_dtype
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  void* out = nullptr;      // three elements: guard, result, guard
  void* seg_out = nullptr;  // a segmented measurement's results, between two guards
  std::size_t seg_out_bytes = 0;
  void* flush = nullptr;
  std::size_t flush_bytes = 0;
  unsigned* sink = nullptr;
};

void Measurer::check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  throw StickyCudaError(std::string(what) + ": " + cuda_error_text(e));
}

Measurer::Measurer(int device, std::uint64_t run_seed)
    : device_(device), run_seed_(run_seed), b_(std::make_unique<Buffers>()) {
  check(cudaSetDevice(device), "cudaSetDevice");
  fingerprint_ = kernels::query_fingerprint(device);
  limits_ = kernels::query_device_limits(device);
  check(cudaStreamCreateWithFlags(&b_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  b_->start.resize(batch_size);
  b_->stop.resize(batch_size);
  for (int i = 0; i < batch_size; ++i) {
    check(cudaEventCreate(&b_->start[i]), "cudaEventCreate");
    check(cudaEventCreate(&b_->stop[i]), "cudaEventCreate");
  }
  check(cudaMalloc(&b_->out, 3 * 16), "cudaMalloc(output)");
  // Reading cold_flush_bytes evicts whatever a candidate's input left in L2, and leaves only
  // clean lines behind (a memset would leave dirty ones for the timed kernel to write back).
  b_->flush_bytes = cold_flush_bytes(fingerprint_.l2_bytes);
  check(cudaMalloc(&b_->flush, b_->flush_bytes), "cudaMalloc(L2 flush buffer)");
  check(cudaMemset(b_->flush, 0x5b, b_->flush_bytes), "cudaMemset(L2 flush buffer)");
  check(cudaMalloc(reinterpret_cast<void**>(&b_->sink), sizeof(unsigned)), "cudaMalloc(sink)");
}

Measurer::~Measurer() {
  if (!b_) return;
  for (auto e : b_->start) cudaEventDestroy(e);
  for (auto e : b_->stop) cudaEventDestroy(e);
  cudaFree(b_->input);
  cudaFree(b_->workspace);
  cudaFree(b_->out);
  cudaFree(b_->seg_out);
  cudaFree(b_->flush);
  cudaFree(b_->sink);
  if (b_->stream) cudaStreamDestroy(b_->stream);
}

const void* Measurer::input(DType dtype, std::uint64_t n, const std::function<void()>& heartbeat) {
  if (b_->input_dtype == dtype && b_->input_elems >= n && b_->input) return b_->input;
  // Grow to the next power of two (sizes usually come in increasing order), at least 1 Mi.
  std::uint64_t elems = std::max<std::uint64_t>(n, 1u << 20);
  elems = std::uint64_t{1} << static_cast<int>(std::ceil(std::log2(static_cast<double>(elems))));
  const std::size_t bytes = elems * dtype_size(dtype);
  if (bytes > b_->input_bytes) {
    check(cudaFree(b_->input), "cudaFree(input)");
    b_->input = nullptr;
    b_->input_bytes = 0;
    if (cudaError_t e = cudaMalloc(&b_->input, bytes); e != cudaSuccess) {
      // Not enough memory for the rounded size: exactly n then.
      (void)cudaGetLastError();
      elems = n;
      check(cudaMalloc(&b_->input, elems * dtype_size(dtype)), "cudaMalloc(input)");
    }
    b_->input_bytes = elems * dtype_size(dtype);
  }
  heartbeat();
  check(fill_input(dtype, b_->input, elems, data_seed(run_seed_, dtype), limits_.sm_count,
                   b_->stream),
        "fill kernel launch");
  check(cudaStreamSynchronize(b_->stream), "fill kernel");
  b_->input_dtype = dtype;
  b_->input_elems = elems;
  return b_->input;
}

const Reference& Measurer::reference(DType dtype, Op op, std::uint64_t n) {
  auto key = std::make_tuple(dtype, op, n);
  auto it = references_.find(key);
  if (it == references_.end())
    it = references_.emplace(key, compute_reference(dtype, op, data_seed(run_seed_, dtype), n))
             .first;
  return it->second;
}

void Measurer::ensure_workspace(std::size_t bytes) {
  if (bytes <= b_->workspace_bytes) return;
  check(cudaFree(b_->workspace), "cudaFree(workspace)");
  b_->workspace = nullptr;
  const std::size_t grown = std::max(bytes, b_->workspace_bytes * 2);
  check(cudaMalloc(&b_->workspace, grown), "cudaMalloc(workspace)");
  b_->workspace_bytes = grown;
}

double Measurer::attainable_read_gbps() {
  return measure_attainable_read_gbps(limits_.sm_count, b_->flush, b_->flush_bytes, b_->stream);
}

template <class Case>
std::string Measurer::adversarial_failure(const kernels::Entry& entry,
                                          const std::vector<Case>& cases,
                                          const std::function<void()>& heartbeat) {
  // T: the input's elements (the half types': their bits, std::uint16_t); R: the result's type
  // (result_dtype: float for the half types).
  using T =
      typename std::remove_cvref_t<decltype(inputs_of(std::declval<const Case&>()))>::value_type;
  using R = decltype(Case::expected);
  if (result_bytes(entry.params.dtype, Op::exact_sum) != sizeof(R))
    return std::string("adversarial cases of a ") + std::to_string(sizeof(R)) +
           "-byte result for exact_sum of " + dtype_name(entry.params.dtype);
  std::vector<T> all;
  std::vector<std::size_t> offsets;
  for (const auto& c : cases) {
    offsets.push_back(all.size());
    all.insert(all.end(), inputs_of(c).begin(), inputs_of(c).end());
  }
  // One buffer, the cases back to back: each starts at whatever alignment the ones before it
  // leave, so the kernels' unaligned heads and tails are exercised too.
  void* buffer = nullptr;
  check(cudaMalloc(&buffer, std::max<std::size_t>(all.size(), 1) * sizeof(T)),
        "cudaMalloc(adversarial cases)");
  const std::unique_ptr<void, cudaError_t (*)(void*)> owned(buffer, &cudaFree);
  // On the measuring stream, waited for: a cudaMemcpy from pageable memory may return before
  // its DMA has landed, and this stream (cudaStreamNonBlocking) does not wait for the legacy
  // stream's copy. The first case's launch then read what the allocation held before: in two
  // tunes of six on the H100, exact.b128.u1.single_pass.f32.exact_sum summed 'cancel_1e30' to
  // +0 (zeros), while every GPU test of the same entry gave 1 (docs/performance.md 3.21).
  check(cudaMemcpyAsync(buffer, all.data(), all.size() * sizeof(T), cudaMemcpyHostToDevice,
                        b_->stream),
        "cudaMemcpy(adversarial cases)");
  check(cudaStreamSynchronize(b_->stream), "cudaMemcpy(adversarial cases)");
  // The output element between two guards, as measure() places it; poisoned before each case.
  R* const out = reinterpret_cast<R*>(static_cast<unsigned char*>(b_->out) + sizeof(R));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const std::uint64_t n = inputs_of(c).size();
    const T* in = static_cast<const T*>(buffer) + offsets[i];
    const std::size_t alignment = std::size_t{1} << std::countr_zero(
                                      reinterpret_cast<std::uintptr_t>(in) | std::uintptr_t{256});
    if (auto why = entry.can_implement(n, alignment, limits_))
      return "adversarial case '" + c.name + "' (n = " + std::to_string(n) +
             "): cannot implement: " + *why;
    ensure_workspace(std::max<std::size_t>(entry.workspace_bytes(n, limits_), 256));
    kernels::LaunchArgs args;
    args.in = in;
    args.out = out;
    args.n = n;
    args.workspace = b_->workspace;
    args.workspace_bytes = b_->workspace_bytes;
    args.stream = b_->stream;
    check(cudaMemsetAsync(out, poison_byte, sizeof(R), b_->stream), "cudaMemset(output)");
    if (cudaError_t e = entry.launch(args, limits_); e != cudaSuccess) {
      (void)cudaGetLastError();
      check(cudaDeviceSynchronize(), "after an adversarial case");
      return "adversarial case '" + c.name + "' (n = " + std::to_string(n) +
             "): launch failed: " + cuda_error_text(e);
    }
    R got{};
    check(cudaMemcpyAsync(&got, out, sizeof(R), cudaMemcpyDeviceToHost, b_->stream),
          "cudaMemcpy(adversarial result)");
    check(cudaStreamSynchronize(b_->stream), "adversarial case");
    if (bits_of(got) != bits_of(c.expected)) {
      std::ostringstream msg;
      msg.precision(sizeof(R) == 4 ? 9 : 17);
      msg << "adversarial case '" << c.name << "' (n = " << n << "): result " << got << " (bits 0x"
          << std::hex << bits_of(got) << "), the exact reference's " << std::dec << c.expected
          << " (bits 0x" << std::hex << bits_of(c.expected) << ")";
      return msg.str();
    }
    if (i % 8 == 7) heartbeat();
  }
  return {};
}

const std::string& Measurer::adversarial(const kernels::Entry& entry,
                                         const std::function<void()>& heartbeat) {
  auto it = adversarial_.find(entry.id);
  if (it == adversarial_.end()) {
    std::string why;
    switch (entry.params.dtype) {
      case DType::f64:
        why = adversarial_failure(entry, exact::adversarial_cases<double>(), heartbeat);
        break;
      case DType::f16:  // the input is __half bits, the result a float
        why = adversarial_failure(entry, exact::adversarial_half_cases(exact::HalfFormat::f16),
                                  heartbeat);
        break;
      case DType::bf16:  // __nv_bfloat16 bits, a float
        why = adversarial_failure(entry, exact::adversarial_half_cases(exact::HalfFormat::bf16),
                                  heartbeat);
        break;
      case DType::f32:
        why = adversarial_failure(entry, exact::adversarial_cases<float>(), heartbeat);
        break;
      default:  // op_applies refuses exact_sum of the integer types
        why =
            std::string("no adversarial cases for exact_sum of ") + dtype_name(entry.params.dtype);
        break;
    }
    it = adversarial_.emplace(entry.id, std::move(why)).first;
  }
  return it->second;
}

void Measurer::launch_failed(Result& r, cudaError_t e) {
  (void)cudaGetLastError();
  if (cudaError_t s = cudaDeviceSynchronize(); s != cudaSuccess)
    throw StickyCudaError("after launching " + r.kernel_id + ": " + cuda_error_text(s));
  r.outcome = Outcome::launch_failed;
  r.error = "launch failed: " + cuda_error_text(e);
}

void Measurer::sync(const Result& r, const char* what) {
  if (cudaError_t e = cudaStreamSynchronize(b_->stream); e != cudaSuccess)
    throw StickyCudaError(std::string(what) + " of " + label(r) + ": " + cuda_error_text(e));
}

bool Measurer::warm_up(Result& r, const MeasurePolicy& policy,
                       const std::function<cudaError_t()>& launch) {
  for (int w = 0; w < policy.warmup; ++w) {
    if (cudaError_t e = launch(); e != cudaSuccess) {
      launch_failed(r, e);
      return false;
    }
  }
  sync(r, "warm-up");
  return true;
}

bool Measurer::time_launches(Result& r, const MeasurePolicy& policy,
                             const std::function<cudaError_t()>& launch,
                             const std::function<void()>& heartbeat) {
  // Time: batches of launches, each preceded by an L2 flush (cold: a read of cold_flush_bytes)
  // or a short spin (warm) so the GPU is busy when the start event is recorded and launch
  // latency stays out of the figure. Each timed launch is waited for before the next flush is
  // enqueued, as `tunedreduce bench` does: with work queued behind it a small kernel took 0.2-0.6
  // us longer, by an amount that varied from batch to batch (docs/performance.md 3.3, 3.7).
  const int min_repeats = std::max(1, policy.min_repeats);
  const int max_repeats = std::max(min_repeats, policy.max_repeats);
  std::vector<double> times;
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const int batch = std::min<int>(batch_size, max_repeats - static_cast<int>(times.size()));
    for (int i = 0; i < batch; ++i) {
      if (policy.l2 == L2Mode::cold)
        check(enqueue_read(b_->flush, b_->flush_bytes, limits_.sm_count, b_->sink, b_->stream),
              "L2 flush");
      else enqueue_busy_wait(20000, b_->stream);
      check(cudaEventRecord(b_->start[i], b_->stream), "cudaEventRecord");
      if (cudaError_t e = launch(); e != cudaSuccess) {
        launch_failed(r, e);
        return false;
      }
      check(cudaEventRecord(b_->stop[i], b_->stream), "cudaEventRecord");
      if (cudaError_t e = cudaEventSynchronize(b_->stop[i]); e != cudaSuccess)
        throw StickyCudaError("timed run of " + label(r) + ": " + cuda_error_text(e));
    }
    sync(r, "timed runs");
    for (int i = 0; i < batch; ++i) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, b_->start[i], b_->stop[i]), "cudaEventElapsedTime");
      times.push_back(static_cast<double>(ms) * 1e3);
    }
    heartbeat();
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    r.median_us = percentile(sorted, 0.5);
    r.p10_us = percentile(sorted, 0.1);
    r.p90_us = percentile(sorted, 0.9);
    r.repeats = static_cast<int>(times.size());
    const double spread = (*r.p90_us - *r.p10_us) / std::max(*r.median_us, 1e-9);
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r.repeats >= max_repeats) break;
    if (r.repeats >= min_repeats &&
        (spread <= policy.target_spread || elapsed_ms >= policy.budget_ms))
      break;
  }
  // Clocks change slowly; NVML calls are not free: read them at most every 250 ms.
  const auto now = std::chrono::steady_clock::now();
  if (!clocks_read_ || now - clocks_at_ > std::chrono::milliseconds(250)) {
    clocks_ = read_clocks(device_);
    clocks_at_ = now;
    clocks_read_ = true;
  }
  r.sm_clock_mhz = clocks_.sm_mhz;
  r.mem_clock_mhz = clocks_.mem_mhz;
  return true;
}

Result Measurer::measure(const kernels::Entry& entry, std::uint64_t n, const MeasurePolicy& policy,
                         const std::function<void()>& heartbeat) {
  Result r;
  r.kernel_id = entry.id;
  r.dtype = entry.params.dtype;
  r.op = entry.params.op;
  r.n = n;
  const std::size_t elem = dtype_size(r.dtype);
  // The result's bytes: the element's, twice them for wide_sum and for exact_sum of the half
  // types (a float: types.hpp, result_dtype), 16 for argmin and argmax (an IndexedValue:
  // result_bytes).
  const std::size_t out_bytes = result_bytes(r.dtype, r.op);
  if (auto why = entry.can_implement(n, 256, limits_)) {
    r.outcome = Outcome::launch_failed;
    r.error = "cannot implement: " + *why;
    return r;
  }
  const void* in = input(r.dtype, n, heartbeat);
  heartbeat();
  const Reference& ref = reference(r.dtype, r.op, n);
  heartbeat();
  ensure_workspace(std::max<std::size_t>(entry.workspace_bytes(n, limits_), 256));

  kernels::LaunchArgs args;
  args.in = in;
  args.out = static_cast<unsigned char*>(b_->out) + out_bytes;
  args.n = n;
  args.workspace = b_->workspace;
  args.workspace_bytes = b_->workspace_bytes;
  args.stream = b_->stream;
  args.workspace_clean = false;
  // Launch errors that leave the context usable are the candidate's `launch_failed`; anything
  // that poisons the context is thrown.
  const std::function<cudaError_t()> launch = [&] { return entry.launch(args, limits_); };

  if (!warm_up(r, policy, launch)) return r;
  if (policy.warmup > 0) args.workspace_clean = true;  // every launch leaves it zero

  // Verify: poisoned output with guard elements on both sides.
  check(cudaMemsetAsync(b_->out, poison_byte, 3 * out_bytes, b_->stream), "cudaMemset(output)");
  if (cudaError_t e = launch(); e != cudaSuccess) {
    launch_failed(r, e);
    return r;
  }
  args.workspace_clean = true;
  sync(r, "verification run");
  unsigned char host[3 * 16];
  check(cudaMemcpy(host, b_->out, 3 * out_bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(output)");
  unsigned char poison[16];
  std::memset(poison, poison_byte, sizeof poison);
  if (std::memcmp(host, poison, out_bytes) != 0 ||
      std::memcmp(host + 2 * out_bytes, poison, out_bytes) != 0) {
    r.outcome = Outcome::incorrect;
    r.error = "wrote outside its output element";
    return r;
  }
  if (std::string why = verify(ref, host + out_bytes); !why.empty()) {
    r.outcome = Outcome::incorrect;
    r.error = why;
    return r;
  }
  // An exact sum must also give the exact bits of every adversarial case (once per entry).
  if (r.op == Op::exact_sum) {
    if (const std::string& why = adversarial(entry, heartbeat); !why.empty()) {
      r.outcome = Outcome::incorrect;
      r.error = why;
      return r;
    }
    args.workspace = b_->workspace;  // the cases may have grown it
    args.workspace_bytes = b_->workspace_bytes;
    args.workspace_clean = false;
  }

  if (!time_launches(r, policy, launch, heartbeat)) return r;
  r.outcome = Outcome::ok;
  r.gbps = gbps_of(n * elem, r.median_us);
  return r;
}

std::string Measurer::ensure_segment_output(std::size_t bytes) {
  if (bytes <= b_->seg_out_bytes) return {};
  check(cudaFree(b_->seg_out), "cudaFree(segment results)");
  b_->seg_out = nullptr;
  b_->seg_out_bytes = 0;
  if (cudaError_t e = cudaMalloc(&b_->seg_out, bytes); e != cudaSuccess) {
    (void)cudaGetLastError();
    b_->seg_out = nullptr;
    return "no device memory for the results (" + std::to_string(bytes) +
           " bytes): " + cuda_error_text(e);
  }
  b_->seg_out_bytes = bytes;
  return {};
}

Result Measurer::measure(const kernels::segmented::SegEntry& entry, std::uint64_t n,
                         std::uint64_t segment_size, const MeasurePolicy& policy,
                         const std::function<void()>& heartbeat) {
  namespace seg = kernels::segmented;
  Result r;
  r.kernel_id = entry.id;
  r.dtype = entry.params.dtype;
  r.op = entry.params.op;
  r.n = n;
  r.segment_size = segment_size;
  auto refuse = [&](const std::string& why) {
    r.outcome = Outcome::launch_failed;
    r.error = "cannot implement: " + why;
    return r;
  };
  if (segment_size == 0 || n % segment_size != 0)
    return refuse("the segment size " + std::to_string(segment_size) +
                  " does not divide n = " + std::to_string(n));
  const std::uint64_t segments = n / segment_size;
  const seg::SegLayout layout = entry.params.layout;
  if (layout == seg::SegLayout::offsets32 &&
      n > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
    return refuse("int32 offsets cannot reach the last segment's end, n = " + std::to_string(n) +
                  " (more than 2^31 - 1)");
  const std::size_t elem = dtype_size(r.dtype);
  const std::size_t out_bytes = result_bytes(r.dtype, r.op);

  seg::SegProblem p;
  p.num_segments = segments;
  if (layout == seg::SegLayout::fixed) {
    p.segment_size = segment_size;
    p.stride = segment_size;
    if (auto why = entry.can_implement(p, 256, limits_)) return refuse(*why);
  }
  // The offsets layouts: begin and end arrays of uniform segments, one allocation, filled on
  // the device, freed when the measurement ends.
  std::unique_ptr<void, cudaError_t (*)(void*)> offsets(nullptr, &cudaFree);
  if (layout != seg::SegLayout::fixed) {
    const std::size_t width = layout == seg::SegLayout::offsets32 ? 4 : 8;
    const std::size_t bytes = 2 * std::max<std::uint64_t>(segments, 1) * width;
    void* d = nullptr;
    if (cudaError_t e = cudaMalloc(&d, bytes); e != cudaSuccess) {
      (void)cudaGetLastError();
      r.outcome = Outcome::launch_failed;
      r.error = "no device memory for the begin and end offsets (" + std::to_string(bytes) +
                " bytes): " + cuda_error_text(e);
      return r;
    }
    offsets.reset(d);
    void* end = static_cast<unsigned char*>(d) + std::max<std::uint64_t>(segments, 1) * width;
    check(fill_uniform_offsets(width == 8, d, end, segments, segment_size, limits_.sm_count,
                               b_->stream),
          "offsets kernel launch");
    sync(r, "filling the offsets");
    p.begin = d;
    p.end = end;
    p.mean_length = segment_size;
    if (auto why = entry.can_implement(p, 256, limits_)) return refuse(*why);
  }
  heartbeat();
  const void* in = input(r.dtype, n, heartbeat);
  heartbeat();
  // The results between two guards of 256 bytes (so the results stay 256-byte aligned).
  constexpr std::size_t guard = 256;
  const std::size_t results_bytes = segments * out_bytes;
  if (std::string why = ensure_segment_output(results_bytes + 2 * guard); !why.empty()) {
    r.outcome = Outcome::launch_failed;
    r.error = why;
    return r;
  }
  ensure_workspace(std::max<std::size_t>(entry.workspace_bytes(p, limits_), 256));

  unsigned char* const results = static_cast<unsigned char*>(b_->seg_out) + guard;
  seg::SegLaunchArgs args;
  args.in = in;
  args.out = results;
  args.problem = p;
  args.workspace = b_->workspace;
  args.workspace_bytes = b_->workspace_bytes;
  args.stream = b_->stream;
  // The split family finishes in one kernel behind a counter of the kernels' table (and the
  // balanced family takes its scan's ticket on it), as the library's calls run them
  // (runtime/segmented.cpp); no other launch of this process uses it.
  if (unsigned long long* table = nullptr;
      seg::takes_counter(entry.params.family) && kernels::counter_table(&table) == cudaSuccess)
    args.counter = table;
  const std::function<cudaError_t()> launch = [&] { return entry.launch(args, limits_); };

  if (!warm_up(r, policy, launch)) return r;

  // Verify: every segment's result, the results poisoned first, a guard on both sides.
  check(cudaMemsetAsync(b_->seg_out, poison_byte, results_bytes + 2 * guard, b_->stream),
        "cudaMemset(segment results)");
  if (cudaError_t e = launch(); e != cudaSuccess) {
    launch_failed(r, e);
    return r;
  }
  sync(r, "verification run");
  {
    unsigned char guards[2 * guard];
    check(cudaMemcpy(guards, b_->seg_out, guard, cudaMemcpyDeviceToHost), "cudaMemcpy(guard)");
    check(cudaMemcpy(guards + guard, results + results_bytes, guard, cudaMemcpyDeviceToHost),
          "cudaMemcpy(guard)");
    for (unsigned char g : guards) {
      if (g != poison_byte) {
        r.outcome = Outcome::incorrect;
        r.error = "wrote outside its " + std::to_string(segments) + " results";
        return r;
      }
    }
  }
  // In chunks of at most 64 MiB of results, each checked against the host's per-segment
  // references before the next is copied: n = 2^30 segments of argmin are 16 GiB of results.
  const std::uint64_t chunk =
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(segments,
                                                         (std::size_t{64} << 20) / out_bytes));
  std::vector<unsigned char> host(segments ? chunk * out_bytes : 0);
  const std::uint64_t seed = data_seed(run_seed_, r.dtype);
  for (std::uint64_t first = 0; first < segments; first += chunk) {
    const std::uint64_t count = std::min(chunk, segments - first);
    check(cudaMemcpy(host.data(), results + first * out_bytes, count * out_bytes,
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy(segment results)");
    if (std::string why =
            verify_segments(r.dtype, r.op, seed, segment_size, first, count, host.data());
        !why.empty()) {
      r.outcome = Outcome::incorrect;
      r.error = why;
      return r;
    }
    heartbeat();
  }

  if (!time_launches(r, policy, launch, heartbeat)) return r;
  r.outcome = Outcome::ok;
  r.gbps = gbps_of(n * elem + results_bytes, r.median_us);
  return r;
}

}  // namespace tunedreduce::tuner
