#pragma once
// Warp level: reductions inside one warp.

#include "kernels/thread/ops.cuh"

namespace tunedreduce::kernels {

/// __shfl_down_sync of a value, or of both members of an IndexedValue (argmin / argmax).
template <class T>
__device__ __forceinline__ T shfl_down(T v, int offset) {
  return __shfl_down_sync(0xffffffffu, v, offset);
}
template <class T>
__device__ __forceinline__ IndexedValue<T> shfl_down(IndexedValue<T> v, int offset) {
  return {__shfl_down_sync(0xffffffffu, v.value, offset),
          __shfl_down_sync(0xffffffffu, v.index, offset)};
}

/// All 32 lanes take part; the result is valid in lane 0 (shuffle tree, fixed order).
template <class T, class OpT>
__device__ __forceinline__ T warp_reduce_shuffle(T v) {
  OpT op;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, shfl_down(v, offset));
  return v;
}

/// The seeds' hand-unrolled last warp over memory (shared or global), made correct for
/// independent thread scheduling: each step reads, then __syncwarp, then writes, then
/// __syncwarp, so no lane reads a slot another lane is writing. Called by the 32 threads of
/// warp 0 with buf[0..64) valid; the result lands in buf[0] and is returned in lane 0.
template <class T, class OpT>
__device__ __forceinline__ T warp_reduce_unrolled(volatile T* buf, unsigned tid) {
  OpT op;
  T v = buf[tid];
#pragma unroll
  for (int offset = 32; offset > 0; offset >>= 1) {
    v = op(v, buf[tid + offset]);
    __syncwarp();
    buf[tid] = v;
    __syncwarp();
  }
  return v;
}

}  // namespace tunedreduce::kernels
