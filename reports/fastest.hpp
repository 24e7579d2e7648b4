#pragma once
// What the report kinds built from measurements (variants.cpp, ladder.cpp, heatmap.cpp,
// compare.cpp) share. Each picks, wherever several configurations compete for one cell, the
// fastest ok measurement (lower median, then the smaller kernel id), of the report's L2 mode only.
// Internal to reports/.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/data.hpp"

namespace tunedreduce::reports::detail {

/// Puts \p m in \p slot when the slot is empty or \p m is faster.
void keep_faster(const db::MeasurementRecord*& slot, const db::MeasurementRecord* m);
/// The report's --families selection takes \p family (every family when none was given).
bool family_selected(const ReportOptions& o, const std::string& family);
/// A column id per family: the family's name when known, else "other1", "other2", ...
std::map<std::string, std::string> family_ids(const std::vector<std::string>& families);
/// \p gbps as a percentage of \p theoretical; nullopt without either.
std::optional<double> pct_of(std::optional<double> gbps, double theoretical);
/// "kernel id: 12.34 µs, 1234.5 GB/s": a cell's tooltip.
std::string measured_detail(const db::MeasurementRecord& m);
/// The key fields of a section of one (device, dtype, op).
void add_key(const Data& d, const Key& k, Section& s);
/// "device · f32 sum".
std::string key_title(const Data& d, const Key& k);

}  // namespace tunedreduce::reports::detail
