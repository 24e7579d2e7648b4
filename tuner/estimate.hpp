#pragma once
// The time a tuning run takes, estimated with no GPU: the model (EstimateModel, which also
// weights the driver's ETA) and the dry-run plan built on it (candidates and seconds per key).
//
// Per measurement of a candidate at n elements of T (bytes = n * sizeof(T), the input read: the
// element's size also for wide_sum, argmin and argmax, whose results are wider):
//   launch_us  = max(launch_floor_us, bytes / bandwidth)             one timed reduction
//   timed      = (warmup + expected repeats) * (launch_us + flush_us if L2 is cold)
//   measurement = min(timed, budget_ms + warm-up) + per_measurement_ms
// expected repeats = min(max_repeats, max(min_repeats, 2 * min_repeats)) for the full policy,
// or a strategy's fixed repeats (halving's early rounds). Per grid size: input set-up and the
// host reference, bytes / setup_gbps. Per device and run: worker_start_s. Bisection: assumed
// one crossover per 4 neighbouring grid sizes, each costing 2 * max_depth measurements.
// A segmented grid point (segment size L x count S) is a grid size of n = L x S elements (the
// input read; the S results written are left out); its bisection, along the sizes of each count,
// one crossover per 4 neighbouring sizes of that count, at their geometric midpoint.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <vector>

#include "tuner/config.hpp"
#include "tuner/search_space.hpp"
#include "tuner/segmented_space.hpp"

namespace tunedreduce::tuner {

struct EstimateModel {
  double launch_floor_us = 5;        // two kernels back to back on an H100, L2 flushed
  double bandwidth_gbps = 3000;      // a reduction's read rate on an H100 (3352 theoretical)
  double flush_us = 20;              // writing 50 MB of L2 out, plus its launch
  double per_measurement_ms = 1.0;   // request, allocation, verification, record (IPC + SQLite)
  double setup_gbps = 5;             // filling the input and the host reference, per grid size
  double worker_start_s = 2;         // a worker process and its CUDA context
  double crossovers_per_gap = 0.25;  // bisection: crossovers per pair of neighbouring sizes

  /// One timed reduction, microseconds.
  double launch_us(DType t, std::uint64_t n) const;
  /// Seconds for one measurement of one candidate; \p fixed_repeats as a strategy's round asks.
  double measurement_s(DType t, std::uint64_t n, const MeasurePolicy& p,
                       std::optional<int> fixed_repeats = std::nullopt) const;
  /// Seconds for the strategy at one grid size with \p candidates.
  double search_s(DType t, std::uint64_t n, std::size_t candidates, const TuneConfig& c) const;
  /// Measurements the strategy makes at one grid size.
  double search_measurements(std::size_t candidates, const TuneConfig& c) const;
};

struct KeyPlan {
  DType dtype = DType::i32;
  Op op = Op::sum;
  std::size_t candidates = 0;
  std::size_t sizes = 0;
  double measurements = 0;  // strategy, all grid sizes
  double search_s = 0;
  double bisect_measurements = 0;
  double bisect_s = 0;
  double seconds() const { return search_s + bisect_s; }
};

/// One segmented key (dtype, op) and layout.
struct SegKeyPlan {
  DType dtype = DType::f32;
  Op op = Op::sum;
  kseg::SegLayout layout = kseg::SegLayout::fixed;
  std::size_t candidates = 0;        // selected configurations
  std::size_t points = 0;            // grid points with a candidate
  std::size_t point_candidates = 0;  // candidates summed over the points (measured once each)
  double measurements = 0;           // strategy, all grid points
  double search_s = 0;
  double bisect_measurements = 0;
  double bisect_s = 0;
  double seconds() const { return search_s + bisect_s; }
};

struct Plan {
  std::vector<KeyPlan> keys;
  std::vector<SegKeyPlan> segmented;  // [segmented]: measured after every key above
  std::size_t devices = 1;
  double overhead_s = 0;        // worker start
  double measurements() const;  // both parts
  /// Every key (and segmented key) plus the overhead, on one GPU. Models tune in parallel, each
  /// every key for itself; k GPUs of one model share its grid sizes (about 1/k of this each).
  double seconds() const;
};

Plan make_plan(const TuneConfig& c, const EstimateModel& m = {}, std::size_t devices = 1);

/// The plan as text: the model, one line per key, one per segmented key and layout, the totals.
void print_plan(std::ostream& os, const Plan& plan, const TuneConfig& c,
                const EstimateModel& m = {});

/// "1h 02m", "3m 05s", "12.3 s".
std::string format_duration(double seconds);

}  // namespace tunedreduce::tuner
