// A registry without kernels: every entry of the space (kernels/space.hpp, through the manifest)
// with its geometry and none of its code. Its entries answer workspace_bytes, can_implement and
// grid_size as the compiled ones do (occupancy estimated from the device's limits, as the
// compiled ones do where the occupancy calculator cannot answer); launch returns
// cudaErrorNoKernelImageForDevice, and so does counter_table (there is no module to hold the
// two-phase call's counters). For the programs that look up and never launch: the lookup
// bench and the runtime's and CLI's host tests (docs/library.md).

#include <algorithm>
#include <vector>

#include "kernels/counters.hpp"
#include "kernels/find_by_id.hpp"
#include "kernels/manifest.hpp"
#include "kernels/registry.hpp"

namespace tunedreduce::kernels {

namespace {

cudaError_t no_kernel(const LaunchArgs&, const DeviceLimits&) {
  return cudaErrorNoKernelImageForDevice;
}

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = [] {
    std::vector<Entry> t;
    for (const ManifestEntry& m : manifest())  // sorted by id
      t.push_back(Entry{m.params, m.id.c_str(), &no_kernel, nullptr});
    return t;
  }();
  return t;
}

}  // namespace

std::span<const Entry> registry() { return table(); }

const Entry* find(std::string_view id) { return detail::find_by_id(table(), id); }

const Entry* find(const KernelParams& p) { return find(make_id(p)); }

cudaError_t counter_table(unsigned long long** table) {
  *table = nullptr;
  return cudaErrorNoKernelImageForDevice;
}

}  // namespace tunedreduce::kernels
