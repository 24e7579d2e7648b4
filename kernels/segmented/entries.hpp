#pragma once
// What the two segmented registries (with kernels: registry.cpp; without: host_registry.cpp)
// share: naming and sorting their entries.

#include <deque>
#include <string>
#include <vector>

#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::kernels::segmented {

struct SegTable {
  std::vector<SegEntry> entries;  // sorted by id
  std::deque<std::string> ids;    // stable storage for SegEntry::id
};

/// \p raw named (make_seg_id) and sorted by id.
SegTable make_table(std::vector<SegEntry> raw);

}  // namespace tunedreduce::kernels::segmented
