#pragma once
// Search strategies, in the Kernel Tuner style: each one a small function over (the candidates of
// one size, the runner, the options) returning the results the winner is chosen from. Adding a
// strategy is one function and one row of strategies(), with its options: the tune.toml keys
// [strategy.NAME] (declared beside the strategy; the schema, tuner/config/schema.hpp, adds them)
// and the options struct they are stored in.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/config/key.hpp"
#include "tuner/runner.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce::tuner {

/// [strategy.random]: a uniform sample without replacement, within a budget per size.
struct RandomOptions {
  std::optional<std::int64_t> count;  // at most this many candidates per size
  std::optional<double> seconds;      // stop sampling once this much wall time went by per size
};

/// [strategy.halving]: successive halving.
struct HalvingOptions {
  double keep = 0.25;     // fraction of the candidates kept after each round
  int first_repeats = 3;  // timed repeats of every candidate in the first round
  double growth = 3;      // repeats multiply by this from one round to the next
  int final_size = 4;     // once at most this many remain, they are measured with the full policy
};

/// [strategy].
struct StrategyConfig {
  std::string name = "halving";
  std::uint64_t seed = 1;  // random: the same seed draws the same sample
  RandomOptions random;
  HalvingOptions halving;
};

/// What a strategy works with for one (dtype, op, n), or one grid point of a segmented key (n
/// the total, segment_size set).
struct SearchContext {
  Runner& runner;
  const MeasurePolicy& policy;
  const StrategyConfig& config;
  DType dtype = DType::i32;
  Op op = Op::sum;
  std::uint64_t n = 0;
  const std::atomic<bool>* cancel = nullptr;
  /// Monotonic seconds; empty: std::chrono::steady_clock. Tests inject a fake clock.
  std::function<double()> clock;
  /// Requests per Runner::measure call: the driver checks for cancellation and reports
  /// progress between calls.
  std::size_t chunk = 64;
  /// Called after every Runner::measure call with the number of results it returned.
  std::function<void(std::size_t)> on_measured;
  /// A segmented grid point: the elements per segment of every request (n is the total).
  std::optional<std::uint64_t> segment_size = std::nullopt;

  bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
  double now() const;
};

struct SearchOutcome {
  /// The results of the last round: the winner is chosen among these (select_winner).
  std::vector<Result> final_results;
  /// Every result, in the order measured (earlier rounds included).
  std::vector<Result> all;
  std::size_t requests = 0;
  int rounds = 0;
  bool cancelled = false;  // stopped by the cancellation flag: incomplete, to be discarded
};

using StrategyFn = SearchOutcome (*)(std::span<const std::string> candidates, SearchContext& ctx);

/// One round of measurements as a strategy expects to make it, for the dry-run estimate.
struct PlannedRound {
  double measurements = 0;
  std::optional<int> repeats;  // fixed repeats (min = max); empty: the policy's
};

struct PlannedSearch {
  std::vector<PlannedRound> rounds;
  std::optional<double> cap_seconds;  // a time budget that caps the whole search
};

struct StrategyInfo {
  std::string_view name;
  std::string_view summary;
  StrategyFn run;
  PlannedSearch (*plan)(std::size_t candidates, const StrategyConfig& config,
                        const MeasurePolicy& policy);
  /// Its keys, strategy.NAME.*: kinds, bounds, and where in the configuration they are kept.
  std::span<const KeySpec> options;
  /// A rule across its options, checked when it is the strategy chosen: the problem, or "".
  /// \p given tells whether a key was set (in the file or by a flag).
  std::string (*check)(const std::function<bool(std::string_view key)>& given) = nullptr;
};

/// Every strategy: exhaustive, random, halving.
std::span<const StrategyInfo> strategies();
/// nullptr for an unknown name.
const StrategyInfo* find_strategy(std::string_view name);

SearchOutcome search_exhaustive(std::span<const std::string> candidates, SearchContext& ctx);
SearchOutcome search_random(std::span<const std::string> candidates, SearchContext& ctx);
SearchOutcome search_halving(std::span<const std::string> candidates, SearchContext& ctx);

/// The candidates search_random measures, in order, for a seed and key: a deterministic
/// Fisher-Yates shuffle (SplitMix64, no std:: distributions, so every platform draws the same).
std::vector<std::string> random_order(std::span<const std::string> candidates, std::uint64_t seed,
                                      DType dtype, Op op, std::uint64_t n);

/// Measures \p requests in chunks of ctx.chunk, stopping early (outcome.cancelled) when the
/// cancellation flag is set. Checks that the runner answers every request, in order (the same
/// kernel id, n and segment size).
std::vector<Result> measure_chunked(std::span<const Request> requests, SearchContext& ctx,
                                    SearchOutcome& outcome);

}  // namespace tunedreduce::tuner
