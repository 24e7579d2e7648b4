// `report best`: the winners per device × type × operator × size interval.

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "kernels/registry.hpp"
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

// The tie rule's tolerance for two ok measurements today (docs/tuning.md): two standard errors
// of the medians' difference, clamped to [0.5 %, 1 %].
double tie_tolerance(const db::MeasurementRecord& a, const db::MeasurementRecord& b) {
  return std::min(0.01, noise_tolerance(a.median_us, a.p10_us, a.p90_us, a.repeats, b.median_us,
                                        b.p10_us, b.p90_us, b.repeats));
}

/// Where the winner's evidence was measured (docs/database.md, "Provenance per row"): the host,
/// the card, the driver and CUDA runtime (the run's; for runs older than schema version 5 the
/// winner's, recorded when it was tuned), the clocks during the measurement, the tool version,
/// the registry manifest, the run and the shard it was merged from.
/// The same in words: "measured on node-7, GPU GPU-…, driver 13.1, CUDA 13.0, SM 1980 MHz,
/// memory 2619 MHz, tunedreduce 0.3.0, manifest …, run …".
std::string provenance_text(const Data& d, const db::WinnerRecord& w,
                            const db::MeasurementRecord& ev) {
  const auto run = d.runs.find(ev.run_id);
  const db::RunRecord* r = run != d.runs.end() ? &run->second : nullptr;
  const auto gpu = ev.gpu_id ? d.gpus.find(*ev.gpu_id) : d.gpus.end();
  std::string s = "measured on " + (r ? r->info.host : std::string("an unknown host"));
  s += gpu != d.gpus.end() ? ", " + gpu->second.uuid : std::string(", GPU not recorded");
  s += ", driver " +
       cuda_version_text(r && r->info.driver_version ? *r->info.driver_version : w.driver_version);
  s += ", CUDA " + cuda_version_text(r && r->info.runtime_version ? *r->info.runtime_version
                                                                  : w.runtime_version);
  if (ev.sm_clock_mhz) s += fmt::format(", SM {} MHz", *ev.sm_clock_mhz);
  if (ev.mem_clock_mhz) s += fmt::format(", memory {} MHz", *ev.mem_clock_mhz);
  if (r)
    s += ", tunedreduce " + r->info.tool_version + ", manifest " + r->info.manifest_hash +
         ", run " + r->uuid;
  if (w.source) s += ", merged from " + *w.source;
  return s;
}

void add_provenance_cells(const Data& d, const db::WinnerRecord& w, const db::MeasurementRecord* ev,
                          std::vector<Cell>& row) {
  const std::optional<std::int64_t> run_id = ev ? std::optional(ev->run_id) : w.run_id;
  const auto run = run_id ? d.runs.find(*run_id) : d.runs.end();
  const db::RunRecord* r = run != d.runs.end() ? &run->second : nullptr;
  row.push_back(r ? Cell::str(r->info.host) : Cell::none());
  const auto gpu = ev && ev->gpu_id ? d.gpus.find(*ev->gpu_id) : d.gpus.end();
  row.push_back(gpu != d.gpus.end() ? Cell::str(gpu->second.uuid)
                                    : Cell::none("not recorded (before schema version 5)"));
  auto version = [](std::optional<int> of_run, int of_winner) {
    Cell c = Cell::integer(of_run.value_or(of_winner));
    c.text = cuda_version_text(of_run.value_or(of_winner));
    return std::move(c).with_detail(of_run ? "the run's" : "the winner's, when it was tuned");
  };
  row.push_back(version(r ? r->info.driver_version : std::nullopt, w.driver_version));
  row.push_back(version(r ? r->info.runtime_version : std::nullopt, w.runtime_version));
  row.push_back(ev && ev->sm_clock_mhz ? Cell::integer(*ev->sm_clock_mhz) : Cell::none());
  row.push_back(ev && ev->mem_clock_mhz ? Cell::integer(*ev->mem_clock_mhz) : Cell::none());
  row.push_back(r ? Cell::str(r->info.tool_version) : Cell::none());
  row.push_back(r ? Cell::str(r->info.manifest_hash) : Cell::none());
  row.push_back(r ? Cell::str(r->uuid) : Cell::none());
  row.push_back(w.source ? Cell::str(*w.source) : Cell::none("recorded here"));
}

}  // namespace

bool is_stale(const db::WinnerRecord& w, const db::DeviceRecord& dev) {
  return w.driver_version != dev.fingerprint.driver_version ||
         w.runtime_version != dev.fingerprint.runtime_version;
}

TieReason tie_reason(const std::string& winner, const std::string& faster_one,
                     double fastest_median_us) {
  const auto pw = kernels::parse_id(winner), pf = kernels::parse_id(faster_one);
  if (!pw || !pf) return {"tie: smaller id", "the tie rule's last criterion: the smaller id"};
  // docs/tuning.md: one launch counts while a second launch (2.4 µs) is more than the 1 % the
  // rule may give away, i.e. below 240 µs.
  const bool one_launch_counts = fastest_median_us * 0.01 < 2.4;
  const bool lw = pw->finish != kernels::Finish::two_pass,
             lf = pf->finish != kernels::Finish::two_pass;
  if (one_launch_counts && lw != lf)
    return {"tie: one launch",
            "a one-launch finish (single_pass, packed) is preferred to two_pass below 240 µs, "
            "where the second kernel's launch (2.4 µs) costs more than a tie may give away"};
  const bool gw = kernels::has_persistent_grid(pw->family),
             gf = kernels::has_persistent_grid(pf->family);
  if (!one_launch_counts && gw != gf)
    return {"tie: one block per tile",
            "from 240 µs up a grid of one block per tile is preferred to a persistent grid"};
  const long ww = static_cast<long>(pw->block) * pw->unroll,
             wf = static_cast<long>(pf->block) * pf->unroll;
  if (ww != wf)
    return {"tie: smaller block × unroll",
            "the smaller block × unroll is preferred (less work per block in flight)"};
  return {"tie: smaller id", "the tie rule's last criterion: the smaller id"};
}

std::optional<double> latest_attainable(const Data& d, std::int64_t device) {
  std::optional<double> out;
  for (const auto& [id, run] : d.runs)  // by id: the latest run wins
    for (const auto& a : run.attainable)
      if (a.device_id == device && a.gbps > 0) out = a.gbps;
  return out;
}

void add_bandwidth_references(const Data& d, std::int64_t device, LineChart& c) {
  const auto& dev = d.device(device);
  if (dev.theoretical_gbps > 0)
    c.references.push_back(
        {dev.theoretical_gbps, "theoretical " + fixed(dev.theoretical_gbps, 0) + " GB/s"});
  if (auto a = latest_attainable(d, device))
    c.references.push_back({*a, "attainable read " + fixed(*a, 0) + " GB/s"});
}

LineChart gbps_view(const Data& d, std::int64_t device, std::string title) {
  LineChart c;
  c.title = std::move(title);
  c.y_label = "GB/s";
  c.view = "GB/s";
  add_bandwidth_references(d, device, c);
  return c;
}

LineChart us_view(std::string title) {
  LineChart c;
  c.title = std::move(title);
  c.y_label = "µs";
  c.y_scale = LineChart::YScale::log;
  c.view = "µs (log)";
  return c;
}

LineChart speedup_view(std::string title) {
  LineChart c;
  c.title = std::move(title);
  c.y_label = "× CUB";
  c.y_scale = LineChart::YScale::log;
  c.view = "speed-up vs CUB";
  c.references.push_back({1.0, "CUB"});
  return c;
}

void build_best(const Data& d, const ReportOptions& o, Report& r) {
  r.notes.push_back(
      "Each row is a size interval [n_lo, n_hi] and the kernel tuned for it, for the L2 state "
      "under 'L2' (cold: flushed before each launch; warm: the input just touched); a device may "
      "have a cold and a warm winner for the same sizes. Time and GB/s are "
      "the winner's evidence: its measurement at the size shown under 'measured at'; p10–p90 is "
      "how far its single runs spread ((p90 − p10) / median). % theoretical "
      "is of the device's theoretical DRAM bandwidth (memory clock × bus width × 2); % attainable "
      "is of the attainable read bandwidth measured in the winner's run. Margin: how much slower "
      "the runner-up was (per element); negative when the tuner's tie rule preferred a winner "
      "within noise of a faster candidate, and 'why' then names the rule's criterion "
      "(docs/tuning.md). Stale: the device's driver or CUDA runtime has changed "
      "since the winner was tuned. Where the evidence was measured — host, GPU, driver, CUDA, "
      "clocks, tool version, manifest, run — is in the CSV and JSON columns and in the tooltip "
      "of 'measured at': the GPU's UUID and the run's driver and runtime since schema version 5; "
      "for older runs the driver and runtime the winner recorded.");
  r.notes.push_back(
      "CUB µs and × CUB come from `tunedreduce bench` where it ran on the device at the size "
      "measured, in the same L2 state: cub::DeviceReduce's median over the library's, for its "
      "cached call and its two-phase call (×1.05: 5 % faster than CUB; marked where the "
      "difference is beyond noise, `report bench` has the details). They are empty where no "
      "bench was recorded.");
  const auto ok = d.ok_by_key();
  for (const db::DeviceRecord& dev : d.devices) {
    Section s;
    s.table = "winners";
    s.title = d.full_label(dev.id);
    add_device_key(d, dev.id, s);
    s.columns = {col("dtype", "type"), col("op", "op"), col("l2", "L2"),
                 col("n_lo", "n from", true), col("n_hi", "n to", true), col("kernel", "kernel"),
                 col("measured_n", "measured at", true), col("median_us", "µs", true, "us"),
                 col("spread_pct", "p10–p90", true, "%"), col("gbps", "GB/s", true, "GB/s"),
                 col("pct_theoretical", "% theoretical", true, "%"),
                 col("pct_attainable", "% attainable", true, "%"),
                 col("runner_up", "runner-up", false, {}, Show::not_terminal),
                 col("margin_pct", "margin", true, "%"), col("why", "why"),
                 col("cub_us", "CUB µs", true, "us"),
                 col("speedup_cached", "× CUB cached", true, "x"),
                 col("speedup_two_phase", "× CUB two-phase", true, "x"), col("stale", "stale"),
                 // Provenance of the evidence: wide, so in CSV and JSON, and in the tooltip of
                 // 'measured at' (provenance_text) for people.
                 col("host", "host", false, {}, Show::machines),
                 col("gpu", "GPU", false, {}, Show::machines),
                 col("driver", "driver", true, {}, Show::machines),
                 col("cuda", "CUDA", true, {}, Show::machines),
                 col("sm_clock_mhz", "SM clock", true, "MHz", Show::machines),
                 col("mem_clock_mhz", "memory clock", true, "MHz", Show::machines),
                 col("tool_version", "tool", false, {}, Show::machines),
                 col("manifest", "manifest", false, {}, Show::machines),
                 col("run", "run", false, {}, Show::machines),
                 col("source", "source", false, {}, Show::machines)};
    for (std::size_t i = 15; i <= 17; ++i) s.columns[i].hide_if_empty = true;
    s.empty_text =
        o.l2 ? std::string("no ") + db::l2_mode_name(*o.l2) + "-L2 winners recorded for this device"
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
        row.push_back(Cell::count(ev->n).with_detail(provenance_text(d, w, *ev)));
        row.push_back(Cell::number(*ev->median_us, 2)
                          .with_detail(spread_detail(ev->p10_us, ev->p90_us, ev->repeats) +
                                       ", L2 " + db::l2_mode_name(ev->l2_mode)));
        row.push_back(Cell::number(spread_pct(ev->median_us, ev->p10_us, ev->p90_us), 1, " %")
                          .with_detail(spread_detail(ev->p10_us, ev->p90_us, ev->repeats)));
        row.push_back(Cell::number(gbps, 1));
        std::optional<double> theo, att;
        if (gbps && dev.theoretical_gbps > 0) theo = 100 * *gbps / dev.theoretical_gbps;
        if (auto a = d.attainable(ev->run_id, dev.id); gbps && a) att = 100 * *gbps / *a;
        row.push_back(Cell::number(theo, 1));
        row.push_back(Cell::number(att, 1));
      } else {
        for (int i = 0; i < 6; ++i) row.push_back(Cell::none("evidence missing"));
      }
      row.push_back(w.runner_up_kernel_id ? Cell::str(*w.runner_up_kernel_id) : Cell::none());
      const db::MeasurementRecord* ru =
          w.runner_up_measurement_id ? d.measurement(*w.runner_up_measurement_id) : nullptr;
      if (ev && ru && ev->median_us && ru->median_us) {
        const double margin = 100 * (us_per_element(*ru) / us_per_element(*ev) - 1);
        row.push_back(Cell::number(margin, 1, "%")
                          .with_detail("runner-up " + ru->kernel_id + ": " +
                                       fixed(*ru->median_us, 2) + " µs at n = " + size_text(ru->n) +
                                       " (" + spread_detail(ru->p10_us, ru->p90_us, ru->repeats) +
                                       ")"));
        if (margin >= 0) row.back().text = "+" + row.back().text;
        if (margin >= 0) {
          row.push_back(Cell::str("fastest").with_detail("no ok candidate was faster at n = " +
                                                         size_text(ev->n)));
        } else {
          const TieReason why = tie_reason(w.kernel_id, ru->kernel_id, *ru->median_us);
          std::string detail = "the runner-up " + ru->kernel_id + " was " + fixed(-margin, 1) +
                               " % faster, within noise by the tie rule that chose; " + why.detail;
          const double tol = 100 * tie_tolerance(*ev, *ru);
          if (ru->n == ev->n && -margin >= tol + 0.05)
            detail +=
                ". Today's rule would not call it a tie: its tolerance for these two "
                "measurements is " +
                fixed(tol, 1) +
                " % (the winner was chosen by an "
                "older, wider one; retune to apply today's)";
          row.push_back(Cell::str(why.text).with_detail(detail));
        }
      } else {
        row.push_back(Cell::none());
        row.push_back(ev && !ru && !w.runner_up_kernel_id ? Cell::str("only candidate")
                                                          : Cell::none());
      }
      add_bench_cells(ev ? d.bench_at({dev.id, w.dtype, w.op}, ev->n, w.l2_mode) : nullptr, row);
      const bool stale = is_stale(w, dev);
      row.push_back(
          Cell::str(stale ? "yes" : "no").with_detail(stale_detail(w, dev)).marked(stale));
      add_provenance_cells(d, w, ev, row);
      s.rows.push_back(std::move(row));
    }

    // The winner at each measured size, one line per (type, operator): the measurement of the
    // kernel whose interval holds the size (the evidence where it was measured there).
    const std::string mode = db::l2_mode_name(d.l2);
    LineChart gbps_chart =
        gbps_view(d, dev.id, "The winner at each measured size: GB/s (" + mode + " L2)");
    LineChart us_chart =
        us_view("The winner at each measured size: median µs, log scale (" + mode + " L2)");
    LineChart speedup_chart =
        speedup_view("The library against cub::DeviceReduce (tunedreduce bench, " + mode +
                     " L2): CUB's median over the library's");
    for (const auto& [key, ms] : ok) {
      if (key.device != dev.id) continue;
      std::vector<const db::WinnerRecord*> ws;
      for (const auto& w : d.winners)
        if (w.device_id == dev.id && w.dtype == key.dtype && w.op == key.op && w.l2_mode == d.l2)
          ws.push_back(&w);
      std::map<std::uint64_t, const db::MeasurementRecord*> at;
      for (const auto* m : ms) {
        const db::WinnerRecord* w = nullptr;
        for (const auto* x : ws)
          if (x->n_lo <= m->n && m->n <= x->n_hi) w = x;
        if (!w || m->kernel_id != w->kernel_id) continue;
        auto& slot = at[m->n];
        // The winner's own evidence first, then a measurement of its run, then the fastest.
        auto rank = [&](const db::MeasurementRecord* x) {
          return x->id == w->measurement_id                   ? 0
                 : x->run_id == (w->run_id ? *w->run_id : -1) ? 1
                                                              : 2;
        };
        if (!slot || rank(m) < rank(slot) || (rank(m) == rank(slot) && faster(*m, *slot))) slot = m;
      }
      LineChart::Series g, u, cached, two_phase;
      g.name = u.name = key_text(key.dtype, key.op);
      cached.name = key_text(key.dtype, key.op) + " cached";
      two_phase.name = key_text(key.dtype, key.op) + " two-phase";
      for (const auto& [n, m] : at) {
        if (auto x = gbps_of(*m)) g.points.push_back({n, *x, m->kernel_id});
        u.points.push_back(
            {n, *m->median_us,
             m->kernel_id + " (" + spread_detail(m->p10_us, m->p90_us, m->repeats) + ")"});
      }
      if (auto it =
              d.bench.find({dev.id, key.dtype, key.op,
                            d.l2 == db::L2Mode::warm ? db::BenchL2::warm : db::BenchL2::cold});
          it != d.bench.end())
        for (const auto& [n, p] : it->second) {
          if (auto x = p.speedup_vs_cub(db::BenchMethod::cached))
            cached.points.push_back(
                {n, *x, p.get(db::BenchMethod::cached)->kernel_id.value_or("")});
          if (auto x = p.speedup_vs_cub(db::BenchMethod::two_phase))
            two_phase.points.push_back(
                {n, *x, p.get(db::BenchMethod::two_phase)->kernel_id.value_or("")});
        }
      if (!g.points.empty()) gbps_chart.series.push_back(std::move(g));
      if (!u.points.empty()) us_chart.series.push_back(std::move(u));
      if (!cached.points.empty()) speedup_chart.series.push_back(std::move(cached));
      if (!two_phase.points.empty()) speedup_chart.series.push_back(std::move(two_phase));
    }
    if (s.rows.empty() && gbps_chart.series.empty()) continue;
    if (!gbps_chart.series.empty()) {
      s.charts.push_back(std::move(gbps_chart));
      s.charts.push_back(std::move(us_chart));
    }
    if (!speedup_chart.series.empty()) s.charts.push_back(std::move(speedup_chart));
    r.sections.push_back(std::move(s));
  }
  if (o.l2 && r.sections.empty() && !d.winners.empty()) {
    const db::L2Mode other = *o.l2 == db::L2Mode::cold ? db::L2Mode::warm : db::L2Mode::cold;
    r.empty = fmt::format(
        "no {}-L2 winners in the selection: it has {} of the other L2 mode (--l2 {} shows them)",
        db::l2_mode_name(*o.l2), d.winners.size(), db::l2_mode_name(other));
  }
  if (d.winners.empty() && !d.measurements.empty())
    r.empty = fmt::format(
        "no winners in the selection: it has {} measurements but no winner was recorded from "
        "them (an interrupted run?); `tunedreduce report coverage` says what is missing",
        d.measurements.size());
}

}  // namespace tunedreduce::reports::detail
