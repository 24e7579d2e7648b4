#pragma once
// Block level: reductions across one thread block.

#include "kernels/warp/warp_reduce.cuh"

namespace tunedreduce::kernels {

/// Every thread of a Block-thread block calls this; the result is valid in thread 0.
/// Warp shuffles, then one warp over the per-warp results. Safe to call repeatedly unless Once
/// (a block that calls it once, as the last thing it does, needs no barrier after it).
template <class T, class OpT, int Block, bool Once = false>
__device__ __forceinline__ T block_reduce_shuffle(T v) {
  static_assert(Block % 32 == 0 && Block <= 1024);
  constexpr int warps = Block / 32;
  __shared__ T warp_results[warps];
  const unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  v = warp_reduce_shuffle<T, OpT>(v);
  if constexpr (warps == 1) return v;
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_results[lane] : OpT::identity();
    v = warp_reduce_shuffle<T, OpT>(v);
  }
  if constexpr (!Once) __syncthreads();  // warp_results may be written again by the next call
  return v;
}

/// The seeds' interleaved in-block loop over buf[0..Block) (stride halving). If StopAtWarp, the
/// loop stops when 64 values remain and the last warp finishes them (unrolled). Every thread calls
/// it; the result is valid in thread 0 (and in buf[0]). Ends with a barrier.
template <class T, class OpT, int Block, bool StopAtWarp, bool CompleteUnroll>
__device__ __forceinline__ T block_reduce_in_memory(T* buf) {
  OpT op;
  const unsigned tid = threadIdx.x;
  if constexpr (CompleteUnroll) {
    // Written out with the block size known at compile time: dead branches vanish.
    if (Block >= 1024 && tid < 512) buf[tid] = op(buf[tid], buf[tid + 512]);
    if constexpr (Block >= 1024) __syncthreads();
    if (Block >= 512 && tid < 256) buf[tid] = op(buf[tid], buf[tid + 256]);
    if constexpr (Block >= 512) __syncthreads();
    if (Block >= 256 && tid < 128) buf[tid] = op(buf[tid], buf[tid + 128]);
    if constexpr (Block >= 256) __syncthreads();
    if (Block >= 128 && tid < 64) buf[tid] = op(buf[tid], buf[tid + 64]);
    if constexpr (Block >= 128) __syncthreads();
  } else {
    constexpr unsigned stop = StopAtWarp ? 32u : 0u;
    for (unsigned s = Block / 2; s > stop; s >>= 1) {
      if (tid < s) buf[tid] = op(buf[tid], buf[tid + s]);
      __syncthreads();
    }
  }
  T v{};
  if constexpr (StopAtWarp || CompleteUnroll) {
    if (tid < 32) v = warp_reduce_unrolled<T, OpT>(buf, tid);
  } else {
    if (tid == 0) v = buf[0];
  }
  __syncthreads();  // buf may be overwritten by the caller's next step
  return v;
}

}  // namespace tunedreduce::kernels
