#include "runtime/defaults.hpp"

namespace tunedreduce::runtime {

namespace {

// Kernel revision 4 with the single_tile family (session 7). Per (dtype, op), size intervals,
// each with the registry entry chosen by scripts/choose-defaults.py (--slack 0.01
// --max-single-pass-blocks 1056, its defaults) from two full tuning runs of the default
// tune.toml (halving, cold L2 = a read flush of 4x L2, the tie rule of docs/tuning.md,
// 2026-11-25), each in two databases split by element type: an NVIDIA H100 80GB HBM3 and an
// NVIDIA H200 (driver 580.159.04, CUDA 13.0). Halving measures every candidate at every grid
// size 2^10..2^30 it takes in its first round; a candidate's score at a size is its worse
// ratio, over the two GPUs, to the fastest candidate there. A rule covers the longest run of
// sizes over which one candidate stays within 1% of the best score at every size; from 2^24 up
// single_pass candidates of more than 1056 blocks are left out (the two-phase call's acq_rel
// ticket costs each block a fence), and from 2^26 up every single_pass candidate (persistent
// single_pass kernels that tied in the H200's tuning run ran 1-4% slower than CUB on the next
// H200 machine, where streaming two_pass ran 1.01-1.04x: docs/performance.md, session 7); among
// those it takes, for rules reaching 2^24, the one with the fewest blocks, then the tuners' own
// winners, then the lowest worst score; it ends at the geometric midpoint to the next grid size,
// or at a single_tile kernel's tile. Over all 378 (dtype, op, size) points the chosen kernel is
// within 4.9% of the fastest candidate on the H100 and 3.2% on the H200; below 2^14 the first
// round's three repeats are 32-ns steps apart, so there the choice is among equals. (Session 6's
// rules, without single_tile, ran 0.95-0.96x CUB at CUB's single-tile size.)
//
// Before revision 3 one configuration served every size: vectorized.b1024.u4.single_pass
// (streaming.b256.u2.packed for 32-bit integer sums), chosen from H100 measurements alone. On the
// H200 it was up to 1.3x slower than CUB (i32 sum 2^27: 0.76x), and below 2^14 it launched 1024
// threads for a few kilobytes; docs/performance.md has the measurements of both.
//
// The last rule of every (dtype, op) covers everything above; `all` is UINT64_MAX.
constexpr std::uint64_t all = ~std::uint64_t{0};
constexpr DefaultRule rules[] = {
    {DType::i32, Op::sum, 2048, "single_tile.b256.u2.single_pass.i32.sum"},
    {DType::i32, Op::sum, 4096, "single_tile.b256.u4.single_pass.i32.sum"},
    {DType::i32, Op::sum, 8192, "single_tile.b1024.u2.single_pass.i32.sum"},
    {DType::i32, Op::sum, 370727, "vectorized.b256.u2.packed.i32.sum"},
    {DType::i32, Op::sum, 741455, "vectorized.b128.u2.packed.i32.sum"},
    {DType::i32, Op::sum, 1482910, "vectorized.b256.u2.packed.i32.sum"},
    {DType::i32, Op::sum, 94906265, "streaming.b256.u8.packed.i32.sum"},
    {DType::i32, Op::sum, all, "streaming.b512.u8.packed.i32.sum"},
    {DType::i32, Op::min, 1448, "smem.b128.u8.dynamic.two_pass.i32.min"},
    {DType::i32, Op::min, 2048, "single_tile.b128.u4.single_pass.i32.min"},
    {DType::i32, Op::min, 8192, "single_tile.b512.u4.single_pass.i32.min"},
    {DType::i32, Op::min, 16384, "single_tile.b1024.u4.single_pass.i32.min"},
    {DType::i32, Op::min, 92681, "smem.b128.u8.dynamic.single_pass.i32.min"},
    {DType::i32, Op::min, 1482910, "warp_shuffle.b256.u16.single_pass.i32.min"},
    {DType::i32, Op::min, 5931641, "warp_shuffle.b512.u16.single_pass.i32.min"},
    {DType::i32, Op::min, 23726566, "warp_shuffle.b1024.u16.single_pass.i32.min"},
    {DType::i32, Op::min, 47453132, "vectorized.b1024.u2.single_pass.i32.min"},
    {DType::i32, Op::min, all, "streaming.b512.u8.two_pass.i32.min"},
    {DType::i32, Op::max, 4096, "single_tile.b256.u4.single_pass.i32.max"},
    {DType::i32, Op::max, 8192, "single_tile.b1024.u2.single_pass.i32.max"},
    {DType::i32, Op::max, 16384, "single_tile.b1024.u4.single_pass.i32.max"},
    {DType::i32, Op::max, 92681, "smem.b128.u8.dynamic.single_pass.i32.max"},
    {DType::i32, Op::max, 370727, "smem.b128.u16.dynamic.single_pass.i32.max"},
    {DType::i32, Op::max, 741455, "smem.b256.u8.dynamic.single_pass.i32.max"},
    {DType::i32, Op::max, 1482910, "warp_shuffle.b256.u16.single_pass.i32.max"},
    {DType::i32, Op::max, 5931641, "warp_shuffle.b512.u16.single_pass.i32.max"},
    {DType::i32, Op::max, 47453132, "warp_shuffle.b1024.u8.single_pass.i32.max"},
    {DType::i32, Op::max, all, "streaming.b512.u8.two_pass.i32.max"},
    {DType::u32, Op::sum, 1024, "single_tile.b128.u2.single_pass.u32.sum"},
    {DType::u32, Op::sum, 2896, "smem.b128.u16.dynamic.two_pass.u32.sum"},
    {DType::u32, Op::sum, 8192, "single_tile.b1024.u2.single_pass.u32.sum"},
    {DType::u32, Op::sum, 16384, "single_tile.b1024.u4.single_pass.u32.sum"},
    {DType::u32, Op::sum, 370727, "vectorized.b64.u2.packed.u32.sum"},
    {DType::u32, Op::sum, 1482910, "vectorized.b256.u2.packed.u32.sum"},
    {DType::u32, Op::sum, 94906265, "tiled.b256.u8.packed.u32.sum"},
    {DType::u32, Op::sum, all, "streaming.b512.u8.packed.u32.sum"},
    {DType::u32, Op::min, 1448, "smem.b64.u16.static.single_pass.u32.min"},
    {DType::u32, Op::min, 2896, "smem.b128.u16.dynamic.single_pass.u32.min"},
    {DType::u32, Op::min, 4096, "single_tile.b256.u4.single_pass.u32.min"},
    {DType::u32, Op::min, 8192, "single_tile.b1024.u2.single_pass.u32.min"},
    {DType::u32, Op::min, 16384, "single_tile.b1024.u4.single_pass.u32.min"},
    {DType::u32, Op::min, 92681, "smem.b128.u8.dynamic.single_pass.u32.min"},
    {DType::u32, Op::min, 370727, "smem.b128.u16.dynamic.single_pass.u32.min"},
    {DType::u32, Op::min, 741455, "warp_shuffle.b256.u8.single_pass.u32.min"},
    {DType::u32, Op::min, 1482910, "warp_shuffle.b256.u16.single_pass.u32.min"},
    {DType::u32, Op::min, 5931641, "warp_shuffle.b512.u16.single_pass.u32.min"},
    {DType::u32, Op::min, 47453132, "warp_shuffle.b1024.u8.single_pass.u32.min"},
    {DType::u32, Op::min, all, "streaming.b512.u8.two_pass.u32.min"},
    {DType::u32, Op::max, 4096, "single_tile.b256.u4.single_pass.u32.max"},
    {DType::u32, Op::max, 8192, "single_tile.b512.u4.single_pass.u32.max"},
    {DType::u32, Op::max, 16384, "single_tile.b1024.u4.single_pass.u32.max"},
    {DType::u32, Op::max, 92681, "smem.b128.u8.dynamic.single_pass.u32.max"},
    {DType::u32, Op::max, 370727, "smem.b128.u16.dynamic.single_pass.u32.max"},
    {DType::u32, Op::max, 1482910, "warp_shuffle.b256.u16.single_pass.u32.max"},
    {DType::u32, Op::max, 5931641, "warp_shuffle.b512.u16.single_pass.u32.max"},
    {DType::u32, Op::max, 23726566, "warp_shuffle.b1024.u16.single_pass.u32.max"},
    {DType::u32, Op::max, 47453132, "vectorized.b1024.u4.single_pass.u32.max"},
    {DType::u32, Op::max, all, "streaming.b512.u8.two_pass.u32.max"},
    {DType::i64, Op::sum, 1024, "single_tile.b256.u2.single_pass.i64.sum"},
    {DType::i64, Op::sum, 4096, "single_tile.b512.u4.single_pass.i64.sum"},
    {DType::i64, Op::sum, 8192, "single_tile.b1024.u4.single_pass.i64.sum"},
    {DType::i64, Op::sum, 23170, "warp_shuffle.b1024.u16.single_pass.i64.sum"},
    {DType::i64, Op::sum, 92681, "warp_shuffle.b128.u8.single_pass.i64.sum"},
    {DType::i64, Op::sum, 741455, "warp_shuffle.b256.u8.single_pass.i64.sum"},
    {DType::i64, Op::sum, 47453132, "warp_shuffle.b512.u16.single_pass.i64.sum"},
    {DType::i64, Op::sum, all, "streaming.b1024.u4.two_pass.i64.sum"},
    {DType::i64, Op::min, 1024, "single_tile.b128.u4.single_pass.i64.min"},
    {DType::i64, Op::min, 4096, "single_tile.b512.u4.single_pass.i64.min"},
    {DType::i64, Op::min, 8192, "single_tile.b1024.u4.single_pass.i64.min"},
    {DType::i64, Op::min, 16384, "single_tile.b1024.u8.single_pass.i64.min"},
    {DType::i64, Op::min, 370727, "warp_shuffle.b256.u4.single_pass.i64.min"},
    {DType::i64, Op::min, 741455, "warp_shuffle.b256.u8.single_pass.i64.min"},
    {DType::i64, Op::min, 2965820, "warp_shuffle.b512.u8.single_pass.i64.min"},
    {DType::i64, Op::min, 5931641, "vectorized.b512.u8.single_pass.i64.min"},
    {DType::i64, Op::min, 47453132, "warp_shuffle.b512.u16.single_pass.i64.min"},
    {DType::i64, Op::min, all, "streaming.b1024.u4.two_pass.i64.min"},
    {DType::i64, Op::max, 2048, "single_tile.b256.u4.single_pass.i64.max"},
    {DType::i64, Op::max, 4096, "single_tile.b512.u4.single_pass.i64.max"},
    {DType::i64, Op::max, 8192, "single_tile.b1024.u4.single_pass.i64.max"},
    {DType::i64, Op::max, 16384, "single_tile.b1024.u8.single_pass.i64.max"},
    {DType::i64, Op::max, 370727, "warp_shuffle.b256.u4.single_pass.i64.max"},
    {DType::i64, Op::max, 2965820, "warp_shuffle.b512.u8.single_pass.i64.max"},
    {DType::i64, Op::max, 5931641, "vectorized.b512.u8.single_pass.i64.max"},
    {DType::i64, Op::max, 47453132, "warp_shuffle.b512.u16.single_pass.i64.max"},
    {DType::i64, Op::max, all, "streaming.b1024.u4.two_pass.i64.max"},
    {DType::u64, Op::sum, 2048, "single_tile.b256.u4.single_pass.u64.sum"},
    {DType::u64, Op::sum, 4096, "single_tile.b512.u4.single_pass.u64.sum"},
    {DType::u64, Op::sum, 8192, "single_tile.b1024.u4.single_pass.u64.sum"},
    {DType::u64, Op::sum, 23170, "warp_shuffle.b1024.u16.single_pass.u64.sum"},
    {DType::u64, Op::sum, 46340, "warp_shuffle.b128.u4.single_pass.u64.sum"},
    {DType::u64, Op::sum, 185363, "warp_shuffle.b256.u8.single_pass.u64.sum"},
    {DType::u64, Op::sum, 370727, "warp_shuffle.b512.u8.single_pass.u64.sum"},
    {DType::u64, Op::sum, 741455, "warp_shuffle.b512.u16.single_pass.u64.sum"},
    {DType::u64, Op::sum, 2965820, "warp_shuffle.b512.u8.single_pass.u64.sum"},
    {DType::u64, Op::sum, 5931641, "vectorized.b512.u8.single_pass.u64.sum"},
    {DType::u64, Op::sum, 47453132, "warp_shuffle.b512.u16.single_pass.u64.sum"},
    {DType::u64, Op::sum, all, "streaming.b1024.u4.two_pass.u64.sum"},
    {DType::u64, Op::min, 2048, "single_tile.b256.u4.single_pass.u64.min"},
    {DType::u64, Op::min, 4096, "single_tile.b512.u4.single_pass.u64.min"},
    {DType::u64, Op::min, 8192, "single_tile.b1024.u4.single_pass.u64.min"},
    {DType::u64, Op::min, 16384, "single_tile.b1024.u8.single_pass.u64.min"},
    {DType::u64, Op::min, 370727, "warp_shuffle.b256.u4.single_pass.u64.min"},
    {DType::u64, Op::min, 741455, "warp_shuffle.b256.u8.single_pass.u64.min"},
    {DType::u64, Op::min, 2965820, "warp_shuffle.b512.u8.single_pass.u64.min"},
    {DType::u64, Op::min, 47453132, "warp_shuffle.b512.u16.single_pass.u64.min"},
    {DType::u64, Op::min, all, "streaming.b1024.u4.two_pass.u64.min"},
    {DType::u64, Op::max, 1024, "single_tile.b128.u4.single_pass.u64.max"},
    {DType::u64, Op::max, 2048, "single_tile.b256.u4.single_pass.u64.max"},
    {DType::u64, Op::max, 4096, "single_tile.b512.u4.single_pass.u64.max"},
    {DType::u64, Op::max, 8192, "single_tile.b1024.u4.single_pass.u64.max"},
    {DType::u64, Op::max, 16384, "single_tile.b1024.u8.single_pass.u64.max"},
    {DType::u64, Op::max, 370727, "warp_shuffle.b256.u4.single_pass.u64.max"},
    {DType::u64, Op::max, 741455, "warp_shuffle.b256.u8.single_pass.u64.max"},
    {DType::u64, Op::max, 2965820, "warp_shuffle.b512.u8.single_pass.u64.max"},
    {DType::u64, Op::max, 5931641, "vectorized.b1024.u8.single_pass.u64.max"},
    {DType::u64, Op::max, 47453132, "warp_shuffle.b512.u16.single_pass.u64.max"},
    {DType::u64, Op::max, all, "streaming.b1024.u4.two_pass.u64.max"},
    {DType::f32, Op::sum, 2048, "single_tile.b128.u4.single_pass.f32.sum"},
    {DType::f32, Op::sum, 4096, "single_tile.b256.u4.single_pass.f32.sum"},
    {DType::f32, Op::sum, 8192, "single_tile.b1024.u2.single_pass.f32.sum"},
    {DType::f32, Op::sum, 16384, "single_tile.b1024.u4.single_pass.f32.sum"},
    {DType::f32, Op::sum, 32768, "single_tile.b1024.u8.single_pass.f32.sum"},
    {DType::f32, Op::sum, 370727, "smem.b128.u16.static.single_pass.f32.sum"},
    {DType::f32, Op::sum, 1482910, "warp_shuffle.b256.u16.single_pass.f32.sum"},
    {DType::f32, Op::sum, 5931641, "warp_shuffle.b512.u16.single_pass.f32.sum"},
    {DType::f32, Op::sum, 11863283, "vectorized.b512.u8.single_pass.f32.sum"},
    {DType::f32, Op::sum, 47453132, "warp_shuffle.b1024.u16.single_pass.f32.sum"},
    {DType::f32, Op::sum, all, "streaming.b512.u8.two_pass.f32.sum"},
    {DType::f32, Op::min, 1024, "single_tile.b256.u1.single_pass.f32.min"},
    {DType::f32, Op::min, 2048, "single_tile.b256.u2.single_pass.f32.min"},
    {DType::f32, Op::min, 8192, "single_tile.b512.u4.single_pass.f32.min"},
    {DType::f32, Op::min, 16384, "single_tile.b1024.u4.single_pass.f32.min"},
    {DType::f32, Op::min, 32768, "single_tile.b1024.u8.single_pass.f32.min"},
    {DType::f32, Op::min, 185363, "warp_shuffle.b256.u8.single_pass.f32.min"},
    {DType::f32, Op::min, 370727, "smem.b256.u4.dynamic.single_pass.f32.min"},
    {DType::f32, Op::min, 741455, "warp_shuffle.b256.u8.single_pass.f32.min"},
    {DType::f32, Op::min, 2965820, "warp_shuffle.b512.u8.single_pass.f32.min"},
    {DType::f32, Op::min, 5931641, "warp_shuffle.b512.u16.single_pass.f32.min"},
    {DType::f32, Op::min, 11863283, "vectorized.b1024.u8.single_pass.f32.min"},
    {DType::f32, Op::min, 47453132, "vectorized.b1024.u2.single_pass.f32.min"},
    {DType::f32, Op::min, all, "streaming.b1024.u4.two_pass.f32.min"},
    {DType::f32, Op::max, 1024, "single_tile.b256.u1.single_pass.f32.max"},
    {DType::f32, Op::max, 2048, "single_tile.b128.u4.single_pass.f32.max"},
    {DType::f32, Op::max, 4096, "single_tile.b1024.u1.single_pass.f32.max"},
    {DType::f32, Op::max, 8192, "single_tile.b1024.u2.single_pass.f32.max"},
    {DType::f32, Op::max, 16384, "single_tile.b1024.u4.single_pass.f32.max"},
    {DType::f32, Op::max, 32768, "single_tile.b1024.u8.single_pass.f32.max"},
    {DType::f32, Op::max, 370727, "warp_shuffle.b256.u4.single_pass.f32.max"},
    {DType::f32, Op::max, 741455, "smem.b256.u8.dynamic.single_pass.f32.max"},
    {DType::f32, Op::max, 2965820, "warp_shuffle.b512.u8.single_pass.f32.max"},
    {DType::f32, Op::max, 5931641, "warp_shuffle.b512.u16.single_pass.f32.max"},
    {DType::f32, Op::max, 23726566, "warp_shuffle.b1024.u16.single_pass.f32.max"},
    {DType::f32, Op::max, 47453132, "vectorized.b1024.u2.single_pass.f32.max"},
    {DType::f32, Op::max, all, "streaming.b1024.u4.two_pass.f32.max"},
    // exact_sum: the winners common to four tunes of the exact keys on H100s (session 13,
    // docs/performance.md 3.18), merged into intervals as for the other keys; from 2^21 up
    // changed after the kernels' code-size change (session 14, 3.19) to the winners of its H100
    // tune: f32 unroll 2, f64 unroll 4 from 2^22.7. f32 from 2^25.5 up: exact_wide (two doubles
    // in the expansion), within 1 % of exact_registers there on uniform data and 9x its speed on
    // floats spread over 41 binades (session 16, 3.21).
    {DType::f32, Op::exact_sum, 2092, "exact_registers.b256.u2.single_pass.f32.exact_sum"},
    {DType::f32, Op::exact_sum, 4185, "exact_registers.b512.u2.single_pass.f32.exact_sum"},
    {DType::f32, Op::exact_sum, 8370, "exact_registers.b512.u4.single_pass.f32.exact_sum"},
    {DType::f32, Op::exact_sum, 64131, "exact_registers.b256.u1.single_pass.f32.exact_sum"},
    {DType::f32, Op::exact_sum, 2052214, "exact_registers.b512.u1.single_pass.f32.exact_sum"},
    {DType::f32, Op::exact_sum, 47453132, "exact_registers.b512.u2.single_pass.f32.exact_sum"},
    {DType::f32, Op::exact_sum, all, "exact_wide.b512.u4.single_pass.f32.exact_sum"},
    {DType::f64, Op::sum, 1024, "single_tile.b256.u2.single_pass.f64.sum"},
    {DType::f64, Op::sum, 4096, "single_tile.b1024.u2.single_pass.f64.sum"},
    {DType::f64, Op::sum, 8192, "single_tile.b1024.u4.single_pass.f64.sum"},
    {DType::f64, Op::sum, 16384, "single_tile.b1024.u8.single_pass.f64.sum"},
    {DType::f64, Op::sum, 92681, "warp_shuffle.b256.u4.single_pass.f64.sum"},
    {DType::f64, Op::sum, 741455, "warp_shuffle.b256.u8.single_pass.f64.sum"},
    {DType::f64, Op::sum, 23726566, "warp_shuffle.b512.u16.single_pass.f64.sum"},
    {DType::f64, Op::sum, all, "streaming.b1024.u4.two_pass.f64.sum"},
    {DType::f64, Op::min, 2048, "single_tile.b256.u4.single_pass.f64.min"},
    {DType::f64, Op::min, 8192, "single_tile.b1024.u4.single_pass.f64.min"},
    {DType::f64, Op::min, 16384, "single_tile.b1024.u8.single_pass.f64.min"},
    {DType::f64, Op::min, 92681, "smem.b128.u4.dynamic.single_pass.f64.min"},
    {DType::f64, Op::min, 741455, "warp_shuffle.b256.u8.single_pass.f64.min"},
    {DType::f64, Op::min, 2965820, "vectorized.b512.u8.single_pass.f64.min"},
    {DType::f64, Op::min, 11863283, "smem.b512.u16.static.single_pass.f64.min"},
    {DType::f64, Op::min, 23726566, "warp_shuffle.b1024.u8.single_pass.f64.min"},
    {DType::f64, Op::min, all, "streaming.b512.u8.two_pass.f64.min"},
    {DType::f64, Op::max, 2048, "single_tile.b256.u4.single_pass.f64.max"},
    {DType::f64, Op::max, 4096, "single_tile.b1024.u2.single_pass.f64.max"},
    {DType::f64, Op::max, 8192, "single_tile.b1024.u4.single_pass.f64.max"},
    {DType::f64, Op::max, 16384, "single_tile.b1024.u8.single_pass.f64.max"},
    {DType::f64, Op::max, 92681, "smem.b128.u4.dynamic.single_pass.f64.max"},
    {DType::f64, Op::max, 741455, "warp_shuffle.b256.u8.single_pass.f64.max"},
    {DType::f64, Op::max, 2965820, "vectorized.b512.u8.single_pass.f64.max"},
    {DType::f64, Op::max, 11863283, "smem.b512.u16.dynamic.single_pass.f64.max"},
    {DType::f64, Op::max, 23726566, "warp_shuffle.b1024.u4.single_pass.f64.max"},
    {DType::f64, Op::max, all, "streaming.b512.u8.two_pass.f64.max"},
    {DType::f64, Op::exact_sum, 1045, "exact.b512.u1.single_pass.f64.exact_sum"},
    {DType::f64, Op::exact_sum, 2092, "exact.b512.u2.single_pass.f64.exact_sum"},
    {DType::f64, Op::exact_sum, 4185, "exact.b512.u4.single_pass.f64.exact_sum"},
    {DType::f64, Op::exact_sum, 16032, "exact.b128.u1.single_pass.f64.exact_sum"},
    {DType::f64, Op::exact_sum, 73032, "exact.b256.u1.single_pass.f64.exact_sum"},
    {DType::f64, Op::exact_sum, 4104428, "exact.b512.u1.single_pass.f64.exact_sum"},
    {DType::f64, Op::exact_sum, 6902799, "exact.b512.u2.single_pass.f64.exact_sum"},
    {DType::f64, Op::exact_sum, all, "exact.b512.u4.single_pass.f64.exact_sum"},
};

}  // namespace

std::span<const DefaultRule> builtin_default_rules() noexcept { return rules; }

const char* builtin_default_id(DType dtype, Op op, std::uint64_t n) noexcept {
  for (const DefaultRule& r : rules)
    if (r.dtype == dtype && r.op == op && n <= r.n_hi) return r.kernel_id;
  return "";  // never: the last rule of every key ends at UINT64_MAX (a unit test checks)
}

}  // namespace tunedreduce::runtime
