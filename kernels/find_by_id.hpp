#pragma once
// The lookup by id that both registries (registry.cpp, host_registry.cpp) answer find() with.

#include <algorithm>
#include <span>
#include <string_view>

#include "kernels/registry.hpp"

namespace tunedreduce::kernels::detail {

/// The entry of \p entries (sorted by id) whose id is \p id, or nullptr.
inline const Entry* find_by_id(std::span<const Entry> entries, std::string_view id) {
  auto it = std::lower_bound(entries.begin(), entries.end(), id,
                             [](const Entry& e, std::string_view v) { return e.id < v; });
  return (it != entries.end() && it->id == id) ? &*it : nullptr;
}

}  // namespace tunedreduce::kernels::detail
