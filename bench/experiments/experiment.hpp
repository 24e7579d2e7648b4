#pragma once
// What the experiments share, over measure/ (the tuner's and `tunedreduce bench`'s module): a CUDA
// error check that names the call and ends the program, and ColdTimer, the cold-L2 timing of
// single_tile.cu and kernel_overhead.cu.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "measure/gpu.hpp"

#define CK(x)                                                          \
  do {                                                                 \
    const cudaError_t e_ = (x);                                        \
    if (e_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,  \
                   tunedreduce::measure::cuda_error_text(e_).c_str()); \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

/// Times launches on its own stream, each run waited for, with CUDA events: the median of 31 runs,
/// in microseconds. Before each start event, so that the L2 is cold and the GPU busy (launch
/// latency not inside), the flush that the environment's FLUSH names:
///   read    (default) measure::enqueue_read over measure::cold_flush_bytes(L2): the cold flush of
///           the tuner and of `tunedreduce bench`, which leaves L2 holding clean lines of another
///           buffer;
///   memset  a cudaMemsetAsync of 2 x L2, which leaves it full of dirty lines: the method of the
///           single_tile and kernel_overhead figures of docs/performance-log.md (2026-11-22,
///           "the harness and the floors");
///   none    no flush, warm L2 (what the previous run read stays there): a 20 µs busy wait
///           (measure::enqueue_busy_wait) instead, as `tunedreduce bench --l2 warm`.
struct ColdTimer {
  cudaStream_t s = nullptr;
  bool memset_flush = false;
  bool no_flush = false;
  int sm_count = 0;
  void* flush = nullptr;
  std::size_t flush_bytes = 0;
  unsigned* sink = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;

  explicit ColdTimer(const cudaDeviceProp& prop) : sm_count(prop.multiProcessorCount) {
    const char* f = std::getenv("FLUSH");
    if (f && std::strcmp(f, "memset") == 0) {
      memset_flush = true;
    } else if (f && std::strcmp(f, "none") == 0) {
      no_flush = true;
    } else if (f && *f && std::strcmp(f, "read") != 0) {
      std::fprintf(stderr, "FLUSH='%s' is not a flush of this experiment (read, memset or none)\n",
                   f);
      std::exit(2);
    }
    flush_bytes = memset_flush ? 2 * std::size_t(prop.l2CacheSize)
                               : tunedreduce::measure::cold_flush_bytes(prop.l2CacheSize);
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaMemset(flush, 1, flush_bytes));
    CK(cudaMalloc(&sink, sizeof(unsigned)));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::printf("flush: %s\n", no_flush       ? "none (warm L2, a 20 us busy wait)"
                               : memset_flush ? "memset of 2 x L2 (dirty)"
                                              : "read of measure::cold_flush_bytes (clean)");
  }
  ColdTimer(const ColdTimer&) = delete;
  ColdTimer& operator=(const ColdTimer&) = delete;

  /// What precedes run \p r's start event: the flush, or the busy wait.
  void before_run(int r) const {
    if (no_flush) {
      tunedreduce::measure::enqueue_busy_wait(20000, s);
      CK(cudaGetLastError());
    } else if (memset_flush) {
      CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, s));
    } else {
      CK(tunedreduce::measure::enqueue_read(flush, flush_bytes, sm_count, sink, s));
    }
  }

  float median_us(const std::function<void()>& launch) const {
    std::vector<float> t;
    for (int r = 0; r < 31; ++r) {
      before_run(r);
      CK(cudaEventRecord(e0, s));
      launch();
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};
