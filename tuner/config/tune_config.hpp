#pragma once
// The validated configuration of a tuning run: what tune.toml and the flags ask for, every key
// set (docs/tuning.md).

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "tuner/runner.hpp"
#include "tuner/strategies.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce::tuner {

/// [space]: what is searched. Every list is non-empty, duplicate-free, in the order given.
struct SpaceConfig {
  std::vector<kernels::Family> families;
  std::vector<int> blocks;
  std::vector<int> unrolls;             // ignored for families without an unroll factor
  std::vector<kernels::SmemMode> smem;  // static/dynamic; ignored for families other than smem
  std::vector<kernels::Finish> finishes;
  std::vector<DType> dtypes;
  std::vector<Op> ops;
  std::vector<std::uint64_t> sizes;  // ascending, unique, each in [1, kernels::max_elements]
};

/// [bisect]: locating the crossover between neighbouring sizes whose winners differ.
struct BisectConfig {
  bool enabled = true;
  int max_depth = 5;        // at most this many midpoints per crossover
  double precision = 0.05;  // stop once hi / lo <= 1 + precision
};

struct TuneConfig {
  SpaceConfig space;
  MeasurePolicy measure;
  StrategyConfig strategy;
  BisectConfig bisect;
  std::string source;  // the file it was read from ("" when built from defaults only)
};

/// The configuration with every key at its default (docs/tuning.md): the whole compiled space,
/// sizes 2^10 .. 2^30 by factor 2, halving, cold L2.
TuneConfig default_config();

}  // namespace tunedreduce::tuner
