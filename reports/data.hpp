#pragma once
// The rows a report reads, loaded once: the selected devices, their runs, measurements and
// winners, with the look-ups every report kind needs. Internal to reports/.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

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

struct Data {
  std::string path;
  db::Counts counts;  // of the whole database
  std::vector<db::DeviceRecord> devices;  // selected, in database order
  std::map<std::int64_t, db::RunRecord> runs;
  /// Every measurement of the selected devices, types and operators (every outcome, both L2
  /// modes), in database order.
  std::vector<db::MeasurementRecord> measurements;
  std::vector<db::WinnerRecord> winners;  // selected, by device, dtype, op, n_lo
  db::L2Mode l2 = db::L2Mode::cold;        // the mode the measurement tables use
  bool l2_chosen = false;                   // true when the default picked it (say so)
  bool both_l2_modes = false;               // the selection has measurements of both modes

  const db::DeviceRecord& device(std::int64_t id) const;
  const db::MeasurementRecord* measurement(std::int64_t id) const;
  std::optional<double> attainable(std::optional<std::int64_t> run, std::int64_t device) const;
  /// "NVIDIA H100 80GB HBM3", with "[75ee52f5]" appended when another device has that name.
  std::string label(std::int64_t device) const;
  /// "NVIDIA H100 80GB HBM3 (75ee52f54f3ef9f9)".
  std::string full_label(std::int64_t device) const;

  /// The ok measurements of the report's L2 mode, grouped by key.
  std::map<Key, std::vector<const db::MeasurementRecord*>> ok_by_key() const;

  std::unordered_map<std::int64_t, std::size_t> by_id;
  std::map<std::int64_t, std::string> labels;
};

Data load_data(db::Database& db, const ReportOptions& o);

/// GB/s of a measurement: the stored value, else input bytes / median.
std::optional<double> gbps_of(const db::MeasurementRecord& m);
/// Time per element, for comparing measurements at different n.
double us_per_element(const db::MeasurementRecord& m);
/// The faster of two ok measurements at one n (lower median, then smaller kernel id).
bool faster(const db::MeasurementRecord& a, const db::MeasurementRecord& b);

/// Families in the seeds' order (the ladder's), then unknown names in text order.
std::vector<std::string> family_order(const std::set<std::string>& present);
/// Index of a known family in the seeds' order, or -1.
int family_rank(const std::string& family);

/// The measured size nearest to \p want on a log scale (the smaller on a tie).
std::uint64_t nearest_size(const std::set<std::uint64_t>& sizes, std::uint64_t want);

/// "i32 sum".
std::string key_text(DType d, Op o);

}  // namespace tunedreduce::reports::detail
