// The half types' exact sums on the host (exact/reference.hpp: half_value and exact_sum over f16
// and bf16 bits; exact/adversarial.hpp: adversarial_half_cases) against the cpp_int oracle, bit
// for bit: every half decoded by its format's definition here (ldexp), summed by the oracle and
// rounded once to float.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "exact/adversarial.hpp"
#include "exact/reference.hpp"
#include "tests/exact/cases.hpp"
#include "tests/exact/oracle.hpp"

namespace tunedreduce::exact::testing {
namespace {

constexpr HalfFormat kFormats[] = {HalfFormat::f16, HalfFormat::bf16};

/// A half's value by its format's definition: sign, exponent field, fraction, with ldexp (binary16:
/// 5 exponent bits, bias 15, 10 fraction bits; bfloat16: 8, 127, 7). NaN for a NaN.
float defined_value(HalfFormat format, std::uint16_t bits) {
  const int fraction_bits = format == HalfFormat::f16 ? 10 : 7;
  const int bias = format == HalfFormat::f16 ? 15 : 127;
  const int max_field = format == HalfFormat::f16 ? 31 : 255;
  const bool negative = (bits >> 15) != 0;
  const int field = (bits & 0x7FFF) >> fraction_bits;
  const int fraction = bits & ((1 << fraction_bits) - 1);
  if (field == max_field) {
    if (fraction != 0) return std::numeric_limits<float>::quiet_NaN();
    return negative ? -INFINITY : INFINITY;
  }
  const double magnitude =
      field == 0 ? std::ldexp(fraction, 1 - bias - fraction_bits)
                 : std::ldexp((1 << fraction_bits) + fraction, field - bias - fraction_bits);
  const auto f = static_cast<float>(magnitude);  // exact: float holds every half
  return negative ? -f : f;
}

std::vector<float> defined_values(HalfFormat format, const std::vector<std::uint16_t>& bits) {
  std::vector<float> out;
  out.reserve(bits.size());
  for (const std::uint16_t b : bits) out.push_back(defined_value(format, b));
  return out;
}

/// The oracle's exact sum of halves: their defined values summed exactly, rounded once to float.
float oracle_half_sum(HalfFormat format, const std::vector<std::uint16_t>& bits) {
  const std::vector<float> v = defined_values(format, bits);
  return oracle_sum<float>(v);
}

TEST(HalfValue, EveryPatternOfBothFormatsIsItsDefinedValue) {
  for (const HalfFormat format : kFormats) {
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
      const auto bits = static_cast<std::uint16_t>(b);
      const float want = defined_value(format, bits);
      const float got = half_value(format, bits);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << half_format_name(format) << std::hex << " 0x" << b;
        continue;
      }
      ASSERT_TRUE(same_bits(want, got)) << half_format_name(format) << std::hex << " 0x" << b;
    }
  }
  EXPECT_EQ(half_value(HalfFormat::f16, 0x3C00), 1.0f);
  EXPECT_EQ(half_value(HalfFormat::f16, 0x7BFF), 65504.0f);
  EXPECT_EQ(half_value(HalfFormat::f16, 0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_value(HalfFormat::f16, 0x0300), std::ldexp(3.0f, -16));  // a subnormal
  EXPECT_EQ(half_value(HalfFormat::bf16, 0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(half_value(HalfFormat::bf16, 0x7F7F), std::ldexp(255.0f, 120));
  EXPECT_EQ(half_value(HalfFormat::bf16, 0xC040), -3.0f);
}

TEST(HalfAdversarial, TheOracleGivesTheHandWorkedValues) {
  for (const HalfFormat format : kFormats) {
    std::size_t worked = 0;
    for (const HalfAdversarialCase& c : adversarial_half_cases(format)) {
      if (!c.worked_out) continue;
      ++worked;
      SCOPED_TRACE(std::string(half_format_name(format)) + " " + c.name);
      EXPECT_TRUE(same_bits(*c.worked_out, oracle_half_sum(format, c.bits)));
    }
    EXPECT_GT(worked, 60u) << half_format_name(format);
  }
}

TEST(HalfAdversarial, ExpectedValuesAreTheOraclesAndTheReferencesExactSum) {
  for (const HalfFormat format : kFormats) {
    for (const HalfAdversarialCase& c : adversarial_half_cases(format)) {
      SCOPED_TRACE(std::string(half_format_name(format)) + " " + c.name);
      EXPECT_TRUE(same_bits(oracle_half_sum(format, c.bits), c.expected));
      EXPECT_TRUE(same_bits(c.expected, exact_sum(format, std::span<const std::uint16_t>(c.bits))));
    }
  }
}

// What the GPU checks rely on: the adversarial classes (exact/adversarial.hpp) occur (NaN as
// float's default quiet NaN, both infinities, both zeros, float's largest value for bf16), some
// cases are long and of no length a multiple of 8, and uploaded back to back the cases start at
// every offset modulo 8 halves, the 16-value group cases first (so they stay 16-byte aligned).
TEST(HalfAdversarial, CasesCoverTheClassesLengthsAndAlignments) {
  for (const HalfFormat format : kFormats) {
    SCOPED_TRACE(half_format_name(format));
    const auto& cases = adversarial_half_cases(format);
    std::set<std::string> names;
    std::set<std::uint32_t> results;
    std::set<std::size_t> offsets_mod_8;
    std::size_t offset = 0, long_unaligned = 0, lengths_1_to_24 = 0;
    bool groups_first = true;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const HalfAdversarialCase& c = cases[i];
      EXPECT_TRUE(names.insert(c.name).second) << "duplicate " << c.name;
      results.insert(bits(c.expected));
      if (!c.bits.empty()) offsets_mod_8.insert(offset % 8);
      offset += c.bits.size();
      if (c.bits.size() >= 100000 && c.bits.size() % 8 != 0) ++long_unaligned;
      if (c.name.rfind("distinct_powers_n", 0) == 0) ++lengths_1_to_24;
      const bool group = c.name.rfind("group_of_8_spread_", 0) == 0;
      if (group) {
        EXPECT_EQ(c.bits.size(), 16u) << c.name;
      }
      if (group && !groups_first) ADD_FAILURE() << c.name << " after another kind of case";
      if (!group) groups_first = false;
    }
    EXPECT_GE(long_unaligned, 4u);
    EXPECT_EQ(lengths_1_to_24, 24u);
    EXPECT_EQ(offsets_mod_8.size(), 8u);
    EXPECT_TRUE(names.count("group_of_8_spread_1"));
    for (const std::uint32_t r :
         {0x7FC00000u, 0x7F800000u, 0xFF800000u, 0x00000000u, 0x80000000u}) {
      EXPECT_TRUE(results.count(r)) << std::hex << "0x" << r;
    }
    if (format == HalfFormat::bf16) {
      EXPECT_TRUE(results.count(0x7F7FFFFFu));  // float's largest: no bf16 value
    }
  }
}

TEST(HalfAdversarial, WorkedValuesThatTellARoundingToTheHalfFormat) {
  // Results no half holds, and sums beyond the half range that float holds.
  const auto expected = [](HalfFormat format, const std::string& name) {
    for (const HalfAdversarialCase& c : adversarial_half_cases(format))
      if (c.name == name) return c.expected;
    ADD_FAILURE() << "no case " << name;
    return 0.0f;
  };
  EXPECT_EQ(expected(HalfFormat::f16, "result_is_not_a_half"), 1.0f + std::ldexp(1.0f, -11));
  EXPECT_EQ(expected(HalfFormat::bf16, "result_is_not_a_half"), 1.0f + std::ldexp(1.0f, -8));
  EXPECT_EQ(expected(HalfFormat::f16, "beyond_the_half_range"), 131008.0f);
  EXPECT_EQ(expected(HalfFormat::f16, "full_range_powers"), 65536.0f);
  EXPECT_EQ(expected(HalfFormat::bf16, "full_range_powers"), INFINITY);
  EXPECT_EQ(expected(HalfFormat::bf16, "sum_is_floats_largest"), std::numeric_limits<float>::max());
  EXPECT_EQ(expected(HalfFormat::bf16, "overflow_by_a_float_tie"), INFINITY);
  EXPECT_EQ(expected(HalfFormat::f16, "many_equal_max"), 6550596512.0f);
}

/// Random half bits of several kinds: any pattern (NaN and ±Inf included), finite patterns,
/// one binade's neighbourhood (sums that need float's rounding), pairs x, -x and a few more.
std::vector<std::uint16_t> random_halves(HalfFormat format, int kind, std::size_t n,
                                         std::mt19937_64& rng) {
  const std::uint16_t max_bits = format == HalfFormat::f16 ? 0x7BFF : 0x7F7F;
  const auto finite = [&] {
    for (;;) {
      const auto b = static_cast<std::uint16_t>(rng());
      if ((b & 0x7FFF) <= max_bits) return b;
    }
  };
  std::vector<std::uint16_t> v;
  v.reserve(n);
  switch (kind) {
    case 0:
      while (v.size() < n) v.push_back(static_cast<std::uint16_t>(rng()));
      break;
    case 1:
      while (v.size() < n) v.push_back(finite());
      break;
    case 2: {
      // Exponent fields within 12 of 1.0's: 24-bit float sums round.
      const int shift = format == HalfFormat::f16 ? 10 : 7;
      const int one = format == HalfFormat::f16 ? 15 : 127;
      while (v.size() < n) {
        const auto field = static_cast<std::uint32_t>(one - 12 + static_cast<int>(rng() % 25));
        const auto b = (field << shift) | (rng() & ((1u << shift) - 1)) | ((rng() & 1) << 15);
        v.push_back(static_cast<std::uint16_t>(b));
      }
      break;
    }
    default:
      while (v.size() + 2 <= n) {
        const std::uint16_t x = finite();
        v.push_back(x);
        v.push_back(static_cast<std::uint16_t>(x ^ 0x8000));
      }
      while (v.size() < n) v.push_back(finite());
      std::shuffle(v.begin(), v.end(), rng);
      break;
  }
  return v;
}

TEST(HalfReference, RandomHalfDataMatchesTheOracle) {
  std::mt19937_64 rng(1603);
  for (const HalfFormat format : kFormats) {
    for (int kind = 0; kind < 4; ++kind) {
      for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{9},
                                  std::size_t{4099}, std::size_t{100003}}) {
        SCOPED_TRACE(std::string(half_format_name(format)) + " kind " + std::to_string(kind) +
                     " n=" + std::to_string(n));
        const std::vector<std::uint16_t> v = random_halves(format, kind, n, rng);
        EXPECT_TRUE(same_bits(oracle_half_sum(format, v),
                              exact_sum(format, std::span<const std::uint16_t>(v))));
      }
    }
  }
}

TEST(HalfReference, NaNIsFloatsDefaultQuietNaNAndNoValuesArePositiveZero) {
  for (const HalfFormat format : kFormats) {
    SCOPED_TRACE(half_format_name(format));
    // A negative NaN with a payload still gives 0x7FC00000.
    const std::uint16_t nan = format == HalfFormat::f16 ? 0xFC01 : 0xFF81;
    const std::vector<std::uint16_t> v = {0x0001, nan};
    EXPECT_EQ(bits(exact_sum(format, std::span<const std::uint16_t>(v))), 0x7FC00000u);
    EXPECT_EQ(bits(exact_sum(format, std::span<const std::uint16_t>())), 0u);
    const std::vector<std::uint16_t> negative_zeros(5, 0x8000);
    EXPECT_EQ(bits(exact_sum(format, std::span<const std::uint16_t>(negative_zeros))), 0x80000000u);
  }
}

}  // namespace
}  // namespace tunedreduce::exact::testing
