#include "tuner/config/suggest.hpp"

#include <algorithm>
#include <vector>

namespace tunedreduce::tuner {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and transpositions of two
  // neighbouring characters ("stpe" -> "step") each cost 1.
  const std::size_t w = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * w);
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      std::size_t v =
          std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      d[i * w + j] = v;
    }
  return d[a.size() * w + b.size()];
}

std::optional<std::string> nearest(std::string_view word, std::span<const std::string> candidates) {
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_d) {
      best = c;
      best_d = d;
    }
  }
  // A plausible typo: at most a third of the word (1 to 3 edits), or one name extending the
  // other ("measurement" for "measure", "unroll" for "unrolls").
  const std::size_t limit = std::clamp<std::size_t>((word.size() + 1) / 3, 1, 3);
  if (best && best_d <= limit) return best;
  for (const std::string& c : candidates) {
    const std::string_view shorter = c.size() < word.size() ? std::string_view(c) : word;
    const std::string_view longer = c.size() < word.size() ? word : std::string_view(c);
    if (shorter.size() >= 4 && longer.substr(0, shorter.size()) == shorter) return c;
  }
  return std::nullopt;
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  const std::optional<std::string> near = nearest(word, candidates);
  return near ? " (did you mean '" + *near + "'?)" : std::string();
}

}  // namespace tunedreduce::tuner
