#include "tuner/config/canonical.hpp"

#include <stdexcept>
#include <type_traits>

#include "common/hash.hpp"
#include "tuner/config/schema.hpp"

namespace tunedreduce::tuner {

std::string canonical_number(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

std::string canonical_value(const KeySpec& key, const TuneConfig& c) {
  if (key.canonical) return key.canonical(c);
  // An accessor only reads here: the configuration is not changed.
  TuneConfig& config = const_cast<TuneConfig&>(c);
  return std::visit(
      [&](auto at) -> std::string {
        using A = decltype(at);
        if constexpr (std::is_same_v<A, std::monostate>) {
          throw std::logic_error("tune.toml key " + std::string(key.path) + " has no value");
        } else {
          const auto& v = at(config);
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
          else if constexpr (std::is_same_v<T, double>) return canonical_number(v);
          else if constexpr (std::is_same_v<T, std::optional<double>>)
            return v ? canonical_number(*v) : "none";
          else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>)
            return v ? std::to_string(*v) : "none";
          else return std::to_string(v);
        }
      },
      key.field);
}

std::string canonical_text(const TuneConfig& c) {
  std::string text;
  for (const KeySpec& k : config_keys()) {
    // Without a segmented key [segmented] asks for nothing: its lines are left out, so a
    // configuration that tunes no segmented key has the text (and the hash) it had before the
    // section existed, and so have the runs that recorded it.
    if (c.segmented.keys.empty() && k.path.starts_with("segmented.")) continue;
    text += k.path;
    text += '=';
    text += canonical_value(k, c);
    text += '\n';
  }
  return text;
}

std::string config_hash(const TuneConfig& c) { return hex64(fnv1a64(canonical_text(c))); }

}  // namespace tunedreduce::tuner
