#include "tuner/winners_table.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <ostream>
#include <sstream>
#include <vector>

namespace tunedreduce::tuner {

namespace {

std::string fixed(double v, int decimals) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(decimals) << v;
  return s.str();
}

void print_table(std::ostream& os, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<bool>& right_aligned) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const std::size_t pad = width[i] - r[i].size();
      if (i) line += "  ";
      if (right_aligned[i]) line += std::string(pad, ' ');
      line += r[i];
      if (!right_aligned[i] && i + 1 < r.size()) line += std::string(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
}

std::string format_margin(double m) {
  std::string s = fixed(m * 100, 1);
  s += "%";
  if (m >= 0) s.insert(s.begin(), '+');
  return s;
}

}  // namespace

std::string format_size(std::uint64_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) {
    int e = 0;
    while ((std::uint64_t{1} << e) != n) ++e;
    return "2^" + std::to_string(e);
  }
  return std::to_string(n);
}

std::optional<double> result_gbps(const Result& r) {
  if (r.gbps) return r.gbps;
  if (!r.ok()) return std::nullopt;
  return gbps_of(r.n * dtype_size(r.dtype), r.median_us);
}

std::string seg_short_name(std::string_view id) {
  const auto p = kseg::parse_seg_id(id);
  if (!p) return std::string(id);
  switch (p->family) {
    case kseg::SegFamily::thread:
      return p->vec == 1 ? std::string("thread") : fmt::format("thr.v{}", p->vec);
    case kseg::SegFamily::tile:
      return "tile";
    case kseg::SegFamily::group:
      return fmt::format("g{}", p->group);
    case kseg::SegFamily::block:
      return fmt::format("b{}", p->block);
    case kseg::SegFamily::split:
      return "split";
    case kseg::SegFamily::balanced:
      return "bal";
  }
  return std::string(id);
}

namespace {

// The segmented part: a line per key and layout, then each one's plane of grid-point winners.
void print_segmented(std::ostream& os, const TuneOutcome& outcome) {
  std::vector<std::vector<std::string>> rows = {
      {"dtype", "op", "layout", "points", "no winner", "rectangles", "kernels", "crossovers"}};
  std::vector<const SegKeyOutcome*> done;
  for (const SegKeyOutcome& k : outcome.segmented) {
    if (!k.complete) continue;
    done.push_back(&k);
    std::set<std::string> kernels;
    std::size_t none = 0;
    for (const SegPointOutcome& p : k.points) {
      if (p.winner) kernels.insert(p.winner->winner.kernel_id);
      else ++none;
    }
    rows.push_back({dtype_name(k.dtype), op_name(k.op), kseg::seg_layout_name(k.layout),
                    std::to_string(k.points.size()), std::to_string(none),
                    std::to_string(k.rectangles.rectangles.size()), std::to_string(kernels.size()),
                    std::to_string(k.rectangles.crossovers.size())});
  }
  if (done.empty()) return;
  os << "\nsegmented winners (rectangles of segment size x segment count):\n";
  print_table(os, rows, {false, false, false, true, true, true, true, true});
  for (const SegKeyOutcome* k : done) {
    std::set<std::uint64_t> sizes, counts;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> cell;
    for (const SegPointOutcome& p : k->points) {
      sizes.insert(p.segment_size);
      counts.insert(p.count);
      cell[{p.segment_size, p.count}] = p.winner ? seg_short_name(p.winner->winner.kernel_id) : "-";
    }
    os << "\n"
       << dtype_name(k->dtype) << " " << op_name(k->op) << " " << kseg::seg_layout_name(k->layout)
       << ": the winner at each grid point (rows: segment size, columns: segment count; -: no "
          "candidate was ok)\n";
    std::vector<std::vector<std::string>> plane = {{"size \\ count"}};
    for (std::uint64_t s : counts) plane[0].push_back(format_size(s));
    for (std::uint64_t l : sizes) {
      std::vector<std::string> row = {format_size(l)};
      for (std::uint64_t s : counts) {
        auto it = cell.find({l, s});
        row.push_back(it == cell.end() ? "" : it->second);
      }
      plane.push_back(std::move(row));
    }
    print_table(os, plane, std::vector<bool>(counts.size() + 1, true));
  }
}

}  // namespace

void print_winners(std::ostream& os, const TuneOutcome& outcome, const std::string& device) {
  std::vector<std::vector<std::string>> rows = {
      {"dtype", "op", "n from", "n to", "winner", "us", "at n", "GB/s", "runner-up", "margin"}};
  std::size_t keys = 0;
  std::optional<L2Mode> mode;  // every key of a run has the run's
  for (const SegKeyOutcome& k : outcome.segmented)
    if (k.complete) mode = k.l2_mode;
  for (const KeyOutcome& k : outcome.keys) {
    if (!k.complete) continue;
    ++keys;
    mode = k.l2_mode;
    if (k.bisect.intervals.empty())
      rows.push_back({dtype_name(k.dtype), op_name(k.op), "-", "-", "(no candidate was ok)", "", "",
                      "", "", ""});
    for (const IntervalWinner& w : k.bisect.intervals) {
      const auto gbps = result_gbps(w.winner);
      rows.push_back({dtype_name(k.dtype), op_name(k.op), std::to_string(w.n_lo),
                      std::to_string(w.n_hi), w.winner.kernel_id, fixed(*w.winner.median_us, 2),
                      format_size(w.winner.n), gbps ? fixed(*gbps, 1) : "-",
                      w.runner_up ? w.runner_up->kernel_id : "-",
                      w.margin ? format_margin(*w.margin) : "-"});
    }
  }
  if (!device.empty())
    os << "winners on " << device
       << (mode ? std::string(", ") + db::l2_mode_name(*mode) + " L2" : std::string()) << ":\n";
  if (keys == 0) os << "no key finished: no winners\n";
  else print_table(os, rows, {false, false, true, true, false, true, true, true, false, true});
  print_segmented(os, outcome);
}

Json winners_json(const TuneOutcome& outcome, const std::string& device) {
  const auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(); };
  const auto result = [&](Json::Object o, const Result& w, const std::optional<Result>& runner_up,
                          const std::optional<double>& margin) {
    o.emplace_back("kernel", Json(w.kernel_id));
    o.emplace_back("median_us", opt(w.median_us));
    o.emplace_back("at_n", Json(static_cast<std::int64_t>(w.n)));
    o.emplace_back("gbps", opt(result_gbps(w)));
    o.emplace_back("runner_up", runner_up ? Json(runner_up->kernel_id) : Json());
    o.emplace_back("margin", opt(margin));
    return Json(std::move(o));
  };
  const auto u = [](std::uint64_t v) { return Json(static_cast<std::int64_t>(v)); };
  std::optional<L2Mode> mode;
  Json keys = Json::array();
  for (const KeyOutcome& k : outcome.keys) {
    if (!k.complete) continue;
    mode = k.l2_mode;
    Json intervals = Json::array();
    for (const IntervalWinner& w : k.bisect.intervals)
      intervals.push_back(
          result({{"n_lo", u(w.n_lo)}, {"n_hi", u(w.n_hi)}}, w.winner, w.runner_up, w.margin));
    keys.push_back(Json(Json::Object{{"dtype", Json(dtype_name(k.dtype))},
                                     {"op", Json(op_name(k.op))},
                                     {"intervals", std::move(intervals)}}));
  }
  Json seg = Json::array();
  for (const SegKeyOutcome& k : outcome.segmented) {
    if (!k.complete) continue;
    mode = k.l2_mode;
    Json rects = Json::array();
    for (const SegRectangle& r : k.rectangles.rectangles)
      rects.push_back(result({{"size_lo", u(r.size_lo)},
                              {"size_hi", u(r.size_hi)},
                              {"count_lo", u(r.count_lo)},
                              {"count_hi", u(r.count_hi)},
                              {"points", u(r.points)}},
                             r.winner, r.runner_up, r.margin));
    seg.push_back(Json(Json::Object{{"dtype", Json(dtype_name(k.dtype))},
                                    {"op", Json(op_name(k.op))},
                                    {"layout", Json(kseg::seg_layout_name(k.layout))},
                                    {"rectangles", std::move(rects)}}));
  }
  Json out = Json::object();
  out.set("device", device);
  out.set("l2_mode", mode ? Json(db::l2_mode_name(*mode)) : Json());
  out.set("complete", !outcome.cancelled);
  out.set("keys", std::move(keys));
  out.set("segmented", std::move(seg));
  return out;
}

}  // namespace tunedreduce::tuner
