// Uses the installed library: lookup works everywhere; without a GPU sum reports a clear CUDA
// error; with one, a real sum is checked. Exit 0 when all is well.

#include <cuda_runtime_api.h>
#include <tunedreduce/tunedreduce.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main() {
  namespace tr = tunedreduce;
  std::printf("libtunedreduce %s, database %s\n", tr::version(), tr::database_path().c_str());
  const tr::Config cfg = tr::lookup<float>(tr::Op::sum, 1 << 20);
  std::printf("lookup f32 sum 2^20: %s, level %s, device %d, from %s\n", cfg.kernel_id,
              tr::level_name(cfg.level), cfg.device, cfg.source);
  if (std::strncmp(cfg.kernel_id, "", 1) == 0 ||
      std::string(cfg.kernel_id).find(".f32.sum") == std::string::npos) {
    std::fprintf(stderr, "FAIL: lookup gave '%s'\n", cfg.kernel_id);
    return 1;
  }

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    // No GPU: the reduction must fail with a clear CUDA error, not crash.
    std::vector<float> host(16);
    float out = 0;
    try {
      tr::sum(host.data(), &out, host.size());
    } catch (const tr::ReduceError& e) {
      std::printf("without a GPU, sum says: %s\n", e.what());
      if (e.status() != tr::Status::cuda_error || !std::strstr(e.what(), "CUDA")) {
        std::fprintf(stderr, "FAIL: expected a CUDA error\n");
        return 1;
      }
      std::printf("OK (no GPU)\n");
      return 0;
    }
    std::fprintf(stderr, "FAIL: sum without a GPU did not throw\n");
    return 1;
  }

  const std::uint64_t n = 1000003;
  std::vector<int> host(n);
  long long expected = 0;
  for (std::uint64_t i = 0; i < n; ++i) expected += host[i] = static_cast<int>(i % 1000) - 500;
  void* d_in = nullptr;
  void* d_out = nullptr;
  cudaMalloc(&d_in, n * sizeof(int));
  cudaMalloc(&d_out, sizeof(int));
  cudaMemcpy(d_in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  tr::sum(static_cast<const int*>(d_in), static_cast<int*>(d_out), n);
  int got = 0;
  cudaMemcpy(&got, d_out, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
  std::printf("sum of %llu ints: %d (expected %lld)\n", static_cast<unsigned long long>(n), got,
              expected);
  return got == static_cast<int>(expected) ? 0 : 1;
}
