// The text formats: a table for the terminal, Markdown, CSV (RFC 4180) and JSON.

#include <algorithm>
#include <map>

#include "common/json.hpp"
#include "reports/render_detail.hpp"
#include "reports/reports.hpp"
#include "reports/text.hpp"
#include "tunedreduce/version.hpp"

namespace tunedreduce::reports {

namespace detail {

std::vector<std::size_t> visible_columns(const Section& s, Format format) {
  const bool machines = format == Format::csv || format == Format::json;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < s.columns.size(); ++i) {
    const Column& c = s.columns[i];
    if (!machines) {
      if (c.show == Show::machines) continue;
      if (c.show == Show::not_terminal && format == Format::table) continue;
      if (c.hide_if_empty && std::all_of(s.rows.begin(), s.rows.end(),
                                         [&](const auto& row) { return row[i].is_null(); }))
        continue;
    }
    out.push_back(i);
  }
  return out;
}

std::string people_text(const Cell& c) {
  if (!c.text.empty()) return c.text;
  if (const auto* s = std::get_if<std::string>(&c.value)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&c.value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&c.value)) return shortest(*d);
  return "—";
}

std::string filters_text(const Report& r) {
  std::string s;
  for (const auto& [k, v] : r.filters) s += (s.empty() ? "" : " · ") + k + " " + v;
  return s;
}

namespace {

// Appends every piece (GCC 12 warns, wrongly, about "literal" + std::string temporaries).
template <class... Parts>
void put(std::string& out, const Parts&... parts) {
  (out.append(std::string_view(parts)), ...);
}

// Word-wraps \p text (already escaped for the terminal) at \p width columns.
std::string wrap(const std::string& text, std::size_t width, const std::string& indent = "") {
  std::string out, line;
  std::size_t pos = 0;
  auto flush = [&] {
    out += indent + line + "\n";
    line.clear();
  };
  while (pos < text.size()) {
    std::size_t sp = text.find(' ', pos);
    if (sp == std::string::npos) sp = text.size();
    const std::string word = text.substr(pos, sp - pos);
    if (!line.empty() && display_width(line) + 1 + display_width(word) > width) flush();
    line += (line.empty() ? "" : " ") + word;
    pos = sp + 1;
  }
  if (!line.empty()) flush();
  return out;
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  const std::size_t w = display_width(s);
  if (w >= width) return s;
  const std::string fill(width - w, ' ');
  return right ? fill + s : s + fill;
}

/// The groups of visible columns (indices into the widths) that fit \p limit columns: every
/// group begins with the \p labels leading columns, then as many of the others as fit (at least
/// one). One group of all where they fit or there is no limit.
std::vector<std::vector<std::size_t>> column_groups(const std::vector<std::size_t>& width,
                                                    std::size_t labels, std::size_t limit) {
  const std::size_t gap = 2;
  std::size_t total = 0;
  for (std::size_t j = 0; j < width.size(); ++j) total += width[j] + (j ? gap : 0);
  std::vector<std::vector<std::size_t>> groups;
  if (limit == 0 || total <= limit || labels >= width.size()) {
    groups.emplace_back();
    for (std::size_t j = 0; j < width.size(); ++j) groups.back().push_back(j);
    return groups;
  }
  std::size_t head = 0;
  for (std::size_t j = 0; j < labels; ++j) head += width[j] + (j ? gap : 0);
  for (std::size_t j = labels; j < width.size();) {
    std::vector<std::size_t> g;
    for (std::size_t k = 0; k < labels; ++k) g.push_back(k);
    std::size_t used = head;
    while (j < width.size() && (g.size() == labels || used + gap + width[j] <= limit)) {
      used += (g.empty() ? 0 : gap) + width[j];
      g.push_back(j++);
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace

std::string render_table(const Report& r, std::size_t width_limit) {
  const std::size_t text_width = width_limit ? std::min<std::size_t>(100, width_limit) : 100;
  // A line of its own: word-wrapped where there is a width limit.
  auto line = [&](const std::string& text) {
    return width_limit ? wrap(text, width_limit) : text + "\n";
  };
  std::string out = line(terminal_escape(r.title));
  std::string db_line, selection;
  put(db_line, "database: ", terminal_escape(r.database));
  put(selection, "selection: ", terminal_escape(filters_text(r)));
  out += line(db_line);
  out += line(selection);
  if (r.empty) return out + "\n" + wrap(terminal_escape(*r.empty), text_width);
  for (const auto& n : r.notes) {
    out += '\n';
    out += wrap(terminal_escape(n), text_width);
  }
  bool any_mark = false;
  for (const Section& s : r.sections) {
    std::string heading;
    put(heading, "== ", terminal_escape(s.title), " ==");
    out += '\n';
    out += line(heading);
    for (const auto& n : s.notes) out += wrap(terminal_escape(n), text_width);
    if (s.rows.empty()) {
      out +=
          (s.empty_text.empty() ? std::string("(no rows)") : terminal_escape(s.empty_text)) + "\n";
      continue;
    }
    const auto cols = visible_columns(s, Format::table);
    std::vector<std::vector<std::string>> cells;
    std::vector<std::size_t> width(cols.size());
    std::vector<std::string> header;
    for (std::size_t j = 0; j < cols.size(); ++j) {
      header.push_back(terminal_escape(s.columns[cols[j]].label));
      width[j] = display_width(header[j]);
    }
    for (const auto& row : s.rows) {
      std::vector<std::string> line;
      for (std::size_t j = 0; j < cols.size(); ++j) {
        const Cell& c = row[cols[j]];
        std::string t = terminal_escape(people_text(c));
        if (c.mark) {
          t += "*";
          any_mark = true;
        }
        width[j] = std::max(width[j], display_width(t));
        line.push_back(std::move(t));
      }
      cells.push_back(std::move(line));
    }
    // The leading columns that name a row (up to the first numeric one; at least the first), when
    // they leave room for a column more: repeated in every group of a table too wide to fit.
    std::size_t labels = 1;
    while (labels < cols.size() && !s.columns[cols[labels]].numeric) ++labels;
    std::size_t head = 0;
    for (std::size_t j = 0; j < labels; ++j) head += width[j] + 2;
    if (width_limit && head * 2 > width_limit) labels = 1;
    const auto groups = column_groups(width, labels, width_limit);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::vector<std::size_t>& group = groups[g];
      if (groups.size() > 1) {
        const std::size_t first = group.size() > labels ? group[labels] + 1 : 1;
        const std::string from = std::to_string(first), to = std::to_string(group.back() + 1),
                          of = std::to_string(cols.size()), limit = std::to_string(width_limit);
        if (from == to) put(out, g ? "\n" : "", "(column ", from, " of ", of);
        else put(out, g ? "\n" : "", "(columns ", from, "-", to, " of ", of);
        if (!g) put(out, ": wider than ", limit, " columns");
        put(out, ")\n");
      }
      auto emit = [&](const std::vector<std::string>& line) {
        std::string text;
        for (std::size_t k = 0; k < group.size(); ++k) {
          const std::size_t j = group[k];
          if (k) text += "  ";
          text += pad(line[j], width[j], s.columns[cols[j]].numeric);
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out += text + "\n";
      };
      emit(header);
      std::vector<std::string> rule;
      for (std::size_t w : width) rule.push_back(std::string(w, '-'));
      emit(rule);
      for (const auto& line : cells) emit(line);
    }
  }
  if (any_mark) {
    out += '\n';
    out += line("* marks the best of a row (or a stale winner, a status that is not tuned).");
  }
  return out;
}

std::string render_markdown(const Report& r) {
  std::string out;
  put(out, "# ", markdown_escape(r.title), "\n\n- database: ", markdown_escape(r.database), "\n");
  for (const auto& [k, v] : r.filters)
    put(out, "- ", markdown_escape(k), ": ", markdown_escape(v), "\n");
  put(out, "- tunedreduce " TUNEDREDUCE_VERSION_STRING "\n");
  if (r.empty) {
    put(out, "\n**", markdown_escape(*r.empty), "**\n");
    return out;
  }
  for (const auto& n : r.notes) put(out, "\n", markdown_escape(n), "\n");
  for (const Section& s : r.sections) {
    put(out, "\n## ", markdown_escape(s.title), "\n\n");
    for (const auto& n : s.notes) put(out, markdown_escape(n), "\n\n");
    if (!s.charts.empty()) put(out, "_(The chart of this section is in the HTML report.)_\n\n");
    if (s.rows.empty()) {
      put(out, markdown_escape(s.empty_text.empty() ? "(no rows)" : s.empty_text), "\n");
      continue;
    }
    const auto cols = visible_columns(s, Format::markdown);
    out += "|";
    for (std::size_t j : cols) {
      out += ' ';
      out += markdown_escape(s.columns[j].label);
      out += " |";
    }
    out += "\n|";
    for (std::size_t j : cols) out += s.columns[j].numeric ? " ---: |" : " --- |";
    out += "\n";
    for (const auto& row : s.rows) {
      out += "|";
      for (std::size_t j : cols) {
        const char* strong = row[j].mark ? "**" : "";
        out += ' ';
        out += strong;
        out += markdown_escape(people_text(row[j]));
        out += strong;
        out += " |";
      }
      out += "\n";
    }
  }
  return out;
}

namespace {

std::string csv_value(const Cell& c) {
  if (const auto* s = std::get_if<std::string>(&c.value)) return csv_field(*s);
  if (const auto* i = std::get_if<std::int64_t>(&c.value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&c.value)) return shortest(*d);
  return "";
}

// Key fields, table columns, and (for kinds with several tables) the table's name: the union
// over sections, in order of first appearance.
struct CsvLayout {
  bool table_column = false;
  std::vector<std::string> keys;
  std::vector<std::string> columns;
};

CsvLayout csv_layout(const Report& r) {
  CsvLayout l;
  l.table_column = r.kind == Kind::coverage || r.kind == Kind::bench;
  for (const Section& s : r.sections) {
    for (const auto& [k, v] : s.key)
      if (std::find(l.keys.begin(), l.keys.end(), k) == l.keys.end()) l.keys.push_back(k);
    for (std::size_t j : visible_columns(s, Format::csv))
      if (std::find(l.columns.begin(), l.columns.end(), s.columns[j].id) == l.columns.end())
        l.columns.push_back(s.columns[j].id);
  }
  // A key field that is also a column (coverage's device) is written once, as the column.
  std::erase_if(l.keys, [&](const std::string& k) {
    return std::find(l.columns.begin(), l.columns.end(), k) != l.columns.end();
  });
  return l;
}

}  // namespace

std::string render_csv(const Report& r) {
  if (r.empty) return "";
  const CsvLayout l = csv_layout(r);
  std::vector<std::string> header;
  if (l.table_column) header.push_back("table");
  header.insert(header.end(), l.keys.begin(), l.keys.end());
  header.insert(header.end(), l.columns.begin(), l.columns.end());
  std::string out;
  auto emit = [&](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
    out += "\r\n";
  };
  std::vector<std::string> fields;
  for (const auto& h : header) fields.push_back(csv_field(h));
  emit(fields);
  for (const Section& s : r.sections) {
    std::map<std::string, std::size_t> index;
    for (std::size_t j = 0; j < s.columns.size(); ++j) index[s.columns[j].id] = j;
    for (const auto& row : s.rows) {
      fields.clear();
      if (l.table_column) fields.push_back(csv_field(s.table));
      for (const auto& k : l.keys) {
        auto it =
            std::find_if(s.key.begin(), s.key.end(), [&](const auto& kv) { return kv.first == k; });
        fields.push_back(it == s.key.end() ? "" : csv_field(it->second));
      }
      for (const auto& c : l.columns) {
        auto it = index.find(c);
        fields.push_back(it == index.end() ? "" : csv_value(row[it->second]));
      }
      emit(fields);
    }
  }
  return out;
}

namespace {

Json json_value(const Cell& c) {
  if (const auto* s = std::get_if<std::string>(&c.value)) return Json(valid_utf8(*s));
  if (const auto* i = std::get_if<std::int64_t>(&c.value)) return Json(*i);
  if (const auto* d = std::get_if<double>(&c.value)) return Json(*d);
  return Json();
}

Json json_chart(const Chart& chart) {
  Json j = Json::object();
  std::visit(
      [&](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, LineChart>) {
          j.set("type", "line");
          j.set("title", valid_utf8(c.title));
          j.set("x", Json::Object{{"label", Json("n (elements)")}, {"scale", Json("log2")}});
          j.set("y", Json::Object{{"label", Json(valid_utf8(c.y_label))},
                                  {"scale", Json(c.y_scale == LineChart::YScale::log ? "log10"
                                                                                     : "linear")}});
          if (!c.view.empty()) j.set("view", valid_utf8(c.view));
          Json series = Json::array();
          for (const auto& s : c.series) {
            Json points = Json::array();
            for (const auto& p : s.points)
              points.push_back(Json::Object{{"n", Json(static_cast<std::int64_t>(p.n))},
                                            {"y", Json(p.y)},
                                            {"label", Json(valid_utf8(p.label))}});
            Json one = Json::Object{{"name", Json(valid_utf8(s.name))}, {"points", points}};
            if (s.baseline) one.set("baseline", true);
            series.push_back(one);
          }
          j.set("series", series);
          Json refs = Json::array();
          for (const auto& ref : c.references)
            refs.push_back(
                Json::Object{{"y", Json(ref.y)}, {"label", Json(valid_utf8(ref.label))}});
          j.set("references", refs);
        } else if constexpr (std::is_same_v<T, BarChart>) {
          j.set("type", "bar");
          j.set("title", valid_utf8(c.title));
          j.set("unit", valid_utf8(c.unit));
          Json bars = Json::array();
          for (const auto& b : c.bars)
            bars.push_back(Json::Object{{"label", Json(valid_utf8(b.label))},
                                        {"value", Json(b.value)},
                                        {"note", Json(valid_utf8(b.note))}});
          j.set("bars", bars);
        } else {
          j.set("type", "heatmap");
          j.set("title", valid_utf8(c.title));
          j.set("rows_title", valid_utf8(c.row_title));
          j.set("cols_title", valid_utf8(c.col_title));
          j.set("unit", valid_utf8(c.unit));
          Json rows = Json::array(), cols = Json::array(), values = Json::array();
          for (const auto& x : c.rows) rows.push_back(valid_utf8(x));
          for (const auto& x : c.cols) cols.push_back(valid_utf8(x));
          for (const auto& row : c.values) {
            Json v = Json::array();
            for (const auto& x : row) v.push_back(Json(x));
            values.push_back(v);
          }
          j.set("rows", rows);
          j.set("cols", cols);
          j.set("values", values);
          if (!c.labels.empty()) {
            Json labels = Json::array();
            for (const auto& row : c.labels) {
              Json l = Json::array();
              for (const auto& x : row) l.push_back(valid_utf8(x));
              labels.push_back(l);
            }
            j.set("labels", labels);
          }
          if (c.scale_lo && c.scale_hi)
            j.set("scale", Json::Object{{"lo", Json(*c.scale_lo)},
                                        {"hi", Json(*c.scale_hi)},
                                        {"note", Json(valid_utf8(c.scale_note))}});
        }
      },
      chart);
  return j;
}

}  // namespace

std::string render_json(const Report& r) {
  Json doc = Json::object();
  doc.set("format", "tunedreduce-report");
  doc.set("format_version", 1);
  doc.set("kind", kind_name(r.kind));
  doc.set("title", valid_utf8(r.title));
  doc.set("tool_version", TUNEDREDUCE_VERSION_STRING);
  doc.set("database", valid_utf8(r.database));
  Json filters = Json::object();
  for (const auto& [k, v] : r.filters) filters.set(k, valid_utf8(v));
  doc.set("filters", filters);
  doc.set("empty", r.empty.has_value());
  doc.set("message", r.empty ? Json(valid_utf8(*r.empty)) : Json());
  Json notes = Json::array();
  for (const auto& n : r.notes) notes.push_back(valid_utf8(n));
  doc.set("notes", notes);
  Json sections = Json::array();
  for (const Section& s : r.sections) {
    Json js = Json::object();
    js.set("table", s.table);
    js.set("title", valid_utf8(s.title));
    Json key = Json::object();
    for (const auto& [k, v] : s.key) key.set(k, valid_utf8(v));
    js.set("key", key);
    Json snotes = Json::array();
    for (const auto& n : s.notes) snotes.push_back(valid_utf8(n));
    js.set("notes", snotes);
    const auto cols = visible_columns(s, Format::json);
    Json columns = Json::array();
    for (std::size_t j : cols) {
      const Column& c = s.columns[j];
      columns.push_back(Json::Object{{"id", Json(c.id)},
                                     {"label", Json(valid_utf8(c.label))},
                                     {"unit", c.unit.empty() ? Json() : Json(c.unit)},
                                     {"numeric", Json(c.numeric)}});
    }
    js.set("columns", columns);
    Json rows = Json::array();
    for (const auto& row : s.rows) {
      Json obj = Json::object();
      for (std::size_t j : cols) obj.set(s.columns[j].id, json_value(row[j]));
      rows.push_back(obj);
    }
    js.set("rows", rows);
    Json charts = Json::array();
    for (const Chart& c : s.charts) charts.push_back(json_chart(c));
    js.set("charts", charts);
    sections.push_back(js);
  }
  doc.set("sections", sections);
  return doc.dump(2) + "\n";
}

}  // namespace detail

std::string render(const Report& r, Format f, std::size_t width) {
  switch (f) {
    case Format::table:
      return detail::render_table(r, width);
    case Format::markdown:
      return detail::render_markdown(r);
    case Format::csv:
      return detail::render_csv(r);
    case Format::json:
      return detail::render_json(r);
    case Format::html:
      return detail::render_html(r);
  }
  return {};
}

}  // namespace tunedreduce::reports
