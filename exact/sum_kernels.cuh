#pragma once
// The exact sums' kernels (docs/kernels.md, "Exact sums"), launched by exact/sum_kernels.cu's
// exact_sum.
//
// exact_sum_blocks: each thread adds its share of the input (the block's share of the grid's
// rounds, handed to its warps a tile at a time from a counter in shared memory, so that they end
// together) into its own exact accumulator (exact/accumulator.hpp), held as two variables: the
// Expansion of K doubles, in registers, and the SpillStore of chunks behind it (registers or local
// memory, made at the first spill when local). A round of a thread's float loads (2 to 16 floats)
// whose nonzero elements are all normal and within 27 (up to 4), 26 (8) or 25 (16) binades of each
// other is added as its exact fp64 sum (add_group; zeros do not count; with K >= 2, one within
// twice that plus one as two sums). A round of double loads with no input of the direct path
// (|x| >= 2^982, NaN, infinity) goes through the expansion level by level, with one spill test
// (add_round, Expansion::add_doubles). The half types (f16, bf16: a float accumulator and result)
// load 8 halves in 16 bytes, the next tile's loads issued before this tile's adds, the warp's
// last tile filled with -0s (add_half_tiles); an f16 round with no infinity or NaN is always one
// exact fp64 sum (add_f16_round), a bf16 round within add_group's spread bound for bfloat16's
// 8-bit significands (exact_group_spread) too, tested on the loaded words two halves at once
// (add_bf16_round), others widened to floats and go add_group's way. Other rounds element by
// element in a loop with one add site
// (add_elements: the kernels' code size is their time after other kernels; the launch bounds ask
// for 1024 threads a multiprocessor, 64 registers). The block then sums its threads'
// values as chunk words (warp reductions, then shared memory: plain int64 sums, no carry): each
// thread's expansion terms as the parts an add would put into the chunks, over the chunks some
// lane's term touches, plus the normalised chunks of the threads that spilled, and ORs their
// flags. One block rounds its sums itself. single_pass: each block adds its nonzero words into
// an accumulator beside the ticket (64-bit reductions in L2, an OR for the flags) and takes an
// acquire-release ticket; the last block's warp 0 takes the accumulator's words (exchanged for
// zeros, in one round of L2 latency) and rounds them (finish_accumulated). two_pass: each block
// stores its sums to its slot of the workspace, one word a thread, the last word holding the
// flags and the range of the nonzero words, and exact_sum_finish adds the slots' words inside
// the union of their ranges (finish_slots). Both round with round_sums (one lane's carries where
// the nonzero words are few, as random data's are, else warp-parallel carries; then the window
// that decides the rounding).
//
// Why the bits never depend on the configuration: every step is exact integer arithmetic on
// one value (the accumulator's add and normalise are exact, the fast path's fp64 sums are exact,
// integer sums are associative and commutative, OR is too), the normalised form of a value is
// unique, and the rounding happens once, on that value. Magnitudes stay far from overflow: a
// thread adds at most K + 1 words below 2^32 to a chunk (its normalised chunk, one part of each
// term), so a block's sums are below 2^43, and their sums over at most 2^19 blocks below 2^62,
// which round_sums carries.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <new>
#include <type_traits>

#include "exact/accumulator.hpp"

namespace tunedreduce::exact::detail {

/// Whether \p In is one of the two-byte input types (CUDA's __half, __nv_bfloat16): each is
/// exactly a float, so their exact sum is float's (the float accumulator, the result rounded
/// once to float).
template <class In>
inline constexpr bool is_half_input_v =
    std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>;

/// The accumulator's and the result's type of an exact sum of \p In: float for the half types,
/// else \p In.
template <class In>
using AccumOf = std::conditional_t<is_half_input_v<In>, float, In>;

/// Significand bits (with the implicit one) of the input type: the exact fp64 group sums'
/// spread bound (exact_group_spread) depends on it.
template <class In>
inline constexpr int kInputPrecision = std::is_same_v<In, __half>          ? 11
                                       : std::is_same_v<In, __nv_bfloat16> ? 8
                                                                           : 24;

template <class T, int V>
struct VectorOf;
/// 16 bytes of eight halves (bits), widened to two float4 after the load (widen).
template <>
struct VectorOf<__half, 8> {
  using type = uint4;
};
template <>
struct VectorOf<__nv_bfloat16, 8> {
  using type = uint4;
};
template <>
struct VectorOf<float, 1> {
  using type = float;
};
template <>
struct VectorOf<float, 2> {
  using type = float2;
};
template <>
struct VectorOf<float, 4> {
  using type = float4;
};
template <>
struct VectorOf<double, 1> {
  using type = double;
};
template <>
struct VectorOf<double, 2> {
  using type = double2;
};

/// Element k of a vector of T (k a compile-time constant after unrolling).
template <class T, class V>
__device__ __forceinline__ T element(const V& v, int k) {
  if constexpr (sizeof(V) == sizeof(T)) {
    return v;
  } else if constexpr (sizeof(V) == 2 * sizeof(T)) {
    return k == 0 ? v.x : v.y;
  } else {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
  }
}

/// Adds the first \p count elements of a round's vectors one by one, in a loop that is not
/// unrolled: one copy of Expansion::add (its TwoSums, its spill into the chunks and its rare
/// cases) in the kernel, not one per element. Code size is time here: the kernels run after
/// other kernels in an application, with their code out of the multiprocessors' instruction
/// caches, and the first pass with an add inlined per element of every vector was 400 KB of
/// SASS (float, chunks in registers, unroll 4) and took 3-6 us longer after another kernel
/// than back to back with itself (docs/performance.md 3.19). Uniform or normal data comes here
/// for a few rounds only (add_group and add_round take the others) and each warp's last tile.
template <class T, class V, int kCount, class Front, class Back>
__device__ __forceinline__ void add_elements(Front& front, Back& back, const V (&v)[kCount],
                                             int count) {
  constexpr int kPer = static_cast<int>(sizeof(V) / sizeof(T));
  if constexpr (sizeof(T) == 8) {
    // double: a vector's elements are unrolled (kPer add sites) and only the vectors are looped
    // over: one select of a vector, not one of an element.
#pragma unroll 1
    for (int u = 0; u < count / kPer; ++u) {
      V x = v[0];
#pragma unroll
      for (int w = 1; w < kCount; ++w) {
        if (w == u) x = v[w];
      }
#pragma unroll
      for (int k = 0; k < kPer; ++k) front.add(element<T>(x, k), back);
    }
  } else {
#pragma unroll 1
    for (int e = 0; e < count; ++e) {
      T x = element<T>(v[0], 0);
#pragma unroll
      for (int u = 0; u < kCount; ++u) {
#pragma unroll
        for (int k = 0; k < kPer; ++k) {
          if (u * kPer + k == e) x = element<T>(v[u], k);
        }
      }
      front.add(x, back);
    }
  }
}

/// The widest exponent spread at which the fp64 sum of m normal floats of \p precision
/// significand bits (24; the half types' widened: 11 for f16, 8 for bf16) is exact in any order:
/// each is a multiple of u = 2^(e_lo - precision + 1) below 2^(precision + spread) u, so every
/// partial sum is a multiple of u below m · 2^(precision + spread) u, which fp64's 53 bits hold
/// while log2(m) + precision + spread <= 53. Floats: up to 4: 27 (2 would allow 28); 8: 26;
/// 16: 25; 32: 24. (An f16 subnormal, k · 2^-24 with k < 2^10, widens to a normal float that is a
/// multiple of 2^-24, so of its u too.)
__host__ __device__ constexpr int exact_group_spread(int m, int precision = 24) {
  return 53 - precision - (m <= 4 ? 2 : m <= 8 ? 3 : m <= 16 ? 4 : 5);
}

/// The fp64 sum of term(x) over a round's floats x (kUnroll vectors of V): a tree of
/// independent adds, each vector's pair or quad first.
template <class V, int kUnroll, class Term>
__device__ __forceinline__ double round_sum(const V (&v)[kUnroll], Term term) {
  constexpr int kPer = static_cast<int>(sizeof(V) / sizeof(float));
  double s[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    if constexpr (kPer == 4) {
      s[u] = (term(v[u].x) + term(v[u].y)) + (term(v[u].z) + term(v[u].w));
    } else if constexpr (kPer == 2) {
      s[u] = term(v[u].x) + term(v[u].y);
    } else {
      s[u] = term(v[u]);
    }
  }
#pragma unroll
  for (int width = 1; width < kUnroll; width *= 2) {
#pragma unroll
    for (int u = 0; u + width < kUnroll; u += 2 * width) s[u] += s[u + width];
  }
  return s[0];
}

/// Adds a round of floats (kUnroll vectors of V) whose fp64 sum is exact as that one input.
template <class V, int kUnroll, class Front, class Back>
__device__ __forceinline__ void add_round_sum(Front& front, Back& back, const V (&v)[kUnroll]) {
  front.add_exact_sum(round_sum(v, [](float x) { return static_cast<double>(x); }), back);
}

/// A thread's round of float loads (kUnroll vectors of V, 2 to 16 floats) added as one input
/// when its nonzero floats are normal and within exact_group_spread binades of each other: their
/// fp64 sum is exact, and it goes through the expansion as one TwoSum chain and one spill test
/// instead of one per float (fewer instructions, and the main loop's longest dependency, the
/// time a thread has no load in flight, shorter). Zeros add nothing and do not count in the
/// spread; their sign still does, as the fp64 sum of ±0s is -0 only if every one is (so a round
/// of zeros goes here too). Uniform or normal data, with or without zeros, takes this path for
/// all but a few rounds. With an expansion of two or more doubles, a round up to 2S + 1 binades
/// wide (S = exact_group_spread) goes as two exact sums (below). Returns false (nothing added)
/// else (a subnormal, an infinity or NaN, a wider spread); the caller then adds element by
/// element (add_elements), with the same result.
template <int kPrecision, class V, int kUnroll, class Front, class Back>
__device__ __forceinline__ bool add_group(Front& front, Back& back, const V (&v)[kUnroll]) {
  constexpr int kPer = static_cast<int>(sizeof(V) / sizeof(float));
  static_assert(kPer * kUnroll <= 32);
  constexpr unsigned kSpread = exact_group_spread(kPer * kUnroll, kPrecision);
  // The magnitudes' bits: the largest, and the smallest nonzero one (m - 1 takes a zero to the
  // top; lo is then 0 when every float is zero).
  std::uint32_t lo_minus_1 = 0xFFFFFFFFu;
  std::uint32_t hi = 0;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const std::uint32_t m = __float_as_uint(element<float>(v[u], k)) & 0x7FFFFFFFu;
      lo_minus_1 = min(lo_minus_1, m - 1u);
      hi = max(hi, m);
    }
  }
  const std::uint32_t lo = lo_minus_1 + 1u;
  const bool normal = lo >= 0x00800000u && hi < 0x7F800000u;
  const unsigned spread = (hi >> 23) - (lo >> 23);
  if (hi == 0 || (normal && spread <= kSpread)) {
    add_round_sum(front, back, v);
    return true;
  }
  if constexpr (Front::kTerms >= 2) {
    // Wider, up to 2S + 1 binades: the floats of the top S + 1 binades (and the zeros) and the
    // rest, each within S binades, as two exact fp64 sums. Only with two or more doubles in the
    // expansion, which then holds both without spilling (floats 41 binades apart: 0.52 -> 0.83x
    // CUB at 2^24, 0.41 -> 0.95x at 2^26, exact_wide on the H100); with one, the two sums spill
    // and the code cost the one-double kernels 3-4 % on dense data (docs/performance.md 3.20).
    // Exact: the upper sum's exponents are hi's - S .. hi's, the lower's lo's .. hi's - S - 1,
    // each at most S apart while hi's - lo's <= 2S + 1; -0 is both sums' neutral element.
    if (!normal || spread > 2 * kSpread + 1) return false;
    const std::uint32_t top_minus_1 = (((hi >> 23) - kSpread) << 23) - 1u;
    const auto upper = [top_minus_1](float x) {
      return (__float_as_uint(x) & 0x7FFFFFFFu) - 1u >= top_minus_1 ? static_cast<double>(x) : -0.0;
    };
    const auto lower = [top_minus_1](float x) {
      return (__float_as_uint(x) & 0x7FFFFFFFu) - 1u >= top_minus_1 ? -0.0 : static_cast<double>(x);
    };
    front.add_exact_sum(round_sum(v, upper), back);
    front.add_exact_sum(round_sum(v, lower), back);
    return true;
  } else {
    return false;
  }
}

/// A thread's round of double loads (kUnroll vectors of V) added level by level through the
/// expansion (Expansion::add_doubles); false, nothing added, where some double takes the direct
/// path (|x| >= 2^982, NaN, infinity): the caller then adds element by element (add_elements).
template <class V, int kUnroll, class Front, class Back>
__device__ __forceinline__ bool add_round(Front& front, Back& back, const V (&v)[kUnroll]) {
  constexpr int kPer = static_cast<int>(sizeof(V) / sizeof(double));
  double x[kUnroll * kPer];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
    for (int k = 0; k < kPer; ++k) x[u * kPer + k] = element<double>(v[u], k);
  }
  return front.add_doubles(x, back);
}

/// One input element as the accumulator's type: a half widened to float exactly. The halves are
/// read as bits and widened by integer and conversion instructions that never flush: an f16 (its
/// subnormals too) is a normal float, a bf16 is the high half of a float's bits (its subnormals
/// float subnormals, which the accumulator routes by their bits, never through a conversion).
__device__ __forceinline__ float widen_bits(std::uint16_t bits, const __half*) {
  return __half2float(__ushort_as_half(bits));
}
__device__ __forceinline__ float widen_bits(std::uint16_t bits, const __nv_bfloat16*) {
  return __uint_as_float(static_cast<std::uint32_t>(bits) << 16);
}

template <class In>
__device__ __forceinline__ AccumOf<In> load_element(const In* p) {
  if constexpr (is_half_input_v<In>) {
    return widen_bits(__ldg(reinterpret_cast<const unsigned short*>(p)),
                      static_cast<const In*>(nullptr));
  } else {
    return __ldg(p);
  }
}

/// A 16-byte vector of eight halves as two float4 (elements 0-3, 4-7), each widened exactly.
template <class In>
__device__ __forceinline__ void widen(const uint4& v, float4& lo, float4& hi) {
  const std::uint32_t w[4] = {v.x, v.y, v.z, v.w};
  float f[8];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (std::is_same_v<In, __half>) {
      const float2 pair = __half22float2(*reinterpret_cast<const __half2*>(&w[k]));
      f[2 * k] = pair.x;
      f[2 * k + 1] = pair.y;
    } else {
      f[2 * k] = __uint_as_float(w[k] << 16);
      f[2 * k + 1] = __uint_as_float(w[k] & 0xFFFF0000u);
    }
  }
  lo = make_float4(f[0], f[1], f[2], f[3]);
  hi = make_float4(f[4], f[5], f[6], f[7]);
}

/// An f16's bits as a double, exactly (cvt.f64.f16).
__device__ __forceinline__ double f16_to_double(unsigned short bits) {
  double d;
  asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"(bits));
  return d;
}

/// A thread's round of f16 loads (kUnroll vectors of 8) added as one input, its exact fp64 sum,
/// when no element is an infinity or NaN: every finite f16 is a multiple of 2^-24 below 2^16 in
/// magnitude, so every partial sum of up to 32 of them is a multiple of 2^-24 below 2^21, which
/// fp64's 53 bits hold in any order, whatever the exponents (no spread test, unlike add_group;
/// the sign of an exact zero as there). The test is on the bits, two halves a word: an exponent
/// field of all ones (0x7C00) carries into bit 15 of its half when 0x0400 is added, and no
/// other field does, nor does a carry cross into the other half. Returns false (nothing added)
/// where some element is Inf or NaN; the caller then widens the round to floats. (Summing each
/// vector's 8 halves in float where exact, one conversion to double per vector instead of one
/// per element, measured slower on an H100: docs/performance.md 3.28.)
template <class Front, class Back, int kUnroll>
__device__ __forceinline__ bool add_f16_round(Front& front, Back& back, const uint4 (&v)[kUnroll]) {
  std::uint32_t special = 0;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    special |= ((v[u].x & 0x7C007C00u) + 0x04000400u) | ((v[u].y & 0x7C007C00u) + 0x04000400u) |
               ((v[u].z & 0x7C007C00u) + 0x04000400u) | ((v[u].w & 0x7C007C00u) + 0x04000400u);
  }
  if ((special & 0x80008000u) != 0) return false;
  double s[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::uint32_t w[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
    double p[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      p[k] = f16_to_double(static_cast<unsigned short>(w[k] & 0xFFFFu)) +
             f16_to_double(static_cast<unsigned short>(w[k] >> 16));
    }
    s[u] = (p[0] + p[1]) + (p[2] + p[3]);
  }
#pragma unroll
  for (int width = 1; width < kUnroll; width *= 2) {
#pragma unroll
    for (int u = 0; u + width < kUnroll; u += 2 * width) s[u] += s[u + width];
  }
  front.add_exact_sum(s[0], back);
  return true;
}

/// A thread's round of bf16 loads (kUnroll vectors of 8) added as one input, its exact fp64
/// sum, when its nonzero elements are normal and within exact_group_spread(8 kUnroll, 8) binades
/// of each other (add_group's test on bfloat16's 8-bit significands), with the test on the
/// loaded words, two halves at once: per lane, x = (w | 0x80008000) - 0x00010001 is 0x8000 +
/// m - 1 for a magnitude m >= 1 and 0x7FFF for a zero (the guard bit keeps a borrow from
/// crossing lanes), so the lanes' signed minimum is the smallest nonzero magnitude (zeros are the
/// largest signed value) and their unsigned maximum the largest: two packed 16-bit min/max a
/// word, where add_group takes a mask, a subtract-min and half a max per widened float (the
/// integer instructions that bound bf16 on the H200: 0.85 -> 0.88x CUB at 2^24, 0.90 -> 0.93x at
/// 2^25, docs/performance.md 3.29). A round of zeros goes too (its sum's sign as add_group's).
/// Returns false (nothing added) otherwise; the caller then widens the round to floats
/// (add_group, which exact_wide's two sums may still take, or element by element).
template <class Front, class Back, int kUnroll>
__device__ __forceinline__ bool add_bf16_round(Front& front, Back& back,
                                               const uint4 (&v)[kUnroll]) {
  constexpr unsigned kSpread = exact_group_spread(8 * kUnroll, 8);
  unsigned lo = 0x7FFF7FFFu;  // the lanes' signed minimum of x
  unsigned hi = 0;            // the lanes' unsigned maximum of x
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const unsigned w[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const unsigned x = (w[k] | 0x80008000u) - 0x00010001u;
      asm("min.s16x2 %0, %0, %1;" : "+r"(lo) : "r"(x));
      asm("max.u16x2 %0, %0, %1;" : "+r"(hi) : "r"(x));
    }
  }
  const int lo_lane = min(static_cast<int>(static_cast<short>(lo & 0xFFFFu)),
                          static_cast<int>(static_cast<short>(lo >> 16)));
  const unsigned hi_lane = max(hi & 0xFFFFu, hi >> 16);
  if (hi_lane >= 0x8000u) {  // some element is not a zero
    const unsigned m_lo = static_cast<unsigned>(lo_lane + 0x8000) + 1u;
    const unsigned m_hi = hi_lane - 0x7FFFu;
    if (m_lo < 0x0080u || m_hi >= 0x7F80u || (m_hi >> 7) - (m_lo >> 7) > kSpread) return false;
  }
  float4 f[2 * kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) widen<__nv_bfloat16>(v[u], f[2 * u], f[2 * u + 1]);
  add_round_sum(front, back, f);
  return true;
}

__device__ __forceinline__ std::int64_t warp_sum(std::int64_t v) {
  long long x = v;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xFFFFFFFFu, x, o);
  return x;
}

/// The warp's sum of values whose sum is below 2^62 in magnitude, each below 2^57 (the finish's
/// sums of slot words): from sm_80 on three warp reductions of 16-, 16- and 32-bit pieces
/// (v = high · 2^32 + mid · 2^16 + low, high the floor; |high| < 2^25, so its sum fits an int)
/// instead of warp_sum's ten shuffles.
__device__ __forceinline__ std::int64_t warp_sum_wide(std::int64_t v) {
#if __CUDA_ARCH__ >= 800
  const auto low = static_cast<unsigned>(v & 0xFFFF);
  const auto mid = static_cast<unsigned>((v >> 16) & 0xFFFF);
  const auto high = static_cast<int>(v >> 32);
  const unsigned low_sum = __reduce_add_sync(0xFFFFFFFFu, low);
  const unsigned mid_sum = __reduce_add_sync(0xFFFFFFFFu, mid);
  const int high_sum = __reduce_add_sync(0xFFFFFFFFu, high);
  return static_cast<std::int64_t>(high_sum) * 4294967296LL +
         static_cast<std::int64_t>(mid_sum) * 65536 + low_sum;
#else
  return warp_sum(v);
#endif
}

/// A ticket taken with acquire-release semantics at GPU scope (see exact_sum_blocks).
__device__ __forceinline__ unsigned take_ticket(unsigned* ticket) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(ticket) : "memory");
  return old;
}

// Warp reductions: one REDUX instruction from sm_80 on, shuffles before.
__device__ __forceinline__ std::uint32_t warp_or(std::uint32_t v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_or_sync(0xFFFFFFFFu, v);
#else
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v |= __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
#endif
}

__device__ __forceinline__ int warp_min(int v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync(0xFFFFFFFFu, v);
#else
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  return v;
#endif
}

__device__ __forceinline__ int warp_max(int v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(0xFFFFFFFFu, v);
#else
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  return v;
#endif
}

/// The warp's sum of values of magnitude below 2^32 (an add's parts): from sm_80 on two warp
/// reductions of their 16-bit halves (each sum below 2^21) instead of warp_sum's ten shuffles.
__device__ __forceinline__ std::int64_t warp_sum_part(std::int64_t v) {
#if __CUDA_ARCH__ >= 800
  const auto low = static_cast<unsigned>(v & 0xFFFF);
  const auto high = static_cast<int>(v >> 16);  // floor division: v = high * 2^16 + low
  const unsigned low_sum = __reduce_add_sync(0xFFFFFFFFu, low);
  const int high_sum = __reduce_add_sync(0xFFFFFFFFu, high);
  return static_cast<std::int64_t>(high_sum) * 65536 + low_sum;
#else
  return warp_sum(v);
#endif
}

/// The chunks behind a thread's expansion (the `back` its adds spill into) and the specials'
/// flags. In local memory (Residence::memory, double's 66 chunks) the chunks are made, zeroed,
/// at the first spill only: most threads never spill, and zeroing 528 bytes at every thread's
/// start wrote as many bytes of local memory as a thread reads of the input at 2^23 doubles. In
/// registers (float's 11) they are made at once: zeroing registers costs nothing.
template <class T, Residence R>
class SpillStore {
 public:
  using Store = Kulisch<T>;

  __device__ SpillStore() {
    if constexpr (R == Residence::registers) make();
  }

  template <Residence>
  __device__ __forceinline__ void add_double(double v) {
    if (!made_) make();
    u_.store.template add_double<R>(v);
  }
  __device__ __forceinline__ void add_flags(std::uint32_t flags) { flags_ |= flags; }

  /// Whether an add reached the chunks (else they are zero, or not made).
  __device__ __forceinline__ bool live() const {
    if constexpr (R == Residence::registers) {
      return u_.store.pending() != 0;
    } else {
      return made_;
    }
  }
  /// The chunks; only where live() (in registers: always).
  __device__ __forceinline__ Store& store() { return u_.store; }
  __device__ __forceinline__ std::uint32_t flags() const { return flags_; }

 private:
  __device__ __forceinline__ void make() {
    ::new (static_cast<void*>(&u_.store)) Store();
    made_ = true;
  }

  union Storage {
    __device__ Storage() {}
    Store store;
  } u_;
  bool made_ = false;
  std::uint32_t flags_ = 0;
};

/// Words of a state in the workspace: the chunks, then the flags.
template <class T>
inline constexpr int kSlotWords = Format<T>::kChunks + 1;

/// The shared memory of a block's merge and of a finish.
template <class T, int kWarps>
struct MergeStorage {
  std::int64_t warp_words[kWarps][kSlotWords<T>];
  std::int64_t words[kSlotWords<T>];
  /// The finish's magnitude words (round_sums), two zero words above them.
  std::uint32_t magnitude[Format<T>::kChunks + 3];
  /// The finish's union of the slots' ranges and flags; the block merge's range.
  int lo;
  int hi;
  unsigned flags;
  bool last;
  /// The first pass's next tile of the block's share (exact_sum_blocks' main loop), or for the
  /// half types the count of the tiles its warps have taken (take_tile): the float and double
  /// loops ran 1-2 % slower at 2^25-2^27 with the 32-bit count (H200, exact_phases), the halves'
  /// 3-6 % faster.
  union {
    unsigned long long next_tile;
    unsigned tiles_taken;
  };
};

/// The warp's function from the carry into a lane's words to the carry out of them, each carry
/// in {-1, 0, 1}: f(c) + 1 in bits 2(c + 1) and 2(c + 1) + 1.
__device__ __forceinline__ int carry_of(unsigned f, int c) {
  return static_cast<int>((f >> (2 * (c + 1))) & 3u) - 1;
}

/// g after f.
__device__ __forceinline__ unsigned compose(unsigned g, unsigned f) {
  unsigned r = 0;
#pragma unroll
  for (int c = -1; c <= 1; ++c)
    r |= static_cast<unsigned>(carry_of(g, carry_of(f, c)) + 1) << (2 * (c + 1));
  return r;
}

/// Rounds the value whose chunk sums are smem.words[0..kChunks) (each at most 2^62 in magnitude;
/// zero outside lo..hi) with the flags smem.words[kChunks] into *out: warp 0 alone, in registers,
/// lane l holding the contiguous words l·kPer... (double: 66 words, 3 a lane). Two parallel carry
/// steps bring every word below the top into [-1, 2^32], so that the carries left are -1, 0 or 1;
/// each lane's function from carry in to carry out (three runs over its words) is composed across
/// the warp by a scan (Kogge-Stone: five shuffles), which gives every lane its carry in, and one
/// more run leaves the normalised chunks (words in [0, 2^32), the top signed): the state a
/// thread's Kulisch::normalise would leave, without its 66 steps one after another. The
/// magnitude follows word by word (-V = ~V + 1: the +1 stops at the lowest nonzero word), votes
/// find its highest nonzero word and whether any lies below the rounding window, and lane 0
/// rounds the window (Kulisch::round_magnitude, the host's code). Before: thread 0 normalised and
/// rounded the 66 chunks alone, 16 us of the H100's time for a double (7.5 for a float).
template <class T, int kWarps>
__device__ void round_sums(MergeStorage<T, kWarps>& smem, T* out, int lo, int hi) {
  using Store = Kulisch<T>;
  constexpr int K = Store::kChunks;
  constexpr int kPer = (K + 31) / 32;
  constexpr int kTop = K - 1;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const auto flags = static_cast<std::uint32_t>(smem.words[K]);
  // Where the nonzero words are few (random data's sums: 2-4 words), lane 0 carries and rounds
  // them alone (Kulisch::round_narrow): a few hundred cycles against the scan's 2000 (H100,
  // bench/experiments/exact_phases.cu).
  if (Store::narrow(lo, hi)) {
    if (lane == 0) {
      T result;
      Store::round_narrow(smem.words, lo, hi, flags, result);
      *out = result;
    }
    return;
  }
  if (T special; Store::special(flags, special)) {
    if (lane == 0) *out = special;
    return;
  }
  std::int64_t x[kPer];
#pragma unroll
  for (int m = 0; m < kPer; ++m) {
    const int j = lane * kPer + m;
    x[m] = j < K ? smem.words[j] : 0;
  }
  // Two carry steps: |x| <= 2^62 gives words of [-2^30, 2^32 + 2^30), then of [-1, 2^32].
#pragma unroll
  for (int step = 0; step < 2; ++step) {
    std::int64_t hi[kPer];
#pragma unroll
    for (int m = 0; m < kPer; ++m) {
      const int j = lane * kPer + m;
      hi[m] = j < kTop ? x[m] >> 32 : 0;  // floor division
      if (j < kTop) x[m] &= 0xFFFFFFFF;
    }
    const std::int64_t from_below =
        __shfl_up_sync(0xFFFFFFFFu, static_cast<long long>(hi[kPer - 1]), 1);
#pragma unroll
    for (int m = 0; m < kPer; ++m) x[m] += m > 0 ? hi[m - 1] : (lane > 0 ? from_below : 0);
  }
  // The lane's carry function, then the scan.
  const auto run = [&](int c) {
#pragma unroll
    for (int m = 0; m < kPer; ++m) {
      const int j = lane * kPer + m;
      if (j < kTop) {
        c = static_cast<int>((x[m] + c) >> 32);
      } else if (j == kTop) {
        c = 0;  // the top keeps what comes in
      }
    }
    return c;
  };
  unsigned f = 0;
#pragma unroll
  for (int c = -1; c <= 1; ++c) f |= static_cast<unsigned>(run(c) + 1) << (2 * (c + 1));
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned below = __shfl_up_sync(0xFFFFFFFFu, f, d);
    if (lane >= d) f = compose(f, below);
  }
  const unsigned before = __shfl_up_sync(0xFFFFFFFFu, f, 1);
  int c = lane > 0 ? carry_of(before, 0) : 0;
#pragma unroll
  for (int m = 0; m < kPer; ++m) {
    const int j = lane * kPer + m;
    if (j < kTop) {
      const std::int64_t t = x[m] + c;
      x[m] = t & 0xFFFFFFFF;
      c = static_cast<int>(t >> 32);
    } else if (j == kTop) {
      x[m] += c;
      c = 0;
    }
  }
  // The sign is the top's; the magnitude's words.
  constexpr int kTopLane = kTop / kPer;
  constexpr int kTopSlot = kTop % kPer;
  const std::int64_t top = __shfl_sync(0xFFFFFFFFu, static_cast<long long>(x[kTopSlot]), kTopLane);
  const bool negative = top < 0;
  int lowest = 1 << 30;
#pragma unroll
  for (int m = kPer - 1; m >= 0; --m) {
    const int j = lane * kPer + m;
    if (j < K && x[m] != 0) lowest = j;
  }
  lowest = warp_min(lowest);
  int highest = -1;
  std::uint32_t mag[kPer];  // the magnitude's words below the top
#pragma unroll
  for (int m = 0; m < kPer; ++m) {
    const int j = lane * kPer + m;
    mag[m] = 0;
    if (j < kTop) {
      const auto w = static_cast<std::uint32_t>(x[m]);
      mag[m] = !negative ? w : (j < lowest ? 0u : (j == lowest ? 0u - w : ~w));
      smem.magnitude[j] = mag[m];
      if (mag[m] != 0) highest = j;
    } else if (j == kTop) {
      const auto t = static_cast<std::uint64_t>(x[m]);
      const std::uint64_t top_mag = !negative ? t : (lowest == kTop ? 0 - t : ~t);
      smem.magnitude[kTop] = static_cast<std::uint32_t>(top_mag);
      smem.magnitude[K] = static_cast<std::uint32_t>(top_mag >> 32);
      smem.magnitude[K + 1] = 0;
      smem.magnitude[K + 2] = 0;
      if (static_cast<std::uint32_t>(top_mag) != 0) highest = kTop;
      if ((top_mag >> 32) != 0) highest = K;
    }
  }
  highest = warp_max(highest);
  if (highest < 0) {
    if (lane == 0) *out = Store::zero(flags);
    return;
  }
  // The top's words are never below the window (it is at most 4 words below the highest).
  bool below = false;
#pragma unroll
  for (int m = 0; m < kPer; ++m) {
    const int j = lane * kPer + m;
    if (j < kTop && j < highest - 4) below = below || mag[m] != 0;
  }
  below = __any_sync(0xFFFFFFFFu, below);
  __syncwarp();
  if (lane == 0) {
    std::uint32_t window[Store::kWindowWords] = {};
#pragma unroll
    for (int k = 0; k < Store::kWindowWords; ++k) {
      const int j = highest - 4 + k;
      window[k] = j >= 0 ? smem.magnitude[j] : 0;
    }
    *out = Store::round_magnitude(window, highest, below, negative);
  }
}

/// A slot's last word: the block's flags in bits 0..31 and, if any chunk word is nonzero, the
/// range of its nonzero words: the lowest in bits 32..39, the highest in bits 40..47, bit 48 set.
/// The finish sums only the words inside the union of the ranges (the others are zero in every
/// slot): a few of a double's 66 for most inputs.
__device__ __forceinline__ std::int64_t slot_tail(std::uint32_t flags, int lo, int hi) {
  std::uint64_t t = flags;
  if (hi >= 0) {
    t |= static_cast<std::uint64_t>(lo) << 32 | static_cast<std::uint64_t>(hi) << 40 |
         std::uint64_t{1} << 48;
  }
  return static_cast<std::int64_t>(t);
}

/// What exact_sum_blocks does at the boundaries of its phases: nothing. Every thread calls
/// at(phase) with 0 at its start, 1 after its share of the input, 2 after the warps' sums are in
/// shared memory, 3 after the block's words are added into the accumulator (single_pass, more
/// than one block; two_pass: in shared memory), 4 after the ticket, 5 after the last block's
/// finish (finish_accumulated, warp 0: 6 at its start, 7 after the accumulator's words are
/// taken and their range known, 8 before round_sums; finish_slots: 6 after its shared words
/// are zero, 7 after the tails' union is known, 8 before round_sums);
/// bench/experiments/exact_phases.cu times the phases with a probe of its own (another
/// instance: the library's kernels are these).
struct NoProbe {
  __device__ static void at(int) {}
};

/// Adds the rows lo..hi of the slots (word w of every block's slot) into smem.words[w]: the
/// warps take (word, share of the blocks) items, several warps a word when the rows are fewer
/// than the warps, so that a lane has few loads and all of them in flight.
template <class T, int kWarps>
__device__ __forceinline__ void sum_rows(const std::int64_t* slots, unsigned blocks, int lo, int hi,
                                         MergeStorage<T, kWarps>& smem) {
  const int range = hi - lo + 1;
  if (range <= 0) return;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int shares = range >= kWarps ? 1 : kWarps / range;
  for (int item = warp; item < range * shares; item += kWarps) {
    const int w = lo + item % range;
    const unsigned first = static_cast<unsigned>(item / range) * 32 + static_cast<unsigned>(lane);
    const unsigned step = 32u * static_cast<unsigned>(shares);
    const std::int64_t* row = slots + static_cast<std::uint64_t>(w) * blocks;
    // Four loads a lane at once, the last four predicated: a remainder loop would wait for each
    // load before the next (a grid of 264 blocks leaves 1-2 a lane, the whole of the work).
    std::int64_t acc = 0;
    unsigned b = first;
    for (; b + 3 * step < blocks; b += 4 * step) {
      acc += __ldcg(row + b) + __ldcg(row + b + step) + __ldcg(row + b + 2 * step) +
             __ldcg(row + b + 3 * step);
    }
    std::int64_t rest[3];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      const unsigned c = b + static_cast<unsigned>(k) * step;
      rest[k] = c < blocks ? __ldcg(row + c) : 0;
    }
    acc = warp_sum_wide(acc + rest[0] + rest[1] + rest[2]);
    if (lane == 0) {
      atomicAdd(reinterpret_cast<unsigned long long*>(&smem.words[w]),
                static_cast<unsigned long long>(acc));  // two's complement: a signed sum
    }
  }
}

/// two_pass's finish: the slots of \p blocks states (word w of slot b at slots[w * blocks + b])
/// summed, read back and rounded into *out. Every thread of the block calls it. Loads bypass
/// L1 (__ldcg): another kernel wrote the slots. Which words can be nonzero is in the slots'
/// tails (slot_tail: flags and ranges): the union of their ranges is summed (sum_rows), and
/// round_sums does the rest.
template <class T, int kThreads, class Probe = NoProbe>
__device__ void finish_slots(const std::int64_t* slots, unsigned blocks, T* out,
                             MergeStorage<T, kThreads / 32>& smem) {
  constexpr int kWords = kSlotWords<T>;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (threadIdx.x == 0) {
    smem.flags = 0;
    smem.lo = kWords;
    smem.hi = -1;
  }
  for (int w = static_cast<int>(threadIdx.x); w < kWords; w += kThreads) smem.words[w] = 0;
  __syncthreads();
  Probe::at(6);
  const std::int64_t* tails = slots + static_cast<std::uint64_t>(kWords - 1) * blocks;
  std::uint32_t flags = 0;
  int lo = kWords;
  int hi = -1;
#pragma unroll 4
  for (unsigned b = threadIdx.x; b < blocks; b += kThreads) {
    const auto t = static_cast<std::uint64_t>(__ldcg(tails + b));
    flags |= static_cast<std::uint32_t>(t);
    if ((t >> 48) & 1) {
      lo = min(lo, static_cast<int>((t >> 32) & 0xFF));
      hi = max(hi, static_cast<int>((t >> 40) & 0xFF));
    }
  }
  flags = warp_or(flags);
  lo = warp_min(lo);
  hi = warp_max(hi);
  if (lane == 0) {
    atomicOr(&smem.flags, flags);
    atomicMin(&smem.lo, lo);
    atomicMax(&smem.hi, hi);
  }
  __syncthreads();
  Probe::at(7);
  lo = smem.lo;
  hi = smem.hi;  // lo > hi for a sum of zeros
  sum_rows<T>(slots, blocks, lo, hi, smem);
  if (threadIdx.x == 0) smem.words[kWords - 1] = smem.flags;
  __syncthreads();
  Probe::at(8);
  if (threadIdx.x < 32) round_sums(smem, out, lo, hi);
}

/// single_pass's accumulator: the slot-sized row of 8-byte words (the chunks' sums, then the
/// flags) after the ticket's 8 bytes, zero on entry and left zero (exact/temp_size.hpp's
/// finish_bytes from the ticket on; the ticket 8-byte aligned).
__device__ __forceinline__ std::int64_t* accumulator_of(unsigned* ticket) {
  return reinterpret_cast<std::int64_t*>(ticket) + 1;
}

/// single_pass's finish, by warp 0 of the last block: every block's words are in \p acc (their
/// sums, each at most 2^62 in magnitude as the slots' sums in finish_slots, and the OR of their
/// flags). The warp takes them, each exchanged for zero (the next launch finds the row zero), in
/// one round of L2 latency, finds the range of the nonzero chunk words with two warp reductions,
/// and rounds (round_sums).
template <class T, class Probe, int kWarps>
__device__ __forceinline__ void finish_accumulated(std::int64_t* acc, T* out,
                                                   MergeStorage<T, kWarps>& smem) {
  constexpr int K = Format<T>::kChunks;
  constexpr int kPer = (K + 1 + 31) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  Probe::at(6);
  int lo = K;
  int hi = -1;
#pragma unroll
  for (int m = 0; m < kPer; ++m) {
    const int j = m * 32 + lane;
    if (j <= K) {
      const auto x = static_cast<std::int64_t>(
          atomicExch(reinterpret_cast<unsigned long long*>(acc + j), 0ull));
      smem.words[j] = x;
      if (j < K && x != 0) {
        lo = min(lo, j);
        hi = max(hi, j);
      }
    }
  }
  lo = warp_min(lo);
  hi = warp_max(hi);  // lo > hi for a sum of zeros
  Probe::at(7);
  __syncwarp();
  Probe::at(8);
  round_sums(smem, out, lo, hi);
}

/// Moves the warp's \p tile to the next one of its block's share, taken from the block's
/// counter (add_half_tiles). Tiles are handed out in order, so a warp's next is after
/// its last and less than 2^32 tiles after it: the 32-bit count's difference from the last, added,
/// gives the 64-bit tile. (A 32-bit count is a native shared-memory atomic add; a 64-bit one is a
/// compare-and-swap loop, about five tries a tile with 16 warps on an H100, in the path from a
/// tile's loads to the next's.)
template <int kWarps>
__device__ __forceinline__ void take_tile(unsigned& counter, std::uint64_t& tile) {
  unsigned taken = 0;
  if ((threadIdx.x & 31) == 0) taken = atomicAdd(&counter, 1u);
  taken = __shfl_sync(0xFFFFFFFFu, taken, 0);
  tile += static_cast<std::uint32_t>(taken + kWarps - static_cast<std::uint32_t>(tile));
}

/// The half types' share of exact_sum_blocks' main loop: the warp's tiles from \p i on (its
/// current tile \p tile; \p tiles_taken the block's counter, \p first_vector a tile's first
/// vector), each a round of kUnroll vectors of eight halves a lane. With \p kAhead the next
/// tile's loads are issued before this tile's adds (a warp has a tile in flight while it adds: the
/// half types have twice the elements of a float load to add, and waiting for memory once a tile
/// cost them 3-10 % at 2^24-2^26 on the H200); the caller asks for it where two tiles' loads fit
/// the registers beside the accumulator. The warp's last tile (every later one is empty) may
/// lack some vectors: a prefix of its vectors in each lane (none in the lanes past the end), the
/// rest -0s, which every sum takes as its identity (the sign of an exact zero's rule included), so
/// that it goes the rounds' way too; element by element, it made the blocks that had one end up
/// to 2.5 µs after the others (H200, f16, 2^24: exact_phases). An f16 round with no infinity or
/// NaN is one exact fp64 sum (add_f16_round), a bf16 round within the spread bound too
/// (add_bf16_round); other rounds are widened to floats and go add_group's way with the input's
/// precision, or element by element.
template <class In, int kWarps, int kUnroll, bool kAhead, class Front, class Back,
          class FirstVector>
__device__ __forceinline__ void add_half_tiles(Front& front, Back& back, const uint4* body,
                                               std::uint64_t vectors, std::uint64_t stride,
                                               unsigned& tiles_taken, std::uint64_t& tile,
                                               std::uint64_t i, const FirstVector& first_vector) {
  using T = float;
  const unsigned lane = threadIdx.x & 31;
  const auto add_tile = [&](const uint4(&v)[kUnroll]) {
    if constexpr (std::is_same_v<In, __half>) {
      if (add_f16_round(front, back, v)) return;
    } else {
      if (add_bf16_round(front, back, v)) return;
    }
    // Eight halves a load, widened to two float4: the float path's rounds of 8 to 32 floats.
    float4 f[2 * kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) widen<In>(v[u], f[2 * u], f[2 * u + 1]);
    if (!add_group<kInputPrecision<In>>(front, back, f))
      add_elements<T>(front, back, f, 8 * kUnroll);
  };
  // Whether the tile at \p at has a vector (its lane 0's first) and all of them (lane 31's
  // last): warp-uniform.
  const auto nonempty = [&](std::uint64_t at) { return at - lane < vectors; };
  const auto full = [&](std::uint64_t at) {
    return at + (31 - lane) + (kUnroll - 1) * stride < vectors;
  };
  const auto load_tile = [&](uint4(&v)[kUnroll], std::uint64_t at) {
    if (full(at)) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(body + at + u * stride);
    } else {
      const uint4 zeros = make_uint4(0x80008000u, 0x80008000u, 0x80008000u, 0x80008000u);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        v[u] = at + u * stride < vectors ? __ldg(body + at + u * stride) : zeros;
      }
    }
  };
  const auto claim = [&] {
    take_tile<kWarps>(tiles_taken, tile);
    return first_vector(tile);
  };
  if constexpr (kAhead) {
    bool more = nonempty(i);
    uint4 v[kUnroll];
    if (more) load_tile(v, i);
    while (more) {
      i = claim();
      more = nonempty(i);
      uint4 ahead[kUnroll];
      if (more) load_tile(ahead, i);
      add_tile(v);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = ahead[u];
    }
  } else {
    while (nonempty(i)) {
      uint4 v[kUnroll];
      load_tile(v, i);
      i = claim();  // while the loads are in flight
      add_tile(v);
    }
  }
}

/// The exact sum's first pass (see the top of this file). The input is in[0, n) of \p In
/// (float, double, or a half type summed as floats: AccumOf): \p head elements before the first
/// kVector-aligned vector, \p vectors vectors, then the rest of n.
/// \p ticket: null for two_pass; for single_pass the ticket and accumulator
/// (exact/temp_size.hpp's finish_bytes, 8-byte aligned), zero, which the last block leaves
/// zero once it has rounded the result into *out.
template <class In, int kThreads, int kVector, int kUnroll, int kExpansion, Residence kResidence,
          int kMinBlocks = 1024 / kThreads, class Probe = NoProbe>
// 1024 / kThreads blocks a multiprocessor: at most 64 registers, two blocks of 512 threads.
// Without it, chunks in registers took 76-84 (one block of 512) once add_elements looped, and
// ran slower at 2^23-2^24 on the H100 (docs/performance.md 3.19). (kMinBlocks: the experiment
// bench/experiments/exact_bounds.cu tries others; every compiled first pass has the default.)
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    exact_sum_blocks(const In* __restrict__ in, std::uint64_t n, std::uint64_t head,
                     std::uint64_t vectors, std::int64_t* __restrict__ slots, unsigned* ticket,
                     AccumOf<In>* out) {
  using T = AccumOf<In>;
  using Front = Expansion<T, kExpansion, kResidence>;
  using Store = typename Front::Store;
  using Parts = typename Store::Parts;
  using Vector = typename VectorOf<In, kVector>::type;
  constexpr int kWarps = kThreads / 32;
  constexpr int kWords = kSlotWords<T>;
  static_assert(kThreads % 32 == 0 && kWarps >= 1 && kThreads >= kWords);
  __shared__ MergeStorage<T, kWarps> smem;

  // The expansion and the chunks as two variables, so that the K doubles stay in registers
  // (see Expansion in exact/accumulator.hpp).
  Probe::at(0);
  if (threadIdx.x == 0) {
    if constexpr (is_half_input_v<In>) {
      smem.tiles_taken = 0;
    } else {
      smem.next_tile = 0;
    }
  }
  __syncthreads();
  Front front;
  SpillStore<T, kResidence> back;
  const std::uint64_t thread = blockIdx.x * std::uint64_t{kThreads} + threadIdx.x;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kThreads;
  // The scalar elements around the vectors: fewer than 2 * kVector, at most one before and one
  // after them a thread, in a loop of one add site (see add_elements).
  const std::uint64_t tail_start = head + vectors * kVector;
#pragma unroll 1
  for (int side = 0; side < 2; ++side) {
    if (side == 0 ? thread < head : thread < n - tail_start) {
      front.add(load_element(in + (side == 0 ? thread : tail_start + thread)), back);
    }
  }
  // The vectors: the block's share of the grid's rounds (round r gives lane l of the block's
  // warp slot w the vectors r * round + u * stride + block * kThreads + 32 w + l, u < kUnroll),
  // taken by the block's warps one (round, slot) tile at a time from a counter in shared memory:
  // a warp that runs ahead takes more tiles, so the block's warps end together. With a fixed
  // share each, the slowest warp of a block ended 2-5 µs after the fastest (H100, f64, 2^24-2^26,
  // bench/experiments/exact_phases.cu), and the block's merge waits for it. Tiles are handed out
  // in order, and a tile that lacks a vector in lane 31 is a warp's last: every later tile of
  // the block is empty.
  const Vector* body = reinterpret_cast<const Vector*>(in + head);
  const std::uint64_t round = kUnroll * stride;
  const std::uint64_t lane_base =
      std::uint64_t{blockIdx.x} * kThreads + static_cast<unsigned>(threadIdx.x & 31);
  const auto first_vector = [&](std::uint64_t tile) {
    return (tile / kWarps) * round + lane_base + (tile % kWarps) * 32;
  };
  const std::uint64_t last_lane = 31 - (threadIdx.x & 31);  // from this lane to lane 31
  std::uint64_t tile = threadIdx.x >> 5;                    // each warp's first: its slot
  std::uint64_t i = first_vector(tile);
  if constexpr (is_half_input_v<In>) {
    // The next tile's loads ahead where both tiles fit 64 registers with no spill (ptxas -v):
    // not beside a second double, nor four vectors, nor two beside chunks in registers.
    constexpr bool kAhead = kExpansion == 1 && kUnroll <= 2 &&
                            (kResidence == Residence::memory || kUnroll == 1);
    add_half_tiles<In, kWarps, kUnroll, kAhead>(front, back, body, vectors, stride,
                                                smem.tiles_taken, tile, i, first_vector);
  } else {
    while (i + last_lane + (kUnroll - 1) * stride < vectors) {
      Vector v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(body + i + u * stride);
      // The next tile, while the loads are in flight.
      unsigned long long next = 0;
      if ((threadIdx.x & 31) == 0) next = atomicAdd(&smem.next_tile, 1ull) + kWarps;
      tile = __shfl_sync(0xFFFFFFFFu, next, 0);
      i = first_vector(tile);
      if constexpr (sizeof(T) == 4 && kVector * kUnroll >= 2) {
        if (add_group<kInputPrecision<In>>(front, back, v)) continue;
      } else if constexpr (sizeof(T) == 8) {
        if (add_round(front, back, v)) continue;
      }
      add_elements<T>(front, back, v, kVector * kUnroll);
    }
    // The warp's last tile: a prefix of its vectors in each lane (none in the lanes past the
    // end), their loads all issued before the adds, one wait for memory instead of one a vector.
    {
      Vector v[kUnroll];
      int loaded = 0;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (i + u * stride < vectors) {
          v[u] = __ldg(body + i + u * stride);
          loaded = u + 1;
        }
      }
      add_elements<T>(front, back, v, loaded * kVector);
    }
  }
  Probe::at(1);
  // The thread's sum: its expansion's K terms, plus its chunks if it spilled. The warp's sums
  // of the chunks gather in its row of shared memory: the spilled chunks (where a lane spilled),
  // then each term's parts over the chunks that term touches in some lane, one term at a time
  // (fewer registers than all terms' parts at once), each chunk's sum two warp reductions
  // (warp_sum_part).
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  std::int64_t* row = smem.warp_words[warp];
  for (int j = lane; j < Store::kChunks; j += 32) row[j] = 0;
  __syncwarp();
  const bool live = back.live();
  if (__any_sync(0xFFFFFFFFu, live)) {
    if (live) back.store().normalise();
#pragma unroll(Store::kUnrollChunks)
    for (int j = 0; j < Store::kChunks; ++j) {
      const std::int64_t c = warp_sum(live ? back.store().chunk(j) : 0);
      if (lane == 0) row[j] += c;
    }
  }
#pragma unroll
  for (int term = 0; term < kExpansion; ++term) {
    const Parts a = Store::double_parts(front.term(term));
    const int lo = warp_min(a.k != Store::kNoChunk ? a.k : Store::kChunks);
    const int hi = warp_max(a.k != Store::kNoChunk ? a.k + 2 : -1);
    const auto add_chunk = [&](int j) {
      const std::int64_t c = warp_sum_part((j == a.k ? a.a0 : 0) + (j == a.k + 1 ? a.a1 : 0) +
                                           (j == a.k + 2 ? a.a2 : 0));
      if (lane == 0) row[j] += c;
    };
    if constexpr (kResidence == Residence::registers) {
#pragma unroll
      for (int j = 0; j < Store::kChunks; ++j) {  // compile-time indices, as the chunks'
        if (j >= lo && j <= hi) add_chunk(j);
      }
    } else {
      for (int j = lo; j <= hi; ++j) add_chunk(j);
    }
  }
  const std::uint32_t flags = warp_or(back.flags() | front.sign_flags());
  if (lane == 0) smem.warp_words[warp][kWords - 1] = flags;
  if (threadIdx.x == 0) {
    smem.lo = kWords;
    smem.hi = -1;
  }
  __syncthreads();
  Probe::at(2);
  // The block's sums, one word a thread (kThreads >= kWords), with no carries: a thread adds at
  // most K + 1 words below 2^32 to a chunk, so a block's sums are below 2^43 and the finish's
  // sums over at most kMaxBlocks = 2^19 blocks below 2^62, which round_sums takes. Their range
  // (the lowest and highest nonzero word) goes into the slot's last word (slot_tail).
  const int w = static_cast<int>(threadIdx.x);
  std::int64_t s = 0;
  if (w < kWords) {
    for (int k = 0; k < kWarps; ++k) {
      s = w < kWords - 1 ? s + smem.warp_words[k][w] : (s | smem.warp_words[k][w]);
    }
  }
  // single_pass with more than one block: the words go into the accumulator beside the ticket
  // (a 64-bit reduction in L2 a nonzero word, an OR of the flags), and the last block to take
  // a ticket reads that one row (finish_accumulated) instead of every block's slot.
  if (ticket != nullptr && gridDim.x > 1) {
    std::int64_t* const acc = accumulator_of(ticket);
    if (w < Store::kChunks) {
      if (s != 0) {
        atomicAdd(reinterpret_cast<unsigned long long*>(acc + w),
                  static_cast<unsigned long long>(s));  // two's complement: a signed sum
      }
    } else if (w == Store::kChunks && s != 0) {
      atomicOr(reinterpret_cast<unsigned*>(acc + w), static_cast<unsigned>(s));
    }
    // The ticket: the barrier orders every word's reduction before thread 0's release
    // (cumulative at GPU scope), and the acquire of the block that takes the last ticket orders
    // them before its reads, which its threads make after the barrier that shares `last`.
    __syncthreads();
    Probe::at(3);
    if (threadIdx.x == 0) smem.last = take_ticket(ticket) == gridDim.x - 1;
    __syncthreads();
    Probe::at(4);
    if (!smem.last) return;
    if (threadIdx.x < 32) finish_accumulated<T, Probe>(acc, out, smem);
    // Every block has taken its ticket: zero again for the next launch (the accumulator's words
    // were zeroed as they were read), which a caller's counter (ExactLaunch::counter) needs, in
    // place of a memset before each call.
    if (threadIdx.x == 0) *ticket = 0;
    Probe::at(5);
    return;
  }
  if (w < Store::kChunks && s != 0) {
    atomicMin(&smem.lo, w);
    atomicMax(&smem.hi, w);
  }
  __syncthreads();
  Probe::at(3);
  if (w == kWords - 1) s = slot_tail(static_cast<std::uint32_t>(s), smem.lo, smem.hi);
  // One block (small n): its words are the sum; round them here, with no slot, ticket or
  // finish (the launcher enqueues neither the finish kernel nor the ticket's memset).
  if (gridDim.x == 1) {
    if (w < kWords) smem.words[w] = s;  // the flags word's high bits (the range) are ignored
    __syncthreads();
    if (w < 32) round_sums(smem, out, smem.lo, smem.hi);
    return;
  }
  // two_pass: every word's thread stores it (word w of the block's slot at
  // slots[w * grid + block]) for exact_sum_finish.
  if (w < kWords) slots[std::uint64_t{gridDim.x} * static_cast<unsigned>(w) + blockIdx.x] = s;
}

/// two_pass's second kernel: one block of kThreads.
template <class T, int kThreads>
__global__ void __launch_bounds__(kThreads)
    exact_sum_finish(const std::int64_t* __restrict__ slots, unsigned blocks, T* out) {
  __shared__ MergeStorage<T, kThreads / 32> smem;
  finish_slots<T, kThreads>(slots, blocks, out, smem);
}

}  // namespace tunedreduce::exact::detail
