// `report bench`: what `tunedreduce bench` recorded — the library's two calls against
// cub::DeviceReduce and thrust::reduce, per device, type, operator, L2 prelude and size, with
// the speed-up, the spread and whether the difference is beyond noise.

#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

namespace {

using db::BenchMethod;

constexpr BenchMethod tuned_methods[] = {BenchMethod::cached, BenchMethod::two_phase};

// The calls as the report names them (the database's names are db::bench_method_name's).
constexpr auto method_labels = enum_names<BenchMethod>({
    {BenchMethod::cached, "cached"},
    {BenchMethod::two_phase, "two-phase"},
    {BenchMethod::cub, "CUB"},
    {BenchMethod::thrust, "Thrust"},
    {BenchMethod::floor, "floor"},
});
static_assert(method_labels.lists_all_through(BenchMethod::floor));
const char* method_label(BenchMethod m) { return method_labels.to_name(m); }

constexpr auto prelude_texts = enum_names<db::BenchL2>({
    {db::BenchL2::cold, "a read of 4 × L2 before every timed run, as the tuner"},
    {db::BenchL2::dirty, "a memset of 2 × L2 before every timed run (dirty lines)"},
    {db::BenchL2::warm, "no flush: the input stays in L2 where it fits"},
});
static_assert(prelude_texts.lists_all_through(db::BenchL2::warm));

std::string l2_title(db::BenchL2 l) { return std::string(db::bench_l2_name(l)) + " L2"; }

Cell time_cell(const BenchPoint& p, BenchMethod m) {
  const db::BenchResultRecord* r = p.get(m);
  if (!r) return Cell::none();
  if (!r->verified) return Cell::none("failed").with_detail(r->error);
  return Cell::number(*r->median_us, 2)
      .with_detail(std::string(method_label(m)) + ": " +
                   spread_detail(r->p10_us, r->p90_us, r->repeats));
}

Cell spread_cell(const BenchPoint& p, BenchMethod m) {
  const db::BenchResultRecord* r = p.get(m);
  if (!r || !r->verified) return Cell::none();
  return Cell::number(spread_pct(r->median_us, r->p10_us, r->p90_us), 1, " %")
      .with_detail(spread_detail(r->p10_us, r->p90_us, r->repeats));
}

Cell verdict_cell(const std::optional<Comparison>& c) {
  if (!c) return Cell::none();
  return Cell::str(verdict_name(c->verdict))
      .with_detail(fmt::format("{} % against a noise tolerance of ±{} %",
                               fixed(100 * (c->speedup - 1), 1), fixed(100 * c->tolerance, 1)));
}

std::string run_text(const db::BenchRunRecord& run) {
  return fmt::format(
      "bench run {} of {} (tunedreduce {}, {}, {} timed runs per call, {}; the library read {})",
      run.uuid.substr(0, 8), run.started_at, run.info.tool_version, run.info.host, run.info.repeats,
      db::run_status_name(run.status),
      run.info.library_database.empty() ? std::string("no database")
                                        : "'" + run.info.library_database + "'");
}

}  // namespace

std::optional<Comparison> compare_bench(const BenchPoint& p, BenchMethod m, BenchMethod base) {
  const auto x = p.median(m), b = p.median(base);
  if (!x || !b) return std::nullopt;
  const auto* rx = p.get(m);
  const auto* rb = p.get(base);
  Comparison c;
  c.speedup = *b / *x;
  c.tolerance = noise_tolerance(rx->median_us, rx->p10_us, rx->p90_us, rx->repeats, rb->median_us,
                                rb->p10_us, rb->p90_us, rb->repeats);
  c.verdict = c.speedup > 1 + c.tolerance         ? Verdict::faster
              : c.speedup < 1 / (1 + c.tolerance) ? Verdict::slower
                                                  : Verdict::tie;
  return c;
}

const char* verdict_name(Verdict v) {
  static constexpr auto names = enum_names<Verdict>(
      {{Verdict::faster, "faster"}, {Verdict::tie, "tie"}, {Verdict::slower, "slower"}});
  static_assert(names.lists_all_through(Verdict::slower));
  return names.to_name(v);
}

Cell speedup_cell(const BenchPoint& p, BenchMethod m, BenchMethod base, bool with_verdict) {
  const auto c = compare_bench(p, m, base);
  const db::BenchResultRecord* r = p.get(m);
  if (!c)
    return Cell::none(r && !r->verified ? "failed" : "")
        .with_detail(r && !r->verified ? r->error : "");
  const db::BenchResultRecord* b = p.get(base);
  Cell cell = Cell::number(c->speedup, 3);
  cell.text =
      ratio_text(c->speedup) + (with_verdict ? std::string(" ") + verdict_name(c->verdict) : "");
  std::string detail = fmt::format(
      "{}: {} {} µs over the {} call's {} µs ({}); a difference counts beyond ±{} % (two standard "
      "errors of the medians' difference, at least 0.5 %)",
      verdict_name(c->verdict), method_label(base), fixed(*b->median_us, 2), method_label(m),
      fixed(*r->median_us, 2), spread_detail(r->p10_us, r->p90_us, r->repeats),
      fixed(100 * c->tolerance, 1));
  if (r->kernel_id)
    detail += "; the library ran " + *r->kernel_id + " (" + r->lookup_level.value_or("?") + ")";
  detail += "; bench run " + p.run->uuid.substr(0, 8) + " of " + p.run->started_at;
  return std::move(cell).with_detail(detail).marked(c->verdict == Verdict::faster);
}

void add_bench_cells(const BenchPoint* p, std::vector<Cell>& row) {
  if (!p) {
    for (int i = 0; i < 3; ++i) row.push_back(Cell::none());
    return;
  }
  const db::BenchResultRecord* cub = p->get(BenchMethod::cub);
  if (p->median(BenchMethod::cub))
    row.push_back(
        Cell::number(*cub->median_us, 2)
            .with_detail(
                "cub::DeviceReduce: " + spread_detail(cub->p10_us, cub->p90_us, cub->repeats) +
                "; bench run " + p->run->uuid.substr(0, 8) + " of " + p->run->started_at));
  else row.push_back(Cell::none(cub ? "failed" : "").with_detail(cub ? cub->error : std::string()));
  row.push_back(speedup_cell(*p, BenchMethod::cached, BenchMethod::cub, false));
  row.push_back(speedup_cell(*p, BenchMethod::two_phase, BenchMethod::cub, false));
}

void build_bench(const Data& d, const ReportOptions& o, Report& r) {
  r.notes.push_back(
      "What `tunedreduce bench` recorded: the library as production calls it — the cached call "
      "(tunedreduce::reduce with the library's workspace) and the two-phase call (caller-owned "
      "temporary storage, as CUB's) — against cub::DeviceReduce, and thrust::reduce where it was "
      "timed (its allocation and result copy included), on the same buffers in one process, "
      "every result verified, the calls alternating run by run. Times are medians of CUDA-event "
      "timings; p10–p90 is how far single runs spread ((p90 − p10) / median).");
  r.notes.push_back(
      "× CUB is CUB's median over the call's (×1.05: 5 % faster than CUB). 'vs CUB' says whether "
      "the difference is beyond noise: faster or slower when the medians differ by more than two "
      "standard errors of their difference (at least 0.5 %), else tie. Where a size was benched "
      "more than once, the latest run counts.");

  // Summary first: per device, key and L2 prelude, how often each call beat CUB.
  Section sum;
  sum.table = "summary";
  sum.title = "Summary: the library against cub::DeviceReduce";
  sum.columns = {col("device", "device"),
                 col("fingerprint", "fingerprint", false, {}, Show::machines),
                 col("dtype", "type"),
                 col("op", "op"),
                 col("l2", "L2"),
                 col("sizes", "sizes", true),
                 col("n_range", "n"),
                 col("n_from", "n from", true, {}, Show::machines),
                 col("n_to", "n to", true, {}, Show::machines),
                 col("cached_verdicts", "cached: faster / tie / slower"),
                 col("cached_faster", "cached faster", true, {}, Show::machines),
                 col("cached_tie", "cached tie", true, {}, Show::machines),
                 col("cached_slower", "cached slower", true, {}, Show::machines),
                 col("cached_geomean", "cached × CUB (geo. mean)", true, "x"),
                 col("cached_min", "cached × CUB (min)", true, "x"),
                 col("two_phase_verdicts", "two-phase: faster / tie / slower"),
                 col("two_phase_faster", "two-phase faster", true, {}, Show::machines),
                 col("two_phase_tie", "two-phase tie", true, {}, Show::machines),
                 col("two_phase_slower", "two-phase slower", true, {}, Show::machines),
                 col("two_phase_geomean", "two-phase × CUB (geo. mean)", true, "x"),
                 col("two_phase_min", "two-phase × CUB (min)", true, "x")};

  std::vector<Section> details;
  std::set<std::int64_t> runs_shown;
  for (const auto& [key, points] : d.bench) {
    if (o.l2 && db::tuned_l2_of(key.l2) != *o.l2) continue;
    if (points.empty()) continue;
    const auto& dev = d.device(key.device);
    Section s;
    s.table = "bench";
    s.title =
        d.full_label(key.device) + " · " + key_text(key.dtype, key.op) + " · " + l2_title(key.l2);
    add_device_key(d, key.device, s);
    s.key.emplace_back("dtype", dtype_name(key.dtype));
    s.key.emplace_back("op", op_name(key.op));
    s.key.emplace_back("l2", db::bench_l2_name(key.l2));
    s.notes.push_back(fmt::format("L2: {}.", prelude_texts.to_name(key.l2, "")));
    s.columns = {col("n", "n", true),
                 col("kernel", "the library's kernel"),
                 col("lookup", "lookup"),
                 col("cached_us", "cached µs", true, "us"),
                 col("cached_spread_pct", "p10–p90", true, "%"),
                 col("two_phase_us", "two-phase µs", true, "us"),
                 col("two_phase_spread_pct", "p10–p90", true, "%"),
                 col("cub_us", "CUB µs", true, "us"),
                 col("cub_spread_pct", "p10–p90", true, "%"),
                 col("thrust_us", "Thrust µs", true, "us"),
                 col("thrust_spread_pct", "p10–p90", true, "%"),
                 col("speedup_cached", "cached × CUB", true, "x"),
                 col("verdict_cached", "vs CUB", false, {}, Show::machines),
                 col("speedup_two_phase", "two-phase × CUB", true, "x"),
                 col("verdict_two_phase", "vs CUB", false, {}, Show::machines),
                 col("cached_gbps", "cached GB/s", true, "GB/s"),
                 col("bench_run", "bench run", false, {}, Show::machines)};
    for (std::size_t i : {9u, 10u}) s.columns[i].hide_if_empty = true;

    LineChart us =
        us_view("Median µs against n (log scale): the library's two calls, CUB and Thrust");
    LineChart up =
        speedup_view("CUB's median over each of the library's calls (above 1: faster than CUB)");
    LineChart gbps = gbps_view(d, key.device, "GB/s against n (input bytes / median)");
    std::map<BenchMethod, LineChart::Series> us_series, up_series, gbps_series;

    int counts[2][3] = {};
    double log_sum[2] = {}, min_up[2] = {INFINITY, INFINITY};
    int with_up[2] = {};
    std::set<const db::BenchRunRecord*> runs;
    for (const auto& [n, p] : points) {
      runs.insert(p.run);
      runs_shown.insert(p.run->id);
      const db::BenchResultRecord* tuned =
          p.get(BenchMethod::cached) ? p.get(BenchMethod::cached) : p.get(BenchMethod::two_phase);
      std::vector<Cell> row{Cell::count(n)};
      row.push_back(tuned && tuned->kernel_id ? Cell::str(*tuned->kernel_id) : Cell::none());
      row.push_back(tuned && tuned->lookup_level
                        ? Cell::str(*tuned->lookup_level +
                                    (tuned->winner_l2 && *tuned->winner_l2 != db::L2Mode::cold
                                         ? std::string(", ") + db::l2_mode_name(*tuned->winner_l2)
                                         : std::string()))
                        : Cell::none());
      for (BenchMethod m :
           {BenchMethod::cached, BenchMethod::two_phase, BenchMethod::cub, BenchMethod::thrust}) {
        row.push_back(time_cell(p, m));
        row.push_back(spread_cell(p, m));
      }
      for (int i = 0; i < 2; ++i) {
        const BenchMethod m = tuned_methods[i];
        const auto c = compare_bench(p, m, BenchMethod::cub);
        row.push_back(speedup_cell(p, m, BenchMethod::cub, true));
        row.push_back(verdict_cell(c));
        if (c) {
          ++counts[i][static_cast<int>(c->verdict)];
          log_sum[i] += std::log(c->speedup);
          min_up[i] = std::min(min_up[i], c->speedup);
          ++with_up[i];
        }
      }
      const auto cached = p.median(BenchMethod::cached);
      row.push_back(
          Cell::number(cached ? std::optional<double>(static_cast<double>(n) *
                                                      dtype_size(key.dtype) / (*cached * 1e3))
                              : std::nullopt,
                       1));
      row.push_back(Cell::str(p.run->uuid));
      s.rows.push_back(std::move(row));

      for (BenchMethod m :
           {BenchMethod::cached, BenchMethod::two_phase, BenchMethod::cub, BenchMethod::thrust}) {
        const auto med = p.median(m);
        if (!med) continue;
        const db::BenchResultRecord* res = p.get(m);
        const std::string label = (res->kernel_id ? *res->kernel_id + ", " : std::string()) +
                                  spread_detail(res->p10_us, res->p90_us, res->repeats);
        auto& us_s = us_series[m];
        us_s.points.push_back({n, *med, label});
        auto& g_s = gbps_series[m];
        g_s.points.push_back(
            {n, static_cast<double>(n) * dtype_size(key.dtype) / (*med * 1e3), label});
        // Thrust (its allocation and result copy included) is far off at small sizes: it stays in
        // the µs view and the table, so that this view shows what the library's calls gain.
        if (db::is_tuned(m))
          if (const auto c = compare_bench(p, m, BenchMethod::cub))
            up_series[m].points.push_back({n, c->speedup,
                                           fmt::format("{} (noise ±{} %)", verdict_name(c->verdict),
                                                       fixed(100 * c->tolerance, 1))});
      }
    }
    for (BenchMethod m :
         {BenchMethod::cached, BenchMethod::two_phase, BenchMethod::cub, BenchMethod::thrust}) {
      for (auto* chart : {&us, &gbps}) {
        auto& series = chart == &us ? us_series : gbps_series;
        if (!series.count(m)) continue;
        LineChart::Series x = series[m];
        x.name = method_label(m);
        x.baseline = m == BenchMethod::cub;
        chart->series.push_back(std::move(x));
      }
      if (up_series.count(m)) {
        LineChart::Series x = up_series[m];
        x.name = method_label(m);
        up.series.push_back(std::move(x));
      }
    }
    for (const auto* run : runs) s.notes.push_back(run_text(*run) + ".");
    s.charts.push_back(std::move(us));
    if (!up.series.empty()) s.charts.push_back(std::move(up));
    s.charts.push_back(std::move(gbps));

    std::vector<Cell> srow{Cell::str(d.label(key.device)),
                           Cell::str(dev.key),
                           Cell::str(dtype_name(key.dtype)),
                           Cell::str(op_name(key.op)),
                           Cell::str(db::bench_l2_name(key.l2)),
                           Cell::integer(static_cast<std::int64_t>(points.size())),
                           Cell::str(size_text(points.begin()->first) + " – " +
                                     size_text(points.rbegin()->first)),
                           Cell::count(points.begin()->first),
                           Cell::count(points.rbegin()->first)};
    for (int i = 0; i < 2; ++i) {
      srow.push_back(with_up[i] ? Cell::str(fmt::format("{} / {} / {}", counts[i][0], counts[i][1],
                                                        counts[i][2]))
                                : Cell::none());
      for (int v = 0; v < 3; ++v)
        srow.push_back(with_up[i] ? Cell::integer(counts[i][v]) : Cell::none());
      if (with_up[i]) {
        const double g = std::exp(log_sum[i] / with_up[i]);
        Cell c = Cell::number(g, 3);
        c.text = ratio_text(g);
        srow.push_back(std::move(c).marked(g > 1));
        Cell m = Cell::number(min_up[i], 3);
        m.text = ratio_text(min_up[i]);
        srow.push_back(std::move(m));
      } else {
        srow.push_back(Cell::none());
        srow.push_back(Cell::none());
      }
    }
    sum.rows.push_back(std::move(srow));
    details.push_back(std::move(s));
  }
  if (details.empty()) {
    if (d.bench_runs.empty())
      r.empty =
          "no bench runs in the selection: `tunedreduce bench` records them (in a database "
          "of schema version 4 or later)";
    else
      r.empty = fmt::format(
          "no bench results in the selection ({} bench runs, none of the selected types, "
          "operators or L2 state){}",
          d.bench_runs.size(),
          d.segmented_bench.empty()
              ? ""
              : fmt::format("; {} segmented bench results: `tunedreduce report segmented` draws "
                            "them",
                            d.segmented_bench.size()));
    return;
  }
  if (!d.segmented_bench.empty())
    r.notes.push_back(fmt::format(
        "{} segmented bench results (`tunedreduce bench --segments`) are not in these tables: "
        "`tunedreduce report segmented` draws them.",
        d.segmented_bench.size()));
  r.sections.push_back(std::move(sum));
  for (auto& s : details) r.sections.push_back(std::move(s));
}

}  // namespace tunedreduce::reports::detail
