#pragma once
// What the exact-sum experiments (exact_data.cu, exact_knobs.cu, exact_bounds.cu) share: their
// data, n values of one of six shapes, each random from a hash of its index and the seed, their
// list arguments, and the check of a result against the host's exact reference.
//   0 uniform [0, 1)             1 normal (0, 1)               2 uniform [-1, 1), half of them 0
//   3 log-uniform 2^-20..2^20, random sign (41 binades)        4 log-uniform 2^-60..2^60
//   5 ReLU of normal (half 0)

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/experiments/experiment.hpp"
#include "common/grammar.hpp"
#include "exact/reference.hpp"

namespace exact_experiments {

inline constexpr int kModes = 6;

__device__ inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

template <class T>
__global__ void fill(T* p, std::uint64_t n, std::uint64_t seed, int mode) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t r = mix(i * 0x9E3779B97F4A7C15ull + seed);
    const std::uint64_t r2 = mix(r + 0x1234567ull);
    const double m = static_cast<double>(r >> 11) * 0x1p-53;          // [0, 1)
    const double m2 = (static_cast<double>(r2 >> 11) + 1) * 0x1p-53;  // (0, 1]
    const double sign = (r2 & 1) != 0 ? -1.0 : 1.0;
    const double normal = sqrt(-2 * log(m2)) * cospi(2 * m);
    double v = 0;
    switch (mode) {
      case 0:
        v = m;
        break;
      case 1:
        v = normal;
        break;
      case 2:
        v = (r2 & 2) != 0 ? 0.0 : 2 * m - 1;
        break;
      case 3:
        v = sign * ldexp(0.5 + m / 2, static_cast<int>(r2 % 41) - 20);
        break;
      case 4:
        v = sign * ldexp(0.5 + m / 2, static_cast<int>(r2 % 121) - 60);
        break;
      default:
        v = fmax(0.0, normal);
        break;
    }
    p[i] = static_cast<T>(v);
  }
}

/// The values of a comma-separated list argument, each a count as the CLI writes one (N or B^E:
/// common/grammar.hpp); throws naming the argument and the item that is not one.
inline std::vector<std::uint64_t> parse_list(const char* what, const char* text) {
  std::vector<std::uint64_t> out;
  for (const std::string& item : tunedreduce::grammar::split_list(what, {text})) {
    const std::optional<std::uint64_t> v = tunedreduce::grammar::count_value(item);
    if (!v) {
      throw std::invalid_argument(std::string(what) + ": '" + item + "' is not a number (" +
                                  tunedreduce::grammar::count_syntax + ")");
    }
    out.push_back(*v);
  }
  return out;
}

/// The MODES argument: parse_list's values, each one of the kModes shapes; throws naming a mode
/// that is not.
inline std::vector<std::uint64_t> parse_modes(const char* text) {
  std::vector<std::uint64_t> modes = parse_list("MODES", text);
  for (const std::uint64_t m : modes) {
    if (m >= static_cast<std::uint64_t>(kModes)) {
      throw std::invalid_argument("mode " + std::to_string(m) + " is not 0.." +
                                  std::to_string(kModes - 1));
    }
  }
  return modes;
}

/// Inputs up to this many elements are checked against the host's exact reference.
inline constexpr std::uint64_t kReferenceMax = std::uint64_t{1} << 25;

/// Whether \p got has the bits of the exact sum of d_in[0, n) rounded once (exact/reference.hpp),
/// computed on the host from a copy of the input.
template <class T>
bool equals_reference(const T* d_in, std::uint64_t n, const T& got) {
  std::vector<T> host(n);
  CK(cudaMemcpy(host.data(), d_in, n * sizeof(T), cudaMemcpyDeviceToHost));
  const T expected = tunedreduce::exact::exact_sum(std::span<const T>(host));
  return std::memcmp(&got, &expected, sizeof(T)) == 0;
}

}  // namespace exact_experiments
