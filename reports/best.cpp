// `report best`: the winners per device × type × operator × size interval.

#include <map>

#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

namespace {

std::string stale_detail(const db::WinnerRecord& w, const db::DeviceRecord& dev) {
  return "tuned with driver " + cuda_version_text(w.driver_version) + ", runtime " +
         cuda_version_text(w.runtime_version) + "; the device now has driver " +
         cuda_version_text(dev.fingerprint.driver_version) + ", runtime " +
         cuda_version_text(dev.fingerprint.runtime_version);
}

}  // namespace

bool is_stale(const db::WinnerRecord& w, const db::DeviceRecord& dev) {
  return w.driver_version != dev.fingerprint.driver_version ||
         w.runtime_version != dev.fingerprint.runtime_version;
}

void build_best(const Data& d, const ReportOptions& o, Report& r) {
  r.notes.push_back(
      "Each row is a size interval [n_lo, n_hi] and the kernel tuned for it, for the L2 state "
      "under 'L2' (cold: flushed before each launch; warm: the input just touched); a device may "
      "have a cold and a warm winner for the same sizes. Time and GB/s are "
      "the winner's evidence: its measurement at the size shown under 'measured at'. % theoretical "
      "is of the device's theoretical DRAM bandwidth (memory clock × bus width × 2); % attainable "
      "is of the attainable read bandwidth measured in the winner's run. Margin: how much slower "
      "the runner-up was (per element); negative when the tuner's tie rule preferred a winner "
      "within noise of a faster candidate. Stale: the device's driver or CUDA runtime has changed "
      "since the winner was tuned.");
  const auto ok = d.ok_by_key();
  for (const db::DeviceRecord& dev : d.devices) {
    Section s;
    s.table = "winners";
    s.title = d.full_label(dev.id);
    add_device_key(d, dev.id, s);
    s.columns = {col("dtype", "type"),
                 col("op", "op"),
                 col("l2", "L2"),
                 col("n_lo", "n from", true),
                 col("n_hi", "n to", true),
                 col("kernel", "kernel"),
                 col("measured_n", "measured at", true),
                 col("median_us", "µs", true, "us"),
                 col("gbps", "GB/s", true, "GB/s"),
                 col("pct_theoretical", "% theoretical", true, "%"),
                 col("pct_attainable", "% attainable", true, "%"),
                 col("runner_up", "runner-up"),
                 col("margin_pct", "margin", true, "%"),
                 col("stale", "stale")};
    s.columns[11].show = Show::not_terminal;
    s.empty_text = o.l2 ? std::string("no ") + db::l2_mode_name(*o.l2) +
                              "-L2 winners recorded for this device"
                        : std::string("no winners recorded for this device");
    // Rows come by dtype, op, L2 mode and n_lo: each mode's intervals together.
    for (const db::WinnerRecord& w : d.winners) {
      if (w.device_id != dev.id) continue;
      if (o.l2 && w.l2_mode != *o.l2) continue;
      std::vector<Cell> row;
      row.push_back(Cell::str(dtype_name(w.dtype)));
      row.push_back(Cell::str(op_name(w.op)));
      row.push_back(Cell::str(db::l2_mode_name(w.l2_mode)));
      row.push_back(Cell::count(w.n_lo));
      row.push_back(Cell::count(w.n_hi));
      row.push_back(Cell::str(w.kernel_id));
      const db::MeasurementRecord* ev = d.measurement(w.measurement_id);
      if (ev && ev->median_us) {
        const auto gbps = gbps_of(*ev);
        row.push_back(Cell::count(ev->n));
        row.push_back(Cell::number(*ev->median_us, 2).with_detail(
            "p10 " + fixed(ev->p10_us.value_or(0), 2) + " µs, p90 " +
            fixed(ev->p90_us.value_or(0), 2) + " µs, " + std::to_string(ev->repeats) +
            " repeats, L2 " + db::l2_mode_name(ev->l2_mode)));
        row.push_back(Cell::number(gbps, 1));
        std::optional<double> theo, att;
        if (gbps && dev.theoretical_gbps > 0) theo = 100 * *gbps / dev.theoretical_gbps;
        if (auto a = d.attainable(ev->run_id, dev.id); gbps && a) att = 100 * *gbps / *a;
        row.push_back(Cell::number(theo, 1));
        row.push_back(Cell::number(att, 1));
      } else {
        for (int i = 0; i < 5; ++i) row.push_back(Cell::none("evidence missing"));
      }
      row.push_back(w.runner_up_kernel_id ? Cell::str(*w.runner_up_kernel_id) : Cell::none());
      const db::MeasurementRecord* ru =
          w.runner_up_measurement_id ? d.measurement(*w.runner_up_measurement_id) : nullptr;
      if (ev && ru && ev->median_us && ru->median_us) {
        const double margin = 100 * (us_per_element(*ru) / us_per_element(*ev) - 1);
        row.push_back(Cell::number(margin, 1, "%").with_detail(
            "runner-up " + ru->kernel_id + ": " + fixed(*ru->median_us, 2) + " µs at n = " +
            size_text(ru->n)));
        if (margin >= 0) row.back().text = "+" + row.back().text;
      } else {
        row.push_back(Cell::none());
      }
      const bool stale = is_stale(w, dev);
      row.push_back(Cell::str(stale ? "yes" : "no").with_detail(stale_detail(w, dev)).marked(stale));
      s.rows.push_back(std::move(row));
    }

    // The fastest measured configuration at each size, one line per (type, operator).
    LineChart chart;
    chart.title = "Fastest measured configuration at each size (" +
                  std::string(db::l2_mode_name(d.l2)) + " L2)";
    chart.y_label = "GB/s";
    for (const auto& [key, ms] : ok) {
      if (key.device != dev.id) continue;
      std::map<std::uint64_t, const db::MeasurementRecord*> best;
      for (const auto* m : ms) {
        auto& b = best[m->n];
        if (!b || faster(*m, *b)) b = m;
      }
      LineChart::Series series;
      series.name = key_text(key.dtype, key.op);
      for (const auto& [n, m] : best)
        if (auto g = gbps_of(*m)) series.points.push_back({n, *g, m->kernel_id});
      chart.series.push_back(std::move(series));
    }
    if (s.rows.empty() && chart.series.empty()) continue;
    if (!chart.series.empty()) s.charts.push_back(std::move(chart));
    r.sections.push_back(std::move(s));
  }
  if (o.l2 && r.sections.empty() && !d.winners.empty()) {
    const db::L2Mode other = *o.l2 == db::L2Mode::cold ? db::L2Mode::warm : db::L2Mode::cold;
    r.empty = std::string("no ") + db::l2_mode_name(*o.l2) +
              "-L2 winners in the selection: it has " + std::to_string(d.winners.size()) +
              " of the other L2 mode (--l2 " + db::l2_mode_name(other) + " shows them)";
  }
  if (d.winners.empty() && !d.measurements.empty())
    r.empty = "no winners in the selection: it has " + std::to_string(d.measurements.size()) +
              " measurements but no winner was recorded from them (an interrupted run?); "
              "`tunedreduce report coverage` says what is missing";
}

}  // namespace tunedreduce::reports::detail
