#include "tuner/config/overrides.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/grammar.hpp"
#include "kernels/registry.hpp"
#include "tuner/config/schema.hpp"
#include "tuner/config/validate.hpp"

namespace tunedreduce::tuner {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = s.find(',', start);
    out.emplace_back(
        trim(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// Integer as typed on the command line: decimal, optionally negative, or B^E.
std::optional<std::int64_t> parse_integer_text(std::string_view s) {
  s = trim(s);
  if (auto caret = s.find('^'); caret != std::string_view::npos) {
    auto base = parse_integer_text(s.substr(0, caret));
    auto exp = parse_integer_text(s.substr(caret + 1));
    if (!base || !exp || *exp < 0 || *exp > 62) return std::nullopt;
    std::int64_t v = 1;
    for (std::int64_t i = 0; i < *exp; ++i) {
      if (*base != 0 && std::abs(v) > std::numeric_limits<std::int64_t>::max() / std::abs(*base))
        return std::nullopt;
      v *= *base;
    }
    return v;
  }
  std::int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_number_text(std::string_view s) {
  s = trim(s);
  if (s.find('^') != std::string_view::npos) {
    auto i = parse_integer_text(s);
    if (!i) return std::nullopt;
    return static_cast<double>(*i);
  }
  if (s.empty()) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno != 0 || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool_text(std::string_view s) {
  s = trim(s);
  if (s == "on" || s == "true" || s == "yes" || s == "1") return true;
  if (s == "off" || s == "false" || s == "no" || s == "0") return false;
  return std::nullopt;
}

[[noreturn]] void bad_flag(std::string_view flag, const std::string& message) {
  throw Error("--" + std::string(flag) + ": " + message, exit_code::usage);
}

// The command line's counts grammar (common/grammar.hpp). One range alone, or a list of counts
// alone, stays as written, so that the validator reports its values as it does the file's; a
// list that mixes ranges and counts is expanded here (limits checked) into a list.
RawSizes parse_sizes_text(std::string_view flag, std::string_view text, const std::string& where) {
  const std::string option = "--" + std::string(flag);
  const std::vector<grammar::CountItem> items = grammar::parse_count_items(option, text);
  // A value past what the file's integers hold (2^99 saturates) is refused here, by its text:
  // the validator would name the saturated number instead.
  constexpr auto int_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  for (const grammar::CountItem& it : items)
    if (it.value > int_max || it.to > int_max || (it.step && *it.step > int_max))
      bad_flag(flag, fmt::format("invalid size '{}': at least 2^63, above 2^40 = "
                                 "1099511627776, the largest size or count a kernel accepts",
                                 it.text));
  auto located = [&](std::uint64_t v) {
    return Located<std::int64_t>{static_cast<std::int64_t>(std::min<std::uint64_t>(
                                     v, std::numeric_limits<std::int64_t>::max())),
                                 where};
  };
  RawSizes sizes;
  if (items.size() == 1 && items[0].is_range) {
    const grammar::CountItem& r = items[0];
    sizes.is_range = true;
    sizes.from = located(r.value);
    sizes.to = located(r.to);
    if (r.factor) sizes.factor = Located<double>{*r.factor, where};
    if (r.step) sizes.step = located(*r.step);
    return sizes;
  }
  const bool mixed = std::any_of(items.begin(), items.end(),
                                 [](const grammar::CountItem& c) { return c.is_range; });
  if (!mixed) {
    for (const grammar::CountItem& c : items) sizes.list.push_back(located(c.value));
    return sizes;
  }
  for (std::uint64_t v :
       grammar::expand_counts(option, items, {1, kernels::max_elements}, max_grid_sizes))
    sizes.list.push_back(located(v));
  return sizes;
}

RawValue parse_override(const OverrideSpec& spec, const KeySpec& key, const std::string& text) {
  const std::string where = "--" + std::string(spec.flag);
  switch (key.kind) {
    case KeyKind::integer:
      if (auto v = parse_integer_text(text)) return *v;
      bad_flag(spec.flag, "'" + text + "' is not an integer");
    case KeyKind::number:
      if (auto v = parse_number_text(text)) return *v;
      bad_flag(spec.flag, "'" + text + "' is not a number");
    case KeyKind::boolean:
      if (auto v = parse_bool_text(text)) return *v;
      bad_flag(spec.flag, "'" + text + "' is not on or off");
    case KeyKind::string:
      return std::string(trim(text));
    case KeyKind::string_list: {
      if (trim(text) == "all") return std::string("all");
      std::vector<Located<std::string>> out;
      // Nothing at all: an empty list (--seg-keys '' tunes no segmented key; elsewhere the
      // validator says the list is empty).
      if (trim(text).empty()) return out;
      for (const std::string& item : split_list(text)) {
        if (item.empty()) bad_flag(spec.flag, "empty item in '" + text + "'");
        out.push_back({item, where});
      }
      return out;
    }
    case KeyKind::integer_list: {
      if (trim(text) == "all") return std::string("all");
      std::vector<Located<std::int64_t>> out;
      for (const std::string& item : split_list(text)) {
        auto v = parse_integer_text(item);
        if (!v) bad_flag(spec.flag, "'" + item + "' is not an integer");
        out.push_back({*v, where});
      }
      return out;
    }
    case KeyKind::sizes:
      return parse_sizes_text(spec.flag, text, where);
  }
  bad_flag(spec.flag, "unsupported key kind");
}

}  // namespace

std::span<const OverrideSpec> override_specs() {
  using O = ConfigOverrides;
  static const OverrideSpec specs[] = {
      {&O::families, "families", "space.families"},
      {&O::blocks, "blocks", "space.blocks"},
      {&O::unrolls, "unrolls", "space.unrolls"},
      {&O::smem, "smem", "space.smem"},
      {&O::finishes, "finishes", "space.finishes"},
      {&O::dtypes, "dtypes", "space.dtypes"},
      {&O::ops, "ops", "space.ops"},
      {&O::sizes, "sizes", "space.sizes"},
      {&O::strategy, "strategy", "strategy.name"},
      {&O::seed, "seed", "strategy.seed"},
      {&O::random_count, "random-count", "strategy.random.count"},
      {&O::random_seconds, "random-seconds", "strategy.random.seconds"},
      {&O::halving_keep, "halving-keep", "strategy.halving.keep"},
      {&O::halving_first_repeats, "halving-first-repeats", "strategy.halving.first_repeats"},
      {&O::halving_growth, "halving-growth", "strategy.halving.growth"},
      {&O::halving_final_size, "halving-final-size", "strategy.halving.final_size"},
      {&O::warmup, "warmup", "measure.warmup"},
      {&O::repeats, "repeats", "measure.min_repeats"},
      {&O::repeats, "repeats", "measure.max_repeats"},
      {&O::min_repeats, "min-repeats", "measure.min_repeats"},
      {&O::max_repeats, "max-repeats", "measure.max_repeats"},
      {&O::budget_ms, "budget-ms", "measure.budget_ms"},
      {&O::target_spread, "target-spread", "measure.target_spread"},
      {&O::l2, "l2", "measure.l2"},
      {&O::timeout_s, "timeout", "measure.timeout_s"},
      {&O::bisect, "bisect", "bisect.enabled"},
      {&O::bisect_depth, "bisect-depth", "bisect.max_depth"},
      {&O::bisect_precision, "bisect-precision", "bisect.precision"},
      {&O::seg_keys, "seg-keys", "segmented.keys"},
      {&O::seg_families, "seg-families", "segmented.families"},
      {&O::seg_layouts, "seg-layouts", "segmented.layouts"},
      {&O::seg_sizes, "seg-sizes", "segmented.segment_sizes"},
      {&O::seg_counts, "seg-counts", "segmented.segment_counts"},
      {&O::seg_max_total, "seg-max-total", "segmented.max_total"},
  };
  return specs;
}

void apply_overrides(RawConfig& raw, const ConfigOverrides& o) {
  for (const OverrideSpec& spec : override_specs()) {
    const std::optional<std::string>& text = o.*(spec.member);
    if (!text) continue;
    const KeySpec* key = find_key(spec.key);
    if (!key) throw std::logic_error("override of unknown key " + std::string(spec.key));
    raw.values[std::string(spec.key)] =
        Located<RawValue>{parse_override(spec, *key, *text), "--" + std::string(spec.flag)};
  }
  // --repeats and --min-repeats/--max-repeats together: the specific flag wins, as listed last.
}

}  // namespace tunedreduce::tuner
