#pragma once
// The kernel registry: every compiled reduction kernel as a type-erased entry. Host-only header:
// it includes no kernel templates, so the tuner, the CLI and the runtime library dispatch through
// it without instantiating anything.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tunedreduce/types.hpp"

namespace tunedreduce::kernels {

/// Kernel families; the names are part of the product (CLI, database, reports).
enum class Family : std::uint8_t {
  neighbored,       // in-place pairs, stride doubling, tid % (2*stride) == 0
  neighbored_less,  // same pairs, active threads remapped to be contiguous
  interleaved,      // stride halving from block/2
  unroll,           // each thread first folds `unroll` data blocks, then interleaved
  unroll_warps,     // unroll + last warp unrolled (volatile + __syncwarp)
  complete_unroll,  // unroll_warps with the whole block loop unrolled on a template block size
  smem,             // shared-memory copy (static or dynamic), complete unroll, last warp unrolled
  warp_shuffle,     // register folding, then __shfl_down_sync inside warps and across warps
  vectorized,       // 16-byte loads, grid sized from the device, scalar head and tail
  tiled,            // 16-byte loads, one contiguous tile of block x unroll vectors per block
  streaming,        // tiled, with loads that do not allocate in L1 (ld.global.nc.L1::no_allocate)
  single_tile,      // one block, 16-byte loads all issued at once, no loop, nothing to finish:
                    // n up to block x unroll vectors (CUB's single-tile kernel, made tunable)
  // The exact sums (Op::exact_sum, and only they; exact/sum.hpp): each thread an expansion of
  // doubles in front of exact fixed-point chunks, a persistent grid, 16-byte loads; every entry
  // gives the same bits.
  exact,            // the smaller expansion (float 1 double, double 2), chunks in local memory
  exact_wide,       // the larger expansion (float 2, double 3), chunks in local memory
  exact_registers,  // float only: expansion 1, the chunks in registers
};

/// Where the block's working array lives for the families that have one.
enum class SmemMode : std::uint8_t { none, static_, dynamic };

/// How the per-block partial results are combined into one value.
enum class Finish : std::uint8_t {
  two_pass,     // a second kernel (one block) reduces the partials
  single_pass,  // the last block to finish reduces the partials (deterministic order)
  packed,       // 32-bit integer sums only: one 64-bit atomic per block carries the partial and
                // the ticket; the last block's atomic returns the sum
};

inline constexpr Family all_families[] = {
    Family::neighbored,   Family::neighbored_less, Family::interleaved,    Family::unroll,
    Family::unroll_warps, Family::complete_unroll, Family::smem,           Family::warp_shuffle,
    Family::vectorized,   Family::tiled,           Family::streaming,      Family::single_tile,
    Family::exact,        Family::exact_wide,      Family::exact_registers};

inline constexpr Finish all_finishes[] = {Finish::two_pass, Finish::single_pass, Finish::packed};

/// The packed finish exists for 32-bit integer sums only (the sum wraps modulo 2^32 in the low
/// half of the atomic word, the ticket count in the high half).
constexpr bool packed_finish_applies(DType d, Op o) {
  return o == Op::sum && (d == DType::i32 || d == DType::u32);
}

const char* family_name(Family f) noexcept;
const char* smem_mode_name(SmemMode m) noexcept;  // "none", "static", "dynamic"
const char* finish_name(Finish f) noexcept;       // "two_pass", "single_pass", "packed"
std::optional<Family> parse_family(std::string_view s);
std::optional<SmemMode> parse_smem_mode(std::string_view s);
std::optional<Finish> parse_finish(std::string_view s);

/// True for the exact families: they implement Op::exact_sum, and nothing else does.
constexpr bool is_exact_family(Family f) {
  return f == Family::exact || f == Family::exact_wide || f == Family::exact_registers;
}

/// True for the families that reduce in global memory (they work on a copy in the workspace).
constexpr bool is_global_memory_family(Family f) {
  return f == Family::neighbored || f == Family::neighbored_less || f == Family::interleaved ||
         f == Family::unroll || f == Family::unroll_warps || f == Family::complete_unroll;
}

/// True for the families whose grid is persistent (as many blocks as are resident at once, each
/// looping over many chunks); the others launch one block per tile (capped), and the hardware
/// hands tiles to multiprocessors as they free up.
constexpr bool has_persistent_grid(Family f) {
  return f == Family::warp_shuffle || f == Family::vectorized || is_exact_family(f);
}

/// The parameters of one registry entry.
struct KernelParams {
  Family family{};
  int block = 0;   // threads per block, 64..1024
  int unroll = 1;  // elements (16-byte vectors for vectorized/tiled/streaming/single_tile) per
                   // thread per step; 1 where the family has no unroll factor
  SmemMode smem = SmemMode::none;
  Finish finish = Finish::two_pass;
  DType dtype{};
  Op op{};

  friend constexpr bool operator==(const KernelParams&, const KernelParams&) = default;
};

/// "smem.b256.u8.dynamic.single_pass.f32.sum"; families without an unroll factor omit the u part
/// and families without a shared-memory mode omit it: "interleaved.b128.two_pass.i32.min".
std::string make_id(const KernelParams& p);
/// Inverse of make_id; nullopt for anything make_id would not produce.
std::optional<KernelParams> parse_id(std::string_view id);

/// What an entry needs to know about the device it runs on. Filled once per device by
/// query_device_limits() (kernels/device.hpp), or by hand in tests.
struct DeviceLimits {
  int ordinal = 0;
  int cc_major = 9;
  int cc_minor = 0;
  int sm_count = 132;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  std::size_t smem_per_block = 48 * 1024;  // without opt-in
  std::size_t smem_per_block_optin = 227 * 1024;
};

/// Largest n any entry accepts (the grid loops are 64-bit; this bounds workspace arithmetic).
inline constexpr std::uint64_t max_elements = std::uint64_t{1} << 40;

/// Largest n the entry of \p p accepts: its one tile for `single_tile` (block x unroll 16-byte
/// vectors), max_elements - 1 for the exact families (exact_sum takes n below 2^40),
/// max_elements for every other family. Known from the parameters alone, so the tuner
/// and the lookup can tell which entries fit a size without the kernels.
constexpr std::uint64_t max_elements_of(const KernelParams& p) {
  if (p.family == Family::single_tile)
    return std::uint64_t(p.block) * std::uint64_t(p.unroll) * (16 / dtype_size(p.dtype));
  if (is_exact_family(p.family)) return max_elements - 1;
  return max_elements;
}

/// Arguments of one launch. The workspace must be at least workspace_bytes(n) bytes, aligned to
/// 256 bytes, and not used by another launch in flight.
struct LaunchArgs {
  const void* in = nullptr;
  void* out = nullptr;  // one element, device memory
  std::uint64_t n = 0;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
  /// The workspace's completion counter and partial slots are known to be zero (they were zeroed
  /// once and every launch leaves them zero again). When false (and no `counter` is given) the
  /// launch zeroes what it uses first, with one cudaMemsetAsync.
  bool workspace_clean = false;
  /// A completion counter outside the workspace (8 bytes, 8-byte aligned, zero on entry; every
  /// launch leaves it zero again; not used by another launch in flight): the two-phase call's,
  /// from kernels/counters.hpp. With it the workspace may hold anything on entry and nothing is
  /// enqueued but the kernel(s): single_pass publishes plain partials behind an acq_rel ticket
  /// instead of flagged slots, packed keeps its word here. workspace_clean is then ignored.
  unsigned long long* counter = nullptr;
};

/// Why an entry cannot run a problem, or empty when it can.
using Refusal = std::optional<std::string>;

struct Entry {
  KernelParams params;
  const char* id;
  /// Enqueues the reduction on args.stream. n == 0 writes the empty result (+0.0 / 0 for sums,
  /// the identity for min and max) with no kernel launch (a cudaMemcpyAsync of one element).
  /// Returns the first CUDA error. A registry without kernels (host_registry.cpp) returns
  /// cudaErrorNoKernelImageForDevice.
  cudaError_t (*launch)(const LaunchArgs& args, const DeviceLimits& dev);
  /// Blocks of this entry resident on one multiprocessor (the occupancy calculator, once per
  /// device); nullptr where there is no kernel to ask about (then estimated from the limits).
  int (*resident_blocks_per_sm)(const DeviceLimits& dev);
  /// Workspace bytes of a launch for n where the entry's own launcher says (the exact families:
  /// exact_sum's size query); nullptr: from the parameters (kernels/geometry.hpp, and for the
  /// exact families in a registry without kernels exact/temp_size.hpp).
  std::size_t (*query_workspace_bytes)(std::uint64_t n, const DeviceLimits& dev) = nullptr;

  /// Workspace bytes a launch for n needs (0 for n == 0 and past max_elements_of(params)).
  std::size_t workspace_bytes(std::uint64_t n, const DeviceLimits& dev) const;
  /// Why the entry cannot run n elements at an input aligned to \p in_alignment bytes on
  /// \p dev, or empty when it can.
  Refusal can_implement(std::uint64_t n, std::size_t in_alignment, const DeviceLimits& dev) const;
  /// Blocks of the first kernel for n (0 for n == 0).
  std::uint64_t grid_size(std::uint64_t n, const DeviceLimits& dev) const;
};

/// Every compiled entry, sorted by id. Two libraries define it: tr_kernels (the kernels) and
/// tr_kernels_host (every entry of the space, no kernels: for programs that only look up).
std::span<const Entry> registry();
/// nullptr when no entry has that id.
const Entry* find(std::string_view id);
const Entry* find(const KernelParams& p);
/// 16 hex digits identifying the compiled set (ids and the kernel code revision,
/// kernels/revision.hpp, which manifest.cpp alone includes: a bump rebuilds one file). Defined in
/// manifest.cpp: available without linking the kernels.
const std::string& manifest_hash();

}  // namespace tunedreduce::kernels
