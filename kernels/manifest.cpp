#include "kernels/manifest.hpp"

#include <algorithm>
#include <vector>

#include "common/hash.hpp"
#include "kernels/revision.hpp"
#include "kernels/space.hpp"

namespace tunedreduce::kernels {

namespace {

struct Manifest {
  std::vector<ManifestEntry> entries;
  std::string hash;
};

const Manifest& the_manifest() {
  static const Manifest m = [] {
    Manifest m;
    for (DType d : all_dtypes)
      for (Op o : all_ops)
        space::for_each_config(d, o, [&](const KernelParams& p) {
          m.entries.push_back({p, make_id(p)});
        });
    std::sort(m.entries.begin(), m.entries.end(),
              [](const ManifestEntry& a, const ManifestEntry& b) { return a.id < b.id; });
    std::uint64_t h = fnv1a64("kernel_revision=" + std::to_string(kernel_revision) + "\n");
    for (const ManifestEntry& e : m.entries) h = fnv1a64("\n", fnv1a64(e.id, h));
    m.hash = hex64(h);
    return m;
  }();
  return m;
}

}  // namespace

std::span<const ManifestEntry> manifest() { return the_manifest().entries; }

const ManifestEntry* manifest_find(std::string_view id) {
  const auto& es = the_manifest().entries;
  auto it = std::lower_bound(es.begin(), es.end(), id,
                             [](const ManifestEntry& e, std::string_view v) { return e.id < v; });
  return (it != es.end() && it->id == id) ? &*it : nullptr;
}

const std::string& manifest_hash() { return the_manifest().hash; }

CandidateParams stored_params(const KernelParams& p) {
  CandidateParams c;
  c.family = family_name(p.family);
  c.block = p.block;
  c.unroll = p.unroll;
  c.smem = smem_mode_name(p.smem);
  c.finish = finish_name(p.finish);
  return c;
}

}  // namespace tunedreduce::kernels
