#pragma once
// The validated configuration of a tuning run: what tune.toml and the flags ask for, every key
// set (docs/tuning.md).

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "kernels/segmented/segmented.hpp"
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

/// One segmented key: an element type and an operator with segmented kernels
/// (kernels::segmented::seg_op_applies), written "f32.sum" in tune.toml.
struct SegKey {
  DType dtype = DType::f32;
  Op op = Op::sum;
  friend bool operator==(const SegKey&, const SegKey&) = default;
};

/// "f32.sum".
std::string seg_key_name(const SegKey& k);

/// [segmented]: segmented reductions tuned over the shape, segment size L x segment count S.
/// Every list but keys is non-empty and duplicate-free; the grids ascend.
struct SegmentedConfig {
  std::vector<SegKey> keys;  // empty (the default): no segmented key is tuned
  std::vector<kernels::segmented::SegFamily> families;
  std::vector<kernels::segmented::SegLayout> layouts;
  std::vector<std::uint64_t> segment_sizes;   // elements per segment, each in [1, 2^40]
  std::vector<std::uint64_t> segment_counts;  // segments, each in [1, max_segments]
  /// Grid points whose total (L x S elements) exceeds this are left out.
  std::uint64_t max_total = std::uint64_t{1} << 28;
};

struct TuneConfig {
  SpaceConfig space;
  MeasurePolicy measure;
  StrategyConfig strategy;
  BisectConfig bisect;
  SegmentedConfig segmented;
  std::string source;  // the file it was read from ("" when built from defaults only)
};

/// The configuration with every key at its default (docs/tuning.md): the whole compiled space,
/// sizes 2^10 .. 2^30 by factor 2, halving, cold L2; no segmented key (the grid of [segmented]
/// at its defaults: every family, the fixed layout, sizes 1..2^20 by factor 4, counts 1..2^20 by
/// factor 16, totals up to 2^28).
TuneConfig default_config();

}  // namespace tunedreduce::tuner
