#pragma once
// The GPU runner: measures requests in supervised worker processes on one GPU and records every
// result in the tuning database as it finishes. The supervisor (this side) never creates a CUDA
// context: a worker that crashes, hits a sticky CUDA error or hangs past the timeout is recorded
// as `crashed` or `timeout`, replaced, and the run goes on. make_gpu_runner() wraps it in resume
// (tuner/resume.hpp), which answers what the database already has before the GPU is asked.
// Implemented in tuner/supervisor/.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/device_fingerprint.hpp"
#include "tuner/runner.hpp"

namespace tunedreduce::tuner {

struct GpuRunnerOptions {
  int device = 0;
  MeasurePolicy policy;
  bool retune = false;  // measure again what the database already has
  std::filesystem::path db_path;
  std::string config_hash;
  /// The canonical text config_hash is the hash of (tuner::canonical_text), stored with the run
  /// so that what it asked for is known exactly; empty: not stored.
  std::string config_text;
  std::atomic<bool>* cancel = nullptr;
  /// The worker command; empty: this executable with the hidden `_worker` sub-command.
  std::vector<std::string> worker_command;
  /// Measure the attainable read bandwidth once at the start (recorded with the run).
  bool measure_bandwidth = true;
  /// Another GPU of the same model joining a run that a runner on the model's first GPU began
  /// (`tune --devices` with several GPUs of one model): its results go to that run's device and
  /// run rows, and no device row, run or bandwidth of its own is made. The worker's GPU must have
  /// the fingerprint key given, else the runner throws Error naming both.
  struct Join {
    Recording recording;
    std::string device_key;
    std::optional<double> bandwidth_gbps;  // the first GPU's, for attainable_gbps()
  };
  std::optional<Join> join;
};

/// Spawns and supervises worker processes on one GPU, records every result in the database;
/// what the database has final already is answered from it (resume), unless opt.retune.
/// Throws Error(exit_code::no_gpu) when there is no GPU.
std::unique_ptr<Runner> make_gpu_runner(const GpuRunnerOptions& opt);

/// Device ordinals and fingerprints, asked of a worker process (the supervisor never creates a
/// CUDA context). Throws Error(exit_code::no_gpu) when there is none. \p worker_command as in
/// GpuRunnerOptions.
std::vector<std::pair<int, DeviceFingerprint>> probe_devices(
    const std::vector<std::string>& worker_command = {});

}  // namespace tunedreduce::tuner
