#pragma once
// A tune.toml as read, before validation: key path -> typed value, each with where it came from.
// Reading (read_toml.hpp) and the flags (overrides.hpp) write it; validate.hpp checks it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tunedreduce::tuner {

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

using RawValue =
    std::variant<std::int64_t, double, bool, std::string, std::vector<Located<std::string>>,
                 std::vector<Located<std::int64_t>>, RawSizes>;

/// A parsed but not yet validated tune.toml: key path -> typed value, with positions. Types are
/// already checked (an integer key holds an integer); values are not.
struct RawConfig {
  std::string file;  // as given, for messages
  std::map<std::string, Located<RawValue>> values;
};

}  // namespace tunedreduce::tuner
