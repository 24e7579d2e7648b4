#pragma once
// A Runner that answers from measurements recorded in a tuning database instead of a GPU, so the
// strategies, the bisection and the driver run in CI (`tunedreduce tune --replay DB`).
//
// A request (kernel id, n) is matched by kernel id, the dtype and op its id names, n and the L2
// mode, on one device; a segmented request by its segment size too (a whole-array request only
// by measurements without one). Of several recorded measurements the replay takes, in this
// order:
//   1. `incorrect` if any is: a kernel that was once wrong is never a winner;
//   2. an ok one: the one with the fewest repeats at or above the repeats asked for (the
//      request's min_repeats, else the policy's), else the one with the most repeats; the
//      latest (highest id) among equals;
//   3. the latest other final outcome (launch_failed), then the latest crashed or timeout.
// A request with no recorded measurement is answered `launch_failed` with the error
// "not recorded in the replay database: ..." (or throws, with ReplayOptions::strict), and
// counted in missing().

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "db/database.hpp"
#include "tuner/runner.hpp"

namespace tunedreduce::tuner {

struct ReplayOptions {
  std::int64_t device_id = 0;
  MeasurePolicy policy;  // its l2 mode selects the measurements; min_repeats the default ask
  bool strict = false;   // a missing measurement throws Error instead of failing the request
};

class ReplayRunner : public Runner {
 public:
  /// Loads every measurement of the device in the policy's L2 mode.
  ReplayRunner(db::Database& db, const ReplayOptions& options);

  std::vector<Result> measure(std::span<const Request> requests) override;
  std::optional<double> attainable_gbps() const override { return attainable_; }

  std::size_t answered() const { return answered_; }
  std::size_t missing() const { return missing_; }
  std::size_t recorded() const { return recorded_; }
  const std::string& label() const { return label_; }

 private:
  // kernel id, n, segment size (0: whole-array); dtype and op are in the id.
  using Key = std::tuple<std::string, std::uint64_t, std::uint64_t>;
  std::map<Key, std::vector<db::MeasurementRecord>> by_key_;
  ReplayOptions options_;
  std::optional<double> attainable_;
  std::string label_;  // the database path and device key, for messages
  std::size_t answered_ = 0, missing_ = 0, recorded_ = 0;
};

/// The device of a replay database: \p selector is a fingerprint key, a device id, or a part of
/// the device name; empty selects the only device. Throws Error(usage) naming the devices when
/// the choice is ambiguous or matches none.
db::DeviceRecord choose_replay_device(db::Database& db, const std::optional<std::string>& selector);

}  // namespace tunedreduce::tuner
