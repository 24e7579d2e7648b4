// Experiment (docs/performance-log.md, "The single-tile floor"): how fast can one block reduce one
// tile (n <= block x unroll x 16 bytes) from a cold L2, and is CUB's single-tile kernel at that
// floor? The kernel here is built from the product's own pieces (VectorView, the operators,
// block_reduce_shuffle) with nothing else: no grid loop, no finish. Built with
// -DTUNEDREDUCE_EXPERIMENTS=ON (bench/experiments/README.md):
//   cmake --build build --target experiment_single_tile && build/bin/experiments/single_tile
// Timing: ColdTimer (experiment.hpp: measure/'s read flush, or FLUSH=memset, the method of the
// figures in docs/performance-log.md), each run waited for, median of 31. Every result is
// checked against the host reduction of the same data.

#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/experiments/experiment.hpp"
#include "kernels/kernel/families.cuh"

using namespace tunedreduce;
using namespace tunedreduce::kernels;

template <class T, class OpT, int Block, int U>
__global__ void __launch_bounds__(Block)
    k_single(const T* __restrict__ in, std::uint64_t n, T* out) {
  using View = kernels::detail::VectorView<T>;
  using Raw = typename View::Raw;
  constexpr int V = View::V;
  OpT op;
  const View view(in, n);
  Raw x[U];
#pragma unroll
  for (int k = 0; k < U; ++k) {
    const std::uint64_t i = threadIdx.x + std::uint64_t(k) * Block;
    if (i < view.nvec) {
      x[k].u = __ldg(view.vin + i);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) x[k].v.e[e] = OpT::identity();
    }
  }
  T v = OpT::identity();
#pragma unroll
  for (int k = 0; k < U; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e) v = op(v, x[k].v.e[e]);
  v = view.template fold_ends<T, OpT, Block>(in, n, v);
  v = block_reduce_shuffle<T, OpT, Block>(v);
  if (threadIdx.x == 0) *out = v;
}

template <class T, Op O>
void run_type(const ColdTimer& c, const char* name, const std::vector<int>& logs) {
  using OpT = op_t<O, T>;
  const std::uint64_t max_n = 1ull << *std::max_element(logs.begin(), logs.end());
  std::vector<T> host(max_n);
  std::mt19937_64 rng(42);
  // Integers in [-1000, 1000]: every float sum here is exact in any order.
  for (auto& x : host) x = static_cast<T>(static_cast<std::int64_t>(rng() % 2001) - 1000);
  T *in, *out;
  CK(cudaMalloc(&in, max_n * sizeof(T)));
  CK(cudaMalloc(&out, 64));
  CK(cudaMemcpy(in, host.data(), max_n * sizeof(T), cudaMemcpyHostToDevice));
  std::size_t cub_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, out, max_n, c.s));
  void* cub_temp;
  CK(cudaMalloc(&cub_temp, cub_bytes * 4 + 1024));
  for (int lg : logs) {
    const std::uint64_t n = 1ull << lg;
    OpT op;
    T expect = OpT::identity();
    for (std::uint64_t i = 0; i < n; ++i) expect = op(expect, host[i]);
    auto verify = [&](const char* what, const std::function<void()>& launch) {
      T got;
      CK(cudaMemsetAsync(out, 0xA5, sizeof(T), c.s));
      launch();
      CK(cudaMemcpyAsync(&got, out, sizeof(T), cudaMemcpyDeviceToHost, c.s));
      CK(cudaStreamSynchronize(c.s));
      // Sums of integer-valued floats in this range are exact in any order.
      if (std::memcmp(&got, &expect, sizeof(T)) != 0) {
        std::printf("WRONG %s %s n=2^%d\n", name, what, lg);
        std::exit(1);
      }
    };
    auto cub_launch = [&] {
      std::size_t b = cub_bytes * 4 + 1024;
      if constexpr (O == Op::sum) CK(cub::DeviceReduce::Sum(cub_temp, b, in, out, n, c.s));
      else if constexpr (O == Op::min) CK(cub::DeviceReduce::Min(cub_temp, b, in, out, n, c.s));
      else CK(cub::DeviceReduce::Max(cub_temp, b, in, out, n, c.s));
    };
    verify("cub", cub_launch);
    const float cub_us = c.median_us(cub_launch);
    struct Row {
      std::string cfg;
      float us;
    };
    std::vector<Row> rows;
    auto try_cfg = [&](auto kernel, int block, int unroll) {
      constexpr int V = 16 / sizeof(T);
      if (n > std::uint64_t(block) * unroll * V) return;
      auto launch = [&] {
        kernel<<<1, block, 0, c.s>>>(in, n, out);
        CK(cudaGetLastError());
      };
      char cfg_text[32];  // (not string concatenation: g++ 12 warns falsely, -Wrestrict)
      std::snprintf(cfg_text, sizeof cfg_text, "b%d.u%d", block, unroll);
      const std::string cfg = cfg_text;
      verify(cfg.c_str(), launch);
      rows.push_back({cfg, c.median_us(launch)});
    };
    try_cfg(k_single<T, OpT, 128, 4>, 128, 4);
    try_cfg(k_single<T, OpT, 128, 8>, 128, 8);
    try_cfg(k_single<T, OpT, 256, 1>, 256, 1);
    try_cfg(k_single<T, OpT, 256, 2>, 256, 2);
    try_cfg(k_single<T, OpT, 256, 4>, 256, 4);
    try_cfg(k_single<T, OpT, 256, 8>, 256, 8);
    try_cfg(k_single<T, OpT, 512, 1>, 512, 1);
    try_cfg(k_single<T, OpT, 512, 2>, 512, 2);
    try_cfg(k_single<T, OpT, 512, 4>, 512, 4);
    try_cfg(k_single<T, OpT, 1024, 1>, 1024, 1);
    try_cfg(k_single<T, OpT, 1024, 2>, 1024, 2);
    try_cfg(k_single<T, OpT, 1024, 4>, 1024, 4);
    std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.us < b.us; });
    std::printf("%-8s 2^%-3d cub %6.2f |", name, lg, cub_us);
    for (std::size_t i = 0; i < rows.size() && i < 5; ++i)
      std::printf(" %s %6.2f", rows[i].cfg.c_str(), rows[i].us);
    std::printf("\n");
    std::fflush(stdout);
  }
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(cub_temp));
}

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\n", prop.name);
  const ColdTimer c(prop);
  const std::vector<int> logs = {10, 11, 12, 13};
  run_type<std::int32_t, Op::sum>(c, "i32.sum", logs);
  run_type<std::int32_t, Op::max>(c, "i32.max", logs);
  run_type<float, Op::sum>(c, "f32.sum", logs);
  run_type<float, Op::min>(c, "f32.min", logs);
  run_type<std::int64_t, Op::min>(c, "i64.min", logs);
  run_type<std::int64_t, Op::sum>(c, "i64.sum", logs);
  run_type<double, Op::sum>(c, "f64.sum", logs);
  run_type<double, Op::min>(c, "f64.min", logs);
  return 0;
}
