#pragma once
// The adversarial inputs for exact sums, with the bits each must give: catastrophic
// cancellation (1e30, 1, -1e30), the full exponent range, subnormals, ±0, many equal values,
// sums that round to a tie, overflow, NaN and ±Inf. Host code: the tuner's worker checks every
// exact_sum candidate on them (besides its result on the measured data), and the tests check the
// host reference and the kernels on them (tests/exact/cases.hpp). The half types' cases (f16,
// bf16: the inputs are bit patterns, the result a float) are adversarial_half_cases.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exact/reference.hpp"

namespace tunedreduce::exact {

template <class T>
struct AdversarialCase {
  std::string name;
  std::vector<T> values;
  /// The sum worked out by hand, where that is short (the tests check the reference with it).
  std::optional<T> worked_out;
  /// The host reference's exact_sum(values) (exact/reference.hpp): what every kernel must give.
  T expected{};
};

/// A case of the half types: the inputs are bits, laid out as __half or __nv_bfloat16 (by the
/// HalfFormat the cases were made for); the result is a float.
struct HalfAdversarialCase {
  std::string name;
  std::vector<std::uint16_t> bits;
  /// The sum worked out by hand, where that is short (the tests check the reference with it).
  std::optional<float> worked_out;
  /// The host reference's exact_sum(format, bits) (exact/reference.hpp): what every kernel must
  /// give.
  float expected = 0;
};

/// Every case for T (float or double), in a fixed order; built on the first call (about 0.4 M
/// values in all), then shared. Thread-safe.
template <class T>
const std::vector<AdversarialCase<T>>& adversarial_cases();

extern template const std::vector<AdversarialCase<float>>& adversarial_cases<float>();
extern template const std::vector<AdversarialCase<double>>& adversarial_cases<double>();

/// Every case of one half format, in a fixed order (about 1 M values per format; built on the
/// first call, then shared; thread-safe), each expected value the float of exact_sum(format,
/// bits). They start with cases of 16 values (a group of 8 whose exact sum spans S + P + 3
/// bits, then its negation but for the smallest bit, with spreads S on both sides of where fp32
/// and fp64 stop holding the group's sum), so that uploaded back to back from a 16-byte aligned
/// address those stay aligned; then lengths 1 to 24
/// (each element a distinct power of two: one lost or repeated element changes the sum), so the
/// cases after them start at every offset modulo 8 halves; and several of 100 000 to 300 000
/// values, no multiple of 8. Besides the float cases' kinds: ties and overflow in float (the
/// result is rounded to float, not to the half format: bf16's largest finite value and float's
/// differ), sums beyond the half format's range, every finite value of the format.
const std::vector<HalfAdversarialCase>& adversarial_half_cases(HalfFormat format);

}  // namespace tunedreduce::exact
