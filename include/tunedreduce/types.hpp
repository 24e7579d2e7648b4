#pragma once
/// \file
/// Element types and reduction operators understood by tunedreduce.

#include <cstdint>

namespace tunedreduce {

/// Element type of a reduction. The accumulator has the element type (as in CUB), so integer
/// sums wrap modulo 2^bits identically in every kernel variant.
enum class DType : std::uint8_t { i32, u32, i64, u64, f32, f64 };

/// Reduction operator. For floating-point min and max a NaN anywhere in the input gives NaN.
/// exact_sum, for f32 and f64 only (op_applies): the true sum of the inputs rounded once to
/// nearest even, so the same bits from every kernel, launch configuration and GPU; NaN if any
/// input is NaN or both infinities occur, ±Inf if one does or the rounded sum overflows.
enum class Op : std::uint8_t { sum, min, max, exact_sum };

inline constexpr DType all_dtypes[] = {DType::i32, DType::u32, DType::i64,
                                       DType::u64, DType::f32, DType::f64};
inline constexpr Op all_ops[] = {Op::sum, Op::min, Op::max, Op::exact_sum};

/// Whether operator \p o is defined for element type \p t: every one is, except exact_sum,
/// which is defined for f32 and f64 only. Whatever iterates all_dtypes x all_ops skips the
/// pairs this refuses.
constexpr bool op_applies(DType t, Op o) noexcept {
  return o != Op::exact_sum || t == DType::f32 || t == DType::f64;
}

/// Size of one element of \p t in bytes.
constexpr unsigned dtype_size(DType t) noexcept {
  switch (t) {
    case DType::i32:
    case DType::u32:
    case DType::f32:
      return 4;
    default:
      return 8;
  }
}

/// Short name used in registry ids, the database and the CLI: "i32", "u32", "i64", "u64",
/// "f32", "f64".
constexpr const char* dtype_name(DType t) noexcept {
  switch (t) {
    case DType::i32:
      return "i32";
    case DType::u32:
      return "u32";
    case DType::i64:
      return "i64";
    case DType::u64:
      return "u64";
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
  }
  return "?";
}

/// "sum", "min", "max" or "exact_sum".
constexpr const char* op_name(Op o) noexcept {
  switch (o) {
    case Op::sum:
      return "sum";
    case Op::min:
      return "min";
    case Op::max:
      return "max";
    case Op::exact_sum:
      return "exact_sum";
  }
  return "?";
}

}  // namespace tunedreduce
