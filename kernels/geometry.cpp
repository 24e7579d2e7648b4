// What an entry can run and how large its launch is, from its parameters (kernels/geometry.hpp),
// and the Entry functions that answer with it.

#include "kernels/geometry.hpp"

#include <string>

#include "exact/temp_size.hpp"
#include "kernels/exact_geometry.hpp"

namespace tunedreduce::kernels {

namespace geometry {

Refusal can_implement(const KernelParams& p, std::uint64_t n, std::size_t alignment,
                      const DeviceLimits& dev) {
  if (n > max_elements_of(p)) {
    if (p.family == Family::single_tile)
      return "n = " + std::to_string(n) + " exceeds the single tile of this kernel (" +
             std::to_string(max_elements_of(p)) + " elements: " + std::to_string(p.block) +
             " threads x " + std::to_string(p.unroll) + " 16-byte vectors)";
    return "n = " + std::to_string(n) + " exceeds the limit of " +
           std::to_string(max_elements_of(p)) + " elements";
  }
  const std::size_t size = dtype_size(p.dtype);
  if (alignment == 0 || alignment % size != 0)
    return "input alignment " + std::to_string(alignment) + " is not a multiple of the " +
           std::to_string(size) + "-byte element size";
  if (dev.cc_major * 10 + dev.cc_minor < 75)
    return "compute capability " + std::to_string(dev.cc_major) + "." +
           std::to_string(dev.cc_minor) + " is below 7.5";
  if (p.block > dev.max_threads_per_block)
    return "block size " + std::to_string(p.block) + " exceeds the device limit of " +
           std::to_string(dev.max_threads_per_block);
  const std::size_t smem = dynamic_smem_bytes(p) + static_smem_bytes(p);
  if (smem != 0 && smem > dev.smem_per_block)
    return "needs " + std::to_string(smem) + " bytes of shared memory, the device allows " +
           std::to_string(dev.smem_per_block);
  return std::nullopt;
}

}  // namespace geometry

namespace exact_geometry {

exact::ExactLaunch launch_config(const KernelParams& p) {
  exact::ExactLaunch c;
  c.block_threads = p.block;
  c.vector = 0;  // the widest: 16 bytes (8 halves)
  c.unroll = p.unroll;
  const bool is_double = p.dtype == DType::f64;
  c.expansion = (is_double ? 2 : 1) + (p.family == Family::exact_wide ? 1 : 0);
  c.chunks = p.family == Family::exact_registers ? exact::ExactChunks::registers
                                                 : exact::ExactChunks::local;
  c.finish = p.finish == Finish::single_pass ? exact::ExactFinish::single_pass
                                             : exact::ExactFinish::two_pass;
  return c;
}

std::uint64_t max_grid(const DeviceLimits& dev, int resident_blocks_per_sm) {
  return std::uint64_t(std::max(resident_blocks_per_sm, 1)) *
         std::uint64_t(std::max(dev.sm_count, 1));
}

std::uint64_t launch_grid(const KernelParams& p, std::uint64_t n, const DeviceLimits& dev,
                          int resident_blocks_per_sm) {
  const std::uint64_t full = max_grid(dev, resident_blocks_per_sm);
  // Two blocks a multiprocessor beat full occupancy until a thread of the full grid would make
  // about 16 rounds of loads: the block's merge and the finish cost per block, and fewer rounds
  // leave the loads less to overlap (docs/performance.md 3.18: H200 float 512 threads x 2,
  // 2^24 0.844x CUB at 2 blocks/SM against 0.823x at 4, 2^30 0.938x against 0.981x).
  const std::uint64_t vectors = n / (16 / dtype_size(p.dtype));
  const auto per_round = static_cast<std::uint64_t>(p.block) * static_cast<std::uint64_t>(p.unroll);
  if (resident_blocks_per_sm > 2 && vectors < 16 * full * per_round) return max_grid(dev, 2);
  return full;
}

std::uint64_t grid_size(const KernelParams& p, std::uint64_t n, const DeviceLimits& dev,
                        int resident_blocks_per_sm) {
  if (n == 0) return 0;
  return exact::temp_size::grid_blocks(n, 16 / int(dtype_size(p.dtype)), p.block, p.unroll,
                                       launch_grid(p, n, dev, resident_blocks_per_sm));
}

std::size_t workspace_bytes(const KernelParams& p, std::uint64_t n, const DeviceLimits& dev,
                            int resident_blocks_per_sm) {
  if (n == 0 || n > max_elements_of(p)) return 0;
  const std::uint64_t grid = grid_size(p, n, dev, resident_blocks_per_sm);
  const bool slots = p.finish == Finish::two_pass;
  return p.dtype == DType::f64 ? exact::temp_size::bytes<double>(grid, slots)
                               : exact::temp_size::bytes<float>(grid, slots);
}

}  // namespace exact_geometry

namespace {

int resident_blocks(const Entry& e, const DeviceLimits& dev) {
  if (!has_persistent_grid(e.params.family)) return 0;  // not used
  return e.resident_blocks_per_sm ? e.resident_blocks_per_sm(dev)
                                  : geometry::estimated_resident_blocks(e.params, dev);
}

}  // namespace

std::size_t Entry::workspace_bytes(std::uint64_t n, const DeviceLimits& dev) const {
  if (query_workspace_bytes) return query_workspace_bytes(n, dev);
  if (is_exact_family(params.family))
    return exact_geometry::workspace_bytes(params, n, dev, resident_blocks(*this, dev));
  return geometry::workspace_bytes(params, n, dev, resident_blocks(*this, dev));
}

Refusal Entry::can_implement(std::uint64_t n, std::size_t in_alignment,
                             const DeviceLimits& dev) const {
  return geometry::can_implement(params, n, in_alignment, dev);
}

std::uint64_t Entry::grid_size(std::uint64_t n, const DeviceLimits& dev) const {
  if (is_exact_family(params.family))
    return exact_geometry::grid_size(params, n, dev, resident_blocks(*this, dev));
  return geometry::grid_size(params, n, dev, resident_blocks(*this, dev));
}

}  // namespace tunedreduce::kernels
