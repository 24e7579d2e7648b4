#pragma once
// Winner selection: a candidate that is not ok never wins; candidates within noise of the fastest
// are a tie, broken by a fixed rule (docs/tuning.md, "The tie rule").

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tuner/runner.hpp"

namespace tunedreduce::tuner {

/// When two ok results count as equal: what the tie rule below may give away.
struct TieRule {
  /// Medians closer than this fraction are always within noise (the smallest difference a
  /// second measurement minutes later would reproduce).
  double min_relative = 0.005;
  /// ... and never when they differ by this much, however uncertain both medians are: the most
  /// speed the tie rule may trade for its preference.
  double max_relative = 0.01;
  /// How much slower than the fastest an f32 exact entry whose expansion holds two doubles
  /// (family exact_wide) may be and still win over a one-double entry (exact,
  /// exact_registers): those run floats whose rounds span more than 25-27 binades (log-uniform
  /// data over 2^-20..2^20, say) at a tenth of their speed, exact_wide at 0.81-0.99x CUB, and the
  /// tuner's data (uniform in [-1024, 1024)) cannot show it (docs/performance.md 3.21).
  double wide_rounds_relative = 0.02;
};

/// (p90 - p10) / median of an ok result; 0 when p10 or p90 is missing.
double relative_spread(const Result& r);

/// The standard error of an ok result's median, relative to it: 0.489 x relative_spread /
/// sqrt(repeats) (the median of n samples of a normal distribution has a standard error of
/// 1.2533 sigma / sqrt(n), and its p10-p90 span is 2.563 sigma). The relative spread itself when
/// the repeats are unknown (0).
double relative_median_error(const Result& r);

/// Two ok results are within noise when their medians differ, relative to the smaller median, by
/// less than two standard errors of that difference (sqrt of the sum of both medians' squared
/// relative_median_error), clamped to [rule.min_relative, rule.max_relative]. It is the medians
/// that are compared, so their uncertainty counts, not the spread of single runs: 100 runs with a
/// 7 % p10-p90 spread locate a median within ~0.35 %. False when either is not ok.
bool within_noise(const Result& a, const Result& b, const TieRule& rule = {});

/// Preference among tied candidates: single_pass before two_pass when \p one_launch_counts;
/// otherwise a grid of one block per tile before a persistent one (kernels::has_persistent_grid:
/// the hardware balances tiles over the multiprocessors; a persistent grid splits the input
/// evenly up front and waits for its slowest block); then the smaller block x unroll (fewer
/// threads and registers in flight), then the lexicographically smaller id. True when \p a is
/// preferred to \p b. Ids that are not registry ids sort after those that are, by id. Between two
/// segmented entries ("seg.*"): one kernel before the split family's two when \p
/// one_launch_counts, then the smaller id.
bool preferred_in_tie(std::string_view a, std::string_view b, bool one_launch_counts = true);

/// A second kernel's launch, measured back to back on the H100 (docs/performance.md: two empty
/// kernels 5.4 us, one 3.0 us). The one-launch preference of the tie rule applies only while it
/// is more than the tie tolerance's ceiling of the fastest median (below 240 us with the default
/// 1 %); above, a tie is within noise of what a second launch costs anyway, and single_pass
/// winners chosen for it ran 1-4 % slower than CUB on the H200 in a later call
/// (docs/performance.md 3.1).
inline constexpr double second_launch_us = 2.4;

/// For the id of an f32 exact entry: whether its expansion holds two doubles (exact_wide), so
/// that it sums rounds of floats up to 51-55 binades wide without spilling, or one (exact,
/// exact_registers); nullopt for any other id (TieRule::wide_rounds_relative).
std::optional<bool> float_exact_holds_wide_rounds(std::string_view id);

/// Speed order: the smaller median first, then the smaller id (deterministic). Results that are
/// not ok come after every ok one.
bool faster(const Result& a, const Result& b);

struct Selection {
  std::optional<std::size_t> winner;     // index into the results; empty when none is ok
  std::optional<std::size_t> runner_up;  // the fastest ok result other than the winner
  std::size_t ok = 0;                    // ok results
  std::size_t tied = 0;                  // results within noise of the fastest (itself included)
  /// runner_up.median / winner.median - 1; negative when the tie rule chose a winner slower
  /// than the runner-up (within noise). Empty without a runner-up.
  std::optional<double> margin;
};

/// Chooses the winner of \p results (one size, one dtype and op): the fastest ok result, or,
/// when several are within noise of the fastest, the one preferred_in_tie among them; then, if
/// that is a one-double f32 exact entry, the fastest exact_wide f32 entry instead where it is
/// within rule.wide_rounds_relative of the fastest.
Selection select_winner(std::span<const Result> results, const TieRule& rule = {});

/// Indices of \p results, best first: the winner, the runner-up, the other ok results by speed,
/// then the results that are not ok in their original order.
std::vector<std::size_t> rank_results(std::span<const Result> results, const TieRule& rule = {});

}  // namespace tunedreduce::tuner
