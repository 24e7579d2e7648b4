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

const char* kind_name(Kind k) noexcept { return kind_names.to_name(k); }
const char* format_name(Format f) noexcept { return format_names.to_name(f); }

std::optional<Kind> parse_kind(std::string_view s) { return kind_names.from_name(s); }

std::optional<Format> parse_format(std::string_view s) {
  if (s == "md") return Format::markdown;
  return format_names.from_name(s);
}

std::string kind_choices() { return kind_names.joined(); }
std::string format_choices() { return format_names.joined(); }

}  // namespace tunedreduce::reports
