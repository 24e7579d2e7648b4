#include "tuner/bisect.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "kernels/manifest.hpp"
#include "kernels/registry.hpp"

namespace tunedreduce::tuner {

namespace {

bool cancelled(const std::atomic<bool>* c) { return c && c->load(std::memory_order_relaxed); }

double margin_or_inf(const SizeWinner& w) {
  return w.margin ? *w.margin : std::numeric_limits<double>::infinity();
}

/// The largest n the entry \p id takes (one tile for single_tile; an id the manifest lacks, as
/// in tests, takes any).
std::uint64_t capacity(const std::string& id) {
  const kernels::ManifestEntry* e = kernels::manifest_find(id);
  return e ? kernels::max_elements_of(e->params) : kernels::max_elements;
}

}  // namespace

std::uint64_t geometric_midpoint(std::uint64_t lo, std::uint64_t hi) {
  if (hi <= lo + 1) return hi;
  const double m = std::sqrt(static_cast<double>(lo)) * std::sqrt(static_cast<double>(hi));
  const auto r = static_cast<std::uint64_t>(std::llround(m));
  return std::clamp(r, lo + 1, hi - 1);
}

std::optional<std::vector<Result>> measure_pair(Runner& runner, const std::string& from_id,
                                                const std::string& to_id, std::uint64_t n,
                                                std::optional<std::uint64_t> segment_size,
                                                const std::atomic<bool>* cancel,
                                                const std::function<void(std::size_t)>& on_measured,
                                                std::size_t& requests,
                                                std::vector<Result>& probes) {
  Request req[2];
  req[0].kernel_id = from_id;
  req[1].kernel_id = to_id;
  req[0].n = req[1].n = n;
  req[0].segment_size = req[1].segment_size = segment_size;
  std::vector<Result> got = runner.measure(req);
  requests += 2;
  if (on_measured) on_measured(got.size());
  if (cancelled(cancel) || got.size() != 2) {
    if (!cancelled(cancel))
      throw Error(fmt::format("the runner answered {} of 2 requests", got.size()));
    return std::nullopt;
  }
  probes.insert(probes.end(), got.begin(), got.end());
  return got;
}

BisectOutcome bisect_intervals(std::span<const SizeWinner> grid, Runner& runner,
                               const BisectConfig& config, const std::atomic<bool>* cancel,
                               const TieRule& rule,
                               const std::function<void(std::size_t)>& on_measured) {
  BisectOutcome out;
  if (grid.empty()) return out;

  // Runs of consecutive grid sizes with the same winner.
  struct Run {
    std::size_t first, last;  // indices into grid
  };
  std::vector<Run> runs;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (!runs.empty() && grid[i].winner.kernel_id == grid[runs.back().last].winner.kernel_id)
      runs.back().last = i;
    else runs.push_back({i, i});
  }

  // The first size of each run after the first: where its winner takes over.
  std::vector<std::uint64_t> starts(runs.size(), 1);
  for (std::size_t r = 1; r < runs.size(); ++r) {
    const SizeWinner& a = grid[runs[r - 1].last];
    const SizeWinner& b = grid[runs[r].first];
    Crossover x{a.winner.kernel_id, b.winner.kernel_id, a.n, b.n, a.n, b.n, 0, 0, false};
    std::uint64_t lo = a.n, hi = b.n;
    if (config.enabled) {
      for (int depth = 0; depth < config.max_depth && hi - lo > 1 &&
                          static_cast<double>(hi) / static_cast<double>(lo) > 1 + config.precision;
           ++depth) {
        if (cancelled(cancel)) {
          out.cancelled = true;
          out.intervals.clear();
          return out;
        }
        const std::uint64_t m = geometric_midpoint(lo, hi);
        if (m > capacity(x.from_id)) {  // the smaller sizes' winner cannot take m: no contest
          hi = m;
          continue;
        }
        const std::optional<std::vector<Result>> got =
            measure_pair(runner, x.from_id, x.to_id, m, std::nullopt, cancel, on_measured,
                         out.requests, out.probes);
        if (!got) {
          out.cancelled = true;
          out.intervals.clear();
          return out;
        }
        ++x.probes;
        const Selection s = select_winner(*got, rule);
        if (!s.winner) {
          x.undecided = true;
          break;
        }
        if (*s.winner == 0) lo = m;
        else hi = m;
      }
    }
    x.lo = lo;
    x.hi = hi;
    x.boundary = geometric_midpoint(lo, hi);
    if (hi - lo > 1 && x.boundary == lo) x.boundary = lo + 1;
    // An interval never reaches past what its winner takes (lo <= capacity: it won at lo).
    x.boundary = std::min(x.boundary, capacity(x.from_id) + 1);
    starts[r] = x.boundary;
    out.crossovers.push_back(std::move(x));
  }

  for (std::size_t r = 0; r < runs.size(); ++r) {
    // The evidence: the grid size of the run where the winner's lead is smallest.
    std::size_t ev = runs[r].first;
    for (std::size_t i = runs[r].first; i <= runs[r].last; ++i)
      if (margin_or_inf(grid[i]) < margin_or_inf(grid[ev])) ev = i;
    IntervalWinner w;
    w.n_lo = r == 0 ? 1 : starts[r];
    w.n_hi = r + 1 < runs.size() ? starts[r + 1] - 1 : kernels::max_elements;
    // The last run's winner may be a single_tile entry (a grid that ends at small sizes): its
    // interval ends at its tile, and larger sizes have no winner here.
    w.n_hi = std::min(w.n_hi, capacity(grid[ev].winner.kernel_id));
    w.winner = grid[ev].winner;
    w.runner_up = grid[ev].runner_up;
    w.margin = grid[ev].margin;
    out.intervals.push_back(std::move(w));
  }
  return out;
}

std::vector<db::Winner> to_db_winners(std::span<const IntervalWinner> intervals, DType dtype, Op op,
                                      db::L2Mode l2_mode, int driver_version, int runtime_version,
                                      std::optional<std::int64_t> run_id) {
  std::vector<db::Winner> out;
  for (const IntervalWinner& iw : intervals) {
    if (!iw.winner.measurement_id)
      throw Error(
          fmt::format("winner '{}' at n={} has no recorded measurement: it cannot be "
                      "stored as a winner",
                      iw.winner.kernel_id, iw.winner.n));
    db::Winner w;
    w.dtype = dtype;
    w.op = op;
    w.l2_mode = l2_mode;
    w.n_lo = iw.n_lo;
    w.n_hi = iw.n_hi;
    w.kernel_id = iw.winner.kernel_id;
    w.measurement_id = *iw.winner.measurement_id;
    if (iw.runner_up && iw.runner_up->measurement_id) {
      w.runner_up_kernel_id = iw.runner_up->kernel_id;
      w.runner_up_measurement_id = iw.runner_up->measurement_id;
    }
    w.driver_version = driver_version;
    w.runtime_version = runtime_version;
    w.run_id = run_id;
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace tunedreduce::tuner
