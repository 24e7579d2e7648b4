// The tuner's data and references for the half types (measure/datagen.hpp, measure/reference.hpp):
// their bits decode as IEEE binary16 and bfloat16 do, every generated value is exact in its type
// and in the range the docs give, and the wide_sum reference and its check are the float sum of
// those values within n·ε(float)·Σ|x|; the exact_sum reference is the float of their exact sum,
// checked bit for bit. And argmin / argmax's reference: the first extreme element of the
// generated data (several threads' partials merged), checked index and bits.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "measure/datagen.hpp"
#include "measure/reference.hpp"

namespace tunedreduce::measure {
namespace {

/// binary16 by its definition, with ldexp: an independent decoder of finite values.
double binary16_value(std::uint16_t b) {
  const int sign = b >> 15, exp = (b >> 10) & 0x1F, mant = b & 0x3FF;
  const double m = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  return sign != 0 ? -m : m;
}

TEST(HalfData, EveryFiniteHalfDecodesAsBinary16AndTheSpecialsAreTheirs) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float f = to_float(Half{bits});
    if (((bits >> 10) & 0x1F) == 0x1F) {
      if ((bits & 0x3FF) != 0) {
        EXPECT_TRUE(std::isnan(f)) << std::hex << b;
      } else {
        EXPECT_EQ(f, (bits >> 15) != 0 ? -INFINITY : INFINITY) << std::hex << b;
      }
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), binary16_value(bits)) << std::hex << b;
    EXPECT_EQ(std::signbit(f), (bits >> 15) != 0) << std::hex << b;
  }
  EXPECT_EQ(to_float(Half{0x3C00}), 1.0f);
  EXPECT_EQ(to_float(Half{0x7BFF}), 65504.0f);
  EXPECT_EQ(to_float(Half{0x0001}), std::ldexp(1.0f, -24));
  EXPECT_EQ(to_float(BFloat16{0x3F80}), 1.0f);
  EXPECT_EQ(to_float(BFloat16{0xC040}), -3.0f);
  EXPECT_TRUE(std::isnan(to_float(BFloat16{0x7FC0})));
}

TEST(HalfData, GeneratedValuesAreExactMultiplesInTheirRangeWithBothSigns) {
  int negative = 0, positive = 0, zero = 0;
  for (std::uint64_t i = 0; i < 200000; ++i) {
    const float h = to_float(data_value<Half>(77, i));
    const double k = static_cast<double>(h) * 256;  // k * 2^-8, |k| <= 2^11
    ASSERT_EQ(k, std::floor(k)) << i;
    ASSERT_GE(k, -2048) << i;
    ASSERT_LT(k, 2048) << i;
    const float b = to_float(data_value<BFloat16>(77, i));
    const double kb = static_cast<double>(b) * 32;  // k * 2^-5, |k| <= 2^8
    ASSERT_EQ(kb, std::floor(kb)) << i;
    ASSERT_GE(kb, -256) << i;
    ASSERT_LT(kb, 256) << i;
    (h < 0 ? negative : h > 0 ? positive : zero) += 1;
    if (h == 0) {
      ASSERT_EQ(data_value<Half>(77, i).bits, 0) << i;  // +0, the encoding of k = 0
    }
  }
  EXPECT_GT(negative, 90000);
  EXPECT_GT(positive, 90000);
  EXPECT_GT(zero, 0);
}

template <class H>
void expect_wide_reference(DType dtype) {
  const std::uint64_t seed = 0x5eed, n = 300001;
  double sum = 0, abs_sum = 0;  // exact: multiples of 2^-8 far below 2^53 of them
  for (std::uint64_t i = 0; i < n; ++i) {
    const double v = to_float(data_value<H>(seed, i));
    sum += v;
    abs_sum += std::fabs(v);
  }
  const Reference r = compute_reference(dtype, Op::wide_sum, seed, n);
  float want = static_cast<float>(sum), got = 0;
  std::memcpy(&got, r.bits, sizeof got);
  EXPECT_EQ(got, want);
  EXPECT_EQ(static_cast<double>(r.fp_sum), sum);
  EXPECT_EQ(static_cast<double>(r.abs_sum), abs_sum);
  // The check: within n·ε(float)·Σ|x| passes, twice that fails.
  EXPECT_EQ(verify(r, &want), "");
  const double bound = static_cast<double>(n) * 0x1p-23 * abs_sum;
  const float near = static_cast<float>(sum + 0.9 * bound);
  const float far = static_cast<float>(sum + 2 * bound);
  EXPECT_EQ(verify(r, &near), "");
  EXPECT_NE(verify(r, &far).find("more than n*eps*sum|x|"), std::string::npos) << verify(r, &far);
}

TEST(HalfReference, WideSumIsTheFloatOfTheExactSumAndTheCheckUsesFloatsEpsilon) {
  expect_wide_reference<Half>(DType::f16);
  expect_wide_reference<BFloat16>(DType::bf16);
}

/// bfloat16 by its definition (8 exponent bits, bias 127, 7 fraction bits): finite values.
double bfloat16_value(std::uint16_t b) {
  const int sign = b >> 15, exp = (b >> 7) & 0xFF, mant = b & 0x7F;
  const double m = exp == 0 ? std::ldexp(mant, -133) : std::ldexp(128 + mant, exp - 134);
  return sign != 0 ? -m : m;
}

/// exact_sum of the generated halves, computed here: their values (decoded by the formats'
/// definitions) are multiples of 2^-8 (f16) or 2^-5 (bf16) below 8, so for n < 2^40 their sum in
/// double is exact; one conversion rounds it to float.
template <class H>
float exact_sum_here(std::uint64_t seed, std::uint64_t n) {
  double sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint16_t bits = data_value<H>(seed, i).bits;
    sum += std::is_same_v<H, Half> ? binary16_value(bits) : bfloat16_value(bits);
  }
  return static_cast<float>(sum);  // +0 for n = 0, and for an exact zero (no data value is -0)
}

template <class H>
void expect_exact_reference(DType dtype) {
  EXPECT_EQ(result_dtype(dtype, Op::exact_sum), DType::f32);
  EXPECT_EQ(result_bytes(dtype, Op::exact_sum), 4u);  // what the worker poisons and compares
  // Sizes of no multiple of 8, one below and two above 2^16 (where the reference splits the work
  // among threads and merges their sums); a size whose exact sum needs more than 11 (f16's) or
  // 8 (bf16's) significand bits, so a sum rounded to the half format would differ.
  for (const std::uint64_t seed : {std::uint64_t{1}, std::uint64_t{0x5eed}, std::uint64_t{1603}}) {
    for (const std::uint64_t n :
         {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{4097},
          std::uint64_t{65541}, std::uint64_t{1000003}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " seed " + std::to_string(seed) +
                   " n=" + std::to_string(n));
      const float want = exact_sum_here<H>(seed, n);
      const Reference r = compute_reference(dtype, Op::exact_sum, seed, n);
      EXPECT_EQ(r.op, Op::exact_sum);
      std::uint32_t got = 0;
      std::memcpy(&got, r.bits, sizeof got);
      ASSERT_EQ(got, std::bit_cast<std::uint32_t>(want))
          << std::hexfloat << want << " vs " << std::bit_cast<float>(got);
      for (std::size_t k = 4; k < sizeof r.bits; ++k) EXPECT_EQ(r.bits[k], 0) << k;
      // The check: the float's 4 bytes bit for bit, not within a bound.
      EXPECT_EQ(verify(r, &want), "");
      const float next = std::nextafter(want, std::numeric_limits<float>::infinity());
      EXPECT_NE(verify(r, &next).find("bit for bit"), std::string::npos) << verify(r, &next);
      if (want == 0) {
        const float negative_zero = -0.0f;
        EXPECT_NE(verify(r, &negative_zero), "");
      }
    }
  }
  // The exact sum at n = 10^6 (seed 1) is no value of the half format: a reference or kernel
  // that rounded to it would be caught. (A normal float is a half's value when its fraction's
  // low 13 (f16) or 16 (bf16) bits are zero.)
  const float big = exact_sum_here<H>(1, 1000003);
  const std::uint32_t low_bits = std::is_same_v<H, Half> ? 0x1FFFu : 0xFFFFu;
  EXPECT_NE(std::bit_cast<std::uint32_t>(big) & low_bits, 0u) << std::hexfloat << big;
}

TEST(HalfReference, ExactSumIsTheFloatOfTheExactSumComparedBitForBit) {
  expect_exact_reference<Half>(DType::f16);
  expect_exact_reference<BFloat16>(DType::bf16);
}

TEST(HalfReference, OperatorsOtherThanWideSumExactSumAndAbsmaxAreRefusedByName) {
  for (const Op o : {Op::sum, Op::min, Op::max}) {
    try {
      compute_reference(DType::f16, o, 1, 10);
      ADD_FAILURE() << op_name(o) << " of f16 was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("only, not f16"), std::string::npos) << e.what();
    }
  }
}

/// argmin / argmax of the generated data, by brute force here: the first index of the extreme.
template <class T>
void expect_arg_reference(DType dtype, Op op, std::uint64_t n) {
  const std::uint64_t seed = 0xa59;
  IndexedValue<T> want{data_value<T>(seed, 0), 0};
  for (std::uint64_t i = 1; i < n; ++i) {
    const T x = data_value<T>(seed, i);
    if (op == Op::argmin ? x < want.value : x > want.value)
      want = {x, static_cast<std::int64_t>(i)};
  }
  const Reference ref = compute_reference(dtype, op, seed, n);
  IndexedValue<T> got;
  std::memcpy(&got, ref.bits, sizeof got);
  EXPECT_EQ(got.index, want.index) << dtype_name(dtype) << " " << op_name(op) << " n=" << n;
  EXPECT_EQ(got.value, want.value) << dtype_name(dtype) << " " << op_name(op) << " n=" << n;
  EXPECT_EQ(verify(ref, &want), "");
  IndexedValue<T> later = want;
  later.index += 1;  // the same value at another index: wrong
  EXPECT_NE(verify(ref, &later).find("expected {value"), std::string::npos);
}

TEST(ArgReference, TheFirstExtremeElementOfTheGeneratedDataAcrossThreads) {
  // 2^17 + 3 elements: several threads' partials (from 2^16 up), merged in index order.
  for (Op op : {Op::argmin, Op::argmax}) {
    expect_arg_reference<std::int32_t>(DType::i32, op, (1u << 17) + 3);
    expect_arg_reference<std::uint64_t>(DType::u64, op, (1u << 17) + 3);
    expect_arg_reference<float>(DType::f32, op, (1u << 17) + 3);
    expect_arg_reference<double>(DType::f64, op, 1000);
  }
  // n = 0: index -1 and the worst value, as the kernels write.
  const Reference empty = compute_reference(DType::f32, Op::argmin, 1, 0);
  IndexedValue<float> e;
  std::memcpy(&e, empty.bits, sizeof e);
  EXPECT_EQ(e.index, -1);
  EXPECT_EQ(e.value, INFINITY);
  EXPECT_THROW(compute_reference(DType::f16, Op::argmin, 1, 10), std::invalid_argument);
}

/// absmax of the generated data, by brute force here with the types' own arithmetic (fabs, and
/// the half types decoded to float): the largest magnitude, in the element type's bits.
template <class T>
void expect_absmax_reference(DType dtype, std::uint64_t n) {
  const std::uint64_t seed = 0xab5;
  double best = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const T x = data_value<T>(seed, i);
    double m;
    if constexpr (is_half_v<T>) m = std::fabs(to_float(x));
    else m = std::fabs(static_cast<double>(x));
    best = m > best ? m : best;
  }
  const Reference ref = compute_reference(dtype, Op::absmax, seed, n);
  T got;
  std::memcpy(&got, ref.bits, sizeof got);
  double got_m;
  if constexpr (is_half_v<T>) got_m = to_float(got);
  else got_m = static_cast<double>(got);
  EXPECT_EQ(got_m, best) << dtype_name(dtype) << " n=" << n;  // positive: the sign dropped
  // The right bits pass; the same magnitude with the sign bit set does not.
  EXPECT_EQ(verify(ref, &got), "");
  T negative = got;
  reinterpret_cast<unsigned char*>(&negative)[sizeof(T) - 1] |= 0x80;  // little-endian sign bit
  EXPECT_NE(verify(ref, &negative), "") << dtype_name(dtype);
}

TEST(AbsmaxReference, TheLargestMagnitudeOfTheGeneratedDataAcrossThreads) {
  // 2^17 + 3 elements: several threads' partials (from 2^16 up).
  expect_absmax_reference<float>(DType::f32, (1u << 17) + 3);
  expect_absmax_reference<double>(DType::f64, (1u << 17) + 3);
  expect_absmax_reference<Half>(DType::f16, (1u << 17) + 3);
  expect_absmax_reference<BFloat16>(DType::bf16, 1000);
  // n = 0: +0, as the kernels write.
  for (DType d : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    const Reference empty = compute_reference(d, Op::absmax, 1, 0);
    const unsigned char zeros[8] = {};
    EXPECT_EQ(std::memcmp(empty.bits, zeros, dtype_size(d)), 0) << dtype_name(d);
  }
  EXPECT_THROW(compute_reference(DType::i32, Op::absmax, 1, 10), std::invalid_argument);
}

}  // namespace
}  // namespace tunedreduce::measure
