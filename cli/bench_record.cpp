#include "cli/bench_record.hpp"

#include <system_error>

#include "common/paths.hpp"
#include "db/db_error.hpp"

namespace tunedreduce::cli {

std::optional<BenchRecorder> BenchRecorder::open(const std::optional<std::string>& cli_db,
                                                 bool no_record, bool host_calls,
                                                 std::string& note) {
  note.clear();
  if (no_record) {
    note = "not recorded (--no-record)";
    return std::nullopt;
  }
  if (host_calls) {
    note = "not recorded: the database keeps device times; --host-calls measures the host's cost";
    return std::nullopt;
  }
  // The database the library looks its kernels up in: the results belong beside its winners.
  const DbLocation loc = resolve_db_path_for_reading(cli_db);
  if (loc.system_wide) {
    note = "not recorded: the tuning database " + db::quoted(loc.path) +
           " is the system-wide one (found under $XDG_DATA_DIRS), which tunedreduce never writes; "
           "--db names one to record into";
    return std::nullopt;
  }
  create_data_folder(loc);
  try {
    return BenchRecorder(db::Database::open_writer(loc.path));
  } catch (const db::DbError& e) {
    throw db::DbError(e.problem(), e.path(),
                      std::string(e.what()) + " (the bench records its results there, from " +
                          loc.source + "; --no-record benchmarks without recording)");
  }
}

BenchRecorder::BenchRecorder(db::Database db) : db_(std::move(db)) {}

BenchRecorder::BenchRecorder(BenchRecorder&& o) noexcept
    : db_(std::move(o.db_)), run_(o.run_), results_(o.results_), finished_(o.finished_) {
  o.db_.reset();
  o.run_.reset();
}

BenchRecorder::~BenchRecorder() {
  if (!db_ || !run_ || finished_) return;
  try {
    db::end_bench_run(*db_, *run_, db::RunStatus::failed);
  } catch (...) {  // the exception that ended the bench says what went wrong
  }
}

void BenchRecorder::begin(const DeviceFingerprint& device, const db::BenchRunInfo& info) {
  const std::int64_t dev = db_->upsert_device(device);
  run_ = db::begin_bench_run(*db_, dev, info, device.driver_version, device.runtime_version);
}

void BenchRecorder::add(const db::BenchResult& r) {
  db::insert_bench_result(*db_, *run_, r);
  ++results_;
}

void BenchRecorder::finish(db::RunStatus status) {
  db::end_bench_run(*db_, *run_, status);
  finished_ = true;
}

}  // namespace tunedreduce::cli
