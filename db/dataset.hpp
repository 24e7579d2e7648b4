#pragma once
// A whole database as plain data keyed by natural keys (no row ids): what `db export` writes,
// `db import` reads and `db merge` unions. Rules in docs/database.md, "Merge and import".

#include <compare>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "db/bench.hpp"
#include "db/database.hpp"
#include "db/records.hpp"

namespace tunedreduce::db {

/// A measurement's identity across databases: its run and its place in that run.
struct MeasurementRef {
  std::string run_uuid;
  std::int64_t seq = 0;
  friend auto operator<=>(const MeasurementRef&, const MeasurementRef&) = default;
};

struct SourceRow {
  std::string path;  // as given on the command line
  std::string kind;  // "merge" or "import"
  friend bool operator==(const SourceRow&, const SourceRow&) = default;
};

struct DeviceRow {
  std::string key;
  DeviceFingerprint fingerprint;
  double theoretical_gbps = 0;
  std::string first_seen, last_seen;
};

/// A GPU (schema version 5): a card, named by its UUID, of one device (model) row.
struct GpuRow {
  std::string uuid;
  std::string device_key;
  friend auto operator<=>(const GpuRow&, const GpuRow&) = default;
};

struct RunRow {
  std::string uuid;
  RunInfo info;
  std::string origin;
  std::string started_at;
  std::optional<std::string> ended_at;
  RunStatus status = RunStatus::running;
  std::map<std::string, double> attainable;  // device key -> GB/s
  std::set<std::string> sources;             // source paths the run was found in
};

struct MeasurementRow {
  MeasurementRef ref;
  std::string device_key;
  /// The UUID of the GPU that measured it, a GPU of device_key in Dataset::gpus; absent for
  /// measurements older than schema version 5.
  std::optional<std::string> gpu_uuid;
  Measurement m;  // run_id, device_id and gpu_id unused
};

struct WinnerRow {
  std::string device_key;
  Winner w;  // measurement ids and run_id unused
  MeasurementRef evidence;
  std::optional<MeasurementRef> runner_up;
  std::optional<std::string> run_uuid;
  std::optional<std::string> source;
};

/// A segmented winner (schema version 12), named like a winner: its device by key, its evidence
/// and runner-up by (run, seq).
struct SegmentedWinnerRow {
  std::string device_key;
  SegmentedWinner w;  // measurement ids and run_id unused
  MeasurementRef evidence;
  std::optional<MeasurementRef> runner_up;
  std::optional<std::string> run_uuid;
  std::optional<std::string> source;
};

/// A bench run (schema version 4) with its results: identified by its uuid, like a tuning run.
/// Its id and device_id, and each result's id and bench_run_id, are unused: the device is named
/// by its key.
struct BenchRunRow : BenchRunRecord {
  std::string device_key;
  std::vector<BenchResultRecord> results;  // by dtype, op, n, method
};

struct Dataset {
  std::map<std::string, SourceRow> sources;
  std::map<std::string, DeviceRow> devices;
  std::set<GpuRow> gpus;  // by uuid, then device key
  std::map<std::string, RunRow> runs;
  std::map<MeasurementRef, MeasurementRow> measurements;
  std::vector<WinnerRow> winners;  // sorted by device key, dtype, op, L2 mode, n_lo
  /// Sorted by device key, dtype, op, layout, L2 mode, size_lo, count_lo; none before schema
  /// version 12.
  std::vector<SegmentedWinnerRow> segmented_winners;
  std::map<std::string, BenchRunRow> bench_runs;  // by uuid
  /// Read from a database: the rows skipped because they break the row rules
  /// (db/row_rules.hpp) or name a skipped row, one line each (table, row, column, value, why).
  /// Never exported.
  std::vector<std::string> skipped;
};

/// What a merge or an import did, for the CLI to report.
struct MergeStats {
  std::int64_t devices_added = 0, runs_added = 0, measurements_added = 0, gpus_added = 0;
  /// Groups of winners replaced: (device, dtype, op, L2 mode) groups of whole-array winners and
  /// (device, dtype, op, layout, L2 mode) groups of segmented ones, both counted.
  std::int64_t winner_groups_changed = 0;
  std::int64_t measurement_conflicts = 0;  // same (run, seq) with different content
  /// Size intervals claimed by several whole-array winners, and cells of (segment size, count)
  /// claimed by several segmented winners, decided by rule; both counted.
  std::int64_t winner_conflicts = 0;
  /// The segmented winners' part of the two counts above.
  std::int64_t segmented_winner_groups_changed = 0;
  std::int64_t segmented_winner_conflicts = 0;
  std::int64_t bench_runs_added = 0;
  std::int64_t bench_run_conflicts = 0;  // same uuid, both ended, different content
  /// merge_files: the input rows skipped because they break the row rules (db/row_rules.hpp),
  /// each line prefixed with the input's path.
  std::vector<std::string> skipped;
};

/// Everything in \p db, read in one transaction.
Dataset read_dataset(Database& db);

/// The export document (docs/database.md, "Export format").
Json dataset_to_json(const Dataset& d);
/// Parses and validates an export document; errors name \p file and the member.
Dataset dataset_from_json(const Json& doc, const std::filesystem::path& file);

/// Marks \p d as coming from \p path: adds the source, lists it on every run, and names it on
/// every winner and segmented winner that has no source yet.
void add_provenance(Dataset& d, const std::string& path, const std::string& kind);

/// Unions \p from into \p into: devices by fingerprint, GPUs by (uuid, device), runs by uuid,
/// measurements by (run, seq), sources by path (commutative and associative); the winners of every
/// (device, dtype, op, L2 mode) that \p from has are decided over both sides' winners by
/// resolve_winners (commutative; merge_files decides once over all its inputs, so any order of its
/// inputs gives the same file).
void merge_dataset(Dataset& into, const Dataset& from, MergeStats& stats);

/// The noise band of the merge rule: the tuner's tie rule (docs/tuning.md) applied to the
/// evidence of two winners.
inline constexpr double merge_noise_floor = 0.005, merge_noise_ceiling = 0.01;
/// The standard error of an ok measurement's median relative to it:
/// 0.489 x (p90 - p10) / median / sqrt(repeats); 0 without p10 and p90.
double relative_median_error(const Measurement& m);
/// Two standard errors of the difference of two medians, clamped to
/// [merge_noise_floor, merge_noise_ceiling].
double noise_tolerance(const Measurement& a, const Measurement& b);
/// Whether the times per element (median_us / n) of \p a and \p b differ, relative to the
/// smaller, by less than noise_tolerance(a, b).
bool within_noise(const Measurement& a, const Measurement& b);

/// Decides overlapping winners of one (device, dtype, op, L2 mode), size by size: the
/// **fastest** candidate is the one whose evidence has the lowest time per element (then the
/// lower median, then the order below); it and every candidate within its noise (within_noise)
/// form the tie, and the tie goes to the smaller kernel id, then the smaller evidence (run uuid,
/// seq), then the smaller source: a faster candidate wins only when it is faster outside the
/// noise. The choice depends on the set of candidates only, never on their order. Adjacent sizes
/// with the same winner are one interval again.
std::vector<WinnerRow> resolve_winners(const std::vector<WinnerRow>& candidates,
                                       const Dataset& evidence, std::int64_t& conflicts);

/// The same rule for segmented winners of one (device, dtype, op, layout, L2 mode), cell by cell
/// of (segment size, segment count): the cells are cut at every candidate's bounds, each goes to
/// the candidate resolve_winners would choose among those whose rectangle contains it (the time
/// per element of their evidence, median_us / n), and cells with the same winner are joined
/// again, first along the sizes within each band of counts, then bands with the same runs. A
/// cell several different rows claim counts one conflict.
std::vector<SegmentedWinnerRow> resolve_segmented_winners(
    const std::vector<SegmentedWinnerRow>& candidates, const Dataset& evidence,
    std::int64_t& conflicts);

/// Writes \p d into a database that has the schema and no rows, in canonical order (ids follow
/// the natural keys), in one transaction.
void write_dataset(Database& empty, const Dataset& d);

/// Adds \p d to a live database in one BEGIN IMMEDIATE transaction: missing rows are inserted
/// (existing ids never change), merged winners replace their groups.
MergeStats import_dataset(Database& db, const Dataset& d);

/// `db merge`: reads every input read-only, unions them, decides each winner group once over
/// every input's winners (resolve_winners: so any order of \p inputs gives the same bytes),
/// writes \p out (which must not exist) with VACUUM INTO, in journal mode DELETE so it can be
/// shipped and read anywhere.
MergeStats merge_files(const std::vector<std::filesystem::path>& inputs,
                       const std::filesystem::path& out);

}  // namespace tunedreduce::db
