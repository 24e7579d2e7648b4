#pragma once
// THE list of compiled segmented configurations (kernels/segmented/segmented.hpp): the segmented
// registry holds exactly the entries this header enumerates for every (dtype, op) that
// seg_op_applies to.
//
// Fixed-size segments: a thread per segment (scalar or 16-byte loads), the tile family for rows
// that divide a 16-byte vector, groups of 2..32 lanes, a block per segment (128..1024 threads)
// and the split family. Variable segments (32- and 64-bit offsets): a thread per segment (scalar
// or 16-byte loads), groups of 4 and of 32 lanes, a block, the split family and the balanced
// family (lengths that may spread). Every family but `thread` with scalar loads reads 16-byte
// vectors between a scalar head and tail, so unaligned rows need no scalar variant: 27
// configurations a key (docs/performance.md 3.31, 3.34).

#include <array>
#include <cstddef>

#include "kernels/segmented/balanced.hpp"
#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::kernels::segmented::space {

inline constexpr int groups[] = {2, 4, 8, 16, 32};
inline constexpr int block_family_blocks[] = {128, 256, 512, 1024};
inline constexpr int split_block = 512;
inline constexpr int lanes_block = 256;  // thread, tile and group families
inline constexpr int offsets_groups[] = {4, 32};
inline constexpr int offsets_block = 256;

/// Calls f(params) for every configuration of one (dtype, op), in a fixed order.
template <class F>
constexpr void for_each_config(DType d, Op o, F&& f) {
  if (!seg_op_applies(d, o)) return;
  const int v = vector_elements(d);
  const auto add = [&](SegFamily fam, int block, int group, int vec, SegLayout l) {
    f(SegParams{fam, block, group, vec, l, d, o});
  };
  add(SegFamily::thread, lanes_block, 1, 1, SegLayout::fixed);
  add(SegFamily::thread, lanes_block, 1, v, SegLayout::fixed);
  add(SegFamily::tile, lanes_block, 1, v, SegLayout::fixed);
  for (int g : groups) add(SegFamily::group, lanes_block, g, v, SegLayout::fixed);
  for (int b : block_family_blocks) add(SegFamily::block, b, b, v, SegLayout::fixed);
  add(SegFamily::split, split_block, split_block, v, SegLayout::fixed);
  for (SegLayout l : {SegLayout::offsets32, SegLayout::offsets64}) {
    add(SegFamily::thread, lanes_block, 1, 1, l);
    add(SegFamily::thread, lanes_block, 1, v, l);
    for (int g : offsets_groups) add(SegFamily::group, lanes_block, g, v, l);
    add(SegFamily::block, offsets_block, offsets_block, v, l);
    add(SegFamily::split, split_block, split_block, v, l);
    add(SegFamily::balanced, balanced::block, balanced::block, v, l);
  }
}

constexpr std::size_t configs_per_key(DType d, Op o) {
  std::size_t n = 0;
  for_each_config(d, o, [&](const SegParams&) { ++n; });
  return n;
}

/// Whether \p p is one of the configurations above.
constexpr bool contains(const SegParams& p) {
  bool found = false;
  for_each_config(p.dtype, p.op, [&](const SegParams& q) { found = found || q == p; });
  return found;
}

/// Every configuration of one (dtype, op) as an array.
template <DType D, Op O>
constexpr auto configs() {
  std::array<SegParams, configs_per_key(D, O)> out{};
  std::size_t i = 0;
  for_each_config(D, O, [&](const SegParams& p) { out[i++] = p; });
  return out;
}

}  // namespace tunedreduce::kernels::segmented::space
