#include "tuner/config/schema.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>

#include "common/enum_names.hpp"
#include "kernels/manifest.hpp"
#include "kernels/space.hpp"
#include "tuner/config/canonical.hpp"
#include "tuner/config/seg_names.hpp"
#include "tuner/config/tune_config.hpp"
#include "tuner/config/validate.hpp"

namespace tunedreduce::tuner {

namespace {

using kernels::Family;
using kernels::Finish;
using kernels::SmemMode;

// [space]: names and numbers checked against the registry by the validator's own code.
constexpr KeySpec space_keys[] = {
    {"space.families",
     KeyKind::string_list,
     "kernel families to search",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.space.families, kernels::family_name); }},
    {"space.blocks",
     KeyKind::integer_list,
     "threads per block",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.space.blocks); }},
    {"space.unrolls",
     KeyKind::integer_list,
     "unroll factors (families that have one)",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.space.unrolls); }},
    {"space.smem",
     KeyKind::string_list,
     "shared-memory modes of the smem family",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.space.smem, kernels::smem_mode_name); }},
    {"space.finishes",
     KeyKind::string_list,
     "finishing strategies",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.space.finishes, kernels::finish_name); }},
    {"space.dtypes",
     KeyKind::string_list,
     "element types",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.space.dtypes, dtype_name); }},
    {"space.ops",
     KeyKind::string_list,
     "operators",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.space.ops, op_name); }},
    {"space.sizes",
     KeyKind::sizes,
     "element counts: a list or a range",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.space.sizes); }},
};

// [measure]: tuner::MeasurePolicy (tuner/runner.hpp), whose initializers are the defaults.
constexpr KeySpec measure_keys[] = {
    {"measure.warmup", KeyKind::integer, "untimed launches before timing",
     member<&TuneConfig::measure, &MeasurePolicy::warmup>(),
     Bounds{0, 10000, false, false, "{} is out of range: warm-up launches must be 0 to 10000"}},
    {"measure.min_repeats", KeyKind::integer, "timed launches, at least",
     member<&TuneConfig::measure, &MeasurePolicy::min_repeats>(),
     Bounds{1, 100000, false, false, "{} is out of range: min_repeats must be 1 to 100000"}},
    {"measure.max_repeats", KeyKind::integer, "timed launches, at most",
     member<&TuneConfig::measure, &MeasurePolicy::max_repeats>(),
     Bounds{1, 100000, false, false, "{} is out of range: max_repeats must be 1 to 100000"}},
    {"measure.budget_ms", KeyKind::number, "wall time per candidate before it stops repeating",
     member<&TuneConfig::measure, &MeasurePolicy::budget_ms>(),
     Bounds{0, 3.6e6, true, false,
            "{} is out of range: budget_ms must be above 0 (and at most an hour)"}},
    {"measure.target_spread", KeyKind::number, "stop once (p90 - p10) / median is at most this",
     member<&TuneConfig::measure, &MeasurePolicy::target_spread>(),
     Bounds{0, 10, false, false,
            "{} is out of range: target_spread must be 0 to 10 (0: never stop early)"}},
    // A name: checked by the validator (db::parse_l2_mode).
    {"measure.l2",
     KeyKind::string,
     "cold (L2 flushed before every timed launch) or warm",
     {},
     {},
     [](const TuneConfig& c) { return std::string(db::l2_mode_name(c.measure.l2)); }},
    {"measure.timeout_s", KeyKind::number, "a candidate silent this long is killed",
     member<&TuneConfig::measure, &MeasurePolicy::timeout_s>(),
     Bounds{0, 86400, true, false,
            "{} is out of range: timeout_s must be above 0 (and at most a day)"}},
};

// [strategy]: the name and the seed; each strategy's own table follows (strategies()).
constexpr KeySpec strategy_keys[] = {
    // A name: checked by the validator against strategies().
    {"strategy.name",
     KeyKind::string,
     "exhaustive, random or halving",
     {},
     {},
     [](const TuneConfig& c) { return c.strategy.name; }},
    {"strategy.seed", KeyKind::integer, "seed of the random strategy",
     member<&TuneConfig::strategy, &StrategyConfig::seed>(),
     Bounds{0, std::numeric_limits<double>::infinity(), false, false, "seed {} must be 0 or more"}},
};

constexpr KeySpec bisect_keys[] = {
    {"bisect.enabled", KeyKind::boolean, "locate crossovers between grid sizes",
     member<&TuneConfig::bisect, &BisectConfig::enabled>()},
    {"bisect.max_depth", KeyKind::integer, "midpoints per crossover, at most",
     member<&TuneConfig::bisect, &BisectConfig::max_depth>(),
     Bounds{0, 60, false, false, "{} is out of range: max_depth must be 0 to 60"}},
    {"bisect.precision", KeyKind::number, "stop once hi / lo <= 1 + precision",
     member<&TuneConfig::bisect, &BisectConfig::precision>(),
     Bounds{0, 100, true, false,
            "{} is out of range: precision must be above 0 (a relative width, e.g. 0.05)"}},
};

// [segmented]: the segmented keys and their grid over the shape. Last in the canonical text, and
// left out of it while no segmented key is selected (canonical.cpp): a configuration without
// segmented keys keeps the hash it had before the section existed.
constexpr KeySpec segmented_keys[] = {
    {"segmented.keys",
     KeyKind::string_list,
     "segmented keys to tune, DTYPE.OP (none by default)",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.segmented.keys, seg_key_name); }},
    {"segmented.families",
     KeyKind::string_list,
     "segmented kernel families: thread, group, block, split, tile",
     {},
     {},
     [](const TuneConfig& c) {
       return canonical_list(c.segmented.families,
                             [](auto f) { return seg_family_names.to_name(f); });
     }},
    {"segmented.layouts",
     KeyKind::string_list,
     "segment layouts: fixed, offsets32, offsets64",
     {},
     {},
     [](const TuneConfig& c) {
       return canonical_list(c.segmented.layouts,
                             [](auto l) { return seg_layout_names.to_name(l); });
     }},
    {"segmented.segment_sizes",
     KeyKind::sizes,
     "elements per segment: a list or a range",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.segmented.segment_sizes); }},
    {"segmented.segment_counts",
     KeyKind::sizes,
     "segments: a list or a range",
     {},
     {},
     [](const TuneConfig& c) { return canonical_list(c.segmented.segment_counts); }},
    {"segmented.max_total", KeyKind::integer,
     "grid points of more elements (size x count) are left out",
     member<&TuneConfig::segmented, &SegmentedConfig::max_total>(),
     Bounds{1, 1099511627776.0, false, false,
            "{} is out of range: max_total must be 1 to 2^40 = 1099511627776"}},
};

std::vector<KeySpec> all_keys() {
  std::vector<KeySpec> keys;
  auto add = [&](std::span<const KeySpec> part) {
    keys.insert(keys.end(), part.begin(), part.end());
  };
  add(space_keys);
  add(measure_keys);
  add(strategy_keys);
  for (const StrategyInfo& s : strategies()) add(s.options);
  add(bisect_keys);
  add(segmented_keys);
  return keys;
}

constexpr std::uint64_t default_size_from = std::uint64_t{1} << 10;
constexpr std::uint64_t default_size_to = std::uint64_t{1} << 30;
constexpr std::uint64_t default_segment_size_to = std::uint64_t{1} << 20;
constexpr std::uint64_t default_segment_count_to = std::uint64_t{1} << 20;

}  // namespace

std::span<const KeySpec> config_keys() {
  static const std::vector<KeySpec> keys = all_keys();
  return keys;
}

const KeySpec* find_key(std::string_view path) {
  for (const KeySpec& k : config_keys())
    if (k.path == path) return &k;
  return nullptr;
}

bool is_table_path(std::string_view path) {
  for (const KeySpec& k : config_keys())
    if (k.path.size() > path.size() && k.path.substr(0, path.size()) == path &&
        k.path[path.size()] == '.')
      return true;
  return false;
}

std::vector<std::string> children_of(std::string_view prefix) {
  std::vector<std::string> out;
  for (const KeySpec& k : config_keys()) {
    std::string_view p = k.path;
    if (!prefix.empty()) {
      if (p.size() <= prefix.size() + 1 || p.substr(0, prefix.size()) != prefix ||
          p[prefix.size()] != '.')
        continue;
      p.remove_prefix(prefix.size() + 1);
    }
    std::string child(p.substr(0, p.find('.')));
    if (std::find(out.begin(), out.end(), child) == out.end()) out.push_back(child);
  }
  return out;
}

std::string kind_phrase(KeyKind k) {
  static constexpr auto phrases = enum_names<KeyKind>({
      {KeyKind::integer, "an integer"},
      {KeyKind::number, "a number"},
      {KeyKind::boolean, "a boolean (true or false)"},
      {KeyKind::string, "a string"},
      {KeyKind::string_list, "an array of strings (or \"all\")"},
      {KeyKind::integer_list, "an array of integers (or \"all\")"},
      {KeyKind::sizes, "an array of integers or a table { from, to, step } / { from, to, factor }"},
  });
  static_assert(phrases.lists_all_through(KeyKind::sizes));
  return phrases.to_name(k);
}

TuneConfig default_config() {
  TuneConfig c;
  SpaceConfig& s = c.space;
  // The repository's tune.toml, whose hash recorded runs carry: every operator but exact_sum
  // (it is asked for: `ops = ["exact_sum"]`, or "all"), argmin and argmax included, and every
  // family that implements one of them (so not the exact ones).
  for (Op o : all_ops)
    if (o != Op::exact_sum) s.ops.push_back(o);
  for (kernels::Family f : kernels::all_families)
    if (kernels::space::implements_any(f, s.ops)) s.families.push_back(f);
  s.blocks.assign(std::begin(kernels::space::blocks), std::end(kernels::space::blocks));
  std::set<int> unrolls;
  for (const auto& fam : kernels::space::families)
    for (int u : fam.unrolls)
      if (u) unrolls.insert(u);
  s.unrolls.assign(unrolls.begin(), unrolls.end());
  s.smem = {SmemMode::static_, SmemMode::dynamic};
  s.finishes.assign(std::begin(kernels::all_finishes), std::end(kernels::all_finishes));
  s.dtypes.assign(std::begin(all_dtypes), std::end(all_dtypes));
  s.sizes = expand_range(default_size_from, default_size_to, std::nullopt, 2.0);
  // No segmented key; the grid a key gets when one is asked for ([segmented] keys, --seg-keys).
  SegmentedConfig& g = c.segmented;
  g.families.assign(std::begin(kernels::segmented::all_seg_families),
                    std::end(kernels::segmented::all_seg_families));
  g.layouts = {kernels::segmented::SegLayout::fixed};
  g.segment_sizes = expand_range(1, default_segment_size_to, std::nullopt, 4.0);
  g.segment_counts = expand_range(1, default_segment_count_to, std::nullopt, 16.0);
  return c;
}

std::string seg_key_name(const SegKey& k) {
  return std::string(dtype_name(k.dtype)) + "." + op_name(k.op);
}

}  // namespace tunedreduce::tuner
