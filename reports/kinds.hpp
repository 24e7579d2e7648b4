#pragma once
// The report kinds, each a function from the loaded rows to a Report (docs/reports.md).
// Internal to reports/.

#include <optional>
#include <set>
#include <string>

#include "reports/data.hpp"

namespace tunedreduce::reports::detail {

void build_best(const Data& d, const ReportOptions& o, Report& r);
void build_variants(const Data& d, const ReportOptions& o, Report& r);
void build_ladder(const Data& d, const ReportOptions& o, Report& r);
void build_heatmap(const Data& d, const ReportOptions& o, Report& r);
/// Gives every heatmap of \p r one colour scale (the lowest and highest cell of them all) where
/// there are several, with a note: "Every map uses one colour scale, LO to HI" + \p unit + " (the
/// lowest and highest cell of the report), so that a colour means " + \p meaning. With
/// \p only_unit, the maps whose unit it is (a report with maps of two kinds), the bounds written
/// with \p decimals.
void share_colour_scale(Report& r, const std::string& unit, const std::string& meaning,
                        const std::optional<std::string>& only_unit = std::nullopt,
                        int decimals = 0);
void build_compare(const Data& d, const ReportOptions& o, Report& r);
void build_bench(const Data& d, const ReportOptions& o, Report& r);
void build_coverage(db::Database& db, const Data& d, const ReportOptions& o, Report& r);
void build_segmented(const Data& d, const ReportOptions& o, Report& r);

/// "2^10, 2^11, 2^20" (at most \p max, then "… (+k more)").
std::string sizes_text(const std::set<std::uint64_t>& sizes, std::size_t max = 8);
/// "1024 2048 1048576": every size, for CSV and JSON.
std::string sizes_value(const std::set<std::uint64_t>& sizes);
/// The key fields of a device section.
void add_device_key(const Data& d, std::int64_t device, Section& s);
/// A column.
Column col(std::string id, std::string label, bool numeric = false, std::string unit = {},
           Show show = Show::everywhere);
/// The device's driver or runtime differs from the winner's at tuning time.
bool is_stale(const db::WinnerRecord& w, const db::DeviceRecord& dev);
/// "×1.85".
std::string ratio_text(double r);

/// Why the tie rule (docs/tuning.md) chose \p winner over \p faster_one, the fastest of a tie
/// whose median was \p fastest_median_us: the first criterion that tells them apart.
struct TieReason {
  std::string text;    // "tie: one launch", "tie: one block per tile", ...
  std::string detail;  // the criterion in words
};
TieReason tie_reason(const std::string& winner, const std::string& faster_one,
                     double fastest_median_us);

/// The attainable read bandwidth of the latest run that measured one on \p device.
std::optional<double> latest_attainable(const Data& d, std::int64_t device);
/// Horizontal lines at the device's theoretical and attainable bandwidth, where known.
void add_bandwidth_references(const Data& d, std::int64_t device, LineChart& c);
/// The three views a chart of a key against n comes in: GB/s (with the device's bandwidth
/// lines), median µs on a log axis, and CUB's median over the library's (log axis, a line at 1).
LineChart gbps_view(const Data& d, std::int64_t device, std::string title);
LineChart us_view(std::string title);
LineChart speedup_view(std::string title);
/// A call of a bench against a baseline: faster or slower when the medians differ by more than
/// noise_tolerance, else a tie.
enum class Verdict { faster, tie, slower };
struct Comparison {
  double speedup = 0;    // the baseline's median over the call's
  double tolerance = 0;  // the relative difference that counts (noise_tolerance)
  Verdict verdict = Verdict::tie;
};
std::optional<Comparison> compare_bench(const BenchPoint& p, db::BenchMethod m,
                                        db::BenchMethod base);
const char* verdict_name(Verdict v);
/// "×1.05 faster" ("×1.05" without \p with_verdict; the value: the speed-up), marked when
/// faster beyond noise; its tooltip says the medians, the tolerance, the verdict, the kernel the
/// library ran and the bench run.
Cell speedup_cell(const BenchPoint& p, db::BenchMethod m, db::BenchMethod base, bool with_verdict);

/// Three cells from a bench point (or absent ones without): CUB's median, and CUB's median over
/// the library's cached call and over its two-phase call (marked where faster beyond noise).
void add_bench_cells(const BenchPoint* p, std::vector<Cell>& row);

}  // namespace tunedreduce::reports::detail
