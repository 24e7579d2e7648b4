// Issue 14 experiment: the project's JSON reader/writer (common/json.cpp) against nlohmann/json
// (Debian nlohmann-json3-dev, ordered_json so members keep their order, as ours do) on a real
// export. Needs `apt-get install nlohmann-json3-dev` (not a dependency of the product). Build and
// run from the repository root (after a build of the project):
//   g++ -O2 -std=c++20 -I. -Iinclude -Ibuild/generated -o /tmp/json_parsers \
//     bench/experiments/json_parsers.cpp common/json.cpp
//   build/bin/tunedreduce db export --db tests/data/h100-sample.db -o /tmp/export.json
//   /tmp/json_parsers /tmp/export.json
// Prints the median of 7 runs of: parse, pretty dump (indent 2, as `db export`), and whether
// both parsers' values dump to the same text.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace {

double median_ms(const std::function<void()>& f) {
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: json_parsers EXPORT.json\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  tunedreduce::Json ours;
  nlohmann::ordered_json theirs;
  const double p_ours = median_ms([&] { ours = tunedreduce::Json::parse(text); });
  const double p_theirs = median_ms([&] { theirs = nlohmann::ordered_json::parse(text); });
  std::string d_ours, d_theirs;
  const double w_ours = median_ms([&] { d_ours = ours.dump(2); });
  const double w_theirs = median_ms([&] { d_theirs = theirs.dump(2); });
  std::printf("%zu bytes\n", text.size());
  std::printf("parse: ours %.1f ms (%.0f MB/s), nlohmann %.1f ms (%.0f MB/s)\n", p_ours,
              text.size() / p_ours / 1e3, p_theirs, text.size() / p_theirs / 1e3);
  std::printf("dump(2): ours %.1f ms, nlohmann %.1f ms\n", w_ours, w_theirs);
  std::printf("same text: %s (ours %zu bytes, nlohmann %zu bytes)\n",
              d_ours == d_theirs ? "yes" : "no", d_ours.size(), d_theirs.size());
  if (d_ours != d_theirs) {
    std::size_t i = 0;
    while (i < d_ours.size() && i < d_theirs.size() && d_ours[i] == d_theirs[i]) ++i;
    std::printf("first difference at byte %zu:\n  ours:     %s\n  nlohmann: %s\n", i,
                d_ours.substr(i > 40 ? i - 40 : 0, 100).c_str(),
                d_theirs.substr(i > 40 ? i - 40 : 0, 100).c_str());
  }
  return 0;
}
