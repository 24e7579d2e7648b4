// The HTML report: one self-contained file. Inline CSS and SVG only: no script, no font, no
// image, no link to anything outside the file; a Content-Security-Policy of default-src 'none'
// makes a browser refuse any fetch even if one slipped in.

#include <fmt/format.h>

#include "reports/render_detail.hpp"
#include "reports/text.hpp"
#include "tunedreduce/version.hpp"

namespace tunedreduce::reports::detail {

namespace {

constexpr const char* style = R"css(
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
       color: #1b1f24; background: #fff; margin: 0 auto; max-width: 1240px; padding: 24px 28px; }
h1 { font-size: 1.55em; margin: 0 0 .3em; }
h2 { font-size: 1.2em; margin: 1.8em 0 .5em; padding-top: .7em; border-top: 1px solid #d0d7de; }
.meta { color: #57606a; margin: .2em 0; }
.meta code { color: #24292f; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .92em; }
.note { max-width: 80em; color: #32383f; }
.empty { font-size: 1.1em; padding: .8em 1em; border: 1px dashed #8c959f; background: #f6f8fa; }
nav { margin: 1em 0; }
nav ol { columns: 2; column-gap: 3em; margin: .3em 0; }
nav li { break-inside: avoid; }
figure { margin: 14px 0; }
figcaption, p.caption { font-weight: 600; margin: 0 0 6px; }
svg.chart { max-width: 100%; height: auto; display: block; }
svg.chart .tick { fill: #3d444d; }
/* Views of one figure (GB/s, µs on a log scale, speed-up): a tab per view, without a script. */
figure.views > input { position: absolute; opacity: 0; pointer-events: none; }
figure.views > label { display: inline-block; padding: 3px 12px; margin: 0 4px 6px 0; cursor: pointer;
  border: 1px solid #d0d7de; border-radius: 4px; background: #f6f8fa; font-size: 13px; }
figure.views > input:checked + label { background: #1f5fa8; border-color: #1f5fa8; color: #fff; }
figure.views > input:focus-visible + label { outline: 2px solid #d9541e; }
figure.views > div.view { display: none; }
figure.views > input:nth-of-type(1):checked ~ div.view:nth-of-type(1),
figure.views > input:nth-of-type(2):checked ~ div.view:nth-of-type(2),
figure.views > input:nth-of-type(3):checked ~ div.view:nth-of-type(3),
figure.views > input:nth-of-type(4):checked ~ div.view:nth-of-type(4) { display: block; }
.table-wrap { overflow-x: auto; max-width: 100%; margin: 8px 0 12px; }
table { border-collapse: collapse; font-size: 12.5px; }
th, td { border: 1px solid #d0d7de; padding: 3px 5px; text-align: left; vertical-align: top; }
th { hyphens: none; vertical-align: bottom; }
th span.vertical { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap;
  display: inline-block; }
th { background: #f3f5f7; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
td.mark { font-weight: 700; background: #fff1c9; }
td.absent { color: #8c959f; }
td.text { white-space: pre-wrap; overflow-wrap: break-word; }
footer { margin-top: 2em; color: #57606a; font-size: .9em; }
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  figure, tr { break-inside: avoid; page-break-inside: avoid; }
  .table-wrap { overflow: visible; }
  figure.views > div.view { display: block; }
  figure.views > label, figure.views > input { display: none; }
  table { font-size: 8pt; }
  th, td { padding: 1px 4px; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
@page { size: A4 landscape; margin: 12mm; }
)css";

// \p escaped with a line-break opportunity after every '.' and '_'.
std::string breakable(const std::string& escaped) {
  std::string out;
  for (char ch : escaped) {
    out += ch;
    if (ch == '.' || ch == '_') out += "<wbr>";
  }
  return out;
}

// A cell's text as HTML: sizes as 2<sup>k</sup>.
std::string cell_html(const Cell& c, bool numeric) {
  int k = 0;
  if (c.size && c.text.starts_with("2^")) {
    if (const auto* n = std::get_if<std::int64_t>(&c.value);
        n && is_pow2(static_cast<std::uint64_t>(*n), &k))
      return fmt::format("2<sup>{}</sup>", k);
  }
  // Kernel ids and family names are long and have no spaces: let them break after a dot or an
  // underscore, so that wide tables fit a laptop's width and the page in print.
  if (numeric) return html_escape(people_text(c));
  return breakable(html_escape(people_text(c)));
}

std::string table_html(const Section& s) {
  const auto cols = visible_columns(s, Format::html);
  std::string out =
      "<div class=\"table-wrap\"><table data-table=\"" + html_escape(s.table) + "\">\n<thead><tr>";
  for (std::size_t j : cols)
    out += std::string("<th") + (s.columns[j].numeric ? " class=\"num\"" : "") + " scope=\"col\">" +
           (s.columns[j].vertical
                ? "<span class=\"vertical\">" + html_escape(s.columns[j].label) + "</span>"
                : breakable(html_escape(s.columns[j].label))) +
           "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : s.rows) {
    out += "<tr>";
    for (std::size_t j : cols) {
      const Cell& c = row[j];
      std::string cls = s.columns[j].numeric ? "num" : "text";
      if (c.mark) cls += " mark";
      if (c.is_null()) cls += " absent";
      out += "<td class=\"" + cls + "\"" +
             (c.detail.empty() ? std::string() : " title=\"" + html_escape(c.detail) + "\"") + ">" +
             cell_html(c, s.columns[j].numeric) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  return out;
}

}  // namespace

std::string render_html(const Report& r) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"tunedreduce " TUNEDREDUCE_VERSION_STRING "\">\n<title>" +
      html_escape(r.title) + "</title>\n<style>" + style +
      "</style>\n</head>\n<body>\n<header>\n<h1>" + html_escape(r.title) + "</h1>\n";
  out += "<p class=\"meta\">database <code>" + html_escape(r.database) + "</code></p>\n";
  out +=
      "<p class=\"meta\">selection: " + html_escape(filters_text(r)) + "</p>\n</header>\n<main>\n";
  if (r.empty) {
    out += "<p class=\"empty\" id=\"empty\">" + html_escape(*r.empty) + "</p>\n";
  } else {
    for (const auto& n : r.notes) out += "<p class=\"note\">" + html_escape(n) + "</p>\n";
    if (r.sections.size() > 1) {
      out += "<nav><strong>Contents</strong><ol>\n";
      for (std::size_t i = 0; i < r.sections.size(); ++i)
        out += fmt::format("<li><a href=\"#s{}\">{}</a></li>\n", i + 1,
                           html_escape(r.sections[i].title));
      out += "</ol></nav>\n";
    }
    int chart_index = 0;
    for (std::size_t i = 0; i < r.sections.size(); ++i) {
      const Section& s = r.sections[i];
      out += fmt::format("<section id=\"s{}\" data-table=\"{}\">\n<h2>{}</h2>\n", i + 1,
                         html_escape(s.table), html_escape(s.title));
      for (const auto& n : s.notes) out += "<p class=\"note\">" + html_escape(n) + "</p>\n";
      for (std::size_t k = 0; k < s.charts.size();) {
        const Chart& c = s.charts[k];
        const auto* line = std::get_if<LineChart>(&c);
        if (!line || line->view.empty()) {
          const std::string caption = std::visit([](const auto& x) { return x.title; }, c);
          out += "<figure>\n<figcaption>" + html_escape(caption) + "</figcaption>\n" +
                 render_svg(c, ++chart_index) + "</figure>\n";
          ++k;
          continue;
        }
        // Consecutive charts with a view name: one figure, a tab per view (CSS only).
        std::size_t end = k;
        while (end < s.charts.size() && end - k < 4) {
          const auto* l = std::get_if<LineChart>(&s.charts[end]);
          if (!l || l->view.empty()) break;
          ++end;
        }
        const std::string group = fmt::format("s{}-v{}", i + 1, k + 1);
        out += "<figure class=\"views\">\n";
        for (std::size_t v = k; v < end; ++v) {
          const std::string id = fmt::format("{}-{}", group, v - k + 1);
          out += fmt::format(
              "<input type=\"radio\" name=\"{0}\" id=\"{1}\"{2}><label for=\"{1}\">{3}</label>\n",
              group, id, v == k ? " checked" : "",
              html_escape(std::get<LineChart>(s.charts[v]).view));
        }
        for (std::size_t v = k; v < end; ++v) {
          const auto& l = std::get<LineChart>(s.charts[v]);
          out += "<div class=\"view\" data-view=\"" + html_escape(l.view) +
                 "\">\n<p class=\"caption\">" + html_escape(l.title) + "</p>\n" +
                 render_svg(s.charts[v], ++chart_index) + "</div>\n";
        }
        out += "</figure>\n";
        k = end;
      }
      if (s.rows.empty())
        out += "<p class=\"note\">" +
               html_escape(s.empty_text.empty() ? "(no rows)" : s.empty_text) + "</p>\n";
      else out += table_html(s);
      out += "</section>\n";
    }
  }
  out += "</main>\n<footer>tunedreduce " TUNEDREDUCE_VERSION_STRING " · report " +
         std::string(kind_name(r.kind)) + "</footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace tunedreduce::reports::detail
