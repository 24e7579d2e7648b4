#pragma once
// THE list of compiled kernel configurations: the registry contains exactly the entries this
// header enumerates, for every element type and operator. Change it here and nowhere else.
//
// Meaningless combinations are not generated: families without an unroll factor (neighbored,
// neighbored_less, interleaved) have unroll 1 only; only `smem` has a shared-memory mode
// (static or dynamic); every other family has mode `none`. The `packed` finish exists only for the
// 16-byte-load families (vectorized, tiled, streaming) of the 32-bit integer sums; `single_tile`
// has `single_pass` only.

#include <array>
#include <cstddef>

#include "kernels/registry.hpp"

namespace tunedreduce::kernels::space {

inline constexpr int blocks[] = {64, 128, 256, 512, 1024};

struct FamilyAxes {
  Family family;
  std::array<int, 5> unrolls;  // 0 = unused slot
  std::array<SmemMode, 2> modes;
  int n_modes;
};

inline constexpr FamilyAxes families[] = {
    {Family::neighbored, {1}, {SmemMode::none}, 1},
    {Family::neighbored_less, {1}, {SmemMode::none}, 1},
    {Family::interleaved, {1}, {SmemMode::none}, 1},
    {Family::unroll, {2, 4, 8, 16}, {SmemMode::none}, 1},
    {Family::unroll_warps, {2, 4, 8, 16}, {SmemMode::none}, 1},
    {Family::complete_unroll, {2, 4, 8, 16}, {SmemMode::none}, 1},
    {Family::smem, {1, 2, 4, 8, 16}, {SmemMode::static_, SmemMode::dynamic}, 2},
    {Family::warp_shuffle, {1, 2, 4, 8, 16}, {SmemMode::none}, 1},
    // vectorized: unroll counts 16-byte vectors per thread per step.
    {Family::vectorized, {1, 2, 4, 8}, {SmemMode::none}, 1},
    // tiled, streaming: unroll counts 16-byte vectors per thread per tile.
    {Family::tiled, {1, 2, 4, 8}, {SmemMode::none}, 1},
    {Family::streaming, {1, 2, 4, 8}, {SmemMode::none}, 1},
    // single_tile: unroll counts 16-byte vectors per thread; one block, so one finish only.
    {Family::single_tile, {1, 2, 4, 8}, {SmemMode::none}, 1},
};

/// Whether configuration (f, fin) exists for (d, o): every finish but `packed` exists everywhere,
/// except for `single_tile`, whose one block has nothing to finish: it is named `single_pass`
/// (one launch) and has no other.
constexpr bool has_finish(Family f, Finish fin, DType d, Op o) {
  if (f == Family::single_tile) return fin == Finish::single_pass;
  if (fin != Finish::packed) return true;
  return packed_finish_applies(d, o) &&
         (f == Family::vectorized || f == Family::tiled || f == Family::streaming);
}

/// Calls f(params) for every configuration of one (dtype, op), in a fixed order.
template <class F>
constexpr void for_each_config(DType dtype, Op op, F&& f) {
  for (const FamilyAxes& fam : families)
    for (int b : blocks)
      for (int u : fam.unrolls) {
        if (u == 0) continue;
        for (int m = 0; m < fam.n_modes; ++m)
          for (Finish fin : all_finishes)
            if (has_finish(fam.family, fin, dtype, op))
              f(KernelParams{fam.family, b, u, fam.modes[m], fin, dtype, op});
      }
}

constexpr std::size_t configs_per_key(DType d, Op o) {
  std::size_t n = 0;
  for_each_config(d, o, [&](const KernelParams&) { ++n; });
  return n;
}

/// Whether \p p is one of the configurations above (a deployment build checks its list with it).
constexpr bool contains(const KernelParams& p) {
  bool found = false;
  for_each_config(p.dtype, p.op, [&](const KernelParams& q) { found = found || q == p; });
  return found;
}

/// Every configuration of one (dtype, op) as an array.
template <DType D, Op O>
constexpr auto configs() {
  std::array<KernelParams, configs_per_key(D, O)> out{};
  std::size_t i = 0;
  for_each_config(D, O, [&](const KernelParams& p) { out[i++] = p; });
  return out;
}

}  // namespace tunedreduce::kernels::space
