#pragma once
// What the experiments share: a CUDA error check (prints the call and its error, exits 1) and
// the cold-L2 timing of single_tile.cu and kernel_overhead.cu.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x)                                                                               \
  do {                                                                                      \
    cudaError_t e_ = (x);                                                                   \
    if (e_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

/// Times launches on stream s as docs/performance.md's method: a cudaMemsetAsync of twice the L2
/// before each start event (cold L2, the GPU busy, launch latency not inside), each run waited
/// for, CUDA events; the median of 31 runs, in microseconds.
struct ColdTimer {
  cudaStream_t s = nullptr;
  void* flush = nullptr;
  std::size_t flush_bytes = 0;
  cudaEvent_t e0 = nullptr, e1 = nullptr;

  explicit ColdTimer(int l2_bytes) : flush_bytes(2 * std::size_t(l2_bytes)) {
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
  }

  float median_us(const std::function<void()>& launch) const {
    std::vector<float> t;
    for (int r = 0; r < 31; ++r) {
      CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, s));
      CK(cudaEventRecord(e0, s));
      launch();
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};
