// The compare report: the fastest configuration of each device per type, operator and size
// (docs/reports.md).

#include <map>
#include <optional>
#include <set>

#include "reports/fastest.hpp"
#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

void build_compare(const Data& d, const ReportOptions&, Report& r) {
  r.notes.push_back(
      "For every type and operator, the fastest measured configuration of each device at each "
      "size: its GB/s, the percentage of that device's theoretical bandwidth, and the kernel. "
      "Spread: the fastest device's GB/s over the slowest's.");
  const auto ok = d.ok_by_key();
  std::vector<std::int64_t> devices;  // with data, in database order
  for (const auto& dev : d.devices)
    for (const auto& [key, ms] : ok)
      if (key.device == dev.id) {
        devices.push_back(dev.id);
        break;
      }
  if (devices.size() == 1)
    r.notes.push_back("Only one device in the selection has measurements (" + d.label(devices[0]) +
                      "): it is shown alone. Compare needs two or more.");
  std::set<std::pair<DType, Op>> pairs;
  for (const auto& [key, ms] : ok) pairs.insert({key.dtype, key.op});
  for (const auto& [dtype, op] : pairs) {
    std::map<std::int64_t, std::map<std::uint64_t, const db::MeasurementRecord*>> best;
    std::set<std::uint64_t> sizes;
    for (std::int64_t dev : devices) {
      auto it = ok.find({dev, dtype, op});
      if (it == ok.end()) continue;
      for (const auto* m : it->second) {
        keep_faster(best[dev][m->n], m);
        sizes.insert(m->n);
      }
    }
    Section s;
    s.table = "compare";
    s.title = key_text(dtype, op);
    s.key.emplace_back("dtype", dtype_name(dtype));
    s.key.emplace_back("op", op_name(op));
    s.columns.push_back(col("n", "n", true));
    for (std::int64_t dev : devices) {
      const std::string k = d.device(dev).key;
      const std::string l = d.label(dev);
      Column g = col("gbps_" + k, l + " GB/s", true, "GB/s");
      Column p = col("pct_theoretical_" + k, l + " %", true, "%");
      Column kc = col("kernel_" + k, l + " kernel", false, {}, Show::not_terminal);
      g.hide_if_empty = p.hide_if_empty = kc.hide_if_empty = true;
      s.columns.push_back(g);
      s.columns.push_back(p);
      s.columns.push_back(kc);
    }
    s.columns.push_back(col("fastest", "fastest"));
    s.columns.push_back(col("spread", "spread", true, "x"));
    for (std::uint64_t n : sizes) {
      std::vector<Cell> row{Cell::count(n)};
      std::optional<double> hi, lo;
      std::int64_t fastest = 0;
      for (std::int64_t dev : devices) {
        const db::MeasurementRecord* m = nullptr;
        if (auto it = best.find(dev); it != best.end())
          if (auto jt = it->second.find(n); jt != it->second.end()) m = jt->second;
        const auto g = m ? gbps_of(*m) : std::nullopt;
        if (g && (!hi || *g > *hi)) hi = g, fastest = dev;
        if (g && (!lo || *g < *lo)) lo = g;
        row.push_back(m ? Cell::number(g, 1).with_detail(measured_detail(*m)) : Cell::none());
        row.push_back(Cell::number(pct_of(g, d.device(dev).theoretical_gbps), 1));
        row.push_back(m ? Cell::str(m->kernel_id) : Cell::none());
      }
      // Mark the fastest device's GB/s.
      for (std::size_t i = 0; i < devices.size(); ++i)
        if (devices[i] == fastest && hi) row[1 + 3 * i].mark = true;
      row.push_back(hi ? Cell::str(d.label(fastest)) : Cell::none());
      if (hi && lo && *lo > 0) {
        Cell c = Cell::number(*hi / *lo, 2);
        c.text = ratio_text(*hi / *lo);
        row.push_back(std::move(c));
      } else {
        row.push_back(Cell::none());
      }
      s.rows.push_back(std::move(row));
    }
    LineChart chart, us;
    chart.title = "GB/s against n, the fastest configuration of each device";
    chart.y_label = "GB/s";
    chart.view = "GB/s";
    us.title = "Median µs against n (log scale), the fastest configuration of each device";
    us.y_label = "µs";
    us.y_scale = LineChart::YScale::log;
    us.view = "µs (log)";
    for (std::int64_t dev : devices) {
      auto it = best.find(dev);
      if (it == best.end()) continue;
      LineChart::Series series, us_series;
      series.name = us_series.name = d.label(dev);
      for (const auto& [n, m] : it->second) {
        if (auto g = gbps_of(*m)) series.points.push_back({n, *g, measured_detail(*m)});
        us_series.points.push_back({n, *m->median_us, measured_detail(*m)});
      }
      chart.series.push_back(std::move(series));
      us.series.push_back(std::move(us_series));
    }
    s.charts.push_back(std::move(chart));
    s.charts.push_back(std::move(us));
    r.sections.push_back(std::move(s));
  }
}

}  // namespace tunedreduce::reports::detail
