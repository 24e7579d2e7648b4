// Segmented reductions on the (segment size x count) plane (docs/performance.md, "Segmented
// reductions"): the library's two calls (cached segmented_reduce, and two-phase with storage the
// caller owns) against CUB's DeviceSegmentedReduce of the toolkit (begin/end offsets arrays, the
// only form CUDA 13.0's CUB has) and the floor (a plain read of the input plus a write of the
// results, at the best rate a simple kernel reaches on this GPU), all on the same buffers.
//
//   segmented [bench|sweep]
//     bench (default): the grid, one line per shape: µs of each, speed-up over CUB, % of floor.
//     sweep: every segmented registry entry of the key on every shape (µs), to choose the
//            built-in rules (runtime/segmented_rules.cpp) from.
//   KEY=f32.sum (f64.sum, i32.sum, f32.max, f32.argmax), TOTALS=16,20,24,28 (log2 of the total),
//   LS=0,6,20 (log2 of the segment sizes to run; default all), LAYOUT=rows|offsets,
//   FLUSH=read|memset|none (experiment.hpp: cold L2 by default; launch latency outside the
//   figures). Medians of 15 runs (5 where a run takes more than 2 ms).

#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

}  // namespace

int main(int argc, char** argv) {
  const bool sweep = argc > 1 && std::strcmp(argv[1], "sweep") == 0;
  const Key key = parse_key(std::getenv("KEY"));
  const bool offsets_layout = std::getenv("LAYOUT") &&
                              std::strcmp(std::getenv("LAYOUT"), "offsets") == 0;
  std::vector<int> totals = {16, 20, 24, 28};
  if (const char* t = std::getenv("TOTALS")) {
    totals.clear();
    for (const char* p = t; *p;) {
      totals.push_back(std::atoi(p));
      while (*p && *p != ',') ++p;
      if (*p) ++p;
    }
  }
  // LS=0,6,20: only these segment sizes (log2 of L); all of them by default.
  std::vector<int> only_ls;
  if (const char* t = std::getenv("LS")) {
    for (const char* p = t; *p;) {
      only_ls.push_back(std::atoi(p));
      while (*p && *p != ',') ++p;
      if (*p) ++p;
    }
  }
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
  CK(cudaMalloc(&in, N * key.in_bytes));
  CK(cudaMalloc(&out, N * key.out_bytes + 64));
  CK(cudaMalloc(&off, (N + 1) * sizeof(std::int64_t)));
  CK(cudaMemset(in, 0x3c, N * key.in_bytes));  // 1.15e-2 as f32 bytes: finite, nonzero
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
  std::printf("%-6s %-10s %-10s %10s %10s %10s %10s %8s %8s %7s  %s\n", "total", "L", "S", "cached",
              "two-phase", "CUB", "floor", "xCUB", "xCUB2", "%floor", "kernel");
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
      const Segments g = offsets_layout ? Segments::csr(S, off, L) : Segments::rows(S, L);
      const float floor_us = median([&] {
        floor_kernel<<<prop.multiProcessorCount * 8, 256, 0, timer.s>>>(
            static_cast<const uint4*>(in), total * key.in_bytes / 16, static_cast<float*>(out),
            S * key.out_bytes / 16, timer.sink);
      });
      if (sweep) {
        std::printf("%-6d %-10llu %-10llu floor %.2f\n", lt, (unsigned long long)L,
                    (unsigned long long)S, floor_us);
        for (const seg::SegEntry& e : seg::seg_registry()) {
          if (e.params.dtype != key.dtype || e.params.op != key.op) continue;
          if ((e.params.layout == seg::SegLayout::fixed) == offsets_layout) continue;
          if (offsets_layout && e.params.layout != seg::SegLayout::offsets64) continue;
          seg::SegProblem p;
          p.num_segments = S;
          p.segment_size = L;
          p.stride = L;
          p.begin = off;
          p.end = off + 1;
          p.mean_length = L;
          if (e.can_implement(p, 256, dev)) continue;
          ensure_temp(e.workspace_bytes(p, dev));
          seg::SegLaunchArgs a;
          a.in = in;
          a.out = out;
          a.problem = p;
          a.workspace = temp;
          a.workspace_bytes = temp_held;
          a.stream = timer.s;
          const float us = median([&] { CK(e.launch(a, dev)); });
          std::printf("  %-44s %10.2f %6.1f%%\n", e.id, us, 100.0 * floor_us / us);
          // The split family again with the one-kernel finish (a counter of the kernels' table).
          if (unsigned long long* table = nullptr;
              e.params.family == seg::SegFamily::split &&
              tunedreduce::kernels::counter_table(&table) == cudaSuccess) {
            a.counter = table;
            const float us1 = median([&] { CK(e.launch(a, dev)); });
            std::printf("  %-44s %10.2f %6.1f%%\n", (std::string(e.id) + "+ticket").c_str(), us1,
                        100.0 * floor_us / us1);
          }
        }
        std::fflush(stdout);
        continue;
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
      std::printf("%-6d %-10llu %-10llu %10.2f %10.2f %10.2f %10.2f %8.2f %8.2f %6.1f%%  %s\n", lt,
                  (unsigned long long)L, (unsigned long long)S, cached, two_phase, cub_us, floor_us,
                  cub_us / cached, cub_us / two_phase,
                  100.0 * floor_us / std::max(cached, two_phase), c.kernel_id);
      std::fflush(stdout);
    }
  }
  return 0;
}
