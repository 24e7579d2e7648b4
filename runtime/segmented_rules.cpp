// The segmented built-in rules (runtime/segmented_rules.hpp). The thresholds are in bytes of a
// segment, so one rule serves every element type: a segment of up to 16 bytes is one load of a
// thread, up to 512 bytes one load of each of up to 32 lanes, and beyond that a warp, a block or
// several blocks per segment, by how many segments there are to fill the GPU with.

#include "runtime/segmented_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace tunedreduce::runtime {

namespace seg = kernels::segmented;

seg::SegLayout seg_layout_of(SegmentLayout l) {
  switch (l) {
    case SegmentLayout::offsets32:
      return seg::SegLayout::offsets32;
    case SegmentLayout::offsets64:
      return seg::SegLayout::offsets64;
    default:
      return seg::SegLayout::fixed;
  }
}

seg::SegProblem seg_problem_of(const Segments& s) {
  seg::SegProblem p;
  p.num_segments = s.count;
  p.segment_size = s.size;
  p.stride = s.stride ? s.stride : s.size;
  p.begin = s.begin;
  p.end = s.end;
  p.mean_length = s.mean_length;
  return p;
}

namespace {

/// Threads that keep a GPU's memory system busy with 16-byte loads in flight: 1024 per
/// multiprocessor (the sweep of docs/performance.md 3.31: fewer lanes per segment, each with
/// two to eight vectors, beat one vector per lane until the lanes no longer fill the GPU).
std::uint64_t filling_threads(const kernels::DeviceLimits& dev) {
  return 1024 * std::uint64_t(std::max(dev.sm_count, 1));
}

std::uint64_t pow2_clamp(std::uint64_t v, std::uint64_t lo, std::uint64_t hi) {
  return std::clamp<std::uint64_t>(std::bit_ceil(std::max<std::uint64_t>(v, 1)), lo, hi);
}

}  // namespace

bool lengths_may_spread(const Segments& s) {
  if (s.layout == SegmentLayout::rows) return false;
  // max_length > 4 x mean_length, without the product (which can overflow).
  return s.mean_length == 0 || s.max_length == 0 || (s.max_length - 1) / 4 >= s.mean_length;
}

seg::SegParams builtin_segmented(DType dtype, Op op, const Segments& s, std::size_t in_alignment,
                                 const kernels::DeviceLimits& dev, std::string& rule) {
  const seg::SegLayout layout = seg_layout_of(s.layout);
  const bool fixed = layout == seg::SegLayout::fixed;
  const std::uint64_t e = dtype_size(dtype);
  const int vmax = seg::vector_elements(dtype);
  const std::uint64_t length = fixed ? s.size : s.mean_length;
  const std::uint64_t bytes = length * e;
  const std::uint64_t count = s.count;
  const std::uint64_t stride = s.stride ? s.stride : s.size;
  // Rows whose every start is 16-byte aligned take vector loads from their first element.
  const bool rows_aligned = fixed && in_alignment >= 16 && (stride * e) % 16 == 0;
  // 16-byte vectors' worth of a segment (every family but a thread with scalar loads loads
  // vectors between a scalar head and tail, wherever the segment starts).
  const std::uint64_t units = (bytes + 15) / 16;
  seg::SegParams p{seg::SegFamily::group, 256, 32, vmax, layout, dtype, op};
  if (lengths_may_spread(s)) {
    // Every block the same number of elements whatever the lengths: one segment of half the
    // total among 2^17 of 64 elements (f32 sum, 2^24 on the H200) ran 2600x slower with 4
    // lanes a segment, power-law lengths of mean 64 20-30x (docs/performance.md 3.34).
    p.family = seg::SegFamily::balanced;
    p.block = p.group = 256;
    rule = s.mean_length == 0 || s.max_length == 0
               ? std::string("offsets whose longest segment is not given: the balanced family")
               : fmt::format("offsets up to {} elements long, {} on average: the balanced family",
                             s.max_length, s.mean_length);
    return p;
  }
  // argmin/argmax only for rows of a whole vector: with several rows a vector, a thread's
  // 16-byte results are vmax / L apart and a warp's stores not contiguous (H200, f32 argmax at
  // 2^24: rows of 4 94.5 % of the floor, a thread per row 91.1 %; rows of 1 and 2 33 % and 53 %,
  // a thread per row 87-91 %; docs/performance.md 3.33).
  if (fixed && (!is_arg_op(op) || length == std::uint64_t(vmax)) && in_alignment >= 16 &&
      stride == length && length > 0 && std::uint64_t(vmax) % length == 0) {
    p.family = seg::SegFamily::tile;
    p.group = 1;
    p.vec = vmax;
    rule = fmt::format("contiguous rows of {} bytes: {} rows per 16-byte load", bytes,
                       std::uint64_t(vmax) / length);
    return p;
  }
  const std::uint64_t fill = filling_threads(dev);
  // Rows of at least 1 KiB, fewer than 1024 of them: too few lanes in flight to hide the loads'
  // latency with a group per row, so a block per row (the H200's tune: blocks of 128 for f32
  // rows of 81-522 elements at 1-1023 rows; a warp per row of 512 floats at 2^16 ran at 0.959x
  // CUB, of 256 doubles 0.873x, of 512 ints 0.809x; docs/performance.md 3.41).
  const bool few_long = units >= 64 && count >= 2 && count < 1024;
  if (!fixed) {
    // Offsets: segments start anywhere, so a scalar head and tail each; by the mean length.
    p.vec = vmax;
    if (bytes <= 64) {
      p.family = seg::SegFamily::thread;
      p.group = 1;
      p.vec = bytes <= 16 ? 1 : vmax;
      rule = fmt::format("segments of {} bytes on average: a thread per segment", bytes);
      return p;
    }
    if (units <= 512) {
      p.group = units <= 32 ? 4 : 32;
      rule = fmt::format("segments of {} bytes on average: {} lanes per segment", bytes, p.group);
      return p;
    }
  } else if (units <= 2) {
    p.family = seg::SegFamily::thread;
    p.group = 1;
    p.vec = rows_aligned ? vmax : 1;
    rule = fmt::format("segments of {} bytes: a thread per segment", bytes);
    return p;
  } else if (const std::uint64_t base =
                 units <= 8                                                            ? units / 2
                 : units > 128 && units <= 256 && is_arg_op(op) && count * 256 >= fill ? units / 32
                                                                                       : units / 4;
             base <= 32 && !few_long) {
    // Lanes with two vectors each up to 8 vectors a segment, then four or more each, but as
    // many lanes as it takes to fill the GPU. argmin/argmax of rows of 129-256 vectors keep to
    // lanes too where there are segments enough: a block's reduction of 16-byte results costs
    // more than the row's loads (H200, f32 argmax, rows of 1024 at 2^24 and 2^28: 8-16 lanes
    // 97-100 % of the floor, a block of 128 57-62 %; at 2^16 a warp a row 65 %, a block 80 %).
    const std::uint64_t g = std::max(base, (fill + count - 1) / std::max<std::uint64_t>(count, 1));
    p.group = static_cast<int>(pow2_clamp(g, 2, 32));
    p.vec = vmax;
    rule = fmt::format("{} segments of {} bytes: {} lanes per segment", count, bytes, p.group);
    return p;
  }
  const std::uint64_t total_bytes = count * bytes;
  const std::uint64_t sms = std::uint64_t(std::max(dev.sm_count, 1));
  p.vec = vmax;
  // (At most 4 MiB: a block per segment from 16 segments on, at most 1 MiB from 2 on; fewer
  // take the split family, whose one-kernel finish runs 8 segments of 2^17 in 6.8 us against a
  // block's 8.7 on the H200, and 4 segments of 2^14 in 5.95 against 4.77.)
  if (4 * count >= 3 * sms || (total_bytes <= (std::uint64_t{4} << 20) && count >= 16) ||
      (total_bytes <= (std::uint64_t{1} << 20) && count >= 2)) {
    // Four vectors a thread where the segment has them, and, for segments of more than 32 KiB,
    // threads enough to fill the GPU. (Shorter ones keep to their length: the H200's tune took
    // blocks of 128-256 for f32 rows of up to about 8K elements whatever their count, and rows
    // of 4096 at 2^16-2^20 elements ran at 0.87-0.995x CUB with the 1024 the fill asks for,
    // 1.00-1.04x with 256; docs/performance.md 3.41.)
    const std::uint64_t by_fill = units > 2048 ? pow2_clamp((fill + count - 1) / count, 128, 1024)
                                               : 0;
    // (Blocks of 1024 only where the count needs them to fill the GPU: the i32 sum's run at
    // 72-91 % of the floor on the H200, those of 512 at 102-104 %.)
    const std::uint64_t by_length =
        pow2_clamp(std::bit_floor(std::max<std::uint64_t>(units / 4, 1)), 128, 512);
    p.family = seg::SegFamily::block;
    p.block = fixed ? static_cast<int>(std::max(by_fill, by_length)) : 256;
    p.group = p.block;
    rule = fmt::format("{} segments of {} bytes: a block of {} per segment", count, bytes, p.block);
    return p;
  }
  p.family = seg::SegFamily::split;
  p.block = 512;
  p.group = 512;
  rule = fmt::format("{} segments of {} bytes: several blocks per segment", count, bytes);
  return p;
}

}  // namespace tunedreduce::runtime
