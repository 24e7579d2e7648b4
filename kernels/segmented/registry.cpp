// The segmented registry with its kernels: the generated instance units
// (kernels/segmented/instance.cu.in, one per (dtype, op)), named and sorted.

#include "kernels/segmented/entries.hpp"

namespace tunedreduce::kernels::segmented {

namespace detail {
// Declarations of the generated instance functions (kernels/CMakeLists.txt writes the list).
#include "seg_instances_index.inc"
}  // namespace detail

std::span<const SegEntry> seg_registry() {
  static const SegTable t = [] {
    std::vector<SegEntry> raw;
    for (auto part : detail::seg_instance_parts)
      if (part)
        for (const SegEntry& e : part()) raw.push_back(e);
    return make_table(std::move(raw));
  }();
  return t.entries;
}

}  // namespace tunedreduce::kernels::segmented
