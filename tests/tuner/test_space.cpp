// Space enumeration against the registry's manifest.

#include <gtest/gtest.h>

#include <set>

#include "kernels/manifest.hpp"
#include "kernels/space.hpp"
#include "tuner/config.hpp"
#include "tuner/search_space.hpp"

namespace tunedreduce::tuner {
namespace {

TuneConfig from_text(const std::string& text) {
  return validate_config(parse_config_text(text, "t.toml"));
}

TEST(SearchSpace, DefaultCoversTheWholeRegistryButTheExactSums) {
  const auto keys = enumerate_space(default_config().space);
  ASSERT_EQ(keys.size(), 23u);  // 6 types x sum/min/max, and wide_sum of i32, u32, f32, f16, bf16
  std::set<std::string> all;
  for (const KeySpace& k : keys) {
    EXPECT_EQ(k.candidates.size(), kernels::space::configs_per_key(k.dtype, k.op));
    EXPECT_EQ(k.sizes.size(), 21u);
    for (const std::string& id : k.candidates) {
      const auto* e = kernels::manifest_find(id);
      ASSERT_NE(e, nullptr) << id;
      EXPECT_EQ(e->params.dtype, k.dtype);
      EXPECT_EQ(e->params.op, k.op);
      all.insert(id);
    }
  }
  std::size_t exact = 0;
  for (const auto& e : kernels::manifest()) exact += e.params.op == Op::exact_sum;
  EXPECT_EQ(exact, 90u);
  EXPECT_EQ(all.size(), kernels::manifest().size() - exact);
}

TEST(SearchSpace, ExactSumKeysOfFloatTypesOnly) {
  // "all" selects the exact families and exact_sum; the integer types have no exact_sum key.
  const TuneConfig c = from_text(
      "[space]\nfamilies = \"all\"\ndtypes = [\"i32\", \"f32\", \"f64\"]\nops = \"all\"\n"
      "sizes = [1024]\n");
  const auto keys = enumerate_space(c.space);
  // i32 sum/min/max/wide_sum, f32 sum/min/max/exact_sum/wide_sum, f64 sum/min/max/exact_sum
  ASSERT_EQ(keys.size(), 4u + 5 + 4);
  for (const KeySpace& k : keys) {
    EXPECT_TRUE(k.op != Op::exact_sum || k.dtype != DType::i32);
    EXPECT_EQ(k.candidates.size(), kernels::space::configs_per_key(k.dtype, k.op));
    for (const std::string& id : k.candidates) {
      const auto* e = kernels::manifest_find(id);
      ASSERT_NE(e, nullptr) << id;
      EXPECT_EQ(kernels::is_exact_family(e->params.family), k.op == Op::exact_sum) << id;
    }
  }
  // Only exact_sum, one family and a few axes.
  const TuneConfig d = from_text(
      "[space]\nfamilies = [\"exact_wide\", \"smem\"]\nblocks = [256, 1024]\nunrolls = [2]\n"
      "dtypes = [\"f64\", \"u32\"]\nops = [\"exact_sum\"]\nsizes = [4096]\n");
  const auto dk = enumerate_space(d.space);
  ASSERT_EQ(dk.size(), 1u);
  EXPECT_EQ(dk[0].dtype, DType::f64);
  EXPECT_EQ(dk[0].candidates,
            (std::vector<std::string>{"exact_wide.b256.u2.single_pass.f64.exact_sum",
                                      "exact_wide.b256.u2.two_pass.f64.exact_sum"}));
}

TEST(SearchSpace, ExactSumWithIntegerTypesAloneIsAnErrorNamingBoth) {
  try {
    from_text("[space]\ndtypes = [\"i32\", \"u64\"]\nops = [\"sum\", \"exact_sum\"]\n");
    FAIL() << "exact_sum over integer types was accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("operator 'exact_sum' is defined for f32 and f64 only; space.dtypes "
                        "selects i32, u64"),
              std::string::npos)
        << what;
  }
  // An exact family without exact_sum selected is no error: it has nothing to tune there.
  EXPECT_NO_THROW(from_text("[space]\nfamilies = [\"exact\", \"smem\"]\nops = [\"sum\"]\n"));
  // exact_sum with only families that do not implement it selects nothing: an error.
  try {
    from_text("[space]\nfamilies = [\"smem\"]\ndtypes = [\"f32\"]\nops = [\"exact_sum\"]\n");
    FAIL() << "exact_sum without an exact family was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("selects no compiled entry for f32 exact_sum"),
              std::string::npos)
        << e.what();
  }
}

TEST(SearchSpace, WideSumWith64BitTypesAloneOrWithoutItsFamiliesIsAnErrorNamingWhy) {
  try {
    from_text("[space]\ndtypes = [\"i64\", \"f64\"]\nops = [\"wide_sum\"]\n");
    FAIL() << "wide_sum over 64-bit types was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("operator 'wide_sum' is defined for i32, u32, f32, "
                                         "f16 and bf16 only; space.dtypes selects i64, f64"),
              std::string::npos)
        << e.what();
  }
  try {
    from_text(
        "[space]\nfamilies = [\"smem\", \"warp_shuffle\"]\ndtypes = [\"u32\"]\n"
        "ops = [\"wide_sum\"]\n");
    FAIL() << "wide_sum without a 16-byte-load family was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("selects no compiled entry for u32 wide_sum (only the "
                                         "families vectorized, tiled, streaming and single_tile"),
              std::string::npos)
        << e.what();
  }
  // Mixed types: the 64-bit ones have no wide_sum key, the 32-bit ones 140 candidates.
  const auto keys = enumerate_space(
      from_text("[space]\ndtypes = [\"i64\", \"f32\"]\nops = [\"wide_sum\"]\nsizes = [1024]\n")
          .space);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].dtype, DType::f32);
  EXPECT_EQ(keys[0].candidates.size(), 140u);
}

TEST(SearchSpace, CountsMatchAFilterOfTheManifest) {
  const TuneConfig c = validate_config(parse_config_file(TR_TUNER_DATA "/small.toml"));
  using kernels::Family;
  const std::set<Family> families = {Family::smem, Family::warp_shuffle, Family::vectorized,
                                     Family::interleaved};
  for (const KeySpace& k : enumerate_space(c.space)) {
    std::vector<std::string> expected;
    for (const auto& e : kernels::manifest()) {
      const auto& p = e.params;
      if (p.dtype != k.dtype || p.op != k.op || !families.count(p.family)) continue;
      if (p.block != 128 && p.block != 256 && p.block != 512) continue;
      if (p.family != Family::interleaved && p.unroll != 2 && p.unroll != 4 && p.unroll != 8)
        continue;
      if (p.family == Family::smem && p.smem != kernels::SmemMode::dynamic) continue;
      expected.push_back(e.id);
    }
    EXPECT_EQ(k.candidates, expected);
    // smem 3x3x1x2 + warp_shuffle 3x3x2 + vectorized 3x3x2 + interleaved 3x2.
    EXPECT_EQ(k.candidates.size(), 60u);
  }
  EXPECT_EQ(enumerate_space(c.space).size(), 2u);  // f32 and i64, sum
  EXPECT_EQ(total_measurements(enumerate_space(c.space)), 2u * 60 * 8);
}

TEST(SearchSpace, AxesAFamilyLacksAreIgnored) {
  // interleaved has neither unroll nor mode: 5 blocks x 2 finishes.
  auto c = from_text("[space]\nfamilies = [\"interleaved\"]\nunrolls = [8]\nsmem = [\"static\"]\n");
  EXPECT_EQ(candidates_for(c.space, DType::u32, Op::max).size(), 10u);
  // smem static only: 5 blocks x 5 unrolls x 1 mode x 2 finishes.
  c = from_text("[space]\nfamilies = [\"smem\"]\nsmem = [\"static\"]\n");
  const auto ids = candidates_for(c.space, DType::f64, Op::min);
  EXPECT_EQ(ids.size(), 50u);
  for (const auto& id : ids) EXPECT_NE(id.find(".static."), std::string::npos) << id;
  // vectorized compiles unroll 1..8: unrolls [8, 16] keeps 8 for it, 16 for unroll.
  c = from_text(
      "[space]\nfamilies = [\"vectorized\", \"unroll\"]\nunrolls = [8, 16]\n"
      "finishes = [\"single_pass\"]\nblocks = [256]\n");
  EXPECT_EQ(candidates_for(c.space, DType::i32, Op::sum),
            (std::vector<std::string>{"unroll.b256.u16.single_pass.i32.sum",
                                      "unroll.b256.u8.single_pass.i32.sum",
                                      "vectorized.b256.u8.single_pass.i32.sum"}));
}

TEST(SearchSpace, KeysFollowTheConfigurationsOrder) {
  auto c = from_text("[space]\ndtypes = [\"f64\", \"i32\"]\nops = [\"max\", \"sum\"]\n");
  const auto keys = enumerate_space(c.space);
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[0].dtype, DType::f64);
  EXPECT_EQ(keys[0].op, Op::max);
  EXPECT_EQ(keys[1].op, Op::sum);
  EXPECT_EQ(keys[3].dtype, DType::i32);
}

TEST(SearchSpace, ASingleTileEntryIsACandidateOnlyUpToItsTile) {
  const auto keys = enumerate_space(default_config().space);
  const KeySpace* f32 = nullptr;
  for (const KeySpace& k : keys)
    if (k.dtype == DType::f32 && k.op == Op::sum) f32 = &k;
  ASSERT_NE(f32, nullptr);
  auto tiles_at = [&](std::uint64_t n) {
    std::set<std::string> out;
    for (const std::string& id : f32->candidates_at(n))
      if (id.rfind("single_tile.", 0) == 0) out.insert(id);
    return out;
  };
  // f32: 4 elements per vector; blocks 64..1024 x unroll 1..8 = tiles of 256 .. 32768.
  EXPECT_EQ(tiles_at(256).size(), 20u);
  EXPECT_EQ(tiles_at(4096).size(), 10u);  // block x unroll >= 1024: 1 + 2 + 3 + 4
  EXPECT_TRUE(tiles_at(4096).count("single_tile.b256.u4.single_pass.f32.sum"));
  EXPECT_FALSE(tiles_at(4097).count("single_tile.b256.u4.single_pass.f32.sum"));
  EXPECT_EQ(tiles_at(32768), (std::set<std::string>{"single_tile.b1024.u8.single_pass.f32.sum"}));
  EXPECT_TRUE(tiles_at(32769).empty());
  const std::size_t others = f32->candidates.size() - 20;
  EXPECT_EQ(f32->candidates_at(std::uint64_t{1} << 30).size(), others);
  EXPECT_EQ(f32->count_at(4096), others + 10);
  EXPECT_TRUE(takes("single_tile.b64.u1.single_pass.f64.max", 128));
  EXPECT_FALSE(takes("single_tile.b64.u1.single_pass.f64.max", 129));
  EXPECT_FALSE(takes("no.such.kernel", 1));
  // The default grid 2^10..2^30: a single_tile entry is counted at the sizes it takes only.
  std::size_t expected = 0;
  for (const KeySpace& k : keys)
    for (std::uint64_t n : k.sizes) expected += k.candidates_at(n).size();
  EXPECT_EQ(total_measurements(keys), expected);
  EXPECT_LT(expected, kernels::manifest().size() * 21);
}

}  // namespace
}  // namespace tunedreduce::tuner
