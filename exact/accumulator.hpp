#pragma once
// Exact summation that a GPU thread, warp or block can carry: the numerical core of the exact
// kernel family (exact/sum_kernels.cuh). Plain C++20 as well, so the host tests run the very code
// the kernels run.
//
// The value. Every finite float is an integer multiple of 2^-149 (the smallest subnormal), every
// double of 2^-1074, so a sum of them is an integer in those units: a fixed-point (Kulisch) number.
// `Kulisch<T>` holds it in 32-bit chunks kept in int64 words (lazy carries): an add touches at
// most three adjacent chunks with values below 2^32, so every chunk absorbs 2^31 - 1 adds before
// a carry pass (`normalise`) is due, and the top chunk, signed, keeps what is carried out of the
// others. After `normalise` every chunk but the top is in [0, 2^32): one representation per
// value, so equal sums give equal states, however they were split and merged.
//
// Where the work goes. An add into the chunks picks them by the value's exponent; in registers a
// run-time index becomes a select over every chunk (no register can be indexed): about 10
// integer instructions per chunk, ~120 (PTX) for float's 11, where an H100's memory bandwidth
// leaves roughly 20 integer or 20 fp64 instructions per float read. So the chunks are the *back* of
// the accumulator, and its *front* is a floating-point expansion of K doubles (ExBLAS's design):
// an input passes through K error-free additions (TwoSum: 6 fp64 operations each, no branch),
// the K doubles plus the chunks staying exactly the sum of the inputs; only when the last error
// is not zero (the input has bits the K doubles cannot hold) does it *spill* into the chunks.
// A float add is then ~20 instructions (the PTX of tests/exact/device_check.cu): a load, 5
// integer ones to route zeros, subnormals and specials, a conversion, 10 fp64 and a compare.
// Measured on the host (256 accumulators of 4096 and of 65536 values each): no spill at all
// for uniform [0, 1) or normal floats with K = 2 (5·10^-6 of the adds with K = 1), nor for
// doubles with K = 3 (nor K = 2), nor for positive floats over 2^-20..2^20; values over the
// whole exponent range with random signs spill on 71 % (float) and 95 % (double) of the adds:
// exact all the same, slower.
//
// The two instances, per thread (nvcc 13.0, sm_90, -O3 -DNDEBUG as the Release build compiles
// them, `-Xptxas -v` on tests/exact/device_check.cu, whose kernels add a grid-stride loop of
// inputs, then normalise and store the chunks or round; the asserts on add 2-6 registers):
//  - float: K = 2 doubles (4 registers) in front of 11 chunks (bits 0..351 of the value in units
//    of 2^-149: float's 277 bits plus the carries of 2^62 adds) held in registers, every chunk
//    touched at a compile-time index (Residence::registers): 56 registers, no stack (53 with the
//    rounding instead of the store); a spill costs the ~120-instruction select. With the chunks
//    in local memory (Residence::memory) instead: 34 registers and a 112-byte stack frame, a
//    spill three read-modify-writes there. 11 chunks in shared memory would cost 88 bytes a
//    thread (22 KiB for 256 threads) for spills that uniform data never makes.
//  - double: the value needs 2098 bits plus carries, 66 chunks, 528 bytes: far too many
//    registers. K = 3 doubles (6 registers) in front, the chunks in the thread's local memory
//    indexed at run time (Residence::memory): 32 registers and a 560-byte stack frame (840 with
//    the rounding's words), a spill three read-modify-writes. Inputs of magnitude 2^982 and
//    above (and NaN, ±Inf) go to the chunks directly, so no sum of up to 2^40 doubles in the
//    expansion can overflow. ReproBLAS's binned sums keep fewer words a thread but must know
//    the largest magnitude first (a second pass, or re-binning when a larger input comes); the
//    expansion needs neither.
// Spills could go instead to one chunk array per warp in shared memory with atomic adds
// (ExBLAS); that placement, and merging across a warp or block, is the kernels' choice: `merge`
// is exact and associative, so any tree of merges gives the same state.
//
// IEEE specials are flags beside the value: any NaN, or +Inf with -Inf, gives NaN (the default
// quiet NaN, no payload); one sign of infinity gives that infinity. The rounded result is the
// true sum rounded once to nearest, ties to even; a rounded magnitude of 2^128 (2^1024) or more
// is ±Inf, as IEEE addition overflows; intermediate sums never overflow. An exact zero is -0 only
// if every input was -0: so an empty accumulator rounds to -0, the identity of IEEE addition (an
// entry point returns +0 for n = 0 itself, as the library's n = 0 rule has it).
//
// Requirements: fp64 addition rounding to nearest, no FMA contraction (there is no product to
// contract), and no -ffast-math; float subnormals never go through a float-to-double conversion,
// so nvcc's -ftz=true does not change the result.

#include <cassert>
#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

// TR_EXACT_UNROLL: loops whose indices must be compile-time constants (registers).
// TR_EXACT_UNROLL_CHUNKS: loops over a Kulisch's chunks, unrolled only where they are few
// (float's 11): double's 66 unrolled would load them all into registers at once. Only the
// device pass sees them: the host has no registers to keep the chunks in.
#if defined(__CUDACC__)
#define TR_EXACT_HD __host__ __device__ __forceinline__
#else
#define TR_EXACT_HD inline
#endif
#if defined(__CUDA_ARCH__)
#define TR_EXACT_UNROLL _Pragma("unroll")
#define TR_EXACT_UNROLL_CHUNKS _Pragma("unroll (kUnrollChunks)")
#else
#define TR_EXACT_UNROLL
#define TR_EXACT_UNROLL_CHUNKS
#endif

namespace tunedreduce::exact {

namespace detail {

TR_EXACT_HD std::uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  return std::bit_cast<std::uint32_t>(x);
#endif
}

TR_EXACT_HD std::uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  return std::bit_cast<std::uint64_t>(x);
#endif
}

TR_EXACT_HD float float_from_bits(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  return std::bit_cast<float>(b);
#endif
}

TR_EXACT_HD double double_from_bits(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  return std::bit_cast<double>(b);
#endif
}

/// Leading zeros of a nonzero 32-bit word.
TR_EXACT_HD int leading_zeros(std::uint32_t w) {
#if defined(__CUDA_ARCH__)
  return __clz(static_cast<int>(w));
#else
  return std::countl_zero(w);
#endif
}

/// The high 32 bits of a double (sign, exponent, the fraction's top 20 bits).
TR_EXACT_HD std::uint32_t high_word(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__double2hiint(x));
#else
  return static_cast<std::uint32_t>(std::bit_cast<std::uint64_t>(x) >> 32);
#endif
}

/// Knuth's TwoSum: s + e == a + b exactly, s the rounded sum (no overflow may occur).
TR_EXACT_HD void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bv = s - a;
  e = (a - (s - bv)) + (b - bv);
}

}  // namespace detail

/// What a format's sums need: P (significand bits with the hidden one), the unit of the fixed
/// point (its smallest subnormal, 2^kUnitExponent), and the chunks that hold the sum.
template <class T>
struct Format;

template <>
struct Format<float> {
  using Bits = std::uint32_t;
  static constexpr int kPrecision = 24;
  static constexpr int kUnitExponent = -149;
  /// Bits 0..351: float's sums below 2^128 × 2^62 need 317 (p + 84 of a spilled double fits).
  static constexpr int kChunks = 11;
  static constexpr Bits kInfinity = 0x7F800000u;
  static constexpr Bits kQuietNaN = 0x7FC00000u;
  static constexpr Bits kSign = 0x80000000u;
  static TR_EXACT_HD float from_bits(Bits b) { return detail::float_from_bits(b); }
};

template <>
struct Format<double> {
  using Bits = std::uint64_t;
  static constexpr int kPrecision = 53;
  static constexpr int kUnitExponent = -1074;
  /// Bits 0..2111: double's 2098 bits; the top chunk (weight 2^2080) carries 2^58 more.
  static constexpr int kChunks = 66;
  static constexpr Bits kInfinity = 0x7FF0000000000000ull;
  static constexpr Bits kQuietNaN = 0x7FF8000000000000ull;
  static constexpr Bits kSign = 0x8000000000000000ull;
  static TR_EXACT_HD double from_bits(Bits b) { return detail::double_from_bits(b); }
};

/// Where an accumulator's chunks live, which decides how an add reaches them.
enum class Residence {
  /// Every chunk at a compile-time index (a select per chunk): the array can stay in registers.
  registers,
  /// The chunks an add touches indexed at run time: for chunks in memory (host, local, shared).
  memory,
};

/// The fixed-point value of a sum of T (units of 2^Format<T>::kUnitExponent) with the IEEE
/// specials seen, in 32-bit chunks with lazy carries. MaxPending: the adds (and merges, each
/// counting as one) between carry passes; the largest, 2^31 - 1, keeps a chunk of [0, 2^32)
/// plus that many addends below 2^32 below 2^63 (the tests use smaller ones to run the passes).
template <class T, std::uint32_t MaxPending = 0x7FFFFFFFu>
class Kulisch {
 public:
  using F = Format<T>;
  static constexpr int kChunks = F::kChunks;
  static constexpr std::uint32_t kMaxPending = MaxPending;
  static constexpr int kUnrollChunks = kChunks <= 16 ? kChunks : 1;
  static_assert(kMaxPending >= 1 &&
                (std::uint64_t{kMaxPending} + 1) * 0xFFFFFFFFull <= 0x7FFFFFFFFFFFFFFFull);

  enum Flag : std::uint32_t {
    kNaN = 1u,
    kPositiveInfinity = 2u,
    kNegativeInfinity = 4u,
    /// Some input was not -0 (a +0, a finite nonzero value): an exact zero sum is then +0.
    kNotNegativeZero = 8u,
  };

  /// What an add puts into the chunks: a0, a1, a2 (signed, magnitudes below 2^32) into chunks
  /// k, k + 1, k + 2; k is kNoChunk (and the words 0) for a zero.
  struct Parts {
    int k;
    std::int64_t a0;
    std::int64_t a1;
    std::int64_t a2;
  };
  static constexpr int kNoChunk = -4;

  /// The parts of ±m·2^p units; m < 2^53, and p + 84 within the chunks.
  static TR_EXACT_HD Parts scaled_parts(std::uint64_t m, int p, bool negative) {
    const int k = p >> 5;
    const int o = p & 31;
    assert(p >= 0 && k + 2 < kChunks && m < (std::uint64_t{1} << 53));
    const std::uint64_t low = m << o;  // bits 0..63 of m·2^o (which has at most 84)
    const std::int64_t s = negative ? -1 : 0;
    return {k, (static_cast<std::int64_t>(low & 0xFFFFFFFFu) ^ s) - s,
            (static_cast<std::int64_t>(low >> 32) ^ s) - s,
            (static_cast<std::int64_t>((m >> 1) >> (63 - o)) ^ s) - s};
  }

  /// The parts of a finite double that is an integer multiple of the unit (an input, or a part
  /// of an expansion of them) and, in units, below 2^(32 × (kChunks - 2) + 52).
  static TR_EXACT_HD Parts double_parts(double v) {
    const std::uint64_t u = detail::bits_of(v);
    const int biased = static_cast<int>((u >> 52) & 0x7FF);
    assert(biased != 0x7FF);
    std::uint64_t m = (u & 0xFFFFFFFFFFFFFull) | (biased != 0 ? std::uint64_t{1} << 52 : 0);
    if (m == 0) return {kNoChunk, 0, 0, 0};
    // v = m·2^(max(biased, 1) - 1075) = m·2^p units.
    int p = (biased != 0 ? biased : 1) - 1075 - F::kUnitExponent;
    if (p < 0) {  // float's units: the bits below 2^-149 are zeros
      assert(-p <= 52 && (m & ((std::uint64_t{1} << -p) - 1)) == 0);
      m >>= -p;
      p = 0;
    }
    return scaled_parts(m, p, (u >> 63) != 0);
  }

  /// Adds parts (not kNoChunk's).
  template <Residence R>
  TR_EXACT_HD void add_parts(const Parts& a) {
    if (pending_ == kMaxPending) normalise();
    ++pending_;
    if constexpr (R == Residence::memory) {
      chunk_[a.k] += a.a0;
      chunk_[a.k + 1] += a.a1;
      chunk_[a.k + 2] += a.a2;
    } else {
      TR_EXACT_UNROLL
      for (int j = 0; j < kChunks; ++j) {
        chunk_[j] += (j == a.k ? a.a0 : 0) + (j == a.k + 1 ? a.a1 : 0) + (j == a.k + 2 ? a.a2 : 0);
      }
    }
  }

  /// Adds ±m·2^p units; m < 2^53, and p + 84 within the chunks.
  template <Residence R>
  TR_EXACT_HD void add_scaled(std::uint64_t m, int p, bool negative) {
    add_parts<R>(scaled_parts(m, p, negative));
  }

  /// Adds a finite double that is an integer multiple of the unit (see double_parts).
  template <Residence R>
  TR_EXACT_HD void add_double(double v) {
    const Parts a = double_parts(v);
    if (a.k != kNoChunk) add_parts<R>(a);
  }

  TR_EXACT_HD void add_flags(std::uint32_t flags) { flags_ |= flags; }

  /// The state with the chunks \p chunks (kChunks words, each of magnitude at most 2^62: chunk()'s
  /// values of a normalised state, or sums of up to 2^30 words of [-1, 2^32]; the top chunk, as
  /// its sum, the value's top: no bound but the value's) and the flags \p flags: how a
  /// kernel reads back states it stored, or their sums. Its next add, merge or round carries
  /// first.
  static TR_EXACT_HD Kulisch from_chunks(const std::int64_t* chunks, std::uint32_t flags) {
    Kulisch k;
    TR_EXACT_UNROLL_CHUNKS
    for (int j = 0; j < kChunks; ++j) k.chunk_[j] = chunks[j];
    k.flags_ = flags;
    k.pending_ = kMaxPending;
    return k;
  }

  /// Carries every chunk but the top into the next: chunks below the top end in [0, 2^32).
  /// The carry rides in a register from chunk to chunk: in local memory (double's chunks) a
  /// chain of stores and reloads of the next chunk would make every step wait on memory.
  TR_EXACT_HD void normalise() {
    std::int64_t carry = 0;
    TR_EXACT_UNROLL_CHUNKS
    for (int j = 0; j + 1 < kChunks; ++j) {
      const std::int64_t x = chunk_[j] + carry;
      chunk_[j] = x & 0xFFFFFFFF;
      carry = x >> 32;  // floor division by 2^32
    }
    chunk_[kChunks - 1] += carry;
    pending_ = 0;
  }

  /// Adds another accumulator's value and flags (exact; any order and grouping of merges gives
  /// the same normalised state).
  TR_EXACT_HD void merge(const Kulisch& other) {
    if (static_cast<std::uint64_t>(pending_) + other.pending_ + 1 > kMaxPending) {
      Kulisch o = other;
      o.normalise();
      normalise();
      add_chunks(o);
      pending_ = 1;
    } else {
      add_chunks(other);
      pending_ += other.pending_ + 1;
    }
    flags_ |= other.flags_;
  }

  /// The sum rounded once to T (nearest, ties to even), with the IEEE specials. Copies the
  /// chunks unless they are normalised (a kernel's last step: normalise(), then round()).
  TR_EXACT_HD T round() const {
    if (pending_ == 0) return round_normalised();
    Kulisch n = *this;
    n.normalise();
    return n.round_normalised();
  }

  /// Same value and specials (states compared after normalisation).
  TR_EXACT_HD bool operator==(const Kulisch& other) const {
    Kulisch a = *this;
    Kulisch b = other;
    a.normalise();
    b.normalise();
    bool equal = a.flags_ == b.flags_;
    TR_EXACT_UNROLL_CHUNKS
    for (int j = 0; j < kChunks; ++j) equal = equal && a.chunk_[j] == b.chunk_[j];
    return equal;
  }

  TR_EXACT_HD std::int64_t chunk(int j) const { return chunk_[j]; }
  TR_EXACT_HD std::uint32_t flags() const { return flags_; }
  TR_EXACT_HD std::uint32_t pending() const { return pending_; }

 private:
  TR_EXACT_HD void add_chunks(const Kulisch& other) {
    TR_EXACT_UNROLL_CHUNKS
    for (int j = 0; j < kChunks; ++j) chunk_[j] += other.chunk_[j];
  }

  TR_EXACT_HD T round_normalised() const {
    if (T special_result; special(flags_, special_result)) return special_result;

    // The magnitude as 32-bit words (the top chunk, below 2^63, gives two), -V = ~V + 1 word by
    // word for a negative V.
    const bool negative = chunk_[kChunks - 1] < 0;
    const std::uint32_t flip = negative ? 0xFFFFFFFFu : 0u;
    std::uint64_t carry = negative ? 1 : 0;
    std::uint32_t w[kChunks + 1] = {};
    TR_EXACT_UNROLL_CHUNKS
    for (int j = 0; j + 1 < kChunks; ++j) {
      const std::uint64_t x = (static_cast<std::uint32_t>(chunk_[j]) ^ flip) + carry;
      w[j] = static_cast<std::uint32_t>(x);
      carry = x >> 32;
    }
    const std::uint64_t top =
        (static_cast<std::uint64_t>(chunk_[kChunks - 1]) ^ (negative ? ~std::uint64_t{0} : 0)) +
        carry;
    w[kChunks - 1] = static_cast<std::uint32_t>(top);
    w[kChunks] = static_cast<std::uint32_t>(top >> 32);

    int i = kChunks;
    while (i >= 0 && w[i] == 0) --i;
    if (i < 0) return zero(flags_);
    std::uint32_t window[kWindowWords] = {};
    for (int k = 0; k <= 4; ++k) window[k] = i - 4 + k >= 0 ? w[i - 4 + k] : 0;
    bool below = false;
    for (int k = 0; k < i - 4; ++k) below = below || w[k] != 0;
    return round_magnitude(window, i, below, negative);
  }

 public:
  /// Words of round_magnitude's window.
  static constexpr int kWindowWords = 7;

  /// The widest range of words that round_narrow takes.
  static constexpr int kNarrowWords = 6;

  /// Whether round_narrow takes the words lo..hi: an empty range, or at most kNarrowWords words
  /// from 0 up to three below the top chunk.
  static TR_EXACT_HD bool narrow(int lo, int hi) {
    return hi < lo || (lo >= 0 && hi - lo + 1 <= kNarrowWords && hi <= kChunks - 4);
  }

  /// The value of chunk words \p words[lo..hi] (each of magnitude at most 2^62; every chunk
  /// outside the range zero) with the flags \p flags, rounded as round() rounds it, into
  /// \p result; false (and nothing written) where the range is wider than kNarrowWords words or
  /// ends less than three below the top chunk: the caller then carries through every chunk. An
  /// empty range (hi < lo) is a sum of zeros. The kernels' finish for random data, whose sums
  /// touch a few words: one thread, the carries word by word in registers, no scan over the
  /// chunks. \p Words: anything indexable by int (a pointer, also into shared memory).
  template <class Words>
  static TR_EXACT_HD bool round_narrow(const Words& words, int lo, int hi, std::uint32_t flags,
                                       T& result) {
    if (special(flags, result)) return true;
    if (!narrow(lo, hi)) return false;
    if (hi < lo) {
      result = zero(flags);
      return true;
    }
    // Two words past hi take every carry: the words are below 2^62 · 2^(32 hi) in magnitude each,
    // their sum below 2^65 · 2^(32 hi), so the carry out of word hi + 1 is the sign (0 or -1).
    constexpr int W = kNarrowWords + 2;
    const int count = hi - lo + 1;
    std::uint32_t m[W];
    std::int64_t c = 0;
    TR_EXACT_UNROLL
    for (int k = 0; k < W; ++k) {
      const std::int64_t x = (k < count ? static_cast<std::int64_t>(words[lo + k]) : 0) + c;
      m[k] = static_cast<std::uint32_t>(x);
      c = x >> 32;  // floor division
    }
    // The magnitude, -V = ~V + 1 word by word for a negative V (the words below lo are zero and
    // stay zero, their +1 carrying up to word lo); |V| < 2^(32 (hi + 2) + 1) keeps it in W words.
    const bool negative = c < 0;
    std::uint64_t carry = negative ? 1 : 0;
    int i = -1;  // the highest nonzero word, from lo
    TR_EXACT_UNROLL
    for (int k = 0; k < W; ++k) {
      const std::uint64_t x = (negative ? ~m[k] : m[k]) + carry;
      m[k] = static_cast<std::uint32_t>(x);
      carry = x >> 32;
      if (m[k] != 0) i = k;
    }
    if (i < 0) {
      result = zero(flags);
      return true;
    }
    std::uint32_t window[kWindowWords] = {};
    bool below = false;
    TR_EXACT_UNROLL
    for (int k = 0; k < W; ++k) {
      TR_EXACT_UNROLL
      for (int q = 0; q <= 4; ++q) {
        if (k == i - 4 + q) window[q] = m[k];
      }
      if (k < i - 4) below = below || m[k] != 0;
    }
    result = round_magnitude(window, lo + i, below, negative);
    return true;
  }

  /// What a sum of only zeros rounds to: -0 if every input was -0, else +0.
  static TR_EXACT_HD T zero(std::uint32_t flags) {
    using Bits = typename F::Bits;
    return F::from_bits((flags & kNotNegativeZero) != 0 ? Bits{0} : F::kSign);
  }

  /// The nonzero magnitude M, rounded once to T (nearest, ties to even) with sign \p negative,
  /// from the words that decide it: \p hw is the index of M's highest nonzero 32-bit word (in
  /// units), window[k] its word hw - 4 + k for k = 0..4 (0 where the index is below 0) and
  /// window[5], window[6] zero; \p below says whether a word below hw - 4 is nonzero. The
  /// result's ulp lies at least 76 bits above the window's bottom, so the window holds every
  /// bit of the result and its round bit, and `below` is the rest of the sticky bit. The host's
  /// round() and the kernels' finish (which find the window with warp votes) both end here.
  static TR_EXACT_HD T round_magnitude(const std::uint32_t (&window)[kWindowWords], int hw,
                                       bool below, bool negative) {
    using Bits = typename F::Bits;
    constexpr int P = F::kPrecision;
    const int h = 32 * hw + 31 - detail::leading_zeros(window[4]);  // highest bit set
    // The result's ulp is 2^s units: s = 0 down to the subnormals (whose ulp is the unit).
    const int s = h - (P - 1) > 0 ? h - (P - 1) : 0;
    const int sr = s - 32 * (hw - 4);  // s in the window: 76..159
    assert(sr >= 64 && sr < 160);
    // The window's words at run-time indices through selects over every word, so that the
    // window stays in registers on the GPU (an indexed array goes to local memory).
    const auto word = [&window](int k) {
      std::uint32_t w = 0;
      TR_EXACT_UNROLL
      for (int i = 0; i < kWindowWords; ++i) w = i == k ? window[i] : w;
      return w;
    };
    const int j = sr >> 5;
    const int o = sr & 31;
    std::uint64_t q = ((static_cast<std::uint64_t>(word(j + 1)) << 32 | word(j)) >> o) |
                      ((static_cast<std::uint64_t>(word(j + 2)) << 1) << (63 - o));
    if (s > 0) {
      const int r = sr - 1;  // the round bit
      const std::uint32_t round_word = word(r >> 5);
      const bool half = ((round_word >> (r & 31)) & 1u) != 0;
      bool sticky = below || (round_word & ((std::uint32_t{1} << (r & 31)) - 1)) != 0;
      TR_EXACT_UNROLL
      for (int k = 0; k < kWindowWords; ++k) sticky = sticky || (k < (r >> 5) && window[k] != 0);
      if (half && (sticky || (q & 1) != 0)) ++q;
    }
    // q·2^s units with q ≤ 2^P: the biased exponent is s + 1 and the hidden bit of q adds into
    // it, so the bits are (s << (P - 1)) + q, for subnormals (s = 0, q < 2^(P-1)) too; a carry
    // of q to 2^P moves to the next binade, past the largest finite value to infinity.
    std::uint64_t bits = (static_cast<std::uint64_t>(s) << (P - 1)) + q;
    if (bits >= F::kInfinity) bits = F::kInfinity;
    return F::from_bits(static_cast<Bits>(bits) | (negative ? F::kSign : Bits{0}));
  }

  /// The result of the IEEE specials in \p flags (NaN, or an infinity), or false if there are
  /// none and the value decides.
  static TR_EXACT_HD bool special(std::uint32_t flags, T& result) {
    if ((flags & kNaN) != 0 || (flags & (kPositiveInfinity | kNegativeInfinity)) ==
                                   (kPositiveInfinity | kNegativeInfinity)) {
      result = F::from_bits(F::kQuietNaN);
      return true;
    }
    if ((flags & (kPositiveInfinity | kNegativeInfinity)) == 0) return false;
    result =
        F::from_bits((flags & kPositiveInfinity) != 0 ? F::kInfinity : (F::kInfinity | F::kSign));
    return true;
  }

 private:
  std::int64_t chunk_[kChunks] = {};
  std::uint32_t flags_ = 0;
  std::uint32_t pending_ = 0;
};

/// The front of an accumulator on its own: an expansion of K doubles whose spills go into a
/// Kulisch that the caller keeps apart. ExactAccumulator is one of these and its Kulisch; a
/// kernel holds the two as separate variables, because one object holding both is one local
/// allocation once its chunks are indexed at run time (double's), and the K doubles then live in
/// local memory too: nvcc 13 loaded and stored them there on every add (see docs/kernels.md).
/// Apart, the K doubles stay in registers and the chunks are touched only on a spill.
template <class T, int K = (sizeof(T) == 4 ? 2 : 3),
          Residence R = (sizeof(T) == 4 ? Residence::registers : Residence::memory)>
class Expansion {
  static_assert(K >= 1);

 public:
  using Store = Kulisch<T>;
  static constexpr int kTerms = K;
  /// float: 2^53-bit-exact sums of floats are never near fp64's range. double: inputs with
  /// |x| ≥ 2^982 (and NaN, ±Inf) bypass the expansion, so 2^40 of the others sum below 2^1022.
  static constexpr int kDirectBiasedExponent = sizeof(T) == 4 ? 0xFF : 1023 + 982;

  /// Adds x: the K doubles and \p back (a Kulisch, or any type with its add_double<R> and
  /// add_flags) stay the exact sum.
  template <class Back>
  TR_EXACT_HD void add(T x, Back& back) {
    if constexpr (sizeof(T) == 4) {
      const std::uint32_t u = detail::bits_of(x);
      const std::uint32_t biased = (u >> 23) & 0xFF;
      if (biased - 1 >= 0xFE) {  // 0 (zero, subnormal) or 0xFF (Inf, NaN)
        add_float_rare(u, back);
        return;
      }
      carry_in(widen_normal(u), 0, back);
    } else {
      const std::uint64_t u = detail::bits_of(x);
      if (static_cast<int>((u >> 52) & 0x7FF) >= kDirectBiasedExponent) {
        add_double_direct(u, x, back);
        return;
      }
      carry_in(x, 0, back);
    }
  }

  /// Adds other's terms: its t[0] into t[0] (which keeps the sign of zero), its t[i] from level
  /// i on; what the K doubles cannot hold goes into \p back.
  template <class Back>
  TR_EXACT_HD void merge(const Expansion& other, Back& back) {
    assert(&other != this);
    TR_EXACT_UNROLL
    for (int i = 0; i < K; ++i) carry_in(other.t_[i], i, back);
  }

  /// Moves the K doubles into \p back (and the sign of an exact zero into its flags), leaving
  /// the expansion empty; back then holds the whole sum, to normalise.
  template <class Back>
  TR_EXACT_HD void flush(Back& back) {
    back.add_flags(sign_flags());
    TR_EXACT_UNROLL
    for (int i = 0; i < K; ++i) {
      back.template add_double<R>(t_[i]);
      t_[i] = i == 0 ? -0.0 : 0.0;
    }
  }

  /// Adds v, the exact fp64 sum of finite inputs (±0 or normal; a kernel's fast path adds a
  /// round of floats so, see add_group in exact/sum_kernels.cuh): as one input would go. A sum
  /// of zeros is -0 only if every one is, as the inputs one by one would leave t[0].
  template <class Back>
  TR_EXACT_HD void add_exact_sum(double v, Back& back) {
    carry_in(v, 0, back);
  }

  /// Adds M doubles (a kernel's round of loads) level by level when none takes the direct path
  /// (every |x| below 2^982, no NaN or infinity): each x through t[0] first, then what is left of
  /// each through t[1], and so on, and one test for a spill at the end. Returns false, adding
  /// nothing, when some x takes the direct path (the caller then adds one by one). The same sum
  /// as M adds (every TwoSum is error-free, in any order, and t[0] sees every x, which keeps the
  /// sign-of-zero rule), with a shorter dependency: one add's wait per input on t[0]'s chain, the
  /// rest of its TwoSum and the next level's off it, where add's spill test after each input's
  /// K TwoSums (a branch on the last of about 5K dependent adds) makes every input wait for the
  /// one before (docs/performance.md 3.27).
  template <int M, class Back>
  TR_EXACT_HD bool add_doubles(const double (&x)[M], Back& back) {
    static_assert(sizeof(T) == 8);
    std::uint32_t top = 0;  // the largest biased exponent, in the high word's bits 20..30
    TR_EXACT_UNROLL
    for (int j = 0; j < M; ++j) {
      const std::uint32_t e = detail::high_word(x[j]) & 0x7FF00000u;
      top = top > e ? top : e;
    }
    if (top >= static_cast<std::uint32_t>(kDirectBiasedExponent) << 20) return false;
    double e[M];
    TR_EXACT_UNROLL
    for (int j = 0; j < M; ++j) e[j] = x[j];
    TR_EXACT_UNROLL
    for (int i = 0; i < K; ++i) {
      TR_EXACT_UNROLL
      for (int j = 0; j < M; ++j) detail::two_sum(t_[i], e[j], t_[i], e[j]);
    }
    bool spill = false;
    TR_EXACT_UNROLL
    for (int j = 0; j < M; ++j) spill |= e[j] != 0.0;
    if (spill) {
      TR_EXACT_UNROLL
      for (int j = 0; j < M; ++j) {
        if (e[j] != 0.0) back.template add_double<R>(e[j]);
      }
    }
    return true;
  }

  TR_EXACT_HD double term(int i) const { return t_[i]; }

  /// Store::kNotNegativeZero if an input that went through the expansion was not -0, else 0.
  TR_EXACT_HD std::uint32_t sign_flags() const {
    // t[0] starts at -0 and every finite input but +0 (and the large doubles, flagged apart)
    // passes through it; under round-to-nearest a sum is -0 only if both addends are, so t[0]
    // is -0 exactly when every such input was -0.
    return detail::bits_of(t_[0]) != detail::bits_of(-0.0) ? Store::kNotNegativeZero : 0u;
  }

 private:
  /// The double of a normal float's bits, built with integer operations: the same value as the
  /// conversion, without its quarter-rate instruction (F2F.F64.F32) on the GPU.
  static TR_EXACT_HD double widen_normal(std::uint32_t u) {
    const std::uint32_t hi = (u & 0x80000000u) |
                             (((u & 0x7FFFFFFFu) >> 3) + ((1023u - 127u) << 20));
    const std::uint32_t lo = u << 29;
#if defined(__CUDA_ARCH__)
    return __hiloint2double(static_cast<int>(hi), static_cast<int>(lo));
#else
    return detail::double_from_bits(static_cast<std::uint64_t>(hi) << 32 | lo);
#endif
  }

  /// TwoSum v through t[level..K): their sum and back's stay the exact sum; an error left after
  /// the last goes into back (a spill).
  template <class Back>
  TR_EXACT_HD void carry_in(double v, int level, Back& back) {
    TR_EXACT_UNROLL
    for (int i = 0; i < K; ++i) {
      if (i >= level) detail::two_sum(t_[i], v, t_[i], v);
    }
    if (v != 0.0) back.template add_double<R>(v);
  }

  template <class Back>
  TR_EXACT_HD void add_float_rare(std::uint32_t u, Back& back) {
    const std::uint32_t biased = (u >> 23) & 0xFF;
    const std::uint32_t fraction = u & 0x7FFFFFu;
    const bool negative = (u >> 31) != 0;
    if (biased == 0xFF) {
      back.add_flags(fraction != 0
                         ? Store::kNaN
                         : (negative ? Store::kNegativeInfinity : Store::kPositiveInfinity));
    } else if (fraction == 0) {
      if (!negative) back.add_flags(Store::kNotNegativeZero);  // -0 is the identity
    } else {
      // A subnormal, fraction·2^-149, built in fp64 without a float conversion (which -ftz
      // would flush to zero).
      const double magnitude = static_cast<double>(fraction) * 0x1p-149;
      carry_in(negative ? -magnitude : magnitude, 0, back);
    }
  }

  template <class Back>
  TR_EXACT_HD void add_double_direct(std::uint64_t u, double x, Back& back) {
    if (((u >> 52) & 0x7FF) == 0x7FF) {
      const bool nan = (u & 0xFFFFFFFFFFFFFull) != 0;
      back.add_flags(nan ? Store::kNaN
                         : ((u >> 63) != 0 ? Store::kNegativeInfinity : Store::kPositiveInfinity));
    } else {
      back.template add_double<R>(x);
      back.add_flags(Store::kNotNegativeZero);
    }
  }

  double t_[K] = {-0.0};
};

/// A thread's exact accumulator: an expansion of K doubles in front of the chunks (see the top
/// of this file). add, merge, normalise and result are exact; any split of the input into
/// accumulators merged in any order gives the same state after normalisation.
template <class T, int K = (sizeof(T) == 4 ? 2 : 3),
          Residence R = (sizeof(T) == 4 ? Residence::registers : Residence::memory)>
class ExactAccumulator {
 public:
  using Front = Expansion<T, K, R>;
  using Store = Kulisch<T>;
  static constexpr int kExpansion = K;
  static constexpr Residence kResidence = R;
  static constexpr int kDirectBiasedExponent = Front::kDirectBiasedExponent;

  TR_EXACT_HD void add(T x) { front_.add(x, long_); }

  /// Adds other's sum: its expansion into the expansion, its chunks into the chunks.
  TR_EXACT_HD void merge(const ExactAccumulator& other) {
    assert(&other != this);
    front_.merge(other.front_, long_);
    long_.merge(other.long_);
  }

  /// Moves the expansion into the chunks and carries them: the canonical state.
  TR_EXACT_HD void normalise() {
    front_.flush(long_);
    long_.normalise();
  }

  /// The sum rounded once to T (see the top of this file).
  TR_EXACT_HD T result() const { return state().round(); }

  /// The normalised chunks and flags: equal for equal sums.
  TR_EXACT_HD Store state() const {
    ExactAccumulator a = *this;
    a.normalise();
    return a.long_;
  }

  /// The chunks and flags as they are: canonical right after normalise() (which a kernel calls
  /// in place, where state() would copy a double accumulator's 528 bytes).
  TR_EXACT_HD const Store& store() const { return long_; }
  TR_EXACT_HD double expansion(int i) const { return front_.term(i); }

 private:
  Front front_;
  Store long_;
};

using FloatAccumulator = ExactAccumulator<float>;
using DoubleAccumulator = ExactAccumulator<double>;

}  // namespace tunedreduce::exact
