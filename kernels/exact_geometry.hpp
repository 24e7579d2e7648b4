#pragma once
// The launch geometry of the exact families' entries (Op::exact_sum, exact/sum.hpp), from their
// parameters alone: the ExactLaunch an entry runs, its grid and its workspace. Host-only and free
// of kernel code: kernels/geometry.cpp answers an exact Entry's grid_size, workspace_bytes and
// can_implement with it, kernels/exact_entries.cpp launches with it.

#include <cstddef>
#include <cstdint>

#include "exact/sum.hpp"
#include "kernels/registry.hpp"

namespace tunedreduce::kernels::exact_geometry {

/// The knobs of exact family \p p's entry, without grid and counter: its block and unroll, the
/// widest loads (16 bytes), the family's expansion size and chunks' residence, its finish.
exact::ExactLaunch launch_config(const KernelParams& p);

/// Blocks of the persistent grid: \p resident_blocks_per_sm on every multiprocessor.
std::uint64_t max_grid(const DeviceLimits& dev, int resident_blocks_per_sm);

/// The grid an entry asks exact_sum for at n: max_grid, or two blocks a multiprocessor while
/// a thread of the full grid would make fewer than 16 rounds of loads (measured: see the
/// definition). exact_sum caps it by the work.
std::uint64_t launch_grid(const KernelParams& p, std::uint64_t n, const DeviceLimits& dev,
                          int resident_blocks_per_sm);

/// Blocks of the first pass for n (0 for n == 0): launch_grid, capped by the work at an input
/// aligned to 16 bytes (exact_sum caps it further for a less aligned one).
std::uint64_t grid_size(const KernelParams& p, std::uint64_t n, const DeviceLimits& dev,
                        int resident_blocks_per_sm);

/// Workspace bytes of a launch for n (0 for n == 0 and past max_elements_of(p)), as exact_sum's
/// size query says for an input aligned to 16 bytes (the most any alignment needs), computed
/// without it (exact/temp_size.hpp).
std::size_t workspace_bytes(const KernelParams& p, std::uint64_t n, const DeviceLimits& dev,
                            int resident_blocks_per_sm);

}  // namespace tunedreduce::kernels::exact_geometry
