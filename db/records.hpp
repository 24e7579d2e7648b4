#pragma once
// Plain data exchanged with the tuning database. Names of enumerators are the strings stored in
// the database and the JSON export (see docs/database.md).

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/candidate_params.hpp"
#include "common/device_fingerprint.hpp"
#include "common/timing.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce::db {

enum class RunStatus { running, finished, interrupted, failed };
enum class Outcome { ok, incorrect, launch_failed, crashed, timeout };
enum class L2Mode { cold, warm };

const char* run_status_name(RunStatus s) noexcept;
const char* outcome_name(Outcome o) noexcept;
const char* l2_mode_name(L2Mode m) noexcept;
std::optional<RunStatus> parse_run_status(std::string_view s);
std::optional<Outcome> parse_outcome(std::string_view s);
std::optional<L2Mode> parse_l2_mode(std::string_view s);

/// Outcomes that settle a candidate for resume: ok, incorrect and launch_failed are properties
/// of the kernel; crashed and timeout may be the machine's fault, so a rerun tries again.
constexpr bool is_final(Outcome o) noexcept {
  return o == Outcome::ok || o == Outcome::incorrect || o == Outcome::launch_failed;
}

/// A device row: the fingerprint (hard attributes + latest soft attributes) and bookkeeping.
struct DeviceRecord {
  std::int64_t id = 0;
  std::string key;  // DeviceFingerprint::key()
  DeviceFingerprint fingerprint;
  double theoretical_gbps = 0;
  std::string first_seen;  // ISO 8601 UTC
  std::string last_seen;
};

/// What a tuner says about a run when it begins it.
struct RunInfo {
  std::string tool_version;
  std::string manifest_hash;  // registry manifest of the binary
  std::string config_hash;    // of the effective tune.toml + flags
  std::string host;           // empty: gethostname()
  L2Mode l2_mode = L2Mode::cold;
  // Since schema version 5; absent for older runs. A run is one process on one host, so the
  // driver and the CUDA runtime are the run's (the device row keeps only the latest seen).
  std::optional<int> driver_version;   // cudaDriverGetVersion, e.g. 13000
  std::optional<int> runtime_version;  // cudaRuntimeGetVersion
  /// The canonical text of the run's configuration (tuner/config/canonical.hpp), of which
  /// config_hash is the hash: what the run asked for, exactly.
  std::optional<std::string> config_text;
};

struct RunRecord {
  std::int64_t id = 0;
  std::string uuid;  // globally unique; identifies the run across merged databases
  RunInfo info;
  std::string origin;  // the database path the run was first recorded in
  std::string started_at;
  std::optional<std::string> ended_at;
  RunStatus status = RunStatus::running;
  struct Attainable {
    std::int64_t device_id = 0;
    double gbps = 0;
  };
  std::vector<Attainable> attainable;  // attainable read bandwidth per device, measured once
};

/// One physical GPU (schema version 5): its UUID as nvidia-smi prints it
/// ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx") and the device row (model fingerprint) it had
/// when it measured. (uuid, device_id) is unique: a card whose hard attributes change (ECC
/// turned off gives it more memory) is the same card as another model, a row of its own.
struct GpuRecord {
  std::int64_t id = 0;
  std::string uuid;
  std::int64_t device_id = 0;
};

/// A candidate's parameters as stored (common/candidate_params.hpp: shared with kernels/, which
/// fills it, so neither depends on the other).
using tunedreduce::CandidateParams;

/// The identity of a measurement for resume: measured already → skip.
struct MeasurementKey {
  std::int64_t device_id = 0;
  std::string kernel_id;
  DType dtype = DType::i32;
  Op op = Op::sum;
  std::uint64_t n = 0;
  L2Mode l2_mode = L2Mode::cold;
  /// Segmented measurements: the elements per segment (n is the total); 0 for a whole-array one.
  std::uint64_t segment_size = 0;
  friend auto operator<=>(const MeasurementKey&, const MeasurementKey&) = default;
};

/// One measurement of a candidate at one n: what was measured, how it came out and its Timing
/// (median_us is required when the outcome is ok). Stored as a measurements row
/// (db/columns.hpp); the tuner's Result is one too (tuner/runner.hpp).
struct Measurement : Timing {
  std::int64_t run_id = 0;
  std::int64_t device_id = 0;
  /// The GPU that measured it (a gpus row of device_id's model); absent for measurements
  /// recorded before schema version 5, or by a worker that did not know its GPU's UUID.
  std::optional<std::int64_t> gpu_id;
  std::string kernel_id;  // registry id
  CandidateParams params;
  DType dtype = DType::i32;
  Op op = Op::sum;
  std::uint64_t n = 0;
  L2Mode l2_mode = L2Mode::cold;
  Outcome outcome = Outcome::ok;
  std::string error;  // empty unless the outcome is not ok
  /// When it finished, UTC ("2026-11-25T16:46:55.788Z"); empty when storing: the time it is
  /// stored.
  std::string measured_at;
  /// Segmented measurements (schema version 12; kernel ids "seg.*", kernels/segmented/): the
  /// elements per segment, at least 1. n is the total, num_segments x segment_size: fixed
  /// (rows) layouts reduce n / segment_size contiguous rows, offsets layouts as many segments of
  /// that length given by begin/end arrays. Absent for a whole-array measurement.
  std::optional<std::uint64_t> segment_size;

  MeasurementKey key() const {
    return {device_id, kernel_id, dtype, op, n, l2_mode, segment_size.value_or(0)};
  }
};

struct MeasurementRecord : Measurement {
  std::int64_t id = 0;
  std::int64_t seq = 0;  // 1, 2, ... within its run
};

/// One winner: for sizes n_lo <= n <= n_hi, run kernel_id, when the input is in the L2 state
/// l2_mode (cold: flushed before the launch; warm: just touched). Its evidence is a measurement
/// of that mode; a device may have a cold and a warm winner for the same sizes.
struct Winner {
  DType dtype = DType::i32;
  Op op = Op::sum;
  L2Mode l2_mode = L2Mode::cold;
  std::uint64_t n_lo = 0;
  std::uint64_t n_hi = 0;
  std::string kernel_id;
  std::int64_t measurement_id = 0;  // the evidence
  std::optional<std::string> runner_up_kernel_id;
  std::optional<std::int64_t> runner_up_measurement_id;
  int driver_version = 0;  // at tuning time: a later driver makes the winner stale, not invalid
  int runtime_version = 0;
  std::optional<std::int64_t> run_id;
};

struct WinnerRecord : Winner {
  std::int64_t id = 0;
  std::int64_t device_id = 0;
  std::optional<std::string> source;  // merge/import input it came from; empty: recorded here
};

/// One segmented winner (schema version 12): for (dtype, op, layout) and segments of size_lo..
/// size_hi elements (offsets layouts: the mean length, total / count) in counts of count_lo..
/// count_hi segments, run the segmented entry kernel_id, in L2 state l2_mode. Rectangles of one
/// (device, dtype, op, layout, l2_mode) never overlap. Its evidence (and runner-up) is an ok
/// segmented measurement of that device, dtype, op and L2 mode whose kernel has that layout.
struct SegmentedWinner {
  DType dtype = DType::i32;
  Op op = Op::sum;
  L2Mode l2_mode = L2Mode::cold;
  std::string layout;  // kernels::segmented::seg_layout_name: "fixed", "offsets32", "offsets64"
  std::uint64_t size_lo = 1, size_hi = 1;    // elements per segment, 1 <= lo <= hi
  std::uint64_t count_lo = 1, count_hi = 1;  // segments, 1 <= lo <= hi
  std::string kernel_id;
  std::int64_t measurement_id = 0;
  std::optional<std::string> runner_up_kernel_id;
  std::optional<std::int64_t> runner_up_measurement_id;
  int driver_version = 0;
  int runtime_version = 0;
  std::optional<std::int64_t> run_id;
};

struct SegmentedWinnerRecord : SegmentedWinner {
  std::int64_t id = 0;
  std::int64_t device_id = 0;
  std::optional<std::string> source;
};

/// Row counts for `db info`.
struct Counts {
  std::int64_t devices = 0, runs = 0, measurements = 0, winners = 0;
  std::int64_t segmented_winners = 0;  // schema version 12
};

/// Empty where operator \p o is defined for element type \p t (op_applies); else why not, naming
/// both and the types it is defined for: "the operator 'wide_sum' is defined for i32, u32, f32,
/// f16 and bf16 only, not for i64", "the operator 'sum' is defined for i32, u32, i64, u64, f32 and
/// f64 only, not for f16", "the operator 'argmin' is defined for i32, u32, i64, u64, f32 and f64
/// only, not for bf16" (the list is op_dtypes', so it covers every operator of all_ops). Writers
/// and import refuse such a row with it before SQL does: the schema's CHECK refuses it as well
/// (versions 6 to 10), but SQLite names only the constraint.
std::string op_dtype_mismatch(DType t, Op o);

/// "2026-03-01T12:34:56.789Z".
std::string utc_timestamp();
/// 32 random hex digits.
std::string random_uuid();

}  // namespace tunedreduce::db
