#pragma once
// Synthetic measurements for the tuner's tests: a deterministic performance model of the
// registry's kernels with realistic noise, a Runner that answers from it, and a database filled
// from it for the replay runner.

#include <atomic>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/runner.hpp"
#include "tuner/segmented_space.hpp"

namespace tunedreduce::tuner::test {

/// Median microseconds of \p kernel_id at n, without noise: a launch cost that depends on the
/// finish and the grid policy, plus bytes over a bandwidth that depends on the family, block and
/// unroll. Crossovers arise between launch-bound and bandwidth-bound kernels.
double model_us(const std::string& kernel_id, std::uint64_t n);

/// A result of the model with noise: median * (1 + e), e ~ +-noise from a hash of (id, n,
/// salt); p10/p90 spread `spread` around it. Ids in \p incorrect come back `incorrect`.
Result model_result(const std::string& kernel_id, std::uint64_t n, int repeats, double noise,
                    double spread, std::uint64_t salt = 0);

/// A Runner over any function of the request; counts requests and calls, can raise a
/// cancellation flag after a number of requests, and advances a fake clock per call.
class FnRunner : public Runner {
 public:
  explicit FnRunner(std::function<Result(const Request&)> fn) : fn_(std::move(fn)) {}
  std::vector<Result> measure(std::span<const Request> requests) override;

  std::vector<Request> log;  // every request, in order
  std::size_t calls = 0;
  std::atomic<bool>* cancel = nullptr;
  std::size_t cancel_after = 0;  // raise *cancel once this many requests were answered (0: never)
  std::size_t requests_after_cancel = 0;
  double clock = 0;  // seconds, +seconds_per_call at each measure()
  double seconds_per_call = 0;

 private:
  std::function<Result(const Request&)> fn_;
};

/// The model's answer to a request, as model_runner gives it (a pure function of the request).
Result model_answer(const Request& q);

/// A runner over the model: full-policy requests get `repeats` 20 and noise 0.5%, fixed-repeat
/// requests (halving's early rounds) their repeats and noise 3%.
FnRunner model_runner(std::set<std::string> incorrect = {});

/// Records the model's results for \p ids at \p sizes into \p db on a new H100 device and run,
/// twice per candidate: a cheap measurement (3 repeats, 3% noise) and a full one (20 repeats,
/// 0.5% noise), both cold L2. Returns the device id.
std::int64_t fill_database(db::Database& db, const std::vector<std::string>& ids,
                           const std::vector<std::uint64_t>& sizes,
                           const std::set<std::string>& incorrect = {},
                           db::L2Mode l2 = db::L2Mode::cold);

DeviceFingerprint h100();

// --- segmented entries ("seg.*") ---

/// Microseconds of a segmented entry at (segment size L, count S), without noise: 5, plus one
/// for every octave between L and the size its configuration suits (a scalar thread 1, vectors
/// 4, tile 2, a group of g lanes 4g, blocks of 128..1024 threads 2^8..2^14, split 2^20), plus
/// 1e-4 per segment. So the fastest candidate of a point is known.
double seg_model_us(const std::string& kernel_id, std::uint64_t segment_size, std::uint64_t count);

/// The model's ok result for a segmented request (its segment size set): repeats as asked
/// (min_repeats, else 20), p10/p90 at -/+0.5 %.
Result seg_model_result(const Request& q);

/// Records into \p db, for every grid point and candidate of \p keys, the model's result twice
/// (3 repeats, then 20), in a new finished run on the device h100() (the row fill_database
/// uses); ids in \p incorrect are recorded incorrect. Returns the device id.
std::int64_t fill_segmented_database(db::Database& db, const std::vector<SegKeySpace>& keys,
                                     const std::set<std::string>& incorrect = {},
                                     db::L2Mode l2 = db::L2Mode::cold);

}  // namespace tunedreduce::tuner::test
