// Question: can two doubles in each thread's expansion (K = 2) keep float's chunks in registers
// without spilling, if the launch bounds allow more registers (fewer resident blocks), and is that
// as fast as exact_registers (K = 1) on uniform data and as exact_wide (K = 2, chunks in local
// memory) on widely spread data at 2^22-2^26, where neither family is both (docs/performance.md
// 3.21)? exact/sum_kernels.cuh's first pass instantiated here with other minimum blocks a
// multiprocessor (__launch_bounds__), launched as exact_sum launches it (single_pass, a ticket
// outside the workspace, the library's persistent grid: kernels/exact_geometry.hpp's launch_grid),
// against cub::DeviceReduce::Sum on the same pointer, cold L2, medians of 31. Every configuration's
// bits must equal the first one's and, up to 2^25 elements, the host exact reference's.
// docs/performance.md 3.21.
//
//   exact_bounds [MODES [SIZES]]      (exact_common.cuh's modes; default 0,3 and 2^22..2^26)

#include <cub/device/device_reduce.cuh>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "bench/experiments/exact_common.cuh"
#include "bench/experiments/experiment.hpp"
#include "exact/reference.hpp"
#include "exact/sum_kernels.cuh"
#include "exact/temp_size.hpp"
#include "kernels/exact_geometry.hpp"
#include "kernels/registry.hpp"

namespace {

namespace tr = tunedreduce;
namespace ex = tunedreduce::exact;
using Kernel = void (*)(const float*, std::uint64_t, std::uint64_t, std::uint64_t, std::int64_t*,
                        unsigned*, float*);

struct Config {
  const char* name;
  Kernel kernel;
  int block;
  int unroll;
};

template <int kThreads, int kUnroll, int kExpansion, int kMinBlocks>
Config config(const char* name) {
  return {name,
          &ex::detail::exact_sum_blocks<float, kThreads, 4, kUnroll, kExpansion,
                                        ex::Residence::registers, kMinBlocks>,
          kThreads, kUnroll};
}

const Config kConfigs[] = {
    config<512, 2, 1, 2>("512u2K1/2"),  // exact_registers.b512.u2
    config<512, 4, 1, 2>("512u4K1/2"),  // exact_registers.b512.u4
    config<512, 2, 2, 2>("512u2K2/2"),  // K = 2 in 64 registers: spills
    config<512, 2, 2, 1>("512u2K2/1"), config<512, 4, 2, 1>("512u4K2/1"),
    config<256, 2, 2, 3>("256u2K2/3"), config<256, 4, 2, 3>("256u4K2/3"),
    config<256, 4, 2, 2>("256u4K2/2"), config<128, 2, 2, 6>("128u2K2/6"),
    config<128, 4, 2, 5>("128u4K2/5"),
};

struct Launch {
  unsigned grid = 0;
  std::int64_t* slots = nullptr;
  unsigned* ticket = nullptr;
};

bool run(const ColdTimer& timer, const cudaDeviceProp& prop, int mode, std::uint64_t n) {
  const cudaStream_t s = timer.s;
  constexpr std::size_t k = std::size(kConfigs);
  float* in = nullptr;
  CK(cudaMalloc(&in, n * sizeof(float)));
  exact_experiments::fill<<<1024, 256, 0, s>>>(in, n, n * 7, mode);
  CK(cudaGetLastError());
  float* out = nullptr;
  CK(cudaMalloc(&out, (k + 1) * sizeof(float)));
  CK(cudaMemsetAsync(out, 0xFF, (k + 1) * sizeof(float), s));  // poison
  const std::uint64_t vectors = n / 4;                         // cudaMalloc's alignment: no head
  std::vector<Launch> launches(k);
  tr::kernels::DeviceLimits dev;
  dev.sm_count = prop.multiProcessorCount;
  for (std::size_t c = 0; c < k; ++c) {
    int resident = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kConfigs[c].kernel,
                                                     kConfigs[c].block, 0));
    // The library's grid for these knobs (the family does not enter the rule).
    const tr::kernels::KernelParams p{tr::kernels::Family::exact_registers,
                                      kConfigs[c].block,
                                      kConfigs[c].unroll,
                                      tr::kernels::SmemMode::none,
                                      tr::kernels::Finish::single_pass,
                                      tr::DType::f32,
                                      tr::Op::exact_sum};
    const std::uint64_t grid =
        ex::temp_size::grid_blocks(n, 4, kConfigs[c].block, kConfigs[c].unroll,
                                   tr::kernels::exact_geometry::launch_grid(p, n, dev, resident));
    launches[c].grid = static_cast<unsigned>(grid);
    CK(cudaMalloc(&launches[c].slots, ex::temp_size::bytes<float>(grid, true)));
    // The ticket and the accumulator after it, as ExactLaunch::counter's.
    CK(cudaMalloc(&launches[c].ticket, ex::temp_size::ticket_bytes));
    CK(cudaMemsetAsync(launches[c].ticket, 0, ex::temp_size::ticket_bytes, s));
  }
  const auto launch = [&](std::size_t c) {
    const Launch& l = launches[c];
    kConfigs[c].kernel<<<l.grid, kConfigs[c].block, 0, s>>>(in, n, 0, vectors, l.slots,
                                                            l.grid > 1 ? l.ticket : nullptr,
                                                            out + c);
    CK(cudaGetLastError());
  };
  std::size_t cub_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, out + k, n, s));
  void* cub_temp = nullptr;
  CK(cudaMalloc(&cub_temp, std::max<std::size_t>(cub_bytes, 1)));
  for (std::size_t c = 0; c < k; ++c) launch(c);
  CK(cudaStreamSynchronize(s));
  std::vector<float> got(k);
  CK(cudaMemcpy(got.data(), out, k * sizeof(float), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (std::size_t c = 1; c < k; ++c) ok = ok && std::memcmp(&got[c], &got[0], sizeof(float)) == 0;
  const bool with_reference = n <= exact_experiments::kReferenceMax;
  if (with_reference) ok = ok && exact_experiments::equals_reference(in, n, got[0]);
  const float cub_us =
      timer.median_us([&] { CK(cub::DeviceReduce::Sum(cub_temp, cub_bytes, in, out + k, n, s)); });
  std::printf("%d  %11llu  %8.1f", mode, static_cast<unsigned long long>(n), cub_us);
  for (std::size_t c = 0; c < k; ++c) {
    const float us = timer.median_us([&] { launch(c); });
    std::printf("  %9.3f", cub_us / us);
  }
  std::printf("  %s\n", ok ? (with_reference ? "ok (reference)" : "ok") : "MISMATCH");
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(cub_temp));
  for (const Launch& l : launches) {
    CK(cudaFree(l.slots));
    CK(cudaFree(l.ticket));
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 3) {
    std::fprintf(stderr, "usage: exact_bounds [MODES [SIZES]]\n");
    return 2;
  }
  std::vector<std::uint64_t> modes, sizes;
  try {
    modes = exact_experiments::parse_modes(argc > 1 ? argv[1] : "0,3");
    sizes = exact_experiments::parse_list("SIZES", argc > 2 ? argv[2] : "2^22,2^23,2^24,2^25,2^26");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exact_bounds: %s\n", e.what());
    return 2;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "device: %s; f32, chunks in registers; speed-up over cub::DeviceReduce::Sum, cold\n"
      "configurations: BLOCK u UNROLL K DOUBLES / MIN BLOCKS A MULTIPROCESSOR (launch bounds)\n",
      prop.name);
  const ColdTimer timer(prop);
  std::printf("mode           n    CUB us");
  for (const Config& c : kConfigs) std::printf("  %9s", c.name);
  std::printf("  bits\n");
  bool ok = true;
  for (const std::uint64_t m : modes)
    for (const std::uint64_t n : sizes) ok = run(timer, prop, static_cast<int>(m), n) && ok;
  std::printf("%s\n", ok ? "every result's bits as expected" : "SOME RESULT DIFFERS");
  return ok ? 0 : 1;
}
