// The host reference (exact/reference.hpp) against the cpp_int oracle, bit for bit.

#include "exact/reference.hpp"

#include <gtest/gtest.h>

#include <random>
#include <span>

#include "tests/exact/cases.hpp"
#include "tests/exact/oracle.hpp"

namespace tunedreduce::exact::testing {
namespace {

template <class T>
class ExactReference : public ::testing::Test {};

struct TypeNames {
  template <class T>
  static std::string GetName(int) {
    return sizeof(T) == 4 ? "float" : "double";
  }
};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ExactReference, Types, TypeNames);

TYPED_TEST(ExactReference, TheOracleGivesTheHandWorkedValues) {
  using T = TypeParam;
  for (const Case<T>& c : adversarial_cases<T>()) {
    if (!c.expected) continue;
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(same_bits(*c.expected, oracle_sum<T>(c.values)));
  }
}

TYPED_TEST(ExactReference, AdversarialCasesMatchTheOracle) {
  using T = TypeParam;
  for (const Case<T>& c : adversarial_cases<T>()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(same_bits(oracle_sum<T>(c.values), exact_sum(std::span<const T>(c.values))));
  }
}

TYPED_TEST(ExactReference, RandomDataMatchesTheOracle) {
  using T = TypeParam;
  std::mt19937_64 rng(1601);
  for (const Distribution d : kDistributions) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4099}}) {
      SCOPED_TRACE(std::string(distribution_name(d)) + " n=" + std::to_string(n));
      const std::vector<T> v = generate<T>(d, n, rng);
      EXPECT_TRUE(same_bits(oracle_sum<T>(v), exact_sum(std::span<const T>(v))));
    }
  }
}

TYPED_TEST(ExactReference, PiecesAndMergesGiveTheOneShotSum) {
  using T = TypeParam;
  std::mt19937_64 rng(1602);
  for (const Distribution d : kDistributions) {
    SCOPED_TRACE(distribution_name(d));
    const std::vector<T> v = generate<T>(d, 3000, rng);
    const T whole = exact_sum(std::span<const T>(v));
    ReferenceSum<T> pieces;
    ReferenceSum<T> merged;
    std::size_t i = 0;
    while (i < v.size()) {
      const std::size_t n = std::min<std::size_t>(v.size() - i, rng() % 700);
      const std::span<const T> piece(v.data() + i, n);
      pieces.add(piece);
      ReferenceSum<T> part;
      part.add(piece);
      merged.merge(part);
      i += n;
    }
    EXPECT_EQ(pieces.count(), v.size());
    EXPECT_EQ(merged.count(), v.size());
    EXPECT_TRUE(same_bits(whole, pieces.result()));
    EXPECT_TRUE(same_bits(whole, merged.result()));
    EXPECT_TRUE(same_bits(whole, pieces.result())) << "result() must not change the sum";
  }
}

TYPED_TEST(ExactReference, NaNIsTheDefaultQuietNaNAndNoValuesArePositiveZero) {
  using T = TypeParam;
  const std::vector<T> v = {T(1), -std::numeric_limits<T>::quiet_NaN()};
  EXPECT_TRUE(same_bits(std::numeric_limits<T>::quiet_NaN(), exact_sum(std::span<const T>(v))));
  EXPECT_TRUE(same_bits(T(0), exact_sum(std::span<const T>())));
  EXPECT_TRUE(same_bits(T(0), ReferenceSum<T>().result()));
}

TYPED_TEST(ExactReference, CopiesAreIndependentAndAMovedFromSumStartsAgain) {
  using T = TypeParam;
  const std::vector<T> one = {T(1)};
  ReferenceSum<T> a;
  a.add(one);
  ReferenceSum<T> b = a;
  b.add(one);
  EXPECT_TRUE(same_bits(T(1), a.result()));
  EXPECT_TRUE(same_bits(T(2), b.result()));
  ReferenceSum<T> c = std::move(b);
  EXPECT_TRUE(same_bits(T(2), c.result()));
  b.add(one);  // NOLINT(bugprone-use-after-move): a moved-from sum is empty, then usable
  EXPECT_TRUE(same_bits(T(1), b.result()));
}

}  // namespace
}  // namespace tunedreduce::exact::testing
