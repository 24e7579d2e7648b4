#pragma once
// The worker process: `tunedreduce _worker` (hidden). It owns the CUDA context; the supervisor
// talks to it through tuner/protocol.hpp.

#include <span>

#include "kernels/registry.hpp"

namespace tunedreduce::tuner {

/// Runs the worker loop on stdin/stdout. \p extra_entries are looked up after the registry (the
/// test build adds kernels that trap or never return). Returns the process exit code.
int worker_main(int argc, char** argv, std::span<const kernels::Entry> extra_entries = {});

}  // namespace tunedreduce::tuner
