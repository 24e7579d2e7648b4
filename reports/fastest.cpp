#include "reports/fastest.hpp"

#include <algorithm>

#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

void keep_faster(const db::MeasurementRecord*& slot, const db::MeasurementRecord* m) {
  if (!slot || faster(*m, *slot)) slot = m;
}

bool family_selected(const ReportOptions& o, const std::string& family) {
  return o.families.empty() ||
         std::find(o.families.begin(), o.families.end(), family) != o.families.end();
}

// Column ids must be stable and plain: known families are; anything else in the database is
// numbered (its text stays in the label).
std::map<std::string, std::string> family_ids(const std::vector<std::string>& families) {
  std::map<std::string, std::string> ids;
  int other = 0;
  for (const auto& f : families)
    ids[f] = family_rank(f) >= 0 ? f : "other" + std::to_string(++other);
  return ids;
}

std::optional<double> pct_of(std::optional<double> gbps, double theoretical) {
  if (!gbps || theoretical <= 0) return std::nullopt;
  return 100 * *gbps / theoretical;
}

std::string measured_detail(const db::MeasurementRecord& m) {
  const auto g = gbps_of(m);
  return m.kernel_id + ": " + fixed(m.median_us.value_or(0), 2) + " µs" +
         (g ? ", " + fixed(*g, 1) + " GB/s" : std::string());
}

void add_key(const Data& d, const Key& k, Section& s) {
  add_device_key(d, k.device, s);
  s.key.emplace_back("dtype", dtype_name(k.dtype));
  s.key.emplace_back("op", op_name(k.op));
}

std::string key_title(const Data& d, const Key& k) {
  return d.full_label(k.device) + " · " + key_text(k.dtype, k.op);
}

}  // namespace tunedreduce::reports::detail
