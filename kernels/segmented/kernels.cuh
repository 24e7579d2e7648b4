#pragma once
// The segmented kernels (kernels/segmented/segmented.hpp) and their launch. Only the generated
// instance files (kernels/segmented/instance.cu.in) include this.
//
// Every family folds a segment [lo, hi) the same way (fold_range): the lanes that share a
// segment take its 16-byte vectors in turn, after a scalar head up to the first 16-byte boundary
// and before a scalar tail, so any segment start and length is read with aligned loads and
// nothing past hi is read. The lanes' accumulators are then combined in a fixed tree (shuffles
// inside a group, the block reduction of kernels/block/ inside a block, the split family's
// partials in index order), so a configuration gives the same bits on every run.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kernels/block/block_reduce.cuh"
#include "kernels/kernel/reduce_kernel.cuh"  // take_ticket_acq_rel, load_partial
#include "kernels/segmented/segmented.hpp"
#include "kernels/thread/ops.cuh"

namespace tunedreduce::kernels::segmented {

/// Segment s of the fixed layout: [s * stride, s * stride + size).
struct FixedBounds {
  std::uint64_t size;
  std::uint64_t stride;
  __device__ __forceinline__ void get(std::uint64_t s, std::uint64_t& lo, std::uint64_t& hi) const {
    lo = s * stride;
    hi = lo + size;
  }
};

/// Segment s of an offsets layout: [begin[s], end[s]), empty when end[s] <= begin[s].
template <class Off>
struct OffsetBounds {
  const Off* begin;
  const Off* end;
  __device__ __forceinline__ void get(std::uint64_t s, std::uint64_t& lo, std::uint64_t& hi) const {
    const Off b = __ldg(begin + s), e = __ldg(end + s);
    lo = static_cast<std::uint64_t>(b);
    hi = e > b ? static_cast<std::uint64_t>(e) : lo;
  }
};

/// The offsets' type of an offsets layout.
template <SegLayout L>
using offset_t = std::conditional_t<L == SegLayout::offsets32, std::int32_t, std::int64_t>;

template <SegLayout L>
using bounds_t = std::conditional_t<L == SegLayout::fixed, FixedBounds, OffsetBounds<offset_t<L>>>;

/// V elements of In in one 16-byte load (V * sizeof(In) == 16).
template <class In, int V>
struct Vec {
  In e[V];
};

template <class In, int V>
__device__ __forceinline__ Vec<In, V> load_vec(const In* p) {
  static_assert(sizeof(Vec<In, V>) == 16);
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  Vec<In, V> v;
  std::memcpy(&v, &raw, 16);
  return v;
}

/// A loaded vector as arg_tree (kernels/thread/ops.cuh) reads it: member v.
template <class In, int V>
struct RawVec {
  Vec<In, V> v;
};

/// Writes result \p r to \p out. An argmin / argmax result of an element narrower than its
/// 8-byte index has padding between value and index: a copy of the members leaves those bytes
/// unwritten, and a 32-byte sector written in part costs the memory a read before the write
/// (the rows of one element ran at 51-56 % of the floor that way, docs/performance.md 3.33).
/// So all 16 bytes are written, the padding as zeros: one 16-byte store where \p out is
/// 16-byte aligned, else two 8-byte stores (an IndexedValue's alignment).
template <class T>
__device__ __forceinline__ void store_result(T* out, const T& r) {
  *out = r;
}
template <class V>
__device__ __forceinline__ void store_result(IndexedValue<V>* out, const IndexedValue<V>& r) {
  if constexpr (sizeof(V) < 8) {
    unsigned char raw[16] = {};
    std::memcpy(raw, &r.value, sizeof(V));
    std::memcpy(raw + 8, &r.index, 8);
    if (reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
      uint4 w;
      std::memcpy(&w, raw, 16);
      *reinterpret_cast<uint4*>(out) = w;
    } else {
      uint2 w[2];
      std::memcpy(w, raw, 16);
      reinterpret_cast<uint2*>(out)[0] = w[0];
      reinterpret_cast<uint2*>(out)[1] = w[1];
    }
  } else {
    *out = r;
  }
}

/// Loads in flight per lane in the vector loop.
template <SegFamily F>
inline constexpr int unroll_of = F == SegFamily::block || F == SegFamily::split ? 4 : 2;

/// Lane \p lane of G lanes folds its share of in[lo, hi); element i gets index idx0 + (i - lo)
/// (argmin / argmax; the other operators ignore it).
template <class T, class OpT, class In, int G, int V, int U, bool EarlyEnds = false>
__device__ __forceinline__ T fold_range(const In* __restrict__ in, std::uint64_t lo,
                                        std::uint64_t hi, unsigned lane, std::uint64_t idx0) {
  const OpT op;
  T acc = OpT::identity();
  std::uint64_t head = 0;
  if constexpr (V > 1) {
    const std::uint64_t mis = (reinterpret_cast<std::uintptr_t>(in + lo) / sizeof(In)) % V;
    head = mis ? V - mis : 0;
    if (head > hi - lo) head = hi - lo;
  }
  const std::uint64_t vlo = lo + head;
  const std::uint64_t nvec = (hi - vlo) / V;
  const std::uint64_t first = idx0 + head;  // the index of the first vector's first element
  // argmin / argmax: a lane's vectors come in index order, so a tree of strict comparisons takes
  // each step's best and no index is compared (fold_arg_vectors). The lane starts at the worst
  // value with its first vector's index (an input of only that value gives its first index);
  // the head and the tail take the full comparison, which keeps the first index in any order.
  if constexpr (is_arg_op_v<OpT> && V > 1) acc = arg_start<T, OpT>(lane < nvec, first + lane * V);
  // EarlyEnds: the scalar head and tail (fewer than V elements each) are loaded first and folded
  // last, so that their loads are in flight with the vectors' instead of a round trip each
  // before and after them. (The balanced family's segments start anywhere: f32 sum, power-law
  // lengths of mean 64, 8-10 % faster on the H200. Rows, whose starts are mostly aligned, ran
  // 4-17 % slower with it: their group kernels keep the plain order; docs/performance.md 3.42.)
  constexpr int HT = EarlyEnds && V > 1 ? (V - 1 + G - 1) / G : 1;  // of the head, of the tail
  [[maybe_unused]] In hx[HT], tx[HT];
  if constexpr (EarlyEnds && V > 1) {
    const std::uint64_t tlo = vlo + nvec * V;
#pragma unroll
    for (int i = 0; i < HT; ++i) {
      const std::uint64_t kh = lane + std::uint64_t(i) * G, kt = tlo + lane + std::uint64_t(i) * G;
      if (kh < head) hx[i] = in[lo + kh];
      if (kt < hi) tx[i] = in[kt];
    }
  } else {
    for (std::uint64_t k = lane; k < head; k += G)
      acc = fold_element(op, acc, in[lo + k], idx0 + k);
  }
  std::uint64_t k = lane;
  if constexpr (V > 1) {
    const In* base = in + vlo;
    for (; k + std::uint64_t(U - 1) * G < nvec; k += std::uint64_t(U) * G) {
      RawVec<In, V> x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u].v = load_vec<In, V>(base + (k + std::uint64_t(u) * G) * V);
      if constexpr (is_arg_op_v<OpT>) {
        acc = fold_arg_vectors<T, OpT, U, V>(acc, x, [&](int u) {
          return first + (k + std::uint64_t(u) * G) * V;
        });
      } else {
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int e = 0; e < V; ++e) acc = op(acc, static_cast<T>(x[u].v.e[e]));
      }
    }
    // The lane's last 1..U-1 vectors, their loads in flight together (one after the other, a
    // lane with a vector or two ran at 55-70 % of the floor: the block family's short rows, the
    // split family's small parts); argmin / argmax pad the step with the worst value after them,
    // which the tree never takes over an earlier item.
    if (k < nvec) {
      RawVec<In, V> x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (k + std::uint64_t(u) * G < nvec) {
          x[u].v = load_vec<In, V>(base + (k + std::uint64_t(u) * G) * V);
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e) x[u].v.e[e] = padding_element<In, OpT>();
        }
      }
      if constexpr (is_arg_op_v<OpT>) {
        acc = fold_arg_vectors<T, OpT, U, V>(acc, x, [&](int u) {
          return first + (k + std::uint64_t(u) * G) * V;
        });
      } else {
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (k + std::uint64_t(u) * G < nvec)
#pragma unroll
            for (int e = 0; e < V; ++e) acc = op(acc, static_cast<T>(x[u].v.e[e]));
      }
    }
  } else {
    for (; k + std::uint64_t(U - 1) * G < nvec; k += std::uint64_t(U) * G) {
      In x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = __ldg(in + vlo + k + std::uint64_t(u) * G);
#pragma unroll
      for (int u = 0; u < U; ++u)
        acc = fold_element(op, acc, x[u], idx0 + head + k + std::uint64_t(u) * G);
    }
    for (; k < nvec; k += G) acc = fold_element(op, acc, __ldg(in + vlo + k), idx0 + head + k);
  }
  const std::uint64_t tlo = vlo + nvec * V;
  if constexpr (EarlyEnds && V > 1) {
#pragma unroll
    for (int i = 0; i < HT; ++i) {
      const std::uint64_t kh = lane + std::uint64_t(i) * G, kt = tlo + lane + std::uint64_t(i) * G;
      if (kh < head) acc = fold_element(op, acc, hx[i], idx0 + kh);
      if (kt < hi) acc = fold_element(op, acc, tx[i], idx0 + (kt - lo));
    }
  } else {
    for (std::uint64_t t = tlo + lane; t < hi; t += G)
      acc = fold_element(op, acc, in[t], idx0 + (t - lo));
  }
  return acc;
}

/// Programmatic dependent launch (compute capability 9.0 up; nothing below): a kernel launched
/// with launch_dependent (below) waits here for the previous grid's completion and memory
/// before it reads what that grid wrote ...
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
/// ... and a grid lets the next one be scheduled early (its launch overlaps this grid's end).
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

/// __shfl_down_sync inside groups of G lanes, of a value or of both members of an IndexedValue.
template <int G, class T>
__device__ __forceinline__ T group_shfl_down(T v, int offset) {
  return __shfl_down_sync(0xffffffffu, v, offset, G);
}
template <int G, class T>
__device__ __forceinline__ IndexedValue<T> group_shfl_down(IndexedValue<T> v, int offset) {
  return {__shfl_down_sync(0xffffffffu, v.value, offset, G),
          __shfl_down_sync(0xffffffffu, v.index, offset, G)};
}

/// Every lane of the warp takes part; the group's result is valid in its first lane.
template <class T, class OpT, int G>
__device__ __forceinline__ T group_reduce(T v) {
  const OpT op;
#pragma unroll
  for (int offset = G / 2; offset > 0; offset >>= 1) v = op(v, group_shfl_down<G>(v, offset));
  return v;
}

/// A configuration as a type: a __global__ function takes no class-type template argument.
template <SegFamily F, int Block, int G, int V, SegLayout L, DType D, Op O>
struct SegConfig {
  static constexpr SegParams params{F, Block, G, V, L, D, O};
  using In = dtype_t<D>;
  using T = acc_t<D, O>;  // the accumulator's and the result's type
  using OpT = op_t<O, T>;
  using Bounds = bounds_t<L>;
};
template <SegParams P>
using config_t = SegConfig<P.family, P.block, P.group, P.vec, P.layout, P.dtype, P.op>;

/// thread and group: P.group lanes per segment, P.block / P.group segments per block and step.
template <class C>
__global__ void __launch_bounds__(C::params.block)
    seg_lanes_kernel(const typename C::In* __restrict__ in, typename C::T* __restrict__ out,
                     std::uint64_t num_segments, typename C::Bounds bounds) {
  constexpr SegParams P = C::params;
  using Ty = C;
  using T = typename Ty::T;
  using OpT = typename Ty::OpT;
  constexpr int G = P.group;
  constexpr std::uint64_t per_block = P.block / G;
  const unsigned lane = threadIdx.x % G;
  const std::uint64_t local = threadIdx.x / G;
  for (std::uint64_t s0 = std::uint64_t(blockIdx.x) * per_block; s0 < num_segments;
       s0 += std::uint64_t(gridDim.x) * per_block) {
    const std::uint64_t s = s0 + local;
    T acc = OpT::identity();
    std::uint64_t lo = 0, hi = 0;
    if (s < num_segments) {
      bounds.get(s, lo, hi);
      acc = fold_range<T, OpT, typename Ty::In, G, P.vec, unroll_of<P.family>>(in, lo, hi, lane, 0);
    }
    if constexpr (G > 1) acc = group_reduce<T, OpT, G>(acc);
    if (lane == 0 && s < num_segments) store_result(out + s, hi > lo ? acc : OpT::empty_result());
  }
}

/// The minimum of resident blocks the block and split families ask ptxas for: two of 1024
/// threads where the accumulator is a register or two, so it keeps to 32 registers (the i32
/// sum's 36 let one such block run where two should: 79 % of the floor on the H100, 86 % with the
/// bound); 0, no minimum, for smaller blocks: a minimum of 1 let ptxas take 94 registers for the
/// f32 sum with 256 threads (40-70 % of the floor on the H200, docs/performance.md 3.31).
template <class C>
inline constexpr int min_blocks_v = C::params.block == 1024 && sizeof(typename C::T) <= 8 ? 2 : 0;

/// block: one block per segment and step.
template <class C>
__global__ void __launch_bounds__(C::params.block, min_blocks_v<C>)
    seg_block_kernel(const typename C::In* __restrict__ in, typename C::T* __restrict__ out,
                     std::uint64_t num_segments, typename C::Bounds bounds) {
  constexpr SegParams P = C::params;
  using Ty = C;
  using T = typename Ty::T;
  using OpT = typename Ty::OpT;
  for (std::uint64_t s = blockIdx.x; s < num_segments; s += gridDim.x) {
    std::uint64_t lo, hi;
    bounds.get(s, lo, hi);
    T acc = fold_range<T, OpT, typename Ty::In, P.block, P.vec, unroll_of<P.family>>(in, lo, hi,
                                                                                     threadIdx.x,
                                                                                     0);
    acc = block_reduce_shuffle<T, OpT, P.block>(acc);
    if (threadIdx.x == 0) store_result(out + s, hi > lo ? acc : OpT::empty_result());
  }
}

/// The share of [lo, hi) that part k of `parts` takes: chunks of a whole number of 16-byte
/// vectors' worth of elements, so that every part but the first starts where the last ended.
__device__ __forceinline__ void split_part(std::uint64_t lo, std::uint64_t hi, std::uint64_t k,
                                           std::uint64_t parts, int v, std::uint64_t& plo,
                                           std::uint64_t& phi) {
  const std::uint64_t len = hi - lo;
  std::uint64_t chunk = (len + parts - 1) / parts;
  chunk = (chunk + v - 1) / v * v;
  plo = lo + (k * chunk < len ? k * chunk : len);
  phi = lo + ((k + 1) * chunk < len ? (k + 1) * chunk : len);
}

/// The split family's partials of segment s, folded in a fixed order by the lanes of one warp
/// (lane-strided, then a shuffle tree): the finishing kernel and the last block of a one-kernel
/// launch fold the same way, so both give the same bits. Every lane of the warp takes part; the
/// result is valid in lane 0.
template <class T, class OpT>
__device__ __forceinline__ T fold_partials(const T* partials, std::uint64_t s, std::uint64_t parts,
                                           unsigned lane) {
  const OpT op;
  T acc = OpT::identity();
  for (std::uint64_t k = lane; k < parts; k += 32)
    acc = op(acc, load_partial(partials + s * parts + k));
  return group_reduce<T, OpT, 32>(acc);
}

/// split with one kernel: at most this many blocks' partials (segments x parts), of at most two
/// segments a warp of the last block, which folds them alone; more take the finishing kernel
/// (H200, f32 sum, 2^24: one kernel 0.5-2 % faster for 1 to 16 segments, 6 % slower for 64,
/// 5x slower for 4096 segments of one part each; docs/performance.md 3.33).
inline constexpr std::uint64_t max_ticket_partials = 4096;
template <int Block>
inline constexpr std::uint64_t max_ticket_segments = 2 * (Block / 32);

/// split: block w of the grid loop takes part w % parts of segment w / parts and writes its
/// partial to partials[w]. With a \p counter (zero on entry, left zero; kernels/counters.hpp)
/// every block then takes an acq_rel ticket and the one that takes the last folds every
/// segment's partials, a warp per segment, and writes out: one kernel (the grid has a block
/// per partial). Without one, the finishing kernel below does that.
template <class C>
__global__ void __launch_bounds__(C::params.block, min_blocks_v<C>)
    seg_split_kernel(const typename C::In* __restrict__ in, typename C::T* __restrict__ partials,
                     std::uint64_t num_segments, std::uint64_t parts, typename C::Bounds bounds,
                     unsigned* counter, typename C::T* out) {
  constexpr SegParams P = C::params;
  using Ty = C;
  using T = typename Ty::T;
  using OpT = typename Ty::OpT;
  const std::uint64_t work = num_segments * parts;
  // The finishing kernel may be scheduled now; it waits for this grid's completion and memory
  // (pdl_wait) before it reads a partial: its launch latency overlaps this grid.
  if (!counter) pdl_launch_dependents();
  for (std::uint64_t w = blockIdx.x; w < work; w += gridDim.x) {
    std::uint64_t lo, hi, plo, phi;
    bounds.get(w / parts, lo, hi);
    split_part(lo, hi, w % parts, parts, P.vec, plo, phi);
    T acc = fold_range<T, OpT, typename Ty::In, P.block, P.vec, unroll_of<P.family>>(in, plo, phi,
                                                                                     threadIdx.x,
                                                                                     plo - lo);
    acc = block_reduce_shuffle<T, OpT, P.block>(acc);
    if (threadIdx.x == 0) store_result(partials + w, acc);
  }
  if (!counter) return;
  __shared__ bool is_last;
  if (threadIdx.x == 0) is_last = take_ticket_acq_rel(counter) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;
  const unsigned lane = threadIdx.x % 32;
  for (std::uint64_t s = threadIdx.x / 32; s < num_segments; s += P.block / 32) {
    std::uint64_t lo, hi;
    bounds.get(s, lo, hi);
    const T acc = fold_partials<T, OpT>(partials, s, parts, lane);
    if (lane == 0) store_result(out + s, hi > lo ? acc : OpT::empty_result());
  }
  if (threadIdx.x == 0) *counter = 0;  // ready for the next launch
}

/// split, second kernel: a warp per segment folds its `parts` partials (lane-strided, then a
/// shuffle tree: a fixed order).
template <class C>
__global__ void __launch_bounds__(256)
    seg_split_finish_kernel(const typename C::T* __restrict__ partials,
                            typename C::T* __restrict__ out, std::uint64_t num_segments,
                            std::uint64_t parts, typename C::Bounds bounds) {
  constexpr SegParams P = C::params;
  using Ty = C;
  using T = typename Ty::T;
  using OpT = typename Ty::OpT;
  const unsigned lane = threadIdx.x % 32;
  pdl_wait();
  // Whole warps go round the loop together (the shuffles of fold_partials): a warp past the last
  // segment folds nothing and writes nothing.
  for (std::uint64_t s0 = std::uint64_t(blockIdx.x) * 8; s0 < num_segments;
       s0 += std::uint64_t(gridDim.x) * 8) {
    const std::uint64_t s = s0 + threadIdx.x / 32;
    if (s >= num_segments) continue;
    std::uint64_t lo, hi;
    bounds.get(s, lo, hi);
    const T acc = fold_partials<T, OpT>(partials, s, parts, lane);
    if (lane == 0) store_result(out + s, hi > lo ? acc : OpT::empty_result());
  }
}

/// Stores R consecutive results with 16- or 8-byte stores where their bytes and the address allow
/// it (the caller's d_out need only be aligned to one result), else one by one.
template <class T, int R>
__device__ __forceinline__ void store_results(T* out, const T (&res)[R]) {
  constexpr int bytes = int(sizeof(T)) * R;
  const auto addr = reinterpret_cast<std::uintptr_t>(out);
  if constexpr (bytes % 16 == 0 && sizeof(T) < 16) {
    if (addr % 16 != 0) {
#pragma unroll
      for (int r = 0; r < R; ++r) out[r] = res[r];
      return;
    }
#pragma unroll
    for (int k = 0; k < bytes / 16; ++k) {
      uint4 w;
      std::memcpy(&w, reinterpret_cast<const unsigned char*>(res) + 16 * k, 16);
      reinterpret_cast<uint4*>(out)[k] = w;
    }
  } else if constexpr (bytes == 8 && sizeof(T) < 8) {
    if (addr % 8 != 0) {
#pragma unroll
      for (int r = 0; r < R; ++r) out[r] = res[r];
      return;
    }
    uint2 w;
    std::memcpy(&w, res, 8);
    *reinterpret_cast<uint2*>(out) = w;
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r) store_result(out + r, res[r]);
  }
}

/// tile: rows of L elements, L dividing a 16-byte vector's V elements, contiguous and 16-byte
/// aligned: each thread loads U whole vectors (V / L rows each) and writes their rows' results;
/// the rows after the last whole vector, a thread each.
template <class C, int L>
__device__ __forceinline__ void tile_rows(const typename C::In* __restrict__ in,
                                          typename C::T* __restrict__ out,
                                          std::uint64_t num_segments) {
  constexpr SegParams P = C::params;
  using T = typename C::T;
  using OpT = typename C::OpT;
  using In = typename C::In;
  constexpr int V = P.vec, R = V / L, U = 4;
  const OpT op;
  const std::uint64_t nvec = num_segments * L / V;
  const std::uint64_t step = std::uint64_t(gridDim.x) * P.block * U;
  for (std::uint64_t base = std::uint64_t(blockIdx.x) * P.block * U + threadIdx.x; base < nvec;
       base += step) {
    Vec<In, V> x[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (base + std::uint64_t(u) * P.block < nvec)
        x[u] = load_vec<In, V>(in + (base + std::uint64_t(u) * P.block) * V);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::uint64_t v = base + std::uint64_t(u) * P.block;
      if (v >= nvec) break;
      T res[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        T acc = element_acc<T, OpT>(x[u].e[r * L], 0);
#pragma unroll
        for (int j = 1; j < L; ++j) acc = fold_element(op, acc, x[u].e[r * L + j], j);
        res[r] = acc;
      }
      store_results<T, R>(out + v * R, res);
    }
  }
  // The rows after the last whole vector (fewer than R).
  const std::uint64_t done = nvec * R;
  const std::uint64_t s = done + blockIdx.x * std::uint64_t(P.block) + threadIdx.x;
  if (s < num_segments) {
    T acc = element_acc<T, OpT>(in[s * L], 0);
    for (int j = 1; j < L; ++j) acc = fold_element(op, acc, in[s * L + j], j);
    store_result(out + s, acc);
  }
}

template <class C>
__global__ void __launch_bounds__(C::params.block)
    seg_tile_kernel(const typename C::In* __restrict__ in, typename C::T* __restrict__ out,
                    std::uint64_t num_segments, std::uint64_t length) {
  constexpr int V = C::params.vec;
  if (length == 1) tile_rows<C, 1>(in, out, num_segments);
  else if (length == 2) tile_rows<C, 2>(in, out, num_segments);
  else if constexpr (V >= 4) {
    if (length == 4) tile_rows<C, 4>(in, out, num_segments);
    else if constexpr (V >= 8) {
      if (length == 8) tile_rows<C, 8>(in, out, num_segments);
    }
  }
}

}  // namespace tunedreduce::kernels::segmented

// The balanced family's kernels use fold_range, group_reduce, store_result and the PDL helpers
// above.
#include "kernels/segmented/balanced.cuh"

namespace tunedreduce::kernels::segmented {

/// Launches \p kernel as a programmatic dependent launch of the stream's previous kernel where
/// the device has it (compute capability 9.0 up): its launch overlaps that kernel's end, and
/// it waits for that kernel's completion and memory (pdl_wait) before reading.
template <class... Params, class... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), unsigned grid, unsigned threads,
                             cudaStream_t stream, const DeviceLimits& dev, Args... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(threads);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = dev.cc_major >= 9 ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<Params>(args)...);
}

/// Blocks of a grid loop: at most 2^31 - 1.
inline unsigned grid_of(std::uint64_t blocks) {
  constexpr std::uint64_t cap = 0x7fffffff;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

template <SegParams P>
struct SegDispatch {
  using Ty = config_t<P>;
  using In = typename Ty::In;
  using T = typename Ty::T;

  static typename Ty::Bounds bounds(const SegProblem& p) {
    if constexpr (P.layout == SegLayout::fixed) {
      return {p.segment_size, p.stride};
    } else {
      using Off = offset_t<P.layout>;
      return {static_cast<const Off*>(p.begin), static_cast<const Off*>(p.end)};
    }
  }

  static cudaError_t launch(const SegLaunchArgs& a, const DeviceLimits& dev) {
    const SegProblem& p = a.problem;
    const std::uint64_t S = p.num_segments;
    if (S == 0) return cudaSuccess;
    if (!a.out || S > max_segments) return cudaErrorInvalidValue;
    const auto* in = static_cast<const In*>(a.in);
    auto* out = static_cast<T*>(a.out);
    const auto b = bounds(p);
    if constexpr (P.family == SegFamily::thread || P.family == SegFamily::group) {
      const std::uint64_t per_block = P.block / P.group;
      seg_lanes_kernel<config_t<P>>
          <<<grid_of((S + per_block - 1) / per_block), P.block, 0, a.stream>>>(in, out, S, b);
      return cudaGetLastError();
    } else if constexpr (P.family == SegFamily::tile) {
      const std::uint64_t vectors = S * p.segment_size / P.vec;
      const std::uint64_t per_block = std::uint64_t(P.block) * 4;
      seg_tile_kernel<config_t<P>>
          <<<grid_of((vectors + per_block - 1) / per_block), P.block, 0, a.stream>>>(
              in, out, S, p.segment_size);
      return cudaGetLastError();
    } else if constexpr (P.family == SegFamily::block) {
      seg_block_kernel<config_t<P>><<<grid_of(S), P.block, 0, a.stream>>>(in, out, S, b);
      return cudaGetLastError();
    } else if constexpr (P.family == SegFamily::split) {
      const SegEntry probe{P, nullptr, nullptr};
      const std::uint64_t parts = probe.blocks_per_segment(p, dev);
      if (!a.workspace || a.workspace_bytes < probe.workspace_bytes(p, dev))
        return cudaErrorInvalidValue;
      auto* partials = static_cast<T*>(a.workspace);
      // One kernel where a counter is given and the last block's fold stays small.
      unsigned* const counter = a.counter && S <= max_ticket_segments<P.block> &&
                                        S * parts <= max_ticket_partials
                                    ? reinterpret_cast<unsigned*>(a.counter)
                                    : nullptr;
      seg_split_kernel<config_t<P>>
          <<<grid_of(S * parts), P.block, 0, a.stream>>>(in, partials, S, parts, b, counter, out);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess || counter) return e;
      return launch_dependent(seg_split_finish_kernel<config_t<P>>, grid_of((S + 7) / 8), 256,
                              a.stream, dev, static_cast<const T*>(partials), out, S, parts, b);
    } else {
      static_assert(P.family == SegFamily::balanced);
      const SegEntry probe{P, nullptr, nullptr};
      const std::uint64_t tiles = probe.tiles(p, dev);
      const bool csr = P.layout != SegLayout::fixed &&
                       balanced::is_csr(p.begin, p.end, sizeof(offset_t<P.layout>));
      const balanced::Layout l = balanced::layout(S, tiles, sizeof(T), csr);
      if (!a.workspace || a.workspace_bytes < l.bytes) return cudaErrorInvalidValue;
      auto* ws = static_cast<unsigned char*>(a.workspace);
      const auto at = [&](std::size_t offset) {
        return reinterpret_cast<std::uint64_t*>(ws + offset);
      };
      const balanced::Work w{at(l.header),
                             at(l.chunk_count),
                             at(l.chunk_sum),
                             at(l.list),
                             at(l.start),
                             at(l.tile_first),
                             S,
                             tiles,
                             balanced::long_vectors * P.vec};
      T* head = reinterpret_cast<T*>(ws + l.head);
      T* tail = reinterpret_cast<T*>(ws + l.tail);
      if constexpr (P.layout != SegLayout::fixed) {
        // CSR offsets (end == begin + 1): tiles straight over the merge path of the offsets,
        // then the join (balanced.cuh, C1-C2). The flag of decreasing offsets and the join's
        // ticket: the caller's counter, else a word of the header zeroed first.
        using Off = offset_t<P.layout>;
        const auto* off = static_cast<const Off*>(p.begin);
        if (csr) {
          unsigned* flag = a.counter ? reinterpret_cast<unsigned*>(a.counter)
                                     : reinterpret_cast<unsigned*>(w.header + 3);
          if (!a.counter)
            if (cudaError_t e = cudaMemsetAsync(flag, 0, 8, a.stream); e != cudaSuccess) return e;
          balanced::seg_balanced_csr_tile_kernel<config_t<P>, Off>
              <<<grid_of(tiles), balanced::block, 0, a.stream>>>(in, out, off, S, tiles, head, tail,
                                                                 w.tile_first, flag);
          if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
          return launch_dependent(balanced::seg_balanced_csr_join_kernel<config_t<P>, Off>,
                                  grid_of((tiles - 1 + 7) / 8), balanced::block, a.stream, dev, in,
                                  out, off, S, tiles, static_cast<const T*>(head),
                                  static_cast<const T*>(tail),
                                  static_cast<const std::uint64_t*>(w.tile_first), flag,
                                  a.counter ? flag + 1 : nullptr);
        }
      }
      const std::uint64_t chunks = (S + balanced::chunk - 1) / balanced::chunk;
      // The scan's ticket: the caller's counter, else a word of the header zeroed first.
      unsigned* counter = a.counter ? reinterpret_cast<unsigned*>(a.counter)
                                    : reinterpret_cast<unsigned*>(w.header + 3);
      if (!a.counter && chunks > 1)
        if (cudaError_t e = cudaMemsetAsync(w.header + 3, 0, 8, a.stream); e != cudaSuccess)
          return e;
      const std::uint64_t per_block = balanced::block / balanced::short_group;
      balanced::seg_balanced_short_kernel<config_t<P>>
          <<<grid_of((S + per_block - 1) / per_block), balanced::block, 0, a.stream>>>(in, out, b,
                                                                                       S, w.limit);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
      if (cudaError_t e = launch_dependent(balanced::seg_balanced_scan_kernel<typename Ty::Bounds>,
                                           grid_of(chunks), balanced::block, a.stream, dev, b, w,
                                           counter);
          e != cudaSuccess)
        return e;
      if (chunks > 1)
        if (cudaError_t e =
                launch_dependent(balanced::seg_balanced_place_kernel<typename Ty::Bounds>,
                                 grid_of(chunks), balanced::block, a.stream, dev, b, w);
            e != cudaSuccess)
          return e;
      if (cudaError_t e = launch_dependent(balanced::seg_balanced_tile_kernel<config_t<P>>,
                                           grid_of(tiles), balanced::block, a.stream, dev, in, out,
                                           b, w, head, tail);
          e != cudaSuccess || tiles == 1)
        return e;
      return launch_dependent(balanced::seg_balanced_join_kernel<config_t<P>>,
                              grid_of((tiles - 1 + 7) / 8), balanced::block, a.stream, dev, out, w,
                              static_cast<const T*>(head), static_cast<const T*>(tail));
    }
  }
};

}  // namespace tunedreduce::kernels::segmented
