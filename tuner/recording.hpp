#pragma once
// What a runner that records into the tuning database (the GPU runner) tells `tunedreduce tune`
// after the search, so that it can store the winners and end the run. A mixin: the GPU runner
// derives from Runner and RecordingRunner, and the CLI finds it with dynamic_cast. Without it the
// CLI falls back to the device row of the probed fingerprint and the latest `running` run with
// this configuration's hash.

#include <cstdint>

namespace tunedreduce::tuner {

class RecordingRunner {
 public:
  virtual ~RecordingRunner() = default;
  /// The devices row of the runner's GPU.
  virtual std::int64_t device_id() const = 0;
  /// The run the runner began (db::Database::begin_run); the CLI ends it.
  virtual std::int64_t run_id() const = 0;
};

}  // namespace tunedreduce::tuner
