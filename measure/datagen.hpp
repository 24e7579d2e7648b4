#pragma once
// The tuner's input data: element i of a stream is a pure function of (seed, i), computed the same
// way on the host and on the device, so the host reference never needs a copy of the data.
// Integers cover their whole range (sums wrap); floating-point values are k * 2^-13 (float) or
// k * 2^-42 (double) for a random integer k, i.e. uniform in [-1024, 1024), exact in the element
// type whatever the compiler contracts; the half types' are k * 2^-8 (f16, k of 12 bits) and
// k * 2^-5 (bf16, k of 9 bits), uniform in [-8, 8), every one exact in its type.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tunedreduce/types.hpp"

#ifdef __CUDACC__
#define TR_HD __host__ __device__ __forceinline__
#else
#define TR_HD inline
#endif

namespace tunedreduce::measure {

TR_HD std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The two-byte floating-point elements (DType::f16, DType::bf16) by their bits, laid out as
/// CUDA's __half and __nv_bfloat16: what the host's reference and the fill kernel handle, so
/// that neither needs CUDA's half headers.
struct Half {
  std::uint16_t bits;
};
struct BFloat16 {
  std::uint16_t bits;
};
template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// D's elements as the host's reference and the fill kernel handle them: D's C++ type
/// (types.hpp's dtype_t), the bit containers above for the two-byte types.
template <DType D>
struct data_type {
  using type = dtype_t<D>;
};
template <>
struct data_type<DType::f16> {
  using type = Half;
};
template <>
struct data_type<DType::bf16> {
  using type = BFloat16;
};
template <DType D>
using data_t = typename data_type<D>::type;

TR_HD std::uint32_t float_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

TR_HD float float_of_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

/// The value of a half's bits (every class: zeros, subnormals, normals, infinities, NaN).
TR_HD float to_float(Half h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000u) << 16;
  const std::uint32_t exp = (h.bits >> 10) & 0x1Fu;
  const std::uint32_t mant = h.bits & 0x3FFu;
  if (exp == 0x1F) return float_of_bits(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    const float m = static_cast<float>(mant) * 0x1p-24f;
    return sign != 0 ? -m : m;
  }
  return float_of_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

/// The value of a bfloat16's bits: the high half of a float's.
TR_HD float to_float(BFloat16 h) { return float_of_bits(static_cast<std::uint32_t>(h.bits) << 16); }

template <class T>
TR_HD T data_value(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t r = mix64(seed ^ mix64(i));
  if constexpr (std::is_same_v<T, Half>) {
    // k * 2^-8 with |k| < 2^11: zero, or a normal half (2^-8 <= |x| < 8) of at most 11 bits.
    const std::int32_t k = static_cast<std::int32_t>(r >> 52) - (1 << 11);
    const std::uint32_t f = float_bits(static_cast<float>(k) * 0x1p-8f);
    if (k == 0) return Half{0};
    return Half{static_cast<std::uint16_t>(
        ((f >> 16) & 0x8000u) | ((((f >> 23) & 0xFFu) - 112u) << 10) | ((f >> 13) & 0x3FFu))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    // k * 2^-5 with |k| < 2^8: at most 8 bits, so the float's low 16 bits are zero.
    const std::int32_t k = static_cast<std::int32_t>(r >> 55) - (1 << 8);
    return BFloat16{static_cast<std::uint16_t>(float_bits(static_cast<float>(k) * 0x1p-5f) >> 16)};
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(r);
  } else if constexpr (sizeof(T) == 4) {
    const std::int32_t k = static_cast<std::int32_t>(r >> 40) - (1 << 23);  // [-2^23, 2^23)
    return static_cast<float>(k) * 0x1p-13f;
  } else {
    const std::int64_t k = static_cast<std::int64_t>(r >> 11) - (std::int64_t{1} << 52);
    return static_cast<double>(k) * 0x1p-42;
  }
}

}  // namespace tunedreduce::measure

#undef TR_HD
