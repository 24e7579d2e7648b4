#pragma once
// The names of the segmented families and layouts, as tune.toml and the canonical text write
// them: kernels/segmented's (seg_family_name, seg_layout_name in kernels/segmented/entries.cpp),
// restated as tables here so that tuner/config/, which the fuzz targets compile without the
// registry's code (fuzz/CMakeLists.txt), needs none of it; tests/tuner/test_seg_config.cpp
// compares them with the registry's.

#include "common/enum_names.hpp"
#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::tuner {

inline constexpr auto seg_family_names = enum_names<kernels::segmented::SegFamily>(
    {{kernels::segmented::SegFamily::thread, "thread"},
     {kernels::segmented::SegFamily::group, "group"},
     {kernels::segmented::SegFamily::block, "block"},
     {kernels::segmented::SegFamily::split, "split"},
     {kernels::segmented::SegFamily::tile, "tile"},
     {kernels::segmented::SegFamily::balanced, "balanced"}});
static_assert(seg_family_names.lists_all_through(kernels::segmented::SegFamily::balanced));

inline constexpr auto seg_layout_names = enum_names<kernels::segmented::SegLayout>(
    {{kernels::segmented::SegLayout::fixed, "fixed"},
     {kernels::segmented::SegLayout::offsets32, "offsets32"},
     {kernels::segmented::SegLayout::offsets64, "offsets64"}});
static_assert(seg_layout_names.lists_all_through(kernels::segmented::SegLayout::offsets64));

/// Whether the compiled configuration \p p runs the grid's rows of \p segment_size elements (the
/// problem of tuner/segmented_space.hpp: contiguous rows, a 256-byte aligned input, counts within
/// max_segments): SegEntry::can_implement refuses only the tile family's rows whose length does
/// not divide its 16-byte vector there. tests/tuner/test_seg_config.cpp checks it against
/// can_implement.
constexpr bool seg_runs_rows_of(const kernels::segmented::SegParams& p,
                                std::uint64_t segment_size) {
  return p.family != kernels::segmented::SegFamily::tile ||
         (p.layout == kernels::segmented::SegLayout::fixed && segment_size > 0 &&
          static_cast<std::uint64_t>(p.vec) % segment_size == 0);
}

}  // namespace tunedreduce::tuner
