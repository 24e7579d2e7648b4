#pragma once
// Dispatch: grid size, workspace layout and the launch of one entry. Only the generated instance
// files include this.

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "kernels/kernel/reduce_kernel.cuh"
#include "kernels/registry.hpp"

namespace tunedreduce::kernels {

namespace detail {

constexpr std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

/// The seeds' grid is one block per chunk; beyond this many blocks each block loops over several
/// chunks, which bounds the partials the finishing pass reads.
inline constexpr std::uint64_t max_seed_grid = 65536;
/// tiled / streaming: one tile per block up to this many blocks (below 2^16, the packed finish's
/// ticket field), then each block loops over several tiles.
inline constexpr std::uint64_t max_tile_grid = 65535;
inline constexpr int max_devices = 64;
inline constexpr std::size_t counter_bytes = 256;

}  // namespace detail

template <KernelParams P>
struct Dispatch {
  using K = Kernel<P>;
  using T = typename K::T;
  using OpT = typename K::OpT;

  static constexpr bool persistent_grid = has_persistent_grid(P.family);

  static constexpr std::size_t dynamic_smem_bytes() {
    return P.smem == SmemMode::dynamic ? sizeof(T) * P.block : 0;
  }
  static constexpr std::size_t static_smem_bytes() {
    return P.smem == SmemMode::static_ ? sizeof(T) * P.block : 0;
  }

  /// Blocks of this kernel resident on one multiprocessor (from the occupancy calculator, once
  /// per device).
  static int resident_blocks_per_sm(const DeviceLimits& dev) {
    static std::atomic<int> cache[detail::max_devices];
    const int slot = dev.ordinal >= 0 && dev.ordinal < detail::max_devices ? dev.ordinal : -1;
    if (slot >= 0) {
      int cached = cache[slot].load(std::memory_order_relaxed);
      if (cached > 0) return cached;
    }
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reduce_kernel_v<P>, P.block,
                                                      dynamic_smem_bytes()) != cudaSuccess ||
        blocks <= 0) {
      (void)cudaGetLastError();  // not sticky; fall back to the thread limit
      blocks = std::max(1, std::min(dev.max_blocks_per_sm, dev.max_threads_per_sm / P.block));
    } else if (slot >= 0) {
      cache[slot].store(blocks, std::memory_order_relaxed);
    }
    return blocks;
  }

  static std::uint64_t nchunks(std::uint64_t n) { return (n + K::chunk - 1) / K::chunk; }

  static std::uint64_t grid_size(std::uint64_t n, const DeviceLimits& dev) {
    if (n == 0) return 0;
    if constexpr (P.family == Family::single_tile) return 1;
    const std::uint64_t chunks = nchunks(n);
    std::uint64_t cap = detail::max_seed_grid;
    if constexpr (persistent_grid)
      cap = std::uint64_t(resident_blocks_per_sm(dev)) * std::max(dev.sm_count, 1);
    else if constexpr (P.family == Family::tiled || P.family == Family::streaming)
      cap = detail::max_tile_grid;
    if constexpr (P.finish == Finish::packed) cap = std::min(cap, detail::max_tile_grid);
    return std::max<std::uint64_t>(1, std::min(chunks, cap));
  }

  struct Layout {
    std::size_t partials_offset, ws_blocks_offset, total;
  };
  /// Bytes of the partials area per block: one T (two_pass), one flagged slot of
  /// 2 * sizeof(T) (single_pass), none (packed: the partial travels in the atomic).
  static constexpr std::size_t partial_bytes =
      P.finish == Finish::two_pass ? sizeof(T) : P.finish == Finish::single_pass ? 2 * sizeof(T) : 0;

  static Layout layout(std::uint64_t grid) {
    Layout l{};
    l.partials_offset = detail::counter_bytes;
    std::size_t end = l.partials_offset + detail::align_up(grid * partial_bytes, 256);
    l.ws_blocks_offset = end;
    if constexpr (is_global_memory_family(P.family))
      end += detail::align_up(grid * std::size_t(P.block) * sizeof(T), 256);
    l.total = end;
    return l;
  }

  static std::size_t workspace_bytes(std::uint64_t n, const DeviceLimits& dev) {
    if (n == 0 || n > max_elements_of(P)) return 0;
    return layout(grid_size(n, dev)).total;
  }

  static Refusal can_implement(std::uint64_t n, std::size_t alignment, const DeviceLimits& dev) {
    if (n > max_elements_of(P)) {
      if constexpr (P.family == Family::single_tile)
        return "n = " + std::to_string(n) + " exceeds the single tile of this kernel (" +
               std::to_string(max_elements_of(P)) + " elements: " + std::to_string(P.block) +
               " threads x " + std::to_string(P.unroll) + " 16-byte vectors)";
      return "n = " + std::to_string(n) + " exceeds the limit of " +
             std::to_string(max_elements) + " elements";
    }
    if (alignment == 0 || alignment % sizeof(T) != 0)
      return "input alignment " + std::to_string(alignment) + " is not a multiple of the " +
             std::to_string(sizeof(T)) + "-byte element size";
    if (dev.cc_major * 10 + dev.cc_minor < 75)
      return "compute capability " + std::to_string(dev.cc_major) + "." +
             std::to_string(dev.cc_minor) + " is below 7.5";
    if (P.block > dev.max_threads_per_block)
      return "block size " + std::to_string(P.block) + " exceeds the device limit of " +
             std::to_string(dev.max_threads_per_block);
    constexpr std::size_t smem = dynamic_smem_bytes() + static_smem_bytes();
    if (smem != 0 && smem > dev.smem_per_block)
      return "needs " + std::to_string(smem) + " bytes of shared memory, the device allows " +
             std::to_string(dev.smem_per_block);
    return std::nullopt;
  }

  static cudaError_t launch(const LaunchArgs& a, const DeviceLimits& dev) {
    static constexpr T empty = OpT::empty_result();
    if (a.n == 0)
      return cudaMemcpyAsync(a.out, &empty, sizeof(T), cudaMemcpyHostToDevice, a.stream);
    if (a.n > max_elements_of(P) || !a.in || !a.out) return cudaErrorInvalidValue;
    const std::uint64_t grid = grid_size(a.n, dev);
    const Layout l = layout(grid);
    if (!a.workspace || a.workspace_bytes < l.total) return cudaErrorInvalidValue;
    auto* base = static_cast<unsigned char*>(a.workspace);
    // With an external counter the workspace may hold anything: single_pass uses plain
    // partials, and nothing in the workspace needs zeroing.
    const bool external = a.counter != nullptr;
    KernelArgs<T> args{static_cast<const T*>(a.in),
                       a.n,
                       nchunks(a.n),
                       reinterpret_cast<T*>(base + l.ws_blocks_offset),
                       reinterpret_cast<T*>(base + l.partials_offset),
                       external ? reinterpret_cast<unsigned*>(a.counter)
                                : reinterpret_cast<unsigned*>(base),
                       static_cast<T*>(a.out),
                       !external};
    if constexpr (P.finish != Finish::two_pass) {
      // The counter (8 bytes for packed) and the slots this grid uses must start at zero.
      if (grid > 1 && !external && !a.workspace_clean) {
        const std::size_t used = l.partials_offset + grid * partial_bytes;
        if (cudaError_t e = cudaMemsetAsync(base, 0, used, a.stream); e != cudaSuccess) return e;
      }
    }
    reduce_kernel_v<P><<<static_cast<unsigned>(grid), P.block, dynamic_smem_bytes(), a.stream>>>(args);
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
