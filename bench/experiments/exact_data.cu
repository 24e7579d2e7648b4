// Question: does tunedreduce::exact_sum keep its speed on data other than the tuner's (uniform in
// [-1024, 1024)): zeros, wide exponent ranges, odd sizes, inputs that start off a vector
// boundary? Through the installed library's public API only (both calls: the cached workspace
// and the two-phase call with caller-owned storage), against cub::DeviceReduce::Sum on the same
// pointer, cold L2 (ColdTimer's read flush) and warm (the same call just before), medians of 31.
// Each result's bits must equal the other call's and, up to 2^25 elements, the host exact
// reference's (exact/reference.hpp). docs/performance.md 3.20.
//
//   exact_data [MODES [SIZES [OFFSETS]]]
// comma-separated lists; by default modes 0,1,2,3,4,5, sizes 1000003,2^24,2^26, offset 0.
// Modes (each value random, from a hash of its index):
//   0 uniform [0, 1)             1 normal (0, 1)               2 uniform [-1, 1), half of them 0
//   3 log-uniform 2^-20..2^20, random sign (41 binades)        4 log-uniform 2^-60..2^60
//   5 ReLU of normal (half 0)
// Offsets are in elements: the input starts that far past a 256-byte aligned allocation.
// The database is the library's usual one ($TUNEDREDUCE_DB, else the default path).

#include <cub/device/device_reduce.cuh>
#include <tunedreduce/tunedreduce.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/experiments/exact_common.cuh"
#include "bench/experiments/experiment.hpp"
#include "common/grammar.hpp"
#include "exact/reference.hpp"

namespace {

template <class T>
bool run(const ColdTimer& timer, int mode, std::uint64_t n, std::uint64_t offset) {
  const cudaStream_t s = timer.s;
  T* base = nullptr;
  CK(cudaMalloc(&base, (n + offset) * sizeof(T)));
  T* const in = base + offset;
  exact_experiments::fill<<<1024, 256, 0, s>>>(in, n, n * 7 + offset, mode);
  CK(cudaGetLastError());
  T* out = nullptr;
  T* cub_out = nullptr;
  CK(cudaMalloc(&out, 2 * sizeof(T)));
  CK(cudaMalloc(&cub_out, sizeof(T)));
  CK(cudaMemsetAsync(out, 0xFF, 2 * sizeof(T), s));  // poison
  std::size_t temp_bytes = 0;
  tunedreduce::exact_sum(nullptr, temp_bytes, in, out + 1, n, s);
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)));
  std::size_t cub_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, cub_out, n, s));
  void* cub_temp = nullptr;
  CK(cudaMalloc(&cub_temp, std::max<std::size_t>(cub_bytes, 1)));

  const auto cached = [&] { tunedreduce::exact_sum(in, out, n, s); };
  const auto two_phase = [&] { tunedreduce::exact_sum(temp, temp_bytes, in, out + 1, n, s); };
  const auto cub = [&] { CK(cub::DeviceReduce::Sum(cub_temp, cub_bytes, in, cub_out, n, s)); };
  cached();
  two_phase();
  CK(cudaStreamSynchronize(s));
  T got[2];
  CK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  bool ok = std::memcmp(&got[0], &got[1], sizeof(T)) == 0;
  const bool with_reference = n <= exact_experiments::kReferenceMax;
  if (with_reference) ok = ok && exact_experiments::equals_reference(in, n, got[0]);
  // Warm: the same call just before the timed one, on the same stream.
  const auto warm_us = [&](const std::function<void()>& f) {
    return timer.median_us([&] {
      f();
      CK(cudaEventRecord(timer.e0, s));
      f();
    });
  };
  const float cold[3] = {timer.median_us(cached), timer.median_us(two_phase), timer.median_us(cub)};
  const float warm[3] = {warm_us(cached), warm_us(two_phase), warm_us(cub)};
  std::printf("%d  %s  %11llu  %6llu  %7.3f  %7.3f  %9.1f  %7.3f  %7.3f  %9.1f  %s\n", mode,
              sizeof(T) == 4 ? "f32" : "f64", static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(offset), cold[2] / cold[0], cold[2] / cold[1],
              cold[2], warm[2] / warm[0], warm[2] / warm[1], warm[2],
              ok ? (with_reference ? "ok (reference)" : "ok") : "MISMATCH");
  CK(cudaFree(base));
  CK(cudaFree(out));
  CK(cudaFree(cub_out));
  CK(cudaFree(temp));
  CK(cudaFree(cub_temp));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 4) {
    std::fprintf(stderr, "usage: exact_data [MODES [SIZES [OFFSETS]]]\n");
    return 2;
  }
  std::vector<std::uint64_t> modes, sizes, offsets;
  try {
    modes = exact_experiments::parse_modes(argc > 1 ? argv[1] : "0,1,2,3,4,5");
    sizes = exact_experiments::parse_list("SIZES", argc > 2 ? argv[2] : "1000003,2^24,2^26");
    offsets = exact_experiments::parse_list("OFFSETS", argc > 3 ? argv[3] : "0");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exact_data: %s\n", e.what());
    return 2;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s; speed-up over cub::DeviceReduce::Sum (CUB us / exact_sum us)\n",
              prop.name);
  const ColdTimer timer(prop);
  std::printf(
      "mode type            n  offset  cold:cached two-phase  CUB us  warm:cached "
      "two-phase  CUB us  bits\n");
  bool ok = true;
  for (const std::uint64_t m : modes) {
    for (const std::uint64_t n : sizes) {
      for (const std::uint64_t off : offsets) {
        ok = run<float>(timer, static_cast<int>(m), n, off) && ok;
        ok = run<double>(timer, static_cast<int>(m), n, off) && ok;
      }
    }
  }
  std::printf("%s\n", ok ? "every result's bits as expected" : "SOME RESULT DIFFERS");
  return ok ? 0 : 1;
}
