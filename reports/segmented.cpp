// `report segmented`: the segmented winners over the plane of segment size × segment count
// (docs/reports.md). One section per device × type × operator × layout: a table with a row per
// tuned shape, and a map of the same shapes whose colour is the winner's share of the floor.

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <variant>

#include <fmt/format.h>

#include "kernels/segmented/segmented.hpp"
#include "reports/fastest.hpp"
#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

namespace {

namespace seg = kernels::segmented;

struct SegKey {
  std::int64_t device = 0;
  DType dtype = DType::i32;
  Op op = Op::sum;
  seg::SegLayout layout = seg::SegLayout::fixed;
  friend auto operator<=>(const SegKey&, const SegKey&) = default;
};

/// A tuned shape: elements per segment, and segments.
struct Shape {
  std::uint64_t size = 0, count = 0;
  friend auto operator<=>(const Shape&, const Shape&) = default;
};

bool layout_selected(const ReportOptions& o, seg::SegLayout l) {
  return o.layouts.empty() ||
         std::find(o.layouts.begin(), o.layouts.end(), seg::seg_layout_name(l)) != o.layouts.end();
}

/// The family and the parameter that tells its configurations apart: "group g8", "block b512",
/// "split b512", "balanced b256", "thread v4", "tile v4" (the whole id is in the tooltip and the
/// kernel column).
std::string family_label(const std::string& kernel_id) {
  const auto p = seg::parse_seg_id(kernel_id);
  if (!p) return kernel_id;
  const std::string f = seg::seg_family_name(p->family);
  switch (p->family) {
    case seg::SegFamily::group:
      return f + " g" + std::to_string(p->group);
    case seg::SegFamily::block:
    case seg::SegFamily::split:
    case seg::SegFamily::balanced:
      return f + " b" + std::to_string(p->block);
    case seg::SegFamily::thread:
    case seg::SegFamily::tile:
      break;
  }
  return f + " v" + std::to_string(p->vec);
}

/// Bytes a segmented reduction moves at least: its input read once and its results written.
double bytes_moved(const db::MeasurementRecord& m, std::uint64_t count) {
  return static_cast<double>(m.n) * dtype_size(m.dtype) +
         static_cast<double>(count) * result_bytes(m.dtype, m.op);
}

/// "+3.2%", "-0.4%": as `best` writes a margin.
std::string signed_pct(double v) { return (v >= 0 ? "+" : "") + fixed(v, 1) + "%"; }

/// The measurement of \p kernel at one shape: \p preferred (the winner's evidence, its
/// runner-up's) where it is there, then one of \p run, then the one with the most repeats (the
/// last round of successive halving, where a kernel was measured in several), then the fastest.
const db::MeasurementRecord* at_shape(const std::vector<const db::MeasurementRecord*>& cands,
                                      const std::string& kernel, std::int64_t preferred,
                                      std::optional<std::int64_t> run) {
  const db::MeasurementRecord* out = nullptr;
  auto rank = [&](const db::MeasurementRecord* m) {
    return std::tuple(m->id == preferred ? 0 : run && m->run_id == *run ? 1 : 2, -m->repeats);
  };
  for (const auto* m : cands) {
    if (m->kernel_id != kernel) continue;
    if (!out || rank(m) < rank(out) || (rank(m) == rank(out) && faster(*m, *out))) out = m;
  }
  return out;
}

bool stale(const db::SegmentedWinnerRecord& w, const db::DeviceRecord& dev) {
  return w.driver_version != dev.fingerprint.driver_version ||
         w.runtime_version != dev.fingerprint.runtime_version;
}

std::string many(std::size_t k, const char* what) {
  return fmt::format("{} {}{}", k, what, k == 1 ? "" : "s");
}

struct BenchPlaneKey {
  std::int64_t device = 0;
  DType dtype = DType::i32;
  Op op = Op::sum;
  std::string layout;
  friend auto operator<=>(const BenchPlaneKey&, const BenchPlaneKey&) = default;
};

/// Sections of the segmented bench results in the report's L2 mode: per (device, type, operator,
/// layout), a table with a row per shape and two maps, the speed-up over CUB (the slower of the
/// library's calls) and the % of the floor.
void build_segmented_bench(const Data& d, const ReportOptions& o, Report& r) {
  std::map<BenchPlaneKey, std::map<Shape, BenchPoint>> planes;
  std::size_t other_l2 = 0;
  for (const auto& x : d.segmented_bench) {
    const db::BenchRunRecord* run = d.bench_run(x.bench_run_id);
    if (!run || !x.segment_size || *x.segment_size == 0) continue;
    if (db::tuned_l2_of(run->info.l2) != d.l2) {
      ++other_l2;
      continue;
    }
    const auto l = seg::parse_seg_layout(x.layout);
    if (!l || !layout_selected(o, *l)) continue;
    BenchPoint& p =
        planes[{run->device_id, x.dtype, x.op, x.layout}][{*x.segment_size, x.n / *x.segment_size}];
    // Runs are in id order: a later run replaces the shape whole.
    if (p.run && p.run != run) {
      if (p.run->started_at > run->started_at) continue;
      p = BenchPoint{};
    }
    p.run = run;
    p.by_method[static_cast<std::size_t>(x.method)] = &x;
  }
  if (other_l2)
    r.notes.push_back(many(other_l2, "segmented bench result") + " of another L2 state than " +
                      db::l2_mode_name(d.l2) + " (or of the dirty flush) are left out (--l2).");
  if (planes.empty()) return;
  r.notes.push_back(
      "Segmented bench sections (`tunedreduce bench --segments`): per shape, the library's "
      "cached and two-phase calls, cub::DeviceSegmentedReduce over int64 begin/end offsets, and "
      "the floor (a plain read of the input and write of the results, timed alike), medians in "
      "µs from the latest bench run that has the shape. × CUB is CUB's median over the slower "
      "of the library's calls; % of floor is the floor's median over it. The maps have a column "
      "per segment size and a row per segment count.");
  using M = db::BenchMethod;
  for (const auto& [key, shapes] : planes) {
    Section s;
    s.table = "segmented_bench";
    s.title = key_title(d, {key.device, key.dtype, key.op}) + " · " + key.layout + " · against CUB";
    add_key(d, {key.device, key.dtype, key.op}, s);
    s.key.emplace_back("layout", key.layout);
    s.columns = {col("segment_size", "segment size", true),
                 col("segments", "segments", true),
                 col("total", "total", true),
                 col("cached_us", "cached µs", true, "us"),
                 col("two_phase_us", "2-phase µs", true, "us"),
                 col("cub_us", "CUB µs", true, "us"),
                 col("floor_us", "floor µs", true, "us"),
                 col("vs_cub", "× CUB", true, "x"),
                 col("pct_floor", "% of floor", true, "%"),
                 col("kernel", "kernel"),
                 col("lookup", "lookup")};
    std::set<std::uint64_t> sizes, counts;
    for (const auto& [shape, p] : shapes) {
      sizes.insert(shape.size);
      counts.insert(shape.count);
    }
    auto chart = [&](const std::string& title, const std::string& unit) {
      HeatmapChart c;
      c.title = key_text(key.dtype, key.op) + ", " + key.layout + ": " + title;
      c.row_title = "segments";
      c.col_title = "segment size (elements)";
      c.unit = unit;
      for (std::uint64_t n : counts) c.rows.push_back(size_text(n));
      for (std::uint64_t z : sizes) c.cols.push_back(size_text(z));
      c.values.assign(counts.size(), std::vector<std::optional<double>>(sizes.size()));
      c.details.assign(counts.size(), std::vector<std::string>(sizes.size(), "not measured"));
      c.labels.assign(counts.size(), std::vector<std::string>(sizes.size()));
      return c;
    };
    HeatmapChart vs = chart("speed-up over CUB (the slower call)", "× CUB"),
                 fl = chart("% of the floor (the slower call)", "% of floor");
    auto index = [](const std::set<std::uint64_t>& v, std::uint64_t x) {
      return static_cast<std::size_t>(std::distance(v.begin(), v.find(x)));
    };
    std::size_t below = 0;
    for (const auto& [shape, p] : shapes) {
      const auto cached = p.median(M::cached), two = p.median(M::two_phase), cub = p.median(M::cub),
                 floor = p.median(M::floor);
      std::optional<double> slower;
      if (cached || two) slower = std::max(cached.value_or(0), two.value_or(0));
      const std::optional<double> x = cub && slower ? std::optional<double>(*cub / *slower)
                                                    : std::nullopt;
      const std::optional<double> pct =
          floor && slower ? std::optional<double>(100 * *floor / *slower) : std::nullopt;
      if (x && *x < 1.0) ++below;
      auto us = [&](M m) {
        const auto* y = p.get(m);
        if (!y) return Cell::none("-").with_detail("not timed");
        if (!y->verified) return Cell::none("failed").with_detail(y->error).marked(true);
        return Cell::number(*y->median_us, 2)
            .with_detail(spread_detail(y->p10_us, y->p90_us, y->repeats));
      };
      const auto* tuned = p.get(M::cached) ? p.get(M::cached) : p.get(M::two_phase);
      Cell xc = Cell::number(x, 3).marked(x && *x < 1.0);
      s.rows.push_back(
          {Cell::count(shape.size), Cell::count(shape.count), Cell::count(shape.size * shape.count),
           us(M::cached), us(M::two_phase), us(M::cub), us(M::floor), xc, Cell::number(pct, 1),
           tuned && tuned->kernel_id ? Cell::str(*tuned->kernel_id) : Cell::none(),
           tuned && tuned->lookup_level ? Cell::str(*tuned->lookup_level) : Cell::none()});
      const std::size_t ri = index(counts, shape.count), ci = index(sizes, shape.size);
      const std::string where =
          fmt::format("{} × {}", size_text(shape.size), size_text(shape.count));
      const std::string detail =
          where + ": cached " + (cached ? fixed(*cached, 2) : std::string("-")) +
          " µs, two-phase " + (two ? fixed(*two, 2) : std::string("-")) + " µs, CUB " +
          (cub ? fixed(*cub, 2) : std::string("-")) + " µs, floor " +
          (floor ? fixed(*floor, 2) : std::string("-")) + " µs" +
          (tuned && tuned->kernel_id ? "; " + *tuned->kernel_id : std::string());
      vs.values[ri][ci] = x;
      vs.labels[ri][ci] = x ? fixed(*x, 2) + "×" : "-";
      vs.details[ri][ci] = detail;
      fl.values[ri][ci] = pct;
      fl.labels[ri][ci] = pct ? fixed(*pct, 0) + "%" : "-";
      fl.details[ri][ci] = detail;
    }
    s.notes.push_back(fmt::format("{} of {} below CUB (× CUB under 1.0, marked).",
                                  many(below, "shape"), shapes.size()));
    s.charts.push_back(std::move(vs));
    s.charts.push_back(std::move(fl));
    r.sections.push_back(std::move(s));
  }
}

}  // namespace

void build_segmented(const Data& d, const ReportOptions& o, Report& r) {
  if (d.segmented.empty() && d.segmented_bench.empty()) {
    r.empty = d.schema_version < 12
                  ? fmt::format(
                        "no segmented measurements: the database is of schema version {}, older "
                        "than segmented tuning (12; `tunedreduce db migrate` upgrades it, then "
                        "`tunedreduce tune` with segmented shapes records them)",
                        d.schema_version)
                  : fmt::format(
                        "no segmented measurements or segmented bench results in the selection "
                        "({} of whole arrays): `tunedreduce tune` with segmented shapes and "
                        "`tunedreduce bench --segments` record them",
                        many(d.measurements.size(), "measurement"));
    return;
  }
  if (d.segmented.empty())
    r.notes.push_back(
        "No segmented measurements in the selection: only what `tunedreduce bench --segments` "
        "recorded (`tunedreduce tune` with segmented shapes records the winners' planes).");
  r.notes.push_back(
      "One section per device, type, operator and layout of segments (fixed: rows of a matrix; "
      "offsets32/offsets64: begin and end offsets, the size then the mean length, total / "
      "segments). Each row is a shape the tuner measured — segment size × segments, total = their "
      "product — and the segmented winner whose rectangle of sizes and counts holds it, with the "
      "winner's own measurement at that shape (its evidence where it was measured there). % of "
      "floor is the bytes a reduction must move — the input read once and the results written — "
      "over the median time, against the attainable read bandwidth measured in the same run "
      "(the offsets arrays are not counted). Margin: how much slower the winner's runner-up (the "
      "tuner's, at its evidence) was at the same shape; negative where a tie rule chose a winner "
      "within noise of a faster one. Where a kernel was measured several times at a shape "
      "(successive halving's rounds), the measurement with the most repeats counts.");
  r.notes.push_back(
      "The map has a column per segment size and a row per segment count: each cell names the "
      "winner's family (and its group, block or vector width), its % of the floor (the colour) "
      "and its margin; a cell is blank where no shape was measured.");
  if (d.segmented_bench.empty())
    r.notes.push_back(
        "No segmented bench results in the selection: `tunedreduce bench --segments` records the "
        "library's calls against cub::DeviceSegmentedReduce on the same shapes, which this report "
        "then draws as planes of speed-up over CUB and of % of the floor.");

  std::size_t unknown = 0, no_size = 0;
  std::map<SegKey, std::map<Shape, std::vector<const db::MeasurementRecord*>>> planes;
  for (const auto& m : d.segmented) {
    if (m.outcome != db::Outcome::ok || m.l2_mode != d.l2 || !m.median_us || *m.median_us <= 0)
      continue;
    if (!m.segment_size || *m.segment_size == 0 || m.n % *m.segment_size != 0) {
      ++no_size;
      continue;
    }
    const auto p = seg::parse_seg_id(m.kernel_id);
    if (!p) {
      ++unknown;
      continue;
    }
    if (!layout_selected(o, p->layout)) continue;
    planes[{m.device_id, m.dtype, m.op, p->layout}][{*m.segment_size, m.n / *m.segment_size}]
        .push_back(&m);
  }
  if (unknown)
    r.notes.push_back(many(unknown, "ok segmented measurement") +
                      " of kernels whose id this binary cannot read are left out.");
  if (no_size)
    r.notes.push_back(many(no_size, "ok segmented measurement") +
                      " without a segment size that divides n are left out.");
  std::map<SegKey, std::vector<const db::SegmentedWinnerRecord*>> winners;
  for (const auto& w : d.segmented_winners) {
    if (w.l2_mode != d.l2) continue;
    const auto l = seg::parse_seg_layout(w.layout);
    if (l && layout_selected(o, *l)) winners[{w.device_id, w.dtype, w.op, *l}].push_back(&w);
  }

  for (const auto& [key, shapes] : planes) {
    const db::DeviceRecord& dev = d.device(key.device);
    const auto& ws = winners[key];
    const std::string layout = seg::seg_layout_name(key.layout);
    Section s;
    s.table = "segmented";
    s.title = key_title(d, {key.device, key.dtype, key.op}) + " · " + layout;
    add_key(d, {key.device, key.dtype, key.op}, s);
    s.key.emplace_back("layout", layout);
    s.columns = {col("segment_size", "segment size", true), col("segments", "segments", true),
                 col("total", "total", true), col("kernel", "winner"), col("family", "family"),
                 col("median_us", "µs", true, "us"), col("gbps", "GB/s moved", true, "GB/s"),
                 col("pct_floor", "% of floor", true, "%"),
                 col("runner_up", "runner-up", false, {}, Show::not_terminal),
                 col("margin_pct", "margin", true, "%"), col("candidates", "candidates", true),
                 col("stale", "stale"),
                 // The winner's rectangle: for machines (people have it in the kernel's tooltip).
                 col("size_lo", "sizes from", true, {}, Show::machines),
                 col("size_hi", "sizes to", true, {}, Show::machines),
                 col("count_lo", "segments from", true, {}, Show::machines),
                 col("count_hi", "segments to", true, {}, Show::machines)};
    if (ws.empty())
      s.notes.push_back("No segmented winner is recorded for this key in " +
                        std::string(db::l2_mode_name(d.l2)) +
                        " L2: the shapes were measured, but no winner was chosen (an interrupted "
                        "run?).");

    std::set<std::uint64_t> sizes, counts;
    for (const auto& [shape, cands] : shapes) {
      sizes.insert(shape.size);
      counts.insert(shape.count);
    }
    HeatmapChart chart;
    chart.title = key_text(key.dtype, key.op) + ", " + layout +
                  ": the winner per shape; colour: % of the floor";
    chart.row_title = "segments";
    chart.col_title = "segment size (elements)";
    chart.unit = "% of floor";
    for (std::uint64_t c : counts) chart.rows.push_back(size_text(c));
    for (std::uint64_t z : sizes) chart.cols.push_back(size_text(z));
    const std::size_t R = counts.size(), C = sizes.size();
    chart.values.assign(R, std::vector<std::optional<double>>(C));
    chart.details.assign(R, std::vector<std::string>(C, "not measured"));
    chart.labels.assign(R, std::vector<std::string>(C));
    auto index = [](const std::set<std::uint64_t>& v, std::uint64_t x) {
      return static_cast<std::size_t>(std::distance(v.begin(), v.find(x)));
    };

    // Rows by segment size, then segments (the shapes' order): down the plane's columns.
    for (const auto& [shape, cands] : shapes) {
      const std::size_t ri = index(counts, shape.count), ci = index(sizes, shape.size);
      std::set<std::string> kernels;
      for (const auto* m : cands) kernels.insert(m->kernel_id);
      const db::SegmentedWinnerRecord* w = nullptr;
      for (const auto* x : ws)
        if (x->size_lo <= shape.size && shape.size <= x->size_hi && x->count_lo <= shape.count &&
            shape.count <= x->count_hi)
          w = x;
      std::vector<Cell> row{Cell::count(shape.size), Cell::count(shape.count),
                            Cell::count(shape.size * shape.count)};
      const std::string where =
          fmt::format("{} × {}", size_text(shape.size), size_text(shape.count));
      if (!w) {
        const db::MeasurementRecord* top = nullptr;
        for (const auto* m : cands) keep_faster(top, m);
        const std::string why = many(kernels.size(), "kernel") +
                                " measured here; no segmented winner's rectangle holds this "
                                "shape (fastest measured: " +
                                measured_detail(*top) + ")";
        row.push_back(Cell::none("no winner").with_detail(why));
        for (int i = 0; i < 6; ++i) row.push_back(Cell::none());
        row.push_back(Cell::integer(static_cast<std::int64_t>(kernels.size())));
        for (int i = 0; i < 5; ++i) row.push_back(Cell::none());
        s.rows.push_back(std::move(row));
        chart.labels[ri][ci] = "no winner";
        chart.details[ri][ci] = where + ": " + why;
        continue;
      }
      const std::string rect = fmt::format(
          "the winner of segment sizes {}..{} in counts {}..{} ({} L2; evidence: measurement {})",
          size_text(w->size_lo), size_text(w->size_hi), size_text(w->count_lo),
          size_text(w->count_hi), db::l2_mode_name(w->l2_mode), w->measurement_id);
      const std::string family = family_label(w->kernel_id);
      row.push_back(Cell::str(w->kernel_id).with_detail(rect));
      row.push_back(Cell::str(family));
      const db::MeasurementRecord* wm = at_shape(cands, w->kernel_id, w->measurement_id, w->run_id);
      std::optional<double> pct;
      std::string cell_line;
      if (wm) {
        const double gbps = bytes_moved(*wm, shape.count) / (*wm->median_us * 1e3);
        const auto attainable = d.attainable(wm->run_id, key.device);
        if (attainable) pct = 100 * gbps / *attainable;
        row.push_back(Cell::number(*wm->median_us, 2)
                          .with_detail(spread_detail(wm->p10_us, wm->p90_us, wm->repeats)));
        row.push_back(Cell::number(gbps, 1));
        row.push_back(Cell::number(pct, 1).with_detail(
            attainable ? fixed(gbps, 1) + " GB/s moved against " + fixed(*attainable, 0) +
                             " GB/s attainable read bandwidth measured in the same run"
                       : "no attainable bandwidth recorded for the measurement's run"));
        cell_line = pct ? fixed(*pct, 0) + "%" : "no floor";
      } else {
        const std::string why = "the winner was not measured at this shape";
        for (int i = 0; i < 3; ++i)
          row.push_back(Cell::none(i ? "" : "not measured").with_detail(why));
        cell_line = "not measured";
      }
      // The runner-up at the same shape.
      const db::MeasurementRecord* ru =
          w->runner_up_kernel_id ? at_shape(cands, *w->runner_up_kernel_id,
                                            w->runner_up_measurement_id.value_or(-1), w->run_id)
                                 : nullptr;
      row.push_back(w->runner_up_kernel_id ? Cell::str(*w->runner_up_kernel_id) : Cell::none());
      std::string margin_detail;
      if (wm && ru && ru->median_us) {
        const double margin = 100 * (*ru->median_us / *wm->median_us - 1);
        margin_detail = "runner-up " + ru->kernel_id + ": " + fixed(*ru->median_us, 2) + " µs (" +
                        std::to_string(ru->repeats) + " repeats) against " +
                        fixed(*wm->median_us, 2) + " µs (" + std::to_string(wm->repeats) +
                        " repeats) at " + where;
        Cell c = Cell::number(margin, 1).with_detail(margin_detail);
        c.text = signed_pct(margin);
        row.push_back(std::move(c));
        cell_line += " · " + signed_pct(margin);
      } else {
        margin_detail =
            !w->runner_up_kernel_id ? "no runner-up: the only candidate"
            : wm ? "the runner-up " + *w->runner_up_kernel_id + " was not measured at this shape"
                 : "";
        row.push_back(
            Cell::none(w->runner_up_kernel_id ? "" : "only candidate").with_detail(margin_detail));
      }
      row.push_back(Cell::integer(static_cast<std::int64_t>(kernels.size())));
      const bool is_stale = stale(*w, dev);
      row.push_back(Cell::str(is_stale ? "yes" : "no")
                        .with_detail("tuned with driver " + cuda_version_text(w->driver_version) +
                                     ", runtime " + cuda_version_text(w->runtime_version) +
                                     "; the device now has driver " +
                                     cuda_version_text(dev.fingerprint.driver_version) +
                                     ", runtime " +
                                     cuda_version_text(dev.fingerprint.runtime_version))
                        .marked(is_stale));
      row.push_back(Cell::count(w->size_lo));
      row.push_back(Cell::count(w->size_hi));
      row.push_back(Cell::count(w->count_lo));
      row.push_back(Cell::count(w->count_hi));
      s.rows.push_back(std::move(row));

      chart.values[ri][ci] = pct;
      chart.labels[ri][ci] = family + "\n" + cell_line;
      chart.details[ri][ci] =
          where + ": " + w->kernel_id +
          (wm ? ", " + fixed(*wm->median_us, 2) + " µs" +
                    (pct ? ", " + fixed(*pct, 1) + " % of the floor" : std::string())
              : std::string(", not measured at this shape")) +
          (margin_detail.empty() ? std::string() : "; " + margin_detail);
    }
    s.charts.push_back(std::move(chart));
    r.sections.push_back(std::move(s));
  }

  build_segmented_bench(d, o, r);
  // One colour scale for every map of a kind, as heatmap's: a colour is the same % of the floor
  // (or the same speed-up over CUB) in each.
  share_colour_scale(r, " % of the floor", "the same in each.", std::string("% of floor"));
  share_colour_scale(r, "× CUB", "the same speed-up in each.", std::string("× CUB"), 2);
}

}  // namespace tunedreduce::reports::detail
