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
#include <cstring>
#include <limits>
#include <type_traits>

#include "tunedreduce/types.hpp"

namespace tunedreduce::kernels {

/// D's C++ type: tunedreduce/types.hpp's dtype_traits, the one mapping, named again here only so
/// that the kernels' symbols keep their names. The half types are inputs only (wide_sum and
/// exact_sum into float): the kernels widen each element with its conversion to float as they
/// fold it.
template <DType D>
struct dtype_traits {
  using type = tunedreduce::dtype_t<D>;
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
    constexpr T v = identity_value<T>(op_info(Op::sum).identity);  // types.hpp's op_table
    return v;
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
    constexpr T v = identity_value<T>(op_info(Op::min).identity);  // types.hpp's op_table
    return v;
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
    constexpr T v = identity_value<T>(op_info(Op::max).identity);  // types.hpp's op_table
    return v;
  }
  static constexpr T empty_result() { return identity(); }
  __host__ __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a > b || a != a) ? a : b;
    else return a > b ? a : b;
  }
};

/// absmax: the larger magnitude. The arguments' bits less the sign bit are compared as unsigned
/// integers, which for the IEEE formats is the magnitudes' order with every NaN above +inf: a NaN
/// wins whatever the order of evaluation, and -0.0 and +0.0 are equal (both 0). What it returns
/// has no sign bit, so an element and a partial (already a magnitude) fold alike, and every
/// variant returns the same bits. T: float, double, __half or __nv_bfloat16.
template <class T>
struct AbsMaxOp {
  using Bits = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
  // Every bit but the sign: shifted as Bits, before ~ or >> promote a two-byte one to int (whose
  // ~0 >> 1 is -1 again: no bit cleared).
  static constexpr Bits magnitude = static_cast<Bits>(static_cast<Bits>(~Bits{0}) >> 1);
  static_assert(magnitude == static_cast<Bits>(~(Bits{1} << (8 * sizeof(Bits) - 1))));
  /// +0.0 (types.hpp's op_table: Identity::plus_zero), made from its bits for the half types.
  static constexpr T identity() {
    if constexpr (std::is_same_v<T, __half>) return __half(__half_raw{0});
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __nv_bfloat16(__nv_bfloat16_raw{0});
    else return identity_value<T>(op_info(Op::absmax).identity);
  }
  static constexpr T empty_result() { return identity(); }
  __host__ __device__ __forceinline__ T operator()(T a, T b) const {
    Bits x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x &= magnitude;
    y &= magnitude;
    const Bits m = x > y ? x : y;
    T r;
    memcpy(&r, &m, sizeof r);
    return r;
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
  /// Whether value x is strictly better than y: more extreme, or a NaN against a number. For
  /// floats: "x beyond y or unordered, and y a number" (two instructions).
  __host__ __device__ __forceinline__ static bool better(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      if constexpr (Max) return !(x <= y) && y == y;
      else return !(x >= y) && y == y;
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
template <class T>
struct op_traits<Op::absmax, T> {
  using type = AbsMaxOp<T>;
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

/// The best of U vectors of V elements held in index order (vector k's element e is item
/// k * V + e) for argmin / argmax: a tree of strict comparisons in which a tie keeps the earlier
/// item, so no index is compared and the chain of dependent instructions is log2(U * V) deep.
/// The value (its bits as loaded: the selects move them, nothing computes on them) and the
/// item's position.
template <class In>
struct ArgBest {
  In value;
  int pos;
};
template <class OpT, int U, int V, class Raw>
__device__ __forceinline__ auto arg_tree(const Raw (&x)[U]) {
  using In = std::remove_cvref_t<decltype(x[0].v.e[0])>;
  constexpr int N = U * V;
  In b[N];
  int p[N];
#pragma unroll
  for (int j = 0; j < N; ++j) {
    b[j] = x[j / V].v.e[j % V];
    p[j] = j;
  }
#pragma unroll
  for (int s = 1; s < N; s *= 2)
#pragma unroll
    for (int j = 0; j + s < N; j += 2 * s) {
      const bool take = OpT::better(b[j + s], b[j]);
      b[j] = take ? b[j + s] : b[j];
      p[j] = take ? p[j + s] : p[j];
    }
  return ArgBest<In>{b[0], p[0]};
}

/// Folds U vectors of V elements held in index order into an argmin / argmax accumulator v
/// whose index precedes all of them: the best of them (arg_tree) replaces v when it is strictly
/// better. index_of(k) is the index of vector k's first element. The same result as folding the
/// items one by one with the full comparison (ArgOp::operator()), for a fraction of the
/// instructions: what a warm L2 and CUB's single-tile size are limited by (docs/performance.md
/// 3.26). v's value must not be a constant the compiler sees: against +inf, ptxas turns the
/// compare and select into FMNMX.NAN, which returns the canonical NaN instead of the element's
/// (hence fold_single_tile starts from the tree's best).
template <class T, class OpT, int U, int V, class Raw, class IndexOf>
__device__ __forceinline__ T fold_arg_vectors(T v, const Raw (&x)[U], IndexOf index_of) {
  const auto best = arg_tree<OpT, U, V>(x);
  if (OpT::better(best.value, v.value))
    v = T{best.value,
          static_cast<std::int64_t>(index_of(best.pos / V) + std::uint64_t(best.pos % V))};
  return v;
}

/// The accumulator a thread starts an argmin / argmax from when its items come in index order
/// (fold_arg_vectors): the worst value at the index of its first item, so that an input of only
/// the worst value gives the first one; the identity when the thread has no item.
template <class T, class OpT>
__device__ __forceinline__ T arg_start(bool has_items, std::uint64_t first_index) {
  return has_items ? T{OpT::worst(), static_cast<std::int64_t>(first_index)} : OpT::identity();
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
