#pragma once
// One key of tune.toml as the schema lists it (tuner/config/schema.hpp): its path, kind, help and,
// for a scalar, where its value is kept and which values it takes. A strategy declares its own
// keys with this type beside its implementation (tuner/strategies.cpp); the schema adds them.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace tunedreduce::tuner {

struct TuneConfig;

/// The kind of value a key takes.
enum class KeyKind { integer, number, boolean, string, string_list, integer_list, sizes };

/// The values a scalar key takes: from lo to hi, either end open; the validator reports any other
/// value with \p message, in which "{}" stands for the value.
struct Bounds {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
  std::string_view message;

  constexpr bool admits(double v) const {
    return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  }
};

/// Where a scalar key's value is kept in the configuration.
template <class T>
using Accessor = T& (*)(TuneConfig&);
using Field = std::variant<std::monostate, Accessor<int>, Accessor<double>, Accessor<bool>,
                           Accessor<std::uint64_t>, Accessor<std::optional<std::int64_t>>,
                           Accessor<std::optional<double>>>;

/// The field reached from a TuneConfig through members: member<&TuneConfig::bisect,
/// &BisectConfig::max_depth>(). Instantiate it where TuneConfig is complete.
template <auto... Path>
constexpr Field member() {
  return +[](TuneConfig & c) -> auto& { return (c.*....*Path); };
}

struct KeySpec {
  std::string_view path;  // "measure.min_repeats"
  KeyKind kind;
  std::string_view help;  // one line, for --help and messages
  /// A scalar the validator checks against bounds and stores (integer, number and boolean keys
  /// without a rule of their own), or empty for a key the validator checks by its own code.
  Field field{};
  std::optional<Bounds> bounds{};
  /// The value in the canonical text, for a key without a field.
  std::string (*canonical)(const TuneConfig&) = nullptr;
};

}  // namespace tunedreduce::tuner
