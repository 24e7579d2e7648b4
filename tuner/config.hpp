#pragma once
// tune.toml: parsing (toml++), command-line overrides and validation against the registry's
// manifest, all before any GPU work. Every key is described in docs/tuning.md.
//
//   RawConfig raw = parse_config_file("tune.toml");   // syntax and types, with source positions
//   apply_overrides(raw, overrides);                    // --blocks 128,256 ... (typed as strings)
//   TuneConfig cfg = validate_config(raw);              // values, registry, empty space
//
// Every problem found is reported at once, one line each, as
// "FILE:LINE:COLUMN: KEY.PATH: message" (or "--flag: message" for an override), in one
// tunedreduce::Error with exit_code::usage.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kernels/registry.hpp"
#include "tuner/runner.hpp"
#include "tuner/strategies.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce::tuner {

// --- the validated configuration ----------------------------------------------------------------

/// [space]: what is searched. Every list is non-empty, duplicate-free, in the order given.
struct SpaceConfig {
  std::vector<kernels::Family> families;
  std::vector<int> blocks;
  std::vector<int> unrolls;  // ignored for families without an unroll factor
  std::vector<kernels::SmemMode> smem;  // static/dynamic; ignored for families other than smem
  std::vector<kernels::Finish> finishes;
  std::vector<DType> dtypes;
  std::vector<Op> ops;
  std::vector<std::uint64_t> sizes;  // ascending, unique, each in [1, kernels::max_elements]
};

/// [bisect]: locating the crossover between neighbouring sizes whose winners differ.
struct BisectConfig {
  bool enabled = true;
  int max_depth = 5;        // at most this many midpoints per crossover
  double precision = 0.05;  // stop once hi / lo <= 1 + precision
};

struct TuneConfig {
  SpaceConfig space;
  MeasurePolicy measure;
  StrategyConfig strategy;
  BisectConfig bisect;
  std::string source;  // the file it was read from ("" when built from defaults only)
};

/// The configuration with every key at its default (docs/tuning.md): the whole compiled space,
/// sizes 2^10 .. 2^30 by factor 2, halving, cold L2.
TuneConfig default_config();

// --- parsing ------------------------------------------------------------------------------------

/// A value with where it came from: "tune.toml:12:10: space.blocks[2]", "--blocks" or
/// "default".
template <class T>
struct Located {
  T value{};
  std::string where;
};

/// space.sizes as written: a list, or a range { from, to, step | factor }.
struct RawSizes {
  bool is_range = false;
  std::vector<Located<std::int64_t>> list;
  std::optional<Located<std::int64_t>> from, to, step;
  std::optional<Located<double>> factor;
};

using RawValue = std::variant<std::int64_t, double, bool, std::string,
                              std::vector<Located<std::string>>,
                              std::vector<Located<std::int64_t>>, RawSizes>;

/// A parsed but not yet validated tune.toml: key path -> typed value, with positions. Types are
/// already checked (an integer key holds an integer); values are not.
struct RawConfig {
  std::string file;  // as given, for messages
  std::map<std::string, Located<RawValue>> values;
};

/// The kind of value a key takes.
enum class KeyKind { integer, number, boolean, string, string_list, integer_list, sizes };

struct KeySpec {
  std::string_view path;  // "measure.min_repeats"
  KeyKind kind;
  std::string_view help;  // one line, for --help and messages
};

/// Every key tune.toml may contain.
std::span<const KeySpec> config_keys();

/// Parses TOML text; \p file names it in messages. Throws Error(usage) listing every syntax,
/// unknown-key and type error.
RawConfig parse_config_text(std::string_view text, const std::string& file);
/// Reads and parses a file. Throws Error(usage) when it cannot be read or is invalid.
RawConfig parse_config_file(const std::filesystem::path& path);

// --- command-line overrides ---------------------------------------------------------------------

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
};

/// One override: the flag that gives it and the key it sets.
struct OverrideSpec {
  std::optional<std::string> ConfigOverrides::*member;
  std::string_view flag;  // "blocks" (the CLI adds "--")
  std::string_view key;   // "space.blocks"
};
std::span<const OverrideSpec> override_specs();

/// Replaces the keys given in \p o. Throws Error(usage) naming the flag for text that does not
/// parse as the key's type (values are checked by validate_config).
void apply_overrides(RawConfig& raw, const ConfigOverrides& o);

// --- validation ---------------------------------------------------------------------------------

struct ValidationLimits {
  /// The device's maxThreadsPerBlock, when known: larger blocks are refused.
  std::optional<int> max_threads_per_block;
};

/// Checks every value (ranges, the registry's manifest, a non-empty space) and returns the
/// configuration. Throws Error(usage) listing every problem.
TuneConfig validate_config(const RawConfig& raw, const ValidationLimits& limits = {});

/// parse_config_file + apply_overrides + validate_config.
TuneConfig load_config(const std::filesystem::path& path, const ConfigOverrides& overrides = {},
                       const ValidationLimits& limits = {});

/// Sizes of a range: from, from+step, ... (or from, from*factor, ... rounded, strictly
/// increasing) up to and including to. Throws Error(usage) with \p where for a range that does
/// not advance or has more than max_grid_sizes sizes.
std::vector<std::uint64_t> expand_range(std::uint64_t from, std::uint64_t to,
                                        std::optional<std::uint64_t> step,
                                        std::optional<double> factor,
                                        const std::string& where = "space.sizes");
inline constexpr std::size_t max_grid_sizes = 4096;

/// A canonical text of the effective configuration (every key, fixed order) and its hash (16 hex
/// digits): the run's config_hash in the database.
std::string canonical_text(const TuneConfig& c);
std::string config_hash(const TuneConfig& c);

/// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate nearest to \p word when it is close enough to be a plausible typo.
std::optional<std::string> nearest(std::string_view word, std::span<const std::string> candidates);

}  // namespace tunedreduce::tuner
