#include "tuner/search_space.hpp"

#include <algorithm>

#include "kernels/manifest.hpp"
#include "kernels/space.hpp"

namespace tunedreduce::tuner {

namespace {

template <class V, class T>
bool contains(const V& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The axes each family compiles (kernels/space.hpp): a family whose only unroll factor is 1 has
// no unroll axis; only a family with a mode other than `none` has a shared-memory axis.
bool has_unroll_axis(kernels::Family f) {
  for (const auto& fam : kernels::space::families)
    if (fam.family == f)
      return std::any_of(fam.unrolls.begin(), fam.unrolls.end(), [](int u) { return u > 1; });
  return false;
}

bool has_smem_axis(kernels::Family f) {
  for (const auto& fam : kernels::space::families)
    if (fam.family == f)
      for (int m = 0; m < fam.n_modes; ++m)
        if (fam.modes[m] != kernels::SmemMode::none) return true;
  return false;
}

}  // namespace

bool selects(const SpaceConfig& s, const kernels::KernelParams& p) {
  return contains(s.dtypes, p.dtype) && contains(s.ops, p.op) && contains(s.families, p.family) &&
         contains(s.blocks, p.block) && contains(s.finishes, p.finish) &&
         (!has_unroll_axis(p.family) || contains(s.unrolls, p.unroll)) &&
         (!has_smem_axis(p.family) || contains(s.smem, p.smem));
}

std::vector<std::string> candidates_for(const SpaceConfig& s, DType dtype, Op op) {
  std::vector<std::string> out;
  for (const kernels::ManifestEntry& e : kernels::manifest())
    if (e.params.dtype == dtype && e.params.op == op && selects(s, e.params)) out.push_back(e.id);
  return out;
}

bool takes(std::string_view id, std::uint64_t n) {
  const kernels::ManifestEntry* e = kernels::manifest_find(id);
  return e && n <= kernels::max_elements_of(e->params);
}

std::vector<std::string> KeySpace::candidates_at(std::uint64_t n) const {
  std::vector<std::string> out;
  out.reserve(candidates.size());
  for (const std::string& id : candidates)
    if (takes(id, n)) out.push_back(id);
  return out;
}

std::size_t KeySpace::count_at(std::uint64_t n) const {
  return static_cast<std::size_t>(
      std::count_if(candidates.begin(), candidates.end(),
                    [n](const std::string& id) { return takes(id, n); }));
}

std::vector<KeySpace> enumerate_space(const SpaceConfig& s) {
  std::vector<KeySpace> out;
  for (DType t : s.dtypes)
    for (Op o : s.ops) {
      // exact_sum of an integer type, wide_sum of a 64-bit type and sum, min, max, argmin or
      // argmax of a half type do not exist: no key. Nor does a key none of the selected
      // families implements (validation refuses that where the operator was asked for; the
      // default's wide_sum, argmin and argmax with only other families selected are left out).
      if (!op_applies(t, o)) continue;
      KeySpace k{t, o, candidates_for(s, t, o), s.sizes};
      if (!k.candidates.empty()) out.push_back(std::move(k));
    }
  return out;
}

std::size_t total_measurements(const std::vector<KeySpace>& keys) {
  std::size_t n = 0;
  for (const KeySpace& k : keys)
    for (std::uint64_t size : k.sizes) n += k.count_at(size);
  return n;
}

}  // namespace tunedreduce::tuner
