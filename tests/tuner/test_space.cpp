// Space enumeration against the registry's manifest.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

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
  // 6 types x sum/min/max/argmin/argmax, wide_sum of i32, u32, f32, f16, bf16, and absmax of
  // f32, f64, f16, bf16
  ASSERT_EQ(keys.size(), 39u);
  std::set<std::string> all;
  std::size_t arg_keys = 0;
  for (const KeySpace& k : keys) {
    if (is_arg_op(k.op)) {
      ++arg_keys;
      EXPECT_FALSE(is_half(k.dtype)) << dtype_name(k.dtype) << " " << op_name(k.op);
      EXPECT_EQ(k.candidates.size(), 100u) << dtype_name(k.dtype) << " " << op_name(k.op);
    }
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
  EXPECT_EQ(arg_keys, 12u);  // 6 types x argmin, argmax
  std::size_t exact = 0, arg = 0;
  for (const auto& e : kernels::manifest()) {
    exact += e.params.op == Op::exact_sum;
    arg += is_arg_op(e.params.op);
  }
  // 3 blocks x 3 unrolls x 2 finishes of exact, exact_wide, exact_registers for f32, f16 and
  // bf16, of the first two for f64.
  EXPECT_EQ(exact, 3 * 54u + 36u);
  EXPECT_EQ(arg, 1200u);  // 12 keys x 100
  EXPECT_EQ(all.size(), kernels::manifest().size() - exact);
}

TEST(SearchSpace, ExactSumKeysOfFloatTypesOnly) {
  // "all" selects the exact families and exact_sum; the integer types have no exact_sum key.
  const TuneConfig c = from_text(
      "[space]\nfamilies = \"all\"\ndtypes = [\"i32\", \"f32\", \"f64\"]\nops = \"all\"\n"
      "sizes = [1024]\n");
  const auto keys = enumerate_space(c.space);
  // i32 sum/min/max/wide_sum, f32 sum/min/max/exact_sum/wide_sum, f64 sum/min/max/exact_sum;
  // argmin and argmax of each; absmax of f32 and f64
  ASSERT_EQ(keys.size(), 4u + 5 + 4 + 3 * 2 + 2);
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
    EXPECT_NE(what.find("operator 'exact_sum' is defined for f32, f64, f16 and bf16 only; "
                        "space.dtypes selects i32, u64"),
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

TEST(SearchSpace, ArgminAndArgmaxKeysOfTheFourAndEightByteTypes) {
  // Asked for by name: a key of 100 candidates (vectorized and streaming: 5 blocks x 4 unrolls x
  // 2 finishes; single_tile: one finish) for each type; ids end in .argmin / .argmax.
  const auto keys = enumerate_space(
      from_text("[space]\ndtypes = [\"i32\", \"f64\"]\nops = [\"argmin\", \"argmax\"]\n"
                "sizes = [1024, 1048576]\n")
          .space);
  ASSERT_EQ(keys.size(), 4u);
  const std::pair<DType, Op> expected[] = {{DType::i32, Op::argmin},
                                           {DType::i32, Op::argmax},
                                           {DType::f64, Op::argmin},
                                           {DType::f64, Op::argmax}};
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const KeySpace& k = keys[i];
    EXPECT_EQ(k.dtype, expected[i].first);
    EXPECT_EQ(k.op, expected[i].second);
    ASSERT_EQ(k.candidates.size(), 100u) << dtype_name(k.dtype) << " " << op_name(k.op);
    EXPECT_EQ(k.candidates.size(), kernels::space::configs_per_key(k.dtype, k.op));
    std::map<kernels::Family, std::size_t> per_family;
    for (const std::string& id : k.candidates) {
      const auto* e = kernels::manifest_find(id);
      ASSERT_NE(e, nullptr) << id;
      EXPECT_EQ(e->params.dtype, k.dtype) << id;
      EXPECT_EQ(e->params.op, k.op) << id;
      EXPECT_TRUE(id.ends_with(std::string(".") + dtype_name(k.dtype) + "." + op_name(k.op))) << id;
      ++per_family[e->params.family];
    }
    EXPECT_EQ(per_family.size(), 3u);
    EXPECT_EQ(per_family[kernels::Family::vectorized], 40u);
    EXPECT_EQ(per_family[kernels::Family::streaming], 40u);
    EXPECT_EQ(per_family[kernels::Family::single_tile], 20u);
    // single_tile takes one tile of block x unroll x (16 / element bytes) elements: at 2^10
    // the i32 keys lose the 3 tiles smaller than that (b64 u1, u2; b128 u1), the f64 keys 6 (b64
    // u1, u2, u4; b128 u1, u2; b256 u1); at 2^20 every single_tile entry (at most 32768).
    EXPECT_EQ(k.count_at(1024), k.dtype == DType::i32 ? 97u : 94u);
    EXPECT_EQ(k.count_at(1048576), 80u);
  }
  EXPECT_EQ(total_measurements(keys), 2u * (97 + 80) + 2u * (94 + 80));
  EXPECT_NE(std::find(keys[0].candidates.begin(), keys[0].candidates.end(),
                      "streaming.b256.u4.two_pass.i32.argmin"),
            keys[0].candidates.end());
  // Every type and operator ("all"): 12 argument-reduction keys, none of f16 or bf16.
  const auto all = enumerate_space(
      from_text("[space]\nfamilies = \"all\"\nops = \"all\"\nsizes = [1024]\n").space);
  std::size_t arg_keys = 0, arg_candidates = 0;
  for (const KeySpace& k : all) {
    if (!is_arg_op(k.op)) continue;
    ++arg_keys;
    arg_candidates += k.candidates.size();
    EXPECT_FALSE(is_half(k.dtype)) << dtype_name(k.dtype) << " " << op_name(k.op);
  }
  EXPECT_EQ(arg_keys, 12u);
  EXPECT_EQ(arg_candidates, 1200u);
  // With other operators and families: min over smem and vectorized, argmin over vectorized.
  const auto mixed =
      enumerate_space(from_text("[space]\nfamilies = [\"smem\", \"vectorized\"]\nblocks = [256]\n"
                                "unrolls = [4]\ndtypes = [\"u64\"]\nops = [\"min\", \"argmin\"]\n"
                                "finishes = [\"two_pass\"]\nsizes = [4096]\n")
                          .space);
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_EQ(mixed[0].candidates, (std::vector<std::string>{"smem.b256.u4.dynamic.two_pass.u64.min",
                                                           "smem.b256.u4.static.two_pass.u64.min",
                                                           "vectorized.b256.u4.two_pass.u64.min"}));
  EXPECT_EQ(mixed[1].candidates,
            (std::vector<std::string>{"vectorized.b256.u4.two_pass.u64.argmin"}));
}

TEST(SearchSpace, ArgminWithHalfTypesAloneOrWithoutItsFamiliesIsAnErrorNamingWhy) {
  try {
    from_text("[space]\ndtypes = [\"f16\"]\nops = [\"argmin\"]\n");
    FAIL() << "argmin over f16 was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("operator 'argmin' is defined for i32, u32, i64, u64, "
                                         "f32 and f64 only; space.dtypes selects f16"),
              std::string::npos)
        << e.what();
  }
  // Both half types and both operators: one line each.
  try {
    from_text("[space]\ndtypes = [\"bf16\", \"half\"]\nops = [\"argmax\", \"argmin\"]\n");
    FAIL() << "argmin and argmax over the half types were accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("operator 'argmax' is defined for i32, u32, i64, u64, f32 and f64 only; "
                        "space.dtypes selects bf16, f16"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("operator 'argmin' is defined for i32, u32, i64, u64, f32 and f64 only; "
                        "space.dtypes selects bf16, f16"),
              std::string::npos)
        << what;
  }
  // Families none of which implements argmax (tiled has min and max, not argmin and argmax).
  try {
    from_text(
        "[space]\nfamilies = [\"smem\", \"tiled\"]\ndtypes = [\"i64\"]\n"
        "ops = [\"argmax\"]\n");
    FAIL() << "argmax without vectorized, streaming or single_tile was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("selects no compiled entry for i64 argmax (only the "
                                         "families vectorized, streaming and single_tile "
                                         "implement it, with finishes two_pass and single_pass)"),
              std::string::npos)
        << e.what();
  }
  // Only the packed finish: argmin has none (it is the 32-bit integer sums').
  try {
    from_text(
        "[space]\nfamilies = [\"vectorized\", \"streaming\"]\ndtypes = [\"u32\"]\n"
        "ops = [\"argmin\"]\nfinishes = [\"packed\"]\n");
    FAIL() << "argmin with only the packed finish was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("selects no compiled entry for u32 argmin (only the "
                                         "families vectorized, streaming and single_tile"),
              std::string::npos)
        << e.what();
  }
  // Mixed types: the half types have no argmin key, f32 has 100 candidates.
  const auto keys = enumerate_space(
      from_text("[space]\ndtypes = [\"f16\", \"f32\"]\nops = [\"argmin\"]\nsizes = [1024]\n")
          .space);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].dtype, DType::f32);
  EXPECT_EQ(keys[0].op, Op::argmin);
  EXPECT_EQ(keys[0].candidates.size(), 100u);
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
