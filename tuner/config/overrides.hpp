#pragma once
// Command-line overrides of tune.toml keys: one flag per key (--blocks 128,256), typed as text,
// parsed as the key's kind and stored in the RawConfig over the file's value, so that the
// validator checks flags and file together.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tuner/config/raw.hpp"

namespace tunedreduce::tuner {

/// Values given on the command line, as typed there; each replaces the key of the file. Lists are
/// comma-separated ("64,128"); sizes take the list form or a range, "FROM..TO*FACTOR" or
/// "FROM..TO+STEP"; a number may be written as B^E ("2^20").
struct ConfigOverrides {
  std::optional<std::string> families, blocks, unrolls, smem, finishes, dtypes, ops, sizes;
  std::optional<std::string> strategy, seed, random_count, random_seconds;
  std::optional<std::string> halving_keep, halving_first_repeats, halving_growth,
      halving_final_size;
  std::optional<std::string> warmup, min_repeats, max_repeats, budget_ms, target_spread, l2,
      timeout_s;
  /// Sets both min_repeats and max_repeats.
  std::optional<std::string> repeats;
  std::optional<std::string> bisect;  // "on" | "off"
  std::optional<std::string> bisect_depth, bisect_precision;
  /// [segmented]: --seg-keys f32.sum,f64.max (or "all", or "" for none), --seg-sizes 1..2^20*4.
  std::optional<std::string> seg_keys, seg_families, seg_layouts, seg_sizes, seg_counts,
      seg_max_total;
};

/// One override: the flag that gives it and the key of the schema it sets.
struct OverrideSpec {
  std::optional<std::string> ConfigOverrides::*member;
  std::string_view flag;  // "blocks" (the CLI adds "--")
  std::string_view key;   // "space.blocks"
};
std::span<const OverrideSpec> override_specs();

/// Replaces the keys given in \p o. Throws Error(usage) naming the flag for text that does not
/// parse as the key's type (values are checked by validate_config).
void apply_overrides(RawConfig& raw, const ConfigOverrides& o);

}  // namespace tunedreduce::tuner
