#pragma once
// Resume: a Runner that answers from the tuning database before it asks the GPU. It wraps a
// recording runner (the GPU runner) and, for each batch, answers every request the database
// already has a final measurement for (ok, incorrect or launch_failed: db::is_final) of the
// runner's device in the run's L2 mode; it passes all the others to the wrapped runner in one
// measure() call, so that runner keeps its pipelining, and returns the results in request order.
//
// A segmented request matches the measurements of its segment size only (and a whole-array one
// those without one). Of several final measurements of a request (kernel id, n, segment size):
//   - a request for a fixed number of repeats (min_repeats == max_repeats after the overrides:
//     halving's early rounds) gets the ok one made with exactly that many, where there is one:
//     the one the same request got when it was first asked, so a resumed run makes the decisions
//     it made then and measures nothing again;
//   - otherwise the one with the most repeats, the latest of equals;
//   - an ok measurement with fewer repeats than the request's min_repeats answers nothing: the
//     request is measured again.
// With `retune` every request is measured. Results the wrapped runner recorded that are final
// answer a later identical request of the same run as well.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "tuner/runner.hpp"

namespace tunedreduce::tuner {

struct ResumeOptions {
  MeasurePolicy policy;           // the run's: its L2 mode selects the measurements
  bool retune = false;            // measure again what the database already has: answer nothing
  std::filesystem::path db_path;  // the database the wrapped runner records into
};

class ResumeRunner final : public Runner {
 public:
  /// \p inner must be a recording runner (recording() set): its device row is the one whose
  /// measurements answer. Opens \p options.db_path read-only (not with retune). Throws Error
  /// when \p inner records nothing, db::DbError when the database cannot be read.
  ResumeRunner(std::unique_ptr<Runner> inner, ResumeOptions options);

  /// The results of \p requests in order. When the wrapped runner is cancelled and returns fewer
  /// results than it was asked, the results up to the first request without one.
  std::vector<Result> measure(std::span<const Request> requests) override;
  std::optional<double> attainable_gbps() const override { return inner_->attainable_gbps(); }
  std::optional<Recording> recording() const override { return inner_->recording(); }

 private:
  // kernel id, n, segment size (0: whole-array)
  using Key = std::tuple<std::string, std::uint64_t, std::uint64_t>;
  using Finals = std::map<Key, std::vector<db::MeasurementRecord>>;  // in the order stored
  /// The final measurements of the device in the run's L2 mode, one (dtype, op) at a time.
  const Finals& finals(DType dtype, Op op);
  std::optional<Result> answer(const Request& req);
  void remember(const std::vector<Result>& measured);

  std::unique_ptr<Runner> inner_;
  ResumeOptions options_;
  std::int64_t device_id_ = 0;
  std::optional<db::Database> db_;
  std::map<std::pair<DType, Op>, Finals> finals_;
};

}  // namespace tunedreduce::tuner
