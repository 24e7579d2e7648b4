// The adversarial cases (exact/adversarial.hpp): the inputs, each with the sum worked out by hand
// where that is short, and the host reference's sum of every one.

#include "exact/adversarial.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>
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

}  // namespace tunedreduce::exact
