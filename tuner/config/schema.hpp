#pragma once
// The schema of tune.toml: every key, once, in the order of the canonical text. A key's path,
// kind and help are written here — or, for a strategy's options, beside the strategy
// (tuner/strategies.cpp) — and nowhere else: reading, overrides, validation and the canonical
// text all look keys up here.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/config/key.hpp"

namespace tunedreduce::tuner {

/// Every key tune.toml may contain: [space], [measure], [strategy] with the options of every
/// strategy (strategies()), [bisect], [segmented].
std::span<const KeySpec> config_keys();

/// The key at \p path ("measure.warmup"), or nullptr.
const KeySpec* find_key(std::string_view path);

/// Whether \p path ("strategy.random") is a table: a prefix of some key.
bool is_table_path(std::string_view path);

/// The names directly under \p prefix ("" for the top level), keys and tables, in schema order.
std::vector<std::string> children_of(std::string_view prefix);

/// What a key of \p kind holds, for messages: "an array of strings (or \"all\")".
std::string kind_phrase(KeyKind kind);

}  // namespace tunedreduce::tuner
