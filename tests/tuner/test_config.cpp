// tune.toml: parsing, every validation case (with its message and exit code), overrides, the
// default file.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/exit_codes.hpp"
#include "db/database.hpp"
#include "tuner/config.hpp"
#include "tuner/search_space.hpp"

namespace tunedreduce::tuner {
namespace {

const std::string data_dir = TR_TUNER_DATA;

std::string fixture(const std::string& name) { return data_dir + "/" + name; }

// Loads a fixture expecting a usage error; returns its message.
std::string error_of(const std::string& name, const ConfigOverrides& o = {},
                     const ValidationLimits& limits = {}) {
  try {
    load_config(fixture(name), o, limits);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << name << " was accepted";
  return {};
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(ConfigSyntax, MalformedTomlNamesFileLineColumn) {
  const std::string e = error_of("malformed.toml");
  EXPECT_HAS(e, fixture("malformed.toml") + ":1:");
  EXPECT_HAS(e, "syntax error: ");
}

TEST(ConfigSyntax, UnknownKeySuggestsTheNearest) {
  const std::string e = error_of("unknown_key.toml");
  EXPECT_EQ(e, fixture("unknown_key.toml") +
                   ":2:1: space.blokcs: unknown key 'blokcs' in [space] (did you mean 'blocks'?)");
}

TEST(ConfigSyntax, UnknownTableSuggestsTheNearest) {
  const std::string e = error_of("unknown_table.toml");
  EXPECT_HAS(e, fixture("unknown_table.toml") + ":1:2: measurement: unknown key 'measurement'");
  EXPECT_HAS(e, "(did you mean 'measure'?)");
}

TEST(ConfigSyntax, UnknownKeyInsideARange) {
  const std::string e = error_of("unknown_range_key.toml");
  EXPECT_HAS(e,
             ":2:35: space.sizes.stpe: unknown key 'stpe' in [space.sizes] (did you mean 'step'?)");
}

TEST(ConfigSyntax, UnknownKeyWithNothingNearListsTheValidOnes) {
  try {
    parse_config_text("[bisect]\nzzzzzzzz = 1\n", "t.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.toml:2:1: bisect.zzzzzzzz: unknown key 'zzzzzzzz' in [bisect] (valid keys: "
              "enabled, max_depth, precision)");
  }
}

// toml++ 3.3.0 meets undefined behaviour on many non-ASCII characters (found by tests/fuzz,
// regression inputs in tests/fuzz/regressions/toml/): a non-ASCII character outside a comment is
// refused first, with its position (every key and value of a tune.toml is ASCII); in comments
// they are allowed (and blanked before toml++ reads the text).
TEST(ConfigSyntax, NonAsciiOutsideCommentsIsASyntaxErrorWithItsPosition) {
  auto syntax_error = [](const std::string& text) -> std::string {
    try {
      parse_config_text(text, "t.toml");
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), exit_code::usage);
      return e.what();
    }
    return "accepted";
  };
  const std::string what =
      "syntax error: a non-ASCII character outside a comment (every key and value of a tune.toml "
      "is an ASCII name or number)";
  EXPECT_EQ(syntax_error("[\xc8\xa5p]\n"), "t.toml:1:2: " + what);  // a table name
  EXPECT_EQ(syntax_error("[space]\nbl\xc3\xb6"
                         "cks = [64]\n"),
            "t.toml:2:3: " + what);  // a key
  EXPECT_EQ(syntax_error("[space]\nfamilies = [\xc3\xa9]\n"), "t.toml:2:13: " + what);
  EXPECT_EQ(syntax_error("a = 1 \xe3\x80\x81\n"), "t.toml:1:7: " + what);  // CJK comma
  // After a malformed value, where toml++ scans ahead (the fuzzer's second finding).
  EXPECT_EQ(syntax_error("blocks = [64\"0___\x01::\xc4\xa7X\n"), "t.toml:1:21: " + what);
  // Inside strings of every kind, too: no name of a tune.toml has one.
  EXPECT_EQ(syntax_error("[space]\nfamilies = [\"sm\\\"\xc3\xa9\"]\n"), "t.toml:2:18: " + what);
  EXPECT_EQ(syntax_error("[space]\nfamilies = ['x\xc3\xa9']\n"), "t.toml:2:15: " + what);
  EXPECT_EQ(syntax_error("[space]\nfamilies = [\"\"\"\n\xc3\xa9\"\"\"]\n"), "t.toml:3:1: " + what);
  // In comments, anywhere: accepted, and a '#' inside a string starts no comment.
  EXPECT_EQ(syntax_error("# caf\xc3\xa9 \xe3\x80\x81 \xc8\xa5\n[space] # \xc3\xa9\n"
                         "families = [\"smem\"] # \xc8\xa5\n"),
            "accepted");
  EXPECT_EQ(syntax_error("[space]\nfamilies = [\"sm#\xc3\xa9\"]\n"), "t.toml:2:17: " + what);
}

TEST(ConfigTypes, WrongScalarType) {
  EXPECT_EQ(error_of("wrong_type.toml"),
            fixture("wrong_type.toml") +
                ":2:10: measure.warmup: expected an integer, got a string");
}

TEST(ConfigTypes, WrongElementType) {
  EXPECT_EQ(error_of("wrong_type_element.toml"),
            fixture("wrong_type_element.toml") +
                ":2:15: space.blocks[1]: expected an integer, got a string");
}

TEST(ConfigTypes, TableExpected) {
  EXPECT_EQ(error_of("wrong_type_table.toml"),
            fixture("wrong_type_table.toml") + ":1:9: space: expected a table, got an integer");
}

TEST(ConfigTypes, ListGivenAsOtherString) {
  try {
    parse_config_text("[space]\nfamilies = \"smem\"\n", "t.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_HAS(std::string(e.what()),
               "t.toml:2:12: space.families: expected an array of strings (or \"all\"), got the "
               "string 'smem'");
  }
}

TEST(ConfigTypes, NumberAcceptsIntegersRejectsInfinity) {
  auto c = validate_config(parse_config_text("[measure]\nbudget_ms = 100\n", "t.toml"));
  EXPECT_EQ(c.measure.budget_ms, 100);
  try {
    parse_config_text("[measure]\nbudget_ms = inf\n", "t.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_HAS(std::string(e.what()), "t.toml:2:13: measure.budget_ms: expected a finite number");
  }
}

TEST(ConfigSpace, EmptyFamilies) {
  EXPECT_EQ(error_of("empty_families.toml"),
            fixture("empty_families.toml") + ":2:12: space.families: is empty: nothing to tune");
}

TEST(ConfigSpace, EmptySizes) {
  EXPECT_EQ(error_of("empty_sizes.toml"),
            fixture("empty_sizes.toml") + ":2:9: space.sizes: is empty: nothing to tune");
}

TEST(ConfigSpace, Block96IsNotCompiled) {
  EXPECT_EQ(error_of("block_96.toml"),
            fixture("block_96.toml") +
                ":2:15: space.blocks[1]: block size 96 is not in the registry (compiled block "
                "sizes: 64, 128, 256, 512, 1024)");
}

TEST(ConfigSpace, Block2048IsAboveCudasLimit) {
  EXPECT_EQ(error_of("block_2048.toml"),
            fixture("block_2048.toml") +
                ":2:11: space.blocks[0]: block size 2048 is above 1024, the most threads a CUDA "
                "block can have");
}

TEST(ConfigSpace, Block100IsNotAWarpMultiple) {
  EXPECT_HAS(error_of("block_100.toml"),
             ":2:11: space.blocks[0]: block size 100 is not a multiple of 32 (the warp size)");
}

TEST(ConfigSpace, BlockAboveTheDeviceLimit) {
  ConfigOverrides o;
  o.blocks = "256,1024";
  EXPECT_EQ(error_of("small.toml", o, ValidationLimits{512}),
            "--blocks: block size 1024 is above this device's limit of 512 threads");
}

TEST(ConfigSpace, UnrollZero) {
  EXPECT_EQ(error_of("unroll_0.toml"),
            fixture("unroll_0.toml") +
                ":2:12: space.unrolls[0]: unroll factor 0 must be at least 1");
}

TEST(ConfigSpace, UnrollThreeIsNotCompiled) {
  EXPECT_EQ(error_of("unroll_3.toml"),
            fixture("unroll_3.toml") +
                ":2:12: space.unrolls[0]: unroll 3 is not in the registry for any family "
                "(compiled unroll factors: 1, 2, 4, 8, 16)");
}

TEST(ConfigSpace, UnrollNotCompiledForTheSelectedFamilies) {
  EXPECT_EQ(error_of("unroll_16_vectorized.toml"),
            fixture("unroll_16_vectorized.toml") +
                ":3:15: space.unrolls[1]: unroll 16 is not in the registry for the selected "
                "families with an unroll factor (vectorized: 1, 2, 4, 8)");
}

TEST(ConfigSpace, FamilyLeftWithoutEntries) {
  EXPECT_EQ(error_of("family_without_entries.toml"),
            fixture("family_without_entries.toml") +
                ":2:13: space.families[0]: family 'unroll' has no compiled entry with the "
                "selected axes (it compiles unroll 2, 4, 8, 16; space.unrolls selects 1)");
}

// The exact families compile three block sizes: the message says which, from the space's table.
TEST(ConfigSpace, ExactFamilyLeftWithoutEntriesNamesItsBlocks) {
  try {
    validate_config(parse_config_text(
        "[space]\nfamilies = [\"exact\"]\nblocks = [1024]\nops = [\"exact_sum\"]\n", "t.toml"));
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_HAS(std::string(e.what()),
               "t.toml:2:13: space.families[0]: family 'exact' has no compiled entry with the "
               "selected axes (it compiles blocks 128, 256, 512 and unroll 1, 2, 4)");
  }
}

TEST(ConfigSpace, UnknownFamily) {
  EXPECT_EQ(error_of("unknown_family.toml"),
            fixture("unknown_family.toml") +
                ":2:21: space.families[1]: unknown family 'smemm' (did you mean 'smem'?); "
                "choices: neighbored, neighbored_less, interleaved, unroll, unroll_warps, "
                "complete_unroll, smem, warp_shuffle, vectorized, tiled, streaming, single_tile, "
                "exact, exact_wide, exact_registers");
}

TEST(ConfigSpace, SingleTileHasOnlyTheSinglePassFinish) {
  EXPECT_EQ(error_of("single_tile_two_pass.toml"),
            fixture("single_tile_two_pass.toml") +
                ":2:13: space.families[0]: family 'single_tile' has no compiled entry with the "
                "selected axes (its one block has nothing to finish: it compiles finish "
                "single_pass only)");
}

TEST(ConfigSpace, UnrollIgnoredForFamiliesWithoutOne) {
  // interleaved has no unroll factor: unrolls does not filter it, and does not make it empty.
  auto c = validate_config(
      parse_config_text("[space]\nfamilies = [\"interleaved\", \"unroll\"]\nunrolls = [8]\n",
                        "t.toml"));
  EXPECT_EQ(c.space.unrolls, std::vector<int>{8});
}

// argmin and argmax (the first extreme element and its index) are defined for the 4- and 8-byte
// types; the half types have wide_sum alone.
TEST(ConfigSpace, ArgminAndArgmaxForTheFourAndEightByteTypes) {
  const TuneConfig c = validate_config(parse_config_text(
      "[space]\ndtypes = [\"i32\", \"float64\"]\nops = [\"argmin\", \"argmax\"]\n", "t.toml"));
  EXPECT_EQ(c.space.dtypes, (std::vector<DType>{DType::i32, DType::f64}));
  EXPECT_EQ(c.space.ops, (std::vector<Op>{Op::argmin, Op::argmax}));
  EXPECT_HAS(canonical_text(c), "space.ops=argmin,argmax\n");
  EXPECT_NE(config_hash(c), config_hash(default_config()));
  // With the other operators, and "all".
  const TuneConfig d = validate_config(
      parse_config_text("[space]\ndtypes = [\"u64\"]\nops = [\"max\", \"argmax\", \"sum\"]\n",
                        "t.toml"));
  EXPECT_EQ(d.space.ops, (std::vector<Op>{Op::max, Op::argmax, Op::sum}));
  const TuneConfig all =
      validate_config(parse_config_text("[space]\nfamilies = \"all\"\nops = \"all\"\n", "t.toml"));
  EXPECT_EQ(all.space.ops, std::vector<Op>(std::begin(all_ops), std::end(all_ops)));
  // In the default, as in the repository's tune.toml: every operator but exact_sum.
  std::vector<Op> all_but_exact;
  for (Op o : all_ops)
    if (o != Op::exact_sum) all_but_exact.push_back(o);
  EXPECT_EQ(default_config().space.ops, all_but_exact);
}

TEST(ConfigSpace, ArgminOfAHalfTypeIsAnErrorNamingTheTypesItIsDefinedFor) {
  auto message = [](const std::string& text) {
    try {
      validate_config(parse_config_text(text, "t.toml"));
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), exit_code::usage);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("[space]\ndtypes = [\"f16\"]\nops = [\"argmin\"]\n"),
            "t.toml:3:7: space.ops: operator 'argmin' is defined for i32, u32, i64, u64, f32 and "
            "f64 only; space.dtypes selects f16");
  EXPECT_EQ(message("[space]\ndtypes = [\"bf16\"]\nops = [\"wide_sum\", \"argmax\"]\n"),
            "t.toml:3:7: space.ops: operator 'argmax' is defined for i32, u32, i64, u64, f32 and "
            "f64 only; space.dtypes selects bf16");
  // A misspelt operator: the nearest name and every choice.
  EXPECT_EQ(message("[space]\nops = [\"argmn\"]\n"),
            "t.toml:2:8: space.ops[0]: unknown operator 'argmn' (did you mean 'argmin'?); "
            "choices: sum, min, max, exact_sum, wide_sum, argmin, argmax, absmax");
  // With a type it is defined for, the half type's key is left out: no error.
  EXPECT_EQ(message("[space]\ndtypes = [\"f16\", \"i32\"]\nops = [\"argmin\"]\n"), "accepted");
}

// exact_sum of the half types (f16, bf16 bits in, a float out): a tune.toml that asks for it is
// accepted and selects every entry of the three exact families for each half type.
TEST(ConfigSpace, ExactSumOfTheHalfTypesSelectsTheExactFamiliesEntries) {
  const TuneConfig c = validate_config(
      parse_config_text("[space]\nfamilies = [\"exact\", \"exact_wide\", \"exact_registers\"]\n"
                        "blocks = [128, 256, 512]\nunrolls = [1, 2, 4]\nfinishes = [\"two_pass\", "
                        "\"single_pass\"]\ndtypes = [\"half\", \"bf16\"]\nops = [\"exact_sum\"]\n"
                        "sizes = [1024, 1048576]\n",
                        "t.toml"));
  EXPECT_EQ(c.space.dtypes, (std::vector<DType>{DType::f16, DType::bf16}));
  EXPECT_EQ(c.space.ops, std::vector<Op>{Op::exact_sum});
  EXPECT_HAS(canonical_text(c), "space.dtypes=f16,bf16\n");
  const auto keys = enumerate_space(c.space);
  ASSERT_EQ(keys.size(), 2u);
  for (const KeySpace& k : keys) {
    SCOPED_TRACE(dtype_name(k.dtype));
    EXPECT_EQ(k.op, Op::exact_sum);
    EXPECT_EQ(k.sizes, (std::vector<std::uint64_t>{1024, 1048576}));
    // 3 families x blocks 128, 256, 512 x unrolls 1, 2, 4 x 2 finishes.
    EXPECT_EQ(k.candidates.size(), 54u);
    std::set<kernels::Family> families;
    for (const std::string& id : k.candidates) {
      const auto p = kernels::parse_id(id);
      ASSERT_TRUE(p) << id;
      EXPECT_TRUE(kernels::is_exact_family(p->family)) << id;
      EXPECT_EQ(p->dtype, k.dtype) << id;
      EXPECT_EQ(p->op, Op::exact_sum) << id;
      families.insert(p->family);
    }
    EXPECT_EQ(families,
              (std::set<kernels::Family>{kernels::Family::exact, kernels::Family::exact_wide,
                                         kernels::Family::exact_registers}));
  }
  EXPECT_EQ(keys[0].dtype, DType::f16);
  EXPECT_EQ(keys[1].dtype, DType::bf16);
  EXPECT_NE(std::find(keys[1].candidates.begin(), keys[1].candidates.end(),
                      "exact.b256.u2.two_pass.bf16.exact_sum"),
            keys[1].candidates.end());

  // With f32, f64 and an integer type: four exact keys (f64 has no exact_registers entry), the
  // integer type none; "all" families and ops add the half types' wide_sum keys, nothing else.
  const TuneConfig all = validate_config(parse_config_text(
      "[space]\nfamilies = \"all\"\ndtypes = [\"i32\", \"f32\", \"f64\", \"f16\", "
      "\"bfloat16\"]\nops = \"all\"\n",
      "t.toml"));
  std::map<std::pair<DType, Op>, std::size_t> candidates;
  for (const KeySpace& k : enumerate_space(all.space))
    candidates[{k.dtype, k.op}] = k.candidates.size();
  EXPECT_EQ(candidates.at({DType::f32, Op::exact_sum}), 54u);
  EXPECT_EQ(candidates.at({DType::f64, Op::exact_sum}), 36u);
  EXPECT_EQ(candidates.at({DType::f16, Op::exact_sum}), 54u);
  EXPECT_EQ(candidates.at({DType::bf16, Op::exact_sum}), 54u);
  EXPECT_EQ(candidates.count({DType::i32, Op::exact_sum}), 0u);
  for (DType h : {DType::f16, DType::bf16}) {
    std::size_t keys_of_h = 0;
    for (const auto& [key, count] : candidates) keys_of_h += key.first == h;
    EXPECT_EQ(keys_of_h, 3u) << dtype_name(h);  // exact_sum, wide_sum and absmax
  }

  // From the command line, over a file without exact_sum: the flags' dtypes and ops.
  ConfigOverrides o;
  o.families = "exact_wide";
  o.blocks = "256";
  o.unrolls = "2";
  o.dtypes = "f16,bf16";
  o.ops = "exact_sum";
  const TuneConfig flags = load_config(fixture("small.toml"), o);
  const auto flag_keys = enumerate_space(flags.space);
  ASSERT_EQ(flag_keys.size(), 2u);
  EXPECT_EQ(flag_keys[0].candidates,
            (std::vector<std::string>{"exact_wide.b256.u2.single_pass.f16.exact_sum",
                                      "exact_wide.b256.u2.two_pass.f16.exact_sum"}));
  EXPECT_EQ(flag_keys[1].candidates,
            (std::vector<std::string>{"exact_wide.b256.u2.single_pass.bf16.exact_sum",
                                      "exact_wide.b256.u2.two_pass.bf16.exact_sum"}));
}

TEST(ConfigSpace, ExactSumOfAHalfTypeWithoutAnExactFamilyIsAnErrorNamingTheFamilies) {
  try {
    validate_config(
        parse_config_text("[space]\nfamilies = [\"smem\", \"vectorized\"]\ndtypes = [\"bf16\"]\n"
                          "ops = [\"exact_sum\"]\n",
                          "t.toml"));
    ADD_FAILURE() << "bf16 exact_sum without an exact family was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_HAS(std::string(e.what()),
               "selects no compiled entry for bf16 exact_sum (only the families exact, exact_wide "
               "and exact_registers implement it, with blocks 128, 256, 512, unroll 1, 2, 4 and "
               "finishes two_pass, single_pass)");
  }
  // f64's entries: exact_registers has none (its chunks fit registers for a float accumulator).
  try {
    validate_config(
        parse_config_text("[space]\nfamilies = [\"exact_registers\"]\ndtypes = [\"f64\", \"f16\"]\n"
                          "ops = [\"exact_sum\"]\n",
                          "t.toml"));
    ADD_FAILURE() << "f64 exact_sum with exact_registers alone was accepted";
  } catch (const Error& e) {
    EXPECT_HAS(std::string(e.what()),
               "selects no compiled entry for f64 exact_sum (only the families exact and "
               "exact_wide implement it");
  }
}

TEST(ConfigOverrides, OpsArgminAndArgmax) {
  ConfigOverrides o;
  o.ops = "argmin, argmax";
  o.dtypes = "i32";
  const TuneConfig c = load_config(fixture("small.toml"), o);
  EXPECT_EQ(c.space.ops, (std::vector<Op>{Op::argmin, Op::argmax}));
  // small.toml's families: of smem, warp_shuffle, vectorized and interleaved only vectorized
  // implements them (blocks 128, 256, 512 x unrolls 2, 4, 8 x two finishes).
  const auto keys = enumerate_space(c.space);
  ASSERT_EQ(keys.size(), 2u);
  for (const KeySpace& k : keys) EXPECT_EQ(k.candidates.size(), 18u) << op_name(k.op);
  o.dtypes = "f16,bf16";
  o.ops = "argmax";
  try {
    load_config(fixture("small.toml"), o);
    ADD_FAILURE() << "--ops argmax --dtypes f16,bf16 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_EQ(std::string(e.what()),
              "--ops: operator 'argmax' is defined for i32, u32, i64, u64, f32 and f64 only; "
              "space.dtypes selects f16, bf16");
  }
}

TEST(ConfigSizes, RangeStepZeroDoesNotAdvance) {
  EXPECT_EQ(
      error_of("range_step_0.toml"),
      fixture("range_step_0.toml") +
          ":2:42: space.sizes.step: step 0 does not advance the range (it must be at least 1)");
}

TEST(ConfigSizes, RangeFactorOneDoesNotAdvance) {
  EXPECT_EQ(error_of("range_factor_1.toml"),
            fixture("range_factor_1.toml") +
                ":2:44: space.sizes.factor: factor 1 does not advance the range (it must be "
                "greater than 1)");
}

TEST(ConfigSizes, RangeFromAboveTo) {
  EXPECT_EQ(error_of("range_from_above_to.toml"),
            fixture("range_from_above_to.toml") +
                ":2:9: space.sizes: from (4096) is greater than to (1024)");
}

TEST(ConfigSizes, RangeWithTooManySizes) {
  EXPECT_HAS(error_of("range_too_many.toml"),
             "space.sizes: the range gives more than 4096 sizes; use a larger step or factor");
}

TEST(ConfigSizes, RangeNeedsStepOrFactor) {
  EXPECT_HAS(error_of("range_without_step.toml"),
             ":2:9: space.sizes: a range needs 'step' (additive) or 'factor' (geometric)");
}

TEST(ConfigSizes, SizesOutOfRange) {
  const std::string e = error_of("size_out_of_range.toml");
  EXPECT_HAS(e, ":2:10: space.sizes[0]: size 0 is below 1");
  EXPECT_HAS(e,
             ":2:19: space.sizes[2]: size 2199023255552 is above 2^40 = 1099511627776, the "
             "largest n a kernel accepts");
}

TEST(ConfigSizes, ListIsSortedAndDeduplicated) {
  auto c = validate_config(parse_config_text("[space]\nsizes = [4096, 1024, 4096, 7]\n", "t.toml"));
  EXPECT_EQ(c.space.sizes, (std::vector<std::uint64_t>{7, 1024, 4096}));
}

TEST(ConfigSizes, GeometricAndAdditiveRanges) {
  EXPECT_EQ(expand_range(1024, 16384, std::nullopt, 2.0),
            (std::vector<std::uint64_t>{1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(expand_range(1000, 1300, 100, std::nullopt),
            (std::vector<std::uint64_t>{1000, 1100, 1200, 1300}));
  // `to` is included only when reached; a factor near 1 still advances by at least 1.
  EXPECT_EQ(expand_range(10, 25, 10, std::nullopt), (std::vector<std::uint64_t>{10, 20}));
  EXPECT_EQ(expand_range(1, 4, std::nullopt, 1.1), (std::vector<std::uint64_t>{1, 2, 3, 4}));
  const auto sqrt2 = expand_range(1024, 4096, std::nullopt, std::sqrt(2.0));
  EXPECT_EQ(sqrt2, (std::vector<std::uint64_t>{1024, 1448, 2048, 2896, 4096}));
  const auto big = expand_range(1, std::uint64_t{1} << 40, std::nullopt, 2.0);
  EXPECT_EQ(big.size(), 41u);
  EXPECT_EQ(big.back(), std::uint64_t{1} << 40);
}

TEST(ConfigMeasure, NegativeRepeats) {
  EXPECT_EQ(error_of("negative_repeats.toml"),
            fixture("negative_repeats.toml") +
                ":2:15: measure.min_repeats: -1 is out of range: min_repeats must be 1 to 100000");
}

TEST(ConfigMeasure, MinAboveMax) {
  EXPECT_EQ(error_of("min_above_max.toml"),
            fixture("min_above_max.toml") +
                ":3:15: measure.max_repeats: max_repeats (3) is less than min_repeats (5)");
}

TEST(ConfigMeasure, UnknownL2Mode) {
  EXPECT_EQ(error_of("bad_l2.toml"),
            fixture("bad_l2.toml") +
                ":2:6: measure.l2: unknown L2 mode 'hot'; choices: cold, warm");
}

TEST(ConfigMeasure, TimeoutBelowBudget) {
  EXPECT_EQ(error_of("timeout_below_budget.toml"),
            fixture("timeout_below_budget.toml") +
                ":3:13: measure.timeout_s: timeout_s (0.2 s) must exceed budget_ms (500 ms): "
                "every candidate would time out");
}

TEST(ConfigStrategy, UnknownStrategy) {
  EXPECT_EQ(error_of("unknown_strategy.toml"),
            fixture("unknown_strategy.toml") +
                ":2:8: strategy.name: unknown strategy 'halfing' (did you mean 'halving'?); "
                "choices: exhaustive, random, halving");
}

TEST(ConfigStrategy, RandomNeedsABudget) {
  EXPECT_EQ(error_of("random_without_budget.toml"),
            fixture("random_without_budget.toml") +
                ":2:8: strategy.name: strategy 'random' needs a budget: strategy.random.count "
                "and/or strategy.random.seconds");
  ConfigOverrides o;
  o.random_count = "20";
  auto c = load_config(fixture("random_without_budget.toml"), o);
  EXPECT_EQ(c.strategy.name, "random");
  EXPECT_EQ(c.strategy.random.count, 20);
}

TEST(ConfigStrategy, HalvingKeepOutOfRange) {
  EXPECT_HAS(error_of("halving_keep.toml"),
             ":2:8: strategy.halving.keep: 1.5 is out of range: keep is the fraction kept after a "
             "round: above 0 and below 1");
}

TEST(ConfigErrors, EveryProblemIsReportedAtOnce) {
  const std::string e = error_of("several_errors.toml");
  std::istringstream lines(e);
  std::vector<std::string> got;
  for (std::string l; std::getline(lines, l);) got.push_back(l);
  ASSERT_EQ(got.size(), 4u) << e;
  EXPECT_HAS(got[0], ":3:11: space.blocks[0]: block size 96");
  EXPECT_HAS(got[1], ":4:12: space.unrolls[0]: unroll factor 0");
  EXPECT_HAS(got[2], ":7:10: measure.warmup: -1 is out of range");
  EXPECT_HAS(got[3], ":8:6: measure.l2: unknown L2 mode 'lukewarm'");
}

TEST(ConfigFile, MissingFileAndDirectory) {
  try {
    load_config(fixture("does_not_exist.toml"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_HAS(std::string(e.what()), "does_not_exist.toml: no such file");
  }
  try {
    load_config(data_dir);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_HAS(std::string(e.what()), "is a directory");
  }
}

TEST(ConfigFile, SmallFixture) {
  const TuneConfig c = load_config(fixture("small.toml"));
  using kernels::Family;
  EXPECT_EQ(c.space.families, (std::vector<Family>{Family::smem, Family::warp_shuffle,
                                                   Family::vectorized, Family::interleaved}));
  EXPECT_EQ(c.space.blocks, (std::vector<int>{128, 256, 512}));
  EXPECT_EQ(c.space.sizes.size(), 8u);
  EXPECT_EQ(c.space.sizes.front(), 1024u);
  EXPECT_EQ(c.space.sizes.back(), 16777216u);
  EXPECT_EQ(c.measure.min_repeats, 10);
  EXPECT_EQ(c.measure.max_repeats, 50);
  EXPECT_EQ(c.measure.warmup, 1);
  EXPECT_EQ(c.strategy.halving.keep, 0.5);
  EXPECT_EQ(c.bisect.max_depth, 4);
  EXPECT_EQ(c.source, fixture("small.toml"));
}

// The default tune.toml is the default configuration with every key written out, but for the
// segmented keys: a configuration without them tunes none, the file six.
TEST(ConfigFile, TheDefaultTuneTomlIsTheDefaultConfig) {
  const TuneConfig c = load_config(TR_DEFAULT_TUNE_TOML);
  TuneConfig d = default_config();
  EXPECT_TRUE(d.segmented.keys.empty());
  d.segmented.keys = {{DType::f32, Op::sum},       {DType::f64, Op::sum}, {DType::i32, Op::sum},
                      {DType::bf16, Op::wide_sum}, {DType::f32, Op::max}, {DType::f32, Op::argmax}};
  EXPECT_EQ(canonical_text(c), canonical_text(d));
  EXPECT_EQ(c.space.sizes.size(), 21u);  // 2^10 .. 2^30
  EXPECT_EQ(c.strategy.name, "halving");
  EXPECT_EQ(c.measure.l2, L2Mode::cold);
  EXPECT_EQ(c.space.families.size(), 12u);
  EXPECT_EQ(c.space.dtypes.size(), 8u);
  EXPECT_EQ(c.space.ops.size(), 7u);  // sum, min, max, wide_sum, argmin, argmax, absmax
  // Every key of the schema appears in the default file (commented out or set).
  std::ifstream in(TR_DEFAULT_TUNE_TOML);
  std::stringstream text;
  text << in.rdbuf();
  for (const KeySpec& k : config_keys()) {
    const std::string leaf(k.path.substr(k.path.rfind('.') + 1));
    EXPECT_HAS(text.str(), leaf + " = ");
  }
}

TEST(ConfigFile, AllSelectsEveryCompiledValue) {
  auto c = validate_config(parse_config_text(
      "[space]\nfamilies = \"all\"\nblocks = \"all\"\ndtypes = [\"float\", \"f32\"]\n", "t.toml"));
  EXPECT_EQ(c.space.families.size(), 15u);  // the exact families too
  EXPECT_EQ(c.space.blocks.size(), 5u);
  EXPECT_EQ(c.space.dtypes, std::vector<DType>{DType::f32});  // aliases; duplicates dropped
}

TEST(ConfigOverrides, FlagsReplaceFileKeysAndAreRevalidated) {
  ConfigOverrides o;
  o.blocks = "64, 1024";
  o.sizes = "2^10..2^20*4";
  o.strategy = "exhaustive";
  o.repeats = "7";
  o.l2 = "warm";
  o.families = "all";
  o.bisect = "off";
  const TuneConfig c = load_config(fixture("small.toml"), o);
  EXPECT_EQ(c.space.blocks, (std::vector<int>{64, 1024}));
  EXPECT_EQ(c.space.sizes, (std::vector<std::uint64_t>{1024, 4096, 16384, 65536, 262144, 1048576}));
  EXPECT_EQ(c.strategy.name, "exhaustive");
  EXPECT_EQ(c.measure.min_repeats, 7);
  EXPECT_EQ(c.measure.max_repeats, 7);
  EXPECT_EQ(c.measure.l2, L2Mode::warm);
  // "all" includes the exact families; they implement exact_sum alone, which small.toml does
  // not ask for, so their blocks (128-512) are no conflict with these.
  EXPECT_EQ(c.space.families.size(), 15u);
  EXPECT_FALSE(c.bisect.enabled);

  ConfigOverrides add;
  add.sizes = "1000..1300+100";
  EXPECT_EQ(load_config(fixture("small.toml"), add).space.sizes,
            (std::vector<std::uint64_t>{1000, 1100, 1200, 1300}));
  ConfigOverrides list;
  list.sizes = "1024,2^20, 4096";
  EXPECT_EQ(load_config(fixture("small.toml"), list).space.sizes,
            (std::vector<std::uint64_t>{1024, 4096, 1048576}));
}

// --sizes takes the CLI's one grammar of element counts (common/grammar.hpp): suffixes, and
// lists that mix counts and ranges; a lone list or range is still checked by the validator.
TEST(ConfigOverrides, SizesInTheOneGrammar) {
  auto sizes = [](const char* text) {
    ConfigOverrides o;
    o.sizes = text;
    return load_config(fixture("small.toml"), o).space.sizes;
  };
  using V = std::vector<std::uint64_t>;
  EXPECT_EQ(sizes("16Mi"), V({std::uint64_t{1} << 24}));
  EXPECT_EQ(sizes("1Ki..4Ki+1Ki"), V({1024, 2048, 3072, 4096}));
  EXPECT_EQ(sizes("2Ki, 1Ki..4Ki*2, 1Mi"), V({1024, 2048, 4096, 1048576}));
  EXPECT_EQ(sizes("1Ti"), V({std::uint64_t{1} << 40}));
  auto message = [](const char* text) {
    ConfigOverrides o;
    o.sizes = text;
    try {
      load_config(fixture("small.toml"), o);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), exit_code::usage);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("2Ti"),
            "--sizes: size 2199023255552 is above 2^40 = 1099511627776, the "
            "largest n a kernel accepts");
  EXPECT_EQ(message("2^10,2Ti..4Ti*2"),
            "--sizes: invalid size '2Ti': 2199023255552 is above "
            "2^40 = 1099511627776, the largest element count here");
  EXPECT_EQ(message("1,2..1*2"), "--sizes: '2..1*2': from is greater than to");
  EXPECT_EQ(message("-5"),
            "--sizes: invalid size '-5' (an element count: N, B^E or N with Ki, "
            "Mi, Gi or Ti (1000, 2^20, 16Mi))");
  EXPECT_EQ(message("0"), "--sizes: size 0 is below 1");
}

TEST(ConfigOverrides, BadFlagValues) {
  auto message = [](ConfigOverrides o) {
    try {
      load_config(fixture("small.toml"), o);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), exit_code::usage);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  ConfigOverrides a;
  a.blocks = "128,abc";
  EXPECT_EQ(message(a), "--blocks: 'abc' is not an integer");
  ConfigOverrides b;
  b.blocks = "96";
  EXPECT_EQ(message(b),
            "--blocks: block size 96 is not in the registry (compiled block sizes: 64, "
            "128, 256, 512, 1024)");
  ConfigOverrides c;
  c.sizes = "1024..4096";
  EXPECT_EQ(message(c), "--sizes: a range is FROM..TO*FACTOR or FROM..TO+STEP, got '1024..4096'");
  ConfigOverrides d;
  d.sizes = "1024..4096*1";
  EXPECT_EQ(message(d), "--sizes: factor 1 does not advance the range (it must be greater than 1)");
  ConfigOverrides e;
  e.strategy = "exhaustiv";
  EXPECT_EQ(message(e),
            "--strategy: unknown strategy 'exhaustiv' (did you mean 'exhaustive'?); "
            "choices: exhaustive, random, halving");
  ConfigOverrides f;
  f.bisect = "maybe";
  EXPECT_EQ(message(f), "--bisect: 'maybe' is not on or off");
  ConfigOverrides g;
  g.min_repeats = "60";  // small.toml: max_repeats 50
  EXPECT_EQ(message(g), fixture("small.toml") +
                            ":15:15: measure.max_repeats: max_repeats (50) is less than "
                            "min_repeats (60)");
}

TEST(ConfigHash, DependsOnEveryValue) {
  TuneConfig a = default_config(), b = default_config();
  EXPECT_EQ(config_hash(a), config_hash(b));
  EXPECT_EQ(config_hash(a).size(), 16u);
  b.measure.warmup = 3;
  EXPECT_NE(config_hash(a), config_hash(b));
  b = a;
  b.space.sizes.pop_back();
  EXPECT_NE(config_hash(a), config_hash(b));
}

// Runs store config_hash, so the hash of an unchanged tune.toml must never move. The values were
// printed by `tunedreduce tune --dry-run` before tuner/config.cpp was split (commit bbb6eb2);
// the repository's tune.toml changed four times since: when its ops gained wide_sum in e45f934
// (it was 989c559e7f475e8c, which earlier runs and tests/data/h100-winners.db carry), when its
// dtypes gained f16 and bf16 in bde555a (it was 4744ccacebe56947, which runs between the two
// carry), when its ops gained argmin and argmax in f282bf6 (it was 324f7eb903b29da7), and when
// it gained [segmented] with six keys (it was 549b87655eeb575d, which default_config() keeps:
// without a segmented key the canonical text has no line of [segmented]), and when its
// segmented families gained balanced (it was 3d4cab200039f48c), and when its ops gained absmax
// (it was 784f012aeb1ca212; default_config()'s 549b87655eeb575d).
TEST(ConfigHash, TheRepositorysTuneTomlKeepsItsHash) {
  EXPECT_EQ(config_hash(load_config(TR_DEFAULT_TUNE_TOML)), "d60e3221931e72ca");
  EXPECT_EQ(config_hash(default_config()), "b86313a1653be6c5");
  EXPECT_EQ(config_hash(load_config(fixture("small.toml"))), "01a66b7ffc1caab6");
  ConfigOverrides o;
  o.strategy = "random";
  o.random_count = "7";
  o.random_seconds = "2.5";
  o.seed = "9";
  o.l2 = "warm";
  o.bisect = "off";
  o.sizes = "2^10..2^20*1.5";
  EXPECT_EQ(config_hash(load_config(fixture("small.toml"), o)), "4f7d154cb19d649a");
  ConfigOverrides p;
  p.families = "smem,tiled";
  p.halving_keep = "0.3";
  p.halving_growth = "2.5";
  p.target_spread = "0.015";
  p.budget_ms = "123.456";
  p.timeout_s = "7.25";
  p.bisect_precision = "0.1";
  p.bisect_depth = "3";
  p.warmup = "2";
  p.dtypes = "f64,i32";
  p.ops = "max";
  EXPECT_EQ(config_hash(load_config(TR_DEFAULT_TUNE_TOML, p)), "3239a5ec76ab78d7");
  // The same without the file's segmented keys: the hash these overrides gave before
  // [segmented] existed.
  p.seg_keys = "";
  EXPECT_EQ(config_hash(load_config(TR_DEFAULT_TUNE_TOML, p)), "35e49cbe7889c8a4");
}

// The sample databases were recorded with their .toml: the hash stored in their run is the one
// computed now.
TEST(ConfigHash, TheSampleDatabasesStoreTheHashOfTheirToml) {
  for (const char* name : {"h100-sample", "h200-sample"}) {
    const std::string base = std::string(TR_TEST_DATA "/") + name;
    db::ReaderOptions ro;
    ro.immutable = true;
    db::Database db = db::Database::open_reader(base + ".db", ro);
    const auto runs = db.runs();
    ASSERT_EQ(runs.size(), 1u) << name;
    EXPECT_EQ(config_hash(load_config(base + ".toml")), runs[0].info.config_hash) << name;
  }
}

TEST(ConfigCanonical, EveryKeyInFixedOrder) {
  ConfigOverrides o;
  o.strategy = "random";
  o.random_count = "7";
  o.random_seconds = "2.5";
  o.seed = "9";
  o.l2 = "warm";
  o.bisect = "off";
  o.sizes = "2^10..2^20*1.5";
  EXPECT_EQ(canonical_text(load_config(fixture("small.toml"), o)),
            "space.families=smem,warp_shuffle,vectorized,interleaved\n"
            "space.blocks=128,256,512\n"
            "space.unrolls=2,4,8\n"
            "space.smem=dynamic\n"
            "space.finishes=two_pass,single_pass\n"
            "space.dtypes=f32,i64\n"
            "space.ops=sum\n"
            "space.sizes=1024,1536,2304,3456,5184,7776,11664,17496,26244,39366,59049,88574,"
            "132860,199290,298936,448403,672605,1008908\n"
            "measure.warmup=1\n"
            "measure.min_repeats=10\n"
            "measure.max_repeats=50\n"
            "measure.budget_ms=250\n"
            "measure.target_spread=0.02\n"
            "measure.l2=warm\n"
            "measure.timeout_s=10\n"
            "strategy.name=random\n"
            "strategy.seed=9\n"
            "strategy.random.count=7\n"
            "strategy.random.seconds=2.5\n"
            "strategy.halving.keep=0.5\n"
            "strategy.halving.first_repeats=3\n"
            "strategy.halving.growth=3\n"
            "strategy.halving.final_size=3\n"
            "bisect.enabled=false\n"
            "bisect.max_depth=4\n"
            "bisect.precision=0.050000000000000003\n");
}

// The schema (tuner/config/schema.hpp) lists every key once; reading, overrides, validation and
// the canonical text take their keys from it.

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// "strategy.halving.keep" = "0.5" as a tune.toml: "[strategy.halving]\nkeep = 0.5\n".
std::string toml_setting(std::string_view path, const std::string& value) {
  const std::size_t dot = path.rfind('.');
  return "[" + std::string(path.substr(0, dot)) + "]\n" + std::string(path.substr(dot + 1)) +
         " = " + value + "\n";
}

// The default configuration with a segmented key: every key of the schema has a line (without
// one, those of [segmented] are left out).
TuneConfig with_segmented_key() {
  TuneConfig c = default_config();
  c.segmented.keys = {{DType::f32, Op::sum}};
  return c;
}

TEST(ConfigSchema, EveryKeyOnceInTheOrderOfTheCanonicalText) {
  std::vector<std::string> paths;
  for (const KeySpec& k : config_keys()) paths.emplace_back(k.path);
  EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()).size(), paths.size());
  std::vector<std::string> canonical_keys;
  for (const std::string& l : lines_of(canonical_text(with_segmented_key())))
    canonical_keys.push_back(l.substr(0, l.find('=')));
  EXPECT_EQ(canonical_keys, paths);
  // Without a segmented key: every key but those of [segmented], which come last.
  std::vector<std::string> plain;
  for (const std::string& l : lines_of(canonical_text(default_config())))
    plain.push_back(l.substr(0, l.find('=')));
  ASSERT_LT(plain.size(), paths.size());
  EXPECT_TRUE(std::equal(plain.begin(), plain.end(), paths.begin()));
  for (std::size_t i = plain.size(); i < paths.size(); ++i)
    EXPECT_TRUE(paths[i].starts_with("segmented.")) << paths[i];
  for (const KeySpec& k : config_keys()) {
    EXPECT_EQ(find_key(k.path), &k);
    EXPECT_FALSE(k.help.empty()) << k.path;
  }
  EXPECT_EQ(find_key("measure.target"), nullptr);
}

// A strategy's keys are declared beside it and lie under strategy.NAME.
TEST(ConfigSchema, EachStrategyDeclaresItsOwnKeys) {
  std::size_t declared = 0;
  for (const StrategyInfo& s : strategies())
    for (const KeySpec& k : s.options) {
      ++declared;
      EXPECT_TRUE(k.path.starts_with("strategy." + std::string(s.name) + ".")) << k.path;
      // The schema's row is a copy of the strategy's: the key is spelled there only.
      const KeySpec* row = find_key(k.path);
      ASSERT_NE(row, nullptr) << k.path;
      EXPECT_EQ(row->path.data(), k.path.data()) << k.path;
    }
  EXPECT_EQ(declared,
            6u);  // random: count, seconds; halving: keep, first_repeats, growth, final_size
}

// A key is either a scalar with a field (integers and numbers with bounds whose message shows the
// value, admitting the default) or has a canonical text of its own and is checked by the
// validator's code.
TEST(ConfigSchema, ScalarsHaveFieldsAndBoundsThatAdmitTheirDefault) {
  const TuneConfig d = default_config();
  for (const KeySpec& k : config_keys()) {
    const bool has_field = !std::holds_alternative<std::monostate>(k.field);
    EXPECT_NE(has_field, k.canonical != nullptr) << k.path;
    if (!has_field) continue;
    EXPECT_TRUE(k.kind == KeyKind::integer || k.kind == KeyKind::number ||
                k.kind == KeyKind::boolean)
        << k.path;
    if (k.kind == KeyKind::boolean) continue;
    ASSERT_TRUE(k.bounds) << k.path;
    const std::string_view m = k.bounds->message;
    EXPECT_NE(m.find("{}"), std::string_view::npos) << k.path;
    EXPECT_EQ(m.find("{}"), m.rfind("{}")) << k.path;
    const std::string v = canonical_value(k, d);
    if (v != "none") {
      EXPECT_TRUE(k.bounds->admits(std::stod(v))) << k.path << " = " << v;
    }
    if (std::holds_alternative<Accessor<int>>(k.field)) {  // an int field: bounds within int
      EXPECT_TRUE(k.bounds->lo >= std::numeric_limits<int>::min() &&
                  k.bounds->hi <= std::numeric_limits<int>::max())
          << k.path;
    }
  }
}

// Every key set in a tune.toml reaches the canonical text, on its own line only: every key feeds
// the config hash. (With a segmented key selected, so that [segmented] has its lines.)
TEST(ConfigSchema, EveryKeyReachesTheCanonicalTextAndOnlyItsLine) {
  // Keys checked by the validator's own code: a valid value other than the default, as written
  // in tune.toml and as the canonical text writes it.
  const std::map<std::string, std::pair<std::string, std::string>> named = {
      {"space.families", {"[\"smem\", \"tiled\"]", "smem,tiled"}},
      {"space.blocks", {"[256, 128]", "256,128"}},
      {"space.unrolls", {"[4]", "4"}},
      {"space.smem", {"[\"static\"]", "static"}},
      {"space.finishes", {"[\"single_pass\", \"two_pass\"]", "single_pass,two_pass"}},
      {"space.dtypes", {"[\"float\", \"i64\"]", "f32,i64"}},
      {"space.ops", {"[\"max\"]", "max"}},
      {"space.sizes", {"{ from = 1000, to = 1300, step = 100 }", "1000,1100,1200,1300"}},
      {"measure.l2", {"\"warm\"", "warm"}},
      {"strategy.name", {"\"exhaustive\"", "exhaustive"}},
      {"segmented.keys", {"[\"i32.max\", \"float.sum\"]", "i32.max,f32.sum"}},
      {"segmented.families", {"[\"split\", \"block\"]", "split,block"}},
      {"segmented.layouts", {"[\"offsets64\", \"fixed\"]", "offsets64,fixed"}},
      {"segmented.segment_sizes", {"[64, 8]", "8,64"}},
      {"segmented.segment_counts", {"{ from = 2, to = 32, factor = 4 }", "2,8,32"}},
  };
  const std::string segmented_key = "[segmented]\nkeys = [\"f32.sum\"]\n";
  const TuneConfig d = with_segmented_key();
  const std::vector<std::string> default_lines = lines_of(canonical_text(d));
  std::size_t i = 0;
  for (const KeySpec& k : config_keys()) {
    std::string written, expected;
    if (k.canonical) {
      ASSERT_TRUE(named.count(std::string(k.path))) << k.path << ": give it a test value";
      std::tie(written, expected) = named.at(std::string(k.path));
    } else if (k.kind == KeyKind::boolean) {
      written = expected = canonical_value(k, d) == "true" ? "false" : "true";
    } else {
      // A value inside the bounds other than the default.
      const std::string current = canonical_value(k, d);
      const double base = current == "none" ? 2 : std::stod(current);
      for (double v : {base + 1, base / 2, base - 1})
        if (k.bounds->admits(v) && v != base && (k.kind == KeyKind::number || v == std::floor(v))) {
          expected = k.kind == KeyKind::number ? canonical_number(v)
                                               : std::to_string(static_cast<std::int64_t>(v));
          break;
        }
      ASSERT_FALSE(expected.empty()) << k.path;
      written = expected;
    }
    // [segmented] once: the key set, or keys beside the setting.
    const std::string setting = toml_setting(k.path, written);
    const std::string toml = k.path == "segmented.keys" ? setting
                             : k.path.starts_with("segmented.")
                                 ? segmented_key + setting.substr(setting.find('\n') + 1)
                                 : segmented_key + setting;
    const TuneConfig c = validate_config(parse_config_text(toml, "t.toml"));
    EXPECT_EQ(canonical_value(k, c), expected) << toml;
    const std::vector<std::string> got = lines_of(canonical_text(c));
    ASSERT_EQ(got.size(), default_lines.size());
    for (std::size_t j = 0; j < got.size(); ++j)
      if (j == i) EXPECT_EQ(got[j], std::string(k.path) + "=" + expected);
      else EXPECT_EQ(got[j], default_lines[j]) << "setting " << k.path;
    EXPECT_NE(config_hash(c), config_hash(d)) << k.path;
    ++i;
  }
}

// The repository's tune.toml writes out every key of the schema but the two that have no
// default (random's budget: commented out there), and nothing else.
TEST(ConfigSchema, TheRepositorysTuneTomlSetsEveryKeyWithADefault) {
  const RawConfig raw = parse_config_file(TR_DEFAULT_TUNE_TOML);
  std::set<std::string> unset;
  for (const KeySpec& k : config_keys())
    if (!raw.values.count(std::string(k.path))) unset.insert(std::string(k.path));
  for (const auto& [path, value] : raw.values) EXPECT_NE(find_key(path), nullptr) << path;
  EXPECT_EQ(unset, (std::set<std::string>{"strategy.random.count", "strategy.random.seconds"}));
}

// A typo of any key's name is reported with that name suggested, from the schema's keys of the
// same table.
TEST(ConfigSchema, ATypoOfAnyKeySuggestsIt) {
  for (const KeySpec& k : config_keys()) {
    const std::string_view path = k.path;
    const std::string leaf(path.substr(path.rfind('.') + 1));
    std::string typo = leaf;
    std::swap(typo[0], typo[1]);
    const std::string table(path.substr(0, path.rfind('.')));
    try {
      parse_config_text(toml_setting(table + "." + typo, "1"), "t.toml");
      ADD_FAILURE() << typo << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "t.toml:2:1: " + table + "." + typo + ": unknown key '" +
                                           typo + "' in [" + table + "] (did you mean '" + leaf +
                                           "'?)");
    }
  }
}

// Every key has a flag, and every flag sets a key of the schema.
TEST(ConfigSchema, EveryKeyHasAFlag) {
  std::set<std::string> flagged;
  for (const OverrideSpec& o : override_specs()) {
    EXPECT_NE(find_key(o.key), nullptr) << o.flag;
    flagged.insert(std::string(o.key));
  }
  for (const KeySpec& k : config_keys()) EXPECT_TRUE(flagged.count(std::string(k.path))) << k.path;
}

TEST(ConfigSuggest, EditDistanceAndNearest) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  const std::vector<std::string> keys = {"blocks", "unrolls", "families"};
  EXPECT_EQ(nearest("blokcs", keys), "blocks");
  EXPECT_EQ(nearest("unroll", keys), "unrolls");
  EXPECT_EQ(nearest("zzz", keys), std::nullopt);
}

}  // namespace
}  // namespace tunedreduce::tuner
