// The segmented registry without kernels: every entry of kernels/segmented/space.hpp, whose
// launch returns cudaErrorNoKernelImageForDevice (kernels/host_registry.cpp's counterpart), and
// so does the offsets check.

#include "kernels/segmented/check.hpp"
#include "kernels/segmented/entries.hpp"
#include "kernels/segmented/space.hpp"

namespace tunedreduce::kernels::segmented {

namespace {
cudaError_t no_kernel(const SegLaunchArgs&, const DeviceLimits&) {
  return cudaErrorNoKernelImageForDevice;
}
}  // namespace

cudaError_t find_bad_offsets(bool, const void*, const void*, std::uint64_t, unsigned long long*,
                             cudaStream_t, OffsetsVerdict& verdict) {
  verdict = {};
  return cudaErrorNoKernelImageForDevice;
}

std::span<const SegEntry> seg_registry() {
  static const SegTable t = [] {
    std::vector<SegEntry> raw;
    for (DType d : all_dtypes)
      for (Op o : all_ops)
        space::for_each_config(d, o, [&](const SegParams& p) {
          raw.push_back(SegEntry{p, nullptr, &no_kernel});
        });
    return make_table(std::move(raw));
  }();
  return t.entries;
}

}  // namespace tunedreduce::kernels::segmented
