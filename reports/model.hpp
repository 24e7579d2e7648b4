#pragma once
// What a report is, independent of how it is written out: sections, each with the key it is
// about, a table and optionally a chart. Every report kind builds one of these; every format
// renders any of them (docs/reports.md). Text from the database is kept verbatim here and
// escaped only by the renderers.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/enum_names.hpp"

namespace tunedreduce::reports {

enum class Kind { best, variants, ladder, heatmap, compare, bench, coverage, segmented };
enum class Format { table, markdown, csv, json, html };

/// The names `tunedreduce report KIND --format FORMAT` takes (and "md" for markdown).
inline constexpr auto kind_names = enum_names<Kind>({
    {Kind::best, "best"},
    {Kind::variants, "variants"},
    {Kind::ladder, "ladder"},
    {Kind::heatmap, "heatmap"},
    {Kind::compare, "compare"},
    {Kind::bench, "bench"},
    {Kind::coverage, "coverage"},
    {Kind::segmented, "segmented"},
});
static_assert(kind_names.lists_all_through(Kind::segmented));
inline constexpr auto format_names = enum_names<Format>({
    {Format::table, "table"},
    {Format::markdown, "markdown"},
    {Format::csv, "csv"},
    {Format::json, "json"},
    {Format::html, "html"},
});
static_assert(format_names.lists_all_through(Format::html));

/// One table cell: the value machines read (CSV, JSON) and the text people read (table,
/// Markdown, HTML).
struct Cell {
  using Value = std::variant<std::monostate, std::int64_t, double, std::string>;
  Value value;         // monostate: absent (empty CSV field, JSON null, "—" for people)
  std::string text;    // for people; empty: derived from value
  std::string detail;  // extra words for people (HTML tooltip); never required to read the report
  bool mark = false;   // emphasised: the best of its row, a stale winner, ...
  bool size = false;   // an element count: people see 2^k for powers of two

  static Cell none(std::string text = {});
  static Cell str(std::string s);
  static Cell integer(std::int64_t v);
  /// An element count (value: the count; text: "2^24" or the number).
  static Cell count(std::uint64_t n);
  /// A number shown with \p decimals decimals; \p suffix is appended to the text only.
  static Cell number(double v, int decimals, std::string suffix = {});
  /// A number or absent.
  static Cell number(std::optional<double> v, int decimals, std::string suffix = {});

  Cell&& with_detail(std::string d) && {
    detail = std::move(d);
    return std::move(*this);
  }
  Cell&& marked(bool m = true) && {
    mark = m;
    return std::move(*this);
  }
  bool is_null() const { return std::holds_alternative<std::monostate>(value); }
};

/// Which outputs show a column.
enum class Show {
  everywhere,
  not_terminal,  // wide columns left out of --format table
  machines,      // CSV and JSON only (people see the value elsewhere, e.g. in a tooltip)
};

struct Column {
  std::string id;        // stable snake_case name: CSV header, JSON member
  std::string label;     // for people (may contain text from the database)
  bool numeric = false;  // right-aligned
  Show show = Show::everywhere;
  std::string unit;            // "us", "GB/s", "%", ... ("" when none); JSON only
  bool hide_if_empty = false;  // left out for people when no row has a value (CSV/JSON keep it)
  /// HTML writes the label upright (bottom to top): for many narrow numeric columns with long
  /// names, the families of `variants`, so that the table fits a laptop's width.
  bool vertical = false;
};

/// A line chart of y against n, x on a log2 scale; y linear from 0, or logarithmic.
struct LineChart {
  enum class YScale { linear, log };
  struct Point {
    std::uint64_t n = 0;
    double y = 0;
    std::string label;  // tooltip: the configuration behind the point
  };
  struct Series {
    std::string name;
    std::vector<Point> points;  // ascending n; a gap in n is drawn as a gap in the line
    /// A baseline (cub::DeviceReduce): drawn in black, thicker, apart from the palette.
    bool baseline = false;
  };
  /// A horizontal line across the plot: a device's peak bandwidth, a speed-up of 1.
  struct Reference {
    double y = 0;
    std::string label;
  };
  std::string title;
  std::string y_label;
  std::vector<Series> series;
  YScale y_scale = YScale::linear;
  std::vector<Reference> references;
  /// The charts of a section that name a view are one figure in HTML, a tab per view ("GB/s",
  /// "µs (log)", "speed-up"), the first shown; other formats list them as separate charts.
  std::string view;
};

/// Horizontal bars, one per label (the ladder's steps).
struct BarChart {
  struct Bar {
    std::string label;
    std::optional<double> value;  // absent: "not measured"
    std::string note;             // text after the bar ("×1.45")
  };
  std::string title;
  std::string unit;
  std::vector<Bar> bars;
};

/// A grid of values (block size × unroll factor; segment count × segment size); higher is
/// better.
struct HeatmapChart {
  std::string title;
  std::string row_title, col_title, unit;
  std::vector<std::string> rows, cols;
  std::vector<std::vector<std::optional<double>>> values;  // [row][col]
  std::vector<std::vector<std::string>> details;           // tooltips, same shape (may be empty)
  /// What a cell says instead of its value, same shape (may be empty): lines split at '\n', at
  /// most two (the segmented plane: the winner's family, then its % of the floor and margin). A
  /// map with labels outlines no best cell: its cells are shapes, not rivals.
  std::vector<std::vector<std::string>> labels;
  /// The colour scale: light at scale_lo, dark at scale_hi. A report sets one scale for all its
  /// maps, so that the same colour is the same GB/s everywhere; unset, the map's own range.
  std::optional<double> scale_lo, scale_hi;
  std::string scale_note;  // said under the scale ("shared by the 44 maps of this report")
};

using Chart = std::variant<LineChart, BarChart, HeatmapChart>;

struct Section {
  std::string table;  // what kind of rows: "winners", "variants", "not_tuned", ...
  std::string title;
  /// What the section is about, e.g. {device, NVIDIA H100}, {fingerprint, 75ee…}, {dtype, i32}.
  std::vector<std::pair<std::string, std::string>> key;
  std::vector<std::string> notes;
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;  // each the size of columns
  std::string empty_text;               // said instead of an empty table
  std::vector<Chart> charts;
};

struct Report {
  Kind kind = Kind::best;
  std::string title;
  std::string database;  // the file read
  /// The selection in force, for people and JSON: {"device", "all"}, {"dtype", "i32"}, ...
  std::vector<std::pair<std::string, std::string>> filters;
  std::vector<std::string> notes;
  std::vector<Section> sections;
  /// Set when there is nothing to report: the whole report is this sentence.
  std::optional<std::string> empty;
};

const char* kind_name(Kind k) noexcept;
const char* format_name(Format f) noexcept;
std::optional<Kind> parse_kind(std::string_view s);
std::optional<Format> parse_format(std::string_view s);
/// "best, variants, ladder, heatmap, compare, bench, coverage, segmented".
std::string kind_choices();
std::string format_choices();

}  // namespace tunedreduce::reports
