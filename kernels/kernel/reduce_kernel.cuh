#pragma once
// Kernel level: the reduction kernel of every entry, and the finishing pass.

#include <cstdint>
#include <cstring>

#include "kernels/kernel/families.cuh"

namespace tunedreduce::kernels {

/// In: the input's element type; T: the accumulator's and the result's (Kernel<P>::T).
template <class In, class T>
struct KernelArgs {
  const In* in;
  std::uint64_t n;
  std::uint64_t nchunks;
  T* ws_blocks;       // global-memory families: Block elements per block
  T* partials;        // two_pass: one T per block; single_pass: one flagged slot per block
                      // (flagged) or one T per block (not flagged)
  unsigned* counter;  // single_pass: blocks finished; packed: the 64-bit packed word. Zero on
                      // entry, left zero on exit
  T* out;
  bool flagged;  // single_pass: the slots are zero on entry (a workspace of the library's
                 // or one zeroed before the launch): publish flagged slots. Otherwise the
                 // partials area may hold anything: plain partials behind an acq_rel ticket
};

/// The acq_rel ticket of a single_pass launch over plain partials: the release orders this
/// thread's partial before the ticket; the acquire of the block that takes the last ticket
/// orders every published partial before its reads (made by the whole block after a barrier).
__device__ __forceinline__ unsigned take_ticket_acq_rel(unsigned* counter) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
               : "=r"(old)
               : "l"(counter)
               : "memory");
  return old;
}

/// single_pass slots: a partial of T is published as ceil(sizeof(T) / 4) 64-bit words, each
/// {32 bits of the value, a flag of 1 in the high half} (a two-byte T in the low half of the
/// word's value bits). A 64-bit store is single-copy atomic, so a reader that sees the flag sees
/// the value stored with it, and no fence is needed.
template <class T>
inline constexpr int slot_words = (sizeof(T) + 3) / 4;

template <class T>
__device__ __forceinline__ void publish_slot(unsigned long long* slot, T v) {
  unsigned bits[slot_words<T>] = {};
  memcpy(bits, &v, sizeof(T));
#pragma unroll
  for (int w = 0; w < slot_words<T>; ++w) {
    const unsigned long long word = (1ull << 32) | bits[w];
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot + w), "l"(word) : "memory");
  }
}

__device__ __forceinline__ unsigned long long load_slot_word(const unsigned long long* p) {
  unsigned long long word;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(word) : "l"(p) : "memory");
  return word;
}

/// Reads one slot, waiting until every word carries its flag (the writer stored it before taking
/// its ticket, so it becomes visible), then clears it for the next launch. Slots of more than two
/// words (argmin / argmax's IndexedValue: four) issue every word's load at once and wait for
/// them together, then poll again only for a word whose flag was not there yet: one memory round
/// trip where a word after word wait took four (kernel revision 6). One- and two-word slots keep
/// the word-by-word loop of revision 5.
template <class T>
__device__ __forceinline__ T collect_slot(unsigned long long* slot) {
  unsigned bits[slot_words<T>];
  if constexpr (slot_words < T >> 2) {
    unsigned long long words[slot_words<T>];
#pragma unroll
    for (int w = 0; w < slot_words<T>; ++w) words[w] = load_slot_word(slot + w);
#pragma unroll
    for (int w = 0; w < slot_words<T>; ++w) {
      while ((words[w] >> 32) == 0) words[w] = load_slot_word(slot + w);
      bits[w] = static_cast<unsigned>(words[w]);
      slot[w] = 0;
    }
  } else {
#pragma unroll
    for (int w = 0; w < slot_words<T>; ++w) {
      unsigned long long word;
      do {
        word = load_slot_word(slot + w);
      } while ((word >> 32) == 0);
      bits[w] = static_cast<unsigned>(word);
      slot[w] = 0;
    }
  }
  T v;
  memcpy(&v, bits, sizeof(T));
  return v;
}

/// __ldcg of a partial (a value, or both members of an IndexedValue).
template <class T>
__device__ __forceinline__ T load_partial(const T* p) {
  return __ldcg(p);
}
template <class T>
__device__ __forceinline__ IndexedValue<T> load_partial(const IndexedValue<T>* p) {
  return {__ldcg(&p->value), __ldcg(&p->index)};
}

/// Reduces partials[0..count) in a fixed order (thread tid folds tid, tid+Block, ...; then a
/// fixed shuffle tree): the result does not depend on which block runs it, or when.
template <class T, class OpT, int Block>
__device__ __forceinline__ T reduce_partials(const T* partials, std::uint64_t count) {
  OpT op;
  T v = OpT::identity();
  for (std::uint64_t i = threadIdx.x; i < count; i += Block) v = op(v, load_partial(partials + i));
  return block_reduce_shuffle<T, OpT, Block>(v);
}

/// The same fixed order over single_pass slots.
template <class T, class OpT, int Block>
__device__ __forceinline__ T reduce_slots(unsigned long long* slots, std::uint64_t count) {
  OpT op;
  T v = OpT::identity();
  for (std::uint64_t i = threadIdx.x; i < count; i += Block)
    v = op(v, collect_slot<T>(slots + i * slot_words<T>));
  return block_reduce_shuffle<T, OpT, Block>(v);
}

// Kernels take the parameters one by one: nvcc's host stubs cannot spell a class-type template
// argument of a __global__ function.
template <Family F, int Block, int Unroll, SmemMode M, Finish Fin, DType D, Op O>
__global__ void __launch_bounds__(Block) reduce_kernel(KernelArgs<dtype_t<D>, acc_t<D, O>> a) {
  constexpr KernelParams P{F, Block, Unroll, M, Fin, D, O};
  using T = acc_t<P.dtype, P.op>;
  using OpT = op_t<P.op, T>;
  const T r = block_result<P>(a.in, a.n, a.nchunks, a.ws_blocks);
  const unsigned tid = threadIdx.x;
  if constexpr (P.family == Family::single_tile) {  // one block, always: no finish compiled in
    if (tid == 0) *a.out = r;
    return;
  }
  if (gridDim.x == 1) {  // nothing to finish
    if (tid == 0) *a.out = r;
    return;
  }
  if constexpr (P.finish == Finish::two_pass) {
    if (tid == 0) a.partials[blockIdx.x] = r;
  } else if constexpr (P.finish == Finish::single_pass) {
    auto* slots = reinterpret_cast<unsigned long long*>(a.partials);
    __shared__ bool is_last;
    if (tid == 0) {
      if (a.flagged) {
        publish_slot(slots + std::uint64_t(blockIdx.x) * slot_words<T>, r);
        is_last = atomicAdd(a.counter, 1u) == gridDim.x - 1;  // relaxed: the slots carry flags
      } else {
        a.partials[blockIdx.x] = r;
        is_last = take_ticket_acq_rel(a.counter) == gridDim.x - 1;
      }
    }
    __syncthreads();
    if (!is_last) return;
    // Flagged slots are cleared as they are read; plain partials are written before they are
    // read, so whatever the area held before does not matter.
    const T v = a.flagged ? reduce_slots<T, OpT, P.block>(slots, gridDim.x)
                          : reduce_partials<T, OpT, P.block>(a.partials, gridDim.x);
    if (tid == 0) {
      *a.out = v;
      *a.counter = 0;  // ready for the next launch on this workspace
    }
  } else {
    static_assert(packed_finish_applies(P.dtype, P.op));
    // Bits 0..31: the sum modulo 2^32; 32..47: the carries out of it (fewer than the grid);
    // 48..63: the tickets. The grid is below 2^16, so no field overflows into the next.
    if (tid == 0) {
      auto* word = reinterpret_cast<unsigned long long*>(a.counter);
      const unsigned long long inc = (1ull << 48) | static_cast<unsigned>(r);
      const unsigned long long old = atomicAdd(word, inc);
      if ((old >> 48) == gridDim.x - 1) {
        *a.out = static_cast<T>(static_cast<unsigned>(old + inc));
        *word = 0;  // ready for the next launch on this workspace
      }
    }
  }
}

template <KernelParams P>
inline constexpr auto reduce_kernel_v =
    reduce_kernel<P.family, P.block, P.unroll, P.smem, P.finish, P.dtype, P.op>;

/// two_pass: the second kernel, one block.
template <class T, class OpT, int Block>
__global__ void __launch_bounds__(Block)
    finish_kernel(const T* partials, std::uint64_t count, T* out) {
  const T v = reduce_partials<T, OpT, Block>(partials, count);
  if (threadIdx.x == 0) *out = v;
}

}  // namespace tunedreduce::kernels
