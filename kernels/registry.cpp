// The registry table: gathers the generated instance slices and the exact families' entries
// (kernels/exact_entries.cpp), names and sorts them.

#include "kernels/registry.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <vector>

#include "kernels/exact_entries.hpp"
#include "kernels/find_by_id.hpp"

namespace tunedreduce::kernels {

namespace detail {
// Declarations of the generated instance functions (kernels/CMakeLists.txt writes the list).
#include "instances_index.inc"
}  // namespace detail

namespace {

struct Table {
  std::vector<Entry> entries;
  std::deque<std::string> ids;  // stable storage for Entry::id
};

const Table& table() {
  static const Table t = [] {
    Table t;
    auto add = [&t](const Entry& e) {
      Entry named = e;
      named.id = t.ids.emplace_back(make_id(e.params)).c_str();
      t.entries.push_back(named);
    };
    for (auto part : detail::all_instance_parts())
      for (const Entry& e : part()) add(e);
    for (const Entry& e : detail::exact_entries()) add(e);
    std::sort(t.entries.begin(), t.entries.end(),
              [](const Entry& a, const Entry& b) { return std::string_view(a.id) < b.id; });
    return t;
  }();
  return t;
}

}  // namespace

std::span<const Entry> registry() { return table().entries; }

const Entry* find(std::string_view id) { return detail::find_by_id(table().entries, id); }

const Entry* find(const KernelParams& p) { return find(make_id(p)); }

}  // namespace tunedreduce::kernels
