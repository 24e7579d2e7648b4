#pragma once
// The exact sums' kernels (issue 16), launched by exact/sum_kernels.cu's exact_sum.
//
// exact_sum_blocks: each thread adds a grid-stride share of the input into its own exact
// accumulator (exact/accumulator.hpp), held as two variables: the Expansion of K doubles, in
// registers, and the SpillStore of chunks behind it (registers or local memory, made at the first
// spill when local). The block then sums its threads' values as chunk words (warp shuffles, then
// shared memory: plain int64 sums, no carry): each thread's expansion terms as the parts an add
// would put into the chunks, over the chunks some lane's term touches, plus the normalised chunks
// of the threads that spilled; it ORs their flags, carries that sum twice in parallel (one
// thread a word: every chunk word but the top ends in [-1, 2^32]) and stores it to its slot of
// the workspace, one word a thread. exact_sum_finish (two_pass), or the last block of
// exact_sum_blocks to take a ticket (single_pass), adds the slots word by word, reads the sums
// back as one state and rounds it once.
//
// Why the bits never depend on the configuration: every step is exact integer arithmetic on
// one value (the accumulator's add and normalise are exact, integer sums are associative and
// commutative, OR is too), the normalised form of a value is unique, and the rounding happens
// once, on that value. Magnitudes stay far from overflow: a thread adds at most K + 1 words
// below 2^32 to a chunk (its normalised chunk, one part of each term), so a block's sums are
// below 2^43, its carried words in [-1, 2^32], and their sums over 2^30 blocks at most 2^62,
// which is what Kulisch::from_chunks accepts.

#include <cuda_runtime.h>

#include <cstdint>
#include <new>

#include "exact/accumulator.hpp"

namespace tunedreduce::exact::detail {

template <class T, int V>
struct VectorOf;
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

template <class Front, class Back>
__device__ __forceinline__ void add_vector(Front& front, Back& back, float x) {
  front.add(x, back);
}
template <class Front, class Back>
__device__ __forceinline__ void add_vector(Front& front, Back& back, float2 v) {
  front.add(v.x, back);
  front.add(v.y, back);
}
template <class Front, class Back>
__device__ __forceinline__ void add_vector(Front& front, Back& back, float4 v) {
  front.add(v.x, back);
  front.add(v.y, back);
  front.add(v.z, back);
  front.add(v.w, back);
}
template <class Front, class Back>
__device__ __forceinline__ void add_vector(Front& front, Back& back, double x) {
  front.add(x, back);
}
template <class Front, class Back>
__device__ __forceinline__ void add_vector(Front& front, Back& back, double2 v) {
  front.add(v.x, back);
  front.add(v.y, back);
}

__device__ __forceinline__ std::int64_t warp_sum(std::int64_t v) {
  long long x = v;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xFFFFFFFFu, x, o);
  return x;
}

__device__ __forceinline__ std::uint32_t warp_or(std::uint32_t v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v |= __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
}

__device__ __forceinline__ int warp_min(int v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  return v;
}

__device__ __forceinline__ int warp_max(int v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  return v;
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
  bool last;
};

/// The slots of \p blocks states (word w of slot b at slots[w * blocks + b]) summed, read back
/// and rounded by thread 0 into *out. Every thread of the block calls it. Loads bypass L1
/// (__ldcg): in single_pass the other blocks wrote the slots during this kernel.
template <class T, int kThreads>
__device__ void finish_slots(const std::int64_t* slots, unsigned blocks, T* out,
                             MergeStorage<T, kThreads / 32>& smem) {
  using Store = Kulisch<T>;
  constexpr int kWords = kSlotWords<T>;
  constexpr int kWarps = kThreads / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  // Warp `warp` sums words warp, warp + kWarps, ...: up to four of them in one pass over the
  // blocks, so that a lane has loads of several words in flight at once (a double's 67 words with
  // 16 warps: five a warp, two passes), not one word's loads after another's. Four, not all of
  // them: every instance inlines this for single_pass, and at 128 threads (17 words a warp) all at
  // once took the first pass from 48 to 108 registers.
  constexpr int kPerWarp = (kWords + kWarps - 1) / kWarps;
  constexpr int kGroup = kPerWarp < 4 ? kPerWarp : 4;
  for (int g = 0; g < kPerWarp; g += kGroup) {
    std::int64_t acc[kGroup] = {};
#pragma unroll 2
    for (unsigned b = static_cast<unsigned>(lane); b < blocks; b += 32) {
#pragma unroll
      for (int k = 0; k < kGroup; ++k) {
        const int w = warp + (g + k) * kWarps;
        if (w < kWords) {
          const std::int64_t x = __ldcg(slots + static_cast<std::uint64_t>(w) * blocks + b);
          acc[k] = w < Store::kChunks ? acc[k] + x : (acc[k] | x);
        }
      }
    }
#pragma unroll
    for (int k = 0; k < kGroup; ++k) {
      const int w = warp + (g + k) * kWarps;
      if (w < Store::kChunks) {
        const std::int64_t sum = warp_sum(acc[k]);
        if (lane == 0) smem.words[w] = sum;
      } else if (w < kWords) {
        const std::uint32_t f = warp_or(static_cast<std::uint32_t>(acc[k]));
        if (lane == 0) smem.words[w] = f;
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    Store sum = Store::from_chunks(smem.words, static_cast<std::uint32_t>(smem.words[kWords - 1]));
    sum.normalise();
    *out = sum.round();
  }
}

/// The exact sum's first pass (see the top of this file). The input is in[0, n): \p head
/// elements before the first kVector-aligned vector, \p vectors vectors, then the rest of n.
/// \p ticket: null for two_pass; for single_pass a zeroed counter, and the last block rounds
/// the result into *out and leaves the counter zero.
template <class T, int kThreads, int kVector, int kUnroll, int kExpansion, Residence kResidence>
__global__ void __launch_bounds__(kThreads)
    exact_sum_blocks(const T* __restrict__ in, std::uint64_t n, std::uint64_t head,
                     std::uint64_t vectors, std::int64_t* __restrict__ slots, unsigned* ticket,
                     T* out) {
  using Front = Expansion<T, kExpansion, kResidence>;
  using Store = typename Front::Store;
  using Parts = typename Store::Parts;
  using Vector = typename VectorOf<T, kVector>::type;
  constexpr int kWarps = kThreads / 32;
  constexpr int kWords = kSlotWords<T>;
  static_assert(kThreads % 32 == 0 && kWarps >= 1 && kThreads >= kWords);
  __shared__ MergeStorage<T, kWarps> smem;

  // The expansion and the chunks as two variables, so that the K doubles stay in registers
  // (see Expansion in exact/accumulator.hpp).
  Front front;
  SpillStore<T, kResidence> back;
  const std::uint64_t thread = blockIdx.x * std::uint64_t{kThreads} + threadIdx.x;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kThreads;
  // The scalar elements around the vectors: fewer than 2 * kVector, one per thread.
  const std::uint64_t tail_start = head + vectors * kVector;
  if (thread < head) front.add(__ldg(in + thread), back);
  if (thread < n - tail_start) front.add(__ldg(in + tail_start + thread), back);
  const Vector* body = reinterpret_cast<const Vector*>(in + head);
  std::uint64_t i = thread;
  if constexpr (kUnroll > 1) {
    for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
      Vector v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(body + i + u * stride);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) add_vector(front, back, v[u]);
    }
  }
  for (; i < vectors; i += stride) add_vector(front, back, __ldg(body + i));
  // The thread's sum: its expansion's K terms, plus its chunks if it spilled. The warp's sums
  // of the chunks gather in its row of shared memory: the spilled chunks (where a lane spilled),
  // then each term's parts over the chunks that term touches in some lane, one term at a time
  // (fewer registers than all terms' parts at once).
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
      const std::int64_t c =
          warp_sum((j == a.k ? a.a0 : 0) + (j == a.k + 1 ? a.a1 : 0) + (j == a.k + 2 ? a.a2 : 0));
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
  __syncthreads();
  // The block's sums, one word a thread (kThreads >= kWords), then two carry steps in parallel
  // (a word keeps its low 32 bits and takes its lower neighbour's carry): block sums below 2^43
  // become words of [-2^11, 2^32 + 2^11), then of [-1, 2^32], the top chunk taking what the
  // others carry out. The value is the same; the finish sums up to 2^30 such words (at most
  // 2^62) and normalises them once. No thread walks the 66 chunks of a double one by one.
  const int w = static_cast<int>(threadIdx.x);
  std::int64_t s = 0;
  if (w < kWords) {
    for (int k = 0; k < kWarps; ++k) {
      s = w < kWords - 1 ? s + smem.warp_words[k][w] : (s | smem.warp_words[k][w]);
    }
  }
#pragma unroll
  for (int step = 0; step < 2; ++step) {
    if (w < kWords) smem.words[w] = s;
    __syncthreads();
    if (w < Store::kChunks) {
      const std::int64_t carry = w > 0 ? smem.words[w - 1] >> 32 : 0;  // floor division
      s = (w < Store::kChunks - 1 ? (s & 0xFFFFFFFF) : s) + carry;
    }
    __syncthreads();
  }
  // Every word's thread stores it (word w of the block's slot at slots[w * grid + block]).
  if (w < kWords) {
    slots[std::uint64_t{gridDim.x} * static_cast<unsigned>(w) + blockIdx.x] = s;
    if (ticket != nullptr) __threadfence();  // the slot before the ticket: see below
  }
  if (ticket != nullptr) {
    __syncthreads();  // every word stored and fenced before the ticket is taken
    if (threadIdx.x == 0) smem.last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  if (ticket == nullptr) return;
  __syncthreads();
  if (!smem.last) return;
  __threadfence();
  finish_slots<T, kThreads>(slots, gridDim.x, out, smem);
  // Every block has taken its ticket: zero again for the next launch, which a caller's counter
  // (ExactLaunch::counter) needs, in place of a memset before each call.
  if (threadIdx.x == 0) *ticket = 0;
}

/// two_pass's second kernel: one block of kThreads.
template <class T, int kThreads>
__global__ void __launch_bounds__(kThreads)
    exact_sum_finish(const std::int64_t* __restrict__ slots, unsigned blocks, T* out) {
  __shared__ MergeStorage<T, kThreads / 32> smem;
  finish_slots<T, kThreads>(slots, blocks, out, smem);
}

}  // namespace tunedreduce::exact::detail
