#pragma once
// Warp level: reductions inside one warp.

#include "kernels/thread/ops.cuh"

namespace tunedreduce::kernels {

/// All 32 lanes take part; the result is valid in lane 0 (shuffle tree, fixed order).
template <class T, class OpT>
__device__ __forceinline__ T warp_reduce_shuffle(T v) {
  OpT op;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
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
