#pragma once
// What the library needs to know about an entry's use of its workspace, from its parameters
// alone (runtime/runtime.cpp reads these rather than testing families itself).

#include "kernels/registry.hpp"

namespace tunedreduce::kernels {

/// Whether a launch of \p p leaves the workspace as clean as it found it (zero where the next
/// launch's counter and slots must be): every family's finish does but the exact ones', which
/// leave their slots written. The library tracks a cached workspace's state by it.
constexpr bool leaves_workspace_clean(const KernelParams& p) { return !is_exact_family(p.family); }

/// Whether the library gives a launch of \p p a completion counter of its own outside the
/// workspace (LaunchArgs::counter): the exact families, whose workspace is seldom clean when the
/// next launch comes (leaves_workspace_clean), so the counter spares their single_pass finish
/// the memset of its ticket.
constexpr bool takes_library_counter(const KernelParams& p) { return is_exact_family(p.family); }

}  // namespace tunedreduce::kernels
