#pragma once
// Random inputs of the half types (IEEE binary16 and bfloat16, by their bits) for the GPU tests
// of their exact sums (tests/gpu/test_exact_gpu.cu, test_exact_registry_gpu.cpp): distributions
// that take each path of the kernels: rounds summed as one fp64 sum (narrow data), rounds too
// wide for that (the whole exponent range, subnormals), expansions that spill into the chunks
// (sums above 2^29 of values down to 2^-24), cancellation, and the specials.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "exact/reference.hpp"

namespace tunedreduce::test {

enum class HalfDistribution {
  /// k·2^-8 (f16) or k·2^-5 (bf16), |x| < 8: every round one exact fp64 sum.
  narrow,
  /// Every finite pattern (both signs, subnormals, the whole exponent range).
  finite_bits,
  /// The largest finite value with the smallest subnormal every 7th element: a thread's sum
  /// passes 2^29 (f16) with bits down to 2^-24, so its expansion spills into the chunks.
  big_and_tiny,
  /// Pairs x, -x of finite patterns, shuffled, and one small value: the sum cancels to it.
  cancelling_pairs,
  /// narrow data with one +Inf, one NaN or +Inf and -Inf (by the length's residue mod 3).
  specials,
};

inline const char* half_distribution_name(HalfDistribution d) {
  switch (d) {
    case HalfDistribution::narrow:
      return "narrow";
    case HalfDistribution::finite_bits:
      return "finite_bits";
    case HalfDistribution::big_and_tiny:
      return "big_and_tiny";
    case HalfDistribution::cancelling_pairs:
      return "cancelling_pairs";
    case HalfDistribution::specials:
      return "specials";
  }
  return "?";
}

inline constexpr HalfDistribution kHalfDistributions[] = {HalfDistribution::narrow,
                                                          HalfDistribution::finite_bits,
                                                          HalfDistribution::big_and_tiny,
                                                          HalfDistribution::cancelling_pairs,
                                                          HalfDistribution::specials};

/// Whether \p bits is Inf or NaN in \p format.
inline bool half_is_special(exact::HalfFormat format, std::uint16_t bits) {
  return format == exact::HalfFormat::f16 ? (bits & 0x7C00u) == 0x7C00u
                                          : (bits & 0x7F80u) == 0x7F80u;
}

/// A random finite pattern of \p format.
inline std::uint16_t random_finite_half(exact::HalfFormat format, std::mt19937_64& rng) {
  for (;;) {
    const auto b = static_cast<std::uint16_t>(rng());
    if (!half_is_special(format, b)) return b;
  }
}

inline std::vector<std::uint16_t> generate_halves(exact::HalfFormat format, HalfDistribution d,
                                                  std::uint64_t n, std::mt19937_64& rng) {
  const bool f16 = format == exact::HalfFormat::f16;
  std::vector<std::uint16_t> v(n);
  switch (d) {
    case HalfDistribution::narrow:
    case HalfDistribution::specials:
      for (auto& b : v) {
        // k·2^-8 for f16 (|k| < 2^11), k·2^-5 for bf16 (|k| < 2^8): normal or zero, exact.
        const int k = static_cast<int>(rng() % (f16 ? 4096 : 512)) - (f16 ? 2048 : 256);
        const float x = static_cast<float>(k) * (f16 ? 0x1p-8f : 0x1p-5f);
        const auto fb = std::bit_cast<std::uint32_t>(x);
        if (!f16) {
          b = static_cast<std::uint16_t>(fb >> 16);
        } else if (k == 0) {
          b = 0;
        } else {
          b = static_cast<std::uint16_t>(((fb >> 16) & 0x8000u) |
                                         ((((fb >> 23) & 0xFFu) - 112u) << 10) |
                                         ((fb >> 13) & 0x3FFu));
        }
      }
      if (d == HalfDistribution::specials && n > 0) {
        const std::uint16_t inf = f16 ? 0x7C00 : 0x7F80;
        const std::uint16_t nan = f16 ? 0x7E01 : 0x7FC1;  // quiet, with a payload
        v[rng() % n] = n % 3 == 1 ? nan : inf;
        if (n % 3 == 2) v[rng() % n] = static_cast<std::uint16_t>(inf | 0x8000u);
      }
      break;
    case HalfDistribution::finite_bits:
      for (auto& b : v) b = random_finite_half(format, rng);
      break;
    case HalfDistribution::big_and_tiny:
      for (std::uint64_t i = 0; i < n; ++i)
        v[i] = i % 7 == 6 ? std::uint16_t{0x0001}
                          : (f16 ? std::uint16_t{0x7BFF} : std::uint16_t{0x7F7F});
      break;
    case HalfDistribution::cancelling_pairs: {
      for (std::uint64_t i = 0; i + 1 < n; i += 2) {
        v[i] = random_finite_half(format, rng);
        v[i + 1] = static_cast<std::uint16_t>(v[i] ^ 0x8000u);
      }
      if (n % 2 == 1) v[n - 1] = 0x0001;  // the smallest subnormal
      std::shuffle(v.begin(), v.end(), rng);
      break;
    }
  }
  return v;
}

}  // namespace tunedreduce::test
