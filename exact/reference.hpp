#pragma once
// The host's exact sums of floats and doubles: the reference that the exact kernels
// and the tuner's verification of them are checked against. Independent of exact/accumulator.hpp
// (another algorithm, another rounding), so each checks the other. The half types' exact sums
// (f16 and bf16 inputs, a float result) are exact_sum over their values decoded to floats.

#include <bit>
#include <cstdint>
#include <memory>
#include <span>

namespace tunedreduce::exact {

/// The true sum of \p values rounded once, to nearest with ties to even, to float. NaN (the
/// default quiet NaN) if any value is NaN or both +Inf and -Inf occur; ±Inf if only that
/// infinity occurs; a rounded magnitude of 2^128 or more is ±Inf, as IEEE addition overflows,
/// while no partial sum ever overflows. An exact zero is -0 only if every value is -0 (the
/// sign IEEE addition gives under round to nearest); no values give +0, the library's n = 0.
float exact_sum(std::span<const float> values);
/// The same for double (overflow at 2^1024).
double exact_sum(std::span<const double> values);

/// exact_sum over values given in pieces (regenerated data, threads): add() each piece, merge()
/// other sums, result() at any time. Exact for up to 2^62 values. On one core of the 2-core
/// development machine (AMD EPYC, other builds running; bench_exact_reference, 2^30 elements,
/// 2026-11-25): 660-770 M floats/s and 430-550 M doubles/s, whatever the distribution.
template <class T>
class ReferenceSum {
 public:
  ReferenceSum();
  ~ReferenceSum();
  ReferenceSum(const ReferenceSum& other);
  ReferenceSum& operator=(const ReferenceSum& other);
  ReferenceSum(ReferenceSum&&) noexcept;
  ReferenceSum& operator=(ReferenceSum&&) noexcept;

  void add(std::span<const T> values);
  void merge(const ReferenceSum& other);
  /// exact_sum of every value added and merged so far.
  T result() const;
  /// How many values were added and merged.
  std::uint64_t count() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

extern template class ReferenceSum<float>;
extern template class ReferenceSum<double>;

/// The two-byte floating-point formats whose exact_sum is a float, by their bits: IEEE binary16
/// (CUDA's __half) and bfloat16 (__nv_bfloat16), laid out as those types. Plain host code: no
/// CUDA header.
enum class HalfFormat : std::uint8_t { f16, bf16 };

/// "f16" or "bf16".
constexpr const char* half_format_name(HalfFormat format) noexcept {
  return format == HalfFormat::f16 ? "f16" : "bf16";
}

/// The value of a half's bits as a float, exactly (float holds every value of both formats):
/// ±0, subnormals, normals, ±Inf; a NaN is a NaN (sign and payload shifted into the float's).
constexpr float half_value(HalfFormat format, std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  if (format == HalfFormat::bf16)
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t fraction = bits & 0x3FFu;
  if (exponent == 0x1Fu) return std::bit_cast<float>(sign | 0x7F800000u | (fraction << 13));
  if (exponent != 0)
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (fraction << 13));
  if (fraction == 0) return std::bit_cast<float>(sign);
  // A subnormal, fraction·2^-24: normalised into float's 23 fraction bits.
  const int shift = std::countl_zero(fraction) - 21;  // brings the leading 1 to bit 10
  const std::uint32_t normalised = (fraction << shift) & 0x3FFu;
  return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(113 - shift) << 23) |
                              (normalised << 13));
}

/// exact_sum of halves given by their bits: the true sum of their values rounded once, to nearest
/// with ties to even, to float (not to the half format), with exact_sum's specials and signs of
/// zero: the default quiet NaN for a NaN or both infinities, ±Inf for one infinity or a rounded
/// magnitude of 2^128 or more (bf16 only), -0 only if every value is -0, +0 for no values.
float exact_sum(HalfFormat format, std::span<const std::uint16_t> bits);

}  // namespace tunedreduce::exact
