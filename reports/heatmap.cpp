// The heatmap report: GB/s of every block size × unroll factor of one family at one size
// (docs/reports.md).

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <variant>

#include "reports/fastest.hpp"
#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

void share_colour_scale(Report& r, const std::string& unit, const std::string& meaning,
                        const std::optional<std::string>& only_unit, int decimals) {
  double lo = INFINITY, hi = -INFINITY;
  std::size_t maps = 0;
  auto chosen = [&](const HeatmapChart& h) { return !only_unit || h.unit == *only_unit; };
  for (const Section& s : r.sections)
    for (const Chart& c : s.charts)
      if (const auto* h = std::get_if<HeatmapChart>(&c); h && chosen(*h)) {
        ++maps;
        for (const auto& row : h->values)
          for (const auto& v : row)
            if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
      }
  if (maps <= 1 || lo > hi) return;
  r.notes.push_back(
      std::string(only_unit ? "Every map of " + *only_unit : "Every map") +
      " uses one colour scale, " + fixed(lo, decimals) + " to " + fixed(hi, decimals) + unit +
      " (the lowest and highest cell of the report), so that a colour means " + meaning);
  for (Section& s : r.sections)
    for (Chart& c : s.charts)
      if (auto* h = std::get_if<HeatmapChart>(&c); h && chosen(*h)) {
        h->scale_lo = lo;
        h->scale_hi = hi;
        h->scale_note = "shared by the " + std::to_string(maps) + " maps";
      }
}

void build_heatmap(const Data& d, const ReportOptions& o, Report& r) {
  const std::uint64_t want = o.n.value_or(default_n);
  r.notes.push_back(
      "GB/s for every block size × unroll factor of one family at one size: each cell is the "
      "fastest of the configurations sharing that block and unroll factor (any finish and "
      "shared-memory mode). The best cell is marked.");
  for (const auto& [key, ms] : d.ok_by_key()) {
    std::set<std::string> present;
    for (const auto* m : ms)
      if (family_selected(o, m->params.family)) present.insert(m->params.family);
    for (const std::string& family : family_order(present)) {
      std::set<std::uint64_t> sizes;
      for (const auto* m : ms)
        if (m->params.family == family) sizes.insert(m->n);
      const std::uint64_t n = nearest_size(sizes, want);
      std::map<std::pair<int, int>, const db::MeasurementRecord*> cell;
      std::set<int> blocks;
      std::set<int> unrolls = {1, 2, 4, 8, 16};
      for (const auto* m : ms) {
        if (m->params.family != family || m->n != n) continue;
        keep_faster(cell[{m->params.block, m->params.unroll}], m);
        blocks.insert(m->params.block);
        unrolls.insert(m->params.unroll);
      }
      const db::MeasurementRecord* top = nullptr;
      for (const auto& [bu, m] : cell) keep_faster(top, m);

      Section s;
      s.table = "heatmap";
      s.title = key_title(d, key) + " · " + family + " · n = " + size_text(n);
      add_key(d, key, s);
      s.key.emplace_back("family", family);
      s.key.emplace_back("n", std::to_string(n));
      if (n != want)
        s.notes.push_back("n = " + size_text(want) +
                          " was not measured for this family; the "
                          "nearest measured size, n = " +
                          size_text(n) + ", is used.");
      s.columns.push_back(col("block", "block \\ unroll", true));
      for (int u : unrolls) {
        Column c = col("u" + std::to_string(u) + "_gbps", "u" + std::to_string(u), true, "GB/s");
        c.hide_if_empty = true;
        s.columns.push_back(c);
      }
      HeatmapChart chart;
      chart.title = family + ": GB/s at n = " + size_text(n);
      chart.row_title = "block";
      chart.col_title = "unroll";
      chart.unit = "GB/s";
      std::vector<int> used_unrolls;
      for (int u : unrolls)
        for (int b : blocks)
          if (cell.count({b, u})) {
            used_unrolls.push_back(u);
            break;
          }
      for (int u : used_unrolls) chart.cols.push_back("u" + std::to_string(u));
      for (int b : blocks) {
        std::vector<Cell> row{Cell::integer(b)};
        chart.rows.push_back(std::to_string(b));
        chart.values.emplace_back();
        chart.details.emplace_back();
        for (int u : unrolls) {
          auto it = cell.find({b, u});
          if (it == cell.end()) {
            row.push_back(Cell::none());
          } else {
            row.push_back(Cell::number(gbps_of(*it->second), 1)
                              .with_detail(measured_detail(*it->second))
                              .marked(it->second == top));
          }
          if (std::find(used_unrolls.begin(), used_unrolls.end(), u) == used_unrolls.end())
            continue;
          chart.values.back().push_back(it == cell.end() ? std::nullopt : gbps_of(*it->second));
          chart.details.back().push_back(it == cell.end() ? "not measured"
                                                          : measured_detail(*it->second));
        }
        s.rows.push_back(std::move(row));
      }
      if (top) s.notes.push_back("Best: " + measured_detail(*top) + ".");
      s.charts.push_back(std::move(chart));
      r.sections.push_back(std::move(s));
    }
  }
  // One colour scale for every map of the report, so that a colour is the same GB/s in each.
  share_colour_scale(r, " GB/s",
                     "the same bandwidth in each; the best cell of each map is outlined.");
}

}  // namespace tunedreduce::reports::detail
