#pragma once
// The rows a report reads, loaded once: the selected devices, their runs, measurements and
// winners, with the look-ups every report kind needs. Internal to reports/.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "db/bench.hpp"
#include "db/database.hpp"
#include "reports/reports.hpp"

namespace tunedreduce::reports::detail {

/// (device id, dtype, op): the unit every report is organised by.
struct Key {
  std::int64_t device = 0;
  DType dtype = DType::i32;
  Op op = Op::sum;
  friend auto operator<=>(const Key&, const Key&) = default;
};

/// What `tunedreduce bench` measured for one (device, dtype, op, n) under one L2 prelude: the
/// results of the latest bench run that has that size (a rerun replaces an older one).
struct BenchPoint {
  const db::BenchRunRecord* run = nullptr;
  /// By db::BenchMethod: cached, two_phase, cub, thrust; null when not timed.
  std::array<const db::BenchResultRecord*, 5> by_method{};
  const db::BenchResultRecord* get(db::BenchMethod m) const {
    return by_method[static_cast<std::size_t>(m)];
  }
  /// The verified median of \p m, if any.
  std::optional<double> median(db::BenchMethod m) const;
  /// CUB's median over \p m's: how many times faster the call is than cub::DeviceReduce.
  std::optional<double> speedup_vs_cub(db::BenchMethod m) const;
};

struct BenchKey {
  std::int64_t device = 0;
  DType dtype = DType::i32;
  Op op = Op::sum;
  db::BenchL2 l2 = db::BenchL2::cold;
  friend auto operator<=>(const BenchKey&, const BenchKey&) = default;
};

struct Data {
  std::string path;
  db::Counts counts;                      // of the whole database
  std::vector<db::DeviceRecord> devices;  // selected, in database order
  std::map<std::int64_t, db::RunRecord> runs;
  std::map<std::int64_t, db::GpuRecord> gpus;  // by id: the cards measurements name
  /// Every whole-array measurement of the selected devices, types and operators (every
  /// outcome, both L2 modes), in database order. Segmented ones are never here: a whole-array
  /// kind must not take one for a candidate of n elements.
  std::vector<db::MeasurementRecord> measurements;
  /// The segmented measurements (is_segmented) of the same selection, in database order.
  std::vector<db::MeasurementRecord> segmented;
  /// The segmented winners of the selected devices, types and operators (schema version 12;
  /// loaded for the `segmented` kind only), in the database's order.
  std::vector<db::SegmentedWinnerRecord> segmented_winners;
  int schema_version = 0;  // the file's
  /// Selected, by device (in database order), then dtype and op (in the order of all_dtypes and
  /// all_ops), L2 mode (cold first) and n_lo.
  std::vector<db::WinnerRecord> winners;
  db::L2Mode l2 = db::L2Mode::cold;  // the mode the measurement tables use
  bool l2_chosen = false;            // true when the default picked it (say so)
  bool both_l2_modes = false;        // the selection has measurements of both modes

  const db::DeviceRecord& device(std::int64_t id) const;
  /// A whole-array measurement of the selection by id, or null.
  const db::MeasurementRecord* measurement(std::int64_t id) const;
  /// A segmented measurement of the selection by id, or null.
  const db::MeasurementRecord* segmented_measurement(std::int64_t id) const;
  std::optional<double> attainable(std::optional<std::int64_t> run, std::int64_t device) const;
  /// "NVIDIA H100 80GB HBM3", with "[75ee52f5]" appended when another device has that name.
  std::string label(std::int64_t device) const;
  /// "NVIDIA H100 80GB HBM3 (75ee52f54f3ef9f9)".
  std::string full_label(std::int64_t device) const;

  /// The ok measurements of the report's L2 mode, grouped by key.
  std::map<Key, std::vector<const db::MeasurementRecord*>> ok_by_key() const;

  std::unordered_map<std::int64_t, std::size_t> by_id, segmented_by_id;
  std::map<std::int64_t, std::string> labels;

  /// The bench runs of the selected devices (empty for a version-3 file), and their results of
  /// the selected types and operators, by key and size.
  std::vector<db::BenchRunRecord> bench_runs;
  std::vector<db::BenchResultRecord> bench_results;
  std::map<BenchKey, std::map<std::uint64_t, BenchPoint>> bench;
  /// The segmented bench results (schema version 13; loaded for the `segmented` and `bench` kinds)
  /// of the selected devices, types and operators, in the database's order.
  std::vector<db::BenchResultRecord> segmented_bench;
  /// A bench run of the selected devices by id, or null.
  const db::BenchRunRecord* bench_run(std::int64_t id) const;
  std::map<std::int64_t, std::size_t> bench_run_index;
  /// The bench of \p key at \p n in the L2 state the tuning database calls \p mode (cold, warm;
  /// a dirty-flush bench is compared with nothing), if one was recorded.
  const BenchPoint* bench_at(const Key& key, std::uint64_t n, db::L2Mode mode) const;
};

Data load_data(db::Database& db, const ReportOptions& o);

/// Whether \p m is a segmented measurement (schema version 12): it has a segment size or its
/// kernel id begins "seg." (the row rules allow only both or neither).
bool is_segmented(const db::MeasurementRecord& m);

/// GB/s of a measurement: the stored value, else input bytes / median.
std::optional<double> gbps_of(const db::MeasurementRecord& m);
/// Time per element, for comparing measurements at different n.
double us_per_element(const db::MeasurementRecord& m);
/// The faster of two ok measurements at one n (lower median, then smaller kernel id).
bool faster(const db::MeasurementRecord& a, const db::MeasurementRecord& b);

/// (p90 - p10) / median in %: how far single runs spread; absent without p10 and p90.
std::optional<double> spread_pct(std::optional<double> median, std::optional<double> p10,
                                 std::optional<double> p90);
/// "p10 4.31 µs, p90 4.55 µs, 50 repeats".
std::string spread_detail(std::optional<double> p10, std::optional<double> p90, int repeats);
/// The relative difference two medians must exceed to count as a difference (docs/tuning.md):
/// two standard errors of their difference (a median's relative standard error is 0.489 ×
/// (p90 - p10) / median / sqrt(repeats)), at least 0.5 %. The tuner caps it at 1 % to bound what
/// its tie rule may give away; a comparison with a baseline is not capped.
double noise_tolerance(std::optional<double> median_a, std::optional<double> p10_a,
                       std::optional<double> p90_a, int repeats_a, std::optional<double> median_b,
                       std::optional<double> p10_b, std::optional<double> p90_b, int repeats_b);

/// Families in the seeds' order (the ladder's), then unknown names in text order.
std::vector<std::string> family_order(const std::set<std::string>& present);
/// Index of a known family in the seeds' order, or -1.
int family_rank(const std::string& family);

/// The measured size nearest to \p want on a log scale (the smaller on a tie).
std::uint64_t nearest_size(const std::set<std::uint64_t>& sizes, std::uint64_t want);

/// "i32 sum".
std::string key_text(DType d, Op o);

}  // namespace tunedreduce::reports::detail
