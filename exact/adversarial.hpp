#pragma once
// The adversarial inputs of issue 16 for exact sums, with the bits each must give: catastrophic
// cancellation (1e30, 1, -1e30), the full exponent range, subnormals, ±0, many equal values,
// sums that round to a tie, overflow, NaN and ±Inf. Host code: the tuner's worker checks every
// exact_sum candidate on them (besides its result on the measured data), and the tests check the
// host reference and the kernels on them (tests/exact/cases.hpp).

#include <optional>
#include <string>
#include <vector>

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

/// Every case for T (float or double), in a fixed order; built on the first call (about 0.4 M
/// values in all), then shared. Thread-safe.
template <class T>
const std::vector<AdversarialCase<T>>& adversarial_cases();

extern template const std::vector<AdversarialCase<float>>& adversarial_cases<float>();
extern template const std::vector<AdversarialCase<double>>& adversarial_cases<double>();

}  // namespace tunedreduce::exact
