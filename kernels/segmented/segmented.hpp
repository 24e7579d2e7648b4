#pragma once
// Segmented reductions: many reductions at once, one result per segment. Host-only header (no
// kernel templates): the registry of segmented entries, their parameters and ids, and what a
// launch takes. The kernels are kernels/segmented/kernels.cuh; the configurations that are
// compiled, kernels/segmented/space.hpp.
//
// Two layouts: fixed-size segments (the rows of a row-major matrix: segment s is
// in[s * stride, s * stride + segment_size)) and variable segments given by CUB's begin and end
// offset arrays (segment s is in[begin[s], end[s]); empty when end[s] <= begin[s]), with 32- or
// 64-bit offsets. Every family writes out[s] for s < num_segments and nothing else.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/candidate_params.hpp"
#include "kernels/registry.hpp"

namespace tunedreduce::kernels::segmented {

/// How the lanes of the grid are given to segments; the names are part of the product.
enum class SegFamily : std::uint8_t {
  thread,    // one thread per segment (short rows: L = 1..8)
  group,     // a group of `group` lanes (2..32, inside one warp) per segment, shuffles to combine
  block,     // one block per segment, a block-wide reduction
  split,     // `blocks per segment` blocks per segment (from the shape), partials in the
             // workspace, a second kernel combines each segment's partials in a fixed order
  tile,      // rows of 1, 2, 4 or 8 elements that divide a 16-byte vector (fixed layout,
             // contiguous, 16-byte aligned): each thread loads 4 vectors and writes their rows
  balanced,  // offsets: every block the same number of elements whatever the segments' lengths
             // (a scan of the lengths, tiles of the concatenation, the crossing segments joined
             // from the workspace: kernels/segmented/balanced.cuh)
};

/// Where the segments are.
enum class SegLayout : std::uint8_t {
  fixed,      // num_segments rows of segment_size elements, row s at s * stride
  offsets32,  // begin/end arrays of int32 offsets
  offsets64,  // begin/end arrays of int64 offsets
};

inline constexpr SegFamily all_seg_families[] = {SegFamily::thread, SegFamily::group,
                                                 SegFamily::block,  SegFamily::split,
                                                 SegFamily::tile,   SegFamily::balanced};
inline constexpr SegLayout all_seg_layouts[] = {SegLayout::fixed, SegLayout::offsets32,
                                                SegLayout::offsets64};

/// "thread", "group", "block", "split", "tile", "balanced"
const char* seg_family_name(SegFamily f) noexcept;
const char* seg_layout_name(SegLayout l) noexcept;  // "fixed", "offsets32", "offsets64"
std::optional<SegFamily> parse_seg_family(std::string_view s);
std::optional<SegLayout> parse_seg_layout(std::string_view s);

/// Whether operator \p o has segmented kernels: every operator but exact_sum (whose
/// accumulator does not fit a lane per segment; docs/kernels.md, "Segmented reductions") and
/// absmax (whole arrays only so far).
constexpr bool seg_op_applies(DType d, Op o) {
  return o != Op::exact_sum && o != Op::absmax && op_applies(d, o);
}

/// The parameters of one segmented entry.
struct SegParams {
  SegFamily family{};
  int block = 256;  // threads per block
  int group = 1;    // lanes per segment: 1 (thread, tile), 2..32 (group), block (block, split)
  int vec = 1;      // elements per load: 1, or 16 bytes' worth (aligned loads, scalar ends)
  SegLayout layout{};
  DType dtype{};
  Op op{};

  friend constexpr bool operator==(const SegParams&, const SegParams&) = default;
};

/// "seg.group.b256.g8.v4.fixed.f32.sum"; thread omits the g part (always 1) and block and split
/// omit it too (the block): "seg.block.b512.v4.offsets64.f64.max".
std::string make_seg_id(const SegParams& p);
/// Inverse of make_seg_id; nullopt for anything it would not produce.
std::optional<SegParams> parse_seg_id(std::string_view id);
/// The parameters of a segmented measurement as the database stores them (the columns of a
/// whole-array one, common/candidate_params.hpp): family "seg.FAMILY" (never a whole-array
/// family's name), block, unroll = the lanes per segment (group), smem "none", finish "two_pass"
/// for the split family (a second kernel combines the partials) and "single_pass" otherwise. The
/// vector width is in the id only.
CandidateParams stored_params(const SegParams& p);

/// Elements per 16-byte vector of \p d.
constexpr int vector_elements(DType d) { return static_cast<int>(16 / dtype_size(d)); }

/// The problem of one launch.
struct SegProblem {
  std::uint64_t num_segments = 0;
  /// fixed: elements per segment and the distance between segment starts (>= segment_size).
  std::uint64_t segment_size = 0;
  std::uint64_t stride = 0;
  /// offsets: device arrays of num_segments offsets each (int32 or int64, by layout).
  const void* begin = nullptr;
  const void* end = nullptr;
  /// offsets: the mean segment length the caller expects (0: unknown). It sets the split
  /// family's blocks per segment; nothing reads past a segment's end whatever it says.
  std::uint64_t mean_length = 0;
};

/// Arguments of one launch. The workspace must hold workspace_bytes() bytes, 256-byte aligned
/// (the split family's partials; no other family uses one), and may hold anything on entry.
struct SegLaunchArgs {
  const void* in = nullptr;
  void* out = nullptr;  // num_segments results of result_bytes(dtype, op) each
  SegProblem problem;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
  /// A completion counter outside the workspace (8 bytes, 8-byte aligned, zero on entry; every
  /// launch leaves it zero again; not used by another launch in flight: kernels/counters.hpp).
  /// With it the split family runs as one kernel where its partials are few (the last block
  /// folds them); without it, or with many partials, a second kernel folds them. The same
  /// results either way.
  unsigned long long* counter = nullptr;
};

/// Whether the family takes SegLaunchArgs::counter (split: its one-kernel finish; balanced: the
/// scan's ticket, else a word of its workspace zeroed by a memset first).
constexpr bool takes_counter(SegFamily f) {
  return f == SegFamily::split || f == SegFamily::balanced;
}

/// Largest number of segments, and of elements in one launch's input, a segmented entry takes.
inline constexpr std::uint64_t max_segments = std::uint64_t{1} << 40;

struct SegEntry {
  SegParams params;
  const char* id;
  /// Enqueues the reduction on args.stream; num_segments == 0 enqueues nothing. Returns the
  /// first CUDA error. A registry without kernels returns cudaErrorNoKernelImageForDevice.
  cudaError_t (*launch)(const SegLaunchArgs& args, const DeviceLimits& dev);

  /// Blocks the split family gives each segment of \p p (1 for the other families).
  std::uint64_t blocks_per_segment(const SegProblem& p, const DeviceLimits& dev) const;
  /// The balanced family's tiles for \p p: a block each, as many as are resident at once, fewer
  /// where the segments' mean length says the total is small (0 for the other families).
  std::uint64_t tiles(const SegProblem& p, const DeviceLimits& dev) const;
  /// Workspace bytes a launch of \p p needs (0 but for the split and balanced families).
  std::size_t workspace_bytes(const SegProblem& p, const DeviceLimits& dev) const;
  /// Why the entry cannot run \p p with the input at \p in_alignment bytes, or empty.
  Refusal can_implement(const SegProblem& p, std::size_t in_alignment,
                        const DeviceLimits& dev) const;
};

/// Every compiled segmented entry, sorted by id (tr_kernels; tr_kernels_host has the same
/// entries without kernels).
std::span<const SegEntry> seg_registry();
/// nullptr when no entry has that id / those parameters.
inline const SegEntry* find_seg(std::string_view id) {
  const auto entries = seg_registry();
  auto it = std::lower_bound(entries.begin(), entries.end(), id,
                             [](const SegEntry& e, std::string_view v) { return e.id < v; });
  return (it != entries.end() && it->id == id) ? &*it : nullptr;
}
inline const SegEntry* find_seg(const SegParams& p) { return find_seg(make_seg_id(p)); }

}  // namespace tunedreduce::kernels::segmented
