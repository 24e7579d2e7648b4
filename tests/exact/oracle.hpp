#pragma once
// The tests' oracle of an exact sum: boost::multiprecision::cpp_int, written the plain way
// (std::frexp for the significand, big-integer shifts, a comparison with the half ulp for the
// rounding), so it shares no code and no trick with exact/reference.cpp or
// exact/accumulator.hpp.

#include <boost/multiprecision/cpp_int.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>

namespace tunedreduce::exact::testing {

using BigInt = boost::multiprecision::cpp_int;

/// The sum of finite values in units of T's smallest subnormal, and what else was seen.
template <class T>
struct OracleSum {
  BigInt units = 0;
  bool nan = false;
  bool positive_infinity = false;
  bool negative_infinity = false;
  bool any = false;
  bool all_negative_zero = true;
};

template <class T>
constexpr int unit_exponent() {  // -149 for float, -1074 for double
  return std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
}

template <class T>
OracleSum<T> oracle_accumulate(std::span<const T> values) {
  constexpr int P = std::numeric_limits<T>::digits;
  OracleSum<T> sum;
  for (const T x : values) {
    sum.any = true;
    if (!(x == 0 && std::signbit(x))) sum.all_negative_zero = false;
    if (std::isnan(x)) {
      sum.nan = true;
    } else if (std::isinf(x)) {
      (x > 0 ? sum.positive_infinity : sum.negative_infinity) = true;
    } else if (x != 0) {
      int e = 0;
      const T fraction = std::frexp(x, &e);  // x = fraction·2^e, 1/2 ≤ |fraction| < 1
      const auto m = static_cast<std::int64_t>(std::ldexp(fraction, P));  // exact
      BigInt term = m < 0 ? -m : m;
      const int shift = e - P - unit_exponent<T>();
      if (shift >= 0) {
        term <<= shift;
      } else {
        if (boost::multiprecision::lsb(term) < static_cast<unsigned>(-shift)) {
          throw std::logic_error("oracle: a value below the smallest subnormal");
        }
        term >>= -shift;
      }
      sum.units += m < 0 ? BigInt(-term) : term;
    }
  }
  return sum;
}

/// The sum rounded once to nearest even, with exact_sum's specials and signs of zero.
template <class T>
T oracle_round(const OracleSum<T>& sum) {
  constexpr int P = std::numeric_limits<T>::digits;
  if (sum.nan || (sum.positive_infinity && sum.negative_infinity)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  if (sum.positive_infinity) return std::numeric_limits<T>::infinity();
  if (sum.negative_infinity) return -std::numeric_limits<T>::infinity();
  if (sum.units == 0) return sum.any && sum.all_negative_zero ? -T(0) : T(0);

  const bool negative = sum.units < 0;
  const BigInt magnitude = negative ? BigInt(-sum.units) : sum.units;
  const int h = static_cast<int>(boost::multiprecision::msb(magnitude));
  const int s = h - (P - 1) > 0 ? h - (P - 1) : 0;
  BigInt q = magnitude >> s;
  if (s > 0) {
    const BigInt remainder = magnitude - (q << s);
    const BigInt half = BigInt(1) << (s - 1);
    if (remainder > half || (remainder == half && boost::multiprecision::bit_test(q, 0))) ++q;
  }
  const T r = std::ldexp(static_cast<T>(q.convert_to<std::uint64_t>()), s + unit_exponent<T>());
  return negative ? -r : r;
}

template <class T>
T oracle_sum(std::span<const T> values) {
  return oracle_round(oracle_accumulate(values));
}

}  // namespace tunedreduce::exact::testing
