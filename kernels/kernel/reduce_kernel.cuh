#pragma once
// Kernel level: the reduction kernel of every entry, and the finishing pass.

#include <cstdint>

#include "kernels/kernel/families.cuh"

namespace tunedreduce::kernels {

template <class T>
struct KernelArgs {
  const T* in;
  std::uint64_t n;
  std::uint64_t nchunks;
  T* ws_blocks;        // global-memory families: Block elements per block
  T* partials;         // one per block
  unsigned* counter;   // single_pass: blocks finished; zero on entry, left zero on exit
  T* out;
};

/// Reduces partials[0..count) in a fixed order (thread tid folds tid, tid+Block, ...; then a
/// fixed shuffle tree): the result does not depend on which block runs it, or when.
template <class T, class OpT, int Block>
__device__ __forceinline__ T reduce_partials(const T* partials, std::uint64_t count) {
  OpT op;
  T v = OpT::identity();
  for (std::uint64_t i = threadIdx.x; i < count; i += Block) v = op(v, __ldcg(partials + i));
  return block_reduce_shuffle<T, OpT, Block>(v);
}

// Kernels take the parameters one by one: nvcc's host stubs cannot spell a class-type template
// argument of a __global__ function.
template <Family F, int Block, int Unroll, SmemMode M, Finish Fin, DType D, Op O>
__global__ void __launch_bounds__(Block) reduce_kernel(KernelArgs<dtype_t<D>> a) {
  constexpr KernelParams P{F, Block, Unroll, M, Fin, D, O};
  using T = dtype_t<P.dtype>;
  using OpT = op_t<P.op, T>;
  const T r = block_result<P>(a.in, a.n, a.nchunks, a.ws_blocks);
  const unsigned tid = threadIdx.x;
  if (gridDim.x == 1) {  // nothing to finish
    if (tid == 0) *a.out = r;
    return;
  }
  if (tid == 0) a.partials[blockIdx.x] = r;
  if constexpr (P.finish == Finish::single_pass) {
    __shared__ bool is_last;
    if (tid == 0) {
      __threadfence();  // publish the partial before taking a ticket
      const unsigned ticket = atomicAdd(a.counter, 1u);
      is_last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    const T v = reduce_partials<T, OpT, P.block>(a.partials, gridDim.x);
    if (tid == 0) {
      *a.out = v;
      *a.counter = 0;  // ready for the next launch on this workspace
    }
  }
}

template <KernelParams P>
inline constexpr auto reduce_kernel_v =
    reduce_kernel<P.family, P.block, P.unroll, P.smem, P.finish, P.dtype, P.op>;

/// two_pass: the second kernel, one block.
template <class T, class OpT, int Block>
__global__ void __launch_bounds__(Block) finish_kernel(const T* partials, std::uint64_t count,
                                                       T* out) {
  const T v = reduce_partials<T, OpT, Block>(partials, count);
  if (threadIdx.x == 0) *out = v;
}

}  // namespace tunedreduce::kernels
