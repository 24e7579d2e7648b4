// Parsing of the report command's values; every failure names the value and the choices.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>

#include "common/error.hpp"
#include "common/names.hpp"
#include "kernels/registry.hpp"
#include "reports/reports.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports {

namespace {

[[noreturn]] void bad(std::string_view what, std::string_view value, const std::string& choices) {
  throw Error("unknown " + std::string(what) + " '" + terminal_escape(value) + "' (choose from " +
                  choices + ")",
              exit_code::usage);
}

std::string family_choices() {
  std::string s;
  for (kernels::Family f : kernels::all_families) {
    if (!s.empty()) s += ", ";
    s += kernels::family_name(f);
  }
  return s;
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
  bad("dtype", s, dtype_choices());
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
  bad("family", s, family_choices());
}

std::uint64_t size_from_text(std::string_view text) {
  auto fail = [&]() -> std::uint64_t {
    throw Error("invalid size '" + terminal_escape(text) +
                    "' (an element count from 1 to 2^40: 16777216, 2^24, 16Mi)",
                exit_code::usage);
  };
  std::string_view s = text;
  std::uint64_t n = 0;
  auto number = [&](std::string_view part, std::uint64_t& v) {
    if (part.empty() || !std::all_of(part.begin(), part.end(),
                                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return false;
    auto r = std::from_chars(part.data(), part.data() + part.size(), v);
    return r.ec == std::errc() && r.ptr == part.data() + part.size();
  };
  if (auto caret = s.find('^'); caret != std::string_view::npos) {
    std::uint64_t base = 0, exp = 0;
    if (!number(s.substr(0, caret), base) || !number(s.substr(caret + 1), exp) || base < 2 || exp > 40)
      return fail();
    n = 1;
    for (std::uint64_t i = 0; i < exp; ++i) {
      if (n > kernels::max_elements / base) return fail();
      n *= base;
    }
  } else {
    std::uint64_t mult = 1;
    if (s.ends_with("Ki")) mult = 1ull << 10;
    else if (s.ends_with("Mi")) mult = 1ull << 20;
    else if (s.ends_with("Gi")) mult = 1ull << 30;
    if (mult != 1) s.remove_suffix(2);
    if (!number(s, n) || n > kernels::max_elements / mult) return fail();
    n *= mult;
  }
  if (n < 1 || n > kernels::max_elements) return fail();
  return n;
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
