// The adversarial cases (exact/adversarial.hpp): the inputs, each with the sum worked out by hand
// where that is short, and the host reference's sum of every one.

#include "exact/adversarial.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>

#include "exact/reference.hpp"

namespace tunedreduce::exact {

namespace {

template <class T>
std::vector<AdversarialCase<T>> make_cases() {
  using L = std::numeric_limits<T>;
  constexpr int P = L::digits;
  const T inf = L::infinity();
  const T nan = L::quiet_NaN();
  const T max = L::max();
  const T tiny = L::denorm_min();
  const T min_normal = L::min();
  const T ulp1 = std::ldexp(T(1), 1 - P);    // 1's ulp
  const T half_ulp1 = std::ldexp(T(1), -P);  // half of it
  const T half_ulp_max = std::ldexp(T(1), L::max_exponent - P - 1);
  const T big = T(1e30);

  std::vector<AdversarialCase<T>> cases;
  const auto add = [&](std::string name, std::vector<T> v, std::optional<T> expected = {}) {
    cases.push_back({std::move(name), std::move(v), expected, T{}});
  };

  // Catastrophic cancellation.
  add("cancel_1e30", {big, T(1), -big}, T(1));
  add("cancel_1e30_reordered", {big, -big, T(1)}, T(1));
  add("cancel_max", {max, T(1), -max}, T(1));
  add("cancel_max_to_smallest_subnormal", {max, tiny, -max}, tiny);
  add("cancel_interleaved",
      {std::ldexp(T(1), 100), T(3), -std::ldexp(T(1), 100), -std::ldexp(T(1), 100), T(5),
       std::ldexp(T(1), 100)},
      T(8));
  add("cancel_sticky_under_big", {std::ldexp(T(1), 100), tiny}, std::ldexp(T(1), 100));

  // The whole exponent range.
  {
    std::vector<T> up, below_max, alternating;
    for (int e = L::min_exponent - P; e < L::max_exponent; ++e) {
      up.push_back(std::ldexp(T(1), e));
      if (e < L::max_exponent - 1) below_max.push_back(std::ldexp(T(1), e));
      alternating.push_back((e % 2 == 0 ? T(1) : T(-1)) * std::ldexp(T(1), e));
    }
    // 2^max_exponent - tiny rounds up to 2^max_exponent: overflow.
    add("full_range_powers_overflow", up, inf);
    add("full_range_powers_below_max", below_max, std::ldexp(T(1), L::max_exponent - 1));
    add("full_range_alternating_signs", alternating);
    std::vector<T> reversed(up.rbegin(), up.rend());
    reversed.front() = -reversed.front();  // -2^(max_exponent-1) + all the smaller powers
    add("full_range_from_minus_max_power", reversed);
    std::mt19937_64 rng(16);
    std::vector<T> random_significands;
    for (int e = L::min_exponent - P; e < L::max_exponent; ++e) {
      const T significand = std::uniform_real_distribution<T>(T(1), T(2))(rng);
      const T sign = (rng() & 1) != 0 ? T(1) : T(-1);
      const T x = sign * std::ldexp(significand, e);
      if (std::isfinite(x) && x != 0) random_significands.push_back(x);
    }
    std::shuffle(random_significands.begin(), random_significands.end(), rng);
    add("full_range_random_significands_and_signs", random_significands);
  }

  // Subnormals.
  {
    std::vector<T> only;
    for (int k = 1; k <= 1000; ++k) only.push_back(T(k % 3 == 0 ? -k : k) * tiny);
    add("subnormals_only", only);
    add("subnormals_carry_into_normal", {min_normal - tiny, tiny}, min_normal);
    add("subnormals_cancel", {-tiny, tiny}, T(0));
    add("subnormals_largest_twice", {min_normal - tiny, min_normal - tiny},
        T(2) * min_normal - T(2) * tiny);
  }

  // Signs of zero.
  add("zero_empty", {}, T(0));
  add("zero_negative", {-T(0)}, -T(0));
  add("zero_negatives", {-T(0), -T(0), -T(0)}, -T(0));
  add("zero_positive", {T(0)}, T(0));
  add("zero_mixed", {-T(0), T(0)}, T(0));
  add("zero_mixed_reversed", {T(0), -T(0)}, T(0));
  add("zero_from_one_minus_one", {T(1), T(-1)}, T(0));
  add("zero_from_minus_one_one_minus_zero", {T(-1), T(1), -T(0)}, T(0));
  add("zero_from_subnormals_and_minus_zero", {-tiny, -T(0), tiny}, T(0));
  add("zero_from_max", {-max, max}, T(0));

  // Many equal values.
  add("many_equal_tenths", std::vector<T>(100003, T(0.1)));
  add("many_equal_ones", std::vector<T>(65537, T(1)), T(65537));
  add("many_equal_negative_subnormals", std::vector<T>(4096, -tiny), T(-4096) * tiny);
  {
    // 2^P + 1 can only be rounded: the tie goes to the even 2^P; 1024 quarters of the half-ulp
    // make the same tie from many pieces.
    std::vector<T> tie_pieces(1024, std::ldexp(T(1), -P - 10));
    tie_pieces.push_back(T(1));
    add("many_pieces_make_a_tie", tie_pieces, T(1));
    tie_pieces.push_back(tiny);
    add("many_pieces_just_above_a_tie", tie_pieces, T(1) + ulp1);
  }

  // Ties to even, both directions, both signs.
  add("tie_down_to_even", {T(1), half_ulp1}, T(1));
  add("tie_up_to_even", {T(1) + ulp1, half_ulp1}, T(1) + T(2) * ulp1);
  add("tie_down_to_even_negative", {T(-1), -half_ulp1}, T(-1));
  add("tie_up_to_even_negative", {-(T(1) + ulp1), -half_ulp1}, -(T(1) + T(2) * ulp1));
  add("tie_broken_up_by_a_subnormal", {T(1), half_ulp1, tiny}, T(1) + ulp1);
  add("tie_broken_down_by_a_subnormal", {T(1) + ulp1, half_ulp1, -tiny}, T(1) + ulp1);
  add("tie_of_an_integer", {std::ldexp(T(1), P), T(1)}, std::ldexp(T(1), P));
  add("tie_of_an_integer_up", {std::ldexp(T(1), P) + T(2), T(1)}, std::ldexp(T(1), P) + T(4));

  // Overflow, and sums that come back from beyond the largest finite value.
  add("overflow_positive", {max, max}, inf);
  add("overflow_negative", {-max, -max}, -inf);
  add("overflow_by_a_tie", {max, half_ulp_max}, inf);
  add("no_overflow_just_below_the_tie", {max, half_ulp_max, -tiny}, max);
  add("back_from_beyond_max", {max, max, -max}, max);
  add("back_from_beyond_minus_max", {-max, -max, max}, -max);
  {
    std::vector<T> many(1000, max);
    many.insert(many.end(), 999, -max);
    add("back_from_1000_max", many, max);
    many.push_back(-max);
    many.push_back(T(1));
    add("back_from_1000_max_to_one", many, T(1));
  }

  // NaN and infinities.
  add("nan", {T(1), nan}, nan);
  add("negative_nan", {-nan, T(1)}, nan);
  add("infinities_of_both_signs", {inf, -inf}, nan);
  add("infinity_beats_finite", {inf, T(1), -max}, inf);
  add("negative_infinity_beats_overflow", {-inf, max, max}, -inf);
  add("infinity_twice", {inf, inf}, inf);
  add("nan_and_infinity", {nan, inf}, nan);
  add("all_specials", {inf, -inf, nan, T(0)}, nan);

  if constexpr (sizeof(T) == 8) {
    add("cancel_1e300", {T(1e300), T(1), T(-1e300)}, T(1));
    // Magnitudes above 2^982 bypass the accumulator's expansion: mixed with small ones.
    add("huge_and_small_mixed",
        {std::ldexp(T(1), 1000), T(1), std::ldexp(T(-1), 1000), std::ldexp(T(1), 983), tiny,
         std::ldexp(T(-1), 983)},
        T(1));  // 1 + 2^-1074 rounds to 1
  } else {
    add("float_sum_beyond_float_range_in_double", std::vector<T>(1 << 12, max / T(2)), inf);
    // The kernels add an aligned float4 as one fp64 sum when its exponents span at most 27
    // binades (add_vector in exact/sum_kernels.cuh): {A, A, A, s} with 24-bit A = (2^24 - 1)·
    // 2^(S-23) and s = (2^24 - 1)·2^-23 needs S + 26 bits, 53 at S = 27. Its negation but one ulp
    // of s follows, so the sum is s's ulp, 2^-23: a bound one binade too wide would round the
    // first vector and lose it.
    for (const int spread : {26, 27, 28, 29}) {
      const T a = std::ldexp(T((1 << 24) - 1), spread - 23);
      const T s = std::ldexp(T((1 << 24) - 1), -23);
      const T t = std::ldexp(T((1 << 24) - 2), -23);
      add("float4_fast_path_spread_" + std::to_string(spread), {a, a, a, s, -a, -a, -a, -t},
          std::ldexp(T(1), -23));
    }
  }
  return cases;
}

/// A half format's parameters: P significand bits (the implicit one included), the exponents of
/// its smallest normal and of its top binade, its largest finite value's bits.
struct HalfLayout {
  int precision;
  int min_normal_exponent;
  int max_exponent;
  std::uint16_t max_bits;
  std::uint16_t infinity_bits;
  std::uint16_t quiet_nan_bits;
  std::uint16_t signalling_nan_bits;  // the smallest NaN fraction: no quiet bit
};

HalfLayout layout_of(HalfFormat format) {
  if (format == HalfFormat::f16) return {11, -14, 15, 0x7BFF, 0x7C00, 0x7E00, 0x7C01};
  return {8, -126, 127, 0x7F7F, 0x7F80, 0x7FC0, 0x7F81};
}

/// The bits of a value the format holds exactly, found by search over the finite patterns of its
/// sign (a value it does not hold is a mistake in a case: std::logic_error). NaN: the quiet NaN.
std::uint16_t encode(HalfFormat format, float x) {
  const HalfLayout l = layout_of(format);
  if (std::isnan(x)) return l.quiet_nan_bits;
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isinf(x)) return static_cast<std::uint16_t>(sign | l.infinity_bits);
  // Finite patterns of one sign are ordered as their magnitudes: a binary search.
  std::uint32_t lo = 0, hi = l.max_bits;
  const float magnitude = std::fabs(x);
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (half_value(format, static_cast<std::uint16_t>(mid)) < magnitude) lo = mid + 1;
    else hi = mid;
  }
  const auto bits = static_cast<std::uint16_t>(sign | lo);
  if (std::bit_cast<std::uint32_t>(half_value(format, bits)) != std::bit_cast<std::uint32_t>(x))
    throw std::logic_error(std::string("adversarial case: ") + std::to_string(x) +
                           " is not a value of " + half_format_name(format));
  return bits;
}

std::vector<HalfAdversarialCase> make_half_cases(HalfFormat format) {
  const HalfLayout l = layout_of(format);
  const int P = l.precision;
  const int tiny_exponent = l.min_normal_exponent - (P - 1);  // -24, -133
  const auto p2 = [](int e) { return std::ldexp(1.0f, e); };  // exact: float holds 2^-149..2^127
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float max = half_value(format, l.max_bits);  // (2^P - 1)·2^(max_exponent - P + 1)
  const float tiny = p2(tiny_exponent);
  const float min_normal = p2(l.min_normal_exponent);
  const std::uint16_t neg = 0x8000;
  const bool f16 = format == HalfFormat::f16;

  std::vector<HalfAdversarialCase> cases;
  const auto add_bits = [&](std::string name, std::vector<std::uint16_t> bits,
                            std::optional<float> worked_out = {}) {
    cases.push_back({std::move(name), std::move(bits), worked_out, 0.0f});
  };
  const auto add = [&](std::string name, const std::vector<float>& values,
                       std::optional<float> worked_out = {}) {
    std::vector<std::uint16_t> bits;
    bits.reserve(values.size());
    for (const float x : values) bits.push_back(encode(format, x));
    add_bits(std::move(name), std::move(bits), worked_out);
  };
  std::mt19937_64 rng(format == HalfFormat::f16 ? 1616 : 1617);
  const auto random_finite = [&] {
    for (;;) {
      const auto b = static_cast<std::uint16_t>(rng());
      if ((b & 0x7FFF) <= l.max_bits) return b;
    }
  };

  // Groups of 8 whose exact sum is wide (first, so that they stay 16-byte aligned back to back):
  // {a ×7, s} then {-a ×7, -t}, a = (2^P - 1)·2^(lsb + S), s = (2^P - 1)·2^lsb, t = s - 2^lsb;
  // the sum is 2^lsb. The first group needs S + P + 3 bits: a group summed in fp32 (fp64) is
  // exact up to S = 21 - P (50 - P) only, one binade wider it loses the 2^lsb.
  {
    const int lsb = f16 ? -24 : -7;  // s normal; a ≤ max: S ≤ 29 (f16), 127 (bf16)
    const int top = l.max_exponent - (P - 1) - lsb;
    std::vector<int> spreads = {1, 21 - P - 1, 21 - P, 21 - P + 1, 21 - P + 2, top};
    if (50 - P + 2 <= top) spreads.insert(spreads.end() - 1, {50 - P - 1, 50 - P, 50 - P + 1});
    const float m = static_cast<float>((1 << P) - 1);
    for (const int spread : spreads) {
      const float a = std::ldexp(m, lsb + spread);
      const float s = std::ldexp(m, lsb);
      const float t = std::ldexp(m - 1, lsb);
      add("group_of_8_spread_" + std::to_string(spread),
          {a, a, a, a, a, a, a, s, -a, -a, -a, -a, -a, -a, -a, -t}, p2(lsb));
    }
  }
  // Every length from 1 to 24, each element a distinct power of two: (2^n - 1)·2^-12, exact.
  for (int n = 1; n <= 24; ++n) {
    std::vector<float> v;
    for (int i = 0; i < n; ++i) v.push_back(p2(i - 12));
    std::shuffle(v.begin(), v.end(), rng);
    add("distinct_powers_n" + std::to_string(n), v, std::ldexp(float((1 << n) - 1), -12));
  }

  // Catastrophic cancellation.
  add("cancel_max", {max, 1.0f, -max}, 1.0f);
  add("cancel_max_reordered", {max, -max, 1.0f}, 1.0f);
  add("cancel_max_to_smallest_subnormal", {max, tiny, -max}, tiny);
  add("cancel_interleaved", {p2(10), 3.0f, -p2(10), -p2(10), 5.0f, p2(10)}, 8.0f);
  // 2^max_exponent + tiny needs 40 (bf16: 261) bits: float keeps the top one.
  add("cancel_sticky_under_the_top_power", {p2(l.max_exponent), tiny}, p2(l.max_exponent));
  {
    std::vector<std::uint16_t> pairs;
    while (pairs.size() + 2 <= 200000) {
      const std::uint16_t x = random_finite();
      pairs.push_back(x);
      pairs.push_back(static_cast<std::uint16_t>(x ^ neg));
    }
    for (const float small : {1.0f, p2(-3), p2(-10)}) pairs.push_back(encode(format, small));
    std::shuffle(pairs.begin(), pairs.end(), rng);
    add_bits("cancelling_pairs_200003", pairs, 1.0f + p2(-3) + p2(-10));
  }

  // The whole exponent range.
  {
    std::vector<float> up, below_max, alternating;
    for (int e = tiny_exponent; e <= l.max_exponent; ++e) {
      up.push_back(p2(e));
      if (e < l.max_exponent) below_max.push_back(p2(e));
      alternating.push_back((e % 2 == 0 ? 1.0f : -1.0f) * p2(e));
    }
    // 2^(max_exponent + 1) - tiny rounds up: 2^16 for f16, 2^128 (overflow) for bf16.
    add("full_range_powers", up, f16 ? p2(16) : inf);
    add("full_range_powers_below_the_top", below_max, p2(l.max_exponent));
    add("full_range_alternating_signs", alternating);
    std::vector<float> reversed(up.rbegin(), up.rend());
    reversed.front() = -reversed.front();  // -2^max_exponent + all the smaller powers
    add("full_range_from_minus_the_top_power", reversed);
    // Each binade (and the subnormals) with a random fraction and sign.
    std::vector<std::uint16_t> random_significands;
    for (std::uint32_t e = 0; e <= std::uint32_t{l.max_bits} >> (P - 1); ++e) {
      const auto fraction = static_cast<std::uint16_t>(rng() & ((1u << (P - 1)) - 1));
      random_significands.push_back(
          static_cast<std::uint16_t>(((rng() & 1) != 0 ? neg : 0) | (e << (P - 1)) | fraction));
    }
    std::shuffle(random_significands.begin(), random_significands.end(), rng);
    add_bits("full_range_random_significands_and_signs", random_significands);
    // Every finite value: the positive ones (all but +0), then all of both signs (sum +0).
    std::vector<std::uint16_t> positive, both;
    for (std::uint32_t b = 1; b <= l.max_bits; ++b)
      positive.push_back(static_cast<std::uint16_t>(b));
    add_bits("every_positive_finite_value", positive);
    for (std::uint32_t b = 0; b <= l.max_bits; ++b) {
      both.push_back(static_cast<std::uint16_t>(b));
      both.push_back(static_cast<std::uint16_t>(b | neg));
    }
    add_bits("every_finite_value_of_both_signs", both, 0.0f);
    std::vector<std::uint16_t> random_bits(300007);
    for (auto& b : random_bits) b = random_finite();
    add_bits("random_finite_bits_300007", random_bits);  // bf16: far beyond float's range
    if (!f16) {
      // Magnitudes below 2^64: a finite float sum that needs float's rounding.
      std::vector<std::uint16_t> below(150001);
      for (auto& b : below) {
        b = random_finite();
        while ((b & 0x7FFF) >= 0x5F80) b = random_finite();  // 0x5F80: 2^64
      }
      add_bits("random_finite_bits_below_2^64_150001", below);
    }
  }

  // Subnormals (f16's are normal floats, bf16's subnormal floats).
  {
    std::vector<float> only;
    for (int k = 1; k < (1 << (P - 1)); ++k) only.push_back(float(k % 3 == 0 ? -k : k) * tiny);
    add("subnormals_only", only);
    add("subnormals_carry_into_normal", {min_normal - tiny, tiny}, min_normal);
    add("subnormals_cancel", {-tiny, tiny}, 0.0f);
    add("subnormals_largest_twice", {min_normal - tiny, min_normal - tiny},
        2.0f * min_normal - 2.0f * tiny);
  }

  // Signs of zero: -0 only if every value is -0; a +0 in the head or the tail of many -0.
  add("zero_empty", {}, 0.0f);
  add("zero_negative", {-0.0f}, -0.0f);
  add("zero_negatives", {-0.0f, -0.0f, -0.0f}, -0.0f);
  add("zero_positive", {0.0f}, 0.0f);
  add("zero_mixed", {-0.0f, 0.0f}, 0.0f);
  add("zero_mixed_reversed", {0.0f, -0.0f}, 0.0f);
  add("zero_from_one_minus_one", {1.0f, -1.0f}, 0.0f);
  add("zero_from_minus_one_one_minus_zero", {-1.0f, 1.0f, -0.0f}, 0.0f);
  add("zero_from_subnormals_and_minus_zero", {-tiny, -0.0f, tiny}, 0.0f);
  add("zero_from_max", {-max, max}, 0.0f);
  {
    std::vector<std::uint16_t> negatives(40001, neg);
    add_bits("zero_negatives_40001", negatives, -0.0f);
    negatives.push_back(0);
    add_bits("zero_negatives_then_a_positive_zero_last", negatives, 0.0f);
    negatives.back() = neg;
    negatives.front() = 0;
    add_bits("zero_negatives_after_a_positive_zero_first", negatives, 0.0f);
  }

  // Many equal values.
  add_bits("many_equal_tenths", std::vector<std::uint16_t>(100003, f16 ? 0x2E66 : 0x3DCD));
  add("many_equal_ones", std::vector<float>(65537, 1.0f), 65537.0f);
  // f16: beyond the half range, a float (exact in double, rounded once); bf16: float overflows.
  add("many_equal_max", std::vector<float>(100003, max),
      f16 ? static_cast<float>(100003.0 * static_cast<double>(max)) : inf);
  add("many_equal_negative_subnormals", std::vector<float>(4096, -tiny), -4096.0f * tiny);
  {
    // B + half an ulp of float from 1024 pieces: the tie goes to the even B; one tiny more
    // breaks it up.
    const int b = f16 ? 10 : 0;
    std::vector<float> tie_pieces(1024, p2(b - 24 - 10));
    tie_pieces.push_back(p2(b));
    add("many_pieces_make_a_float_tie", tie_pieces, p2(b));
    tie_pieces.push_back(tiny);
    add("many_pieces_just_above_a_float_tie", tie_pieces, p2(b) + p2(b - 23));
  }

  // Ties to even in float (half an ulp of float is far below the half format's ulp).
  {
    const int b = f16 ? 10 : 0;  // f16: tiny (2^-24) below half an ulp of 2^10
    const float B = p2(b), ulp = p2(b - 23), half_ulp = p2(b - 24);
    add("float_tie_down_to_even", {B, half_ulp}, B);
    add("float_tie_up_to_even", {B, ulp, half_ulp}, B + 2.0f * ulp);
    add("float_tie_down_to_even_negative", {-B, -half_ulp}, -B);
    add("float_tie_up_to_even_negative", {-B, -ulp, -half_ulp}, -(B + 2.0f * ulp));
    add("float_tie_broken_up_by_a_subnormal", {B, half_ulp, tiny}, B + ulp);
    add("float_tie_broken_down_by_a_subnormal", {B, ulp, half_ulp, -tiny}, B + ulp);
    const float top = p2(l.max_exponent);
    add("float_tie_in_the_top_binade", {top, p2(l.max_exponent - 24)}, top);
    add("float_tie_up_in_the_top_binade", {top, p2(l.max_exponent - 23), p2(l.max_exponent - 24)},
        top + p2(l.max_exponent - 22));
    // The float result is not a value of the half format (which would tie back to 1).
    add("result_is_not_a_half", {1.0f, p2(-P)}, 1.0f + p2(-P));
    add("result_needs_24_bits", {B, ulp}, B + ulp);
    if (!f16) {
      add("float_tie_of_an_integer", {p2(24), 1.0f}, p2(24));
      add("float_tie_of_an_integer_up", {p2(24), 2.0f, 1.0f}, p2(24) + 4.0f);
    }
  }

  // Overflow: bf16's largest finite value, (2^8 - 1)·2^120, is below float's, (2^24 - 1)·2^104.
  if (f16) {
    add("beyond_the_half_range", {max, max}, 2.0f * max);
    add("beyond_the_half_range_negative", {-max, -max}, -2.0f * max);
    add("back_from_beyond_the_half_range", {max, max, -max}, max);
  } else {
    add("overflow_positive", {max, max}, inf);
    add("overflow_negative", {-max, -max}, -inf);
    std::vector<float> to_float_max = {max};  // + 2^119 + ... + 2^104: float's largest
    for (int e = 119; e >= 104; --e) to_float_max.push_back(p2(e));
    add("sum_is_floats_largest", to_float_max, std::numeric_limits<float>::max());
    std::vector<float> tie = to_float_max;
    tie.push_back(p2(103));  // half an ulp of float's largest: the tie goes to 2^128, odd below
    add("overflow_by_a_float_tie", tie, inf);
    tie.push_back(-tiny);
    add("no_overflow_just_below_the_float_tie", tie, std::numeric_limits<float>::max());
    add("back_from_beyond_max", {max, max, -max}, max);
    add("back_from_beyond_minus_max", {-max, -max, max}, -max);
    std::vector<float> many(1000, max);
    many.insert(many.end(), 999, -max);
    add("back_from_1000_max", many, max);
    many.push_back(-max);
    many.push_back(1.0f);
    add("back_from_1000_max_to_one", many, 1.0f);
    add("sum_beyond_float_range", std::vector<float>(1 << 12, max / 2.0f), inf);
  }

  // NaN and infinities: the float's default quiet NaN whatever the NaN's bits.
  add("nan", {1.0f, nan}, nan);
  add_bits("negative_nan", {static_cast<std::uint16_t>(l.quiet_nan_bits | neg), encode(format, 1)},
           nan);
  add_bits("signalling_nan", {encode(format, 1), l.signalling_nan_bits}, nan);
  add_bits("nan_with_every_fraction_bit", {static_cast<std::uint16_t>(l.infinity_bits | 0x7FFF)},
           nan);
  add("infinities_of_both_signs", {inf, -inf}, nan);
  add("infinity_beats_finite", {inf, 1.0f, -max}, inf);
  add("negative_infinity_beats_a_large_sum", {-inf, max, max}, -inf);
  add("infinity_twice", {inf, inf}, inf);
  add("nan_and_infinity", {nan, inf}, nan);
  add("all_specials", {inf, -inf, nan, 0.0f}, nan);
  {
    std::vector<float> ones(20001, 1.0f);
    ones.push_back(nan);
    add("nan_last_after_20001_ones", ones, nan);
    ones.pop_back();
    ones[10000] = -inf;
    add("negative_infinity_amid_20001_ones", ones, -inf);
    ones[10000] = 1.0f;
    ones.front() = inf;
    add("infinity_first_of_20001", ones, inf);
  }
  return cases;
}

}  // namespace

template <class T>
const std::vector<AdversarialCase<T>>& adversarial_cases() {
  static const std::vector<AdversarialCase<T>> cases = [] {
    std::vector<AdversarialCase<T>> v = make_cases<T>();
    for (AdversarialCase<T>& c : v) c.expected = exact_sum(std::span<const T>(c.values));
    return v;
  }();
  return cases;
}

template const std::vector<AdversarialCase<float>>& adversarial_cases<float>();
template const std::vector<AdversarialCase<double>>& adversarial_cases<double>();

const std::vector<HalfAdversarialCase>& adversarial_half_cases(HalfFormat format) {
  const auto make = [](HalfFormat f) {
    std::vector<HalfAdversarialCase> v = make_half_cases(f);
    for (HalfAdversarialCase& c : v)
      c.expected = exact_sum(f, std::span<const std::uint16_t>(c.bits));
    return v;
  };
  static const std::vector<HalfAdversarialCase> f16 = make(HalfFormat::f16);
  static const std::vector<HalfAdversarialCase> bf16 = make(HalfFormat::bf16);
  return format == HalfFormat::f16 ? f16 : bf16;
}

}  // namespace tunedreduce::exact
