#pragma once
// Text from files and databases shown on a terminal: control characters escaped, long text cut.

#include <cstddef>
#include <string>
#include <string_view>

namespace tunedreduce {

/// \p s with every control character (below 0x20, and 0x7f) and backslash written as \xNN (a
/// backslash as \\), so that no escape sequence from a file or a database reaches the terminal;
/// cut after \p max bytes with "... (N bytes)".
std::string printable(std::string_view s, std::size_t max = 200);

/// A message for the terminal (an error, a warning) whose parts may come from files and
/// databases: every control character but the line feed and the tab escaped as \xNN, never cut.
std::string printable_message(std::string_view s);

}  // namespace tunedreduce
