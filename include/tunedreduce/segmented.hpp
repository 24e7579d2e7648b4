#pragma once
/// \file
/// Segmented reductions: one result per segment, many segments in one call (the rows of a
/// row-major matrix, or the segments of an array given by begin/end offsets as CUB's
/// DeviceSegmentedReduce takes them). Included by tunedreduce.hpp.
///
/// \code
///   // out[r] = sum of row r of a rows x cols row-major matrix
///   tunedreduce::segmented_sum(d_matrix, d_out, rows, cols, stream);
///   // out[s] = max of d_in[offsets[s], offsets[s + 1]) (CSR)
///   tunedreduce::segmented_max(d_in, d_out, tunedreduce::Segments::csr(n_rows, d_offsets));
/// \endcode

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "tunedreduce/types.hpp"

namespace tunedreduce {

/// Where the segments of a segmented reduction are.
enum class SegmentLayout : int {
  rows = 0,       ///< `count` segments of `size` elements, segment s at element s * stride
  offsets32 = 1,  ///< segment s is [begin[s], end[s]), int32 offsets (empty if end <= begin)
  offsets64 = 2,  ///< the same with int64 offsets
};

/// The segments of a segmented reduction. Build one with rows(), offsets() or csr().
struct Segments {
  SegmentLayout layout = SegmentLayout::rows;
  std::uint64_t count = 0;      ///< the number of segments, and of results
  std::uint64_t size = 0;       ///< rows: elements per segment
  std::uint64_t stride = 0;     ///< rows: elements from one segment's start to the next's (>= size)
  const void* begin = nullptr;  ///< offsets: `count` device offsets, int32 or int64 by layout
  const void* end = nullptr;    ///< offsets: `count` device offsets (may be begin + 1: CSR)
  /// offsets: the mean segment length the caller expects, 0 when unknown. It chooses the
  /// kernel (the library reads no offsets on the host); any value gives correct results.
  std::uint64_t mean_length = 0;
  /// offsets: the longest segment the caller expects, 0 when unknown. Unless it is known and at
  /// most 4 x mean_length, the lengths may spread (power-law lengths, one huge segment among
  /// tiny ones) and the balanced family runs, whose time does not depend on how the lengths
  /// spread; with it, a kernel chosen for segments of the mean length (tuned on equal lengths,
  /// or the rules), which one long segment can slow down many times over. Any value gives
  /// correct results.
  std::uint64_t max_length = 0;
  /// offsets: check them before the reduction (set by checked()): a segment with a negative
  /// begin or an end before its begin (which CUB reads as an empty segment) is then an error
  /// naming it, and nothing is reduced. The check is a kernel whose verdict the call waits for
  /// (the stream is synchronized): not allowed while the stream is captured into a CUDA graph.
  /// Rows need no check (their geometry is checked on the host).
  bool check = false;

  /// These segments with their offsets checked before every reduction (see `check`).
  constexpr Segments checked() const noexcept {
    Segments s = *this;
    s.check = true;
    return s;
  }
  /// \p count rows of \p size elements each, \p stride elements apart (0: size, contiguous).
  static constexpr Segments rows(std::uint64_t count, std::uint64_t size,
                                 std::uint64_t stride = 0) noexcept {
    Segments s;
    s.layout = SegmentLayout::rows;
    s.count = count;
    s.size = size;
    s.stride = stride ? stride : size;
    return s;
  }
  /// Segment i is [begin[i], end[i]) (device arrays of \p count offsets each).
  static Segments offsets(std::uint64_t count, const std::int32_t* begin, const std::int32_t* end,
                          std::uint64_t mean_length = 0, std::uint64_t max_length = 0) noexcept {
    return offsets_of(SegmentLayout::offsets32, count, begin, end, mean_length, max_length);
  }
  static Segments offsets(std::uint64_t count, const std::int64_t* begin, const std::int64_t* end,
                          std::uint64_t mean_length = 0, std::uint64_t max_length = 0) noexcept {
    return offsets_of(SegmentLayout::offsets64, count, begin, end, mean_length, max_length);
  }
  /// Compressed rows: segment i is [offsets[i], offsets[i + 1]) (count + 1 device offsets).
  static Segments csr(std::uint64_t count, const std::int32_t* offsets,
                      std::uint64_t mean_length = 0, std::uint64_t max_length = 0) noexcept {
    return offsets_of(SegmentLayout::offsets32, count, offsets, offsets ? offsets + 1 : nullptr,
                      mean_length, max_length);
  }
  static Segments csr(std::uint64_t count, const std::int64_t* offsets,
                      std::uint64_t mean_length = 0, std::uint64_t max_length = 0) noexcept {
    return offsets_of(SegmentLayout::offsets64, count, offsets, offsets ? offsets + 1 : nullptr,
                      mean_length, max_length);
  }

 private:
  static Segments offsets_of(SegmentLayout layout, std::uint64_t count, const void* begin,
                             const void* end, std::uint64_t mean_length,
                             std::uint64_t max_length) noexcept {
    Segments s;
    s.layout = layout;
    s.count = count;
    s.begin = begin;
    s.end = end;
    s.mean_length = mean_length;
    s.max_length = max_length;
    return s;
  }
};

/// The kernel a segmented reduction would run. Strings live until the process ends.
struct SegmentedConfig {
  const char* kernel_id = "";  ///< e.g. "seg.group.b256.g8.v4.fixed.f32.sum"
  /// "thread", "group", "block", "split", "tile" or "balanced"; "whole" for one row of the rows
  /// layout, which is the whole-array reduction of its elements: kernel_id, block, level and the
  /// tuned interval (size_lo, size_hi; counts 1, 1) are then lookup()'s for seg.size.
  const char* family = "";
  int block = 0;  ///< threads per block
  int group = 0;  ///< lanes per segment (thread 1, group 2..32, block/split: block)
  int vec = 1;    ///< elements per load (16 bytes' worth, or 1)
  std::uint64_t blocks_per_segment = 1;  ///< the split family's blocks per segment, else 1
  /// Level::exact (this device's tuned winner), Level::same_model (a device of the same model),
  /// or Level::builtin_default (the built-in rules; no database row contains the shape, or its
  /// kernel cannot run the call).
  Level level = Level::builtin_default;
  /// The tuned rectangle used: segment sizes (offsets: the mean length) and counts; all 0 for
  /// the built-in rules.
  std::uint64_t size_lo = 0, size_hi = 0, count_lo = 0, count_hi = 0;
  /// The database file of a tuned winner, or "built-in: " with the rule that chose the kernel.
  const char* source = "";
  const char* tuned_on = "";   ///< fingerprint key of the device the winner was tuned on
  double tuned_median_us = 0;  ///< the winner's measured median (0 for the built-in rules)
  CacheState cache_state = CacheState::cold;  ///< the L2 state the winner was measured in
  bool stale = false;  ///< tuned under another driver or CUDA runtime version
  int device = -1;     ///< CUDA device ordinal (-1: no CUDA device is visible)
};

/// The kernel segmented_reduce would run for \p seg on \p device (-1: the current one), with
/// the input 256-byte aligned: for one row (rows layout, seg.count 1) the whole-array
/// reduction's, as lookup() gives it; else the tuned winner whose rectangle contains (seg.size,
/// seg.count) (offsets: (seg.mean_length, seg.count), only where seg.max_length says the lengths
/// are close to their mean; else the balanced family of the rules), rows of the preferred
/// cache_state() first, this device before the same model; else the built-in rules. Throws
/// ReduceError for an invalid dtype/op/layout or an operator without segmented kernels.
SegmentedConfig lookup_segmented(DType dtype, Op op, const Segments& seg, int device = -1);

/// d_out[s] = the reduction of segment s, for s < seg.count (the result type of (dtype, op);
/// argmin and argmax write an IndexedValue whose index is the position within the segment, -1
/// for an empty segment). An empty segment gives what the whole-array reduction gives for
/// n == 0. Every operator but exact_sum. One row (rows layout, seg.count 1) runs the whole-array
/// reduction of its elements (reduce(), both calls alike). The workspace (the split family's
/// partials only) is cached per (device, stream) as for reduce(); CUDA graph capture works as for
/// reduce(). Throws ReduceError naming the argument at fault; nothing is launched then. With
/// checked offsets (Segments::checked()), a bad segment is ReduceError(invalid_argument) naming it
/// and its offsets, and a stream under graph capture ReduceError(unsupported).
void segmented_reduce(const void* d_in, void* d_out, const Segments& seg, DType dtype, Op op,
                      cudaStream_t stream);

/// Two-phase segmented_reduce with caller-owned temporary storage (CUB's convention): with
/// \p d_temp == nullptr only \p temp_bytes is set (at least 1); otherwise d_temp (256-byte
/// aligned, at least temp_bytes bytes, may hold anything) serves the launch.
void segmented_reduce(void* d_temp, std::size_t& temp_bytes, const void* d_in, void* d_out,
                      const Segments& seg, DType dtype, Op op, cudaStream_t stream);

}  // namespace tunedreduce
