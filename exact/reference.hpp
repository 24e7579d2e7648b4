#pragma once
// The host's exact sums of floats and doubles: the reference that the exact kernels (issue 16)
// and the tuner's verification of them are checked against. Independent of exact/accumulator.hpp
// (another algorithm, another rounding), so each checks the other.

#include <cstdint>
#include <memory>
#include <span>

namespace tunedreduce::exact {

/// The true sum of \p values rounded once, to nearest with ties to even, to float. NaN (the
/// default quiet NaN) if any value is NaN or both +Inf and -Inf occur; ±Inf if only that
/// infinity occurs; a rounded magnitude of 2^128 or more is ±Inf, as IEEE addition overflows,
/// while no partial sum ever overflows. An exact zero is -0 only if every value is -0 (the
/// sign IEEE addition gives under round to nearest); no values give +0, the library's n = 0.
float exact_sum(std::span<const float> values);
/// The same for double (overflow at 2^1024).
double exact_sum(std::span<const double> values);

/// exact_sum over values given in pieces (regenerated data, threads): add() each piece, merge()
/// other sums, result() at any time. Exact for up to 2^62 values. On one core of the 2-core
/// development machine (AMD EPYC, other builds running; bench_exact_reference, 2^30 elements,
/// 2026-11-25): 660-770 M floats/s and 430-550 M doubles/s, whatever the distribution.
template <class T>
class ReferenceSum {
 public:
  ReferenceSum();
  ~ReferenceSum();
  ReferenceSum(const ReferenceSum& other);
  ReferenceSum& operator=(const ReferenceSum& other);
  ReferenceSum(ReferenceSum&&) noexcept;
  ReferenceSum& operator=(ReferenceSum&&) noexcept;

  void add(std::span<const T> values);
  void merge(const ReferenceSum& other);
  /// exact_sum of every value added and merged so far.
  T result() const;
  /// How many values were added and merged.
  std::uint64_t count() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

extern template class ReferenceSum<float>;
extern template class ReferenceSum<double>;

}  // namespace tunedreduce::exact
