#pragma once
// From winners at grid sizes to winners of size intervals. Where neighbouring grid sizes have
// different winners A (at lo) and B (at hi), both are measured at the geometric midpoint, and the
// half where the winner changes is kept, up to bisect.max_depth times or until hi / lo is within
// 1 + bisect.precision. The intervals then cover [1, kernels::max_elements] without overlap:
// the smallest size's winner extends down to 1 and the largest size's up to max_elements. No
// interval reaches past what its winner takes (kernels::max_elements_of: a single_tile entry's
// tile): a midpoint beyond it goes to the larger sizes' winner unmeasured, and a boundary is
// never placed above it.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tuner/config.hpp"
#include "tuner/runner.hpp"
#include "tuner/selection.hpp"

namespace tunedreduce::tuner {

/// The winner of one grid size (an ok result) and its runner-up.
struct SizeWinner {
  std::uint64_t n = 0;
  Result winner;
  std::optional<Result> runner_up;
  std::optional<double> margin;  // runner_up / winner - 1
};

/// Run winner.kernel_id for n_lo <= n <= n_hi. The evidence is the winner's result at the grid
/// size inside the interval where its lead over the runner-up was smallest (winner.n).
struct IntervalWinner {
  std::uint64_t n_lo = 0;
  std::uint64_t n_hi = 0;
  Result winner;
  std::optional<Result> runner_up;
  std::optional<double> margin;
};

/// Where the winner changes from from_id (at lo) to to_id (at hi): to_id from n = boundary on.
struct Crossover {
  std::string from_id, to_id;
  std::uint64_t grid_lo = 0, grid_hi = 0;  // the neighbouring grid sizes
  std::uint64_t lo = 0, hi = 0;            // the final bracket: from_id wins at lo, to_id at hi
  std::uint64_t boundary = 0;              // the first size of to_id's interval
  int probes = 0;                          // midpoints measured
  bool undecided = false;                  // stopped because neither candidate was ok at a midpoint
};

struct BisectOutcome {
  std::vector<IntervalWinner> intervals;  // ascending, non-overlapping, covering [1, max]
                                          // (up to its tile where the last is single_tile)
  std::vector<Crossover> crossovers;
  std::vector<Result> probes;  // every result measured at a midpoint
  std::size_t requests = 0;
  bool cancelled = false;  // the intervals are then incomplete and empty
};

/// The geometric midpoint of lo < hi, strictly between them when hi - lo > 1.
std::uint64_t geometric_midpoint(std::uint64_t lo, std::uint64_t hi);

/// One bisection probe: \p from_id and \p to_id measured at \p n (with \p segment_size for
/// segmented entries), in that order. Adds 2 to \p requests, calls \p on_measured and appends
/// the answers to \p probes. Nothing when cancelled; a runner that answers fewer than both
/// without a cancel is an Error.
std::optional<std::vector<Result>> measure_pair(Runner& runner, const std::string& from_id,
                                                const std::string& to_id, std::uint64_t n,
                                                std::optional<std::uint64_t> segment_size,
                                                const std::atomic<bool>* cancel,
                                                const std::function<void(std::size_t)>& on_measured,
                                                std::size_t& requests, std::vector<Result>& probes);

/// \p grid: the winners of the grid sizes, ascending (sizes without an ok winner left out).
/// With bisect.enabled false nothing is measured and each boundary is the geometric midpoint of
/// its neighbouring grid sizes. \p on_measured is called after every Runner::measure call.
BisectOutcome bisect_intervals(std::span<const SizeWinner> grid, Runner& runner,
                               const BisectConfig& config,
                               const std::atomic<bool>* cancel = nullptr, const TieRule& rule = {},
                               const std::function<void(std::size_t)>& on_measured = {});

/// Converts intervals to database winners of one (dtype, op) measured in L2 mode \p l2_mode (the
/// run's: its measurements are the evidence). Results without a measurement id (not recorded)
/// make the winner unusable: those throw Error.
std::vector<db::Winner> to_db_winners(std::span<const IntervalWinner> intervals, DType dtype, Op op,
                                      db::L2Mode l2_mode, int driver_version, int runtime_version,
                                      std::optional<std::int64_t> run_id);

}  // namespace tunedreduce::tuner
