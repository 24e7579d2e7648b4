// The host reference: a histogram of significands by exponent, folded into a fixed-point number.
//
// Every finite value is ±m·2^(max(e, 1) - bias - (P - 1)) with m < 2^P its integer significand and
// e its biased exponent; values with one biased exponent are integer multiples of one power of
// two, so their significands add exactly in one integer bin: an add is a load, a few integer
// operations and one add to bins[e] (a float's m < 2^24 into int64, 2^38 adds before the bins
// are folded; a double's m < 2^53 into __int128, 2^60). Consecutive values with one exponent
// would wait on each other's store, so values go round-robin to kSets sets of bins. Only
// result(), merge() and every 2^38 (2^60) values fold the bins into `limbs`: the sum in units of
// the smallest subnormal, two's complement, wide enough for 2^62 values of the largest
// magnitude. Rounding reads that integer bit by bit and lets std::ldexp place the result.

#include "exact/reference.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace tunedreduce::exact {

namespace {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

template <class T>
struct Layout;

template <>
struct Layout<float> {
  using Bits = std::uint32_t;
  using Bin = std::int64_t;
  static constexpr int kPrecision = 24;
  static constexpr int kExponents = 256;
  static constexpr int kUnitExponent = -149;
  static constexpr int kSets = 4;  // 8 KiB of bins
  /// Bins absorb 2^39 - 1 significands below 2^24; a set gets at most a quarter of the values.
  static constexpr std::uint64_t kFoldAfter = std::uint64_t{1} << 38;
  /// 2^62 values below 2^128 are below 2^339 units: 340 bits with the sign.
  static constexpr int kLimbs = 6;
};

template <>
struct Layout<double> {
  using Bits = std::uint64_t;
  using Bin = Int128;
  static constexpr int kPrecision = 53;
  static constexpr int kExponents = 2048;
  static constexpr int kUnitExponent = -1074;
  static constexpr int kSets = 2;  // 64 KiB of bins: more sets only miss L1
  static constexpr std::uint64_t kFoldAfter = std::uint64_t{1} << 60;
  /// 2^62 values below 2^1024 are below 2^2160 units.
  static constexpr int kLimbs = 34;
};

}  // namespace

template <class T>
struct ReferenceSum<T>::State {
  using L = Layout<T>;
  using Bits = typename L::Bits;
  using Bin = typename L::Bin;
  static constexpr int kFractionBits = L::kPrecision - 1;
  static constexpr Bits kExponentMask = static_cast<Bits>(L::kExponents - 1);
  static constexpr int kSignShift = sizeof(Bits) * 8 - 1;
  static constexpr Bits kNegativeZero = Bits{1} << kSignShift;

  std::array<Bin, L::kSets * L::kExponents> bins{};
  std::array<std::uint64_t, L::kLimbs> limbs{};  // two's complement
  std::uint64_t count = 0;
  std::uint64_t in_bins = 0;  // values added since the bins were last folded
  bool nan = false;
  bool positive_infinity = false;
  bool negative_infinity = false;
  bool not_negative_zero = false;  // some value was not -0

  void special(Bits u) {
    if ((u & ((Bits{1} << kFractionBits) - 1)) != 0) {
      nan = true;
    } else if ((u >> kSignShift) != 0) {
      negative_infinity = true;
    } else {
      positive_infinity = true;
    }
  }

  void accumulate(std::span<const T> values) {
    Bits any_not_negative_zero = 0;
    const auto one = [&](T x, Bin* set) {
      const Bits u = std::bit_cast<Bits>(x);
      const Bits e = (u >> kFractionBits) & kExponentMask;
      any_not_negative_zero |= u ^ kNegativeZero;
      if (e == kExponentMask) [[unlikely]] {
        special(u);
        return;
      }
      const auto m = static_cast<std::int64_t>((u & ((Bits{1} << kFractionBits) - 1)) |
                                               (e != 0 ? Bits{1} << kFractionBits : 0));
      const std::int64_t s = -static_cast<std::int64_t>(u >> kSignShift);
      set[e] += (m ^ s) - s;
    };
    Bin* const b = bins.data();
    const std::size_t n = values.size();
    std::size_t i = 0;
    for (; i + L::kSets <= n; i += L::kSets) {
      for (int k = 0; k < L::kSets; ++k) one(values[i + k], b + k * L::kExponents);
    }
    for (; i < n; ++i) one(values[i], b);
    not_negative_zero = not_negative_zero || any_not_negative_zero != 0;
  }

  /// limbs += v·2^shift.
  void add_shifted(Int128 v, int shift) {
    const bool negative = v < 0;
    const UInt128 magnitude = negative ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
    const auto x0 = static_cast<std::uint64_t>(magnitude);
    const auto x1 = static_cast<std::uint64_t>(magnitude >> 64);
    const int w = shift / 64;
    const int b = shift % 64;
    const std::array<std::uint64_t, 3> y = {x0 << b, (x1 << b) | (b != 0 ? x0 >> (64 - b) : 0),
                                            b != 0 ? x1 >> (64 - b) : 0};
    std::uint64_t carry = 0;  // a carry when adding, a borrow when subtracting
    for (int j = w; j < L::kLimbs; ++j) {
      if (j - w >= 3 && carry == 0) break;
      const UInt128 addend = static_cast<UInt128>(j - w < 3 ? y[j - w] : 0) + carry;
      const std::uint64_t before = limbs[j];
      if (negative) {
        limbs[j] = static_cast<std::uint64_t>(before - addend);
        carry = before < addend ? 1 : 0;
      } else {
        const UInt128 sum = before + addend;
        limbs[j] = static_cast<std::uint64_t>(sum);
        carry = static_cast<std::uint64_t>(sum >> 64);
      }
    }
  }

  void fold() {
    for (int k = 0; k < L::kSets; ++k) {
      // The last exponent is Inf's and NaN's, never binned.
      for (int e = 0; e + 1 < L::kExponents; ++e) {
        Bin& bin = bins[k * L::kExponents + e];
        if (bin != 0) add_shifted(bin, std::max(e, 1) - 1);
        bin = 0;
      }
    }
    in_bins = 0;
  }

  void add_limbs(const std::array<std::uint64_t, L::kLimbs>& other) {
    std::uint64_t carry = 0;
    for (int j = 0; j < L::kLimbs; ++j) {
      const UInt128 s = static_cast<UInt128>(limbs[j]) + other[j] + carry;
      limbs[j] = static_cast<std::uint64_t>(s);
      carry = static_cast<std::uint64_t>(s >> 64);
    }
  }

  bool bit(const std::array<std::uint64_t, L::kLimbs>& a, int pos) const {
    return ((a[pos / 64] >> (pos % 64)) & 1) != 0;
  }

  T round() const {
    if (nan || (positive_infinity && negative_infinity)) {
      return std::numeric_limits<T>::quiet_NaN();
    }
    if (positive_infinity) return std::numeric_limits<T>::infinity();
    if (negative_infinity) return -std::numeric_limits<T>::infinity();

    State folded = *this;
    folded.fold();
    std::array<std::uint64_t, L::kLimbs> a = folded.limbs;
    const bool negative = (a.back() >> 63) != 0;
    if (negative) {  // the magnitude: -a = ~a + 1
      std::uint64_t carry = 1;
      for (auto& limb : a) {
        limb = ~limb + carry;
        carry = (carry != 0 && limb == 0) ? 1 : 0;
      }
    }
    int top = L::kLimbs - 1;
    while (top >= 0 && a[top] == 0) --top;
    if (top < 0) {
      return (count == 0 || not_negative_zero) ? T(0) : -T(0);
    }
    const int h = 64 * top + 63 - std::countl_zero(a[top]);
    // The result's ulp, 2^s units: the unit itself down in the subnormals.
    const int s = std::max(h - (L::kPrecision - 1), 0);
    std::uint64_t q = 0;
    for (int pos = h; pos >= s; --pos) q = (q << 1) | (bit(a, pos) ? 1 : 0);
    if (s > 0 && bit(a, s - 1)) {
      bool sticky = false;
      for (int pos = 0; pos < s - 1 && !sticky; ++pos) sticky = bit(a, pos);
      if (sticky || (q & 1) != 0) ++q;
    }
    // Exact (q ≤ 2^P is a T), or infinity past the largest finite value.
    const T magnitude = std::ldexp(static_cast<T>(q), s + L::kUnitExponent);
    return negative ? -magnitude : magnitude;
  }
};

template <class T>
ReferenceSum<T>::ReferenceSum() : state_(std::make_unique<State>()) {}
template <class T>
ReferenceSum<T>::~ReferenceSum() = default;
template <class T>
ReferenceSum<T>::ReferenceSum(const ReferenceSum& other)
    : state_(std::make_unique<State>(*other.state_)) {}
template <class T>
ReferenceSum<T>& ReferenceSum<T>::operator=(const ReferenceSum& other) {
  if (this != &other) state_ = std::make_unique<State>(*other.state_);
  return *this;
}
template <class T>
ReferenceSum<T>::ReferenceSum(ReferenceSum&&) noexcept = default;
template <class T>
ReferenceSum<T>& ReferenceSum<T>::operator=(ReferenceSum&&) noexcept = default;

template <class T>
void ReferenceSum<T>::add(std::span<const T> values) {
  if (!state_) state_ = std::make_unique<State>();  // after a move
  State& st = *state_;
  std::size_t i = 0;
  while (i < values.size()) {
    if (st.in_bins == State::L::kFoldAfter) st.fold();
    const std::size_t n = static_cast<std::size_t>(
        std::min<std::uint64_t>(values.size() - i, State::L::kFoldAfter - st.in_bins));
    st.accumulate(values.subspan(i, n));
    st.in_bins += n;
    st.count += n;
    i += n;
  }
}

template <class T>
void ReferenceSum<T>::merge(const ReferenceSum& other) {
  if (!state_) state_ = std::make_unique<State>();
  if (!other.state_) return;
  State& st = *state_;
  State theirs = *other.state_;
  theirs.fold();
  st.add_limbs(theirs.limbs);
  st.count += theirs.count;
  st.nan = st.nan || theirs.nan;
  st.positive_infinity = st.positive_infinity || theirs.positive_infinity;
  st.negative_infinity = st.negative_infinity || theirs.negative_infinity;
  st.not_negative_zero = st.not_negative_zero || theirs.not_negative_zero;
}

template <class T>
T ReferenceSum<T>::result() const {
  return state_ ? state_->round() : T(0);
}

template <class T>
std::uint64_t ReferenceSum<T>::count() const {
  return state_ ? state_->count : 0;
}

template class ReferenceSum<float>;
template class ReferenceSum<double>;

float exact_sum(std::span<const float> values) {
  ReferenceSum<float> sum;
  sum.add(values);
  return sum.result();
}

double exact_sum(std::span<const double> values) {
  ReferenceSum<double> sum;
  sum.add(values);
  return sum.result();
}

float exact_sum(HalfFormat format, std::span<const std::uint16_t> bits) {
  // Decoded a block at a time (every half is exactly a float), summed as floats.
  ReferenceSum<float> sum;
  std::array<float, 4096> block;
  for (std::size_t i = 0; i < bits.size();) {
    const std::size_t n = std::min(block.size(), bits.size() - i);
    for (std::size_t k = 0; k < n; ++k) block[k] = half_value(format, bits[i + k]);
    sum.add(std::span<const float>(block.data(), n));
    i += n;
  }
  return sum.result();
}

}  // namespace tunedreduce::exact
