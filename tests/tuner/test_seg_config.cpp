// tune.toml [segmented]: its defaults, reading, validation (every message, with its position),
// the flags, and its lines in the canonical text.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/exit_codes.hpp"
#include "common/names.hpp"
#include "kernels/segmented/space.hpp"
#include "tuner/config.hpp"
#include "tuner/config/seg_names.hpp"
#include "tuner/segmented_space.hpp"

namespace tunedreduce::tuner {
namespace {

namespace kseg = kernels::segmented;
using kseg::SegFamily;
using kseg::SegLayout;

TuneConfig parse(const std::string& toml, const ConfigOverrides& o = {}) {
  RawConfig raw = parse_config_text(toml, "t.toml");
  apply_overrides(raw, o);
  return validate_config(raw);
}

std::string error_of(const std::string& toml, const ConfigOverrides& o = {}) {
  try {
    parse(toml, o);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << toml << " was accepted";
  return {};
}

std::vector<std::uint64_t> powers(int from, int to, int step) {
  std::vector<std::uint64_t> out;
  for (int e = from; e <= to; e += step) out.push_back(std::uint64_t{1} << e);
  return out;
}

TEST(SegConfig, DefaultsTuneNoKeyOverTheDocumentedGrid) {
  const SegmentedConfig g = default_config().segmented;
  EXPECT_TRUE(g.keys.empty());
  EXPECT_EQ(g.families,
            (std::vector<SegFamily>{SegFamily::thread, SegFamily::group, SegFamily::block,
                                    SegFamily::split, SegFamily::tile, SegFamily::balanced}));
  EXPECT_EQ(g.layouts, std::vector<SegLayout>{SegLayout::fixed});
  EXPECT_EQ(g.segment_sizes, powers(0, 20, 2));    // 1, 4, ..., 2^20
  EXPECT_EQ(g.segment_counts, powers(0, 20, 4));   // 1, 16, ..., 2^20
  EXPECT_EQ(g.max_total, std::uint64_t{1} << 28);  // 2^28 elements
  // A file without the section, and one with keys = [], are the default.
  EXPECT_EQ(canonical_text(parse("")), canonical_text(default_config()));
  EXPECT_EQ(canonical_text(parse("[segmented]\nkeys = []\nfamilies = [\"block\"]\n")),
            canonical_text(default_config()));
  EXPECT_EQ(canonical_text(default_config()).find("segmented"), std::string::npos);
}

TEST(SegConfig, TheRepositorysTuneTomlTunesSixKeysOfTheFixedLayout) {
  const SegmentedConfig g = load_config(TR_DEFAULT_TUNE_TOML).segmented;
  std::vector<std::string> names;
  for (const SegKey& k : g.keys) names.push_back(seg_key_name(k));
  EXPECT_EQ(names, (std::vector<std::string>{"f32.sum", "f64.sum", "i32.sum", "bf16.wide_sum",
                                             "f32.max", "f32.argmax"}));
  const SegmentedConfig d = default_config().segmented;
  EXPECT_EQ(g.families, d.families);
  EXPECT_EQ(g.layouts, d.layouts);
  EXPECT_EQ(g.segment_sizes, d.segment_sizes);
  EXPECT_EQ(g.segment_counts, d.segment_counts);
  EXPECT_EQ(g.max_total, d.max_total);
}

TEST(SegConfig, ReadsEveryKeyAndWritesItsCanonicalLines) {
  const TuneConfig c = parse(
      "[segmented]\n"
      "keys = [\"float.sum\", \"i64.argmin\", \"f32.sum\", \"f16.wide_sum\"]\n"
      "families = [\"group\", \"thread\"]\n"
      "layouts = [\"offsets32\", \"fixed\"]\n"
      "segment_sizes = [256, 1, 16]\n"
      "segment_counts = { from = 10, to = 40, step = 10 }\n"
      "max_total = 5000\n");
  const SegmentedConfig& g = c.segmented;
  // Aliases are read; a key given twice is kept once.
  ASSERT_EQ(g.keys.size(), 3u);
  EXPECT_EQ(g.keys[0], (SegKey{DType::f32, Op::sum}));
  EXPECT_EQ(g.keys[1], (SegKey{DType::i64, Op::argmin}));
  EXPECT_EQ(g.keys[2], (SegKey{DType::f16, Op::wide_sum}));
  EXPECT_EQ(g.families, (std::vector<SegFamily>{SegFamily::group, SegFamily::thread}));
  EXPECT_EQ(g.layouts, (std::vector<SegLayout>{SegLayout::offsets32, SegLayout::fixed}));
  EXPECT_EQ(g.segment_sizes, (std::vector<std::uint64_t>{1, 16, 256}));
  EXPECT_EQ(g.segment_counts, (std::vector<std::uint64_t>{10, 20, 30, 40}));
  EXPECT_EQ(g.max_total, 5000u);
  const std::string text = canonical_text(c);
  EXPECT_NE(text.find("bisect.precision=0.050000000000000003\n"
                      "segmented.keys=f32.sum,i64.argmin,f16.wide_sum\n"
                      "segmented.families=group,thread\n"
                      "segmented.layouts=offsets32,fixed\n"
                      "segmented.segment_sizes=1,16,256\n"
                      "segmented.segment_counts=10,20,30,40\n"
                      "segmented.max_total=5000\n"),
            std::string::npos)
      << text;
  EXPECT_NE(config_hash(c), config_hash(default_config()));
}

TEST(SegConfig, AllSelectsEveryKeyFamilyAndLayoutWithSegmentedKernels) {
  const SegmentedConfig g =
      parse("[segmented]\nkeys = \"all\"\nfamilies = \"all\"\nlayouts = \"all\"\n").segmented;
  // sum, min, max, argmin, argmax of the six 4- and 8-byte types; wide_sum of five.
  EXPECT_EQ(g.keys.size(), 35u);
  for (const SegKey& k : g.keys) EXPECT_TRUE(kseg::seg_op_applies(k.dtype, k.op));
  EXPECT_EQ(g.families.size(), 6u);
  EXPECT_EQ(g.layouts.size(), 3u);
}

TEST(SegConfig, AKeyWithoutSegmentedKernelsIsNamedWithTheNearestKey) {
  const std::string e = error_of(
      "[segmented]\nkeys = [\"f32.smu\", \"f16.sum\", \"f32.exact_sum\", \"f32sum\", "
      "\"f33.max\", \"i32.average\"]\n");
  EXPECT_EQ(e,
            "t.toml:2:9: segmented.keys[0]: unknown operator 'smu' in segmented key 'f32.smu' "
            "(operators: " +
                op_choices() +
                ") (did you mean 'f32.sum'?)\n"
                "t.toml:2:20: segmented.keys[1]: 'f16.sum' has no segmented kernels: operator "
                "'sum' is defined for i32, u32, i64, u64, f32 and f64 only; the segmented keys "
                "of f16: f16.wide_sum\n"
                "t.toml:2:31: segmented.keys[2]: 'f32.exact_sum' has no segmented kernels: "
                "exact_sum has none (its accumulator does not fit a lane per segment); the "
                "segmented keys of f32: f32.sum, f32.min, f32.max, f32.wide_sum, f32.argmin, "
                "f32.argmax\n"
                "t.toml:2:48: segmented.keys[3]: 'f32sum' is not a segmented key: write "
                "DTYPE.OP, as \"f32.sum\" (did you mean 'f32.sum'?)\n"
                "t.toml:2:58: segmented.keys[4]: unknown element type 'f33' in segmented key "
                "'f33.max' (element types: " +
                dtype_choices() +
                ") (did you mean 'f32.max'?)\n"
                "t.toml:2:69: segmented.keys[5]: unknown operator 'average' in segmented key "
                "'i32.average' (operators: " +
                op_choices() + ")");
}

TEST(SegConfig, UnknownFamiliesAndLayoutsSuggestTheNearest) {
  EXPECT_EQ(error_of("[segmented]\nfamilies = [\"block\", \"grop\"]\nlayouts = [\"offset32\"]\n"),
            "t.toml:2:22: segmented.families[1]: unknown segmented family 'grop' (did you mean "
            "'group'?); choices: thread, group, block, split, tile, balanced\n"
            "t.toml:3:12: segmented.layouts[0]: unknown segment layout 'offset32' (did you "
            "mean 'offsets32'?); choices: fixed, offsets32, offsets64");
  EXPECT_EQ(error_of("[segmented]\nfamilies = []\n"),
            "t.toml:2:12: segmented.families: is empty: nothing to tune");
}

TEST(SegConfig, GridValuesOutOfRange) {
  EXPECT_EQ(error_of("[segmented]\nsegment_sizes = [0, 4]\nsegment_counts = [2199023255552]\n"),
            "t.toml:2:18: segmented.segment_sizes[0]: size 0 is below 1\n"
            "t.toml:3:19: segmented.segment_counts[0]: size 2199023255552 is above 2^40 = "
            "1099511627776, the most segments a segmented kernel takes");
  EXPECT_EQ(error_of("[segmented]\nsegment_sizes = { from = 1, to = 2199023255552, factor = 2 "
                     "}\n"),
            "t.toml:2:34: segmented.segment_sizes.to: to = 2199023255552 is above 2^40 = "
            "1099511627776, the largest segment size the tuner takes");
  EXPECT_EQ(error_of("[segmented]\nsegment_counts = { from = 8, to = 2 , step = 1}\n"),
            "t.toml:2:18: segmented.segment_counts: from (8) is greater than to (2)");
  EXPECT_EQ(error_of("[segmented]\nmax_total = 0\n"),
            "t.toml:2:13: segmented.max_total: 0 is out of range: max_total must be 1 to 2^40 "
            "= 1099511627776");
}

TEST(SegConfig, AGridLeftEmptyOrTooLargeIsAnError) {
  EXPECT_EQ(error_of("[segmented]\nkeys = [\"f32.sum\"]\nsegment_sizes = [64, 128]\n"
                     "segment_counts = [4]\nmax_total = 100\n"),
            "t.toml:5:13: segmented.max_total: leaves no grid point: the smallest, 64 elements "
            "x 4 segments, is more than max_total = 100 elements");
  // Without a key nothing is measured: the same grid is no error.
  EXPECT_NO_THROW(
      parse("[segmented]\nsegment_sizes = [64, 128]\nsegment_counts = [4]\n"
            "max_total = 100\n"));
  EXPECT_EQ(error_of("[segmented]\nkeys = [\"f32.sum\"]\n"
                     "segment_sizes = { from = 1, to = 300, step = 1 }\n"
                     "segment_counts = { from = 1, to = 300, step = 1 }\n"
                     "max_total = 1099511627776\n"),
            "t.toml:3:17: segmented.segment_sizes: with segmented.segment_counts gives 90000 grid "
            "points within max_total; at most 65536 are allowed");
}

TEST(SegConfig, AFamilySelectionWithoutEntriesOfALayoutOrAPointIsAnError) {
  EXPECT_EQ(error_of("[segmented]\nkeys = [\"f32.sum\"]\nfamilies = [\"tile\"]\n"
                     "layouts = [\"fixed\", \"offsets32\"]\n"),
            "t.toml:3:12: segmented.families: selects no compiled segmented entry for f32 sum "
            "with layout offsets32 (the families thread, group, block, split and balanced have "
            "it)");
  // tile takes rows of 1, 2 or 4 floats (a 16-byte vector's 4 elements) only.
  EXPECT_EQ(error_of("[segmented]\nkeys = [\"f32.sum\"]\nfamilies = [\"tile\"]\n"
                     "segment_sizes = [3, 8]\n"),
            "t.toml:4:17: segmented.segment_sizes: no grid point has a candidate for f32 sum "
            "with layout fixed: the selected families take none of these segment sizes (tile "
            "takes rows whose length divides a 16-byte vector, 4 elements of f32)");
  EXPECT_NO_THROW(
      parse("[segmented]\nkeys = [\"f32.sum\"]\nfamilies = [\"tile\"]\n"
            "segment_sizes = [3, 4]\n"));
}

TEST(SegConfig, FlagsSetEveryKey) {
  ConfigOverrides o;
  o.seg_keys = "f32.sum, i32.max";
  o.seg_families = "block,split";
  o.seg_layouts = "offsets64";
  o.seg_sizes = "2^10..2^16*4";
  o.seg_counts = "1,2^4,2^8";
  o.seg_max_total = "2^20";
  const SegmentedConfig g = load_config(TR_DEFAULT_TUNE_TOML, o).segmented;
  EXPECT_EQ(g.keys, (std::vector<SegKey>{{DType::f32, Op::sum}, {DType::i32, Op::max}}));
  EXPECT_EQ(g.families, (std::vector<SegFamily>{SegFamily::block, SegFamily::split}));
  EXPECT_EQ(g.layouts, std::vector<SegLayout>{SegLayout::offsets64});
  EXPECT_EQ(g.segment_sizes, powers(10, 16, 2));
  EXPECT_EQ(g.segment_counts, powers(0, 8, 4));
  EXPECT_EQ(g.max_total, std::uint64_t{1} << 20);
  // An empty --seg-keys tunes none (over the file's six); a bad value names the flag.
  ConfigOverrides none;
  none.seg_keys = "";
  EXPECT_TRUE(load_config(TR_DEFAULT_TUNE_TOML, none).segmented.keys.empty());
  ConfigOverrides bad;
  bad.seg_keys = "f32.sum,f16.max";
  EXPECT_EQ(error_of("", bad),
            "--seg-keys: 'f16.max' has no segmented kernels: operator 'max' is defined for i32, "
            "u32, i64, u64, f32 and f64 only; the segmented keys of f16: f16.wide_sum");
  ConfigOverrides big;
  big.seg_max_total = "2^41";
  EXPECT_EQ(error_of("", big),
            "--seg-max-total: 2199023255552 is out of range: max_total must be 1 to 2^40 = "
            "1099511627776");
}

// tuner/config/ restates the registry's family and layout names and the rule of the rows a
// configuration runs (so that the fuzz targets compile it without the registry's code): both
// must be the registry's.
TEST(SegConfig, TheNamesAndTheRowRuleAreTheRegistrys) {
  for (SegFamily f : kseg::all_seg_families) {
    EXPECT_STREQ(seg_family_names.to_name(f), kseg::seg_family_name(f));
    EXPECT_EQ(kseg::parse_seg_family(seg_family_names.to_name(f)), f);
  }
  for (SegLayout l : kseg::all_seg_layouts) {
    EXPECT_STREQ(seg_layout_names.to_name(l), kseg::seg_layout_name(l));
    EXPECT_EQ(kseg::parse_seg_layout(seg_layout_names.to_name(l)), l);
  }
  std::size_t refused = 0;
  for (DType t : all_dtypes)
    for (Op o : all_ops)
      kseg::space::for_each_config(t, o, [&](const kseg::SegParams& p) {
        for (std::uint64_t size = 1; size <= 64; ++size)
          for (std::uint64_t count : {1, 7, 4096}) {
            EXPECT_EQ(seg_runs_rows_of(p, size), seg_takes(p, size, count))
                << kseg::make_seg_id(p) << " L=" << size << " S=" << count;
            refused += !seg_takes(p, size, count);
          }
      });
  EXPECT_GT(refused, 0u);  // the tile family's
}

}  // namespace
}  // namespace tunedreduce::tuner
