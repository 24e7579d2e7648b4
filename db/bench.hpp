#pragma once
// Runs of `tunedreduce bench` in the tuning database (schema version 4, docs/database.md): the
// tuned reduction as production calls it — the library's cached-workspace call and its two-phase
// call — against cub::DeviceReduce and thrust::reduce, on one device. db/ side only: no CUDA.
// The bench command (cli/cmd_bench.cpp) times on the GPU and hands each row here; tests write
// synthetic runs through the same calls.
//
//   auto dev = db.upsert_device(fingerprint);
//   auto run = begin_bench_run(db, dev, info);       // status running
//   insert_bench_result(db, run, result);            // one per (dtype, op, n, method), committed
//   end_bench_run(db, run, RunStatus::finished);

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/timing.hpp"
#include "db/database.hpp"
#include "db/records.hpp"

namespace tunedreduce::db {

/// What preceded every timed run: cold (a read of 4 × L2, as the tuner), dirty (a memset of twice
/// the L2, the tuner's flush before kernel revision 3) or warm (no flush).
enum class BenchL2 { cold, dirty, warm };
/// A timed call: the library's two API paths and the two baselines; and for segmented results
/// (schema version 13) the floor: a plain read of the input and write of the results.
enum class BenchMethod { cached, two_phase, cub, thrust, floor };

const char* bench_l2_name(BenchL2 l) noexcept;
const char* bench_method_name(BenchMethod m) noexcept;
std::optional<BenchL2> parse_bench_l2(std::string_view s);
std::optional<BenchMethod> parse_bench_method(std::string_view s);
/// The tuning database's L2 mode a bench of \p l compares with: cold for cold, warm for warm,
/// none for dirty (a flush the tuner no longer uses; its runs show only in `report bench`).
std::optional<L2Mode> tuned_l2_of(BenchL2 l) noexcept;
/// True for the library's calls (cached, two_phase), false for the baselines.
constexpr bool is_tuned(BenchMethod m) noexcept {
  return m == BenchMethod::cached || m == BenchMethod::two_phase;
}

/// What a bench says about itself when it begins; the clocks (ClockReading, common/timing.hpp)
/// are read once for the run.
struct BenchRunInfo : ClockReading {
  std::string tool_version;
  std::string manifest_hash;     // of the kernel registry the library ran
  std::string host;              // empty: gethostname()
  std::string library_database;  // the tuning database the library looked its kernels up in
  BenchL2 l2 = BenchL2::cold;
  int repeats = 0;  // timed runs per method and size
  int warmups = 0;
  std::uint64_t seed = 0;                 // the data seed (stored as 16 hex digits)
  std::optional<double> attainable_gbps;  // measured in the same process, same timing
};

/// One timed call at one (dtype, op, n): its repeats' statistics (RepeatStats, common/timing.hpp;
/// the median is required when verified) and what ran.
struct BenchResult : RepeatStats {
  DType dtype = DType::i32;
  Op op = Op::sum;
  std::uint64_t n = 0;
  BenchMethod method = BenchMethod::cached;
  /// Ran and its result was right. False with an error: it failed, or its result was wrong.
  bool verified = false;
  std::string error;
  std::optional<std::int64_t> temp_bytes;  // the two-phase call's and CUB's temporary storage
  /// For the library's calls: the kernel it ran, how it was found (exact, nearest, same_model,
  /// default) and the L2 mode of the winner row it used.
  std::optional<std::string> kernel_id;
  std::optional<std::string> lookup_level;
  std::optional<L2Mode> winner_l2;
  /// A segmented result (`tunedreduce bench --segments`, schema version 13; the table
  /// segmented_bench_results): the elements per segment, n being the total (n / segment_size
  /// segments), and the layout of segments the calls were given, as kernel ids name it ("fixed":
  /// the rows of a matrix; "offsets64": begin/end offsets, int64). Unset and empty for a
  /// whole-array result.
  std::optional<std::uint64_t> segment_size;
  std::string layout;
  bool segmented() const { return segment_size.has_value(); }
};

struct BenchRunRecord {
  std::int64_t id = 0;
  std::string uuid;
  std::int64_t device_id = 0;
  BenchRunInfo info;
  std::string origin;                           // the database path the run was recorded in
  int driver_version = 0, runtime_version = 0;  // the device's, during the run
  std::string started_at;
  std::optional<std::string> ended_at;
  RunStatus status = RunStatus::running;
};

struct BenchResultRecord : BenchResult {
  std::int64_t id = 0;
  std::int64_t bench_run_id = 0;
  std::string measured_at;
};

/// A bench run's data seed as it is stored and exported: 16 lowercase hex digits.
std::string bench_seed_text(std::uint64_t seed);

/// True when the file has the bench tables (schema version 4 or later); a version-3 file, which
/// readers read as is, has none, and every query below then returns nothing.
bool has_bench_tables(Database& db);

/// Starts a bench run (status running) on \p device_id (Database::upsert_device), with the
/// device's driver and runtime versions at this time; its id. One committed transaction.
std::int64_t begin_bench_run(Database& db, std::int64_t device_id, const BenchRunInfo& info,
                             int driver_version, int runtime_version);
/// Stores one result of a running bench run, committed before it returns (a segmented one into
/// segmented_bench_results). Throws DbError (invalid_data) for a verified result without a median
/// or with an error, for a second row of the same (dtype, op, n, method) — and segment size and
/// layout —, for a segmented result of Thrust, of an unknown layout or of a segment size outside
/// 1..n, and (problem too_old) for a segmented result in a file older than schema version 13.
std::int64_t insert_bench_result(Database& db, std::int64_t bench_run_id, const BenchResult& r);
/// Sets the final status and end time.
void end_bench_run(Database& db, std::int64_t bench_run_id, RunStatus status);

/// A whole bench run in one transaction (tests, fixtures): the device, the run, its results and
/// its end; the run's id.
std::int64_t record_bench_run(Database& db, const DeviceFingerprint& device,
                              const BenchRunInfo& info, std::span<const BenchResult> results,
                              RunStatus status = RunStatus::finished);

/// Bench runs by id; those of one device when \p device_id is set.
std::vector<BenchRunRecord> bench_runs(Database& db,
                                       std::optional<std::int64_t> device_id = std::nullopt);
/// Whole-array results ordered by run, dtype, op, n and method; those of one run when
/// \p bench_run_id is set.
std::vector<BenchResultRecord> bench_results(
    Database& db, std::optional<std::int64_t> bench_run_id = std::nullopt);
/// Segmented results (schema version 13; none from an older file) ordered by run, dtype, op,
/// layout, segment size, n and method; those of one run when \p bench_run_id is set.
std::vector<BenchResultRecord> segmented_bench_results(
    Database& db, std::optional<std::int64_t> bench_run_id = std::nullopt);

}  // namespace tunedreduce::db
