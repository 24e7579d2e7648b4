#pragma once
// The tuning database: opening (reader or writer), the writer API a tuner uses, and the queries
// reports and the CLI use. SQLite itself stays behind Connection (db/connection.hpp).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/connection.hpp"
#include "db/records.hpp"
#include "db/run_lease.hpp"

namespace tunedreduce::db {

struct WriterOptions {
  /// How long a write waits for another writer before DbError(Problem::busy).
  std::chrono::milliseconds busy_timeout{30000};
};

struct ReaderOptions {
  /// Readers wait only for a writer's WAL recovery or a checkpoint: short, so nothing hangs.
  std::chrono::milliseconds busy_timeout{2000};
  /// Open with `immutable=1`: no locks, no -wal/-shm files; only for files nobody writes
  /// (shipped databases, read-only media).
  bool immutable = false;
};

/// Filter for measurements(); unset members match everything.
struct MeasurementFilter {
  std::optional<std::int64_t> device_id;
  std::optional<std::int64_t> run_id;
  std::optional<DType> dtype;
  std::optional<Op> op;
};

class Database {
 public:
  /// Opens for writing: creates the file if it is missing (its folder must exist), initialises an
  /// empty (0-byte) file, migrates an older schema in one BEGIN IMMEDIATE transaction, sets WAL.
  /// Throws DbError: missing_folder, not_a_file, not_sqlite, foreign, corrupt, too_new, readonly,
  /// busy.
  static Database open_writer(const std::filesystem::path& path, const WriterOptions& opt = {});
  /// Opens read-only: never creates, never migrates, never writes. Throws DbError: missing
  /// ("no database"), not_a_file, empty, not_sqlite, foreign, corrupt, too_new, too_old, busy.
  static Database open_reader(const std::filesystem::path& path, const ReaderOptions& opt = {});
  /// A private in-memory database with the current schema (merges, tests).
  static Database create_in_memory(std::string label = ":memory:");

  const std::filesystem::path& path() const { return conn_.path(); }
  bool writable() const { return writable_; }
  /// user_version of the file (may exceed schema_version for a compatible newer file).
  int file_schema_version() const { return file_version_; }
  /// The version this writer found the file at, inside the transaction that migrated it (-1 for a
  /// file it created), when it was this open that migrated or created it; nothing when the file
  /// was current (another writer may have migrated it first: `db migrate` says which).
  std::optional<int> migrated_from() const { return migrated_from_; }
  /// Whether the file has the GPUs and the runs' driver, runtime and configuration text (schema
  /// version 5 on): a reader of an older file reads them as absent.
  bool has_provenance() const;
  /// Whether the file has segmented measurements and winners (schema version 12 on): a reader of
  /// an older file reads every measurement as a whole-array one and no segmented winners.
  bool has_segmented() const;
  /// For queries of reports and tools (bound parameters only).
  Connection& connection() { return conn_; }

  // --- writer API: each call is one committed BEGIN IMMEDIATE transaction -------------------

  /// Inserts the device or refreshes its soft attributes (driver, runtime, last seen); its id.
  std::int64_t upsert_device(const DeviceFingerprint& fp);
  /// Inserts the GPU \p uuid of the device row \p device_id if it is new; its id either way.
  /// Throws DbError(invalid_data) for an empty UUID.
  std::int64_t upsert_gpu(std::string_view uuid, std::int64_t device_id);
  /// Starts a run with status `running`; its id. \p info.host empty: this machine's name. For a
  /// database file, this object holds the run's lease (db/run_lease.hpp) until end_run or its
  /// destruction, so other processes can tell the run's tuner is alive. A config_text must hash
  /// (FNV-1a, 16 hex digits) to config_hash, else DbError(invalid_data).
  std::int64_t begin_run(const RunInfo& info);
  void record_attainable_bandwidth(std::int64_t run_id, std::int64_t device_id, double gbps);
  /// Stores one measurement, committed before returning (a crash after it loses nothing); its id.
  /// Its gpu_id, when set, must be a GPU of its device. A segmented kernel's measurement (an id
  /// "seg.*") needs a segment_size that divides n, and its id must name its dtype and op; a
  /// whole-array kernel's has none (db/row_rules.hpp's bad_segmentation): else
  /// DbError(invalid_data).
  std::int64_t insert_measurement(const Measurement& m);
  /// Stores measurements in one transaction (one commit, one sync: what several GPUs writing
  /// into one database can afford), all or none; their ids, in order. Each is checked as by
  /// insert_measurement before anything is written.
  std::vector<std::int64_t> insert_measurements(std::span<const Measurement> ms);
  /// Sets the final status and end time, and releases the run's lease if this object holds it.
  void end_run(std::int64_t run_id, RunStatus status);
  /// Runs of this host left `running` by a process that is gone (nobody holds their lease: the
  /// tuner was killed, or ran out of power) become `interrupted`, with the time of their last
  /// measurement (else their start) as `ended_at`; their stale lease files are removed. Runs of
  /// other hosts are left alone. Returns the ids it settled.
  std::vector<std::int64_t> settle_abandoned_runs();
  /// Replaces every winner of (device, dtype, op, \p mode) with \p winners, atomically; the
  /// winners of the other L2 mode stay. Intervals must not overlap, each winner must be of
  /// \p mode, and its evidence (and runner-up) an ok measurement of that device, dtype, op and
  /// L2 mode.
  void replace_winners(std::int64_t device_id, DType dtype, Op op, std::span<const Winner> winners,
                       L2Mode mode = L2Mode::cold);
  /// Replaces every segmented winner of (device, dtype, op, \p layout, \p mode) with \p winners,
  /// atomically. Rectangles must not overlap; each winner must be of that dtype, op, layout and
  /// mode, and its evidence (and runner-up) an ok segmented measurement of that device, dtype, op
  /// and mode whose kernel id has that layout. Throws DbError(invalid_data) naming the row.
  void replace_segmented_winners(std::int64_t device_id, DType dtype, Op op,
                                 std::string_view layout, std::span<const SegmentedWinner> winners,
                                 L2Mode mode = L2Mode::cold);

  // --- queries -------------------------------------------------------------------------------

  /// Has this key a measurement with a final outcome (is_final) in any run? The key's
  /// segment_size is part of it (0: a whole-array measurement).
  bool has_final_measurement(const MeasurementKey& key);
  /// Every key of \p device_id with a final outcome, for resuming in bulk (segmented
  /// measurements with their segment_size, whole-array ones with 0).
  std::set<MeasurementKey> final_measured_keys(std::int64_t device_id);

  std::vector<DeviceRecord> devices();
  std::optional<DeviceRecord> find_device(std::string_view fingerprint_key);
  std::vector<RunRecord> runs();
  /// Every GPU, by id; none in a file older than version 5.
  std::vector<GpuRecord> gpus();
  std::optional<RunRecord> find_run(std::int64_t run_id);
  std::vector<MeasurementRecord> measurements(const MeasurementFilter& filter = {});
  std::optional<MeasurementRecord> find_measurement(std::int64_t id);
  /// Winners ordered by device, dtype, op, L2 mode (cold first), n_lo; all devices when
  /// \p device_id is empty.
  std::vector<WinnerRecord> winners(std::optional<std::int64_t> device_id = std::nullopt);
  /// Segmented winners ordered by device, dtype, op, layout, L2 mode, size_lo, count_lo; none in
  /// a file older than version 12.
  std::vector<SegmentedWinnerRecord> segmented_winners(
      std::optional<std::int64_t> device_id = std::nullopt);
  Counts counts();

 private:
  Database(Connection conn, bool writable, int file_version)
      : conn_(std::move(conn)), writable_(writable), file_version_(file_version) {}
  void require_writable(const char* what) const;

  Connection conn_;
  bool writable_ = false;
  int file_version_ = 0;
  std::optional<int> migrated_from_;
  std::vector<RunLease> leases_;  // of the runs this object began and has not ended
};

}  // namespace tunedreduce::db
