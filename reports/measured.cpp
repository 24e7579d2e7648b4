// The kinds built from measurements: variants, ladder, heatmap and compare. Each picks, wherever
// several configurations compete for one cell, the fastest ok measurement (lower median, then
// the smaller kernel id), of the report's L2 mode only.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "kernels/registry.hpp"
#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

namespace {

using MeasurementList = std::vector<const db::MeasurementRecord*>;

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
  for (const auto& f : families) ids[f] = family_rank(f) >= 0 ? f : "other" + std::to_string(++other);
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

}  // namespace

// --- variants ------------------------------------------------------------------------------------

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
    // Every known family is a column (empty ones are hidden from people), so that the CSV of
    // any database has the same header.
    std::set<std::string> all = present;
    for (kernels::Family f : kernels::all_families)
      if (family_selected(o, kernels::family_name(f))) all.insert(kernels::family_name(f));
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
        row.push_back(Cell::number(*m->median_us, 2).with_detail(measured_detail(*m)).marked(m == top));
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
    LineChart us = us_view("Median µs against n (log scale), the best configuration of each family");
    LineChart speedup =
        speedup_view("cub::DeviceReduce's median (tunedreduce bench) over each family's best");
    LineChart::Series cub_series;
    cub_series.name = "CUB (bench)";
    cub_series.baseline = true;
    for (std::uint64_t n : sizes)
      if (const BenchPoint* p = d.bench_at(key, n, d.l2))
        if (auto c = p->median(db::BenchMethod::cub))
          cub_series.points.push_back({n, *c, "cub::DeviceReduce (" +
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

// --- ladder --------------------------------------------------------------------------------------

namespace {

struct Step {
  const char* name;
  kernels::Family family;
  int unroll;        // 0: any
  const char* smem;  // nullptr: any
};

constexpr Step ladder_steps[] = {
    {"neighbored", kernels::Family::neighbored, 0, nullptr},
    {"neighbored_less", kernels::Family::neighbored_less, 0, nullptr},
    {"interleaved", kernels::Family::interleaved, 0, nullptr},
    {"unroll ×2", kernels::Family::unroll, 2, nullptr},
    {"unroll ×4", kernels::Family::unroll, 4, nullptr},
    {"unroll ×8", kernels::Family::unroll, 8, nullptr},
    {"unroll_warps", kernels::Family::unroll_warps, 0, nullptr},
    {"complete_unroll", kernels::Family::complete_unroll, 0, nullptr},
    {"smem static", kernels::Family::smem, 0, "static"},
    {"smem dynamic", kernels::Family::smem, 0, "dynamic"},
    {"warp_shuffle", kernels::Family::warp_shuffle, 0, nullptr},
    {"vectorized", kernels::Family::vectorized, 0, nullptr},
    {"tiled", kernels::Family::tiled, 0, nullptr},
    {"streaming", kernels::Family::streaming, 0, nullptr},
};

bool step_takes(const Step& st, const db::MeasurementRecord& m) {
  return m.params.family == kernels::family_name(st.family) &&
         (st.unroll == 0 || m.params.unroll == st.unroll) &&
         (!st.smem || m.params.smem == st.smem);
}

}  // namespace

void build_ladder(const Data& d, const ReportOptions& o, Report& r) {
  const std::uint64_t want = o.n.value_or(default_n);
  r.notes.push_back(
      "The seeds' progression. Each step is the fastest measured configuration of that family — "
      "of that unroll factor for the unroll steps, of that shared-memory mode for the smem steps "
      "— at n = " + size_text(want) +
      " (any block size, finish and other knobs; the kernel column names the one picked). "
      "Speed-up: the previous measured step's time divided by this step's; total: the first "
      "step's time divided by this step's.");
  for (const auto& [key, ms] : d.ok_by_key()) {
    std::set<std::uint64_t> sizes;
    for (const auto* m : ms) sizes.insert(m->n);
    const std::uint64_t n = nearest_size(sizes, want);
    const double theo = d.device(key.device).theoretical_gbps;

    Section s;
    s.table = "ladder";
    s.title = key_title(d, key) + " · n = " + size_text(n);
    add_key(d, key, s);
    s.key.emplace_back("n", std::to_string(n));
    if (n != want)
      s.notes.push_back("n = " + size_text(want) + " was not measured for this key; the nearest "
                        "measured size, n = " + size_text(n) + ", is used.");
    s.columns = {col("step", "#", true),
                 col("name", "step"),
                 col("kernel", "kernel (fastest of the step)"),
                 col("block", "block", true),
                 col("unroll", "unroll", true),
                 col("median_us", "µs", true, "us"),
                 col("spread_pct", "p10–p90", true, "%"),
                 col("gbps", "GB/s", true, "GB/s"),
                 col("pct_theoretical", "% theoretical", true, "%"),
                 col("speedup", "speed-up", true, "x"),
                 col("speedup_over", "over"),
                 col("total_speedup", "total", true, "x")};

    BarChart chart;
    chart.title = "GB/s of each step at n = " + size_text(n);
    chart.unit = "GB/s";
    const db::MeasurementRecord* prev = nullptr;
    const db::MeasurementRecord* first = nullptr;
    const char* prev_name = nullptr;
    int number = 0;
    for (const Step& st : ladder_steps) {
      ++number;
      const db::MeasurementRecord* m = nullptr;
      for (const auto* x : ms)
        if (x->n == n && step_takes(st, *x)) keep_faster(m, x);
      std::vector<Cell> row{Cell::integer(number), Cell::str(st.name)};
      if (!m) {
        row.push_back(Cell::none("not measured"));
        for (int i = 0; i < 9; ++i) row.push_back(Cell::none());
        s.rows.push_back(std::move(row));
        chart.bars.push_back({st.name, std::nullopt, "not measured"});
        continue;
      }
      const auto g = gbps_of(*m);
      row.push_back(Cell::str(m->kernel_id));
      row.push_back(Cell::integer(m->params.block));
      row.push_back(Cell::integer(m->params.unroll));
      row.push_back(Cell::number(*m->median_us, 2));
      row.push_back(Cell::number(spread_pct(m->median_us, m->p10_us, m->p90_us), 1, " %")
                        .with_detail(spread_detail(m->p10_us, m->p90_us, m->repeats)));
      row.push_back(Cell::number(g, 1));
      row.push_back(Cell::number(pct_of(g, theo), 1));
      std::string note;
      if (prev) {
        const double up = *prev->median_us / *m->median_us;
        Cell c = Cell::number(up, 2);
        c.text = ratio_text(up);
        row.push_back(std::move(c));
        row.push_back(Cell::str(prev_name));
        note = ratio_text(up);
      } else {
        row.push_back(Cell::none());
        row.push_back(Cell::none());
      }
      if (first) {
        const double total = *first->median_us / *m->median_us;
        Cell c = Cell::number(total, 2);
        c.text = ratio_text(total);
        row.push_back(std::move(c));
      } else {
        row.push_back(Cell::none());
        first = m;
      }
      s.rows.push_back(std::move(row));
      chart.bars.push_back({st.name, g, note});
      prev = m;
      prev_name = st.name;
    }
    if (!first) continue;  // no step of the ladder was measured for this key
    s.charts.push_back(std::move(chart));
    r.sections.push_back(std::move(s));
  }
}

// --- heatmap -------------------------------------------------------------------------------------

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
        s.notes.push_back("n = " + size_text(want) + " was not measured for this family; the "
                          "nearest measured size, n = " + size_text(n) + ", is used.");
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
          if (std::find(used_unrolls.begin(), used_unrolls.end(), u) == used_unrolls.end()) continue;
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
  double lo = INFINITY, hi = -INFINITY;
  std::size_t maps = 0;
  for (const Section& s : r.sections)
    for (const Chart& c : s.charts)
      if (const auto* h = std::get_if<HeatmapChart>(&c)) {
        ++maps;
        for (const auto& row : h->values)
          for (const auto& v : row)
            if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
      }
  if (maps > 1 && lo <= hi) {
    r.notes.push_back("Every map uses one colour scale, " + fixed(lo, 0) + " to " + fixed(hi, 0) +
                      " GB/s (the lowest and highest cell of the report), so that a colour means "
                      "the same bandwidth in each; the best cell of each map is outlined.");
    for (Section& s : r.sections)
      for (Chart& c : s.charts)
        if (auto* h = std::get_if<HeatmapChart>(&c)) {
          h->scale_lo = lo;
          h->scale_hi = hi;
          h->scale_note = "shared by the " + std::to_string(maps) + " maps";
        }
  }
}

// --- compare -------------------------------------------------------------------------------------

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
