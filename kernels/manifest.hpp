#pragma once
// What the registry contains, known without compiling or linking a single kernel: derived from
// kernels/space.hpp on the host. The tuner's validation, `db check` and reports use this, so they
// (and their tests) need no CUDA code; the launchable registry (registry.hpp) has exactly these
// entries, in the same order.

#include <span>
#include <string>
#include <string_view>

#include "common/candidate_params.hpp"
#include "kernels/registry.hpp"

namespace tunedreduce::kernels {

struct ManifestEntry {
  KernelParams params;
  std::string id;
};

/// Every configuration the registry compiles, sorted by id.
std::span<const ManifestEntry> manifest();
/// nullptr when no compiled configuration has that id.
const ManifestEntry* manifest_find(std::string_view id);

/// The parameters as the database stores them (names, so db/ needs no kernels/).
CandidateParams stored_params(const KernelParams& p);

}  // namespace tunedreduce::kernels
