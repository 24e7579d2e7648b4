// Segmented reductions on the (segment size x count) plane (docs/performance.md, "Segmented
// reductions"): the library's two calls (cached segmented_reduce, and two-phase with storage the
// caller owns) against CUB's DeviceSegmentedReduce of the toolkit (begin/end offsets arrays, the
// only form CUDA 13.0's CUB has) and the floor (a plain read of the input plus a write of the
// results, at the best rate a simple kernel reaches on this GPU), all on the same buffers.
//
//   segmented [bench|sweep]
//     bench (default): the grid, one line per shape: µs of each, speed-up over CUB, % of floor.
//     sweep: every segmented registry entry of the key on every shape (µs), to choose the
//            built-in rules (runtime/segmented_rules.cpp) from; FAMILY=split only that family's.
//   KEY=f32.sum (f64.sum, i32.sum, f32.max, f32.argmax), TOTALS=16,20,24,28 (log2 of the total),
//   LS=0,6,20 (log2 of the segment sizes to run; default all), LAYOUT=rows|offsets (CSR, int64;
//   the library told the longest length unless LONGEST=unknown, the mean length unless
//   MEAN=unknown, which implies LONGEST=unknown: CUB's call),
//   FLUSH=read|memset|none (experiment.hpp: cold L2 by default; launch latency outside the
//   figures). Medians of 15 runs (5 where a run takes more than 2 ms).
//   DIST=powerlaw|onehuge: variable segments (CSR, int64 offsets; SORT=asc|desc sorts their
//   lengths; MEAN=unknown tells the library nothing) instead of the grid, for each
//   total of TOTALS and mean length of MEANS=64,4096 (log-free, elements): powerlaw lengths
//   from a Pareto law of index ALPHA (default 1.5; the smallest length mean / 3 at 1.5) in a
//   random order; onehuge one segment of half the total at a random place and the others of the
//   mean length. The library is told the mean length; the floor reads the input and the
//   offsets and writes the results.

#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/experiments/experiment.hpp"
#include "kernels/counters.hpp"
#include "kernels/device.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tunedreduce/tunedreduce.hpp"

namespace {

namespace seg = tunedreduce::kernels::segmented;
using tunedreduce::DType;
using tunedreduce::Op;
using tunedreduce::Segments;

/// The floor: every element read once with 16-byte loads, every result written once.
__global__ void floor_kernel(const uint4* __restrict__ in, std::uint64_t n16,
                             float* __restrict__ out, std::uint64_t nout4, unsigned* sink) {
  unsigned acc = 0;
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n16;
       i += stride) {
    const uint4 v = __ldg(in + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < nout4;
       i += stride)
    reinterpret_cast<float4*>(out)[i] = make_float4(0, 0, 0, 0);
  if (acc == 0x9e3779b9u) *sink = acc;
}

struct Key {
  DType dtype;
  Op op;
  std::size_t in_bytes, out_bytes;
};

Key parse_key(const char* s) {
  const std::string k = s ? s : "f32.sum";
  if (k == "f32.sum") return {DType::f32, Op::sum, 4, 4};
  if (k == "f64.sum") return {DType::f64, Op::sum, 8, 8};
  if (k == "i32.sum") return {DType::i32, Op::sum, 4, 4};
  if (k == "f32.max") return {DType::f32, Op::max, 4, 4};
  if (k == "f32.argmax") return {DType::f32, Op::argmax, 4, 16};
  std::fprintf(stderr, "KEY='%s': one of f32.sum, f64.sum, i32.sum, f32.max, f32.argmax\n", s);
  std::exit(2);
}

template <class T>
cudaError_t cub_segmented(const Key& k, void* temp, std::size_t& bytes, const void* in, void* out,
                          std::uint64_t S, const std::int64_t* off, cudaStream_t s) {
  const T* i = static_cast<const T*>(in);
  const int n = static_cast<int>(S);
  if (k.op == Op::sum)
    return cub::DeviceSegmentedReduce::Sum(temp, bytes, i, static_cast<T*>(out), n, off, off + 1,
                                           s);
  if (k.op == Op::max)
    return cub::DeviceSegmentedReduce::Max(temp, bytes, i, static_cast<T*>(out), n, off, off + 1,
                                           s);
  return cub::DeviceSegmentedReduce::ArgMax(temp, bytes, i,
                                            static_cast<cub::KeyValuePair<int, T>*>(out), n, off,
                                            off + 1, s);
}

cudaError_t cub_call(const Key& k, void* temp, std::size_t& bytes, const void* in, void* out,
                     std::uint64_t S, const std::int64_t* off, cudaStream_t s) {
  switch (k.dtype) {
    case DType::f64:
      return cub_segmented<double>(k, temp, bytes, in, out, S, off, s);
    case DType::i32:
      return cub_segmented<std::int32_t>(k, temp, bytes, in, out, S, off, s);
    default:
      return cub_segmented<float>(k, temp, bytes, in, out, S, off, s);
  }
}

std::vector<int> int_list(const char* env, std::vector<int> def) {
  const char* t = std::getenv(env);
  if (!t) return def;
  std::vector<int> out;
  for (const char* p = t; *p;) {
    out.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p) ++p;
  }
  return out;
}

/// Segment lengths summing to \p total: DIST=powerlaw or onehuge (the header), seeded.
std::vector<std::uint64_t> dist_lengths(const std::string& dist, std::uint64_t total,
                                        std::uint64_t mean, double alpha) {
  std::mt19937_64 rng(0x5eed + total + mean);
  std::vector<std::uint64_t> len;
  std::uint64_t sum = 0;
  if (dist == "onehuge") {
    const std::uint64_t huge = total / 2;
    for (; sum + mean <= total - huge; sum += mean) len.push_back(mean);
    len.push_back(total - huge - sum);
    len.insert(len.begin() + std::uniform_int_distribution<std::size_t>(0, len.size())(rng), huge);
    return len;
  }
  if (dist != "powerlaw") {
    std::fprintf(stderr, "DIST='%s': powerlaw or onehuge\n", dist.c_str());
    std::exit(2);
  }
  const double xmin = double(mean) * (alpha - 1) / alpha;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  while (sum < total) {
    const double x = xmin * std::pow(1.0 - u(rng), -1.0 / alpha);
    std::uint64_t l = x >= double(total) ? total : std::uint64_t(x);
    l = std::min(l, total - sum);
    len.push_back(l);
    sum += l;
  }
  return len;
}

}  // namespace

int main(int argc, char** argv) {
  const bool sweep = argc > 1 && std::strcmp(argv[1], "sweep") == 0;
  const Key key = parse_key(std::getenv("KEY"));
  const bool offsets_layout = std::getenv("LAYOUT") &&
                              std::strcmp(std::getenv("LAYOUT"), "offsets") == 0;
  const std::vector<int> totals = int_list("TOTALS", {16, 20, 24, 28});
  // LAYOUT=offsets: the library is told the longest length (L: every segment the same) unless
  // LONGEST=unknown (then it takes the balanced family, as for lengths that may spread).
  const bool unknown_longest = std::getenv("LONGEST") &&
                               std::strcmp(std::getenv("LONGEST"), "unknown") == 0;
  // MEAN=unknown: nor the mean length (CUB's call: the count and the offsets alone).
  const bool unknown_mean = std::getenv("MEAN") && std::strcmp(std::getenv("MEAN"), "unknown") == 0;
  // LS=0,6,20: only these segment sizes (log2 of L); all of them by default.
  const std::vector<int> only_ls = int_list("LS", {});
  // FAMILY=split: sweep only this family's entries.
  const char* only_family = std::getenv("FAMILY");
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, key %s.%s, layout %s\n", prop.name, tunedreduce::dtype_name(key.dtype),
              tunedreduce::op_name(key.op), offsets_layout ? "offsets (int64, CSR)" : "rows");
  ColdTimer timer(prop);
  const tunedreduce::kernels::DeviceLimits dev = tunedreduce::kernels::query_device_limits(0);
  int max_total = 0;
  for (int t : totals) max_total = std::max(max_total, t);
  const std::uint64_t N = std::uint64_t{1} << max_total;
  void *in, *out, *temp = nullptr;
  std::int64_t* off;
  // (The input buffer holds room for the offsets' bytes too: the floor of DIST reads them.)
  const std::size_t in_room = N * key.in_bytes + (N + 1) * sizeof(std::int64_t);
  CK(cudaMalloc(&in, in_room));
  CK(cudaMalloc(&out, N * key.out_bytes + 64));
  CK(cudaMalloc(&off, (N + 1) * sizeof(std::int64_t)));
  CK(cudaMemset(in, 0x3c, in_room));  // 1.15e-2 as f32 bytes: finite, nonzero
  std::size_t temp_held = 0;
  auto ensure_temp = [&](std::size_t bytes) {
    if (bytes <= temp_held) return;
    if (temp) CK(cudaFree(temp));
    CK(cudaMalloc(&temp, bytes));
    temp_held = bytes;
  };
  auto median = [&](const std::function<void()>& f) {
    // The timer's median of 31 when quick; slow calls (CUB's one block per segment) fewer.
    std::vector<float> t;
    for (int r = 0; r < 15; ++r) {
      timer.before_run(r);
      CK(cudaEventRecord(timer.e0, timer.s));
      f();
      CK(cudaEventRecord(timer.e1, timer.s));
      CK(cudaEventSynchronize(timer.e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, timer.e0, timer.e1));
      t.push_back(ms * 1000.f);
      if (r >= 4 && ms > 2.f) break;
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  // One shape: its floor, then every entry (sweep) or the library's two calls and CUB.
  // \p offsets_bytes: the offsets the floor reads too (0 for the rows of the grid).
  auto run_shape = [&](int lt, const std::string& label, std::uint64_t total, std::uint64_t S,
                       const Segments& g, const seg::SegProblem& p, bool on_offsets,
                       std::uint64_t offsets_bytes) {
    const float floor_us = median([&] {
      floor_kernel<<<prop.multiProcessorCount * 8, 256, 0, timer.s>>>(
          static_cast<const uint4*>(in), (total * key.in_bytes + offsets_bytes) / 16,
          static_cast<float*>(out), S * key.out_bytes / 16, timer.sink);
    });
    if (sweep) {
      std::printf("%-6d %-10s %-10llu floor %.2f\n", lt, label.c_str(), (unsigned long long)S,
                  floor_us);
      for (const seg::SegEntry& e : seg::seg_registry()) {
        if (e.params.dtype != key.dtype || e.params.op != key.op) continue;
        if (only_family && std::strcmp(seg::seg_family_name(e.params.family), only_family) != 0)
          continue;
        if ((e.params.layout == seg::SegLayout::fixed) == on_offsets) continue;
        if (on_offsets && e.params.layout != seg::SegLayout::offsets64) continue;
        if (e.can_implement(p, 256, dev)) continue;
        ensure_temp(e.workspace_bytes(p, dev));
        seg::SegLaunchArgs a;
        a.in = in;
        a.out = out;
        a.problem = p;
        a.workspace = temp;
        a.workspace_bytes = temp_held;
        a.stream = timer.s;
        // (The balanced family takes its scan's ticket on the kernels' counter, as the library
        // runs it.)
        unsigned long long* table = nullptr;
        if (e.params.family == seg::SegFamily::balanced &&
            tunedreduce::kernels::counter_table(&table) == cudaSuccess)
          a.counter = table;
        const float us = median([&] { CK(e.launch(a, dev)); });
        std::printf("  %-44s %10.2f %6.1f%%\n", e.id, us, 100.0 * floor_us / us);
        // The split family again with the one-kernel finish (a counter of the kernels' table).
        if (e.params.family == seg::SegFamily::split &&
            tunedreduce::kernels::counter_table(&table) == cudaSuccess) {
          a.counter = table;
          const float us1 = median([&] { CK(e.launch(a, dev)); });
          std::printf("  %-44s %10.2f %6.1f%%\n", (std::string(e.id) + "+ticket").c_str(), us1,
                      100.0 * floor_us / us1);
        }
      }
      std::fflush(stdout);
      return;
    }
    const float cached =
        median([&] { tunedreduce::segmented_reduce(in, out, g, key.dtype, key.op, timer.s); });
    std::size_t bytes = 0;
    tunedreduce::segmented_reduce(nullptr, bytes, in, out, g, key.dtype, key.op, timer.s);
    ensure_temp(bytes);
    const float two_phase = median([&] {
      std::size_t b = temp_held;
      tunedreduce::segmented_reduce(temp, b, in, out, g, key.dtype, key.op, timer.s);
    });
    float cub_us = 0;
    if (S <= 0x7fffffff) {
      std::size_t cb = 0;
      CK(cub_call(key, nullptr, cb, in, out, S, off, timer.s));
      ensure_temp(cb);
      cub_us = median([&] {
        std::size_t b = temp_held;
        CK(cub_call(key, temp, b, in, out, S, off, timer.s));
      });
    }
    const tunedreduce::SegmentedConfig c = tunedreduce::lookup_segmented(key.dtype, key.op, g);
    std::printf("%-6d %-10s %-10llu %10.2f %10.2f %10.2f %10.2f %8.2f %8.2f %6.1f%%  %s\n", lt,
                label.c_str(), (unsigned long long)S, cached, two_phase, cub_us, floor_us,
                cub_us / cached, cub_us / two_phase, 100.0 * floor_us / std::max(cached, two_phase),
                c.kernel_id);
    std::fflush(stdout);
  };
  std::printf("%-6s %-10s %-10s %10s %10s %10s %10s %8s %8s %7s  %s\n", "total", "L", "S", "cached",
              "two-phase", "CUB", "floor", "xCUB", "xCUB2", "%floor", "kernel");
  if (const char* dist = std::getenv("DIST")) {
    const char* a = std::getenv("ALPHA");
    const double alpha = a ? std::atof(a) : 1.5;
    for (int lt : totals) {
      const std::uint64_t total = std::uint64_t{1} << lt;
      for (int mean : int_list("MEANS", {64, 4096})) {
        std::vector<std::uint64_t> len = dist_lengths(dist, total, mean, alpha);
        // SORT=asc|desc: the lengths in order (rows sorted by length, as some sparse formats
        // keep them), the hardest order for a fixed share of segments a block.
        if (const char* o = std::getenv("SORT")) {
          if (std::strcmp(o, "asc") == 0) std::sort(len.begin(), len.end());
          else std::sort(len.begin(), len.end(), std::greater<>());
        }
        const std::uint64_t S = len.size();
        std::vector<std::int64_t> h(S + 1, 0);
        for (std::uint64_t i = 0; i < S; ++i) h[i + 1] = h[i] + std::int64_t(len[i]);
        CK(cudaMemcpy(off, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
        const std::uint64_t longest = *std::max_element(len.begin(), len.end());
        std::printf("# %s lengths, mean %d: %llu segments, longest %llu\n", dist, mean,
                    (unsigned long long)S, (unsigned long long)longest);
        seg::SegProblem p;
        p.num_segments = S;
        p.begin = off;
        p.end = off + 1;
        p.mean_length = unknown_mean ? 0 : std::uint64_t(mean);
        run_shape(lt, std::string(dist).substr(0, 5) + std::to_string(mean), total, S,
                  Segments::csr(S, off, unknown_mean ? 0 : std::uint64_t(mean)), p, true,
                  (S + 1) * 8);
      }
    }
    return 0;
  }
  for (int lt : totals) {
    const std::uint64_t total = std::uint64_t{1} << lt;
    for (int ll = 0; ll <= lt; ++ll) {
      if (!only_ls.empty() && std::find(only_ls.begin(), only_ls.end(), ll) == only_ls.end())
        continue;
      const std::uint64_t L = std::uint64_t{1} << ll, S = total / L;
      // Offsets 0, L, 2L, ... for CUB (and the offsets layout's CSR).
      {
        std::vector<std::int64_t> h(S + 1);
        for (std::uint64_t i = 0; i <= S; ++i) h[i] = std::int64_t(i * L);
        CK(cudaMemcpy(off, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
      }
      seg::SegProblem p;
      p.num_segments = S;
      p.segment_size = L;
      p.stride = L;
      p.begin = off;
      p.end = off + 1;
      p.mean_length = L;
      run_shape(lt, std::to_string(L), total, S,
                offsets_layout ? Segments::csr(S, off, unknown_mean ? 0 : L,
                                               unknown_longest || unknown_mean ? 0 : L)
                               : Segments::rows(S, L),
                p, offsets_layout, 0);
    }
  }
  return 0;
}
