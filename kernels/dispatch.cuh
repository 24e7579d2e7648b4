#pragma once
// Dispatch: grid size, workspace layout and the launch of one entry. Only the generated instance
// files include this.

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "kernels/geometry.hpp"
#include "kernels/kernel/reduce_kernel.cuh"
#include "kernels/registry.hpp"

namespace tunedreduce::kernels {

namespace detail {
inline constexpr int max_devices = 64;
}  // namespace detail

template <KernelParams P>
struct Dispatch {
  using K = Kernel<P>;
  using In = typename K::In;
  using T = typename K::T;  // the accumulator's and the result's type
  using OpT = typename K::OpT;

  static_assert(K::chunk == geometry::chunk_elements(P),
                "kernels/geometry.hpp disagrees with the kernel");
  static constexpr bool persistent_grid = has_persistent_grid(P.family);

  /// Blocks of this kernel resident on one multiprocessor (from the occupancy calculator, once
  /// per device; the thread limit when it cannot say).
  static int resident_blocks_per_sm(const DeviceLimits& dev) {
    static std::atomic<int> cache[detail::max_devices];
    const int slot = dev.ordinal >= 0 && dev.ordinal < detail::max_devices ? dev.ordinal : -1;
    if (slot >= 0) {
      int cached = cache[slot].load(std::memory_order_relaxed);
      if (cached > 0) return cached;
    }
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reduce_kernel_v<P>, P.block,
                                                      geometry::dynamic_smem_bytes(P)) !=
            cudaSuccess ||
        blocks <= 0) {
      (void)cudaGetLastError();  // not sticky; fall back to the thread limit
      blocks = geometry::estimated_resident_blocks(P, dev);
    } else if (slot >= 0) {
      cache[slot].store(blocks, std::memory_order_relaxed);
    }
    return blocks;
  }

  static std::uint64_t grid_size(std::uint64_t n, const DeviceLimits& dev) {
    return geometry::grid_size(P, n, dev, persistent_grid ? resident_blocks_per_sm(dev) : 0);
  }

  static cudaError_t launch(const LaunchArgs& a, const DeviceLimits& dev) {
    static constexpr T empty = OpT::empty_result();
    if (a.n == 0)
      return cudaMemcpyAsync(a.out, &empty, sizeof(T), cudaMemcpyHostToDevice, a.stream);
    if (a.n > max_elements_of(P) || !a.in || !a.out) return cudaErrorInvalidValue;
    const std::uint64_t grid = grid_size(a.n, dev);
    const geometry::Layout l = geometry::layout(P, grid);
    if (!a.workspace || a.workspace_bytes < l.total) return cudaErrorInvalidValue;
    auto* base = static_cast<unsigned char*>(a.workspace);
    // With an external counter the workspace may hold anything: single_pass uses plain
    // partials, and nothing in the workspace needs zeroing.
    const bool external = a.counter != nullptr;
    KernelArgs<In, T> args{static_cast<const In*>(a.in),
                           a.n,
                           (a.n + K::chunk - 1) / K::chunk,
                           reinterpret_cast<T*>(base + l.ws_blocks_offset),
                           reinterpret_cast<T*>(base + l.partials_offset),
                           external ? reinterpret_cast<unsigned*>(a.counter)
                                    : reinterpret_cast<unsigned*>(base),
                           static_cast<T*>(a.out),
                           !external};
    if constexpr (P.finish != Finish::two_pass) {
      // The counter (8 bytes for packed) and the slots this grid uses must start at zero.
      if (grid > 1 && !external && !a.workspace_clean) {
        const std::size_t used = l.partials_offset + grid * geometry::partial_bytes(P);
        if (cudaError_t e = cudaMemsetAsync(base, 0, used, a.stream); e != cudaSuccess) return e;
      }
    }
    reduce_kernel_v<P>
        <<<static_cast<unsigned>(grid), P.block, geometry::dynamic_smem_bytes(P), a.stream>>>(args);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    if constexpr (P.finish == Finish::two_pass) {
      if (grid > 1) {
        finish_kernel<T, OpT, P.block><<<1, P.block, 0, a.stream>>>(args.partials, grid, args.out);
        return cudaGetLastError();
      }
    }
    return cudaSuccess;
  }
};

}  // namespace tunedreduce::kernels
