// tunedreduce bench --segments: the library's segmented reductions as production calls them
// (segmented_reduce with the library's workspace, and its two-phase call with caller-owned
// temporary storage) against cub::DeviceSegmentedReduce, on the same buffers, over the plane of
// segment size × segment count. Every result of every call is verified, segment by segment,
// against the host's reference (measure/reference.hpp) before its timed runs.

#include <cstdio>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "cli/bench_gpu.hpp"
#include "cli/bench_session.hpp"
#include "common/grammar.hpp"
#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::cli::bench {

namespace {

/// A device buffer that grows and is freed with the bench.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(p_); }
  /// At least \p bytes; false (nothing held) when the device has not that much free.
  bool reserve(std::size_t bytes) {
    if (bytes <= bytes_) return true;
    check(cudaFree(p_), "cudaFree");
    p_ = nullptr;
    bytes_ = 0;
    if (cudaMalloc(&p_, bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    bytes_ = bytes;
    return true;
  }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

/// CUB's call, as bench_gpu.hpp names it.
const char* cub_call_name(DType dtype, Op op) {
  if (is_half(dtype) || op == Op::wide_sum) return "Reduce into the wide type";
  switch (op) {
    case Op::min:
      return "Min";
    case Op::max:
      return "Max";
    case Op::argmin:
      return "ArgMin";
    case Op::argmax:
      return "ArgMax";
    default:
      return "Sum";
  }
}

/// The layout of segments as kernel ids and the database name it: what the library is given.
const char* db_layout(SegLayout l) { return l == SegLayout::rows ? "fixed" : "offsets64"; }

}  // namespace

int bench_segments(Bench& b, const Options& opt, BenchRecorder* recorder, Json& rows) {
  int failures = 0;
  const bool want_cached = opt.api != Api::two_phase, want_two_phase = opt.api != Api::cached;
  cudaStream_t s = b.stream();
  DeviceBuffer lib_out, cub_out, offsets, ends;
  std::vector<unsigned char> host, indexed;
  for (DType dtype : opt.dtypes) {
    if (std::none_of(opt.ops.begin(), opt.ops.end(),
                     [&](Op o) { return kernels::segmented::seg_op_applies(dtype, o); }))
      continue;
    std::vector<std::uint64_t> totals = opt.sizes;
    while (!totals.empty() && !b.prepare_input(dtype, totals.back())) {
      std::printf("(%s: %s elements do not fit in device memory; skipped)\n", dtype_name(dtype),
                  grammar::count_text(totals.back()).c_str());
      totals.pop_back();
    }
    if (totals.empty()) continue;
    const std::uint64_t seed = measure::data_seed(opt.seed, dtype);
    for (Op op : opt.ops) {
      if (!kernels::segmented::seg_op_applies(dtype, op)) continue;
      const std::size_t rb = result_bytes(dtype, op),
                        cub_rb = cub_segmented_result_bytes(dtype, op);
      std::printf("\n%s %s, %s (CUB: cub::DeviceSegmentedReduce::%s, int64 begin/end offsets)\n",
                  dtype_name(dtype), op_name(op),
                  opt.layout == SegLayout::rows ? "rows (Segments::rows)"
                                                : "CSR offsets, int64, no hint (Segments::csr)",
                  cub_call_name(dtype, op));
      std::printf("%6s %7s %9s %10s %10s %10s %9s %6s %10s %10s  %s\n", "total", "size", "segments",
                  "cached us", "2-phase us", "CUB us", "floor us", "%floor", "cached/CUB",
                  "2-phase/CUB", "tuned kernel (lookup level)");
      for (const std::uint64_t total : totals)
        for (const std::uint64_t size : opt.segment_sizes) {
          if (size > total) continue;
          const std::uint64_t count = total / size, n = count * size;
          const std::string shape =
              fmt::format("{} x {}", grammar::count_text(size), grammar::count_text(count));
          // The floor writes the results' bytes in 16-byte stores: rounded up to 16.
          if (!lib_out.reserve((count * rb + 15) / 16 * 16) || !cub_out.reserve(count * cub_rb) ||
              !offsets.reserve((count + 1) * 8) || !ends.reserve((count + 1) * 8)) {
            std::printf(
                "(%s segments of %s: the outputs and offsets do not fit in device "
                "memory; skipped)\n",
                grammar::count_text(count).c_str(), grammar::count_text(size).c_str());
            continue;
          }
          // offsets[i] = i * size for i <= count: CSR for the library, begin and begin + 1 for
          // CUB (`ends` only takes the fill's second array).
          auto* off = static_cast<std::int64_t*>(offsets.get());
          check(measure::fill_uniform_offsets(true, off, ends.get(), count + 1, size, b.sm_count(),
                                              s),
                "offsets fill");
          check(cudaStreamSynchronize(s), "offsets fill");
          const Segments seg = opt.layout == SegLayout::rows ? Segments::rows(count, size)
                                                             : Segments::csr(count, off);
          void* in = b.input();
          void* out = lib_out.get();
          void* cout = cub_out.get();
          const SegmentedConfig cfg = tunedreduce::lookup_segmented(dtype, op, seg, opt.device);
          std::size_t cub_bytes = 0, tuned_bytes = 0;
          check(cub_segmented_reduce(dtype, op, nullptr, cub_bytes, in, cout, count, off, off + 1,
                                     s),
                "CUB size query");
          void* cub_temp = b.cub_temp(std::max<std::size_t>(cub_bytes, 1));
          tunedreduce::segmented_reduce(nullptr, tuned_bytes, in, out, seg, dtype, op, s);
          void* tuned_temp = b.tuned_temp(tuned_bytes);

          // Each call's whole output poisoned before its verification run, then every segment's
          // result checked (CUB's argmin / argmax pairs first turned into IndexedValues).
          auto poison = [&](void* p, std::size_t bytes) {
            return [=, &b] {
              check(cudaMemsetAsync(p, poison_byte, bytes, b.stream()), "cudaMemset(output)");
            };
          };
          auto verify = [&](void* p, bool cub) {
            return [=, &host, &indexed]() -> std::string {
              const std::size_t bytes = count * (cub ? cub_rb : rb);
              host.resize(bytes);
              check(cudaMemcpy(host.data(), p, bytes, cudaMemcpyDeviceToHost),
                    "cudaMemcpy(results)");
              const void* results = host.data();
              if (cub && is_arg_op(op)) {
                indexed.resize(count * rb);
                cub_pairs_to_indexed(dtype, host.data(), indexed.data(), count);
                results = indexed.data();
              }
              return measure::verify_segments(dtype, op, seed, size, 0, count, results);
            };
          };
          std::vector<Bench::Method> methods;
          if (want_cached)
            methods.push_back({[&] { tunedreduce::segmented_reduce(in, out, seg, dtype, op, s); },
                               nullptr, nullptr, poison(out, count * rb), verify(out, false)});
          if (want_two_phase)
            methods.push_back({[&] {
                                 std::size_t tb = tuned_bytes;
                                 tunedreduce::segmented_reduce(tuned_temp, tb, in, out, seg, dtype,
                                                               op, s);
                               },
                               nullptr, nullptr, poison(out, count * rb), verify(out, false)});
          // CUB's ArgMin / ArgMax index a segment with an int.
          const bool cub_can = !is_arg_op(op) ||
                               size <= static_cast<std::uint64_t>(std::numeric_limits<int>::max());
          if (cub_can)
            methods.push_back({[&] {
                                 std::size_t tb = cub_bytes;
                                 check(cub_segmented_reduce(dtype, op, cub_temp, tb, in, cout,
                                                            count, off, off + 1, s),
                                       "cub::DeviceSegmentedReduce");
                               },
                               nullptr, nullptr, poison(cout, count * cub_rb), verify(cout, true)});
          // The floor: a plain read of the input and a write of the results' bytes, timed as the
          // calls (the offsets, which rows do not have, are not counted). It writes over the
          // library's output, whose results were verified before the timed runs.
          const std::size_t in_bytes = n * dtype_size(dtype), out_bytes = count * rb;
          methods.push_back({[&] { b.floor(in_bytes, out, out_bytes); }, nullptr, nullptr, [] {},
                             [] { return std::string(); }});
          const std::vector<MethodTiming> t = b.measure(methods, in_bytes + out_bytes);
          const MethodTiming& floor = t.back();
          MethodTiming none;
          if (!cub_can) none.error = "CUB's ArgMin and ArgMax index segments of at most 2^31 - 1";
          const MethodTiming& cached = want_cached ? t[0] : MethodTiming{};
          const MethodTiming& two_phase = want_two_phase ? t[want_cached ? 1 : 0] : MethodTiming{};
          const MethodTiming& cub = cub_can ? t[t.size() - 2] : none;
          auto ratio = [&](const MethodTiming& x) {
            return x.verified() && cub.verified()
                       ? fmt::format("{:.3f}x", cub.median() / x.median())
                       : std::string("-");
          };
          // % of the floor: the slower of the library's calls timed.
          const MethodTiming& shown =
              want_cached && (!want_two_phase || cached.median() >= two_phase.median()) ? cached
                                                                                        : two_phase;
          const std::string pct_floor =
              shown.verified() && floor.verified()
                  ? fmt::format("{:.1f}", 100.0 * floor.median() / shown.median())
                  : std::string("-");
          std::printf("%6s %7s %9s %10s %10s %10s %9s %6s %10s %10s  %s (%s)\n",
                      grammar::count_text(n).c_str(), grammar::count_text(size).c_str(),
                      grammar::count_text(count).c_str(),
                      want_cached ? fmt_us(cached).c_str() : "-",
                      want_two_phase ? fmt_us(two_phase).c_str() : "-", fmt_us(cub).c_str(),
                      fmt_us(floor).c_str(), pct_floor.c_str(),
                      want_cached ? ratio(cached).c_str() : "-",
                      want_two_phase ? ratio(two_phase).c_str() : "-", cfg.kernel_id,
                      level_text(cfg).c_str());
          const std::pair<const char*, const MethodTiming*> all[] = {
              {"cached", want_cached ? &cached : nullptr},
              {"two-phase", want_two_phase ? &two_phase : nullptr},
              {"CUB", cub_can ? &cub : nullptr}};
          for (const auto& [name, x] : all)
            if (x && !x->error.empty()) {
              ++failures;
              std::printf("       %s at %s: %s\n", name, shape.c_str(), x->error.c_str());
            }
          std::fflush(stdout);

          Json row = Json::object();
          row.set("dtype", dtype_name(dtype));
          row.set("op", op_name(op));
          row.set("n", static_cast<std::int64_t>(n));
          row.set("segment_size", static_cast<std::int64_t>(size));
          row.set("segments", static_cast<std::int64_t>(count));
          row.set("layout", db_layout(opt.layout));
          row.set("bytes_moved", static_cast<std::int64_t>(n * dtype_size(dtype) + count * rb));
          row.set("kernel_id", cfg.kernel_id);
          row.set("lookup_level", level_name(cfg.level));
          row.set("cache_state", cache_state_name(cfg.cache_state));
          row.set("source", cfg.source);
          if (want_cached) {
            row.set("cached", cached.to_json());
            if (cached.verified() && cub.verified())
              row.set("cached_speedup_vs_cub", cub.median() / cached.median());
          }
          if (want_two_phase) {
            Json tj = two_phase.to_json();
            tj.set("temp_bytes", static_cast<std::int64_t>(tuned_bytes));
            row.set("two_phase", tj);
            if (two_phase.verified() && cub.verified())
              row.set("two_phase_speedup_vs_cub", cub.median() / two_phase.median());
          }
          Json cj = cub.to_json();
          if (cub_can) cj.set("temp_bytes", static_cast<std::int64_t>(cub_bytes));
          row.set("cub", cj);
          row.set("floor", floor.to_json());
          rows.push_back(row);
          if (recorder) {
            auto record = [&](db::BenchMethod m, const MethodTiming& x, bool tuned,
                              std::optional<std::int64_t> temp) {
              db::BenchResult r =
                  bench_result<SegmentedConfig>(dtype, op, n, m, x, tuned ? &cfg : nullptr, temp);
              r.segment_size = size;
              r.layout = db_layout(opt.layout);
              recorder->add(r);
            };
            if (want_cached) record(db::BenchMethod::cached, cached, true, {});
            if (want_two_phase)
              record(db::BenchMethod::two_phase, two_phase, true,
                     static_cast<std::int64_t>(tuned_bytes));
            if (cub_can)
              record(db::BenchMethod::cub, cub, false, static_cast<std::int64_t>(cub_bytes));
            record(db::BenchMethod::floor, floor, false, {});
          }
        }
    }
  }
  return failures;
}

}  // namespace tunedreduce::cli::bench
