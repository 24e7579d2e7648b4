// Parsing of the report command's values; every failure names the value and the choices.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/grammar.hpp"
#include "common/names.hpp"
#include "kernels/registry_names.hpp"
#include "kernels/segmented/segmented.hpp"
#include "reports/reports.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports {

namespace {

[[noreturn]] void bad(std::string_view what, std::string_view value, const std::string& choices) {
  throw Error(fmt::format("unknown {} '{}' (choose from {})", what, terminal_escape(value),
                          choices),
              exit_code::usage);
}

}  // namespace

Kind kind_from_text(std::string_view s) {
  if (auto k = parse_kind(s)) return *k;
  bad("report kind", s, kind_choices());
}

Format format_from_text(std::string_view s) {
  if (auto f = parse_format(s)) return *f;
  bad("format", s, format_choices());
}

DType dtype_from_text(std::string_view s) {
  if (auto t = parse_dtype(s)) return *t;
  bad("element type", s, dtype_choices());
}

Op op_from_text(std::string_view s) {
  if (auto o = parse_op(s)) return *o;
  bad("op", s, op_choices());
}

db::L2Mode l2_from_text(std::string_view s) {
  if (auto m = db::parse_l2_mode(s)) return *m;
  bad("L2 mode", s, "cold, warm");
}

std::string family_from_text(std::string_view s) {
  if (auto f = kernels::parse_family(s)) return kernels::family_name(*f);
  bad("family", s, kernels::family_names.joined());
}

std::string layout_from_text(std::string_view s) {
  if (auto l = kernels::segmented::parse_seg_layout(s))
    return kernels::segmented::seg_layout_name(*l);
  std::string choices;
  for (auto l : kernels::segmented::all_seg_layouts)
    choices += (choices.empty() ? "" : ", ") + std::string(kernels::segmented::seg_layout_name(l));
  bad("layout", s, choices);
}

std::uint64_t size_from_text(std::string_view text) {
  // The CLI's one grammar of element counts (common/grammar.hpp), one count, 1 .. 2^40.
  return grammar::parse_count("--n", text);
}

std::optional<Format> format_for_path(std::string_view path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".html" || ext == ".htm") return Format::html;
  if (ext == ".csv") return Format::csv;
  if (ext == ".json") return Format::json;
  if (ext == ".md" || ext == ".markdown") return Format::markdown;
  if (ext == ".txt") return Format::table;
  return std::nullopt;
}

}  // namespace tunedreduce::reports
