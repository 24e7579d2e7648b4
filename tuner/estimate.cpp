#include "tuner/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iterator>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/bisect.hpp"

namespace tunedreduce::tuner {

double EstimateModel::launch_us(DType t, std::uint64_t n) const {
  const double bytes = static_cast<double>(n) * dtype_size(t);
  return std::max(launch_floor_us, bytes / (bandwidth_gbps * 1e3));  // GB/s = 1e3 bytes/us
}

double EstimateModel::measurement_s(DType t, std::uint64_t n, const MeasurePolicy& p,
                                    std::optional<int> fixed_repeats) const {
  const double repeats =
      fixed_repeats ? *fixed_repeats
                    : std::min<double>(p.max_repeats, std::max(p.min_repeats, 2 * p.min_repeats));
  const double per_launch_us = launch_us(t, n) + (p.l2 == L2Mode::cold ? flush_us : 0);
  const double warmup_us = p.warmup * per_launch_us;
  const double timed_us = std::min(repeats * per_launch_us, p.budget_ms * 1e3);
  return (warmup_us + timed_us) / 1e6 + per_measurement_ms / 1e3;
}

double EstimateModel::search_s(DType t, std::uint64_t n, std::size_t candidates,
                               const TuneConfig& c) const {
  const StrategyInfo* s = find_strategy(c.strategy.name);
  if (!s) return 0;
  const PlannedSearch plan = s->plan(candidates, c.strategy, c.measure);
  double total = 0;
  for (const PlannedRound& r : plan.rounds)
    total += r.measurements * measurement_s(t, n, c.measure, r.repeats);
  if (plan.cap_seconds) total = std::min(total, *plan.cap_seconds);
  return total + static_cast<double>(n) * dtype_size(t) / (setup_gbps * 1e9);
}

double EstimateModel::search_measurements(std::size_t candidates, const TuneConfig& c) const {
  const StrategyInfo* s = find_strategy(c.strategy.name);
  if (!s) return 0;
  double total = 0;
  for (const PlannedRound& r : s->plan(candidates, c.strategy, c.measure).rounds)
    total += r.measurements;
  return total;
}

double Plan::measurements() const {
  double n = 0;
  for (const KeyPlan& k : keys) n += k.measurements + k.bisect_measurements;
  for (const SegKeyPlan& k : segmented) n += k.measurements + k.bisect_measurements;
  return n;
}

double Plan::seconds() const {
  double s = overhead_s;
  for (const KeyPlan& k : keys) s += k.seconds();
  for (const SegKeyPlan& k : segmented) s += k.seconds();
  return s;
}

Plan make_plan(const TuneConfig& c, const EstimateModel& m, std::size_t devices) {
  Plan plan;
  plan.devices = devices;
  plan.overhead_s = m.worker_start_s;
  for (const KeySpace& k : enumerate_space(c.space)) {
    KeyPlan kp;
    kp.dtype = k.dtype;
    kp.op = k.op;
    kp.candidates = k.candidates.size();
    kp.sizes = k.sizes.size();
    for (std::uint64_t n : k.sizes) {
      kp.measurements += m.search_measurements(k.count_at(n), c);
      kp.search_s += m.search_s(k.dtype, n, k.count_at(n), c);
    }
    if (c.bisect.enabled && k.sizes.size() > 1 && kp.candidates > 1) {
      for (std::size_t i = 1; i < k.sizes.size(); ++i) {
        const double probes = m.crossovers_per_gap * 2 * c.bisect.max_depth;
        const auto mid = static_cast<std::uint64_t>(
            std::sqrt(static_cast<double>(k.sizes[i - 1]) * static_cast<double>(k.sizes[i])));
        kp.bisect_measurements += probes;
        kp.bisect_s += probes * m.measurement_s(k.dtype, mid, c.measure);
      }
    }
    plan.keys.push_back(kp);
  }
  for (const SegKeySpace& k : enumerate_segmented(c.segmented)) {
    SegKeyPlan kp;
    kp.dtype = k.dtype;
    kp.op = k.op;
    kp.layout = k.layout;
    kp.candidates = k.candidates.size();
    kp.points = k.points.size();
    std::map<std::uint64_t, std::vector<std::uint64_t>> columns;  // count -> its sizes
    for (const SegPoint& p : k.points) {
      kp.point_candidates += p.candidates.size();
      kp.measurements += m.search_measurements(p.candidates.size(), c);
      kp.search_s += m.search_s(k.dtype, p.total(), p.candidates.size(), c);
      columns[p.count].push_back(p.segment_size);
    }
    if (c.bisect.enabled && kp.candidates > 1) {
      // Along the counts: a size measured at two neighbouring counts, at their geometric
      // midpoint.
      for (auto it = columns.begin(); it != columns.end() && std::next(it) != columns.end(); ++it) {
        const auto& [count, sizes] = *it;
        const auto& [above, above_sizes] = *std::next(it);
        const std::uint64_t mid = geometric_midpoint(count, above);
        for (std::uint64_t size : sizes) {
          if (std::find(above_sizes.begin(), above_sizes.end(), size) == above_sizes.end())
            continue;
          const double probes = m.crossovers_per_gap * 2 * c.bisect.max_depth;
          kp.bisect_measurements += probes;
          kp.bisect_s += probes * m.measurement_s(k.dtype, size * mid, c.measure);
        }
      }
      std::vector<kseg::SegParams> params;
      for (const std::string& id : k.candidates)
        if (const auto p = kseg::parse_seg_id(id)) params.push_back(*p);
      for (const auto& [count, sizes] : columns)
        for (std::size_t i = 1; i < sizes.size(); ++i) {
          const double probes = m.crossovers_per_gap * 2 * c.bisect.max_depth;
          const auto mid = static_cast<std::uint64_t>(
              std::sqrt(static_cast<double>(sizes[i - 1]) * static_cast<double>(sizes[i])));
          kp.bisect_measurements += probes;
          kp.bisect_s += probes * m.measurement_s(k.dtype, mid * count, c.measure);
          // A refinement point (tuner/seg_rectangles.hpp), where a candidate that runs the lower
          // size cannot run the midpoint (a tile) and wins there, as often as a crossover: every
          // candidate that runs the midpoint, once.
          const std::uint64_t at = geometric_midpoint(sizes[i - 1], sizes[i]);
          std::size_t run_lo_not_mid = 0, run_mid = 0;
          for (const kseg::SegParams& p : params) {
            const bool mid_ok = seg_takes(p, at, count);
            run_mid += mid_ok;
            run_lo_not_mid += !mid_ok && seg_takes(p, sizes[i - 1], count);
          }
          if (run_lo_not_mid > 0 && run_mid > 1) {
            const double refine = m.crossovers_per_gap * static_cast<double>(run_mid);
            kp.bisect_measurements += refine;
            kp.bisect_s += refine * m.measurement_s(k.dtype, at * count, c.measure);
          }
        }
    }
    plan.segmented.push_back(kp);
  }
  return plan;
}

std::string format_duration(double seconds) {
  std::ostringstream s;
  if (seconds < 60) {
    s << std::fixed << std::setprecision(1) << seconds << " s";
    return s.str();
  }
  const auto total = static_cast<long long>(std::llround(seconds));
  const long long h = total / 3600, mnt = (total % 3600) / 60, sec = total % 60;
  if (h > 0) s << h << "h " << std::setw(2) << std::setfill('0') << mnt << "m";
  else s << mnt << "m " << std::setw(2) << std::setfill('0') << sec << "s";
  return s.str();
}

void print_plan(std::ostream& os, const Plan& plan, const TuneConfig& c, const EstimateModel& m) {
  const auto& p = c.measure;
  os << "plan: strategy " << c.strategy.name << ", L2 " << db::l2_mode_name(p.l2) << ", warm-up "
     << p.warmup << ", repeats " << p.min_repeats << ".." << p.max_repeats << ", budget "
     << p.budget_ms << " ms, bisection "
     << (c.bisect.enabled ? "depth " + std::to_string(c.bisect.max_depth) : std::string("off"))
     << "\n"
     << "estimate model: per measurement (warm-up + repeats) x (max(" << m.launch_floor_us
     << " us, bytes / " << m.bandwidth_gbps << " GB/s)"
     << (p.l2 == L2Mode::cold
             ? " + " + std::to_string(static_cast<int>(m.flush_us)) + " us L2 flush"
             : std::string())
     << "), capped at the budget, + " << m.per_measurement_ms
     << " ms overhead; expected repeats min(max, 2 x min); per size bytes / " << m.setup_gbps
     << " GB/s set-up; bisection " << m.crossovers_per_gap << " crossovers per gap x 2 x depth; "
     << m.worker_start_s << " s worker start\n\n";
  // The operator column as wide as the longest name of the plan (5 for sum, min and max, as it
  // always was; wide_sum, exact_sum, argmin and argmax widen it).
  int op_width = 5;
  for (const KeyPlan& k : plan.keys)
    op_width = std::max(op_width, static_cast<int>(std::string_view(op_name(k.op)).size()) + 1);
  int seg_op_width = 5;  // the segmented table's, likewise
  for (const SegKeyPlan& k : plan.segmented)
    seg_op_width =
        std::max(seg_op_width, static_cast<int>(std::string_view(op_name(k.op)).size()) + 1);
  os << std::left << std::setw(6) << "dtype" << std::setw(op_width) << "op" << std::right
     << std::setw(11) << "candidates" << std::setw(7) << "sizes" << std::setw(14) << "measurements"
     << std::setw(12) << "bisection" << std::setw(12) << "estimate"
     << "\n";
  for (const KeyPlan& k : plan.keys)
    os << std::left << std::setw(6) << dtype_name(k.dtype) << std::setw(op_width) << op_name(k.op)
       << std::right << std::setw(11) << k.candidates << std::setw(7) << k.sizes << std::setw(14)
       << static_cast<long long>(std::llround(k.measurements)) << std::setw(12)
       << static_cast<long long>(std::llround(k.bisect_measurements)) << std::setw(12)
       << format_duration(k.seconds()) << "\n";
  if (!plan.segmented.empty()) {
    os << "\nsegmented (grid points: segment size x count, at most " << c.segmented.max_total
       << " elements; candidates: those that run the point, summed over the points):\n"
       << std::left << std::setw(6) << "dtype" << std::setw(seg_op_width) << "op" << std::setw(10)
       << "layout" << std::right << std::setw(11) << "candidates" << std::setw(8) << "points"
       << std::setw(14) << "measurements" << std::setw(12) << "bisection" << std::setw(12)
       << "estimate"
       << "\n";
    for (const SegKeyPlan& k : plan.segmented)
      os << std::left << std::setw(6) << dtype_name(k.dtype) << std::setw(seg_op_width)
         << op_name(k.op) << std::setw(10) << kseg::seg_layout_name(k.layout) << std::right
         << std::setw(11) << k.point_candidates << std::setw(8) << k.points << std::setw(14)
         << static_cast<long long>(std::llround(k.measurements)) << std::setw(12)
         << static_cast<long long>(std::llround(k.bisect_measurements)) << std::setw(12)
         << format_duration(k.seconds()) << "\n";
  }
  std::size_t cands = 0;
  for (const KeyPlan& k : plan.keys) cands += k.candidates;
  os << "\ntotal: " << plan.keys.size() << " keys (dtype, op), " << cands << " candidates, "
     << (plan.keys.empty() ? 0 : plan.keys.front().sizes) << " sizes each";
  if (!plan.segmented.empty()) {
    std::size_t points = 0, seg_cands = 0;
    for (const SegKeyPlan& k : plan.segmented) {
      points += k.points;
      seg_cands += k.point_candidates;
    }
    os << "; " << plan.segmented.size() << " segmented keys and layouts, " << points
       << " grid points, " << seg_cands << " candidates over them";
  }
  os << ", " << static_cast<long long>(std::llround(plan.measurements()))
     << " measurements, estimated " << format_duration(plan.seconds());
  if (plan.devices > 1)
    os << " on one GPU; of the " << plan.devices
       << " devices, different models tune in parallel, and k GPUs of one model share its work "
          "(about 1/k of the time)";
  os << "\n";
}

}  // namespace tunedreduce::tuner
