#include "reports/model.hpp"

#include <cmath>

#include "reports/text.hpp"

namespace tunedreduce::reports {

Cell Cell::none(std::string text) {
  Cell c;
  c.text = std::move(text);
  return c;
}

Cell Cell::str(std::string s) {
  Cell c;
  c.text = s;
  c.value = std::move(s);
  return c;
}

Cell Cell::integer(std::int64_t v) {
  Cell c;
  c.value = v;
  c.text = std::to_string(v);
  return c;
}

Cell Cell::count(std::uint64_t n) {
  Cell c;
  c.value = static_cast<std::int64_t>(n);
  c.text = size_text(n);
  c.size = true;
  return c;
}

Cell Cell::number(double v, int decimals, std::string suffix) {
  Cell c;
  if (!std::isfinite(v)) return c;
  c.value = v;
  c.text = fixed(v, decimals) + suffix;
  return c;
}

Cell Cell::number(std::optional<double> v, int decimals, std::string suffix) {
  return v ? number(*v, decimals, std::move(suffix)) : Cell{};
}

namespace {
constexpr const char* kind_names[] = {"best",    "variants", "ladder",  "heatmap",
                                      "compare", "bench",    "coverage"};
constexpr const char* format_names[] = {"table", "markdown", "csv", "json", "html"};

std::string join(const char* const* names, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  return out;
}
}  // namespace

const char* kind_name(Kind k) noexcept { return kind_names[static_cast<int>(k)]; }
const char* format_name(Format f) noexcept { return format_names[static_cast<int>(f)]; }

std::optional<Kind> parse_kind(std::string_view s) {
  for (std::size_t i = 0; i < std::size(kind_names); ++i)
    if (s == kind_names[i]) return static_cast<Kind>(i);
  return std::nullopt;
}

std::optional<Format> parse_format(std::string_view s) {
  for (int i = 0; i < 5; ++i)
    if (s == format_names[i]) return static_cast<Format>(i);
  if (s == "md") return Format::markdown;
  return std::nullopt;
}

std::string kind_choices() { return join(kind_names, std::size(kind_names)); }
std::string format_choices() { return join(format_names, 5); }

}  // namespace tunedreduce::reports
