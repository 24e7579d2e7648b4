#pragma once
// "Did you mean": the valid name nearest to a typo.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tunedreduce::tuner {

/// Levenshtein distance (with transpositions), for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate nearest to \p word when it is close enough to be a plausible typo.
std::optional<std::string> nearest(std::string_view word, std::span<const std::string> candidates);
/// " (did you mean 'NEAREST'?)" for nearest()'s answer, or "" when there is none.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

}  // namespace tunedreduce::tuner
