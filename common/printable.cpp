#include "common/printable.hpp"

#include <fmt/format.h>

namespace tunedreduce {

std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  const std::string_view shown = s.substr(0, max);
  out.reserve(shown.size());
  for (const char ch : shown) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\') out += "\\\\";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += ch;
  }
  if (s.size() > max) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

std::string printable_message(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += ch;
  }
  return out;
}

}  // namespace tunedreduce
