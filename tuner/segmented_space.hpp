#pragma once
// The segmented part of the search space ([segmented] of tune.toml): for each segmented key
// (dtype, op) and layout, the grid points (segment size L, segment count S) whose total L x S is
// within max_total, and at each point the candidates: the compiled segmented configurations of
// that key and layout (kernels/segmented/space.hpp, the ids of seg_registry()) of the selected
// families that can_implement the problem the worker measures there. The compiled space is read
// rather than seg_registry(), which only a program with the kernels (or tr_kernels_host) has.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/registry.hpp"
#include "kernels/segmented/segmented.hpp"
#include "kernels/segmented/space.hpp"
#include "tuner/config/tune_config.hpp"

namespace tunedreduce::tuner {

namespace kseg = kernels::segmented;

/// The input's alignment in the worker: a cudaMalloc'd buffer, 256 bytes.
inline constexpr std::size_t seg_input_alignment = 256;

/// Grid points of one key and layout, at most (sizes x counts within max_total).
inline constexpr std::size_t max_seg_grid_points = 65536;

/// The problem measured at (L, S): fixed, S contiguous rows of L elements (stride L); offsets,
/// S segments of L elements each, whose mean length L the caller gives. can_implement only asks
/// that offsets be given: a stand-in address here, the worker's device arrays there.
inline kseg::SegProblem seg_grid_problem(kseg::SegLayout layout, std::uint64_t segment_size,
                                         std::uint64_t count) {
  static const std::int64_t offsets_stand_in = 0;
  kseg::SegProblem p;
  p.num_segments = count;
  p.segment_size = segment_size;
  p.stride = segment_size;
  p.mean_length = segment_size;
  if (layout != kseg::SegLayout::fixed) p.begin = p.end = &offsets_stand_in;
  return p;
}

/// Whether the configuration \p p can run (L, S) with the worker's input on \p dev.
inline bool seg_takes(const kseg::SegParams& p, std::uint64_t segment_size, std::uint64_t count,
                      const kernels::DeviceLimits& dev = {}) {
  const kseg::SegEntry e{p, nullptr, nullptr};
  return !e.can_implement(seg_grid_problem(p.layout, segment_size, count), seg_input_alignment,
                          dev);
}

/// L x S when it is at most \p max_total (no overflow), else nothing: the grid's rule.
inline bool seg_within_total(std::uint64_t segment_size, std::uint64_t count,
                             std::uint64_t max_total) {
  return segment_size <= max_total && count <= max_total / segment_size;
}

/// The grid points (L, S) of \p g within max_total, by count, then size (each count's column
/// ascending in size: the axis that rectangles are cut along within a column). Inline, as
/// seg_configs: the validator (tuner/config/, compiled by the fuzz targets) uses both.
inline std::vector<std::pair<std::uint64_t, std::uint64_t>> seg_grid(const SegmentedConfig& g) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (std::uint64_t s : g.segment_counts)
    for (std::uint64_t l : g.segment_sizes)
      if (seg_within_total(l, s, g.max_total)) out.emplace_back(l, s);
  return out;
}

/// The compiled configurations of (dtype, op, layout) whose family is selected, in the space's
/// order.
inline std::vector<kseg::SegParams> seg_configs(const SegmentedConfig& g, DType dtype, Op op,
                                                kseg::SegLayout layout) {
  std::vector<kseg::SegParams> out;
  kseg::space::for_each_config(dtype, op, [&](const kseg::SegParams& p) {
    if (p.layout == layout &&
        std::find(g.families.begin(), g.families.end(), p.family) != g.families.end())
      out.push_back(p);
  });
  return out;
}

/// One grid point and the candidates measured there (ids, in the space's order).
struct SegPoint {
  std::uint64_t segment_size = 0;  // L
  std::uint64_t count = 0;         // S
  std::vector<std::string> candidates;
  std::uint64_t total() const { return segment_size * count; }  // n of its requests
};

/// One segmented key and layout: every selected configuration and the grid points where at least
/// one of them can run (points where none can are left out).
struct SegKeySpace {
  DType dtype = DType::f32;
  Op op = Op::sum;
  kseg::SegLayout layout = kseg::SegLayout::fixed;
  std::vector<std::string> candidates;
  std::vector<SegPoint> points;
};

/// Every (key, layout) of \p g, keys outer in the configuration's order, then layouts; none when
/// no segmented key is selected.
std::vector<SegKeySpace> enumerate_segmented(const SegmentedConfig& g,
                                             const kernels::DeviceLimits& dev = {});

/// "f32 sum fixed".
std::string seg_key_label(const SegKeySpace& k);

}  // namespace tunedreduce::tuner
