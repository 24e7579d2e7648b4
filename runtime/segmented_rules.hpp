#pragma once
// The built-in rules of the segmented reductions: which segmented kernel runs a shape on a GPU
// that has no tuning data for it (docs/library.md, "Segmented reductions"). A pure function of
// the problem and the device's limits, so the host tests check it without a GPU.

#include <cstddef>
#include <string>

#include "kernels/segmented/segmented.hpp"
#include "tunedreduce/segmented.hpp"

namespace tunedreduce::runtime {

/// The segmented layout of \p l; nullopt-free: l must be a valid SegmentLayout.
kernels::segmented::SegLayout seg_layout_of(SegmentLayout l);

/// The problem of \p seg as the kernels take it.
kernels::segmented::SegProblem seg_problem_of(const Segments& seg);

/// Offsets whose lengths may spread far from their mean: the caller gave no longest length, no
/// mean, or a longest length above 4 x the mean (Segments::max_length). They take the balanced
/// family, and no tuned winner (tuned on segments all of the mean length).
bool lengths_may_spread(const Segments& seg);

/// The configuration the built-in rules choose for (dtype, op, seg) with the input at
/// \p in_alignment bytes; \p rule receives why, for SegmentedConfig::source.
kernels::segmented::SegParams builtin_segmented(DType dtype, Op op, const Segments& seg,
                                                std::size_t in_alignment,
                                                const kernels::DeviceLimits& dev,
                                                std::string& rule);

}  // namespace tunedreduce::runtime
