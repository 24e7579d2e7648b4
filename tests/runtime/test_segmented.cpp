// Segmented reductions without a GPU: ids and the space, the built-in rules, and the library's
// argument checks and launches on the fake platform (tests/gpu/test_segmented_gpu.cpp runs them).

#include <gtest/gtest.h>

#include <set>

#include "kernels/segmented/segmented.hpp"
#include "kernels/segmented/space.hpp"
#include "runtime/segmented_rules.hpp"
#include "tests/db/test_util.hpp"
#include "tests/runtime/runtime_test_util.hpp"

namespace tunedreduce::runtime::test {
namespace {

namespace seg = kernels::segmented;

TEST(SegmentedIds, EveryEntryRoundTripsAndIsInTheSpace) {
  const auto entries = seg::seg_registry();
  // 35 (dtype, op) keys of 27 configurations each.
  EXPECT_EQ(entries.size(), 35u * 27u);
  std::set<std::string> ids;
  for (const seg::SegEntry& e : entries) {
    const auto p = seg::parse_seg_id(e.id);
    ASSERT_TRUE(p) << e.id;
    EXPECT_EQ(*p, e.params) << e.id;
    EXPECT_TRUE(seg::space::contains(e.params)) << e.id;
    EXPECT_TRUE(ids.insert(e.id).second) << e.id;
    EXPECT_EQ(seg::find_seg(e.id), &e);
  }
  EXPECT_EQ(seg::make_seg_id(
                {seg::SegFamily::group, 256, 8, 4, seg::SegLayout::fixed, DType::f32, Op::sum}),
            "seg.group.b256.g8.v4.fixed.f32.sum");
  EXPECT_EQ(seg::make_seg_id({seg::SegFamily::split, 512, 512, 2, seg::SegLayout::offsets64,
                              DType::f64, Op::argmax}),
            "seg.split.b512.v2.offsets64.f64.argmax");
  for (const char* bad :
       {"", "seg", "seg.group.b256.v4.fixed.f32.sum", "seg.thread.b256.g1.v1.fixed.f32.sum",
        "seg.block.b0256.v4.fixed.f32.sum", "seg.block.b-1.v4.fixed.f32.sum",
        "seg.block.b+256.v4.fixed.f32.sum", "seg.block.b256.v4.rows.f32.sum",
        "seg.block.b256.v4.fixed.float.sum", "vectorized.b256.u2.single_pass.f32.sum"})
    EXPECT_FALSE(seg::parse_seg_id(bad)) << bad;
  EXPECT_EQ(seg::find_seg("seg.block.b256.v4.fixed.f32.exact_sum"), nullptr);
}

kernels::DeviceLimits h100() {
  kernels::DeviceLimits d;
  d.sm_count = 132;
  return d;
}

std::string rule_of(DType t, Op o, const Segments& s, std::size_t align = 256) {
  std::string why;
  return seg::make_seg_id(builtin_segmented(t, o, s, align, h100(), why));
}

TEST(SegmentedRules, ChooseByBytesPerSegmentAndCount) {
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 20, 1)),
            "seg.tile.b256.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 20, 4)),
            "seg.tile.b256.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 20, 3)),
            "seg.thread.b256.v1.fixed.f32.sum");
  // argmin/argmax: the tile family for rows of a whole vector only.
  EXPECT_EQ(rule_of(DType::f32, Op::argmax, Segments::rows(1 << 20, 1)),
            "seg.thread.b256.v1.fixed.f32.argmax");
  EXPECT_EQ(rule_of(DType::f32, Op::argmax, Segments::rows(1 << 20, 2)),
            "seg.thread.b256.v1.fixed.f32.argmax");
  EXPECT_EQ(rule_of(DType::f32, Op::argmin, Segments::rows(1 << 20, 4)),
            "seg.tile.b256.v4.fixed.f32.argmin");
  EXPECT_EQ(rule_of(DType::f64, Op::argmax, Segments::rows(1 << 20, 2)),
            "seg.tile.b256.v2.fixed.f64.argmax");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 20, 8)),
            "seg.thread.b256.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 20, 4), 4),
            "seg.thread.b256.v1.fixed.f32.sum");  // rows not 16-byte aligned
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 18, 64)),
            "seg.group.b256.g4.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 18, 64, 65)),
            "seg.group.b256.g4.v4.fixed.f32.sum");  // odd stride: a scalar head and tail
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 14, 1024)),
            "seg.block.b128.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(128, 1 << 17)),
            "seg.block.b1024.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1024, 1 << 14)),
            "seg.block.b512.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 16, 4096)),
            "seg.block.b256.v4.fixed.f32.sum");
  // Rows of 1 KiB or more, fewer than 1024 of them: a block per row, not a group.
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(128, 512)),
            "seg.block.b128.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::i32, Op::sum, Segments::rows(2, 256)),
            "seg.block.b128.v4.fixed.i32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1024, 512)),
            "seg.group.b256.g32.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1, 512)),
            "seg.group.b256.g32.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(512, 128)),
            "seg.group.b256.g32.v4.fixed.f32.sum");  // 512 bytes a row
  // Segments of up to 32 KiB keep to their length, however few: no block of 1024 to fill the GPU.
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(16, 4096)),
            "seg.block.b256.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(256, 4096)),
            "seg.block.b256.v4.fixed.f32.sum");
  EXPECT_EQ(rule_of(DType::f64, Op::sum, Segments::rows(64, 4096)),
            "seg.block.b512.v2.fixed.f64.sum");
  EXPECT_EQ(rule_of(DType::f64, Op::sum, Segments::rows(64, 8192)),
            "seg.block.b1024.v2.fixed.f64.sum");  // 64 KiB a segment: filled
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(4, 1 << 22)),
            "seg.split.b512.v4.fixed.f32.sum");
  // Offsets: the balanced family unless the longest length is known and within 4x the mean.
  const auto* o64 = reinterpret_cast<const std::int64_t*>(8);
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::csr(1 << 18, o64, 64)),
            "seg.balanced.b256.v4.offsets64.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::csr(1 << 18, o64)),
            "seg.balanced.b256.v4.offsets64.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::csr(1 << 18, o64, 64, 257)),
            "seg.balanced.b256.v4.offsets64.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::csr(1 << 18, o64, 64, 256)),
            "seg.group.b256.g4.v4.offsets64.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::csr(1 << 18, o64, 8, 8)),
            "seg.thread.b256.v4.offsets64.f32.sum");
  EXPECT_EQ(rule_of(DType::f32, Op::sum, Segments::rows(1 << 18, 64)),
            "seg.group.b256.g4.v4.fixed.f32.sum");  // rows never spread
  // Every rule names an entry of the space, for every key and shape class.
  for (DType t : all_dtypes)
    for (Op o : all_ops) {
      if (!seg::seg_op_applies(t, o)) continue;
      for (std::uint64_t L : {1ull, 3ull, 4ull, 8ull, 64ull, 1000ull, 1ull << 16, 1ull << 24})
        for (std::uint64_t S : {1ull, 100ull, 100000ull}) {
          std::string why;
          EXPECT_NE(seg::find_seg(builtin_segmented(t, o, Segments::rows(S, L), 4, h100(), why)),
                    nullptr);
          Segments off = Segments::csr(S, reinterpret_cast<const std::int64_t*>(8), L);
          EXPECT_NE(seg::find_seg(builtin_segmented(t, o, off, 4, h100(), why)), nullptr);
          off.mean_length = 0;
          EXPECT_NE(seg::find_seg(builtin_segmented(t, o, off, 4, h100(), why)), nullptr) << why;
          off.mean_length = L;
          off.max_length = L;
          EXPECT_NE(seg::find_seg(builtin_segmented(t, o, off, 4, h100(), why)), nullptr) << why;
        }
    }
}

TEST(SegmentedEntries, SplitWorkspaceAndRefusals) {
  const seg::SegEntry* split = seg::find_seg("seg.split.b512.v4.fixed.f32.sum");
  ASSERT_NE(split, nullptr);
  seg::SegProblem p;
  p.num_segments = 4;
  p.segment_size = 1 << 22;
  p.stride = 1 << 22;
  const std::uint64_t parts = split->blocks_per_segment(p, h100());
  // Half a wave of resident blocks less 1/64 of it: 4 of 512 threads on each of 132
  // multiprocessors, 528 / 2 - 8 over the 4 segments (a whole wave, or exactly two blocks a
  // multiprocessor, ran 6-8 % slower at 2^24).
  EXPECT_EQ(parts, 64u);
  // At 2^28 the parts of at most 32 steps of 4 vectors a thread decide: 2^24 / (32 x 8192).
  seg::SegProblem big = p;
  big.num_segments = 16;
  big.segment_size = big.stride = 1 << 24;
  EXPECT_EQ(split->blocks_per_segment(big, h100()), 64u);
  EXPECT_EQ(split->workspace_bytes(p, h100()), (4 * parts * 4 + 255) / 256 * 256);
  EXPECT_FALSE(split->can_implement(p, 4, h100()));
  p.stride = 5;
  EXPECT_TRUE(split->can_implement(p, 4, h100()));
  p.stride = p.segment_size;
  p.num_segments = std::uint64_t{1} << 41;
  EXPECT_TRUE(split->can_implement(p, 4, h100()));
  const seg::SegEntry* block = seg::find_seg("seg.block.b256.v4.fixed.f32.sum");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->workspace_bytes(p, h100()), 0u);
  EXPECT_EQ(block->blocks_per_segment(p, h100()), 1u);
}

TEST(SegmentedEntries, BalancedTilesAndWorkspace) {
  const seg::SegEntry* bal = seg::find_seg("seg.balanced.b256.v4.offsets64.f32.argmax");
  ASSERT_NE(bal, nullptr);
  seg::SegProblem p;
  p.num_segments = 100000;
  p.begin = p.end = reinterpret_cast<const void*>(8);
  // As many tiles as are resident (4 blocks a multiprocessor) where the mean length is unknown
  // or the total large; fewer, of at least 4 vectors a thread, for a small total.
  EXPECT_EQ(bal->tiles(p, h100()), 4u * 132u);
  p.mean_length = 1 << 12;
  EXPECT_EQ(bal->tiles(p, h100()), 4u * 132u);
  p.mean_length = 1;
  EXPECT_EQ(bal->tiles(p, h100()), (100000u + 4095u) / 4096u);
  p.mean_length = std::uint64_t{1} << 60;  // an absurd mean: no overflow
  EXPECT_EQ(bal->tiles(p, h100()), 4u * 132u);
  // The header, the chunks' counts and sums (49 chunks of 2048), the long segments' indices (S)
  // and starts (S + 1), the tiles' first long segments and two partials a tile (16 bytes each
  // for argmax of f32), each 256-byte aligned.
  p.mean_length = 1;
  const std::uint64_t tiles = bal->tiles(p, h100());
  const auto r = [](std::size_t b) { return (b + 255) / 256 * 256; };
  EXPECT_EQ(bal->workspace_bytes(p, h100()),
            256 + 2 * r(8 * 49) + r(8 * 100000) + r(8 * 100001) + r(8 * tiles) + 2 * r(16 * tiles));
  // CSR offsets (end == begin + 1, 8-byte offsets): the header and the tiles' records and
  // partials alone, whatever the count.
  p.end = reinterpret_cast<const void*>(16);
  EXPECT_EQ(bal->workspace_bytes(p, h100()), 256 + r(8 * tiles) + 2 * r(16 * tiles));
  p.num_segments = 100000000;
  p.mean_length = 0;
  EXPECT_EQ(bal->workspace_bytes(p, h100()), 256 + r(8 * 528) + 2 * r(16 * 528));
  const seg::SegEntry* bal32 = seg::find_seg("seg.balanced.b256.v4.offsets32.f32.argmax");
  ASSERT_NE(bal32, nullptr);  // 4-byte offsets: end == begin + 4 bytes is CSR, + 8 is not
  EXPECT_GT(bal32->workspace_bytes(p, h100()), std::size_t{8} * 100000000);
  p.end = reinterpret_cast<const void*>(12);
  EXPECT_EQ(bal32->workspace_bytes(p, h100()), 256 + r(8 * 528) + 2 * r(16 * 528));
  p.num_segments = 100000;
  p.mean_length = 1;
  p.end = p.begin;
  EXPECT_FALSE(bal->can_implement(p, 4, h100()));
  p.begin = nullptr;
  EXPECT_TRUE(bal->can_implement(p, 4, h100()));
  EXPECT_EQ(bal->blocks_per_segment(p, h100()), 1u);
  const seg::SegEntry* block = seg::find_seg("seg.block.b256.v4.offsets64.f32.sum");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->tiles(p, h100()), 0u);
}

struct Device0 {
  TestRuntime t{{sample_device()}, std::nullopt};
  float* in = reinterpret_cast<float*>(0x7000'0000'0000);
  float* out = reinterpret_cast<float*>(0x7000'1000'0000);
  std::int32_t* off = reinterpret_cast<std::int32_t*>(0x7000'3000'0000);
  Device0() {
    t.fake->set_pointer(in, {MemoryKind::device, 0});
    t.fake->set_pointer(out, {MemoryKind::device, 0});
    t.fake->set_pointer(off, {MemoryKind::device, 0});
  }
};

template <class F>
void expect_status(F&& f, Status st, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << text;
  } catch (const ReduceError& e) {
    EXPECT_EQ(e.status(), st) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(SegmentedArguments, RefusedByNameBeforeAnyLaunch) {
  Device0 d;
  Runtime& rt = *d.t.rt;
  expect_status(
      [&] {
        rt.segmented_reduce(d.in, nullptr, Segments::rows(4, 8), DType::f32, Op::sum, nullptr);
      },
      Status::invalid_argument, "d_out is a null pointer");
  expect_status(
      [&] {
        rt.segmented_reduce(nullptr, d.out, Segments::rows(4, 8), DType::f32, Op::sum, nullptr);
      },
      Status::invalid_argument, "d_in is a null pointer");
  expect_status(
      [&] {
        rt.segmented_reduce(d.in, d.out, Segments::rows(4, 8, 3), DType::f32, Op::sum, nullptr);
      },
      Status::invalid_argument, "seg.stride = 3 is smaller than seg.size = 8");
  expect_status(
      [&] {
        rt.segmented_reduce(d.in, d.out, Segments::rows(4, 8), DType::f32, Op::exact_sum, nullptr);
      },
      Status::invalid_argument, "exact_sum has no segmented kernels");
  expect_status(
      [&] { rt.segmented_reduce(d.in, d.out, Segments::rows(4, 8), DType::f16, Op::sum, nullptr); },
      Status::invalid_argument, "op sum is defined for");
  expect_status(
      [&] {
        rt.segmented_reduce(d.in, d.out,
                            Segments::rows(std::uint64_t{1} << 40, std::uint64_t{1} << 30),
                            DType::f32, Op::sum, nullptr);
      },
      Status::invalid_argument, "span more than 2^62 elements");
  expect_status(
      [&] {
        rt.segmented_reduce(d.in, d.out,
                            Segments::csr(4, static_cast<const std::int32_t*>(nullptr)), DType::f32,
                            Op::sum, nullptr);
      },
      Status::invalid_argument, "seg.begin is a null pointer");
  Segments bad = Segments::rows(4, 8);
  bad.layout = static_cast<SegmentLayout>(7);
  expect_status([&] { rt.segmented_reduce(d.in, d.out, bad, DType::f32, Op::sum, nullptr); },
                Status::invalid_argument, "seg.layout 7 is not a SegmentLayout");
  float host[8];
  expect_status(
      [&] { rt.segmented_reduce(host, d.out, Segments::rows(1, 8), DType::f32, Op::sum, nullptr); },
      Status::invalid_argument, "d_in");
  expect_status(
      [&] {
        rt.segmented_reduce(d.in, d.out + 1, Segments::csr(4, d.off), DType::f32, Op::argmax,
                            nullptr);
      },
      Status::invalid_argument, "is not aligned to 8 bytes");  // an IndexedValue's
  EXPECT_TRUE(d.t.fake->seg_launches().empty());
}

TEST(SegmentedArguments, LaunchesTheRuleAndGivesTheSplitFamilyAWorkspace) {
  Device0 d;
  Runtime& rt = *d.t.rt;
  cudaStream_t s = reinterpret_cast<cudaStream_t>(0x77);
  rt.segmented_reduce(d.in, d.out, Segments::rows(1 << 20, 1), DType::f32, Op::sum, s);
  rt.segmented_reduce(d.in, d.out, Segments::rows(4, 1 << 22), DType::f32, Op::sum, s);
  rt.segmented_reduce(d.in, d.out, Segments::rows(0, 8), DType::f32, Op::sum, s);  // nothing
  const auto l = d.t.fake->seg_launches();
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].id, "seg.tile.b256.v4.fixed.f32.sum");
  EXPECT_EQ(l[0].args.workspace, nullptr);
  EXPECT_EQ(l[1].id, "seg.split.b512.v4.fixed.f32.sum");
  EXPECT_NE(l[1].args.workspace, nullptr);
  EXPECT_EQ(l[1].args.problem.num_segments, 4u);
  std::size_t bytes = 0;
  rt.segmented_reduce(nullptr, bytes, d.in, d.out, Segments::rows(4, 1 << 22), DType::f32, Op::sum,
                      s);
  EXPECT_EQ(bytes, seg::find_seg(l[1].id)->workspace_bytes(l[1].args.problem,
                                                           d.t.fake->devices[0].limits));
  void* temp = reinterpret_cast<void*>(0x7000'2000'0000);
  d.t.fake->set_pointer(temp, {MemoryKind::device, 0});
  std::size_t small = bytes - 1;
  expect_status(
      [&] {
        rt.segmented_reduce(temp, small, d.in, d.out, Segments::rows(4, 1 << 22), DType::f32,
                            Op::sum, s);
      },
      Status::temp_too_small, "is smaller than the");
  rt.segmented_reduce(temp, bytes, d.in, d.out, Segments::rows(4, 1 << 22), DType::f32, Op::sum, s);
  ASSERT_EQ(d.t.fake->seg_launches().size(), 3u);
  EXPECT_EQ(d.t.fake->seg_launches()[2].args.workspace, temp);
  const SegmentedConfig c = rt.lookup_segmented(DType::f32, Op::sum, Segments::rows(4, 1 << 22), 0);
  EXPECT_STREQ(c.kernel_id, "seg.split.b512.v4.fixed.f32.sum");
  EXPECT_STREQ(c.family, "split");
  EXPECT_GT(c.blocks_per_segment, 1u);
  EXPECT_NE(std::string(c.source).find("built-in"), std::string::npos);
}

// One row is the whole-array reduction of its elements: both calls run reduce()'s kernel (the
// whole-array launch, its workspace and size query), and lookup_segmented says "whole" with
// lookup()'s kernel; two rows stay segmented.
TEST(SegmentedArguments, OneRowRunsTheWholeArrayReduction) {
  Device0 d;
  Runtime& rt = *d.t.rt;
  cudaStream_t s = reinterpret_cast<cudaStream_t>(0x77);
  const std::uint64_t n = 1 << 22;
  rt.segmented_reduce(d.in, d.out, Segments::rows(1, n), DType::f32, Op::sum, s);
  EXPECT_TRUE(d.t.fake->seg_launches().empty());
  auto l = d.t.fake->launches();
  ASSERT_EQ(l.size(), 1u);
  const Config w = rt.lookup(DType::f32, Op::sum, n, 0);
  EXPECT_EQ(l[0].kernel_id, w.kernel_id);
  EXPECT_EQ(l[0].args.n, n);
  EXPECT_EQ(l[0].args.in, d.in);
  EXPECT_EQ(l[0].args.out, d.out);
  // The two-phase call: reduce()'s size query and launch, in the caller's storage.
  std::size_t bytes = 0, whole = 0;
  rt.segmented_reduce(nullptr, bytes, d.in, d.out, Segments::rows(1, n), DType::f32, Op::sum, s);
  rt.reduce(nullptr, whole, d.in, d.out, n, DType::f32, Op::sum, s);
  EXPECT_EQ(bytes, whole);
  void* temp = reinterpret_cast<void*>(0x7000'3000'0000);
  d.t.fake->set_pointer(temp, {MemoryKind::device, 0});
  rt.segmented_reduce(temp, bytes, d.in, d.out, Segments::rows(1, n), DType::f32, Op::sum, s);
  l = d.t.fake->launches();
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[1].args.workspace, temp);
  // A row of no element: the empty result, d_in may be null (as for reduce() of n = 0).
  rt.segmented_reduce(nullptr, d.out, Segments::rows(1, 0), DType::f32, Op::argmax, s);
  EXPECT_EQ(d.t.fake->launches().size(), 3u);
  // Bad arguments are still named.
  expect_status(
      [&] { rt.segmented_reduce(nullptr, d.out, Segments::rows(1, 8), DType::f32, Op::sum, s); },
      Status::invalid_argument, "d_in is a null pointer");
  expect_status(
      [&] { rt.segmented_reduce(d.in, d.out, Segments::rows(1, 8), DType::f32, Op::exact_sum, s); },
      Status::invalid_argument, "has no segmented kernels");
  const SegmentedConfig c = rt.lookup_segmented(DType::f32, Op::sum, Segments::rows(1, n), 0);
  EXPECT_STREQ(c.family, "whole");
  EXPECT_STREQ(c.kernel_id, w.kernel_id);
  EXPECT_EQ(c.level, w.level);
  EXPECT_EQ(c.block, w.block);
  // Two rows: the segmented kernels.
  rt.segmented_reduce(d.in, d.out, Segments::rows(2, n / 2), DType::f32, Op::sum, s);
  EXPECT_EQ(d.t.fake->seg_launches().size(), 1u);
  EXPECT_STRNE(rt.lookup_segmented(DType::f32, Op::sum, Segments::rows(2, n / 2), 0).family,
               "whole");
}

TEST(SegmentedArguments, CheckedOffsetsAreCheckedBeforeTheLaunchOnlyWhenAsked) {
  Device0 d;
  Runtime& rt = *d.t.rt;
  cudaStream_t s = reinterpret_cast<cudaStream_t>(0x78);
  d.t.fake->set_pointer(d.off + 1, {MemoryKind::device, 0});  // CSR's end
  // Unchecked: no check, one launch.
  rt.segmented_reduce(d.in, d.out, Segments::csr(100, d.off), DType::f32, Op::sum, s);
  EXPECT_EQ(d.t.fake->offsets_checks.load(), 0);
  // Checked and good: the check, then the launch, on the caller's stream, in both calls.
  rt.segmented_reduce(d.in, d.out, Segments::csr(100, d.off).checked(), DType::f32, Op::sum, s);
  EXPECT_EQ(d.t.fake->offsets_checks.load(), 1);
  ASSERT_EQ(d.t.fake->seg_launches().size(), 2u);
  const auto ev = d.t.fake->events();
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[ev.size() - 2].what, "check offsets");
  EXPECT_EQ(ev[ev.size() - 2].stream, s);
  EXPECT_EQ(ev.back().what.rfind("launch seg.", 0), 0u) << ev.back().what;
  std::size_t bytes = 0;
  const Segments checked = Segments::csr(100, d.off).checked();
  rt.segmented_reduce(nullptr, bytes, d.in, d.out, checked, DType::f32, Op::sum, s);
  EXPECT_EQ(d.t.fake->offsets_checks.load(), 1);  // the size query checks nothing
  void* temp = reinterpret_cast<void*>(0x7000'2000'0000);
  d.t.fake->set_pointer(temp, {MemoryKind::device, 0});
  rt.segmented_reduce(temp, bytes, d.in, d.out, checked, DType::f32, Op::sum, s);
  EXPECT_EQ(d.t.fake->offsets_checks.load(), 2);
  EXPECT_EQ(d.t.fake->seg_launches().size(), 3u);
  // Rows need no check.
  rt.segmented_reduce(d.in, d.out, Segments::rows(4, 8).checked(), DType::f32, Op::sum, s);
  EXPECT_EQ(d.t.fake->offsets_checks.load(), 2);
  // A bad segment: named with its offsets, and nothing launched, in both calls.
  d.t.fake->offsets_verdict = {true, 41, 500, 497};
  expect_status(
      [&] { rt.segmented_reduce(d.in, d.out, checked, DType::f32, Op::max, s); },
      Status::invalid_argument,
      "segment 41 ends before it begins (seg.begin[41] = 500, seg.end[41] = 497); nothing was "
      "reduced");
  d.t.fake->offsets_verdict = {true, 7, -3, 9};
  expect_status(
      [&] { rt.segmented_reduce(temp, bytes, d.in, d.out, checked, DType::f32, Op::sum, s); },
      Status::invalid_argument, "segment 7 begins at a negative offset (seg.begin[7] = -3)");
  EXPECT_EQ(d.t.fake->seg_launches().size(), 4u);
  // The check's own CUDA failure is a cuda_error that says what failed.
  d.t.fake->offsets_verdict = {};
  d.t.fake->offsets_check_result = cudaErrorIllegalAddress;
  expect_status([&] { rt.segmented_reduce(d.in, d.out, checked, DType::f32, Op::sum, s); },
                Status::cuda_error, "checking the offsets of 100 segments on device 0 failed");
  // Under graph capture a checked call is refused before any check (the verdict needs a wait).
  d.t.fake->offsets_check_result = cudaSuccess;
  d.t.fake->capturing_streams.push_back(s);
  const int before = d.t.fake->offsets_checks.load();
  expect_status([&] { rt.segmented_reduce(d.in, d.out, checked, DType::f32, Op::sum, s); },
                Status::unsupported, "which a stream under CUDA graph capture cannot");
  EXPECT_EQ(d.t.fake->offsets_checks.load(), before);
  EXPECT_EQ(d.t.fake->seg_launches().size(), 4u);
}

TEST(SegmentedArguments, LookupWithoutADeviceGivesTheRulesForDeviceMinusOne) {
  TestRuntime t{{}, std::nullopt};
  const SegmentedConfig c =
      t.rt->lookup_segmented(DType::f64, Op::max, Segments::rows(1000, 64), -1);
  EXPECT_EQ(c.device, -1);
  EXPECT_STREQ(c.family, "group");
  expect_status([&] { t.rt->lookup_segmented(DType::f64, Op::max, Segments::rows(1, 1), 5); },
                Status::invalid_argument, "device 5 does not exist");
  expect_status([&] { t.rt->lookup_segmented(DType::f64, Op::max, Segments::rows(1, 1), 99); },
                Status::invalid_argument, "is not a CUDA device ordinal");
}

// Tuned segmented winners (schema version 12): the rectangle containing the shape, this device
// before the same model, the preferred L2 mode first; the rules elsewhere.
TEST(SegmentedTuned, TheRectangleContainingTheShapeDecidesElseTheRules) {
  db::test::TempDir dir;
  const auto path = dir / "tune.db";
  const DeviceFingerprint me = sample_device(), twin = same_model_device();
  add_segmented_rows(path, me,
                     {{"seg.group.b256.g4.v4.fixed.f32.sum", 1, 100, 1, 1000},
                      {"seg.block.b256.v4.fixed.f32.sum", 101, 1u << 20, 1, 1000},
                      {"seg.group.b256.g32.v4.offsets32.f32.sum", 1, 1u << 20, 1, 1000}});
  add_segmented_rows(path, twin, {{"seg.thread.b256.v1.fixed.f64.max", 1, 64, 1, 1u << 30}});
  TuningTable t(db::load_snapshot(path, me), info_of(me).limits);
  EXPECT_EQ(t.segmented_rows(), 4u);
  EXPECT_TRUE(t.rejected().empty());
  const auto fixed = seg::SegLayout::fixed;
  const auto at = [&](DType d, Op o, seg::SegLayout l, std::uint64_t size, std::uint64_t count) {
    const SegChoice c = t.choose_segmented(d, o, l, size, count);
    return c.entry ? std::string(c.entry->id) + " " + level_name(c.level) : std::string("rules");
  };
  EXPECT_EQ(at(DType::f32, Op::sum, fixed, 1, 1), "seg.group.b256.g4.v4.fixed.f32.sum exact");
  EXPECT_EQ(at(DType::f32, Op::sum, fixed, 100, 1000), "seg.group.b256.g4.v4.fixed.f32.sum exact");
  EXPECT_EQ(at(DType::f32, Op::sum, fixed, 101, 1000), "seg.block.b256.v4.fixed.f32.sum exact");
  EXPECT_EQ(at(DType::f32, Op::sum, fixed, 101, 1001), "rules");
  EXPECT_EQ(at(DType::f32, Op::sum, fixed, (1u << 20) + 1, 1), "rules");
  EXPECT_EQ(at(DType::f32, Op::sum, seg::SegLayout::offsets32, 7, 7),
            "seg.group.b256.g32.v4.offsets32.f32.sum exact");
  EXPECT_EQ(at(DType::f32, Op::sum, seg::SegLayout::offsets64, 7, 7), "rules");
  EXPECT_EQ(at(DType::f32, Op::max, fixed, 7, 7), "rules");
  EXPECT_EQ(at(DType::f64, Op::max, fixed, 64, 1u << 30),
            "seg.thread.b256.v1.fixed.f64.max same_model");
  EXPECT_EQ(at(DType::f64, Op::max, fixed, 65, 1), "rules");
}

TEST(SegmentedTuned, AWarmRowServesAColdLookupOnlyAfterTheColdRows) {
  db::test::TempDir dir;
  const auto path = dir / "tune.db";
  const DeviceFingerprint me = sample_device();
  add_segmented_rows(path, me, {{"seg.block.b512.v4.fixed.f32.sum", 1, 1000, 1, 1000}},
                     db::L2Mode::warm);
  add_segmented_rows(path, me, {{"seg.block.b128.v4.fixed.f32.sum", 1, 10, 1, 10}},
                     db::L2Mode::cold);
  TuningTable t(db::load_snapshot(path, me), info_of(me).limits);
  const auto fixed = seg::SegLayout::fixed;
  EXPECT_STREQ(t.choose_segmented(DType::f32, Op::sum, fixed, 5, 5).entry->id,
               "seg.block.b128.v4.fixed.f32.sum");
  EXPECT_STREQ(t.choose_segmented(DType::f32, Op::sum, fixed, 5, 5, db::L2Mode::warm).entry->id,
               "seg.block.b512.v4.fixed.f32.sum");
  const SegChoice c = t.choose_segmented(DType::f32, Op::sum, fixed, 500, 5);
  ASSERT_NE(c.row, nullptr);
  EXPECT_EQ(c.row->l2_mode, db::L2Mode::warm);
  EXPECT_EQ(c.level, Level::exact);
}

TEST(SegmentedTuned, TheLibraryRunsTheTunedKernelAndSaysWhy) {
  db::test::TempDir dir;
  const auto path = dir / "tune.db";
  add_segmented_rows(path, sample_device(),
                     {{"seg.tile.b256.v4.fixed.f32.sum", 1, 4, 1, 1u << 30},
                      {"seg.group.b256.g4.v4.offsets32.f32.sum", 1, 1000, 1, 1u << 30}});
  TestRuntime t{{sample_device()}, path.string()};
  Runtime& rt = *t.rt;
  float* in = reinterpret_cast<float*>(0x7000'0000'0000);
  float* out = reinterpret_cast<float*>(0x7000'1000'0000);
  std::int32_t* off = reinterpret_cast<std::int32_t*>(0x7000'3000'0000);
  for (const void* p : {static_cast<const void*>(in), static_cast<const void*>(in + 1),
                        static_cast<const void*>(out), static_cast<const void*>(off),
                        static_cast<const void*>(off + 1)})
    t.fake->set_pointer(p, {MemoryKind::device, 0});
  cudaStream_t s = reinterpret_cast<cudaStream_t>(0x77);

  const SegmentedConfig c = rt.lookup_segmented(DType::f32, Op::sum, Segments::rows(1000, 4), 0);
  EXPECT_STREQ(c.kernel_id, "seg.tile.b256.v4.fixed.f32.sum");
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_EQ(c.size_lo, 1u);
  EXPECT_EQ(c.size_hi, 4u);
  EXPECT_EQ(c.count_hi, 1u << 30);
  EXPECT_EQ(std::string(c.source), path.string());
  EXPECT_EQ(std::string(c.tuned_on), sample_device().key());
  EXPECT_DOUBLE_EQ(c.tuned_median_us, 10);

  rt.segmented_reduce(in, out, Segments::rows(1000, 4), DType::f32, Op::sum, s);
  // The tile family needs a 16-byte aligned input: at 4 bytes the rules' kernel runs instead.
  rt.segmented_reduce(in + 1, out, Segments::rows(1000, 4), DType::f32, Op::sum, s);
  // Offsets: by the caller's mean length where the longest is within 4x of it; unknown (0), or
  // lengths that may spread: the rules (the balanced family).
  rt.segmented_reduce(in, out, Segments::offsets(1000, off, off + 1, 16, 64), DType::f32, Op::sum,
                      s);
  rt.segmented_reduce(in, out, Segments::offsets(1000, off, off + 1), DType::f32, Op::sum, s);
  rt.segmented_reduce(in, out, Segments::offsets(1000, off, off + 1, 16), DType::f32, Op::sum, s);
  rt.segmented_reduce(in, out, Segments::offsets(1000, off, off + 1, 16, 65), DType::f32, Op::sum,
                      s);
  const auto l = t.fake->seg_launches();
  ASSERT_EQ(l.size(), 6u);
  EXPECT_EQ(l[4].id, "seg.balanced.b256.v4.offsets32.f32.sum");
  EXPECT_EQ(l[5].id, "seg.balanced.b256.v4.offsets32.f32.sum");
  EXPECT_EQ(l[0].id, "seg.tile.b256.v4.fixed.f32.sum");
  EXPECT_NE(l[1].id.rfind("seg.tile.", 0), 0u) << l[1].id;
  EXPECT_EQ(l[2].id, "seg.group.b256.g4.v4.offsets32.f32.sum");
  std::string rule;
  EXPECT_EQ(l[3].id, seg::make_seg_id(builtin_segmented(DType::f32, Op::sum,
                                                        Segments::offsets(1000, off, off + 1), 256,
                                                        t.fake->devices[0].limits, rule)));
  ASSERT_NE(l[3].id, l[2].id);
  const SegmentedConfig rules =
      rt.lookup_segmented(DType::f32, Op::sum, Segments::offsets(1000, off, off + 1), 0);
  EXPECT_EQ(rules.level, Level::builtin_default);
  EXPECT_EQ(rules.size_hi, 0u);
  EXPECT_EQ(std::string(rules.source).rfind("built-in: ", 0), 0u) << rules.source;
}

TEST(SegmentedTuned, TheSizeQueryAndTheTwoPhaseCallFollowTheTunedKernel) {
  db::test::TempDir dir;
  const auto path = dir / "tune.db";
  // A tuned kernel without a workspace where the rules choose the split family (few long rows).
  add_segmented_rows(path, sample_device(),
                     {{"seg.block.b1024.v4.fixed.f32.sum", 1u << 20, 1u << 24, 1, 8}});
  TestRuntime t{{sample_device()}, path.string()};
  float* in = reinterpret_cast<float*>(0x7000'0000'0000);
  float* out = reinterpret_cast<float*>(0x7000'1000'0000);
  void* temp = reinterpret_cast<void*>(0x7000'2000'0000);
  for (const void* p : {static_cast<const void*>(in), static_cast<const void*>(in + 1),
                        static_cast<const void*>(out), static_cast<const void*>(temp)})
    t.fake->set_pointer(p, {MemoryKind::device, 0});
  const Segments rows = Segments::rows(4, 1 << 22);
  std::string rule;
  ASSERT_EQ(
      builtin_segmented(DType::f32, Op::sum, rows, 256, t.fake->devices[0].limits, rule).family,
      seg::SegFamily::split);
  std::size_t bytes = 0;
  t.rt->segmented_reduce(nullptr, bytes, in, out, rows, DType::f32, Op::sum, nullptr);
  EXPECT_EQ(bytes, 1u);
  t.rt->segmented_reduce(temp, bytes, in, out, rows, DType::f32, Op::sum, nullptr);
  t.rt->segmented_reduce(temp, bytes, in + 1, out, rows, DType::f32, Op::sum, nullptr);
  const auto l = t.fake->seg_launches();
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].id, "seg.block.b1024.v4.fixed.f32.sum");
  EXPECT_EQ(l[1].id, "seg.block.b1024.v4.fixed.f32.sum");
}

}  // namespace
}  // namespace tunedreduce::runtime::test
