// The registry without a GPU: completeness, ids, can_implement and workspace rules.

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "exact/first_pass.hpp"
#include "exact/occupancy.hpp"
#include "exact/sum.hpp"
#include "kernels/exact_geometry.hpp"
#include "kernels/geometry.hpp"
#include "kernels/manifest.hpp"
#include "kernels/registry.hpp"
#include "kernels/space.hpp"
#include "kernels/workspace_facts.hpp"

namespace tunedreduce::kernels {
namespace {

DeviceLimits h100() {
  DeviceLimits d;  // the defaults describe an H100
  return d;
}

TEST(Registry, HasEveryFamilyTypeAndOperator) {
  std::map<std::tuple<Family, DType, Op>, int> count;
  for (const Entry& e : registry()) ++count[{e.params.family, e.params.dtype, e.params.op}];
  for (Family f : all_families)
    for (DType d : all_dtypes)
      for (Op o : all_ops)
        if (space::family_applies(f, d, o))
          EXPECT_GT((count[{f, d, o}]), 0)
              << family_name(f) << " " << dtype_name(d) << " " << op_name(o);
        else
          EXPECT_EQ((count[{f, d, o}]), 0)
              << family_name(f) << " " << dtype_name(d) << " " << op_name(o);
  std::size_t expected = 0;
  for (DType d : all_dtypes)
    for (Op o : all_ops) expected += space::configs_per_key(d, o);
  EXPECT_EQ(registry().size(), expected);
}

TEST(Registry, PackedFinishOnlyForThe32BitIntegerSumsOfTheVectorFamilies) {
  std::map<std::pair<DType, Op>, int> packed;
  for (const Entry& e : registry()) {
    const auto& p = e.params;
    if (p.finish != Finish::packed) continue;
    ++packed[{p.dtype, p.op}];
    EXPECT_TRUE(p.family == Family::vectorized || p.family == Family::tiled ||
                p.family == Family::streaming)
        << e.id;
  }
  for (DType d : all_dtypes)
    for (Op o : all_ops)
      if (packed_finish_applies(d, o))
        EXPECT_EQ((packed[{d, o}]), 3 * 5 * 4)
            << dtype_name(d) << " " << op_name(o);  // 3 families x 5 blocks x 4 unrolls
      else EXPECT_EQ((packed[{d, o}]), 0) << dtype_name(d) << " " << op_name(o);
  EXPECT_TRUE(find("tiled.b256.u2.packed.i32.sum"));
  EXPECT_FALSE(find("tiled.b256.u2.packed.f32.sum"));
  EXPECT_FALSE(find("smem.b256.u2.static.packed.i32.sum"));
}

TEST(Registry, IdsAreUniqueSortedAndRoundTrip) {
  std::set<std::string> seen;
  std::string prev;
  for (const Entry& e : registry()) {
    ASSERT_NE(e.id, nullptr);
    EXPECT_TRUE(seen.insert(e.id).second) << "duplicate id " << e.id;
    EXPECT_LT(prev, e.id);
    prev = e.id;
    EXPECT_EQ(make_id(e.params), e.id);
    auto parsed = parse_id(e.id);
    ASSERT_TRUE(parsed) << e.id;
    EXPECT_EQ(*parsed, e.params) << e.id;
    EXPECT_EQ(find(e.id), &e);
    EXPECT_EQ(find(e.params), &e);
  }
}

TEST(Manifest, MatchesTheCompiledRegistry) {
  ASSERT_EQ(manifest().size(), registry().size());
  for (std::size_t i = 0; i < manifest().size(); ++i) {
    EXPECT_EQ(manifest()[i].id, registry()[i].id);
    EXPECT_EQ(manifest()[i].params, registry()[i].params);
    EXPECT_EQ(manifest_find(registry()[i].id), &manifest()[i]);
  }
  EXPECT_EQ(manifest_find("smem.b96.u8.static.single_pass.f32.sum"), nullptr);
}

TEST(Registry, IdsMatchTheCheckedInList) {
  // Ids are stable: the database and users' scripts name kernels by them. Changing the space
  // (kernels/space.hpp) must come with an update of tests/data/registry_ids.txt.
  std::ifstream in(TR_TEST_DATA_DIR "/registry_ids.txt");
  ASSERT_TRUE(in) << "cannot read " TR_TEST_DATA_DIR "/registry_ids.txt";
  std::vector<std::string> golden;
  for (std::string line; std::getline(in, line);) golden.push_back(line);
  ASSERT_EQ(golden.size(), registry().size());
  for (std::size_t i = 0; i < golden.size(); ++i) EXPECT_EQ(golden[i], registry()[i].id);
}

TEST(Registry, ExampleIdsFromTheDesign) {
  EXPECT_NE(find("smem.b256.u8.dynamic.single_pass.f32.sum"), nullptr);
  EXPECT_NE(find("interleaved.b128.two_pass.i32.min"), nullptr);
  EXPECT_NE(find("vectorized.b512.u4.single_pass.u64.max"), nullptr);
  EXPECT_EQ(find("interleaved.b128.u2.two_pass.i32.min"), nullptr);    // no unroll for interleaved
  EXPECT_EQ(find("unroll.b128.u2.static.two_pass.i32.min"), nullptr);  // no smem mode there
  EXPECT_EQ(find("smem.b256.u8.none.single_pass.f32.sum"), nullptr);
  EXPECT_EQ(find("smem.b96.u8.static.single_pass.f32.sum"), nullptr);
}

TEST(Registry, ManifestHashIsStableAndPrintable) {
  const std::string& h = manifest_hash();
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h, manifest_hash());
  std::ifstream in(TR_TEST_DATA_DIR "/registry_manifest.txt");
  std::string golden;
  std::getline(in, golden);
  EXPECT_EQ(h, golden) << "update tests/data/registry_manifest.txt together with the kernel "
                          "revision or the space";
}

TEST(Registry, MeaninglessCombinationsAreNotCompiled) {
  for (const Entry& e : registry()) {
    const auto& p = e.params;
    if (p.family == Family::neighbored || p.family == Family::neighbored_less ||
        p.family == Family::interleaved)
      EXPECT_EQ(p.unroll, 1) << e.id;
    else
      EXPECT_GE(p.unroll, p.family == Family::smem || p.family == Family::warp_shuffle ||
                                  p.family == Family::vectorized || p.family == Family::tiled ||
                                  p.family == Family::streaming ||
                                  p.family == Family::single_tile || is_exact_family(p.family)
                              ? 1
                              : 2)
          << e.id;
    EXPECT_LE(p.unroll, 16) << e.id;
    EXPECT_EQ(p.smem != SmemMode::none, p.family == Family::smem) << e.id;
    EXPECT_GE(p.block, 64);
    EXPECT_LE(p.block, 1024);
    EXPECT_EQ(p.block % 32, 0);
  }
}

TEST(ParseId, RejectsMalformedIds) {
  for (const char* bad :
       {"", "smem", "smem.b256.u8.dynamic.single_pass.f32",
        "smem.b256.u8.dynamic.single_pass.float.sum", "smem.b0256.u8.dynamic.single_pass.f32.sum",
        "smem.b256.u8.dynamic.single_pass.f32.sum.x", "smem.b256.u-8.dynamic.single_pass.f32.sum",
        "nope.b256.two_pass.f32.sum", "smem.b256.u8.dynamic.three_pass.f32.sum",
        "interleaved.b128.two_pass.i32.avg"})
    EXPECT_FALSE(parse_id(bad)) << bad;
}

TEST(CanImplement, FollowsItsRules) {
  const DeviceLimits dev = h100();
  const Entry* f32 = find("warp_shuffle.b256.u4.single_pass.f32.sum");
  const Entry* f64 = find("warp_shuffle.b256.u4.single_pass.f64.sum");
  ASSERT_TRUE(f32 && f64);
  EXPECT_FALSE(f32->can_implement(1000, 4, dev));
  EXPECT_FALSE(f32->can_implement(1000, 256, dev));
  EXPECT_FALSE(f32->can_implement(0, 4, dev));
  EXPECT_TRUE(f32->can_implement(1000, 2, dev));  // not element-aligned
  EXPECT_TRUE(f64->can_implement(1000, 4, dev));  // 8-byte elements need 8
  EXPECT_FALSE(f64->can_implement(1000, 8, dev));
  EXPECT_TRUE(f32->can_implement(max_elements + 1, 4, dev));
  EXPECT_FALSE(f32->can_implement(max_elements, 4, dev));

  DeviceLimits old = dev;
  old.cc_major = 7;
  old.cc_minor = 0;
  auto why = f32->can_implement(1000, 4, old);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("7.0"), std::string::npos) << *why;

  DeviceLimits small = dev;
  small.max_threads_per_block = 512;
  EXPECT_TRUE(find("interleaved.b1024.two_pass.i32.sum")->can_implement(1000, 4, small));
  EXPECT_FALSE(find("interleaved.b512.two_pass.i32.sum")->can_implement(1000, 4, small));

  DeviceLimits tiny_smem = dev;
  tiny_smem.smem_per_block = 4096;  // b1024 x 8 bytes = 8 KiB does not fit; b256 x 8 = 2 KiB does
  EXPECT_TRUE(find("smem.b1024.u4.static.two_pass.f64.sum")->can_implement(1000, 8, tiny_smem));
  EXPECT_TRUE(find("smem.b1024.u4.dynamic.two_pass.f64.sum")->can_implement(1000, 8, tiny_smem));
  EXPECT_FALSE(find("smem.b256.u4.dynamic.two_pass.f64.sum")->can_implement(1000, 8, tiny_smem));
  EXPECT_FALSE(find("warp_shuffle.b1024.u4.two_pass.f64.sum")->can_implement(1000, 8, tiny_smem));
}

TEST(SingleTile, TakesOneTileWithOneFinishAndRefusesMoreByName) {
  const DeviceLimits dev = h100();
  std::size_t count = 0;
  for (const Entry& e : registry()) {
    const auto& p = e.params;
    if (p.family != Family::single_tile) continue;
    ++count;
    EXPECT_EQ(p.finish, Finish::single_pass) << e.id;
    const std::uint64_t tile = std::uint64_t(p.block) * p.unroll * (16 / dtype_size(p.dtype));
    EXPECT_EQ(max_elements_of(p), tile) << e.id;
    EXPECT_FALSE(e.can_implement(tile, dtype_size(p.dtype), dev)) << e.id;
    EXPECT_EQ(e.grid_size(tile, dev), 1u) << e.id;
    EXPECT_GT(e.workspace_bytes(tile, dev), 0u) << e.id;
    const auto why = e.can_implement(tile + 1, 256, dev);
    ASSERT_TRUE(why) << e.id;
    EXPECT_NE(why->find("exceeds the single tile of this kernel (" + std::to_string(tile) +
                        " elements: " + std::to_string(p.block) + " threads x " +
                        std::to_string(p.unroll) + " 16-byte vectors)"),
              std::string::npos)
        << *why;
    EXPECT_EQ(e.workspace_bytes(tile + 1, dev), 0u) << e.id;
    LaunchArgs a;
    a.n = tile + 1;
    a.in = reinterpret_cast<void*>(0x2000);
    a.out = reinterpret_cast<void*>(0x1000);
    a.workspace = reinterpret_cast<void*>(0x3000);
    a.workspace_bytes = 1 << 20;
    EXPECT_EQ(e.launch(a, dev), cudaErrorInvalidValue) << e.id;  // nothing enqueued
  }
  // 5 blocks x 4 unrolls x (6 types x 5 operators (sum, min, max, argmin, argmax) + wide_sum of
  // 5 types + absmax of 4).
  EXPECT_EQ(count, 780u);
  // argmin's tile counts input elements, as min's (its 16-byte IndexedValue is the accumulator).
  EXPECT_EQ(max_elements_of(find("single_tile.b256.u4.single_pass.i64.argmin")->params), 2048u);
  EXPECT_EQ(max_elements_of(find("single_tile.b1024.u8.single_pass.u32.argmax")->params), 32768u);
  // A half type's tile: 8 elements a 16-byte vector.
  EXPECT_EQ(max_elements_of(find("single_tile.b256.u4.single_pass.f16.wide_sum")->params), 8192u);
  EXPECT_EQ(max_elements_of(find("single_tile.b256.u4.single_pass.f32.sum")->params), 4096u);
  EXPECT_EQ(max_elements_of(find("single_tile.b256.u4.single_pass.f64.min")->params), 2048u);
  EXPECT_EQ(max_elements_of(find("tiled.b256.u4.single_pass.f32.sum")->params), max_elements);
  EXPECT_EQ(find("single_tile.b256.u4.two_pass.f32.sum"), nullptr);
  EXPECT_EQ(find("single_tile.b256.u4.packed.i32.sum"), nullptr);
}

TEST(Workspace, SizesFollowTheLayout) {
  const DeviceLimits dev = h100();
  for (const Entry& e : registry()) {
    const auto& p = e.params;
    if (is_exact_family(p.family)) continue;  // exact_sum's own layout: ExactFamilies below
    EXPECT_EQ(e.workspace_bytes(0, dev), 0u) << e.id;
    EXPECT_EQ(e.grid_size(0, dev), 0u) << e.id;
    std::size_t prev = 0;
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 20,
                            std::uint64_t{1} << 31, max_elements}) {
      const std::uint64_t grid = e.grid_size(n, dev);
      const std::size_t ws = e.workspace_bytes(n, dev);
      if (n > max_elements_of(p)) {  // past a single_tile entry's tile: nothing to lay out
        EXPECT_EQ(p.family, Family::single_tile) << e.id;
        EXPECT_EQ(ws, 0u) << e.id << " n=" << n;
        continue;
      }
      ASSERT_GE(grid, 1u) << e.id;
      EXPECT_LE(grid, 65536u) << e.id;
      EXPECT_GE(ws, prev) << e.id << " n=" << n;  // never shrinks as n grows
      prev = ws;
      EXPECT_EQ(ws % 256, 0u) << e.id;
      // The accumulator's size: the element's, twice it for wide_sum, an IndexedValue (16
      // bytes) for argmin and argmax.
      const std::size_t elem = is_arg_op(p.op) ? 16 : dtype_size(result_dtype(p.dtype, p.op));
      // Completion counter + the partials: one T per block (two_pass), one flagged slot of
      // 8 bytes per 4 of T (or part of them: 2 * sizeof(T), 8 for a two-byte T) per block
      // (single_pass), none (packed).
      const std::size_t per_block = p.finish == Finish::two_pass      ? elem
                                    : p.finish == Finish::single_pass ? 8 * ((elem + 3) / 4)
                                                                      : 0;
      std::size_t need = 256 + grid * per_block;
      if (is_global_memory_family(p.family)) need += grid * p.block * elem;  // the in-place copy
      EXPECT_GE(ws, need) << e.id << " n=" << n;
      EXPECT_LT(ws, need + 3 * 256) << e.id << " n=" << n;  // only alignment padding on top
      // The seeds' families take one block per chunk up to 65536 blocks, tiled and streaming
      // up to 65535 (as does every packed entry); the persistent ones at most what is resident
      // on the device at once.
      const bool vec = p.family == Family::vectorized || p.family == Family::tiled ||
                       p.family == Family::streaming;
      const std::uint64_t chunk =
          std::uint64_t(p.block) * p.unroll * (vec ? 16 / dtype_size(p.dtype) : 1);  // inputs
      const std::uint64_t chunks = (n + chunk - 1) / chunk;
      if (p.family == Family::warp_shuffle || p.family == Family::vectorized) {
        const std::uint64_t resident =
            std::uint64_t(dev.sm_count) *
            std::min(dev.max_blocks_per_sm, dev.max_threads_per_sm / p.block);
        EXPECT_LE(grid, std::min(chunks, resident)) << e.id << " n=" << n;
      } else if (p.family == Family::tiled || p.family == Family::streaming) {
        EXPECT_EQ(grid, std::min<std::uint64_t>(chunks, 65535)) << e.id << " n=" << n;
      } else if (p.family == Family::single_tile) {
        EXPECT_EQ(grid, 1u) << e.id << " n=" << n;
      } else {
        EXPECT_EQ(grid, std::min<std::uint64_t>(chunks, 65536)) << e.id << " n=" << n;
      }
    }
  }
}

TEST(Launch, RejectsBadArgumentsWithoutTouchingTheGpu) {
  const DeviceLimits dev = h100();
  const Entry* e = find("smem.b256.u8.dynamic.single_pass.f32.sum");
  ASSERT_TRUE(e);
  LaunchArgs a;
  a.n = 1000;
  a.in = nullptr;
  a.out = reinterpret_cast<void*>(0x1000);
  EXPECT_EQ(e->launch(a, dev), cudaErrorInvalidValue);  // null input
  a.in = reinterpret_cast<void*>(0x2000);
  a.workspace = reinterpret_cast<void*>(0x3000);
  a.workspace_bytes = e->workspace_bytes(1000, dev) - 1;
  EXPECT_EQ(e->launch(a, dev), cudaErrorInvalidValue);  // workspace too small
  a.n = max_elements + 1;
  a.workspace_bytes = 1 << 30;
  EXPECT_EQ(e->launch(a, dev), cudaErrorInvalidValue);  // too large
}

// The workspace facts the library reads from the registry (runtime/runtime.cpp): only the exact
// sums leave their slots written, and only they take the library's own counter for it.
TEST(Registry, WorkspaceFactsOfEveryEntry) {
  for (const Entry& e : registry()) {
    EXPECT_EQ(leaves_workspace_clean(e.params), e.params.op != Op::exact_sum) << e.id;
    EXPECT_EQ(takes_library_counter(e.params), e.params.op == Op::exact_sum) << e.id;
  }
}

TEST(ExactFamilies, ImplementExactSumForTheFloatingTypesAndNothingElse) {
  std::map<std::pair<Family, DType>, int> count;
  for (const Entry& e : registry()) {
    const auto& p = e.params;
    EXPECT_EQ(is_exact_family(p.family), p.op == Op::exact_sum) << e.id;
    if (!is_exact_family(p.family)) continue;
    ++count[{p.family, p.dtype}];
    EXPECT_TRUE(p.block == 128 || p.block == 256 || p.block == 512) << e.id;
    EXPECT_TRUE(p.unroll == 1 || p.unroll == 2 || p.unroll == 4) << e.id;
    EXPECT_TRUE(p.finish == Finish::two_pass || p.finish == Finish::single_pass) << e.id;
    EXPECT_EQ(p.smem, SmemMode::none) << e.id;
    EXPECT_TRUE(p.dtype == DType::f32 || p.dtype == DType::f64 || is_half(p.dtype)) << e.id;
  }
  // 3 blocks x 3 unrolls x 2 finishes per family and type; exact_registers (chunks in
  // registers: a float accumulator) is not double's.
  EXPECT_EQ((count[{Family::exact, DType::f32}]), 18);
  EXPECT_EQ((count[{Family::exact, DType::f64}]), 18);
  EXPECT_EQ((count[{Family::exact_wide, DType::f32}]), 18);
  EXPECT_EQ((count[{Family::exact_wide, DType::f64}]), 18);
  EXPECT_EQ((count[{Family::exact_registers, DType::f32}]), 18);
  EXPECT_EQ((count[{Family::exact_registers, DType::f64}]), 0);
  for (DType d : {DType::f16, DType::bf16})
    for (Family f : {Family::exact, Family::exact_wide, Family::exact_registers})
      EXPECT_EQ((count[{f, d}]), 18) << family_name(f) << " " << dtype_name(d);
  for (DType d : all_dtypes)
    EXPECT_EQ(space::configs_per_key(d, Op::exact_sum), d == DType::f32   ? 54u
                                                        : d == DType::f64 ? 36u
                                                        : is_half(d)      ? 54u
                                                                          : 0u)
        << dtype_name(d);
  EXPECT_NE(find("exact_registers.b512.u4.single_pass.f16.exact_sum"), nullptr);
  EXPECT_NE(find("exact_wide.b128.u1.two_pass.bf16.exact_sum"), nullptr);

  EXPECT_NE(find("exact.b512.u2.single_pass.f32.exact_sum"), nullptr);
  EXPECT_NE(find("exact_wide.b128.u4.two_pass.f64.exact_sum"), nullptr);
  EXPECT_NE(find("exact_registers.b256.u1.single_pass.f32.exact_sum"), nullptr);
  // Well-formed ids of combinations that do not exist.
  EXPECT_TRUE(parse_id("exact.b512.u2.single_pass.i32.exact_sum"));
  EXPECT_EQ(find("exact.b512.u2.single_pass.i32.exact_sum"), nullptr);  // integers: no exact sum
  EXPECT_EQ(find("exact_registers.b256.u1.single_pass.f64.exact_sum"), nullptr);  // float only
  EXPECT_EQ(find("exact.b1024.u2.single_pass.f32.exact_sum"), nullptr);           // 128..512 only
  EXPECT_EQ(find("exact.b512.u8.single_pass.f32.exact_sum"), nullptr);            // unroll 1, 2, 4
  EXPECT_EQ(find("exact.b512.u2.packed.f32.exact_sum"), nullptr);            // no packed finish
  EXPECT_EQ(find("exact.b512.u2.single_pass.f32.sum"), nullptr);             // exact_sum only
  EXPECT_EQ(find("vectorized.b512.u2.single_pass.f32.exact_sum"), nullptr);  // exact only
  EXPECT_EQ(find("single_tile.b256.u2.single_pass.f32.exact_sum"), nullptr);
  EXPECT_FALSE(parse_id("exact.b512.single_pass.f32.exact_sum"));  // the unroll part is required
}

TEST(WideSums, TheSixteenByteLoadFamiliesOfTheThirtyTwoBitAndHalfTypesAndNothingElse) {
  std::map<std::pair<Family, DType>, int> count;
  for (const Entry& e : registry()) {
    const auto& p = e.params;
    if (p.op != Op::wide_sum) continue;
    ++count[{p.family, p.dtype}];
    EXPECT_TRUE(p.finish == Finish::two_pass || p.finish == Finish::single_pass) << e.id;
  }
  for (DType d : all_dtypes) {
    const bool thirty_two = d == DType::i32 || d == DType::u32 || d == DType::f32 ||
                            d == DType::f16 || d == DType::bf16;
    // vectorized, tiled, streaming: 5 blocks x 4 unrolls x 2 finishes; single_tile: 1 finish.
    EXPECT_EQ((count[{Family::vectorized, d}]), thirty_two ? 40 : 0) << dtype_name(d);
    EXPECT_EQ((count[{Family::tiled, d}]), thirty_two ? 40 : 0) << dtype_name(d);
    EXPECT_EQ((count[{Family::streaming, d}]), thirty_two ? 40 : 0) << dtype_name(d);
    EXPECT_EQ((count[{Family::single_tile, d}]), thirty_two ? 20 : 0) << dtype_name(d);
    EXPECT_EQ(space::configs_per_key(d, Op::wide_sum), thirty_two ? 140u : 0u) << dtype_name(d);
    // result_dtype is meaningful where op_applies (types.hpp): the 32-bit and half types.
    if (thirty_two) {
      EXPECT_EQ(result_dtype(d, Op::wide_sum), d == DType::i32   ? DType::i64
                                               : d == DType::u32 ? DType::u64
                                               : is_half(d)      ? DType::f32
                                                                 : DType::f64)
          << dtype_name(d);
    }
  }
  EXPECT_NE(find("streaming.b512.u8.two_pass.i32.wide_sum"), nullptr);
  EXPECT_NE(find("single_tile.b256.u4.single_pass.f32.wide_sum"), nullptr);
  EXPECT_NE(find("tiled.b1024.u8.two_pass.bf16.wide_sum"), nullptr);
  EXPECT_EQ(find("tiled.b1024.u8.two_pass.bf16.sum"), nullptr);  // the half types: wide_sum alone
  EXPECT_EQ(find("smem.b256.u4.static.single_pass.f16.min"), nullptr);
  EXPECT_EQ(find("streaming.b512.u8.packed.i32.wide_sum"), nullptr);  // no room for 64 bits
  EXPECT_EQ(find("warp_shuffle.b256.u4.single_pass.i32.wide_sum"), nullptr);
  EXPECT_EQ(find("vectorized.b256.u4.single_pass.i64.wide_sum"), nullptr);
  // The partials are in the accumulator's size: a single_pass slot of a wide sum is 16 bytes,
  // where the 32-bit sum's is 8; the tile (max_elements_of) counts 4-byte input elements.
  const KernelParams wide = *parse_id("vectorized.b256.u4.single_pass.i32.wide_sum");
  const KernelParams narrow = *parse_id("vectorized.b256.u4.single_pass.i32.sum");
  EXPECT_EQ(geometry::partial_bytes(wide), 16u);
  EXPECT_EQ(geometry::partial_bytes(narrow), 8u);
  EXPECT_EQ(geometry::chunk_elements(wide), geometry::chunk_elements(narrow));
  EXPECT_EQ(max_elements_of(*parse_id("single_tile.b256.u4.single_pass.f32.wide_sum")), 4096u);
}

TEST(Absmax, TheSixteenByteLoadFamiliesOfTheFloatingPointTypes) {
  std::map<std::tuple<Family, DType>, int> count;
  for (const Entry& e : registry())
    if (e.params.op == Op::absmax) {
      ++count[{e.params.family, e.params.dtype}];
      EXPECT_NE(e.params.finish, Finish::packed) << e.id;
      // The single_pass slot of a two-byte result is one 8-byte word, like a four-byte one's.
      if (e.params.finish == Finish::single_pass) {
        EXPECT_EQ(geometry::partial_bytes(e.params), e.params.dtype == DType::f64 ? 16u : 8u)
            << e.id;
      }
    }
  std::size_t total = 0;
  for (DType d : all_dtypes)
    for (Family f : all_families) {
      const bool fp = d == DType::f32 || d == DType::f64 || is_half(d);
      // vectorized, tiled, streaming: 5 blocks x 4 unrolls x 2 finishes; single_tile: 1 finish.
      const int want = !fp                        ? 0
                       : f == Family::vectorized  ? 40
                       : f == Family::tiled       ? 40
                       : f == Family::streaming   ? 40
                       : f == Family::single_tile ? 20
                                                  : 0;
      EXPECT_EQ((count[{f, d}]), want) << family_name(f) << " " << dtype_name(d);
      total += static_cast<std::size_t>(count[{f, d}]);
    }
  EXPECT_EQ(total, 560u);  // 4 keys
  EXPECT_NE(find("vectorized.b256.u4.single_pass.f16.absmax"), nullptr);
  EXPECT_NE(find("single_tile.b1024.u8.single_pass.bf16.absmax"), nullptr);
  EXPECT_EQ(find("warp_shuffle.b256.u4.single_pass.f32.absmax"), nullptr);
  EXPECT_EQ(find("vectorized.b256.u4.single_pass.i32.absmax"), nullptr);
  // A single_tile kernel of halves covers 8 elements a 16-byte vector.
  const Entry* st = find("single_tile.b128.u2.single_pass.f16.absmax");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(geometry::chunk_elements(st->params), 2048u);
}

TEST(ArgOps, TheVectorizedStreamingAndSingleTileFamiliesOfTheFourAndEightByteTypes) {
  std::map<std::tuple<Family, DType, Op>, int> count;
  for (const Entry& e : registry()) {
    const auto& p = e.params;
    if (!is_arg_op(p.op)) continue;
    ++count[{p.family, p.dtype, p.op}];
    EXPECT_TRUE(p.finish == Finish::two_pass || p.finish == Finish::single_pass) << e.id;
    EXPECT_EQ(p.smem, SmemMode::none) << e.id;
  }
  std::size_t total = 0;
  for (Op o : {Op::argmin, Op::argmax})
    for (DType d : all_dtypes) {
      const bool applies = !is_half(d);
      // vectorized, streaming: 5 blocks x 4 unrolls x 2 finishes; single_tile: 1 finish.
      for (Family f : all_families) {
        const int want = !applies                   ? 0
                         : f == Family::vectorized  ? 40
                         : f == Family::streaming   ? 40
                         : f == Family::single_tile ? 20
                                                    : 0;
        EXPECT_EQ((count[{f, d, o}]), want)
            << family_name(f) << " " << dtype_name(d) << " " << op_name(o);
        total += static_cast<std::size_t>(count[{f, d, o}]);
      }
      EXPECT_EQ(space::configs_per_key(d, o), applies ? 100u : 0u)
          << dtype_name(d) << " " << op_name(o);
    }
  EXPECT_EQ(total, 1200u);  // 12 keys
  EXPECT_NE(find("vectorized.b256.u4.single_pass.f32.argmin"), nullptr);
  EXPECT_NE(find("streaming.b1024.u8.two_pass.u64.argmax"), nullptr);
  EXPECT_NE(find("single_tile.b64.u1.single_pass.i32.argmin"), nullptr);
  EXPECT_EQ(find("tiled.b256.u4.two_pass.f32.argmin"), nullptr);  // not tiled
  EXPECT_EQ(find("smem.b256.u4.static.single_pass.i32.argmax"), nullptr);
  EXPECT_EQ(find("streaming.b256.u4.packed.i32.argmin"), nullptr);  // no packed finish
  EXPECT_EQ(find("vectorized.b256.u4.single_pass.f16.argmin"), nullptr);
  EXPECT_EQ(find("vectorized.b256.u4.single_pass.bf16.argmax"), nullptr);
  const auto parsed = parse_id("streaming.b1024.u8.two_pass.u64.argmax");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->op, Op::argmax);
  EXPECT_EQ(parsed->dtype, DType::u64);
  EXPECT_EQ(make_id(*parsed), "streaming.b1024.u8.two_pass.u64.argmax");
  // The partials hold IndexedValues: a two_pass partial is 16 bytes, a single_pass slot 32, for
  // 4- and 8-byte types alike; a chunk counts input elements, as min's does.
  for (const char* t : {"i32", "f64"}) {
    const std::string suffix = std::string(".") + t;
    const KernelParams two = *parse_id("vectorized.b256.u4.two_pass" + suffix + ".argmin");
    const KernelParams one = *parse_id("vectorized.b256.u4.single_pass" + suffix + ".argmax");
    const KernelParams min = *parse_id("vectorized.b256.u4.single_pass" + suffix + ".min");
    EXPECT_EQ(geometry::accumulator_bytes(two), 16u) << t;
    EXPECT_EQ(geometry::partial_bytes(two), 16u) << t;
    EXPECT_EQ(geometry::partial_bytes(one), 32u) << t;
    EXPECT_EQ(geometry::chunk_elements(one), geometry::chunk_elements(min)) << t;
  }
}

TEST(ExactFamilies, GridAndWorkspaceFollowExactSumsLayout) {
  const DeviceLimits dev = h100();
  for (const Entry& e : registry()) {
    const auto& p = e.params;
    if (!is_exact_family(p.family)) continue;
    EXPECT_EQ(max_elements_of(p), max_elements - 1) << e.id;
    EXPECT_EQ(e.workspace_bytes(0, dev), 0u) << e.id;
    EXPECT_EQ(e.grid_size(0, dev), 0u) << e.id;
    const std::uint64_t vector = 16 / dtype_size(p.dtype);
    // chunks + flags: a float accumulator's (f32 and the half types) or a double's
    const std::size_t slot = (p.dtype == DType::f64 ? 66 + 1 : 11 + 1) * 8;
    std::size_t prev = 0;
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 20,
                            std::uint64_t{1} << 31, max_elements - 1}) {
      const std::uint64_t grid = e.grid_size(n, dev);
      ASSERT_GE(grid, 1u) << e.id;
      // At most what is resident at once (no GPU here: the thread limit's estimate), two
      // blocks a multiprocessor while a thread of that grid would make fewer than 16 rounds of
      // block × unroll loads, and at most one block per round of loads.
      const std::uint64_t per_sm =
          std::min(dev.max_blocks_per_sm, dev.max_threads_per_sm / p.block);
      const std::uint64_t resident = std::uint64_t(dev.sm_count) * per_sm;
      const std::uint64_t per_round = std::uint64_t(p.block) * std::uint64_t(p.unroll);
      const std::uint64_t vectors = n / vector;
      const std::uint64_t cap = per_sm > 2 && vectors < 16 * resident * per_round
                                    ? std::uint64_t(dev.sm_count) * 2
                                    : resident;
      const std::uint64_t loads = (vectors + per_round - 1) / per_round;
      EXPECT_EQ(grid, std::max<std::uint64_t>(1, std::min(cap, loads))) << e.id << " n=" << n;
      const std::size_t ws = e.workspace_bytes(n, dev);
      // The ticket and accumulator's 1024 bytes, then two_pass's slots (none for one block).
      const bool slots = p.finish == Finish::two_pass && grid > 1;
      EXPECT_EQ(ws, 1024 + (slots ? grid * slot : 0)) << e.id << " n=" << n;
      EXPECT_GE(ws, prev) << e.id;
      prev = ws;
      EXPECT_FALSE(e.can_implement(n, dtype_size(p.dtype), dev)) << e.id;
    }
    EXPECT_EQ(e.workspace_bytes(max_elements, dev), 0u) << e.id;
    const auto why = e.can_implement(max_elements, 256, dev);
    ASSERT_TRUE(why) << e.id;
    EXPECT_NE(why->find("exceeds the limit of " + std::to_string(max_elements - 1)),
              std::string::npos)
        << *why;
    EXPECT_TRUE(e.can_implement(1000, dtype_size(p.dtype) / 2, dev))
        << e.id;  // not element-aligned
  }
}

TEST(ExactFamilies, LaunchRejectsBadArgumentsWithoutTouchingTheGpu) {
  const DeviceLimits dev = h100();
  for (const char* id :
       {"exact.b256.u2.single_pass.f32.exact_sum", "exact_wide.b512.u4.two_pass.f64.exact_sum"}) {
    const Entry* e = find(id);
    ASSERT_TRUE(e) << id;
    LaunchArgs a;
    a.n = 1000;
    a.out = reinterpret_cast<void*>(0x1000);
    a.workspace = reinterpret_cast<void*>(0x3000);
    a.workspace_bytes = 1 << 20;
    EXPECT_EQ(e->launch(a, dev), cudaErrorInvalidValue) << id;  // null input
    a.in = reinterpret_cast<void*>(0x2000);
    a.workspace = nullptr;
    EXPECT_EQ(e->launch(a, dev), cudaErrorInvalidValue) << id;  // no workspace
    a.workspace = reinterpret_cast<void*>(0x3000);
    a.workspace_bytes = e->workspace_bytes(1000, dev) - 1;
    EXPECT_EQ(e->launch(a, dev), cudaErrorInvalidValue) << id;  // workspace too small
    a.n = max_elements;
    a.workspace_bytes = 1 << 30;
    EXPECT_EQ(e->launch(a, dev), cudaErrorInvalidValue) << id;  // too large
  }
}

TEST(ExactFirstPasses, AFullBuildHasEveryKnobCombinationOnceAndTheRegistryLaunchesThem) {
  using exact::detail::compiled_first_passes;
  using exact::detail::find_first_pass;
  // 3 blocks x 3 unrolls x (float: 3 vectors x 2 expansions x 2 residences; double: 2 x 2 x 1;
  // f16 and bf16 each 1 x 2 x 2).
  const auto all = compiled_first_passes();
  EXPECT_EQ(all.size(), 3u * 3u * (3u * 2u * 2u + 2u * 2u * 1u + 2u * (1u * 2u * 2u)));
  std::set<std::tuple<DType, int, int, int, int, bool>> seen;
  for (const exact::detail::FirstPass& f : all) {
    EXPECT_TRUE(
        seen.insert({f.dtype, f.block_threads, f.vector, f.unroll, f.expansion, f.registers})
            .second)
        << "twice: " << f.block_threads << " " << f.vector << " " << f.unroll;
    EXPECT_TRUE(f.launch != nullptr && f.resident_blocks != nullptr);
    EXPECT_EQ(find_first_pass(f.dtype, f.block_threads, f.vector, f.unroll, f.expansion,
                              f.registers),
              &f);
  }
  for (DType dtype : all_dtypes) {
    for (int block : {128, 256, 512}) {
      for (int vector : {1, 2, 4, 8}) {
        for (int unroll : {1, 2, 4}) {
          for (int expansion : {1, 2, 3}) {
            for (bool registers : {false, true}) {
              bool exists = false;
              if (dtype == DType::f64) exists = vector <= 2 && expansion >= 2 && !registers;
              else if (dtype == DType::f32) exists = vector <= 4 && expansion <= 2;
              else if (is_half(dtype)) exists = vector == 8 && expansion <= 2;
              EXPECT_EQ(find_first_pass(dtype, block, vector, unroll, expansion, registers) !=
                            nullptr,
                        exists)
                  << dtype_name(dtype) << " " << block << " " << vector << " " << unroll << " "
                  << expansion << " " << registers;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(find_first_pass(DType::f32, 64, 4, 2, 2, true), nullptr);
  EXPECT_EQ(find_first_pass(DType::f32, 512, 8, 2, 2, true), nullptr);
  EXPECT_EQ(find_first_pass(DType::f16, 512, 4, 2, 1, true), nullptr);
  EXPECT_EQ(find_first_pass(DType::f32, 512, 4, 3, 2, true), nullptr);
  EXPECT_EQ(find_first_pass(DType::f32, 512, 4, 2, -1, true), nullptr);
  EXPECT_EQ(find_first_pass(DType::f64, 512, 2, 2, 0, false), nullptr);
  // Every exact entry of the space is in the registry, and its first pass is compiled.
  std::size_t entries = 0;
  for (const Entry& e : registry()) {
    if (!is_exact_family(e.params.family)) continue;
    ++entries;
    EXPECT_TRUE(exact::has_first_pass(e.params.dtype, exact_geometry::launch_config(e.params)))
        << e.id;
  }
  EXPECT_EQ(entries, 90u + 2u * 54u);
  exact::ExactLaunch bad;
  bad.unroll = 3;
  EXPECT_FALSE(exact::has_first_pass(DType::f32, bad));
  bad.unroll = 2;
  bad.chunks = exact::ExactChunks::registers;
  EXPECT_TRUE(exact::has_first_pass(DType::f32, bad));
  EXPECT_TRUE(exact::has_first_pass(DType::bf16, bad));
  EXPECT_FALSE(exact::has_first_pass(DType::f64, bad));  // double: local chunks only
  EXPECT_FALSE(exact::has_first_pass(DType::i32, bad));  // no exact sum of integers
  bad.vector = 4;
  EXPECT_FALSE(exact::has_first_pass(DType::f16, bad));  // halves: 16-byte loads only
}

}  // namespace
}  // namespace tunedreduce::kernels
