// Experiment (docs/performance.md 3.14): does the product's packed kernel (through its own
// dispatch) run as fast as the micro-benchmark's packed kernel of the same shape? The
// micro-benchmark's kernels come from finish_micro.cu (included without its main), the product's
// from kernels/dispatch.cuh. Built with -DTUNEDREDUCE_EXPERIMENTS=ON (bench/experiments/README.md):
//   cmake --build build --target experiment_kernel_overhead &&
//   build/bin/experiments/kernel_overhead
// Timing: ColdTimer (experiment.hpp: measure/'s read flush, or FLUSH=memset, the method of the
// figures in docs/performance-log.md), each run waited for, median of 31; the methods take
// turns, three rounds, and the table shows the lowest and the middle of the three medians. Every
// result is checked against the host sum.

#define FINISH_MICRO_NO_MAIN
#include "bench/experiments/finish_micro.cu"
#include "kernels/dispatch.cuh"

namespace tk = tunedreduce::kernels;

template <tk::Family F, int B, int U>
struct Product {
  static constexpr tk::KernelParams P{F,
                                      B,
                                      U,
                                      tk::SmemMode::none,
                                      tk::Finish::packed,
                                      tunedreduce::DType::i32,
                                      tunedreduce::Op::sum};
  static cudaError_t launch(const tk::LaunchArgs& a, const tk::DeviceLimits& d) {
    return tk::Dispatch<P>::launch(a, d);
  }
};

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\n", prop.name);
  tk::DeviceLimits lim;
  lim.sm_count = prop.multiProcessorCount;
  const std::vector<int> logs = {14, 15, 16, 17, 18, 19, 20, 22};
  const long long max_n = 1LL << 22;
  int *in, *out;
  void* ws;
  const std::size_t ws_bytes = 64 << 20;
  CK(cudaMalloc(&in, max_n * 4));
  CK(cudaMalloc(&out, 256));
  CK(cudaMalloc(&ws, ws_bytes));
  CK(cudaMemset(ws, 0, ws_bytes));
  std::vector<int> host(max_n);
  std::mt19937 rng(7);
  for (auto& x : host) x = int(rng() % 2001) - 1000;
  CK(cudaMemcpy(in, host.data(), max_n * 4, cudaMemcpyHostToDevice));
  const ColdTimer timer(prop);
  cudaStream_t s = timer.s;
  std::size_t cub_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, out, max_n, s));
  void* cub_temp;
  CK(cudaMalloc(&cub_temp, cub_bytes));

  struct Method {
    std::string name;
    std::function<void(long long n)> run;
  };
  std::vector<Method> methods;
  methods.push_back({"cub", [&](long long n) {
                       std::size_t b = cub_bytes;
                       CK(cub::DeviceReduce::Sum(cub_temp, b, in, out, n, s));
                     }});
  auto micro = [&](const char* name, const void* fn, int block, int unroll) {
    methods.push_back({name, [&, fn, block, unroll](long long n) {
                         Args a{reinterpret_cast<const int4*>(in),
                                n / 4,
                                reinterpret_cast<int*>(ws),
                                reinterpret_cast<unsigned*>(static_cast<char*>(ws) + (32 << 20)),
                                out,
                                0};
                         void* params[] = {&a};
                         const long long tile = (long long)block * unroll;
                         const long long grid = (n / 4 + tile - 1) / tile;
                         CK(cudaLaunchKernel(fn, dim3(unsigned(grid)), dim3(block), params, 0, s));
                       }});
  };
  micro("micro.packed.h1.b128.u2", reinterpret_cast<const void*>(&k_lastblock<128, 2, 1, 3>), 128,
        2);
  micro("micro.packed.h1.b256.u1", reinterpret_cast<const void*>(&k_lastblock<256, 1, 1, 3>), 256,
        1);
  micro("micro.packed.h1.b256.u2", reinterpret_cast<const void*>(&k_lastblock<256, 2, 1, 3>), 256,
        2);
  auto product = [&](const char* name,
                     cudaError_t (*fn)(const tk::LaunchArgs&, const tk::DeviceLimits&)) {
    methods.push_back({name, [&, fn](long long n) {
                         tk::LaunchArgs a;
                         a.in = in;
                         a.out = out;
                         a.n = std::uint64_t(n);
                         a.workspace = static_cast<char*>(ws) + (16 << 20);
                         a.workspace_bytes = 8 << 20;
                         a.stream = s;
                         a.workspace_clean = true;
                         CK(fn(a, lim));
                       }});
  };
  product("streaming.b128.u2.packed", &Product<tk::Family::streaming, 128, 2>::launch);
  product("streaming.b256.u1.packed", &Product<tk::Family::streaming, 256, 1>::launch);
  product("streaming.b256.u2.packed", &Product<tk::Family::streaming, 256, 2>::launch);
  product("tiled.b128.u2.packed", &Product<tk::Family::tiled, 128, 2>::launch);

  std::printf("%-6s", "log2n");
  for (auto& m : methods) std::printf(" %26s", m.name.c_str());
  std::printf("\n");
  for (int lg : logs) {
    const long long n = 1LL << lg;
    std::uint32_t expect = 0;
    for (long long i = 0; i < n; ++i) expect += std::uint32_t(host[i]);
    std::vector<std::vector<float>> med(methods.size());
    for (std::size_t k = 0; k < methods.size(); ++k) {
      CK(cudaMemsetAsync(out, 0x5a, 4, s));
      methods[k].run(n);
      std::uint32_t got = 0;
      CK(cudaMemcpyAsync(&got, out, 4, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
      if (got != expect) {
        std::printf("WRONG %s n=2^%d: got %u want %u\n", methods[k].name.c_str(), lg, got, expect);
        return 1;
      }
    }
    for (int round = 0; round < 3; ++round)
      for (std::size_t k = 0; k < methods.size(); ++k)
        med[k].push_back(timer.median_us([&] { methods[k].run(n); }));
    std::printf("2^%-4d", lg);
    for (auto& v : med) {
      std::sort(v.begin(), v.end());
      std::printf(" %17.2f / %6.2f", v[0], v[1]);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
