#pragma once
// Which GPUs `tunedreduce tune` measures: --devices, and one device per model.

#include <string>
#include <utility>
#include <vector>

#include "common/device_fingerprint.hpp"

namespace tunedreduce::tuner {

using ProbedDevice = std::pair<int, DeviceFingerprint>;  // ordinal, fingerprint

/// --devices: "all" or a comma-separated list of ordinals among \p probed (repeats count once).
/// Throws Error(exit_code::usage) naming the bad item, or the devices there are.
std::vector<ProbedDevice> select_devices(const std::string& text,
                                         const std::vector<ProbedDevice>& probed);

struct DeviceChoice {
  std::vector<ProbedDevice> tuned;  // the first selected device of each model, in order
  /// (skipped ordinal, the ordinal tuned in its place): same fingerprint key, so the same
  /// device row, runs and winners in the database; measuring it too would only race.
  std::vector<std::pair<int, int>> same_model;
};

/// Keeps one device per model (DeviceFingerprint::key()) of \p selected.
DeviceChoice one_per_model(const std::vector<ProbedDevice>& selected);

}  // namespace tunedreduce::tuner
