#pragma once
// Where `tunedreduce bench` records its results, and the recording itself (docs/cli.md,
// "bench"). Host-only: the timing stays in cmd_bench.cpp; this opens the tuning database before
// any GPU work, writes each row as it is measured (db/bench.hpp) and ends the run. Tested
// without a GPU (tests/cli/test_bench_record.cpp).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "db/bench.hpp"
#include "db/database.hpp"

namespace tunedreduce::cli {

class BenchRecorder {
 public:
  /// Decides where a bench records and opens that database for writing, before any GPU work.
  /// Returns nothing, with \p note saying why, when \p no_record is set (--no-record), when
  /// \p host_calls is set (the host's cost per call is not kept), or when the database the
  /// library reads is the system-wide one (found under $XDG_DATA_DIRS), which is never written.
  /// Otherwise the database at --db (else the user's default location, whose folder it creates),
  /// migrated to the current schema if older. A database that cannot be written (read-only,
  /// newer, locked, not a tuning database, a missing --db folder) throws db::DbError with its
  /// exit code, the message naming --no-record.
  static std::optional<BenchRecorder> open(const std::optional<std::string>& cli_db, bool no_record,
                                           bool host_calls, std::string& note);

  BenchRecorder(BenchRecorder&&) noexcept;
  BenchRecorder& operator=(BenchRecorder&&) = delete;
  BenchRecorder(const BenchRecorder&) = delete;
  BenchRecorder& operator=(const BenchRecorder&) = delete;
  /// A run begun and not finished (the bench threw) is marked failed; a failure to do so is
  /// swallowed (the exception in flight says what went wrong).
  ~BenchRecorder();

  /// Records the device (its fingerprint, refreshed) and begins the bench run.
  void begin(const DeviceFingerprint& device, const db::BenchRunInfo& info);
  /// One result, committed before it returns; throws db::DbError when it cannot be written.
  void add(const db::BenchResult& r);
  /// Ends the run with \p status (finished, or interrupted / failed).
  void finish(db::RunStatus status);

  const std::filesystem::path& path() const { return db_->path(); }
  std::optional<std::int64_t> run_id() const { return run_; }
  std::int64_t results() const { return results_; }

 private:
  explicit BenchRecorder(db::Database db);
  std::optional<db::Database> db_;
  std::optional<std::int64_t> run_;
  std::int64_t results_ = 0;
  bool finished_ = false;
};

}  // namespace tunedreduce::cli
