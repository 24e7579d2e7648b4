// The tables of element types and operators (include/tunedreduce/types.hpp): every fact the
// switches used to state, now read from dtype_table and op_table, and the one C++ type mapping.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <type_traits>

#include "tunedreduce/types.hpp"

namespace tunedreduce {
namespace {

// The mapping both ways, at compile time.
static_assert(std::is_same_v<dtype_t<DType::i32>, std::int32_t>);
static_assert(std::is_same_v<dtype_t<DType::u64>, std::uint64_t>);
static_assert(std::is_same_v<dtype_t<DType::f16>, __half>);
static_assert(std::is_same_v<dtype_t<DType::bf16>, __nv_bfloat16>);
static_assert(dtype_of<float> == DType::f32 && dtype_of<const double> == DType::f64);
static_assert(dtype_of<__half> == DType::f16 && dtype_of<__nv_bfloat16> == DType::bf16);
// Integer types of the same size and signedness as a row's.
static_assert(dtype_of<long long> == DType::i64 && dtype_of<unsigned long long> == DType::u64);
static_assert(dtype_of<long> == DType::i64 && dtype_of<unsigned long> == DType::u64);
static_assert(dtype_of<int> == DType::i32 && dtype_of<unsigned> == DType::u32);

TEST(Types, EveryRowMapsToItsCxxTypeAndBack) {
  for_each_dtype([](auto d) {
    constexpr DType D = d.value;
    static_assert(dtype_of<dtype_t<D>> == D);
    if constexpr (!is_half(D)) {
      EXPECT_EQ(sizeof(dtype_t<D>), dtype_size(D)) << dtype_name(D);
      EXPECT_EQ(std::is_floating_point_v<dtype_t<D>>, dtype_info(D).kind == NumberKind::floating)
          << dtype_name(D);
      EXPECT_EQ(std::is_signed_v<dtype_t<D>>, dtype_info(D).kind != NumberKind::unsigned_int)
          << dtype_name(D);
    }
  });
}

TEST(Types, NamesAsBefore) {
  std::string dtypes, ops;
  for (DType t : all_dtypes) dtypes += std::string(dtype_name(t)) + " ";
  for (Op o : all_ops) ops += std::string(op_name(o)) + " ";
  EXPECT_EQ(dtypes, "i32 u32 i64 u64 f32 f64 f16 bf16 ");
  EXPECT_EQ(ops, "sum min max exact_sum wide_sum argmin argmax absmax ");
  EXPECT_STREQ(dtype_name(static_cast<DType>(200)), "?");
  EXPECT_STREQ(op_name(static_cast<Op>(200)), "?");
  for (DType t : all_dtypes) EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
  for (Op o : all_ops) EXPECT_EQ(op_from_name(op_name(o)), o);
  EXPECT_EQ(dtype_from_name("float"), std::nullopt);
  EXPECT_EQ(op_from_name("Sum"), std::nullopt);
}

TEST(Types, SizesAndKinds) {
  EXPECT_EQ(dtype_size(DType::f16), 2u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::u32), 4u);
  EXPECT_EQ(dtype_size(DType::f64), 8u);
  std::set<DType> halves;
  for (DType t : all_dtypes)
    if (is_half(t)) halves.insert(t);
  EXPECT_EQ(halves, (std::set<DType>{DType::f16, DType::bf16}));
}

// op_applies and result_dtype, pair by pair, as the switches they replace had them.
TEST(Types, WhichOperatorsApplyAndTheirResults) {
  for (DType t : all_dtypes) {
    const bool half = t == DType::f16 || t == DType::bf16;
    const bool fp = t == DType::f32 || t == DType::f64 || half;
    const bool widenable = t == DType::i32 || t == DType::u32 || t == DType::f32 || half;
    for (Op o : all_ops) {
      bool want = !half;
      if (o == Op::exact_sum || o == Op::absmax) want = fp;
      if (o == Op::wide_sum) want = widenable;
      EXPECT_EQ(op_applies(t, o), want) << dtype_name(t) << " " << op_name(o);
    }
    EXPECT_EQ(result_dtype(t, Op::sum), t);
    EXPECT_EQ(result_dtype(t, Op::min), t);
    EXPECT_EQ(result_dtype(t, Op::argmax), t);
    EXPECT_EQ(result_dtype(t, Op::exact_sum), half ? DType::f32 : t);
    EXPECT_EQ(result_dtype(t, Op::absmax), t);  // the element type, the half types' too
    EXPECT_EQ(result_bytes(t, Op::argmin), 16u);
  }
  EXPECT_EQ(result_dtype(DType::i32, Op::wide_sum), DType::i64);
  EXPECT_EQ(result_dtype(DType::u32, Op::wide_sum), DType::u64);
  EXPECT_EQ(result_dtype(DType::f32, Op::wide_sum), DType::f64);
  EXPECT_EQ(result_dtype(DType::f16, Op::wide_sum), DType::f32);
  EXPECT_EQ(result_dtype(DType::bf16, Op::wide_sum), DType::f32);
  EXPECT_EQ(result_bytes(DType::f16, Op::exact_sum), 4u);
  EXPECT_EQ(result_bytes(DType::i32, Op::wide_sum), 8u);
  for (Op o : all_ops) EXPECT_EQ(is_arg_op(o), o == Op::argmin || o == Op::argmax);
}

TEST(Types, Identities) {
  EXPECT_TRUE(std::signbit(identity_value<float>(op_info(Op::sum).identity)));
  EXPECT_EQ(identity_value<std::int32_t>(op_info(Op::sum).identity), 0);
  EXPECT_EQ(identity_value<double>(op_info(Op::min).identity), HUGE_VAL);
  EXPECT_EQ(identity_value<std::uint32_t>(op_info(Op::min).identity), 0xFFFFFFFFu);
  // absmax's is +0.0: the smallest magnitude, and what n == 0 gives.
  EXPECT_EQ(std::bit_cast<std::uint32_t>(identity_value<float>(op_info(Op::absmax).identity)), 0u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(identity_value<double>(op_info(Op::absmax).identity)), 0u);
  EXPECT_EQ(identity_value<double>(op_info(Op::max).identity), -HUGE_VAL);
  EXPECT_EQ(identity_value<std::int64_t>(op_info(Op::argmax).identity), INT64_MIN);
}

TEST(Types, VisitDtypeCallsTheMatchingRow) {
  for (DType t : all_dtypes)
    EXPECT_EQ(visit_dtype(t, [](auto d) { return std::string(dtype_name(d.value)); }),
              dtype_name(t));
  int calls = 0;
  for_each_dtype([&](auto) { ++calls; });
  EXPECT_EQ(calls, static_cast<int>(dtype_count));
}

}  // namespace
}  // namespace tunedreduce
