// The variants report: every family's fastest configuration per size, against CUB where a bench
// measured it (docs/reports.md).

#include <map>
#include <set>

#include "kernels/registry.hpp"
#include "kernels/space.hpp"
#include "reports/fastest.hpp"
#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

void build_variants(const Data& d, const ReportOptions& o, Report& r) {
  r.notes.push_back(
      "Each cell is the fastest measured configuration of its family at that size (median µs over "
      "every block size, unroll factor, shared-memory mode and finish); the fastest family of the "
      "row is marked, and p10–p90 is how far its single runs spread ((p90 − p10) / median). The "
      "charts plot the same configurations: GB/s, or µs on a log scale, where the small sizes "
      "are told apart.");
  r.notes.push_back(
      "CUB µs and × CUB come from `tunedreduce bench` where it ran on the device at that size in "
      "the same L2 state: cub::DeviceReduce's median over the library's, for its cached and its "
      "two-phase call (the kernel the library looks up, timed as production calls it; the family "
      "columns are the tuner's measurements), marked where faster beyond noise. The speed-up view "
      "sets each family's best against the same CUB time.");
  for (const auto& [key, ms] : d.ok_by_key()) {
    std::map<std::string, std::map<std::uint64_t, const db::MeasurementRecord*>> best;
    std::set<std::string> present;
    std::set<std::uint64_t> sizes;
    for (const auto* m : ms) {
      if (!family_selected(o, m->params.family)) continue;
      keep_faster(best[m->params.family][m->n], m);
      present.insert(m->params.family);
      sizes.insert(m->n);
    }
    if (present.empty()) continue;
    const double theo = d.device(key.device).theoretical_gbps;
    // Every known family of the key's operator is a column (empty ones are hidden from people),
    // so that the CSV of any database has the same header per operator (the exact families for
    // exact_sum, the 16-byte-load ones for wide_sum, vectorized, streaming and single_tile for
    // argmin and argmax, the twelve others for sum, min and max: space::family_applies).
    std::set<std::string> all = present;
    for (kernels::Family f : kernels::all_families)
      if (family_selected(o, kernels::family_name(f)) &&
          kernels::space::family_applies(f, key.dtype, key.op))
        all.insert(kernels::family_name(f));
    const auto families = family_order(all);
    const auto ids = family_ids(families);

    Section s;
    s.table = "variants";
    s.title = key_title(d, key);
    add_key(d, key, s);
    s.columns.push_back(col("n", "n", true));
    for (const auto& f : families) {
      Column c = col(ids.at(f) + "_us", f, true, "us");
      c.hide_if_empty = true;
      c.vertical = true;
      s.columns.push_back(c);
    }
    for (const auto& f : families) {
      s.columns.push_back(col(ids.at(f) + "_gbps", f + " GB/s", true, "GB/s", Show::machines));
      s.columns.push_back(col(ids.at(f) + "_kernel", f + " kernel", false, {}, Show::machines));
    }
    s.columns.push_back(col("best_family", "fastest"));
    s.columns.push_back(col("best_kernel", "fastest kernel", false, {}, Show::machines));
    s.columns.push_back(col("best_gbps", "GB/s", true, "GB/s"));
    s.columns.push_back(col("best_pct_theoretical", "% theor.", true, "%"));
    s.columns.push_back(col("best_spread_pct", "p10–p90", true, "%"));
    s.columns.push_back(col("cub_us", "CUB µs", true, "us"));
    s.columns.push_back(col("speedup_cached", "× CUB cached", true, "x"));
    s.columns.push_back(col("speedup_two_phase", "× CUB two-phase", true, "x"));
    for (std::size_t i = s.columns.size() - 3; i < s.columns.size(); ++i)
      s.columns[i].hide_if_empty = true;

    for (std::uint64_t n : sizes) {
      std::vector<Cell> row{Cell::count(n)};
      const db::MeasurementRecord* top = nullptr;
      for (const auto& f : families) {
        auto fit = best.find(f);
        if (fit == best.end()) continue;
        auto it = fit->second.find(n);
        if (it != fit->second.end()) keep_faster(top, it->second);
      }
      std::vector<Cell> gbps_cells;
      for (const auto& f : families) {
        const db::MeasurementRecord* m = nullptr;
        if (auto fit = best.find(f); fit != best.end())
          if (auto it = fit->second.find(n); it != fit->second.end()) m = it->second;
        if (!m) {
          row.push_back(Cell::none());
          gbps_cells.push_back(Cell::none());
          gbps_cells.push_back(Cell::none());
          continue;
        }
        row.push_back(
            Cell::number(*m->median_us, 2).with_detail(measured_detail(*m)).marked(m == top));
        gbps_cells.push_back(Cell::number(gbps_of(*m), 1));
        gbps_cells.push_back(Cell::str(m->kernel_id));
      }
      for (auto& c : gbps_cells) row.push_back(std::move(c));
      row.push_back(Cell::str(top->params.family).with_detail(top->kernel_id));
      row.push_back(Cell::str(top->kernel_id));
      row.push_back(Cell::number(gbps_of(*top), 1));
      row.push_back(Cell::number(pct_of(gbps_of(*top), theo), 1));
      row.push_back(Cell::number(spread_pct(top->median_us, top->p10_us, top->p90_us), 1, " %")
                        .with_detail(top->kernel_id + ": " +
                                     spread_detail(top->p10_us, top->p90_us, top->repeats)));
      add_bench_cells(d.bench_at(key, n, d.l2), row);
      s.rows.push_back(std::move(row));
    }

    LineChart chart =
        gbps_view(d, key.device, "GB/s against n, the best configuration of each family");
    LineChart us =
        us_view("Median µs against n (log scale), the best configuration of each family");
    LineChart speedup =
        speedup_view("cub::DeviceReduce's median (tunedreduce bench) over each family's best");
    LineChart::Series cub_series;
    cub_series.name = "CUB (bench)";
    cub_series.baseline = true;
    for (std::uint64_t n : sizes)
      if (const BenchPoint* p = d.bench_at(key, n, d.l2))
        if (auto c = p->median(db::BenchMethod::cub))
          cub_series.points.push_back({n, *c,
                                       "cub::DeviceReduce (" +
                                           spread_detail(p->get(db::BenchMethod::cub)->p10_us,
                                                         p->get(db::BenchMethod::cub)->p90_us,
                                                         p->get(db::BenchMethod::cub)->repeats) +
                                           ")"});
    for (const auto& f : families) {
      auto fit = best.find(f);
      if (fit == best.end()) continue;
      LineChart::Series series, us_series, up_series;
      series.name = us_series.name = up_series.name = f;
      for (const auto& [n, m] : fit->second) {
        if (auto g = gbps_of(*m)) series.points.push_back({n, *g, measured_detail(*m)});
        us_series.points.push_back({n, *m->median_us, measured_detail(*m)});
        if (const BenchPoint* p = d.bench_at(key, n, d.l2))
          if (auto c = p->median(db::BenchMethod::cub))
            up_series.points.push_back({n, *c / *m->median_us, measured_detail(*m)});
      }
      chart.series.push_back(std::move(series));
      us.series.push_back(std::move(us_series));
      if (!cub_series.points.empty()) speedup.series.push_back(std::move(up_series));
    }
    s.charts.push_back(std::move(chart));
    if (!cub_series.points.empty()) us.series.push_back(cub_series);
    s.charts.push_back(std::move(us));
    if (!cub_series.points.empty()) s.charts.push_back(std::move(speedup));
    r.sections.push_back(std::move(s));
  }
}

}  // namespace tunedreduce::reports::detail
