#pragma once
// Internal to tuner/config/: every problem of a configuration, reported together.

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace tunedreduce::tuner::detail {

/// Every problem found, reported together in one Error(usage): one line each, "WHERE: message".
class Diagnostics {
 public:
  void add(const std::string& where, const std::string& message) {
    lines_.push_back(where.empty() ? message : where + ": " + message);
  }
  bool empty() const { return lines_.empty(); }
  std::size_t size() const { return lines_.size(); }
  void throw_if_any() const {
    if (lines_.empty()) return;
    std::string text;
    for (const std::string& l : lines_) {
      if (!text.empty()) text += "\n";
      text += l;
    }
    throw Error(text, exit_code::usage);
  }

 private:
  std::vector<std::string> lines_;
};

/// "a, b, c": the items as a stream writes them.
inline std::string join(const auto& items, std::string_view sep = ", ") {
  std::ostringstream s;
  bool first = true;
  for (const auto& i : items) {
    if (!first) s << sep;
    s << i;
    first = false;
  }
  return s.str();
}

}  // namespace tunedreduce::tuner::detail
