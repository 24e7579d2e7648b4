#pragma once
// Inputs for the exact sums' tests: the adversarial cases (exact/adversarial.hpp, each
// with its value worked out by hand where that is short) and random data of several distributions.

#include <gtest/gtest.h>

#include "exact/adversarial.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace tunedreduce::exact::testing {

template <class T>
using BitsOf = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
BitsOf<T> bits(T x) {
  return std::bit_cast<BitsOf<T>>(x);
}

/// Equal bit patterns (so -0 differs from +0, and NaN equals only the same NaN).
template <class T>
::testing::AssertionResult same_bits(T expected, T actual) {
  if (bits(expected) == bits(actual)) return ::testing::AssertionSuccess();
  std::ostringstream message;  // one stream: AssertionResult's << would drop the manipulators
  message << "expected " << std::hexfloat << expected << " (bits 0x" << std::hex << bits(expected)
          << "), got " << std::hexfloat << actual << " (bits 0x" << std::hex << bits(actual) << ")";
  return ::testing::AssertionFailure() << message.str();
}

template <class T>
struct Case {
  std::string name;
  std::vector<T> values;
  std::optional<T> expected;  // worked out by hand; else the oracle's alone
};

/// The adversarial cases of exact/adversarial.hpp (the worker's too), as the tests take them.
template <class T>
std::vector<Case<T>> adversarial_cases() {
  std::vector<Case<T>> out;
  for (const AdversarialCase<T>& c : exact::adversarial_cases<T>())
    out.push_back({c.name, c.values, c.worked_out});
  return out;
}

/// Random data: the distributions the random tests draw from.
enum class Distribution {
  uniform01,
  normal,
  full_range,        // random exponent (subnormals included), significand and sign
  random_bits,       // any finite bit pattern
  cancelling_pairs,  // x and -x shuffled, plus a few small values
  subnormals,
  near_max,        // partial sums far beyond the largest finite value
  small_integers,  // many equal values
};

inline const char* distribution_name(Distribution d) {
  switch (d) {
    case Distribution::uniform01:
      return "uniform01";
    case Distribution::normal:
      return "normal";
    case Distribution::full_range:
      return "full_range";
    case Distribution::random_bits:
      return "random_bits";
    case Distribution::cancelling_pairs:
      return "cancelling_pairs";
    case Distribution::subnormals:
      return "subnormals";
    case Distribution::near_max:
      return "near_max";
    case Distribution::small_integers:
      return "small_integers";
  }
  return "?";
}

inline constexpr Distribution kDistributions[] = {
    Distribution::uniform01,   Distribution::normal,           Distribution::full_range,
    Distribution::random_bits, Distribution::cancelling_pairs, Distribution::subnormals,
    Distribution::near_max,    Distribution::small_integers};

template <class T>
T from_bits(BitsOf<T> b) {
  return std::bit_cast<T>(b);
}

template <class T>
std::vector<T> generate(Distribution d, std::size_t n, std::mt19937_64& rng) {
  using L = std::numeric_limits<T>;
  using Bits = BitsOf<T>;
  constexpr int P = L::digits;
  constexpr Bits kFraction = (Bits{1} << (P - 1)) - 1;
  constexpr Bits kSign = Bits{1} << (sizeof(T) * 8 - 1);
  constexpr Bits kMaxBiased = (Bits{1} << (sizeof(T) * 8 - P)) - 1;  // 255, 2047
  std::vector<T> v;
  v.reserve(n);
  const auto sign = [&]() { return (rng() & 1) != 0 ? kSign : Bits{0}; };
  switch (d) {
    case Distribution::uniform01: {
      std::uniform_real_distribution<T> dist(T(0), T(1));
      while (v.size() < n) v.push_back(dist(rng));
      break;
    }
    case Distribution::normal: {
      std::normal_distribution<T> dist(T(0), T(1000));
      while (v.size() < n) v.push_back(dist(rng));
      break;
    }
    case Distribution::full_range:
      while (v.size() < n) {
        const Bits biased = static_cast<Bits>(rng() % kMaxBiased);  // 0 .. max finite
        v.push_back(
            from_bits<T>(sign() | (biased << (P - 1)) | (static_cast<Bits>(rng()) & kFraction)));
      }
      break;
    case Distribution::random_bits:
      while (v.size() < n) {
        const T x = from_bits<T>(static_cast<Bits>(rng()));
        if (std::isfinite(x)) v.push_back(x);
      }
      break;
    case Distribution::cancelling_pairs: {
      std::uniform_int_distribution<int> exponent(-40, 40);
      std::uniform_real_distribution<T> significand(T(1), T(2));
      while (v.size() + 2 <= n) {
        const T x = std::ldexp(significand(rng), exponent(rng));
        v.push_back(x);
        v.push_back(-x);
      }
      while (v.size() < n) v.push_back(std::ldexp(significand(rng), -60));
      std::shuffle(v.begin(), v.end(), rng);
      break;
    }
    case Distribution::subnormals:
      while (v.size() < n) {
        const Bits fraction = static_cast<Bits>(rng()) & kFraction;
        v.push_back(from_bits<T>(sign() | fraction));
      }
      break;
    case Distribution::near_max: {
      // Pairs x, -x' with x' one of x and its neighbours, shuffled: the partial sums run far past
      // the largest finite value, the total is a few ulps of the top binades (or, for odd n,
      // close to the one value left unpaired).
      std::uniform_real_distribution<T> dist(L::max() / T(8), L::max());
      while (v.size() + 2 <= n) {
        const T x = dist(rng);
        const T neighbours[] = {x, std::nextafter(x, T(0)), std::nextafter(x, L::max())};
        v.push_back(x);
        v.push_back(-neighbours[rng() % 3]);
      }
      if (v.size() < n) v.push_back(dist(rng));
      std::shuffle(v.begin(), v.end(), rng);
      break;
    }
    case Distribution::small_integers: {
      std::uniform_int_distribution<int> dist(-4, 4);
      while (v.size() < n) v.push_back(T(dist(rng)));
      break;
    }
  }
  return v;
}

}  // namespace tunedreduce::exact::testing
