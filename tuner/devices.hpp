#pragma once
// Which GPUs `tunedreduce tune` measures: --devices, grouped by model (the GPUs of one model
// share its work).

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
  /// (ordinal, the first device of its model): same fingerprint key, so the same device row,
  /// run and winners in the database; it measures a share of that model's work in that run.
  std::vector<std::pair<int, int>> same_model;
};

/// Groups \p selected by model (DeviceFingerprint::key()): the first device of each model, and
/// the others of that model that share its work.
DeviceChoice one_per_model(const std::vector<ProbedDevice>& selected);

}  // namespace tunedreduce::tuner
