#pragma once
// The seam between the search (strategies, bisection, winners: host-only, tested in CI) and the
// measuring (GPU workers under a supervisor, or a replay of a recorded database).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "db/records.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce::tuner {

using db::L2Mode;
using db::Outcome;

/// How each candidate is measured (tune.toml [measure]).
struct MeasurePolicy {
  int warmup = 1;               // untimed launches first (then the untimed verification launch)
  int min_repeats = 5;          // timed launches, at least
  int max_repeats = 100;        // and at most
  double budget_ms = 250;       // wall time per candidate, after which it stops repeating
  double target_spread = 0.02;  // stop once (p90 - p10) / median is at most this
  L2Mode l2 = L2Mode::cold;     // cold: L2 flushed before every timed launch
  double timeout_s = 10;        // a candidate that has not answered by then is killed: `timeout`
};

/// One measurement to make: a registry entry (its id implies dtype and op) at one n.
struct Request {
  std::string kernel_id;
  std::uint64_t n = 0;
  /// A segmented entry ("seg.*"): the elements per segment (n is the total, a multiple of it).
  std::optional<std::uint64_t> segment_size;
  /// Overrides of the policy for this request (successive halving asks for few repeats first,
  /// then more for the survivors).
  std::optional<int> min_repeats, max_repeats;
  std::optional<double> budget_ms;
};

/// The policy \p req is measured with: \p policy with the request's overrides, max_repeats
/// raised to min_repeats where an override put it below. The worker measures with it, and resume
/// (tuner/resume.hpp) reads from it whether a recorded measurement answers the request.
inline MeasurePolicy policy_for(const MeasurePolicy& policy, const Request& req) {
  MeasurePolicy p = policy;
  if (req.min_repeats) p.min_repeats = *req.min_repeats;
  if (req.max_repeats) p.max_repeats = *req.max_repeats;
  if (req.budget_ms) p.budget_ms = *req.budget_ms;
  if (p.max_repeats < p.min_repeats) p.max_repeats = p.min_repeats;
  return p;
}

/// What came of a request: a measurement (the candidate, its outcome, its Timing in microseconds
/// of GPU time per reduction, the error when it is not ok), as the worker sends it and the
/// database stores it, and where it is recorded. The worker fills what it measured (kernel_id,
/// dtype, op, n, outcome, the timing, error); a recording runner adds the rest before storing it,
/// and a replay or a resume takes the whole measurement from the database.
struct Result : db::Measurement {
  std::optional<std::int64_t> measurement_id;  // its row in the database, when recorded
  bool reused = false;  // taken from the database (resume) instead of measured now

  bool ok() const { return outcome == Outcome::ok && median_us.has_value(); }
};

/// Where a recording runner (the GPU runner) stores its results: the device and run rows it
/// created in the database, and the soft attributes winners must carry.
struct Recording {
  std::int64_t device_id = 0;
  std::int64_t run_id = 0;
  int driver_version = 0;
  int runtime_version = 0;
};

/// Measures requests. Implementations record every result as it finishes (GPU runner) or look
/// them up (replay; resume, before it asks the GPU runner: tuner/resume.hpp). Results come back
/// in request order. When a cancellation flag the runner was given is set, measure() returns
/// early with the results finished so far (fewer than asked).
class Runner {
 public:
  virtual ~Runner() = default;
  virtual std::vector<Result> measure(std::span<const Request> requests) = 0;
  /// The device's attainable read bandwidth (GB/s) when known: every result's % of it.
  virtual std::optional<double> attainable_gbps() const { return std::nullopt; }
  /// The database rows results go to; nullopt for runners that record nothing (replay). The
  /// caller writes winners under recording()->device_id and ends the run with end_run().
  virtual std::optional<Recording> recording() const { return std::nullopt; }
};

}  // namespace tunedreduce::tuner
