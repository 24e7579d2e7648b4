#pragma once
// The report kinds, each a function from the loaded rows to a Report (docs/reports.md).
// Internal to reports/.

#include <set>
#include <string>

#include "reports/data.hpp"

namespace tunedreduce::reports::detail {

void build_best(const Data& d, const ReportOptions& o, Report& r);
void build_variants(const Data& d, const ReportOptions& o, Report& r);
void build_ladder(const Data& d, const ReportOptions& o, Report& r);
void build_heatmap(const Data& d, const ReportOptions& o, Report& r);
void build_compare(const Data& d, const ReportOptions& o, Report& r);
void build_coverage(db::Database& db, const Data& d, const ReportOptions& o, Report& r);

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

}  // namespace tunedreduce::reports::detail
