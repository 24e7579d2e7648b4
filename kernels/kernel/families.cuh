#pragma once
// The block-level body of every family: what one block computes over its share of the input.
// Each returns the block's result, valid in thread 0.
//
// The global-memory families (the seeds' reduceNeighbored ... reduceCompleteUnroll) reduce in
// place in global memory. They never touch the caller's input: the first step of each reads the
// input and writes into the block's region of the workspace (ws, Block elements), and every later
// step works there, so the workspace holds "a copy" of exactly the values the in-place algorithm
// would have overwritten. A block handles chunks blockIdx.x, blockIdx.x + gridDim.x, ...; with the
// seeds' grid (one block per chunk) that is one chunk per block.

#include <cstdint>
#include <type_traits>

#include "kernels/block/block_reduce.cuh"
#include "kernels/registry.hpp"

namespace tunedreduce::kernels {

template <KernelParams P>
struct Kernel {
  /// The element type of the input, and the accumulator's (the result's): the same but for
  /// wide_sum, whose families (the 16-byte-load ones) widen each element as they fold it.
  using In = dtype_t<P.dtype>;
  using T = acc_t<P.dtype, P.op>;
  using OpT = op_t<P.op, T>;
  static constexpr int block = P.block;
  static constexpr int unroll = P.unroll;
  /// The families whose unroll counts 16-byte vectors.
  static constexpr bool vector_loads = P.family == Family::vectorized ||
                                       P.family == Family::tiled || P.family == Family::streaming ||
                                       P.family == Family::single_tile;
  /// Elements per 16-byte vector.
  static constexpr int vec = 16 / sizeof(In);
  /// Input elements one chunk (one block, one step of the grid loop) covers.
  static constexpr std::uint64_t chunk =
      std::uint64_t(P.block) * P.unroll * (vector_loads ? vec : 1);
};

namespace detail {

/// Folds `U` elements per thread of chunk [base, base + Block*U): thread tid takes
/// base + tid + k*Block. All loads are issued before the first use.
template <class T, class OpT, int Block, int U>
__device__ __forceinline__ T fold_chunk(const T* __restrict__ in, std::uint64_t n,
                                        std::uint64_t base) {
  OpT op;
  const unsigned tid = threadIdx.x;
  T x[U];
  if (base + std::uint64_t(Block) * U <= n) {
#pragma unroll
    for (int k = 0; k < U; ++k) x[k] = in[base + tid + std::uint64_t(k) * Block];
  } else {
#pragma unroll
    for (int k = 0; k < U; ++k)
      x[k] = load_or_identity<T, OpT>(in, n, base + tid + std::uint64_t(k) * Block);
  }
  T v = x[0];
#pragma unroll
  for (int k = 1; k < U; ++k) v = op(v, x[k]);
  return v;
}

// --- global-memory families: one chunk, in place in ws[0..Block) -------------------------------

template <class T, class OpT, int Block>
__device__ T neighbored_chunk(const T* __restrict__ in, std::uint64_t n, std::uint64_t base,
                              T* ws) {
  OpT op;
  const unsigned tid = threadIdx.x;
  // Stride 1, reading the input: even threads combine a pair (heavy divergence, as in the seed).
  if (tid % 2 == 0)
    ws[tid] = op(load_or_identity<T, OpT>(in, n, base + tid),
                 load_or_identity<T, OpT>(in, n, base + tid + 1));
  __syncthreads();
  for (unsigned stride = 2; stride < Block; stride *= 2) {
    if (tid % (2 * stride) == 0) ws[tid] = op(ws[tid], ws[tid + stride]);
    __syncthreads();
  }
  T v = ws[0];
  __syncthreads();
  return v;
}

template <class T, class OpT, int Block>
__device__ T neighbored_less_chunk(const T* __restrict__ in, std::uint64_t n, std::uint64_t base,
                                   T* ws) {
  OpT op;
  const unsigned tid = threadIdx.x;
  // Same pairs as neighbored, but thread tid handles pair 2*stride*tid: active threads are
  // contiguous.
  if (2 * tid < Block)
    ws[2 * tid] = op(load_or_identity<T, OpT>(in, n, base + 2 * tid),
                     load_or_identity<T, OpT>(in, n, base + 2 * tid + 1));
  __syncthreads();
  for (unsigned stride = 2; stride < Block; stride *= 2) {
    unsigned index = 2 * stride * tid;
    if (index < Block) ws[index] = op(ws[index], ws[index + stride]);
    __syncthreads();
  }
  T v = ws[0];
  __syncthreads();
  return v;
}

template <class T, class OpT, int Block>
__device__ T interleaved_chunk(const T* __restrict__ in, std::uint64_t n, std::uint64_t base,
                               T* ws) {
  OpT op;
  const unsigned tid = threadIdx.x;
  constexpr unsigned half = Block / 2;
  if (tid < half)
    ws[tid] = op(load_or_identity<T, OpT>(in, n, base + tid),
                 load_or_identity<T, OpT>(in, n, base + tid + half));
  __syncthreads();
  for (unsigned stride = half / 2; stride > 0; stride >>= 1) {
    if (tid < stride) ws[tid] = op(ws[tid], ws[tid + stride]);
    __syncthreads();
  }
  T v = ws[0];
  __syncthreads();
  return v;
}

/// unroll / unroll_warps / complete_unroll: fold U data blocks into ws[tid], then reduce in place.
template <class T, class OpT, int Block, int U, bool StopAtWarp, bool CompleteUnroll>
__device__ T unrolled_chunk(const T* __restrict__ in, std::uint64_t n, std::uint64_t base, T* ws) {
  ws[threadIdx.x] = fold_chunk<T, OpT, Block, U>(in, n, base);
  __syncthreads();
  return block_reduce_in_memory<T, OpT, Block, StopAtWarp, CompleteUnroll>(ws);
}

template <KernelParams P>
__device__ __forceinline__ dtype_t<P.dtype> global_memory_chunk(
    const dtype_t<P.dtype>* __restrict__ in, std::uint64_t n, std::uint64_t base,
    dtype_t<P.dtype>* ws) {
  using K = Kernel<P>;
  using T = typename K::T;
  using OpT = typename K::OpT;
  if constexpr (P.family == Family::neighbored)
    return neighbored_chunk<T, OpT, P.block>(in, n, base, ws);
  else if constexpr (P.family == Family::neighbored_less)
    return neighbored_less_chunk<T, OpT, P.block>(in, n, base, ws);
  else if constexpr (P.family == Family::interleaved)
    return interleaved_chunk<T, OpT, P.block>(in, n, base, ws);
  else if constexpr (P.family == Family::unroll)
    return unrolled_chunk<T, OpT, P.block, P.unroll, false, false>(in, n, base, ws);
  else if constexpr (P.family == Family::unroll_warps)
    return unrolled_chunk<T, OpT, P.block, P.unroll, true, false>(in, n, base, ws);
  else return unrolled_chunk<T, OpT, P.block, P.unroll, false, true>(in, n, base, ws);
}

// --- register families: fold every chunk of the block, then one block reduction ---------------

template <class T, class OpT, int Block, int U>
__device__ __forceinline__ T fold_grid(const T* __restrict__ in, std::uint64_t n,
                                       std::uint64_t nchunks) {
  OpT op;
  T v = OpT::identity();
  for (std::uint64_t c = blockIdx.x; c < nchunks; c += gridDim.x)
    v = op(v, fold_chunk<T, OpT, Block, U>(in, n, c * Block * U));
  return v;
}

/// How the 16-byte-load families see an input of In: `head` elements before the first 16-byte
/// boundary, then `nvec` whole 16-byte vectors from `vin`, then the tail. The head and the tail
/// (each fewer than 16 / sizeof(In) elements) are read one by one, so any alignment of `in` and
/// any n work.
template <class In>
struct VectorView {
  static constexpr int V = 16 / sizeof(In);
  struct alignas(16) Vec {
    In e[V];
  };
  union Raw {
    uint4 u;
    Vec v;
  };
  std::uint64_t head, nvec;
  const uint4* vin;

  __device__ __forceinline__ VectorView(const In* in, std::uint64_t n) {
    const std::uint64_t addr = reinterpret_cast<std::uintptr_t>(in);
    head = (addr % 16) ? (16 - addr % 16) / sizeof(In) : 0;
    if (head > n) head = n;
    nvec = (n - head) / V;
    vin = reinterpret_cast<const uint4*>(in + head);
  }

  /// Folds the head and the tail into v (of the accumulator's type T): global thread g takes
  /// head element g and tail element g.
  template <class T, class OpT, int Block>
  __device__ __forceinline__ T fold_ends(const In* in, std::uint64_t n, T v) const {
    OpT op;
    const std::uint64_t g = std::uint64_t(blockIdx.x) * Block + threadIdx.x;
    if (g < head) v = fold_element<T>(op, v, in[g], g);
    const std::uint64_t tail = head + nvec * V;
    if (tail + g < n) v = fold_element<T>(op, v, in[tail + g], tail + g);
    return v;
  }
};

/// The `vectorized` body: 16-byte loads of U vectors per thread per step over a grid-stride
/// loop; head and tail as in VectorView. Elements of In are folded into an accumulator of T
/// (fold_element: with their indices for argmin and argmax; vector j holds the elements from
/// head + j * V).
template <class In, class T, class OpT, int Block, int U>
__device__ __forceinline__ T fold_vectorized(const In* __restrict__ in, std::uint64_t n) {
  using View = VectorView<In>;
  using Raw = typename View::Raw;
  constexpr int V = View::V;
  OpT op;
  T v = OpT::identity();
  const View view(in, n);
  const std::uint64_t nvec = view.nvec;
  const uint4* vin = view.vin;
  const std::uint64_t stride = std::uint64_t(gridDim.x) * Block;
  std::uint64_t i = std::uint64_t(blockIdx.x) * Block + threadIdx.x;
  // argmin / argmax: a thread's vectors come in index order (fold_arg_vectors).
  if constexpr (is_arg_op_v<OpT>) v = arg_start<T, OpT>(i < nvec, view.head + i * V);
  for (; i + (U - 1) * stride < nvec; i += U * stride) {
    Raw x[U];
#pragma unroll
    for (int k = 0; k < U; ++k) x[k].u = __ldg(vin + i + k * stride);
    if constexpr (is_arg_op_v<OpT>) {
      v = fold_arg_vectors<T, OpT, U, V>(v, x, [&](int k) {
        return view.head + (i + std::uint64_t(k) * stride) * V;
      });
    } else {
#pragma unroll
      for (int k = 0; k < U; ++k)
#pragma unroll
        for (int e = 0; e < V; ++e)
          v = fold_element<T>(op, v, x[k].v.e[e], view.head + (i + k * stride) * V + e);
    }
  }
  for (; i < nvec; i += stride) {
    if constexpr (is_arg_op_v<OpT>) {
      Raw x[1];
      x[0].u = __ldg(vin + i);
      v = fold_arg_vectors<T, OpT, 1, V>(v, x, [&](int) { return view.head + i * V; });
    } else {
      Raw x;
      x.u = __ldg(vin + i);
#pragma unroll
      for (int e = 0; e < V; ++e) v = fold_element<T>(op, v, x.v.e[e], view.head + i * V + e);
    }
  }
  return view.template fold_ends<T, OpT, Block>(in, n, v);
}

/// One 16-byte load; NoL1 = ld.global.nc.L1::no_allocate (the line is not kept in L1, which
/// nothing here would reuse), else the read-only path (__ldg).
template <bool NoL1>
__device__ __forceinline__ uint4 load16(const uint4* p) {
  if constexpr (NoL1) {
    uint4 r;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
    return r;
  } else {
    return __ldg(p);
  }
}

/// The `tiled` / `streaming` body: the 16-byte vectors are cut into tiles of Block * U; block b
/// takes tiles b, b + grid, ... (with the default grid, exactly one), and each thread issues its
/// U loads (tid, tid + Block, ...) before folding any. Head and tail as in VectorView; elements
/// of In folded into an accumulator of T.
template <class In, class T, class OpT, int Block, int U, bool NoL1>
__device__ __forceinline__ T fold_tiled(const In* __restrict__ in, std::uint64_t n) {
  using View = VectorView<In>;
  using Raw = typename View::Raw;
  constexpr int V = View::V;
  constexpr std::uint64_t tile = std::uint64_t(Block) * U;
  OpT op;
  T v = OpT::identity();
  const View view(in, n);
  const std::uint64_t nvec = view.nvec;
  const uint4* vin = view.vin;
  const std::uint64_t tiles = (nvec + tile - 1) / tile;
  // argmin / argmax: a thread's vectors come in index order, the padding last (fold_arg_vectors;
  // the padding's worst value never replaces an item).
  if constexpr (is_arg_op_v<OpT>) {
    const std::uint64_t first = std::uint64_t(blockIdx.x) * tile + threadIdx.x;
    v = arg_start<T, OpT>(first < nvec, view.head + first * V);
  }
  for (std::uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::uint64_t base = t * tile + threadIdx.x;
    Raw x[U];
    if (base + (U - 1) * Block < nvec) {
#pragma unroll
      for (int k = 0; k < U; ++k) x[k].u = load16<NoL1>(vin + base + k * Block);
    } else {
#pragma unroll
      for (int k = 0; k < U; ++k) {
        if (base + k * Block < nvec) {
          x[k].u = load16<NoL1>(vin + base + k * Block);
        } else {
          // The identity in the element's type: exact for every operator (0, -0.0, ±inf and the
          // integer limits of the element type are the identities of its wider accumulator too).
          // For argmin / argmax the worst value: at an index past every element it can tie
          // with, it never beats one (padding_element).
#pragma unroll
          for (int e = 0; e < V; ++e) x[k].v.e[e] = padding_element<In, OpT>();
        }
      }
    }
    if constexpr (is_arg_op_v<OpT>) {
      v = fold_arg_vectors<T, OpT, U, V>(v, x, [&](int k) {
        return view.head + (base + std::uint64_t(k) * Block) * V;
      });
    } else {
#pragma unroll
      for (int k = 0; k < U; ++k)
#pragma unroll
        for (int e = 0; e < V; ++e)
          v = fold_element<T>(op, v, x[k].v.e[e], view.head + (base + k * Block) * V + e);
    }
  }
  return view.template fold_ends<T, OpT, Block>(in, n, v);
}

/// The `single_tile` body: one block over the whole input (n <= Block * U vectors; can_implement
/// refuses more). Every load is issued at once, predicated, with no loop and 32-bit indices: at
/// CUB's single-tile size the time is one DRAM round trip plus the instructions before it, so
/// fewer instructions are the whole gain (docs/performance-log.md, 2026-11-25). Head and tail as in
/// VectorView, one element per thread.
template <class In, class T, class OpT, int Block, int U>
__device__ __forceinline__ T fold_single_tile(const In* __restrict__ in, unsigned n) {
  using View = VectorView<In>;
  using Raw = typename View::Raw;
  constexpr int V = View::V;
  OpT op;
  const unsigned mis = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(in) % 16);
  unsigned head = mis ? (16 - mis) / sizeof(In) : 0;
  if (head > n) head = n;
  const unsigned nvec = (n - head) / V;
  const uint4* vin = reinterpret_cast<const uint4*>(in + head);
  Raw x[U];
#pragma unroll
  for (int k = 0; k < U; ++k) {
    const unsigned i = threadIdx.x + k * Block;
    if (i < nvec) {
      x[k].u = __ldg(vin + i);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) x[k].v.e[e] = padding_element<In, OpT>();
    }
  }
  const unsigned tail = head + nvec * V;
  if constexpr (is_arg_op_v<OpT>) {
    // The vectors in index order (fold_arg_vectors), then the head element (before them) and
    // the tail element (after them) with the full comparison.
    const In h = threadIdx.x < head ? in[threadIdx.x] : OpT::worst();
    const In t = tail + threadIdx.x < n ? in[tail + threadIdx.x] : OpT::worst();
    // The tree's best, not a fold into the worst value (see fold_arg_vectors); with only the
    // worst value and padding the tree keeps the first item, a real one (the padding comes last).
    const auto best = arg_tree<OpT, U, V>(x);
    const unsigned at = head + (threadIdx.x + (best.pos / V) * Block) * V + best.pos % V;
    T v = threadIdx.x < nvec ? T{best.value, static_cast<std::int64_t>(at)} : OpT::identity();
    if (threadIdx.x < head) v = op(T{h, static_cast<std::int64_t>(threadIdx.x)}, v);
    if (tail + threadIdx.x < n) v = op(v, T{t, static_cast<std::int64_t>(tail + threadIdx.x)});
    return v;
  }
  T v = threadIdx.x < head ? element_acc<T, OpT>(in[threadIdx.x], threadIdx.x) : OpT::identity();
  if (tail + threadIdx.x < n)
    v = fold_element<T>(op, v, in[tail + threadIdx.x], tail + threadIdx.x);
#pragma unroll
  for (int k = 0; k < U; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e)
      v = fold_element<T>(op, v, x[k].v.e[e], head + (threadIdx.x + k * Block) * V + e);
  return v;
}

/// The `smem` body: fold into a register, one shared-memory store per thread, complete unroll
/// in shared memory with the last warp unrolled.
template <KernelParams P>
__device__ __forceinline__ dtype_t<P.dtype> smem_block(const dtype_t<P.dtype>* __restrict__ in,
                                                       std::uint64_t n, std::uint64_t nchunks) {
  using T = dtype_t<P.dtype>;
  using OpT = op_t<P.op, T>;
  T* buf;
  if constexpr (P.smem == SmemMode::static_) {
    __shared__ T static_buf[P.block];
    buf = static_buf;
  } else {
    extern __shared__ __align__(16) unsigned char tr_dynamic_smem[];
    buf = reinterpret_cast<T*>(tr_dynamic_smem);
  }
  buf[threadIdx.x] = fold_grid<T, OpT, P.block, P.unroll>(in, n, nchunks);
  __syncthreads();
  return block_reduce_in_memory<T, OpT, P.block, false, true>(buf);
}

}  // namespace detail

/// The whole block's result over its share of the input, valid in thread 0.
template <KernelParams P>
__device__ __forceinline__ typename Kernel<P>::T block_result(
    const typename Kernel<P>::In* __restrict__ in, std::uint64_t n, std::uint64_t nchunks,
    typename Kernel<P>::T* ws_blocks) {
  using K = Kernel<P>;
  using In = typename K::In;
  using T = typename K::T;
  using OpT = typename K::OpT;
  // Only the 16-byte-load families widen the elements they fold (space.hpp: wide_sum).
  static_assert(std::is_same_v<In, T> || K::vector_loads);
  if constexpr (is_global_memory_family(P.family)) {
    OpT op;
    T* ws = ws_blocks + std::uint64_t(blockIdx.x) * P.block;
    T acc = OpT::identity();
    for (std::uint64_t c = blockIdx.x; c < nchunks; c += gridDim.x)
      acc = op(acc, detail::global_memory_chunk<P>(in, n, c * K::chunk, ws));
    return acc;
  } else if constexpr (P.family == Family::smem) {
    return detail::smem_block<P>(in, n, nchunks);
  } else if constexpr (P.family == Family::warp_shuffle) {
    T v = detail::fold_grid<T, OpT, P.block, P.unroll>(in, n, nchunks);
    return block_reduce_shuffle<T, OpT, P.block>(v);
  } else if constexpr (P.family == Family::vectorized) {
    T v = detail::fold_vectorized<In, T, OpT, P.block, P.unroll>(in, n);
    return block_reduce_shuffle<T, OpT, P.block>(v);
  } else if constexpr (P.family == Family::single_tile) {
    (void)nchunks;
    (void)ws_blocks;
    T v = detail::fold_single_tile<In, T, OpT, P.block, P.unroll>(in, static_cast<unsigned>(n));
    return block_reduce_shuffle<T, OpT, P.block, /*Once=*/true>(v);
  } else {
    static_assert(P.family == Family::tiled || P.family == Family::streaming);
    T v = detail::fold_tiled<In, T, OpT, P.block, P.unroll, P.family == Family::streaming>(in, n);
    return block_reduce_shuffle<T, OpT, P.block>(v);
  }
}

}  // namespace tunedreduce::kernels
