#pragma once
// The percentile of timing samples, as the tuner's workers and `tunedreduce bench` report them.

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tunedreduce {

/// The q-quantile (0..1) of \p sorted (ascending), interpolating linearly between neighbours;
/// 0 for no samples.
inline double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace tunedreduce
