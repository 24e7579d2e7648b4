// What an entry can run and how large its launch is, from its parameters (kernels/geometry.hpp),
// and the Entry functions that answer with it.

#include "kernels/geometry.hpp"

#include <string>

namespace tunedreduce::kernels {

namespace geometry {

Refusal can_implement(const KernelParams& p, std::uint64_t n, std::size_t alignment,
                      const DeviceLimits& dev) {
  if (n > max_elements_of(p)) {
    if (p.family == Family::single_tile)
      return "n = " + std::to_string(n) + " exceeds the single tile of this kernel (" +
             std::to_string(max_elements_of(p)) + " elements: " + std::to_string(p.block) +
             " threads x " + std::to_string(p.unroll) + " 16-byte vectors)";
    return "n = " + std::to_string(n) + " exceeds the limit of " + std::to_string(max_elements) +
           " elements";
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

namespace {

int resident_blocks(const Entry& e, const DeviceLimits& dev) {
  if (!has_persistent_grid(e.params.family)) return 0;  // not used
  return e.resident_blocks_per_sm ? e.resident_blocks_per_sm(dev)
                                  : geometry::estimated_resident_blocks(e.params, dev);
}

}  // namespace

std::size_t Entry::workspace_bytes(std::uint64_t n, const DeviceLimits& dev) const {
  return geometry::workspace_bytes(params, n, dev, resident_blocks(*this, dev));
}

Refusal Entry::can_implement(std::uint64_t n, std::size_t in_alignment,
                             const DeviceLimits& dev) const {
  return geometry::can_implement(params, n, in_alignment, dev);
}

std::uint64_t Entry::grid_size(std::uint64_t n, const DeviceLimits& dev) const {
  return geometry::grid_size(params, n, dev, resident_blocks(*this, dev));
}

}  // namespace tunedreduce::kernels
