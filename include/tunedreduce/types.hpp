#pragma once
/// \file
/// Element types and reduction operators understood by tunedreduce.

#include <cstdint>

namespace tunedreduce {

/// Element type of a reduction. The accumulator and the result have the element type (as in CUB),
/// so integer sums wrap modulo 2^bits identically in every kernel variant, except for
/// Op::wide_sum, whose accumulator and result are wider (result_dtype). f16 and bf16 are CUDA's
/// __half and __nv_bfloat16 (IEEE binary16 and bfloat16, two bytes each); so far they are reduced
/// by wide_sum and exact_sum alone (op_applies), both into a float.
enum class DType : std::uint8_t { i32, u32, i64, u64, f32, f64, f16, bf16 };

/// Reduction operator. For floating-point min and max a NaN anywhere in the input gives NaN.
/// exact_sum, for f32, f64, f16 and bf16 only (op_applies): the true sum of the inputs rounded
/// once to nearest even to result_dtype (the element type; float for f16 and bf16), so the same
/// bits from every kernel, launch configuration and GPU; NaN if any input is NaN or both
/// infinities occur, ±Inf if one does or the rounded sum overflows.
/// wide_sum, for i32, u32, f32, f16 and bf16 only (op_applies): the sum accumulated in, and
/// returned as, a wider type (result_dtype: i64, u64, f64, and f32 for both half types), so a sum
/// of many 32-bit integers does not wrap at 2^32 (it wraps modulo 2^64), a float sum keeps
/// double's precision and a half-precision sum float's.
/// argmin and argmax, for the 4- and 8-byte types (op_applies): the smallest (largest) element
/// and its index, as an IndexedValue of the element type (result_bytes: 16 bytes); the first
/// index where several elements are equal (-0.0 equals +0.0); a NaN wins over every number, as
/// for min and max, so any NaN gives the first NaN and its index. n == 0 gives index -1 and the
/// value min (max) returns for n == 0.
enum class Op : std::uint8_t { sum, min, max, exact_sum, wide_sum, argmin, argmax };

inline constexpr DType all_dtypes[] = {DType::i32, DType::u32, DType::i64, DType::u64,
                                       DType::f32, DType::f64, DType::f16, DType::bf16};
inline constexpr Op all_ops[] = {Op::sum,      Op::min,    Op::max,   Op::exact_sum,
                                 Op::wide_sum, Op::argmin, Op::argmax};

/// The result of argmin and argmax: the element and its index in the input (index -1 for an
/// empty input). 16 bytes for every element type (8-byte aligned), the same layout as the C
/// API's tr_indexed_* structs.
template <class T>
struct IndexedValue {
  T value;
  std::int64_t index;
};

/// Whether \p o is argmin or argmax (its result is an IndexedValue).
constexpr bool is_arg_op(Op o) noexcept { return o == Op::argmin || o == Op::argmax; }

/// Whether element type \p t is one of the two-byte floating-point types (f16, bf16).
constexpr bool is_half(DType t) noexcept { return t == DType::f16 || t == DType::bf16; }

/// Whether operator \p o is defined for element type \p t: sum, min, max, argmin and argmax for
/// the 4- and 8-byte types, exact_sum for f32, f64, f16 and bf16 only, wide_sum for i32, u32,
/// f32, f16 and bf16 only.
/// Whatever iterates all_dtypes x all_ops skips the pairs this refuses.
constexpr bool op_applies(DType t, Op o) noexcept {
  switch (o) {
    case Op::exact_sum:
      return t == DType::f32 || t == DType::f64 || is_half(t);
    case Op::wide_sum:
      return t == DType::i32 || t == DType::u32 || t == DType::f32 || is_half(t);
    default:
      return !is_half(t);
  }
}

/// The type of the result (and of the accumulator) of \p o over elements of \p t: the element
/// type, except for wide_sum: i32 -> i64, u32 -> u64, f32 -> f64, f16 and bf16 -> f32, and
/// exact_sum of f16 and bf16: f32 (the true sum rounded once to float). For
/// argmin and argmax, the type of the result's value (the element type; the result is an
/// IndexedValue of it, result_bytes). Meaningful where op_applies.
constexpr DType result_dtype(DType t, Op o) noexcept {
  if (o == Op::exact_sum && is_half(t)) return DType::f32;
  if (o != Op::wide_sum) return t;
  switch (t) {
    case DType::i32:
      return DType::i64;
    case DType::u32:
      return DType::u64;
    case DType::f16:
    case DType::bf16:
      return DType::f32;
    default:
      return DType::f64;
  }
}

/// Size of one element of \p t in bytes.
constexpr unsigned dtype_size(DType t) noexcept {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::i32:
    case DType::u32:
    case DType::f32:
      return 4;
    default:
      return 8;
  }
}

/// Short name used in registry ids, the database and the CLI: "i32", "u32", "i64", "u64",
/// "f32", "f64", "f16", "bf16".
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
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

/// Bytes of the result of \p o over elements of \p t: 16 for argmin and argmax (an IndexedValue),
/// else the size of result_dtype.
constexpr unsigned result_bytes(DType t, Op o) noexcept {
  return is_arg_op(o) ? 16 : dtype_size(result_dtype(t, o));
}

/// "sum", "min", "max", "exact_sum", "wide_sum", "argmin" or "argmax".
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
    case Op::wide_sum:
      return "wide_sum";
    case Op::argmin:
      return "argmin";
    case Op::argmax:
      return "argmax";
  }
  return "?";
}

}  // namespace tunedreduce
