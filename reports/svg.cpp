// Hand-written inline SVG for the HTML report: line charts (GB/s or µs against n on a log2 axis,
// y linear or logarithmic, with reference lines), bar charts (the ladder) and heatmaps. Every
// text from the database goes through html_escape. Series differ by colour, by dash pattern and
// by marker shape, so that the first 24 differ in colour and marker together and stay apart in a
// grey-scale print; a baseline (CUB) is black and thicker.

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "reports/render_detail.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

namespace {

// Twelve colours that stay apart on screen (the first two are the tests' blue and orange).
constexpr const char* palette[] = {"#1f5fa8", "#d9541e", "#2a8f3c", "#b8232f",
                                   "#7b4fb0", "#8c5a3c", "#c94f9c", "#5d6b78",
                                   "#9a9a12", "#1597ab", "#e0a100", "#0b2f5e"};
constexpr const char* dashes[] = {"", "7 4", "2 3", "9 3 2 3", "4 4", "12 4", "1 4", "6 2 2 2 2 2"};
constexpr int marker_shapes = 6;  // circle, square, triangle, diamond, triangle down, plus
constexpr const char* baseline_colour = "#111111";

// A marker of \p shape centred on (x, y), filled with \p colour; \p extra goes inside the element.
std::string marker(int shape, double x, double y, const char* colour, const std::string& cls,
                   const std::string& inner) {
  auto f = [](double v) { return fixed(v, 1); };
  const std::string c = cls.empty() ? "" : " class=\"" + cls + "\"";
  const std::string close = inner.empty() ? "/>" : ">" + inner;
  switch (shape % marker_shapes) {
    case 0:
      return "<circle" + c + " cx=\"" + f(x) + "\" cy=\"" + f(y) + "\" r=\"3.2\" fill=\"" + colour +
             "\"" + close + (inner.empty() ? "" : "</circle>");
    case 1:
      return "<rect" + c + " x=\"" + f(x - 3) + "\" y=\"" + f(y - 3) +
             "\" width=\"6\" height=\"6\" fill=\"" + colour + "\"" + close +
             (inner.empty() ? "" : "</rect>");
    default: {
      std::string pts;
      auto pt = [&](double dx, double dy) {
        pts += (pts.empty() ? "" : " ") + f(x + dx) + "," + f(y + dy);
      };
      switch (shape % marker_shapes) {
        case 2:
          pt(0, -4);
          pt(3.8, 3);
          pt(-3.8, 3);
          break;
        case 3:
          pt(0, -4.2);
          pt(4.2, 0);
          pt(0, 4.2);
          pt(-4.2, 0);
          break;
        case 4:
          pt(0, 4);
          pt(3.8, -3);
          pt(-3.8, -3);
          break;
        default:
          pt(-1.3, -4);
          pt(1.3, -4);
          pt(1.3, -1.3);
          pt(4, -1.3);
          pt(4, 1.3);
          pt(1.3, 1.3);
          pt(1.3, 4);
          pt(-1.3, 4);
          pt(-1.3, 1.3);
          pt(-4, 1.3);
          pt(-4, -1.3);
          pt(-1.3, -1.3);
      }
      return "<polygon" + c + " points=\"" + pts + "\" fill=\"" + colour + "\"" + close +
             (inner.empty() ? "" : "</polygon>");
    }
  }
}

// A value for people, with as many decimals as its size needs.
std::string value_text(double v) { return fixed(v, v < 10 ? 3 : v < 100 ? 2 : 1); }

std::string num(double v) { return fixed(v, 1); }

// At most \p max characters of \p s (whole UTF-8 characters), with "…" when cut.
std::string clip(const std::string& raw, std::size_t max) {
  const std::string s = valid_utf8(raw);
  std::size_t chars = 0, i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    if (chars == max) return s.substr(0, i) + "…";
    i += len;
    ++chars;
  }
  return s;
}

// A round step giving about \p ticks intervals up to \p max.
double nice_step(double max, int ticks) {
  if (!(max > 0)) return 1;
  const double raw = max / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= f * mag) return f * mag;
  return 10 * mag;
}

std::string tick_text(double v, double step) {
  return fixed(v, step < 1 ? (step < 0.1 ? 2 : 1) : 0);
}

// "2<tspan …>24</tspan>" for a power-of-two tick label.
std::string pow2_label(int k) {
  return fmt::format("2<tspan dy=\"-6\" font-size=\"9\">{}</tspan>", k);
}

std::string svg_open(const char* cls, int w, int h, int index, const std::string& title) {
  return fmt::format(
      "<svg class=\"chart {0}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
      "aria-labelledby=\"chart{1}-title\" viewBox=\"0 0 {2} {3}\" width=\"{2}\" height=\"{3}\" "
      "font-family=\"system-ui, 'DejaVu Sans', sans-serif\" font-size=\"12\">\n"
      "<title id=\"chart{1}-title\">{4}</title>\n",
      cls, index, w, h, html_escape(title));
}

// The y axis of a line chart: linear from 0, or logarithmic around the data.
struct YAxis {
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<double> ticks;
  int decimals = 0;
  double pos(double v) const {  // 0 at lo, 1 at hi
    if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
};

int decimals_for(double step) {
  int d = 0;
  while (d < 4 && std::fabs(step * std::pow(10.0, d) - std::round(step * std::pow(10.0, d))) > 1e-6)
    ++d;
  return d;
}

YAxis make_axis(const LineChart& c) {
  YAxis a;
  double dmin = INFINITY, dmax = 0;
  for (const auto& s : c.series)
    for (const auto& p : s.points)
      if (std::isfinite(p.y) && (c.y_scale == LineChart::YScale::linear || p.y > 0))
        dmin = std::min(dmin, p.y), dmax = std::max(dmax, p.y);
  for (const auto& r : c.references)
    if (std::isfinite(r.y) && r.y > 0) dmin = std::min(dmin, r.y), dmax = std::max(dmax, r.y);
  if (c.y_scale == LineChart::YScale::linear || !(dmin > 0)) {
    const double step = nice_step(dmax * 1.05, 5);
    a.hi = std::max(step, std::ceil(dmax * 1.05 / step) * step);
    for (double y = 0; y <= a.hi + 1e-9; y += step) a.ticks.push_back(y);
    a.decimals = decimals_for(step);
    return a;
  }
  a.log = true;
  a.lo = dmin / 1.12;
  a.hi = dmax * 1.12;
  if (a.hi / a.lo < 1.25) {  // a flat series: give it some room around its value
    const double mid = std::sqrt(a.lo * a.hi);
    a.lo = mid / 1.12;
    a.hi = mid * 1.12;
  }
  if (a.hi / a.lo >= 10) {
    // 1-2-5 per decade, the axis from the last of them below the data to the first above (so
    // both ends are labelled), thinned to the decades when there are too many.
    std::vector<double> nice;
    for (int k = static_cast<int>(std::floor(std::log10(dmin))) - 1;
         k <= static_cast<int>(std::ceil(std::log10(dmax))) + 1; ++k)
      for (double f : {1.0, 2.0, 5.0}) nice.push_back(f * std::pow(10.0, k));
    for (double v : nice)
      if (v <= dmin / 1.02) a.lo = v;
    for (auto it = nice.rbegin(); it != nice.rend(); ++it)
      if (*it >= dmax * 1.02) a.hi = *it;
    std::vector<double> all, decades;
    for (double v : nice)
      if (v >= a.lo * (1 - 1e-12) && v <= a.hi * (1 + 1e-12)) {
        all.push_back(v);
        if (std::fabs(std::log10(v) - std::round(std::log10(v))) < 1e-9) decades.push_back(v);
      }
    a.ticks = all.size() <= 10 || decades.size() < 2 ? all : decades;
    a.decimals = 0;
    for (double v : a.ticks) a.decimals = std::max(a.decimals, decimals_for(v));
  } else {
    // Less than a decade: round linear steps, placed on the log scale.
    const double step = nice_step(a.hi - a.lo, 5);
    for (double v = std::ceil(a.lo / step) * step; v <= a.hi + 1e-12; v += step)
      a.ticks.push_back(v);
    a.decimals = decimals_for(step);
  }
  return a;
}

std::string line_chart(const LineChart& c, int index) {
  constexpr int W = 860, L = 70, R = 250, T = 16, B = 58, legend_row = 19;
  const int H = std::max(380, T + 8 + legend_row * static_cast<int>(c.series.size()) + 16 + B);
  const int pw = W - L - R, ph = H - T - B;
  std::set<std::uint64_t> all_n;
  for (const auto& s : c.series)
    for (const auto& p : s.points) all_n.insert(p.n);
  std::string out =
      svg_open(c.y_scale == LineChart::YScale::log ? "line-chart log-y" : "line-chart", W, H, index,
               c.title);
  if (all_n.empty()) return out + "<text x=\"20\" y=\"40\">no data</text>\n</svg>\n";
  int lo = static_cast<int>(std::floor(std::log2(static_cast<double>(*all_n.begin()))));
  int hi = static_cast<int>(std::ceil(std::log2(static_cast<double>(*all_n.rbegin()))));
  if (lo == hi) --lo, ++hi;
  const int xstep = hi - lo <= 12 ? 1 : hi - lo <= 24 ? 2 : 4;
  const YAxis ya = make_axis(c);
  auto X = [&](double n) { return L + (std::log2(n) - lo) / (hi - lo) * pw; };
  auto Y = [&](double y) {
    if (ya.log && !(y > 0)) return static_cast<double>(T + ph);
    return T + ph - std::clamp(ya.pos(y), 0.0, 1.0) * ph;
  };

  out += "<g class=\"grid\" stroke=\"#e3e7eb\" stroke-width=\"1\">\n";
  for (double y : ya.ticks)
    out += "<line x1=\"" + num(L) + "\" x2=\"" + num(L + pw) + "\" y1=\"" + num(Y(y)) + "\" y2=\"" +
           num(Y(y)) + "\"/>\n";
  for (int k = lo; k <= hi; k += xstep)
    out += "<line x1=\"" + num(X(std::ldexp(1.0, k))) + "\" x2=\"" + num(X(std::ldexp(1.0, k))) +
           "\" y1=\"" + num(T) + "\" y2=\"" + num(T + ph) + "\"/>\n";
  out += "</g>\n<g class=\"axis x-axis\" fill=\"#24292f\">\n";
  out += "<line x1=\"" + num(L) + "\" x2=\"" + num(L + pw) + "\" y1=\"" + num(T + ph) + "\" y2=\"" +
         num(T + ph) + "\" stroke=\"#24292f\"/>\n";
  for (int k = lo; k <= hi; k += xstep) {
    const double x = X(std::ldexp(1.0, k));
    out += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + num(T + ph) + "\" y2=\"" +
           num(T + ph + 5) + "\" stroke=\"#24292f\"/>\n";
    out += "<text class=\"tick\" x=\"" + num(x) + "\" y=\"" + num(T + ph + 20) +
           "\" text-anchor=\"middle\">" + pow2_label(k) + "</text>\n";
  }
  out += "<text class=\"axis-title\" x=\"" + num(L + pw / 2.0) + "\" y=\"" + num(H - 10) +
         "\" text-anchor=\"middle\">n (elements, log scale)</text>\n</g>\n";
  out += "<g class=\"axis y-axis\" fill=\"#24292f\">\n";
  out += "<line x1=\"" + num(L) + "\" x2=\"" + num(L) + "\" y1=\"" + num(T) + "\" y2=\"" +
         num(T + ph) + "\" stroke=\"#24292f\"/>\n";
  for (double y : ya.ticks)
    out += "<text class=\"tick\" x=\"" + num(L - 8) + "\" y=\"" + num(Y(y) + 4) +
           "\" text-anchor=\"end\">" + fixed(y, ya.decimals) + "</text>\n";
  out += "<text class=\"axis-title\" transform=\"translate(16 " + num(T + ph / 2.0) +
         ") rotate(-90)\" text-anchor=\"middle\">" +
         html_escape(c.y_label + (ya.log ? " (log scale)" : "")) + "</text>\n</g>\n";

  // Reference lines: a device's peak bandwidth, a speed-up of 1.
  if (!c.references.empty()) {
    out += "<g class=\"references\">\n";
    double prev_label = -1e9;  // the last label's baseline: labels closer than a line go below
    std::vector<const LineChart::Reference*> refs;
    for (const auto& ref : c.references) refs.push_back(&ref);
    std::sort(refs.begin(), refs.end(), [](const auto* a, const auto* b) { return a->y > b->y; });
    for (const auto* rp : refs) {
      const auto& ref = *rp;
      if (ya.log && !(ref.y > 0)) continue;
      const double y = Y(ref.y);
      double label_y = y - 5;
      if (label_y - prev_label < 13) label_y = y + 13;
      prev_label = label_y;
      out += "<g class=\"reference\" data-y=\"" + value_text(ref.y) + "\"><title>" +
             html_escape(ref.label) + "</title><line x1=\"" + num(L) + "\" x2=\"" + num(L + pw) +
             "\" y1=\"" + num(y) + "\" y2=\"" + num(y) +
             "\" stroke=\"#57606a\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"/><text x=\"" +
             num(L + pw - 4) + "\" y=\"" + num(label_y) +
             "\" text-anchor=\"end\" fill=\"#57606a\" "
             "font-size=\"11\">" +
             html_escape(clip(ref.label, 40)) + "</text></g>\n";
    }
    out += "</g>\n";
  }

  const std::vector<std::uint64_t> grid(all_n.begin(), all_n.end());
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    const char* colour = s.baseline ? baseline_colour : palette[i % std::size(palette)];
    const char* dash = s.baseline ? "" : dashes[i % std::size(dashes)];
    const int shape = s.baseline ? 1 : static_cast<int>(i % marker_shapes);
    std::string d;
    std::size_t prev_pos = 0;
    bool have_prev = false;
    for (const auto& p : s.points) {
      const std::size_t pos =
          static_cast<std::size_t>(std::lower_bound(grid.begin(), grid.end(), p.n) - grid.begin());
      // A size measured for other series but not this one breaks the line.
      d += (have_prev && pos == prev_pos + 1 ? " L" : (d.empty() ? "M" : " M")) + num(X(p.n)) +
           " " + num(Y(p.y));
      prev_pos = pos;
      have_prev = true;
    }
    out += "<g class=\"series" + std::string(s.baseline ? " baseline" : "") + "\" data-series=\"" +
           html_escape(s.name) + "\">\n<title>" + html_escape(s.name) + "</title>\n";
    out += "<path class=\"line\" d=\"" + d + "\" fill=\"none\" stroke=\"" + colour +
           "\" stroke-width=\"" + (s.baseline ? "3" : "2") + "\"" +
           (*dash ? " stroke-dasharray=\"" + std::string(dash) + "\"" : "") + "/>\n";
    for (const auto& p : s.points)
      out += marker(shape, X(p.n), Y(p.y), colour, "point",
                    "<title>" +
                        html_escape(s.name + " · n = " + size_text(p.n) + " · " + value_text(p.y) +
                                    " " + c.y_label + (p.label.empty() ? "" : " · " + p.label)) +
                        "</title>") +
             "\n";
    out += "</g>\n";
  }
  out += "<g class=\"legend\">\n";
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    const double y = T + 8 + legend_row * static_cast<double>(i);
    const double x = L + pw + 16;
    const char* colour = s.baseline ? baseline_colour : palette[i % std::size(palette)];
    const char* dash = s.baseline ? "" : dashes[i % std::size(dashes)];
    const int shape = s.baseline ? 1 : static_cast<int>(i % marker_shapes);
    out += "<g class=\"legend-item\" data-series=\"" + html_escape(s.name) + "\"><line x1=\"" +
           num(x) + "\" x2=\"" + num(x + 28) + "\" y1=\"" + num(y) + "\" y2=\"" + num(y) +
           "\" stroke=\"" + colour + "\" stroke-width=\"" + (s.baseline ? "3" : "2") + "\"" +
           (*dash ? " stroke-dasharray=\"" + std::string(dash) + "\"" : "") + "/>" +
           marker(shape, x + 14, y, colour, "", "") + "<text x=\"" + num(x + 36) + "\" y=\"" +
           num(y + 4) + "\">" + html_escape(clip(s.name, 28)) + "</text><title>" +
           html_escape(s.name) + "</title></g>\n";
  }
  out += "</g>\n</svg>\n";
  return out;
}

std::string bar_chart(const BarChart& c, int index) {
  constexpr int W = 780, L = 150, R = 170, T = 10, row = 26, B = 44;
  const int n = static_cast<int>(c.bars.size());
  const int H = T + n * row + B, pw = W - L - R;
  double max = 0;
  for (const auto& b : c.bars)
    if (b.value) max = std::max(max, *b.value);
  const double step = nice_step(max * 1.05, 5);
  const double top = std::max(step, std::ceil(max * 1.05 / step) * step);
  auto X = [&](double v) { return L + v / top * pw; };
  std::string out = svg_open("bar-chart", W, H, index, c.title);
  out += "<g class=\"grid\" stroke=\"#e3e7eb\">\n";
  for (double v = 0; v <= top + 1e-9; v += step)
    out += "<line x1=\"" + num(X(v)) + "\" x2=\"" + num(X(v)) + "\" y1=\"" + num(T) + "\" y2=\"" +
           num(T + n * row) + "\"/>\n";
  out += "</g>\n<g class=\"axis x-axis\" fill=\"#24292f\">\n";
  for (double v = 0; v <= top + 1e-9; v += step)
    out += "<text class=\"tick\" x=\"" + num(X(v)) + "\" y=\"" + num(T + n * row + 16) +
           "\" text-anchor=\"middle\">" + tick_text(v, step) + "</text>\n";
  out += "<text class=\"axis-title\" x=\"" + num(L + pw / 2.0) + "\" y=\"" + num(H - 6) +
         "\" text-anchor=\"middle\">" + html_escape(c.unit) + "</text>\n</g>\n";
  for (int i = 0; i < n; ++i) {
    const auto& b = c.bars[static_cast<std::size_t>(i)];
    const double y = T + i * row;
    out += "<g class=\"bar\" data-label=\"" + html_escape(b.label) + "\"><title>" +
           html_escape(b.label + ": " +
                       (b.value ? fixed(*b.value, 1) + " " + c.unit : "not measured") +
                       (b.note.empty() ? "" : " " + b.note)) +
           "</title><text x=\"" + num(L - 8) + "\" y=\"" + num(y + row / 2.0 + 4) +
           "\" text-anchor=\"end\">" + html_escape(clip(b.label, 22)) + "</text>";
    if (b.value) {
      out += "<rect x=\"" + num(L) + "\" y=\"" + num(y + 4) + "\" width=\"" +
             num(std::max(1.0, X(*b.value) - L)) + "\" height=\"" + num(row - 8) + "\" fill=\"" +
             palette[0] + "\"/><text x=\"" + num(X(*b.value) + 6) + "\" y=\"" +
             num(y + row / 2.0 + 4) + "\">" +
             html_escape(fixed(*b.value, 1) + (b.note.empty() ? "" : "  " + b.note)) + "</text>";
    } else {
      out += "<text x=\"" + num(L + 6) + "\" y=\"" + num(y + row / 2.0 + 4) +
             "\" fill=\"#6e7781\" font-style=\"italic\">not measured</text>";
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

// A labelled cell's text: its lines (at most two) centred on (x, y), each clipped.
std::string cell_lines(const std::string& label, double x, double y, const char* fill,
                       bool bold_first) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; lines.size() < 2;) {
    const std::size_t nl = label.find('\n', start);
    lines.push_back(label.substr(start, nl == std::string::npos ? nl : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  std::string out;
  const double first = y + 4 - 6.5 * static_cast<double>(lines.size() - 1);
  for (std::size_t i = 0; i < lines.size(); ++i)
    out += "<text x=\"" + num(x) + "\" y=\"" + num(first + 13 * static_cast<double>(i)) +
           "\" text-anchor=\"middle\" font-size=\"11\" fill=\"" + fill + "\"" +
           (bold_first && i == 0 && lines.size() > 1 ? " font-weight=\"600\"" : "") + ">" +
           html_escape(clip(lines[i], 16)) + "</text>";
  return out;
}

std::string heatmap(const HeatmapChart& c, int index) {
  // Labelled maps (the segmented plane) need room for two lines a cell.
  const bool labelled = !c.labels.empty();
  const int cw = labelled ? 96 : 84, ch = labelled ? 40 : 34;
  constexpr int L = 86, T = 46;
  const int grid_w = static_cast<int>(c.cols.size()) * cw;
  const int W = L + grid_w + 190;  // room for the colour scale and its note
  const int H = T + std::max(static_cast<int>(c.rows.size()) * ch, 120) + 24;
  // The map's own best cell is outlined; colours follow the report's shared scale where it has
  // one, else the map's own range.
  double best = -INFINITY, lo = INFINITY, hi = -INFINITY;
  for (const auto& row : c.values)
    for (const auto& v : row)
      if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
  best = hi;
  if (c.scale_lo && c.scale_hi) lo = *c.scale_lo, hi = *c.scale_hi;
  std::string out = svg_open("heatmap", W, H, index, c.title);
  out += "<text class=\"axis-title\" x=\"" + num(L + grid_w / 2.0) +
         "\" y=\"14\" "
         "text-anchor=\"middle\">" +
         html_escape(c.col_title) + "</text>\n";
  out += "<text class=\"axis-title\" x=\"8\" y=\"" + num(T - 8) + "\">" + html_escape(c.row_title) +
         "</text>\n";
  for (std::size_t j = 0; j < c.cols.size(); ++j)
    out += "<text class=\"tick\" x=\"" + num(L + cw * (j + 0.5)) + "\" y=\"" + num(T - 8) +
           "\" text-anchor=\"middle\">" + html_escape(c.cols[j]) + "</text>\n";
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const double y = T + ch * static_cast<double>(i);
    out += "<text class=\"tick\" x=\"" + num(L - 10) + "\" y=\"" + num(y + ch / 2.0 + 4) +
           "\" text-anchor=\"end\">" + html_escape(c.rows[i]) + "</text>\n";
    for (std::size_t j = 0; j < c.cols.size(); ++j) {
      const double* v = j < c.values[i].size() && c.values[i][j] ? &*c.values[i][j] : nullptr;
      const std::string detail = i < c.details.size() && j < c.details[i].size() ? c.details[i][j]
                                                                                 : "";
      const double x = L + cw * static_cast<double>(j);
      const std::string label =
          labelled && i < c.labels.size() && j < c.labels[i].size() ? c.labels[i][j] : "";
      out += "<g class=\"cell\" data-row=\"" + html_escape(c.rows[i]) + "\" data-col=\"" +
             html_escape(c.cols[j]) + "\"><title>" + html_escape(detail) + "</title>";
      if (!v && labelled) {
        // No value: blank, or the label in grey (a shape measured without a winner).
        out += "<rect x=\"" + num(x + 1) + "\" y=\"" + num(y + 1) + "\" width=\"" + num(cw - 2) +
               "\" height=\"" + num(ch - 2) + "\" fill=\"#f6f7f9\"/>" +
               (label.empty() ? std::string()
                              : cell_lines(label, x + cw / 2.0, y + ch / 2.0, "#6e7781", false)) +
               "</g>\n";
        continue;
      }
      if (!v) {
        out += "<rect x=\"" + num(x + 1) + "\" y=\"" + num(y + 1) + "\" width=\"" + num(cw - 2) +
               "\" height=\"" + num(ch - 2) + "\" fill=\"#f2f3f5\"/><text x=\"" +
               num(x + cw / 2.0) + "\" y=\"" + num(y + ch / 2.0 + 4) +
               "\" text-anchor=\"middle\" fill=\"#8c959f\">—</text></g>\n";
        continue;
      }
      const double t = hi > lo ? std::clamp((*v - lo) / (hi - lo), 0.0, 1.0) : 1.0;
      // From a pale blue (low) to a dark blue (high).
      const int r = static_cast<int>(std::lround(236 + (16 - 236) * t));
      const int g = static_cast<int>(std::lround(243 + (63 - 243) * t));
      const int b = static_cast<int>(std::lround(250 + (128 - 250) * t));
      const std::string fill = fmt::format("#{:02x}{:02x}{:02x}", r, g, b);
      const bool is_best = !labelled && *v >= best;
      const char* ink = t > 0.55 ? "#ffffff" : "#1b1f24";
      if (labelled) {
        out += "<rect x=\"" + num(x + 1) + "\" y=\"" + num(y + 1) + "\" width=\"" + num(cw - 2) +
               "\" height=\"" + num(ch - 2) + "\" fill=\"" + fill + "\"/>" +
               cell_lines(label.empty() ? fixed(*v, 0) : label, x + cw / 2.0, y + ch / 2.0, ink,
                          true) +
               "</g>\n";
        continue;
      }
      out += "<rect x=\"" + num(x + 1) + "\" y=\"" + num(y + 1) + "\" width=\"" + num(cw - 2) +
             "\" height=\"" + num(ch - 2) + "\" fill=\"" + fill + "\"" +
             (is_best ? " stroke=\"#d9541e\" stroke-width=\"3\"" : "") + "/><text x=\"" +
             num(x + cw / 2.0) + "\" y=\"" + num(y + ch / 2.0 + 4) +
             "\" text-anchor=\"middle\" fill=\"" + ink + "\"" +
             (is_best ? " font-weight=\"700\"" : "") + ">" + fixed(*v, 0) + "</text></g>\n";
    }
  }
  if (hi >= lo) {
    // The colour scale: light = the lowest value, dark = the highest, with ticks between.
    const std::string id = fmt::format("heat-scale-{}", index);
    const double x = L + grid_w + 24, h = std::max(ch * static_cast<double>(c.rows.size()), 120.0);
    out += "<g class=\"scale\"" + std::string(c.scale_lo ? " data-shared=\"1\"" : "") +
           " data-lo=\"" + fixed(lo, 1) + "\" data-hi=\"" + fixed(hi, 1) +
           "\"><defs><linearGradient id=\"" + id +
           "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\"><stop offset=\"0\" stop-color=\"#ecf3fa\"/>"
           "<stop offset=\"1\" stop-color=\"#103f80\"/></linearGradient></defs><rect x=\"" +
           num(x) + "\" y=\"" + num(T) + "\" width=\"14\" height=\"" + num(h) + "\" fill=\"url(#" +
           id + ")\" stroke=\"#d0d7de\"/>";
    const double step = hi > lo ? nice_step(hi - lo, 4) : 1;
    std::vector<double> ticks{lo};
    for (double v = std::ceil(lo / step) * step; v < hi; v += step)
      if ((v - lo) / (hi - lo + 1e-12) > 0.12 && (hi - v) / (hi - lo + 1e-12) > 0.12)
        ticks.push_back(v);
    if (hi > lo) ticks.push_back(hi);
    for (double v : ticks) {
      const double y = T + h - (hi > lo ? (v - lo) / (hi - lo) : 1.0) * h;
      out += "<line x1=\"" + num(x + 14) + "\" x2=\"" + num(x + 18) + "\" y1=\"" + num(y) +
             "\" y2=\"" + num(y) + "\" stroke=\"#57606a\"/><text x=\"" + num(x + 21) + "\" y=\"" +
             num(y + 4) + "\">" + fixed(v, 0) + "</text>";
    }
    out += "<text x=\"" + num(x - 2) + "\" y=\"" + num(T - 8) + "\">" + html_escape(c.unit) +
           "</text>";
    if (!c.scale_note.empty())
      out += "<text x=\"" + num(x - 2) + "\" y=\"" + num(T + h + 14) +
             "\" font-size=\"10\" fill=\"#57606a\">" + html_escape(clip(c.scale_note, 30)) +
             "</text>";
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace

std::string render_svg(const Chart& chart, int index) {
  return std::visit(
      [&](const auto& c) -> std::string {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, LineChart>) return line_chart(c, index);
        else if constexpr (std::is_same_v<T, BarChart>) return bar_chart(c, index);
        else return heatmap(c, index);
      },
      chart);
}

}  // namespace tunedreduce::reports::detail
