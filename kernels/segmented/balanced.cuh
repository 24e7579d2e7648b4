#pragma once
// The balanced family (kernels/segmented/segmented.hpp): variable segments whose lengths may
// spread over orders of magnitude (power-law lengths, one huge segment among many tiny ones).
// Every other family gives each segment its lanes, so one long segment keeps its few lanes busy
// long after the rest of the GPU is idle (H200, f32 sum of 2^24 elements, one segment of half of
// them and 2^17 of 64: 0.04x CUB with a group of 4 lanes a segment; docs/performance.md 3.34).
// This family gives every block the same number of elements instead, whatever the segments:
//
//   1. scan: the segments' lengths are scanned (a block per chunk of 2048 segments, then the
//      last block to finish scans the chunks' sums), which gives every segment's start in the
//      concatenation of all segments, the total W, and the tile length T = ceil(W / tiles);
//   2. first: the first segment that starts in each tile (a thread per segment writes the tiles
//      whose start falls in it; with one chunk the scan's block does it itself);
//   3. tiles: block b takes the elements [b T, (b + 1) T) of the concatenation: the piece of the
//      segment that continues into the tile, then the segments that start in it (a group of 4
//      lanes for a short one, a warp for a middling one, the whole block for a long one). A
//      segment wholly inside the tile is written to out; the first and last pieces of a segment
//      that crosses tiles are written to the workspace (head and tail partials);
//   4. join: a warp per tile in which a crossing segment ends folds its tail partial and the
//      head partials of the tiles after it in a fixed order and writes its result.
//
// Each launch is a programmatic dependent launch of the one before where the device has it
// (compute capability 9.0 up). Every partial is combined in a fixed order, so a launch gives the
// same bits on every run. Included by kernels/segmented/kernels.cuh.

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/block/block_reduce.cuh"
#include "kernels/kernel/reduce_kernel.cuh"
#include "kernels/segmented/balanced.hpp"
#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::kernels::segmented {

namespace balanced {

inline constexpr int batch = 512;      // segments a tile stages in shared memory at a time
inline constexpr int short_group = 4;  // lanes for a short piece

/// What every kernel of a launch reads from the workspace.
struct Work {
  std::uint64_t* header;  // [0] W, [1] T, [2] the scan's ticket (when no counter is given)
  std::uint64_t* local;   // segment s's start within its chunk
  std::uint64_t* chunks;  // chunk c's sum, then (after the scan) its start
  std::uint64_t* first;   // tiles + 1 entries: the first segment that starts at or after b T
  std::uint64_t S, tiles;

  /// Segment s's start in the concatenation (s == S: the total). After the scan.
  __device__ __forceinline__ std::uint64_t start(std::uint64_t s) const {
    return s >= S ? __ldcg(header) : __ldcg(local + s) + __ldcg(chunks + s / chunk);
  }
};

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

/// Exclusive scan of one value a thread over the block (every thread calls it); \p total gets
/// the block's sum.
__device__ __forceinline__ std::uint64_t block_exclusive_scan(std::uint64_t v,
                                                              std::uint64_t& total) {
  __shared__ std::uint64_t warp_sums[block / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  std::uint64_t incl = v;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const std::uint64_t o = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= unsigned(d)) incl += o;
  }
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  std::uint64_t before = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < block / 32; ++w) {
    if (unsigned(w) < warp) before += warp_sums[w];
    total += warp_sums[w];
  }
  __syncthreads();  // warp_sums may be written again by the next call
  return before + incl - v;
}

/// Tiles b in [1, tiles) with prev < b T <= here take segment s as their first (a segment of
/// any length may be the first of many tiles); s == 0 has no prev.
__device__ __forceinline__ void mark_tiles(std::uint64_t* first, std::uint64_t s, bool has_prev,
                                           std::uint64_t prev, std::uint64_t here, std::uint64_t T,
                                           std::uint64_t tiles, bool last) {
  const std::uint64_t lo = has_prev ? prev / T + 1 : 1;
  const std::uint64_t hi = last ? tiles - 1 : (here / T < tiles - 1 ? here / T : tiles - 1);
  for (std::uint64_t b = lo; b <= hi; ++b) first[b] = s;
}

/// 1. The lengths' scan; the last block to finish scans the chunks' sums and sets W and T.
/// With one chunk that block also writes the tiles' first segments (step 2).
template <class Bounds>
__global__ void __launch_bounds__(block)
    seg_balanced_scan_kernel(Bounds bounds, Work w, unsigned* counter) {
  __shared__ std::uint64_t starts[chunk + 1];
  __shared__ bool is_last;
  const std::uint64_t c = blockIdx.x;
  const std::uint64_t s0 = c * chunk + std::uint64_t(threadIdx.x) * per_thread;
  std::uint64_t len[per_thread];
  std::uint64_t sum = 0;
#pragma unroll
  for (int k = 0; k < per_thread; ++k) {
    std::uint64_t lo = 0, hi = 0;
    if (s0 + k < w.S) bounds.get(s0 + k, lo, hi);
    len[k] = hi - lo;
    sum += len[k];
  }
  pdl_launch_dependents();
  std::uint64_t total;
  std::uint64_t at = block_exclusive_scan(sum, total);
#pragma unroll
  for (int k = 0; k < per_thread; ++k) {
    if (s0 + k < w.S) w.local[s0 + k] = at;
    starts[threadIdx.x * per_thread + k] = at;
    at += len[k];
  }
  const std::uint64_t nch = gridDim.x;
  if (nch > 1) {
    if (threadIdx.x == 0) {
      w.chunks[c] = total;
      is_last = take_ticket_acq_rel(counter) == nch - 1;
    }
    __syncthreads();
    if (!is_last) return;
    // Every chunk's sum is visible (the tickets are acq_rel): their exclusive scan, in place.
    std::uint64_t carry = 0;
    for (std::uint64_t base = 0; base < nch; base += chunk) {
      std::uint64_t v[per_thread];
      std::uint64_t part = 0;
#pragma unroll
      for (int k = 0; k < per_thread; ++k) {
        const std::uint64_t i = base + std::uint64_t(threadIdx.x) * per_thread + k;
        v[k] = i < nch ? __ldcg(w.chunks + i) : 0;
        part += v[k];
      }
      std::uint64_t step_total;
      std::uint64_t a = carry + block_exclusive_scan(part, step_total);
#pragma unroll
      for (int k = 0; k < per_thread; ++k) {
        const std::uint64_t i = base + std::uint64_t(threadIdx.x) * per_thread + k;
        if (i < nch) w.chunks[i] = a;
        a += v[k];
      }
      carry += step_total;
    }
    if (threadIdx.x == 0) {
      const std::uint64_t T = (carry + w.tiles - 1) / w.tiles;
      w.header[0] = carry;
      w.header[1] = T > 0 ? T : 1;
      w.first[0] = 0;
      w.first[w.tiles] = w.S;
      *counter = 0;  // ready for the next launch
    }
    return;
  }
  // One chunk: this block knows every start.
  std::uint64_t T = (total + w.tiles - 1) / w.tiles;
  T = T > 0 ? T : 1;
  if (threadIdx.x == 0) {
    w.chunks[0] = 0;
    w.header[0] = total;
    w.header[1] = T;
    w.first[0] = 0;
    w.first[w.tiles] = w.S;
  }
  if (threadIdx.x == block - 1) starts[chunk] = total;
  __syncthreads();
  for (std::uint64_t s = threadIdx.x; s <= w.S; s += block)
    mark_tiles(w.first, s, s > 0, s > 0 ? starts[s - 1] : 0, s < w.S ? starts[s] : total, T,
               w.tiles, s == w.S);
}

/// 2. The tiles' first segments, a thread per segment (and one for the end), where there is
/// more than one chunk. (A template, as every kernel of the header: each instance unit has its
/// copy, and a plain __global__ function would be defined in all of them.)
template <int Block = block>
__global__ void __launch_bounds__(Block) seg_balanced_first_kernel(Work w) {
  pdl_wait();
  pdl_launch_dependents();
  const std::uint64_t s = blockIdx.x * std::uint64_t(block) + threadIdx.x;
  if (s > w.S) return;
  const std::uint64_t T = __ldcg(w.header + 1);
  mark_tiles(w.first, s, s > 0, s > 0 ? w.start(s - 1) : 0, w.start(s), T, w.tiles, s == w.S);
}

/// A piece of a segment in a tile: its input range, the index of its first element within the
/// segment, and where its result goes (a segment index, or head / tail: below).
struct Piece {
  std::uint64_t lo, hi, idx0, dest;
};
inline constexpr std::uint64_t to_head = ~std::uint64_t{0};
inline constexpr std::uint64_t to_tail = ~std::uint64_t{0} - 1;

template <class T, class OpT>
__device__ __forceinline__ void put(T* out, T* head, T* tail, std::uint64_t b, const Piece& p,
                                    const T& acc) {
  if (p.dest == to_head) store_result(head + b, acc);
  else if (p.dest == to_tail) store_result(tail + b, acc);
  else store_result(out + p.dest, p.hi > p.lo ? acc : OpT::empty_result());
}

/// 3. Block b folds the elements [b T, (b + 1) T) of the concatenation.
template <class C>
__global__ void __launch_bounds__(block, 4)
    seg_balanced_tile_kernel(const typename C::In* __restrict__ in, typename C::T* __restrict__ out,
                             typename C::Bounds bounds, Work w, typename C::T* head,
                             typename C::T* tail) {
  constexpr SegParams P = C::params;
  using T = typename C::T;
  using OpT = typename C::OpT;
  using In = typename C::In;
  constexpr int V = P.vec;
  // A piece of fewer vectors than this is short (4 lanes), of fewer than long_vectors a warp's,
  // else the block's (a vector or more a thread).
  constexpr std::uint64_t short_vectors = 4 * short_group, long_vectors = block;
  __shared__ Piece pieces[batch + 1];
  __shared__ unsigned short mid[batch + 1], big[batch + 1];
  __shared__ unsigned n_mid, n_big;
  pdl_wait();
  pdl_launch_dependents();
  const std::uint64_t b = blockIdx.x, W = __ldcg(w.header), TT = __ldcg(w.header + 1);
  const std::uint64_t tlo = b * TT < W ? b * TT : W;
  const std::uint64_t thi = b + 1 == w.tiles ? W : (tlo + TT < W ? tlo + TT : W);
  const std::uint64_t f0 = __ldcg(w.first + b), f1 = __ldcg(w.first + b + 1);
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Slot 0 of the first batch is the piece of the segment that continues into the tile (if any);
  // then the segments that start in it, batch by batch.
  for (std::uint64_t s0 = f0; s0 < f1 || s0 == f0; s0 += batch) {
    const std::uint64_t n = (f1 - s0 < batch ? f1 - s0 : batch);
    const bool with_cont = s0 == f0;
    if (threadIdx.x == 0) n_mid = n_big = 0;
    for (std::uint64_t j = threadIdx.x; j < n + (with_cont ? 1 : 0); j += block) {
      Piece p{0, 0, 0, 0};
      bool real = true;
      std::uint64_t s;
      if (with_cont && j == 0) {
        s = f0 - 1;  // the segment before the tile's first: does it reach into the tile?
        real = f0 > 0 && tlo < thi && w.start(f0) > tlo;
      } else {
        s = s0 + j - (with_cont ? 1 : 0);
      }
      if (real) {
        const std::uint64_t a = w.start(s), e = w.start(s + 1);
        std::uint64_t lo, hi;
        bounds.get(s, lo, hi);
        const std::uint64_t clo = a > tlo ? a : tlo, chi = e < thi ? e : thi;
        p.idx0 = clo - a;
        p.lo = lo + p.idx0;
        p.hi = p.lo + (chi > clo ? chi - clo : 0);
        p.dest = a < tlo ? to_head : e > thi ? to_tail : s;
      } else {
        p.dest = to_head;  // nothing: lo == hi, and below no result is written for it
      }
      pieces[j] = p;
    }
    __syncthreads();
    const std::uint64_t m = n + (with_cont ? 1 : 0);
    // Short pieces: 8 at a time a warp, 4 lanes each; the others are listed for below.
    constexpr std::uint64_t per_warp = 32 / short_group;
    for (std::uint64_t j0 = std::uint64_t(warp) * per_warp; j0 < m;
         j0 += std::uint64_t(block / 32) * per_warp) {
      const std::uint64_t j = j0 + lane / short_group;
      bool mine = false;
      Piece p{0, 0, 0, 0};
      if (j < m) {
        p = pieces[j];
        const bool skip = with_cont && j == 0 && !(f0 > 0 && p.hi > p.lo);
        const std::uint64_t vecs = (p.hi - p.lo) / V;
        if (!skip && vecs < short_vectors) {
          mine = true;
        } else if (!skip && lane % short_group == 0) {
          if (vecs < long_vectors) mid[atomicAdd(&n_mid, 1u)] = static_cast<unsigned short>(j);
          else big[atomicAdd(&n_big, 1u)] = static_cast<unsigned short>(j);
        }
      }
      T acc = OpT::identity();
      if (mine)
        acc = fold_range<T, OpT, In, short_group, V, 2>(in, p.lo, p.hi, lane % short_group, p.idx0);
      acc = group_reduce<T, OpT, short_group>(acc);
      if (mine && lane % short_group == 0) put<T, OpT>(out, head, tail, b, p, acc);
    }
    __syncthreads();
    // Middling pieces: a warp each.
    for (unsigned k = warp; k < n_mid; k += block / 32) {
      const Piece p = pieces[mid[k]];
      T acc = fold_range<T, OpT, In, 32, V, 2>(in, p.lo, p.hi, lane, p.idx0);
      acc = group_reduce<T, OpT, 32>(acc);
      if (lane == 0) put<T, OpT>(out, head, tail, b, p, acc);
    }
    // Long pieces: the whole block each.
    for (unsigned k = 0; k < n_big; ++k) {
      const Piece p = pieces[big[k]];
      T acc = fold_range<T, OpT, In, block, V, 4>(in, p.lo, p.hi, threadIdx.x, p.idx0);
      acc = block_reduce_shuffle<T, OpT, block>(acc);
      if (threadIdx.x == 0) put<T, OpT>(out, head, tail, b, p, acc);
    }
    __syncthreads();  // pieces, mid and big are written again by the next batch
    if (n == 0) break;
  }
}

/// 4. A warp per tile b >= 1: if the segment before the tile's first reaches into it and ends
/// in it, its tail partial (in the tile where it starts) and the head partials of the tiles
/// after that up to b, folded lane-strided and then by a shuffle tree (a fixed order).
template <class C>
__global__ void __launch_bounds__(block)
    seg_balanced_join_kernel(typename C::T* __restrict__ out, Work w, const typename C::T* head,
                             const typename C::T* tail) {
  using T = typename C::T;
  using OpT = typename C::OpT;
  pdl_wait();
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t b = 1 + (blockIdx.x * std::uint64_t(block) + threadIdx.x) / 32;
  if (b >= w.tiles) return;
  const std::uint64_t W = __ldcg(w.header), TT = __ldcg(w.header + 1);
  const std::uint64_t f = __ldcg(w.first + b);
  const std::uint64_t tlo = b * TT;
  if (f == 0 || tlo >= W) return;
  const std::uint64_t e = w.start(f);  // the end of segment f - 1
  if (e <= tlo || (e > tlo + TT && b + 1 < w.tiles)) return;
  const std::uint64_t a = w.start(f - 1) / TT;  // the tile where segment f - 1 starts
  const OpT op;
  T acc = OpT::identity();
  for (std::uint64_t k = a + lane; k <= b; k += 32)
    acc = op(acc, k == a ? load_partial(tail + a) : load_partial(head + k));
  acc = group_reduce<T, OpT, 32>(acc);
  if (lane == 0) store_result(out + (f - 1), acc);
}

}  // namespace balanced

}  // namespace tunedreduce::kernels::segmented
