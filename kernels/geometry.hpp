#pragma once
// The launch geometry of a registry entry from its parameters alone: elements per chunk, grid
// size, workspace layout, and whether it can run a problem. Host-only and free of kernel code:
// Dispatch launches with it (kernels/dispatch.cuh), every Entry answers with it, and a registry
// without kernels (kernels/host_registry.cpp) answers the same.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/registry.hpp"

namespace tunedreduce::kernels::geometry {

constexpr std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

/// The seeds' grid is one block per chunk; beyond this many blocks each block loops over several
/// chunks, which bounds the partials the finishing pass reads.
inline constexpr std::uint64_t max_seed_grid = 65536;
/// tiled / streaming: one tile per block up to this many blocks (below 2^16, the packed finish's
/// ticket field), then each block loops over several tiles.
inline constexpr std::uint64_t max_tile_grid = 65535;
/// The completion counter's area at the start of a workspace.
inline constexpr std::size_t counter_bytes = 256;

/// The families whose unroll counts 16-byte vectors.
constexpr bool has_vector_loads(Family f) {
  return f == Family::vectorized || f == Family::tiled || f == Family::streaming ||
         f == Family::single_tile;
}

/// Input elements one chunk (one block, one step of the grid loop) covers.
constexpr std::uint64_t chunk_elements(const KernelParams& p) {
  return std::uint64_t(p.block) * std::uint64_t(p.unroll) *
         (has_vector_loads(p.family) ? 16 / dtype_size(p.dtype) : 1);
}

/// Bytes of one accumulator value (the result's: wider than the element for wide_sum, an
/// IndexedValue for argmin and argmax).
constexpr std::size_t accumulator_bytes(const KernelParams& p) {
  return result_bytes(p.dtype, p.op);
}

constexpr std::size_t dynamic_smem_bytes(const KernelParams& p) {
  return p.smem == SmemMode::dynamic ? accumulator_bytes(p) * std::size_t(p.block) : 0;
}
constexpr std::size_t static_smem_bytes(const KernelParams& p) {
  return p.smem == SmemMode::static_ ? accumulator_bytes(p) * std::size_t(p.block) : 0;
}

/// Bytes of the partials area per block: one accumulator (two_pass), one flagged slot of 8 bytes
/// per 4 bytes of it, or part of them (single_pass: twice its size, 8 for a two-byte one), none
/// (packed: the partial travels in the atomic).
constexpr std::size_t partial_bytes(const KernelParams& p) {
  return p.finish == Finish::two_pass      ? accumulator_bytes(p)
         : p.finish == Finish::single_pass ? 8 * ((accumulator_bytes(p) + 3) / 4)
                                           : 0;
}

/// Blocks resident on one multiprocessor when the occupancy calculator cannot say (no GPU, or a
/// registry without kernels): the device's thread and block limits.
constexpr int estimated_resident_blocks(const KernelParams& p, const DeviceLimits& dev) {
  return std::max(1, std::min(dev.max_blocks_per_sm, dev.max_threads_per_sm / p.block));
}

/// Blocks of the first kernel for n (0 for n == 0). \p resident_blocks_per_sm is used by the
/// persistent families only (has_persistent_grid).
constexpr std::uint64_t grid_size(const KernelParams& p, std::uint64_t n, const DeviceLimits& dev,
                                  int resident_blocks_per_sm) {
  if (n == 0) return 0;
  if (p.family == Family::single_tile) return 1;
  const std::uint64_t chunk = chunk_elements(p);
  const std::uint64_t chunks = (n + chunk - 1) / chunk;
  std::uint64_t cap = max_seed_grid;
  if (has_persistent_grid(p.family))
    cap = std::uint64_t(std::max(resident_blocks_per_sm, 1)) *
          std::uint64_t(std::max(dev.sm_count, 1));
  else if (p.family == Family::tiled || p.family == Family::streaming) cap = max_tile_grid;
  if (p.finish == Finish::packed) cap = std::min(cap, max_tile_grid);
  return std::max<std::uint64_t>(1, std::min(chunks, cap));
}

struct Layout {
  std::size_t partials_offset, ws_blocks_offset, total;
};

/// Where a launch of \p grid blocks keeps its counter, partials and (global-memory families)
/// per-block working copies in the workspace.
constexpr Layout layout(const KernelParams& p, std::uint64_t grid) {
  Layout l{};
  l.partials_offset = counter_bytes;
  std::size_t end = l.partials_offset + align_up(grid * partial_bytes(p), 256);
  l.ws_blocks_offset = end;
  if (is_global_memory_family(p.family))
    end += align_up(grid * std::size_t(p.block) * accumulator_bytes(p), 256);
  l.total = end;
  return l;
}

/// Workspace bytes of a launch for n (0 for n == 0 and past the entry's limit).
constexpr std::size_t workspace_bytes(const KernelParams& p, std::uint64_t n,
                                      const DeviceLimits& dev, int resident_blocks_per_sm) {
  if (n == 0 || n > max_elements_of(p)) return 0;
  return layout(p, grid_size(p, n, dev, resident_blocks_per_sm)).total;
}

/// Why the entry of \p p cannot run n elements at an input aligned to \p alignment bytes on
/// \p dev, or empty when it can.
Refusal can_implement(const KernelParams& p, std::uint64_t n, std::size_t alignment,
                      const DeviceLimits& dev);

}  // namespace tunedreduce::kernels::geometry
