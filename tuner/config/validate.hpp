#pragma once
// Validation of a RawConfig into a TuneConfig: the scalar keys against the bounds the schema
// gives them, the names and numbers of [space] against the registry's manifest, the rules across
// keys (min_repeats <= max_repeats, a budget for random, ...), all before any GPU work.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/config/raw.hpp"
#include "tuner/config/tune_config.hpp"

namespace tunedreduce::tuner {

struct ValidationLimits {
  /// The device's maxThreadsPerBlock, when known: larger blocks are refused.
  std::optional<int> max_threads_per_block;
};

/// Checks every value (ranges, the registry's manifest, a non-empty space) and returns the
/// configuration. Throws Error(usage) listing every problem.
TuneConfig validate_config(const RawConfig& raw, const ValidationLimits& limits = {});

/// Sizes of a range: from, from+step, ... (or from, from*factor, ... rounded, strictly
/// increasing) up to and including to. Throws Error(usage) with \p where for a range that does
/// not advance or has more than max_grid_sizes sizes.
std::vector<std::uint64_t> expand_range(std::uint64_t from, std::uint64_t to,
                                        std::optional<std::uint64_t> step,
                                        std::optional<double> factor,
                                        const std::string& where = "space.sizes");
inline constexpr std::size_t max_grid_sizes = 4096;

}  // namespace tunedreduce::tuner
