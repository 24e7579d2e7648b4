#pragma once
// Thread level: element types and operators.
//
// Sum of signed integers is done in the unsigned type of the same width, so overflow wraps
// modulo 2^bits (well defined, and identical in every variant). Floating-point min and max
// propagate NaN: a NaN anywhere in the input gives NaN, whatever the order of evaluation, so every
// variant returns the same class of result. The identity of floating-point addition is -0.0
// (x + -0.0 == x for every x, -0.0 included), so a sum of only -0.0 is -0.0 as IEEE 754 has it,
// whatever the grid; the sum of nothing (n == 0) is +0.0, as CUB's and NumPy's are.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "tunedreduce/types.hpp"

namespace tunedreduce::kernels {

template <DType D>
struct dtype_traits;
template <>
struct dtype_traits<DType::i32> {
  using type = std::int32_t;
};
template <>
struct dtype_traits<DType::u32> {
  using type = std::uint32_t;
};
template <>
struct dtype_traits<DType::i64> {
  using type = std::int64_t;
};
template <>
struct dtype_traits<DType::u64> {
  using type = std::uint64_t;
};
template <>
struct dtype_traits<DType::f32> {
  using type = float;
};
template <>
struct dtype_traits<DType::f64> {
  using type = double;
};
/// The half types are inputs only (wide_sum into float): the kernels widen each element with
/// its conversion to float as they fold it.
template <>
struct dtype_traits<DType::f16> {
  using type = __half;
};
template <>
struct dtype_traits<DType::bf16> {
  using type = __nv_bfloat16;
};
template <DType D>
using dtype_t = typename dtype_traits<D>::type;
/// The accumulator's (and the result's) type of operator O over elements of D: the element type,
/// except for wide_sum (types.hpp, result_dtype) and argmin / argmax (an IndexedValue of it).
template <DType D, Op O>
using acc_t =
    std::conditional_t<is_arg_op(O), IndexedValue<dtype_t<D>>, dtype_t<result_dtype(D, O)>>;

template <class T>
struct SumOp {
  static constexpr T identity() {
    if constexpr (std::is_floating_point_v<T>) return -T(0);
    else return T(0);
  }
  /// What a reduction of no elements writes.
  static constexpr T empty_result() { return T(0); }
  __host__ __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};

template <class T>
struct MinOp {
  static constexpr T identity() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  static constexpr T empty_result() { return identity(); }
  __host__ __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a < b || a != a) ? a : b;
    else return a < b ? a : b;
  }
};

template <class T>
struct MaxOp {
  static constexpr T identity() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  static constexpr T empty_result() { return identity(); }
  __host__ __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a > b || a != a) ? a : b;
    else return a > b ? a : b;
  }
};

/// argmin (Max = false) and argmax (Max = true) over elements of T: an accumulator is an
/// IndexedValue. A NaN beats every number; of two equal values (-0.0 == +0.0, and NaN against
/// NaN) the one with the smaller index wins. So the result is the first extreme element whatever
/// the order of evaluation, and every variant returns the same bits.
template <class T, bool Max>
struct ArgOp {
  using Acc = IndexedValue<T>;
  static constexpr T worst() {
    if constexpr (Max) return MaxOp<T>::identity();
    else return MinOp<T>::identity();
  }
  /// Loses to every element (an index no element has).
  static constexpr Acc identity() { return Acc{worst(), std::numeric_limits<std::int64_t>::max()}; }
  /// What an argument reduction of no elements writes.
  static constexpr Acc empty_result() { return Acc{worst(), -1}; }
  /// Whether value x is strictly better than y: more extreme, or a NaN against a number.
  __host__ __device__ __forceinline__ static bool better(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      if constexpr (Max) return x > y || (x != x && y == y);
      else return x < y || (x != x && y == y);
    } else {
      if constexpr (Max) return x > y;
      else return x < y;
    }
  }
  /// Whether x and y tie (equal, or both NaN).
  __host__ __device__ __forceinline__ static bool ties(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) return x == y || (x != x && y != y);
    else return x == y;
  }
  __host__ __device__ __forceinline__ Acc operator()(Acc a, Acc b) const {
    const bool take_b = better(b.value, a.value) || (ties(b.value, a.value) && b.index < a.index);
    return take_b ? b : a;
  }
};

template <Op O, class T>
struct op_traits;
template <class T>
struct op_traits<Op::sum, T> {
  using type = SumOp<T>;
};
/// wide_sum is the sum in the wider type: T here is already the accumulator's type (acc_t).
template <class T>
struct op_traits<Op::wide_sum, T> {
  using type = SumOp<T>;
};
template <class T>
struct op_traits<Op::min, T> {
  using type = MinOp<T>;
};
template <class T>
struct op_traits<Op::max, T> {
  using type = MaxOp<T>;
};
/// argmin / argmax: T is the accumulator's type, an IndexedValue of the element type.
template <class T>
struct op_traits<Op::argmin, IndexedValue<T>> {
  using type = ArgOp<T, false>;
};
template <class T>
struct op_traits<Op::argmax, IndexedValue<T>> {
  using type = ArgOp<T, true>;
};
template <Op O, class T>
using op_t = typename op_traits<O, T>::type;

/// Whether OpT is an argument reduction (ArgOp): its folds need each element's index.
template <class OpT>
inline constexpr bool is_arg_op_v = false;
template <class T, bool Max>
inline constexpr bool is_arg_op_v<ArgOp<T, Max>> = true;

/// Folds element x of the input, at index i, into accumulator v (of type T): an argument
/// reduction keeps the index (a full comparison: v may have seen larger indices, and an element
/// equal to the identity's value must still replace the identity); the others widen x to T and
/// ignore i (the compiler drops its arithmetic).
template <class T, class OpT, class In>
__device__ __forceinline__ T fold_element(const OpT& op, T v, In x, std::uint64_t i) {
  if constexpr (is_arg_op_v<OpT>) return op(v, T{x, static_cast<std::int64_t>(i)});
  else return op(v, static_cast<T>(x));
}

/// Element x at index i as an accumulator of T.
template <class T, class OpT, class In>
__device__ __forceinline__ T element_acc(In x, std::uint64_t i) {
  if constexpr (is_arg_op_v<OpT>) return T{x, static_cast<std::int64_t>(i)};
  else return static_cast<T>(x);
}

/// An element of In that a padded slot holds: the worst value (its index is never reached).
template <class In, class OpT>
__device__ __forceinline__ In padding_element() {
  if constexpr (is_arg_op_v<OpT>) return OpT::worst();
  else return static_cast<In>(OpT::identity());
}

/// in[i] when i < n, else the identity.
template <class T, class OpT>
__device__ __forceinline__ T load_or_identity(const T* __restrict__ in, std::uint64_t n,
                                              std::uint64_t i) {
  return i < n ? in[i] : OpT::identity();
}

}  // namespace tunedreduce::kernels
