#pragma once
// Pieces the renderers share. Internal to reports/.

#include <cstddef>
#include <string>
#include <vector>

#include "reports/model.hpp"

namespace tunedreduce::reports::detail {

/// The columns \p format shows of \p s, by index: machine-only columns only in CSV and JSON,
/// not_terminal ones not in the table format, hide_if_empty ones not for people when empty.
std::vector<std::size_t> visible_columns(const Section& s, Format format);
/// What people read in a cell (unescaped): its text, else its value, else "—".
std::string people_text(const Cell& c);
/// The selection line: "device all · dtype i32 · op sum".
std::string filters_text(const Report& r);

/// \p width: the terminal's columns, 0 for no limit. A table wider than that is printed as groups
/// of its columns, each under its leading label columns again; notes wrap at min(100, width).
std::string render_table(const Report& r, std::size_t width = 0);
std::string render_markdown(const Report& r);
std::string render_csv(const Report& r);
std::string render_json(const Report& r);
std::string render_html(const Report& r);

/// Inline SVG for one chart (docs/reports.md describes the elements the tests look for).
std::string render_svg(const Chart& chart, int index);

}  // namespace tunedreduce::reports::detail
