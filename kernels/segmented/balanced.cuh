#pragma once
// The balanced family (kernels/segmented/segmented.hpp): variable segments whose lengths may
// spread over orders of magnitude (power-law lengths, one huge segment among many tiny ones).
// Every other family gives each segment its lanes, so one long segment keeps its few lanes busy
// long after the rest of the GPU is idle (H200, f32 sum of 2^24 elements, one segment of half of
// them and 2^17 of 64: 0.04x CUB with a group of 4 lanes a segment; docs/performance.md 3.34).
// This family splits the segments by length (balanced.hpp):
//
//   0. short: a grid over every segment, a warp per 8: 4 lanes fold a segment of up to 32
//      vectors, the whole warp one of up to 256, one after the other; longer ones are skipped;
//   1. scan: the long segments' count and lengths are scanned (a block per chunk of 2048
//      segments, then the last block to finish scans the chunks' sums), which gives the total W
//      of the long segments' lengths and the tile length T = ceil(W / tiles);
//   2. place: a block per chunk again: every long segment's rank among the long ones, its start
//      in their concatenation, and the tiles whose first element it holds (with one chunk the
//      scan's block does it);
//   3. tiles: block b folds the elements [b T, (b + 1) T) of that concatenation, every warp an
//      equal run of them whatever the pieces of long segments in it (merge-path style: a piece
//      cut by the runs' ends is joined from the warps' partials in their order). A segment
//      wholly inside the tile is written to out; the first and last pieces of one that crosses
//      tiles to the workspace (head and tail partials);
//   4. join: a warp per tile in which a crossing segment ends folds its tail partial and the
//      head partials of the tiles after it in a fixed order and writes its result.
//
// 1-4 are programmatic dependent launches of the launch before where the device has it
// (compute capability 9.0 up); the scan waits for the short grid's end before it ends, so that
// the last launch's end is the end of all. Every partial is combined in a fixed order, so a
// launch gives the same bits on every run. Included by kernels/segmented/kernels.cuh.

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kernel/reduce_kernel.cuh"
#include "kernels/segmented/balanced.hpp"
#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::kernels::segmented {

namespace balanced {

inline constexpr int short_group = 4;  // lanes for a short segment
/// CSR tiles: a piece of up to medium_vectors 16-byte vectors is folded by medium_group lanes
/// (two at once a warp); longer ones by fold_batch's runs.
inline constexpr int medium_group = 16;
inline constexpr std::uint64_t medium_vectors = 128;

/// What the kernels of a launch share through the workspace.
struct Work {
  std::uint64_t* header;          // [0] W, [1] T, [2] long segments, [3] the scan's ticket
  std::uint64_t* chunk_count;     // chunk c's long segments, then (after the scan) the ones before
  std::uint64_t* chunk_sum;       // chunk c's long segments' lengths, then their start
  std::uint64_t* list;            // long segment j's index
  std::uint64_t* start;           // long segment j's start in their concatenation; [count] = W
  std::uint64_t* tile_first;      // the long segment holding tile b's first element (count: none)
  std::uint64_t S, tiles, limit;  // limit: the longest segment that is not long (elements)
};

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

/// 0. A warp per 8 segments: the short ones 4 lanes each, then the middling ones (up to
/// w.limit elements) the whole warp each; the long ones are the tiles'.
template <class C>
__global__ void __launch_bounds__(block)
    seg_balanced_short_kernel(const typename C::In* __restrict__ in,
                              typename C::T* __restrict__ out, typename C::Bounds bounds,
                              std::uint64_t S, std::uint64_t limit) {
  constexpr SegParams P = C::params;
  using T = typename C::T;
  using OpT = typename C::OpT;
  using In = typename C::In;
  constexpr int V = P.vec;
  pdl_launch_dependents();  // the scan reads nothing this grid writes
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t s = (blockIdx.x * std::uint64_t(block) + threadIdx.x) / short_group;
  std::uint64_t lo = 0, hi = 0;
  if (s < S) bounds.get(s, lo, hi);
  const std::uint64_t len = hi - lo;
  const bool short_one = s < S && len <= short_vectors * V;
  T acc = OpT::identity();
  if (short_one)
    acc = fold_range<T, OpT, In, short_group, V, 4, true>(in, lo, hi, lane % short_group, 0);
  acc = group_reduce<T, OpT, short_group>(acc);
  if (short_one && lane % short_group == 0)
    store_result(out + s, len > 0 ? acc : OpT::empty_result());
  // The middling segments of the warp's 8, the whole warp each, in the order of their groups.
  unsigned mid =
      __ballot_sync(0xffffffffu, s < S && !short_one && len <= limit && lane % short_group == 0);
  while (mid) {
    const int leader = __ffs(mid) - 1;
    mid &= mid - 1;
    const std::uint64_t mlo = __shfl_sync(0xffffffffu, lo, leader);
    const std::uint64_t mhi = __shfl_sync(0xffffffffu, hi, leader);
    const std::uint64_t ms = __shfl_sync(0xffffffffu, s, leader);
    T m = fold_range<T, OpT, In, 32, V, 4, true>(in, mlo, mhi, lane, 0);
    m = group_reduce<T, OpT, 32>(m);
    if (lane == 0) store_result(out + ms, m);
  }
}

/// The long segments' count and total length among a thread's per_thread segments from s0.
template <class Bounds>
__device__ __forceinline__ void count_long(const Bounds& bounds, std::uint64_t S,
                                           std::uint64_t limit, std::uint64_t s0,
                                           std::uint64_t (&len)[per_thread], std::uint64_t& count,
                                           std::uint64_t& sum) {
  count = sum = 0;
#pragma unroll
  for (int k = 0; k < per_thread; ++k) {
    std::uint64_t lo = 0, hi = 0;
    if (s0 + k < S) bounds.get(s0 + k, lo, hi);
    len[k] = hi - lo > limit ? hi - lo : 0;
    count += len[k] ? 1 : 0;
    sum += len[k];
  }
}

/// Long segment j of [start, start + len) holds the first element of tiles b with
/// start <= b T < start + len.
__device__ __forceinline__ void place_long(const Work& w, std::uint64_t s, std::uint64_t j,
                                           std::uint64_t start, std::uint64_t len,
                                           std::uint64_t T) {
  w.list[j] = s;
  w.start[j] = start;
  const std::uint64_t first = (start + T - 1) / T, last = (start + len - 1) / T;
  for (std::uint64_t b = first; b <= last && b < w.tiles; ++b) w.tile_first[b] = j;
}

/// Places a thread's long segments (step 2) from their rank and start before it.
__device__ __forceinline__ void place_thread(const Work& w, std::uint64_t s0,
                                             const std::uint64_t (&len)[per_thread],
                                             std::uint64_t j, std::uint64_t at, std::uint64_t T) {
#pragma unroll
  for (int k = 0; k < per_thread; ++k) {
    if (!len[k]) continue;
    place_long(w, s0 + k, j++, at, len[k], T);
    at += len[k];
  }
}

/// 1. The long segments' scan; the last block to finish scans the chunks' sums, sets W, T and
/// the count, and marks the tiles past W. With one chunk that block also places the long
/// segments (step 2). Every block waits for the short grid's end before it ends.
template <class Bounds>
__global__ void __launch_bounds__(block)
    seg_balanced_scan_kernel(Bounds bounds, Work w, unsigned* counter) {
  __shared__ bool is_last;
  const std::uint64_t c = blockIdx.x;
  const std::uint64_t s0 = c * chunk + std::uint64_t(threadIdx.x) * per_thread;
  std::uint64_t len[per_thread], count, sum;
  count_long(bounds, w.S, w.limit, s0, len, count, sum);
  pdl_launch_dependents();
  std::uint64_t total_count, total_sum;
  const std::uint64_t j = block_exclusive_scan(count, total_count);
  const std::uint64_t at = block_exclusive_scan(sum, total_sum);
  const std::uint64_t nch = gridDim.x;
  std::uint64_t W = total_sum, n = total_count;
  if (nch > 1) {
    if (threadIdx.x == 0) {
      w.chunk_count[c] = total_count;
      w.chunk_sum[c] = total_sum;
      is_last = take_ticket_acq_rel(counter) == nch - 1;
    }
    __syncthreads();
    if (!is_last) {
      pdl_wait();
      return;
    }
    // Every chunk's sums are visible (the tickets are acq_rel): their exclusive scans, in place.
    std::uint64_t carry_count = 0, carry_sum = 0;
    for (std::uint64_t base = 0; base < nch; base += chunk) {
      std::uint64_t vc[per_thread], vs[per_thread], pc = 0, ps = 0;
#pragma unroll
      for (int k = 0; k < per_thread; ++k) {
        const std::uint64_t i = base + std::uint64_t(threadIdx.x) * per_thread + k;
        vc[k] = i < nch ? __ldcg(w.chunk_count + i) : 0;
        vs[k] = i < nch ? __ldcg(w.chunk_sum + i) : 0;
        pc += vc[k];
        ps += vs[k];
      }
      std::uint64_t step_count, step_sum;
      std::uint64_t ac = carry_count + block_exclusive_scan(pc, step_count);
      std::uint64_t as = carry_sum + block_exclusive_scan(ps, step_sum);
#pragma unroll
      for (int k = 0; k < per_thread; ++k) {
        const std::uint64_t i = base + std::uint64_t(threadIdx.x) * per_thread + k;
        if (i < nch) {
          w.chunk_count[i] = ac;
          w.chunk_sum[i] = as;
        }
        ac += vc[k];
        as += vs[k];
      }
      carry_count += step_count;
      carry_sum += step_sum;
    }
    W = carry_sum;
    n = carry_count;
  }
  const std::uint64_t T = W > w.tiles ? (W + w.tiles - 1) / w.tiles : 1;
  if (threadIdx.x == 0) {
    w.header[0] = W;
    w.header[1] = T;
    w.header[2] = n;
    w.start[n] = W;
    if (nch > 1) *counter = 0;  // ready for the next launch
  }
  // The tiles past the last long element hold none.
  for (std::uint64_t b = (W + T - 1) / T + threadIdx.x; b < w.tiles; b += block)
    w.tile_first[b] = n;
  if (nch == 1) place_thread(w, s0, len, j, at, T);
  pdl_wait();
}

/// 2. Where there is more than one chunk: every long segment's rank and start, and the tiles it
/// holds the first element of.
template <class Bounds>
__global__ void __launch_bounds__(block) seg_balanced_place_kernel(Bounds bounds, Work w) {
  const std::uint64_t c = blockIdx.x;
  const std::uint64_t s0 = c * chunk + std::uint64_t(threadIdx.x) * per_thread;
  std::uint64_t len[per_thread], count, sum;
  count_long(bounds, w.S, w.limit, s0, len, count, sum);
  pdl_wait();  // the chunks' starts and T
  pdl_launch_dependents();
  std::uint64_t total;
  const std::uint64_t j = __ldcg(w.chunk_count + c) + block_exclusive_scan(count, total);
  const std::uint64_t at = __ldcg(w.chunk_sum + c) + block_exclusive_scan(sum, total);
  place_thread(w, s0, len, j, at, __ldcg(w.header + 1));
}

/// A piece of a long segment in a tile: its input range, its start in the long segments'
/// concatenation, the index of its first element within the segment, and where its result goes
/// (a segment index, or head / tail: below).
struct Piece {
  std::uint64_t lo, hi, c, idx0, dest;
};
inline constexpr std::uint64_t to_head = ~std::uint64_t{0};
inline constexpr std::uint64_t to_tail = ~std::uint64_t{0} - 1;
inline constexpr int warps = block / 32;

/// Where piece \p p ends in the concatenation.
__device__ __forceinline__ std::uint64_t end_of(const Piece& p) { return p.c + (p.hi - p.lo); }

template <class T>
__device__ __forceinline__ void put(T* out, T* head, T* tail, std::uint64_t b, const Piece& p,
                                    const T& acc) {
  if (p.dest == to_head) store_result(head + b, acc);
  else if (p.dest == to_tail) store_result(tail + b, acc);
  else store_result(out + p.dest, acc);
}

/// The first of the m staged pieces that ends after concatenation position \p r (m if none).
__device__ __forceinline__ int first_piece_after(const Piece* pieces, int m, std::uint64_t r) {
  int lo = 0, hi = m;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (end_of(pieces[mid]) <= r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// The first of the m staged pieces that starts at or after concatenation position \p r (m if
/// none).
__device__ __forceinline__ int first_piece_from(const Piece* pieces, int m, std::uint64_t r) {
  int lo = 0, hi = m;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (pieces[mid].c < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// What the warps of a tile share while they fold a batch: a warp's partials of the pieces its
/// run cuts, [0] the one it starts inside (its first piece began in an earlier run), [1] the one
/// it ends inside (its last piece goes on in a later run); the piece's index in the batch, or -1.
template <class T>
struct Cuts {
  int piece[warps][2];
  T value[warps][2];
};

/// Folds the m staged pieces of a batch (consecutive in the concatenation, in its order; pieces
/// of no element are skipped: whoever staged them wrote their result). Every warp folds an equal
/// run of the batch's elements whatever the pieces' lengths: the pieces of at most short_vectors
/// vectors in it 4 lanes each (8 at once), the longer ones the whole warp each; a piece wholly in
/// the run goes to its destination, and the pieces cut by the runs' ends are joined by the warp
/// where they begin from the warps' partials in the warps' order. Every thread of the block
/// calls it; it ends with a barrier.
template <class C>
__device__ __forceinline__ void fold_batch(const typename C::In* __restrict__ in,
                                           typename C::T* __restrict__ out, typename C::T* head,
                                           typename C::T* tail, std::uint64_t b,
                                           const Piece* pieces, int m, Cuts<typename C::T>& cuts) {
  constexpr SegParams P = C::params;
  using T = typename C::T;
  using OpT = typename C::OpT;
  using In = typename C::In;
  constexpr int V = P.vec;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const OpT op;
  // The batch's pieces are consecutive in the concatenation: [first's start, last's end),
  // cut into a run a warp (whole vectors' worth where the run is long).
  const std::uint64_t c0 = pieces[0].c, c1 = end_of(pieces[m - 1]);
  std::uint64_t run = (c1 - c0 + warps - 1) / warps;
  if (run > std::uint64_t(32) * V) run = (run + V - 1) / V * V;
  const std::uint64_t r0 = c0 + warp * run < c1 ? c0 + warp * run : c1;
  const std::uint64_t r1 = r0 + run < c1 ? r0 + run : c1;
  if (lane == 0) cuts.piece[warp][0] = cuts.piece[warp][1] = -1;
  __syncwarp();
  const int k0 = r0 < r1 ? first_piece_after(pieces, m, r0) : m;
  const int k1 = r0 < r1 ? first_piece_from(pieces, m, r1) : m;
  // Piece k's elements in the run, [x0, x1) of the concatenation.
  const auto clip = [&](int k, std::uint64_t& x0, std::uint64_t& x1) {
    const Piece& p = pieces[k];
    x0 = p.c > r0 ? p.c : r0;
    x1 = end_of(p) < r1 ? end_of(p) : r1;
  };
  const auto deliver = [&](int k, std::uint64_t x0, std::uint64_t x1, const T& acc) {
    const Piece& p = pieces[k];
    if (x0 == p.c && x1 == end_of(p)) {
      put(out, head, tail, b, p, acc);
    } else {
      const int side = x0 > p.c ? 0 : 1;  // began in an earlier run, or goes on in a later one
      cuts.piece[warp][side] = k;
      cuts.value[warp][side] = acc;
    }
  };
  constexpr std::uint64_t short_elements = short_vectors * V;
  constexpr int per_warp = 32 / short_group;
  const unsigned g = lane / short_group, gl = lane % short_group;
  for (int kb = k0; kb < k1; kb += per_warp) {
    const int k = kb + int(g);
    std::uint64_t x0 = 0, x1 = 0;
    if (k < k1) clip(k, x0, x1);
    const bool mine = k < k1 && x1 > x0 && x1 - x0 <= short_elements;
    T acc = OpT::identity();
    if (mine) {
      const Piece& p = pieces[k];
      acc = fold_range<T, OpT, In, short_group, V, 4, true>(in, p.lo + (x0 - p.c),
                                                            p.lo + (x1 - p.c), gl,
                                                            p.idx0 + (x0 - p.c));
    }
    acc = group_reduce<T, OpT, short_group>(acc);
    if (mine && gl == 0) deliver(k, x0, x1, acc);
  }
  for (int k = k0; k < k1; ++k) {
    std::uint64_t x0, x1;
    clip(k, x0, x1);
    if (x1 <= x0 || x1 - x0 <= short_elements) continue;
    const Piece& p = pieces[k];
    T acc = fold_range<T, OpT, In, 32, V, 4, true>(in, p.lo + (x0 - p.c), p.lo + (x1 - p.c), lane,
                                                   p.idx0 + (x0 - p.c));
    acc = group_reduce<T, OpT, 32>(acc);
    if (lane == 0) deliver(k, x0, x1, acc);
  }
  __syncthreads();
  // The warp where a cut piece begins joins it: its partial, then the next runs' in turn.
  const int cut_out = cuts.piece[warp][1];
  if (lane == 0 && cut_out >= 0) {
    T acc = cuts.value[warp][1];
    for (unsigned v = warp + 1; v < unsigned(warps) && cuts.piece[v][0] == cut_out; ++v)
      acc = op(acc, cuts.value[v][0]);
    put(out, head, tail, b, pieces[cut_out], acc);
  }
  __syncthreads();  // pieces and the cuts are written again by the next batch
}

/// 3. Block b folds the elements [b T, (b + 1) T) of the long segments' concatenation, its
/// pieces staged a block at a time (fold_batch).
template <class C>
__global__ void __launch_bounds__(block, tiles_per_sm)
    seg_balanced_tile_kernel(const typename C::In* __restrict__ in, typename C::T* __restrict__ out,
                             typename C::Bounds bounds, Work w, typename C::T* head,
                             typename C::T* tail) {
  using T = typename C::T;
  __shared__ Piece pieces[block];
  __shared__ Cuts<T> cuts;
  pdl_wait();
  pdl_launch_dependents();
  const std::uint64_t b = blockIdx.x, W = __ldcg(w.header), TT = __ldcg(w.header + 1),
                      n = __ldcg(w.header + 2);
  const std::uint64_t tlo = b * TT;
  if (tlo >= W) return;
  const std::uint64_t thi = b + 1 == w.tiles || tlo + TT > W ? W : tlo + TT;
  for (std::uint64_t j0 = __ldcg(w.tile_first + b);; j0 += block) {
    // Thread k stages the piece of long segment j0 + k if that starts before the tile's end
    // (the long segments are in the order of their starts: the staged ones are a prefix).
    const std::uint64_t j = j0 + threadIdx.x;
    const std::uint64_t a = j < n ? __ldcg(w.start + j) : W;
    if (a < thi) {
      const std::uint64_t e = __ldcg(w.start + j + 1), s = __ldcg(w.list + j);
      std::uint64_t lo, hi;
      bounds.get(s, lo, hi);
      const std::uint64_t clo = a > tlo ? a : tlo, chi = e < thi ? e : thi;
      Piece p;
      p.c = clo;
      p.idx0 = clo - a;
      p.lo = lo + p.idx0;
      p.hi = p.lo + (chi - clo);
      p.dest = a < tlo ? to_head : e > thi ? to_tail : s;
      pieces[threadIdx.x] = p;
    }
    const int m = __syncthreads_count(a < thi);
    if (m == 0) break;
    fold_batch<C>(in, out, head, tail, b, pieces, m, cuts);
    if (m < block) break;
  }
}

/// 4. A warp per tile b >= 1: if the long segment holding the tile's first element started in
/// an earlier tile and ends in this one, its tail partial (in the tile where it starts) and the
/// head partials of the tiles after that up to b, folded lane-strided and then by a shuffle tree
/// (a fixed order).
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
  const std::uint64_t W = __ldcg(w.header), TT = __ldcg(w.header + 1), n = __ldcg(w.header + 2);
  const std::uint64_t tlo = b * TT;
  if (tlo >= W) return;
  const std::uint64_t j = __ldcg(w.tile_first + b);
  if (j >= n) return;
  const std::uint64_t a0 = __ldcg(w.start + j), e = __ldcg(w.start + j + 1);
  if (a0 >= tlo || (e > tlo + TT && b + 1 < w.tiles)) return;
  const std::uint64_t a = a0 / TT;  // the tile where segment j starts
  const OpT op;
  T acc = OpT::identity();
  for (std::uint64_t k = a + lane; k <= b; k += 32)
    acc = op(acc, k == a ? load_partial(tail + a) : load_partial(head + k));
  acc = group_reduce<T, OpT, 32>(acc);
  if (lane == 0) store_result(out + __ldcg(w.list + j), acc);
}

// CSR offsets (end == begin + 1, segment s = [off[s], off[s + 1])): the segments lie one after
// another, so the tiles need no scan. Two launches instead of five:
//
//   C1. tiles: the items of the merge path of the segments' ends and their elements (W + S items
//       for S segments of W elements in all) are cut into equal runs, one a tile; a tile finds
//       where its run starts and ends by a search over the offsets, then folds its segments'
//       pieces a block of segments at a time (fold_batch): a segment wholly inside goes to out,
//       the one it starts inside of to its head partial, the one it ends inside of to its tail
//       partial; it records which segment it starts inside of. A segment of no element is an
//       item too, so a tile has at most its run's length of segments whatever the lengths.
//   C2. join: a warp per tile in which a crossing segment ends folds that segment's tail partial
//       and the head partials of the tiles after it, in order.
//
// Offsets that decrease somewhere (allowed: such a segment is empty, CUB's rule) break the
// merge path. Every tile checks the offsets it reads (their order, and that its run's ends are
// in order) and the tiles together read every one, so a decrease anywhere is found; then a
// flag tells the join to fold every segment again on its own (a warp a segment: slow, right).

/// Per tile, the segment that holds its first item, with this bit when the segment began in an
/// earlier tile (the tile's head partial is a piece of it).
inline constexpr std::uint64_t open_bit = std::uint64_t{1} << 63;

/// The number of segment ends among the first \p d items of the merge path of the segments'
/// ends (end s at element off[s + 1] - off[0], before that element) and the W elements: a
/// search by the warp. Its first round reads the 32 consecutive ends around where the answer
/// would be if every segment had the same length (one round trip then, which is what rows given
/// as offsets take); the next ones 32 points spread over what is left. On offsets that decrease
/// it returns some count in range, which the tile's checks then reject.
template <class Off>
__device__ __forceinline__ std::uint64_t csr_split(const Off* __restrict__ off, std::int64_t o0,
                                                   std::uint64_t S, std::uint64_t W,
                                                   std::uint64_t d, unsigned lane) {
  std::uint64_t lo = d > W ? d - W : 0, hi = d < S ? d : S;
  // End p is among the first d items when it comes before element d - p - 1 (p < hi <= d).
  const auto before = [&](std::uint64_t p) {
    return std::int64_t(__ldg(off + p + 1)) - o0 <= std::int64_t(d - p) - 1;
  };
  if (hi - lo > 32) {
    const double guess = double(d) * double(S) / double(W + S);
    std::uint64_t base = guess > 16.0 ? std::uint64_t(guess) - 16 : 0;
    base = base < lo ? lo : base > hi - 32 ? hi - 32 : base;
    const unsigned yes = __ballot_sync(0xffffffffu, before(base + lane));
    if (yes == 0xffffffffu) lo = base + 32;        // the answer is past the window
    else if (yes == 0) hi = base;                  // or at its start or before it
    else return base + unsigned(__ffs(~yes) - 1);  // the first end not among them
  }
  while (lo < hi) {
    const std::uint64_t span = hi - lo;
    const unsigned yes = __ballot_sync(0xffffffffu, before(lo + span * lane / 32));
    const unsigned f = yes == 0xffffffffu ? 32u : unsigned(__ffs(~yes) - 1);  // first "no"
    // The answer is in (point f - 1, point f].
    const std::uint64_t nlo = f == 0 ? lo : lo + span * (f - 1) / 32 + 1;
    const std::uint64_t nhi = f == 32 ? hi : lo + span * f / 32;
    lo = nlo;
    hi = nhi;
  }
  return lo;
}

/// Folds the n pieces of \p list, G lanes each (32 / G at once a warp), each to its
/// destination. Every thread of the block calls it.
template <class C, int G>
__device__ __forceinline__ void fold_list(const typename C::In* __restrict__ in,
                                          typename C::T* __restrict__ out, typename C::T* head,
                                          typename C::T* tail, std::uint64_t b, const Piece* list,
                                          int n) {
  using T = typename C::T;
  using OpT = typename C::OpT;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int kb = int(warp) * (32 / G); kb < n; kb += block / G) {
    const int k = kb + int(lane / G);
    T acc = OpT::identity();
    if (k < n)
      acc = fold_range<T, OpT, typename C::In, G, C::params.vec, 4, true>(in, list[k].lo,
                                                                          list[k].hi, lane % G,
                                                                          list[k].idx0);
    acc = group_reduce<T, OpT, G>(acc);
    if (k < n && lane % G == 0) put(out, head, tail, b, list[k], acc);
  }
}

/// C1. Tile b of \p tiles over CSR offsets \p off: its run of the merge path's items.
template <class C, class Off>
__global__ void __launch_bounds__(block, tiles_per_sm)
    seg_balanced_csr_tile_kernel(const typename C::In* __restrict__ in,
                                 typename C::T* __restrict__ out, const Off* __restrict__ off,
                                 std::uint64_t S, std::uint64_t tiles, typename C::T* head,
                                 typename C::T* tail, std::uint64_t* tile_row, unsigned* flag) {
  using T = typename C::T;
  using OpT = typename C::OpT;
  using In = typename C::In;
  __shared__ Piece pieces[block];  // a batch's short, then medium, then long pieces
  __shared__ int counts[3][warps];
  __shared__ Cuts<T> cuts;
  __shared__ std::uint64_t ends[2];
  pdl_launch_dependents();  // the join waits for this grid's end before it reads anything
  const std::uint64_t b = blockIdx.x;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t o0 = __ldg(off), oS = __ldg(off + S);
  if (oS < o0) {
    if (b == 0 && threadIdx.x == 0) atomicOr(flag, 1u);
    return;
  }
  // Runs of D items: as many tiles as the launch has, or fewer, each of at least
  // min_tile_vectors vectors' worth a thread (the host does not know the total when it is not
  // told the mean length); the tiles past the last run find theirs empty.
  const std::uint64_t W = std::uint64_t(oS - o0), items = W + S;
  constexpr std::uint64_t min_items = std::uint64_t(block) * C::params.vec * min_tile_vectors;
  const std::uint64_t even = (items + tiles - 1) / tiles;
  const std::uint64_t D = even > min_items ? even : min_items;
  const std::uint64_t d0 = b * D < items ? b * D : items;
  const std::uint64_t d1 = d0 + D < items ? d0 + D : items;
  if (warp < 2) {
    const std::uint64_t d = warp == 0 ? d0 : d1;
    const std::uint64_t i = d == 0 ? 0 : d == items ? S : csr_split(off, o0, S, W, d, lane);
    if (lane == 0) ends[warp] = i;
  }
  __syncthreads();
  const std::uint64_t i0 = ends[0], i1 = ends[1];
  if (i0 > i1 || d0 - i0 > d1 - i1) {  // only where the offsets decrease somewhere
    if (threadIdx.x == 0) atomicOr(flag, 1u);
    return;
  }
  const std::uint64_t j0 = d0 - i0, j1 = d1 - i1;  // the run's elements, [j0, j1)
  const std::uint64_t last = i1 < S ? i1 : S - 1;  // the tile's segments: [i0, last]
  if (i0 > last && threadIdx.x == 0) tile_row[b] = S;
  constexpr int V = C::params.vec;
  constexpr std::uint64_t tiny_elements = 2 * V, short_elements = short_vectors * V,
                          medium_elements = medium_vectors * V;
  const OpT op;
  for (std::uint64_t r0 = i0; r0 <= last && i0 < S; r0 += block) {
    // Thread t stages segment r0 + t's piece in the tile; a piece of at most tiny_elements it
    // folds itself; the short ones (up to short_elements), the medium ones (up to
    // medium_elements) and the longer ones go to `pieces` in three lists one after the other,
    // each in the segments' order; the long pieces get consecutive places in a concatenation of
    // their own, which fold_batch cuts into equal runs.
    const std::uint64_t r = r0 + threadIdx.x;
    int kind = 0;  // 1: short, 2: medium, 3: long
    Piece p{};
    if (r <= last) {
      const std::int64_t a = std::int64_t(__ldg(off + r)) - o0,
                         e = std::int64_t(__ldg(off + r + 1)) - o0;
      if (e < a || a < 0) atomicOr(flag, 1u);  // a decrease: the join folds everything again
      const bool open = r == i0 && a < std::int64_t(j0);
      if (r == i0) tile_row[b] = r | (open ? open_bit : 0);
      const std::uint64_t x0 = a > std::int64_t(j0) ? std::uint64_t(a) : j0;
      std::uint64_t x1 = e < std::int64_t(j1) ? std::uint64_t(e > 0 ? e : 0) : j1;
      if (x1 < x0) x1 = x0;
      p.c = x0;
      p.idx0 = x0 - std::uint64_t(a < 0 ? 0 : a);
      p.lo = std::uint64_t(o0) + x0;
      p.hi = std::uint64_t(o0) + x1;
      p.dest = open ? to_head : r == i1 ? to_tail : r;
      if (x1 == x0) {  // no element here: an empty segment, or a head of none; no tail
        if (open) store_result(head + b, OpT::identity());
        else if (r != i1) store_result(out + r, OpT::empty_result());
      } else if (x1 - x0 <= tiny_elements) {
        const int len = int(x1 - x0);
        In x[tiny_elements];  // the loads in flight together
#pragma unroll
        for (int k = 0; k < int(tiny_elements); ++k)
          if (k < len) x[k] = in[p.lo + k];
        T acc = OpT::identity();
#pragma unroll
        for (int k = 0; k < int(tiny_elements); ++k)
          if (k < len) acc = fold_element(op, acc, x[k], p.idx0 + k);
        put(out, head, tail, b, p, acc);
      } else {
        kind = x1 - x0 <= short_elements ? 1 : x1 - x0 <= medium_elements ? 2 : 3;
      }
    }
    // Places in the lists: the warps' counts of each kind, then the lanes' ranks.
    unsigned masks[3];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      masks[c] = __ballot_sync(0xffffffffu, kind == c + 1);
      if (lane == 0) counts[c][warp] = __popc(masks[c]);
    }
    std::uint64_t long_total;
    const std::uint64_t place = block_exclusive_scan(kind == 3 ? p.hi - p.lo : 0, long_total);
    int before[3] = {0, 0, 0}, n[3] = {0, 0, 0};
#pragma unroll
    for (int c = 0; c < 3; ++c)
#pragma unroll
      for (int v = 0; v < warps; ++v) {
        if (unsigned(v) < warp) before[c] += counts[c][v];
        n[c] += counts[c][v];
      }
    const unsigned below = (1u << lane) - 1;
    if (kind == 1) pieces[before[0] + __popc(masks[0] & below)] = p;
    if (kind == 2) pieces[n[0] + before[1] + __popc(masks[1] & below)] = p;
    if (kind == 3) {
      p.c = place;
      pieces[n[0] + n[1] + before[2] + __popc(masks[2] & below)] = p;
    }
    __syncthreads();
    fold_list<C, short_group>(in, out, head, tail, b, pieces, n[0]);
    fold_list<C, medium_group>(in, out, head, tail, b, pieces + n[0], n[1]);
    const int n_long = n[2];
    if (n_long > 0) fold_batch<C>(in, out, head, tail, b, pieces + n[0] + n[1], n_long, cuts);
    else __syncthreads();  // the pieces and counts are written again by the next batch
  }
}

/// C2. A warp per tile b >= 1 in which a segment that began in an earlier tile ends: that
/// segment's tail partial (in the tile where it began) and the head partials of the tiles after
/// it up to b, folded lane-strided and then by a shuffle tree (a fixed order). Where a tile
/// found the offsets decreasing, every warp folds whole segments instead. With \p ticket (the
/// word after the flag in the caller's counter) the last block leaves both zero.
template <class C, class Off>
__global__ void __launch_bounds__(block)
    seg_balanced_csr_join_kernel(const typename C::In* __restrict__ in,
                                 typename C::T* __restrict__ out, const Off* __restrict__ off,
                                 std::uint64_t S, std::uint64_t tiles, const typename C::T* head,
                                 const typename C::T* tail, const std::uint64_t* tile_row,
                                 unsigned* flag, unsigned* ticket) {
  constexpr SegParams P = C::params;
  using T = typename C::T;
  using OpT = typename C::OpT;
  using In = typename C::In;
  __shared__ bool redo;
  pdl_wait();
  if (threadIdx.x == 0) redo = __ldcg(flag) != 0;
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t warp_id = (blockIdx.x * std::uint64_t(block) + threadIdx.x) / 32;
  const OpT op;
  if (redo) {
    const std::uint64_t all_warps = std::uint64_t(gridDim.x) * (block / 32);
    const OffsetBounds<Off> bounds{off, off + 1};
    for (std::uint64_t s = warp_id; s < S; s += all_warps) {
      std::uint64_t lo, hi;
      bounds.get(s, lo, hi);
      T acc = fold_range<T, OpT, In, 32, P.vec, 4, true>(in, lo, hi, lane, 0);
      acc = group_reduce<T, OpT, 32>(acc);
      if (lane == 0) store_result(out + s, hi > lo ? acc : OpT::empty_result());
    }
  } else if (const std::uint64_t b = 1 + warp_id; b < tiles) {
    const std::uint64_t row = __ldcg(tile_row + b);
    const bool ends_here = (row & open_bit) && (b + 1 == tiles || __ldcg(tile_row + b + 1) != row);
    if (ends_here) {
      // The tile where the segment began: the last one before b that does not start inside it.
      std::uint64_t a = 0;
      for (std::uint64_t top = b - 1;; top -= 32) {
        const bool inside = lane <= top && __ldcg(tile_row + (top - lane)) == row;
        const unsigned outside = __ballot_sync(0xffffffffu, lane <= top && !inside);
        if (outside) {
          a = top - (__ffs(outside) - 1);
          break;
        }
        if (top < 32) break;  // tile 0 starts inside no earlier segment: not reached
      }
      T acc = OpT::identity();
      for (std::uint64_t k = a + lane; k <= b; k += 32)
        acc = op(acc, k == a ? load_partial(tail + a) : load_partial(head + k));
      acc = group_reduce<T, OpT, 32>(acc);
      if (lane == 0) store_result(out + (row & ~open_bit), acc);
    }
  }
  if (ticket) {
    __syncthreads();
    if (threadIdx.x == 0 && take_ticket_acq_rel(ticket) == gridDim.x - 1) {
      *flag = 0;
      *ticket = 0;
    }
  }
}

}  // namespace balanced

}  // namespace tunedreduce::kernels::segmented
