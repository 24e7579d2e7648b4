#pragma once
// The registry ids of a deployment kernel list (`tunedreduce deploy`'s output): one a line,
// `#` lines are comments.

#include <sstream>
#include <string>
#include <vector>

namespace tunedreduce::test {

inline std::vector<std::string> ids_of_list(const std::string& text) {
  std::vector<std::string> ids;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') ids.push_back(line);
  return ids;
}

}  // namespace tunedreduce::test
