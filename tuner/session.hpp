#pragma once
// The database side of one `tunedreduce tune` run, from start to end, in one place: before any
// GPU work, the runs a killed tuner left `running` are settled; a run that began but never
// tuned (another runner failed to start) ends `failed`; after the driver, the winners of every
// complete key replace the database's and the run ends `finished` or `interrupted` — or `failed`,
// with nothing stored, when its tuning threw. The GPU runner begins the run (device row, run
// row, lease: tuner/gpu_runner.hpp) and commits its measurements as they finish; the CLI
// (cli/cmd_tune.cpp) does the printing.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "db/records.hpp"
#include "tuner/driver.hpp"
#include "tuner/runner.hpp"

namespace tunedreduce::tuner {

/// What ending a run did.
struct RunEnded {
  db::RunStatus status = db::RunStatus::finished;
  std::size_t keys_stored = 0;       // complete keys whose winners replaced the database's
  std::size_t segmented_stored = 0;  // complete segmented keys and layouts, likewise
};

/// Each call opens the database as a writer and commits before it returns, as the tuner did
/// before this class: the GPU runners write through connections of their own meanwhile.
class TuningSession {
 public:
  explicit TuningSession(std::filesystem::path db_path) : path_(std::move(db_path)) {}

  const std::filesystem::path& path() const noexcept { return path_; }

  /// Runs of this host that a tuner now gone left `running` become `interrupted`; their ids.
  /// Also the first check that the database is usable as a writer (DbError otherwise).
  std::vector<std::int64_t> settle_abandoned_runs() const;

  /// Ends the recorded runs of \p recordings as `failed` (runs that began but will not tune).
  void end_failed(const std::vector<Recording>& recordings) const;

  /// Ends \p rec's run after its tuning: the winners of every complete key of \p outcome replace
  /// the database's of that (device, dtype, op, L2 mode) — the other mode's stay — and the
  /// rectangles of every complete segmented key and layout those of (device, dtype, op, layout,
  /// L2 mode); the run is `interrupted` if the outcome was cancelled, else `finished`. Each key's
  /// winners are one transaction and the run's end comes last: a failure (DbError) leaves the run
  /// `running`, for the next tuner to settle, rather than `finished` with winners missing.
  RunEnded end(const Recording& rec, const TuneOutcome& outcome) const;

  /// Ends \p rec's run as `failed`: its tuning threw. Its measurements stay; no winner is stored.
  RunEnded end_failed(const Recording& rec) const;

 private:
  std::filesystem::path path_;
};

}  // namespace tunedreduce::tuner
