#pragma once
// What `tunedreduce bench` shares between its whole-array rows (cmd_bench.cpp) and its segmented
// ones (bench_segments.cpp): the options, the GPU resources and the timing of a row's calls (every
// call verified on poisoned output first, then the calls' timed runs alternating, each after the
// L2 prelude), and a timed call's figures as the database keeps them.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/json.hpp"
#include "common/names.hpp"
#include "common/percentile.hpp"
#include "common/timing.hpp"
#include "cli/bench_record.hpp"
#include "db/bench.hpp"
#include "kernels/device.hpp"
#include "measure/gpu.hpp"
#include "measure/reference.hpp"
#include "tunedreduce/tunedreduce.hpp"

namespace tunedreduce::cli::bench {

inline constexpr unsigned char poison_byte = 0xA5;
/// "exact", or "exact, warm L2" when the row was tuned with warm L2.
/// (Config or SegmentedConfig.)
template <class Cfg>
std::string level_text(const Cfg& cfg) {
  std::string t = level_name(cfg.level);
  if (cfg.cache_state == CacheState::warm) t += ", warm L2";
  return t;
}

inline constexpr int warmups = 2;

/// What precedes each timed run. cold (also spelt clean): a read of measure::cold_flush_bytes, as
/// the tuner (L2 left holding clean lines of another buffer); dirty: a memset of twice the L2
/// (L2 left full of dirty lines, which the timed kernel writes back as it evicts them); warm: a
/// busy wait, no flush (the input stays in L2 from the previous run where it fits). The database's
/// BenchL2, so that its names (db::bench_l2_name) are the bench's.
using L2Prelude = db::BenchL2;

/// Which of the library's entry points are timed.
enum class Api { cached, two_phase, both };
inline constexpr auto api_names =
    enum_names<Api>({{Api::cached, "cached"}, {Api::two_phase, "two-phase"}, {Api::both, "both"}});

/// How a segmented bench gives the library its segments: rows (Segments::rows) or CSR offsets
/// (Segments::csr, int64, with no hint: what cub::DeviceSegmentedReduce is told). CUB gets the
/// same int64 offsets in both.
enum class SegLayout { rows, offsets };
inline constexpr auto seg_layout_names =
    enum_names<SegLayout>({{SegLayout::rows, "rows"}, {SegLayout::offsets, "offsets"}});

struct Options {
  std::vector<DType> dtypes;
  std::vector<Op> ops;
  std::vector<std::uint64_t> sizes;  // element counts, ascending (with --segments: the totals)
  /// --segments: the segment sizes of a segmented bench (ascending), empty for whole arrays.
  std::vector<std::uint64_t> segment_sizes;
  SegLayout layout = SegLayout::rows;  // --layout: what the library is given
  int repeats = 50;
  L2Prelude l2 = L2Prelude::cold;
  Api api = Api::both;
  bool thrust = false;
  int host_calls = 0;  // > 0: measure the host's cost per call instead
  int device = 0;
  std::uint64_t seed = 0;
  std::string json;
  bool no_record = false;  // --no-record: do not store the results in the tuning database
};

inline void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess)
    throw Error(what + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

/// One method's figures at one (dtype, op, n): its timed runs' statistics (common/timing.hpp's
/// record, as the database keeps them: db::BenchResult), whether it ran and was right, and the
/// bandwidth its median gives, in GB/s and as a share of the attainable.
struct MethodTiming : RepeatStats {
  bool ran = false;
  std::string error;  // why it did not run or was wrong; empty when verified
  double gbps = 0, pct = 0;
  bool verified() const { return ran && error.empty(); }
  double median() const { return median_us.value_or(0); }
  Json to_json() const {
    Json j = Json::object();
    j.set("verified", verified());
    if (!error.empty()) j.set("error", error);
    if (verified()) {
      append_repeat_stats(j, *this);
      j.set("gbps", gbps);
      j.set("pct_attainable", pct);
    }
    return j;
  }
};

/// The benchmark's GPU resources, released in the destructor.
class Bench {
 public:
  Bench(const Options& opt, int device) : opt_(opt), device_(device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    fp_ = kernels::query_fingerprint(device);
    limits_ = kernels::query_device_limits(device);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
    check(cudaMalloc(&out_, 16), "cudaMalloc(output)");  // up to an IndexedValue
    // cold: as the tuner, a read of measure::cold_flush_bytes; dirty: a memset of twice the L2
    // (the tuner's flush before kernel revision 3), of the first part of the same buffer.
    flush_bytes_ = measure::cold_flush_bytes(fp_.l2_bytes);
    dirty_flush_bytes_ =
        std::min(flush_bytes_,
                 std::max<std::size_t>(2 * static_cast<std::size_t>(fp_.l2_bytes), 64u << 20));
    check(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc(L2 flush buffer)");
    check(cudaMemset(flush_, 0x5b, flush_bytes_), "cudaMemset(L2 flush buffer)");
    check(cudaMalloc(reinterpret_cast<void**>(&sink_), sizeof(unsigned)),
          "cudaMalloc(read flush sink)");
  }
  ~Bench() {
    if (stream_) {
      try {
        tunedreduce::release_workspace(stream_);
      } catch (const ReduceError&) {  // the context is gone: nothing left to free
      }
      cudaStreamSynchronize(stream_);
    }
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
    cudaFree(in_);
    cudaFree(out_);
    cudaFree(flush_);
    cudaFree(sink_);
    cudaFree(cub_temp_);
    cudaFree(tuned_temp_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  const DeviceFingerprint& fingerprint() const { return fp_; }
  int sm_count() const { return limits_.sm_count; }
  double attainable() {
    if (attainable_ == 0)
      attainable_ =
          measure::measure_attainable_read_gbps(limits_.sm_count, flush_, flush_bytes_, stream_);
    return attainable_;
  }

  /// Fills the input with \p n elements of \p dtype; false when they do not fit.
  bool prepare_input(DType dtype, std::uint64_t n) {
    const std::size_t bytes = n * dtype_size(dtype);
    if (bytes > in_bytes_) {
      check(cudaFree(in_), "cudaFree(input)");
      in_ = nullptr;
      in_bytes_ = 0;
      if (cudaMalloc(&in_, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
      }
      in_bytes_ = bytes;
    }
    check(measure::fill_input(dtype, in_, n, measure::data_seed(opt_.seed, dtype), limits_.sm_count,
                              stream_),
          "fill kernel");
    check(cudaStreamSynchronize(stream_), "fill kernel");
    return true;
  }

  /// One method to time: \p run enqueues one reduction on the stream; \p result_host, when
  /// set, says where run put the result on the host (Thrust) instead of the device output.
  struct Method {
    std::function<void()> run;
    unsigned char* result_host = nullptr;
    /// Verified against this reference instead of measure()'s (the baselines of exact_sum,
    /// CUB's and Thrust's ordinary sums, against the float sum's tolerance).
    const measure::Reference* ref = nullptr;
    /// Where set (segmented results), instead of the above: \c poison fills the method's
    /// output with poison before its verification run, and \c verify says what is wrong with
    /// the result that run left (empty when it is right).
    std::function<void()> poison = {};
    std::function<std::string()> verify = {};
  };

  /// Verifies one run of each method against \p ref (poisoned output first), then times
  /// opt_.repeats runs of each, every run right after an L2 flush (cold, clean) or a busy wait
  /// (warm).
  /// The methods' timed runs alternate (A B A B ...), so a drift of clocks or of the machine
  /// during the measurement weighs on every method alike. Each timed run is waited for before
  /// the next is enqueued: a host enqueueing more work while a timed kernel runs adds about
  /// 0.6 us to it on the H100 (docs/performance.md, "the host's queue"), as nvbench avoids too.
  std::vector<MethodTiming> measure(const std::vector<Method>& methods,
                                    const measure::Reference& ref) {
    return measure(methods, &ref, ref.n * dtype_size(ref.dtype));
  }
  /// The same for methods that poison and verify their own outputs (segmented results), their
  /// bandwidth that of \p bytes_moved.
  std::vector<MethodTiming> measure(const std::vector<Method>& methods, std::uint64_t bytes_moved) {
    return measure(methods, nullptr, bytes_moved);
  }

 private:
  std::vector<MethodTiming> measure(const std::vector<Method>& methods,
                                    const measure::Reference* ref, std::uint64_t bytes_moved) {
    const std::size_t m = methods.size();
    std::vector<MethodTiming> t(m);
    // The result's bytes: 8 for wide_sum of a 32-bit type (types.hpp, result_dtype), 16 for
    // argmin and argmax (result_bytes).
    const std::size_t out_bytes = ref ? result_bytes(ref->dtype, ref->op) : 0;
    try {
      std::vector<std::size_t> timed;  // the methods that ran and were right
      for (std::size_t k = 0; k < m; ++k) {
        const Method& me = methods[k];
        try {
          for (int w = 0; w < warmups; ++w) me.run();
          check(cudaStreamSynchronize(stream_), "warm-up");
          if (me.poison) {
            me.poison();
          } else {
            check(cudaMemsetAsync(out_, poison_byte, 16, stream_), "cudaMemset(output)");
            if (me.result_host) std::memset(me.result_host, poison_byte, out_bytes);
          }
          me.run();
          check(cudaStreamSynchronize(stream_), "verification run");
        } catch (const ReduceError& e) {
          t[k].error = e.what();
          continue;
        }
        t[k].ran = true;
        std::string why;
        if (me.verify) {
          why = me.verify();
        } else {
          unsigned char got[16];
          if (me.result_host) std::memcpy(got, me.result_host, out_bytes);
          else
            check(cudaMemcpy(got, out_, out_bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(result)");
          why = measure::verify(me.ref ? *me.ref : *ref, got);
        }
        if (!why.empty()) {
          t[k].error = "incorrect: " + why;
          continue;
        }
        timed.push_back(k);
      }
      std::vector<std::vector<double>> times(m);
      for (int r = 0; !timed.empty() && r < opt_.repeats; ++r)
        for (std::size_t k : timed) {
          enqueue_prelude(r);
          check(cudaEventRecord(start_, stream_), "cudaEventRecord");
          methods[k].run();
          check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
          check(cudaEventSynchronize(stop_), "timed run");
          float ms = 0;
          check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
          times[k].push_back(static_cast<double>(ms) * 1e3);
        }
      for (std::size_t k : timed) {
        std::vector<double>& v = times[k];
        std::sort(v.begin(), v.end());
        t[k].median_us = percentile(v, 0.5);
        t[k].p10_us = percentile(v, 0.1);
        t[k].p90_us = percentile(v, 0.9);
        t[k].repeats = static_cast<int>(v.size());
        t[k].gbps = gbps_of(bytes_moved, t[k].median_us).value_or(0);
        t[k].pct = 100.0 * t[k].gbps / attainable();
      }
    } catch (const std::exception& e) {
      // A CUDA error here may have poisoned the context: the run ends.
      throw Error(std::string("benchmark aborted: ") + e.what());
    }
    return t;
  }

 public:
  /// What precedes timed run \p r: the flush of opt_.l2 (cold: a read; dirty: a memset, its
  /// value changing run by run) or a 20 us busy wait (warm). Each keeps the GPU busy, so the
  /// start event is not recorded on an idle GPU.
  void enqueue_prelude(int r) {
    switch (opt_.l2) {
      case L2Prelude::cold:
        check(measure::enqueue_read(flush_, flush_bytes_, limits_.sm_count, sink_, stream_),
              "L2 read flush");
        break;
      case L2Prelude::dirty:
        check(cudaMemsetAsync(flush_, r, dirty_flush_bytes_, stream_), "L2 flush");
        break;
      case L2Prelude::warm:
        measure::enqueue_busy_wait(20000, stream_);
        break;
    }
  }

  std::size_t flush_bytes() const {
    return opt_.l2 == L2Prelude::dirty ? dirty_flush_bytes_ : flush_bytes_;
  }

  void* input() const { return in_; }
  void* output() const { return out_; }
  cudaStream_t stream() const { return stream_; }

  /// CUB's temporary storage for (dtype, op, n), allocated here, outside any timed region.
  void* cub_temp(std::size_t bytes) { return grow(cub_temp_, cub_temp_bytes_, bytes, "CUB temp"); }

  /// The two-phase call's temporary storage (the size its query gave), outside any timed region,
  /// filled with garbage: the library must not need it zeroed.
  void* tuned_temp(std::size_t bytes) {
    void* p = grow(tuned_temp_, tuned_temp_bytes_, bytes, "two-phase temp");
    check(cudaMemsetAsync(p, 0xff, bytes, stream_), "cudaMemset(two-phase temp)");
    check(cudaStreamSynchronize(stream_), "cudaMemset(two-phase temp)");
    return p;
  }

  /// Enqueues the floor of a segmented row: a plain read of \p in_bytes of the input and a write
  /// of \p out_bytes at \p out (measure::enqueue_read_write).
  void floor(std::size_t in_bytes, void* out, std::size_t out_bytes) {
    check(measure::enqueue_read_write(in_, in_bytes, out, out_bytes, limits_.sm_count, sink_,
                                      stream_),
          "floor kernel");
  }

  /// Enqueues a busy wait of \p ns on the stream (the GPU holds the calls queued behind it).
  void gate(std::uint64_t ns) { measure::enqueue_busy_wait(ns, stream_); }

 private:
  const Options& opt_;
  int device_;
  DeviceFingerprint fp_;
  kernels::DeviceLimits limits_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* in_ = nullptr;
  std::size_t in_bytes_ = 0;
  void* out_ = nullptr;
  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
  unsigned* sink_ = nullptr;
  void* cub_temp_ = nullptr;
  std::size_t cub_temp_bytes_ = 0;
  void* tuned_temp_ = nullptr;
  std::size_t tuned_temp_bytes_ = 0;
  std::size_t dirty_flush_bytes_ = 0;
  double attainable_ = 0;

  static void* grow(void*& p, std::size_t& have, std::size_t bytes, const char* what) {
    if (bytes > have) {
      check(cudaFree(p), std::string("cudaFree(") + what + ")");
      p = nullptr;
      have = 0;
      check(cudaMalloc(&p, bytes), std::string("cudaMalloc(") + what + ")");
      have = bytes;
    }
    return p;
  }
};

inline std::string fmt_us(const MethodTiming& t) {
  if (!t.verified()) return t.ran ? "WRONG" : "-";
  return fmt::format("{:.2f}", t.median());
}

/// One timed call's figures as the tuning database keeps them (db/bench.hpp). \p cfg (the
/// library's lookup) is named for the library's calls only.
/// (Config, or SegmentedConfig named as the template argument.)
template <class Cfg = Config>
db::BenchResult bench_result(DType dtype, Op op, std::uint64_t n, db::BenchMethod method,
                             const MethodTiming& t, const std::type_identity_t<Cfg>* cfg,
                             std::optional<std::int64_t> temp_bytes) {
  db::BenchResult r;
  r.dtype = dtype;
  r.op = op;
  r.n = n;
  r.method = method;
  r.verified = t.verified();
  r.error = r.verified ? std::string() : t.error.empty() ? std::string("did not run") : t.error;
  if (r.verified) static_cast<RepeatStats&>(r) = t;
  r.temp_bytes = temp_bytes;
  if (cfg) {
    r.kernel_id = cfg->kernel_id;
    r.lookup_level = level_name(cfg->level);
    if (cfg->level != Level::builtin_default)
      r.winner_l2 = cfg->cache_state == CacheState::warm ? db::L2Mode::warm : db::L2Mode::cold;
  }
  return r;
}

/// The rows of `tunedreduce bench --segments` (bench_segments.cpp): for each element type and
/// operator with segmented kernels, each total of opt.sizes and each segment size of
/// opt.segment_sizes up to it (total / size segments of size elements), the library's calls and
/// cub::DeviceSegmentedReduce on the same buffers, printed, added to \p rows (--json) and
/// recorded when \p recorder is set. Returns how many calls failed or were wrong.
int bench_segments(Bench& b, const Options& opt, BenchRecorder* recorder, Json& rows);

}  // namespace tunedreduce::cli::bench
