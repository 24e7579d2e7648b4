// Sum of a device array with libtunedreduce, printing the kernel that ran and why.
//
//   find_package(TunedReduce REQUIRED)
//   find_package(CUDAToolkit REQUIRED)
//   add_executable(sum sum.cpp)
//   target_link_libraries(sum PRIVATE TunedReduce::tunedreduce CUDA::cudart)
//
// or with pkg-config, one command (this example calls the CUDA runtime itself, and CUDA ships
// no .pc file; tests/consumer/run.sh builds it so):
//   c++ -std=c++17 sum.cpp $(pkg-config --cflags --libs tunedreduce)
//       -L$(pkg-config --variable=cudalibdir tunedreduce) -lcudart
//       -Wl,-rpath,$(pkg-config --variable=libdir tunedreduce)

#include <cuda_runtime_api.h>
#include <tunedreduce/tunedreduce.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  const std::uint64_t n = std::uint64_t{1} << 24;
  std::vector<float> host(n);
  double expected = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    host[i] = static_cast<float>(i % 17) * 0.25f;  // exact in float; their sum (~3.4e7) is not:
                                                   // floats there are 4 apart, so the result
                                                   // is the expected value within rounding
    expected += host[i];
  }

  float* d_in = nullptr;
  float* d_out = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&d_in), n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void**>(&d_out), sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  cudaMemcpy(d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);

  try {
    // What will run: the tuned winner for this GPU and size, or a fallback, and where it came from.
    const tunedreduce::Config cfg = tunedreduce::lookup<float>(tunedreduce::Op::sum, n);
    std::printf("kernel %s (lookup level %s, from %s)\n", cfg.kernel_id,
                tunedreduce::level_name(cfg.level), cfg.source);

    tunedreduce::sum(d_in, d_out, n);  // on the default stream; no synchronisation inside
    float result = 0;
    cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("sum of %llu floats: %.1f (expected %.1f)\n", static_cast<unsigned long long>(n),
                result, expected);
  } catch (const tunedreduce::ReduceError& e) {
    std::fprintf(stderr, "tunedreduce: %s\n", e.what());
    return 1;
  }
  cudaFree(d_in);
  cudaFree(d_out);
  return 0;
}
