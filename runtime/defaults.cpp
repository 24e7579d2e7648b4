#include "runtime/defaults.hpp"

namespace tunedreduce::runtime {

namespace {

// One configuration for every (dtype, op) but the 32-bit integer sums: vectorized, 1024 threads,
// 4 16-byte loads in flight per thread, single-pass finish. The 32-bit integer sums take
// streaming.b256.u2.packed (kernel revision 2): in the default halving run of 2026-11-22 on the
// H100 (docs/performance.md), where the first round measures every configuration at all 21 sizes
// 2^10..2^30, its times are on geometric mean 1.034x the per-size best for i32 sum and 1.031x for
// u32 sum (worst size 1.13x), against 1.144x and 1.149x (worst 1.35x) for
// vectorized.b1024.u4.single_pass: the packed finish saves ~0.5 us per launch at every size with
// more than one block. For the other keys the best configuration of that run is within 3-4 % of
// vectorized.b1024.u4 on geometric mean, below what three repeats resolve, so they keep it.
//
// Revision-1 evidence for vectorized.b1024.u4.single_pass: the first tests/data/h100-sample.db, an
// exhaustive recording on an NVIDIA H100 80GB HBM3
// (driver 580, CUDA 13.0, 2026-11-22; CUDA events, cold L2, GPU busy before the start event,
// medians) of all 340 configurations for i32/f32 x sum/max at n = 2^10, 2^14, 2^18, 2^20, 2^22,
// 2^24, 2^26. Ranking each configuration by the geometric mean of its 28 times (4 keys x 7 sizes):
//
//   1. warp_shuffle.b1024.u16.single_pass  13.32 us
//   2. warp_shuffle.b256.u8.single_pass    13.34 us
//   3. vectorized.b1024.u4.single_pass     13.35 us   <- chosen
//   4. smem.b256.u16.dynamic.single_pass   13.37 us
//   (the best entry at each size separately: 12.62 us, 5.5 % lower; the best two_pass entry:
//   14.12 us; the seeds' global-memory families: 25-30 us)
//
// The first three are within 0.3 % of each other, below the run-to-run noise. vectorized wins
// the tie because its loads are counted in 16-byte vectors: with u4 every thread keeps 64 bytes
// in flight whatever the element size, so the 4-byte measurements carry over to the 8-byte types
// (i64, u64, f64), which the recording does not cover, with the same instructions per byte;
// warp_shuffle's u16 would double the bytes per thread for 8-byte types. It is also within 1 % of
// the per-size best at the two largest sizes, where time is spent (i32 sum: 35.84 us at 2^24,
// 100.78 us at 2^26 against 35.49 and 99.97), and its worst case is 0.5 us above the per-size best
// at 2^10 (4.58 against 4.06 us). Against cub::DeviceReduce::Sum measured the same way
// (../shared/docs/gpu-workflow.md: 4.51, 7.20, 7.78, 9.38, 15.30, 37.22, 103.3 us for int32 at
// the same sizes) it is as fast or faster from 2^14 up, and 1.5 % slower at 2^10.
//
// u32 runs i32's code (signed sums are computed unsigned) and takes its choice. min is not in
// the recording: it has max's memory traffic and instruction count (one compare per element),
// and max's ranking puts vectorized.b1024.u4 first for i32 (13.22 us) and second for f32
// (13.46 us, 0.2 % behind), so min takes the same configuration.
constexpr std::uint64_t all = ~std::uint64_t{0};
constexpr DefaultRule rules[] = {
    {DType::i32, Op::sum, all, "streaming.b256.u2.packed.i32.sum"},
    {DType::i32, Op::min, all, "vectorized.b1024.u4.single_pass.i32.min"},
    {DType::i32, Op::max, all, "vectorized.b1024.u4.single_pass.i32.max"},
    {DType::u32, Op::sum, all, "streaming.b256.u2.packed.u32.sum"},
    {DType::u32, Op::min, all, "vectorized.b1024.u4.single_pass.u32.min"},
    {DType::u32, Op::max, all, "vectorized.b1024.u4.single_pass.u32.max"},
    {DType::i64, Op::sum, all, "vectorized.b1024.u4.single_pass.i64.sum"},
    {DType::i64, Op::min, all, "vectorized.b1024.u4.single_pass.i64.min"},
    {DType::i64, Op::max, all, "vectorized.b1024.u4.single_pass.i64.max"},
    {DType::u64, Op::sum, all, "vectorized.b1024.u4.single_pass.u64.sum"},
    {DType::u64, Op::min, all, "vectorized.b1024.u4.single_pass.u64.min"},
    {DType::u64, Op::max, all, "vectorized.b1024.u4.single_pass.u64.max"},
    {DType::f32, Op::sum, all, "vectorized.b1024.u4.single_pass.f32.sum"},
    {DType::f32, Op::min, all, "vectorized.b1024.u4.single_pass.f32.min"},
    {DType::f32, Op::max, all, "vectorized.b1024.u4.single_pass.f32.max"},
    {DType::f64, Op::sum, all, "vectorized.b1024.u4.single_pass.f64.sum"},
    {DType::f64, Op::min, all, "vectorized.b1024.u4.single_pass.f64.min"},
    {DType::f64, Op::max, all, "vectorized.b1024.u4.single_pass.f64.max"},
};

}  // namespace

std::span<const DefaultRule> builtin_default_rules() noexcept { return rules; }

const char* builtin_default_id(DType dtype, Op op, std::uint64_t n) noexcept {
  for (const DefaultRule& r : rules)
    if (r.dtype == dtype && r.op == op && n <= r.n_hi) return r.kernel_id;
  return "";  // never: the last rule of every key ends at UINT64_MAX (a unit test checks)
}

}  // namespace tunedreduce::runtime
