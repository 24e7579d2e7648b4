// Question: how do the exact first pass's knobs that the registry's families fix (the doubles in
// a thread's expansion, K, and where its chunks live) trade speed on dense data against speed on
// widely spread data? exact::exact_sum (exact/sum.hpp) launched as the library's entries launch
// it (single_pass with a counter outside the workspace, the persistent grid of
// kernels/exact_geometry.hpp), one workspace a configuration, against cub::DeviceReduce::Sum on
// the same pointer, cold L2 (ColdTimer's read flush), medians of 31. Every configuration's bits
// must equal the first one's and, up to 2^25 elements, the host exact reference's.
// docs/performance.md 3.21.
//
//   exact_knobs CONFIGS [MODES [SIZES [TYPES]]]
// CONFIGS: comma-separated BLOCKxUNROLLxK followed by r (chunks in registers, float only) or l
// (local memory), and optionally @B: a grid of B blocks a multiprocessor instead of the library's
// (kernels/exact_geometry.hpp's launch_grid), e.g. 512x4x1r,512x4x2r,512x4x2l@3; MODES and SIZES as
// exact_data's (exact_common.cuh; default 0,2,3,4 and 2^20,2^24,2^26); TYPES f32, f64 or both
// (default f32).

#include <cub/device/device_reduce.cuh>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/experiments/exact_common.cuh"
#include "bench/experiments/experiment.hpp"
#include "exact/occupancy.hpp"
#include "exact/reference.hpp"
#include "exact/sum.hpp"
#include "kernels/exact_geometry.hpp"
#include "kernels/registry.hpp"

namespace {

namespace tr = tunedreduce;

struct Config {
  std::string name;
  tr::exact::ExactLaunch launch;
  int blocks_per_sm = 0;  // 0: the library's grid
};

std::vector<Config> parse_configs(const char* text) {
  std::vector<Config> out;
  for (const std::string& item : tr::grammar::split_list("CONFIGS", {text})) {
    int block = 0, unroll = 0, k = 0, per_sm = 0;
    char where = 0;
    int used = 0;
    const bool knobs_read =
        std::sscanf(item.c_str(), "%dx%dx%d%c%n", &block, &unroll, &k, &where, &used) == 4;
    int grid_used = 0;
    const bool grid_ok =
        knobs_read &&
        (used == static_cast<int>(item.size()) ||
         (std::sscanf(item.c_str() + used, "@%d%n", &per_sm, &grid_used) == 1 &&
          used + grid_used == static_cast<int>(item.size()) && per_sm >= 1 && per_sm <= 32));
    if (!grid_ok || (where != 'r' && where != 'l')) {
      throw std::invalid_argument("CONFIGS: '" + item +
                                  "' is not BLOCKxUNROLLxK followed by r or l and optionally @B "
                                  "with B in 1..32 (e.g. 512x4x2r or 512x4x2l@3)");
    }
    Config c{item, {}, per_sm};
    c.launch.block_threads = block;
    c.launch.unroll = unroll;
    c.launch.expansion = k;
    c.launch.chunks = where == 'r' ? tr::exact::ExactChunks::registers
                                   : tr::exact::ExactChunks::local;
    c.launch.finish = tr::exact::ExactFinish::single_pass;
    out.push_back(c);
  }
  return out;
}

template <class T>
bool run(const ColdTimer& timer, const cudaDeviceProp& prop, const std::vector<Config>& configs,
         int mode, std::uint64_t n) {
  const cudaStream_t s = timer.s;
  constexpr bool is_double = sizeof(T) == 8;
  T* in = nullptr;
  CK(cudaMalloc(&in, n * sizeof(T)));
  exact_experiments::fill<<<1024, 256, 0, s>>>(in, n, n * 7, mode);
  CK(cudaGetLastError());
  const std::size_t k = configs.size();
  T* out = nullptr;
  CK(cudaMalloc(&out, (k + 1) * sizeof(T)));
  CK(cudaMemsetAsync(out, 0xFF, (k + 1) * sizeof(T), s));  // poison
  unsigned* counters = nullptr;
  CK(cudaMalloc(&counters, k * sizeof(unsigned)));
  CK(cudaMemsetAsync(counters, 0, k * sizeof(unsigned), s));
  std::vector<tr::exact::ExactLaunch> launches;
  std::vector<void*> temps(k, nullptr);
  std::vector<std::size_t> temp_bytes(k, 0);
  tr::kernels::DeviceLimits dev;
  dev.sm_count = prop.multiProcessorCount;
  for (std::size_t c = 0; c < k; ++c) {
    tr::exact::ExactLaunch l = configs[c].launch;
    int resident = 0;
    CK(tr::exact::resident_blocks_per_sm(is_double ? tr::DType::f64 : tr::DType::f32, l, resident));
    tr::kernels::KernelParams p{tr::kernels::Family::exact,
                                l.block_threads,
                                l.unroll,
                                tr::kernels::SmemMode::none,
                                tr::kernels::Finish::single_pass,
                                is_double ? tr::DType::f64 : tr::DType::f32,
                                tr::Op::exact_sum};
    l.grid_blocks = static_cast<unsigned>(
        configs[c].blocks_per_sm != 0
            ? tr::kernels::exact_geometry::max_grid(dev, configs[c].blocks_per_sm)
            : tr::kernels::exact_geometry::launch_grid(p, n, dev, resident));
    l.counter = counters + c;
    CK(tr::exact::exact_sum(in, nullptr, n, nullptr, temp_bytes[c], s, l));
    CK(cudaMalloc(&temps[c], std::max<std::size_t>(temp_bytes[c], 1)));
    launches.push_back(l);
  }
  std::size_t cub_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, out + k, n, s));
  void* cub_temp = nullptr;
  CK(cudaMalloc(&cub_temp, std::max<std::size_t>(cub_bytes, 1)));
  for (std::size_t c = 0; c < k; ++c)
    CK(tr::exact::exact_sum(in, out + c, n, temps[c], temp_bytes[c], s, launches[c]));
  CK(cudaStreamSynchronize(s));
  std::vector<T> got(k);
  CK(cudaMemcpy(got.data(), out, k * sizeof(T), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (std::size_t c = 1; c < k; ++c) ok = ok && std::memcmp(&got[c], &got[0], sizeof(T)) == 0;
  const bool with_reference = n <= exact_experiments::kReferenceMax;
  if (with_reference) ok = ok && exact_experiments::equals_reference(in, n, got[0]);
  const float cub_us =
      timer.median_us([&] { CK(cub::DeviceReduce::Sum(cub_temp, cub_bytes, in, out + k, n, s)); });
  std::printf("%d  %s  %11llu  %8.1f", mode, is_double ? "f64" : "f32",
              static_cast<unsigned long long>(n), cub_us);
  for (std::size_t c = 0; c < k; ++c) {
    const float us = timer.median_us(
        [&] { CK(tr::exact::exact_sum(in, out + c, n, temps[c], temp_bytes[c], s, launches[c])); });
    std::printf("  %7.3f", cub_us / us);
  }
  std::printf("  %s\n", ok ? (with_reference ? "ok (reference)" : "ok") : "MISMATCH");
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(counters));
  CK(cudaFree(cub_temp));
  for (void* t : temps) CK(cudaFree(t));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) {
    std::fprintf(stderr, "usage: exact_knobs CONFIGS [MODES [SIZES [TYPES]]]\n");
    return 2;
  }
  std::vector<Config> configs;
  std::vector<std::uint64_t> modes, sizes;
  bool f32 = true, f64 = false;
  try {
    configs = parse_configs(argv[1]);
    modes = exact_experiments::parse_modes(argc > 2 ? argv[2] : "0,2,3,4");
    sizes = exact_experiments::parse_list("SIZES", argc > 3 ? argv[3] : "2^20,2^24,2^26");
    if (argc > 4) {
      const std::string t = argv[4];
      if (t != "f32" && t != "f64" && t != "both")
        throw std::invalid_argument("TYPES: '" + t + "' is not f32, f64 or both");
      f32 = t != "f64";
      f64 = t != "f32";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exact_knobs: %s\n", e.what());
    return 2;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s; speed-up over cub::DeviceReduce::Sum (CUB us / exact_sum us), cold\n",
              prop.name);
  const ColdTimer timer(prop);
  std::printf("mode type            n    CUB us");
  for (const Config& c : configs) std::printf("  %7s", c.name.c_str());
  std::printf("  bits\n");
  bool ok = true;
  for (const std::uint64_t m : modes) {
    for (const std::uint64_t n : sizes) {
      if (f32) ok = run<float>(timer, prop, configs, static_cast<int>(m), n) && ok;
      if (f64) ok = run<double>(timer, prop, configs, static_cast<int>(m), n) && ok;
    }
  }
  std::printf("%s\n", ok ? "every result's bits as expected" : "SOME RESULT DIFFERS");
  return ok ? 0 : 1;
}
