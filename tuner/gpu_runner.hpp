#pragma once
// The GPU runner: a supervisor (no CUDA context) that measures requests in worker processes on
// one GPU and records every result in the tuning database. Implemented by the GPU side of the
// tuner; until then tuner/gpu_runner_stub.cpp stands in.

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/device_fingerprint.hpp"
#include "tuner/runner.hpp"

namespace tunedreduce::tuner {

struct GpuRunnerOptions {
  int device = 0;
  MeasurePolicy policy;
  bool retune = false;
  std::filesystem::path db_path;
  std::string config_hash;
  std::atomic<bool>* cancel = nullptr;
};

/// Spawns and supervises worker processes on one GPU, records every result in the database.
/// Throws Error(exit_code::no_gpu) when there is no GPU.
std::unique_ptr<Runner> make_gpu_runner(const GpuRunnerOptions& opt);

/// Device ordinals and fingerprints, asked of a worker process (the supervisor never creates a
/// CUDA context).
std::vector<std::pair<int, DeviceFingerprint>> probe_devices();

}  // namespace tunedreduce::tuner
