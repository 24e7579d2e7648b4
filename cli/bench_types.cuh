#pragma once
// What the device sides of `tunedreduce bench` (bench_gpu.cu, bench_segmented_gpu.cu) share: the
// element type of a DType as a C++ type, and the sums into a wider type that CUB and Thrust are
// given for wide_sum and for the half types.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "tunedreduce/types.hpp"

namespace tunedreduce::cli::bench {

/// f(T{}) for the 4- and 8-byte element types. The half types are handled before (they take
/// wide_sum and exact_sum alone, through with_half): they never reach the call, which gives them
/// f(double{}) so that every branch has one return type.
template <class F>
auto with_type(DType d, F&& f) {
  switch (d) {
    case DType::i32:
      return f(std::int32_t{});
    case DType::u32:
      return f(std::uint32_t{});
    case DType::i64:
      return f(std::int64_t{});
    case DType::u64:
      return f(std::uint64_t{});
    case DType::f32:
      return f(float{});
    case DType::f64:
    case DType::f16:
    case DType::bf16:
      break;
  }
  return f(double{});
}

/// f(H{}) for a half type: __half or __nv_bfloat16.
template <class F>
auto with_half(DType d, F&& f) {
  if (d == DType::f16) return f(__half{});
  return f(__nv_bfloat16{});
}

/// a + b in the accumulator's type W: float for the half types (an element passed in converts to
/// float, and CUB takes the accumulator from op(init, x)), wide_sum's 64-bit types.
template <class W>
struct WidePlus {
  __host__ __device__ W operator()(W a, W b) const { return a + b; }
};

/// absmax as a CUB or Thrust user writes it: a transform to |x| (AbsOf) and the larger of two
/// (MaxOf), both in the element type T (float, double, __half or __nv_bfloat16), from +0.
template <class T>
struct AbsOf {
  __device__ T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) return fabsf(x);
    else if constexpr (std::is_same_v<T, double>) return fabs(x);
    else return __habs(x);
  }
};
template <class T>
struct MaxOf {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float>) return fmaxf(a, b);
    else if constexpr (std::is_same_v<T, double>) return fmax(a, b);
    else return __hmax(a, b);
  }
};

/// f(T{}) for absmax's element types: float, double, __half, __nv_bfloat16 (op_applies refuses the
/// others before the call, which gives them f(float{})).
template <class F>
auto with_float(DType d, F&& f) {
  switch (d) {
    case DType::f64:
      return f(double{});
    case DType::f16:
      return f(__half{});
    case DType::bf16:
      return f(__nv_bfloat16{});
    default:
      return f(float{});
  }
}

/// wide_sum's result (and accumulator) type for elements of T: int64_t, uint64_t, double.
template <class T>
using wide_t =
    std::conditional_t<std::is_floating_point_v<T>, double,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

}  // namespace tunedreduce::cli::bench
