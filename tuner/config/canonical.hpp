#pragma once
// The canonical text of an effective configuration: every key of the schema, in its order, as
// "path=value" lines; its FNV-1a hash is the run's config_hash in the database. Runs store that
// hash, so the text of an unchanged tune.toml must never change (tests/tuner/test_config.cpp
// pins it).

#include <sstream>
#include <string>

#include "tuner/config/key.hpp"
#include "tuner/config/tune_config.hpp"

namespace tunedreduce::tuner {

/// Every key, fixed order, one "path=value" line each; the keys of [segmented] only where it
/// selects a segmented key.
std::string canonical_text(const TuneConfig& c);
/// The hash of canonical_text (16 hex digits): the run's config_hash.
std::string config_hash(const TuneConfig& c);

/// One key's value as canonical_text writes it: integers in decimal, numbers with 17
/// significant digits, "none" for an unset option, lists comma-separated.
std::string canonical_value(const KeySpec& key, const TuneConfig& c);

/// A number with 17 significant digits (every double reads back exactly).
std::string canonical_number(double v);

/// A list, comma-separated, each item as a stream writes name(item).
template <class V, class Name>
std::string canonical_list(const V& items, Name name) {
  std::ostringstream s;
  bool first = true;
  for (const auto& i : items) {
    s << (first ? "" : ",") << name(i);
    first = false;
  }
  return s.str();
}
template <class V>
std::string canonical_list(const V& items) {
  return canonical_list(items, [](const auto& x) { return x; });
}

}  // namespace tunedreduce::tuner
