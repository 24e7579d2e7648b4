// The ladder report: the seed kernels' progression, step by step, at one size (docs/reports.md).

#include <set>

#include "kernels/registry.hpp"
#include "reports/fastest.hpp"
#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

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
         (st.unroll == 0 || m.params.unroll == st.unroll) && (!st.smem || m.params.smem == st.smem);
}

}  // namespace

void build_ladder(const Data& d, const ReportOptions& o, Report& r) {
  const std::uint64_t want = o.n.value_or(default_n);
  r.notes.push_back(
      "The seeds' progression. Each step is the fastest measured configuration of that family — "
      "of that unroll factor for the unroll steps, of that shared-memory mode for the smem steps "
      "— at n = " +
      size_text(want) +
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
      s.notes.push_back("n = " + size_text(want) +
                        " was not measured for this key; the nearest "
                        "measured size, n = " +
                        size_text(n) + ", is used.");
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

}  // namespace tunedreduce::reports::detail
