// Experiment (docs/performance.md 3.16): what the cached call's per-call question "is this stream
// being captured into a CUDA graph?" costs the host. Built with -DTUNEDREDUCE_EXPERIMENTS=ON
// (bench/experiments/README.md):
//   cmake --build build --target experiment_capture_query && build/bin/experiments/capture_query
// Times 10^6 calls of cudaStreamIsCapturing on a non-blocking stream, the legacy default stream
// and cudaStreamPerThread (steady_clock, the median of 9 rounds, ns per call), and for scale
// 10^5 cudaGetDevice calls, which every library call makes too; then the same question asked of
// the driver directly (cuStreamIsCapturing through cudaGetDriverEntryPointByVersion), as
// runtime/platform_cuda.cpp asks it.

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

template <class F>
double ns_per_call(int calls, F&& f) {
  std::vector<double> rounds;
  for (int r = 0; r < 9; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    rounds.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / calls);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

}  // namespace

int main() {
  check(cudaFree(nullptr), "cudaFree(nullptr) (context)");
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  cudaStreamCaptureStatus st;
  struct Case {
    const char* name;
    cudaStream_t stream;
  } cases[] = {{"non-blocking stream", s},
               {"legacy default stream", nullptr},
               {"cudaStreamPerThread", cudaStreamPerThread}};
  for (const Case& c : cases) {
    const double ns = ns_per_call(1000000, [&] {
      check(cudaStreamIsCapturing(c.stream, &st), "cudaStreamIsCapturing");
    });
    std::printf("cudaStreamIsCapturing, %-22s %6.1f ns per call\n", c.name, ns);
  }
  PFN_cuStreamIsCapturing_v10000 drv = nullptr;
  cudaDriverEntryPointQueryResult q{};
  check(cudaGetDriverEntryPointByVersion("cuStreamIsCapturing", reinterpret_cast<void**>(&drv),
                                         10000, cudaEnableDefault, &q),
        "cudaGetDriverEntryPointByVersion");
  if (q != cudaDriverEntryPointSuccess || !drv) {
    std::fprintf(stderr, "cuStreamIsCapturing: no driver entry point\n");
    return 1;
  }
  CUstreamCaptureStatus cst;
  for (const Case& c : cases) {
    const double ns = ns_per_call(1000000, [&] {
      if (drv(reinterpret_cast<CUstream>(c.stream), &cst) != CUDA_SUCCESS) std::exit(1);
    });
    std::printf("cuStreamIsCapturing,   %-22s %6.1f ns per call\n", c.name, ns);
  }
  int d;
  const double ns = ns_per_call(100000, [&] { check(cudaGetDevice(&d), "cudaGetDevice"); });
  std::printf("cudaGetDevice                                %6.1f ns per call\n", ns);
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
  return 0;
}
