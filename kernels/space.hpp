#pragma once
// THE list of compiled kernel configurations: the registry contains exactly the entries this
// header enumerates, for every element type and operator. Change it here and nowhere else.
//
// Meaningless combinations are not generated: families without an unroll factor (neighbored,
// neighbored_less, interleaved) have unroll 1 only; only `smem` has a shared-memory mode
// (static or dynamic); every other family has mode `none`. The `packed` finish exists only for the
// 16-byte-load families (vectorized, tiled, streaming) of the 32-bit integer sums; `single_tile`
// has `single_pass` only. The exact families (exact, exact_wide, exact_registers) implement
// Op::exact_sum for f32, f64, f16 and bf16 (exact_registers all but f64), block sizes 128, 256
// and 512, and
// no other family implements it; their entries launch exact/sum.hpp's exact_sum, not the
// kernel templates (kernels/exact_entries.cpp), so kernels/CMakeLists.txt generates no
// instances for Op::exact_sum. Op::wide_sum (i32, u32, f32 summed into the type twice as wide)
// and Op::absmax have the 16-byte-load families only (family_applies); argmin and argmax three of
// them.

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
    // exact families: unroll is ExactLaunch::unroll, the 16-byte loads each thread issues
    // before adding them.
    {Family::exact, {1, 2, 4}, {SmemMode::none}, 1},
    {Family::exact_wide, {1, 2, 4}, {SmemMode::none}, 1},
    {Family::exact_registers, {1, 2, 4}, {SmemMode::none}, 1},
};

/// Whether family \p f implements (d, o): the exact families exactly Op::exact_sum (f32, f64, f16
/// and bf16; exact_registers, whose chunks fit registers for a float accumulator only, all but
/// f64); Op::wide_sum and Op::absmax only the
/// 16-byte-load families (vectorized, tiled, streaming, single_tile: the fastest of the 32-bit
/// sums everywhere the tuner has measured, and a quarter of what every family would compile; the
/// only families whose loads are as wide for the two-byte types);
/// argmin and argmax (an index carried with each value) vectorized, streaming and single_tile:
/// the 16-byte-load families that win min and max in the tunes (tiled never did, streaming
/// often: a third fewer kernels to compile); every other family every (dtype, op) but those.
constexpr bool family_applies(Family f, DType d, Op o) {
  if (!op_applies(d, o)) return false;
  if (is_exact_family(f))
    return o == Op::exact_sum && (f != Family::exact_registers || d != DType::f64);
  if (o == Op::exact_sum) return false;
  if (o == Op::wide_sum || o == Op::absmax)
    return f == Family::vectorized || f == Family::tiled || f == Family::streaming ||
           f == Family::single_tile;
  if (is_arg_op(o))
    return f == Family::vectorized || f == Family::streaming || f == Family::single_tile;
  return true;
}

/// Whether family \p f implements one of \p ops for some element type (the tuner keeps the
/// families of the operators asked for).
template <class Ops>
constexpr bool implements_any(Family f, const Ops& ops) {
  for (Op o : ops)
    for (DType d : all_dtypes)
      if (family_applies(f, d, o)) return true;
  return false;
}

/// Whether family \p f has block size \p b: exact_sum's 128, 256 and 512 for the exact
/// families, every size of `blocks` for the others.
constexpr bool has_block(Family f, int b) {
  return !is_exact_family(f) || b == 128 || b == 256 || b == 512;
}

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
  for (const FamilyAxes& fam : families) {
    if (!family_applies(fam.family, dtype, op)) continue;
    for (int b : blocks) {
      if (!has_block(fam.family, b)) continue;
      for (int u : fam.unrolls) {
        if (u == 0) continue;
        for (int m = 0; m < fam.n_modes; ++m)
          for (Finish fin : all_finishes)
            if (has_finish(fam.family, fin, dtype, op))
              f(KernelParams{fam.family, b, u, fam.modes[m], fin, dtype, op});
      }
    }
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
