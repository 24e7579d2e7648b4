#include "grammar.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "error.hpp"

namespace tunedreduce::grammar {

namespace {

constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// 'text', control characters and bytes past ASCII as \xNN: a value quoted in a message never
/// moves the terminal's cursor or colours it.
std::string quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out + "'";
}

[[noreturn]] void fail(std::string_view option, const std::string& message) {
  throw Error(fmt::format("{}: {}", option, message), exit_code::usage);
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Decimal digits, saturating.
std::optional<std::uint64_t> digits_value(std::string_view s) {
  if (!all_digits(s)) return std::nullopt;
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec == std::errc::result_out_of_range) return saturated;
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::uint64_t mul_saturating(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > saturated / a) return saturated;
  return a * b;
}

std::string invalid_count(std::string_view text) {
  std::string msg =
      fmt::format("invalid size {} (an element count: {})", quote(text), count_syntax);
  // 16M, 4K, 1G: decimal prefixes are not taken; say which binary one was likely meant.
  const std::string_view t = trim(text);
  if (t.size() >= 2 && all_digits(t.substr(0, t.size() - 1)) &&
      std::string_view("KkMGT").find(t.back()) != std::string_view::npos) {
    const char upper = t.back() == 'k' ? 'K' : t.back();
    msg += fmt::format("; did you mean {}{}i?", t.substr(0, t.size() - 1), upper);
  }
  return msg;
}

std::string decimal(std::uint64_t v) {
  if (v == saturated) return "more than 2^64";
  return std::to_string(v);
}

/// "2^40 = 1099511627776", or the decimal when not a power of two.
std::string limit_text(std::uint64_t v) {
  if (v >= 64 && (v & (v - 1)) == 0) return fmt::format("{} = {}", count_text(v), v);
  return std::to_string(v);
}

void check_limits(std::string_view option, std::string_view text, std::uint64_t v,
                  const CountLimits& limits) {
  if (v < limits.min)
    fail(option, fmt::format("invalid size {}: {} is below {}, the smallest element count here",
                             quote(text), decimal(v), limit_text(limits.min)));
  if (v > limits.max)
    fail(option, fmt::format("invalid size {}: {} is above {}, the largest element count here",
                             quote(text), decimal(v), limit_text(limits.max)));
}

std::optional<double> factor_value(std::string_view s) {
  s = trim(s);
  if (auto v = count_value(s)) return static_cast<double>(*v);
  if (s.empty() ||
      !std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; }))
    return std::nullopt;
  const std::string copy(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno != 0 || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    out.push_back(trim(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::optional<std::uint64_t> count_value(std::string_view text) {
  const std::string_view s = trim(text);
  if (const auto caret = s.find('^'); caret != std::string_view::npos) {
    const auto base = digits_value(s.substr(0, caret));
    const std::string_view exp_text = s.substr(caret + 1);
    const auto exp = digits_value(exp_text);
    if (!base || !exp || *base < 2 || exp_text.size() > 4) return std::nullopt;
    std::uint64_t v = 1;
    for (std::uint64_t i = 0; i < *exp && v != saturated; ++i) v = mul_saturating(v, *base);
    return v;
  }
  static constexpr struct {
    std::string_view suffix;
    std::uint64_t factor;
  } suffixes[] = {{"Ki", std::uint64_t{1} << 10},
                  {"Mi", std::uint64_t{1} << 20},
                  {"Gi", std::uint64_t{1} << 30},
                  {"Ti", std::uint64_t{1} << 40}};
  for (const auto& x : suffixes)
    if (s.size() > x.suffix.size() && s.ends_with(x.suffix)) {
      const auto v = digits_value(s.substr(0, s.size() - x.suffix.size()));
      if (!v) return std::nullopt;
      return mul_saturating(*v, x.factor);
    }
  return digits_value(s);
}

std::uint64_t parse_count(std::string_view option, std::string_view text,
                          const CountLimits& limits) {
  const std::string_view t = trim(text);
  if (t.find(',') != std::string_view::npos || t.find("..") != std::string_view::npos)
    fail(option, fmt::format("takes one element count, not a list or range: {}", quote(t)));
  const auto v = count_value(t);
  if (!v) fail(option, invalid_count(t));
  check_limits(option, t, *v, limits);
  return *v;
}

void check_count(std::string_view option, std::uint64_t n, const CountLimits& limits) {
  check_limits(option, std::to_string(n), n, limits);
}

std::vector<CountItem> parse_count_items(std::string_view option, std::string_view text) {
  std::vector<CountItem> items;
  for (const std::string_view item : split_commas(text)) {
    if (item.empty())
      fail(option, trim(text).empty() ? std::string("no element count given")
                                      : fmt::format("empty item in {}", quote(text)));
    CountItem c;
    c.text = std::string(item);
    const std::size_t dots = item.find("..");
    if (dots == std::string_view::npos) {
      const auto v = count_value(item);
      if (!v) fail(option, invalid_count(item));
      c.value = *v;
      c.bare = all_digits(item);
      items.push_back(std::move(c));
      continue;
    }
    c.is_range = true;
    const std::string_view from = trim(item.substr(0, dots)), rest = item.substr(dots + 2);
    const std::size_t op = rest.find_first_of("*+");
    if (op == std::string_view::npos)
      fail(option, fmt::format("a range is FROM..TO*FACTOR or FROM..TO+STEP, got {}", quote(item)));
    const std::string_view to = trim(rest.substr(0, op)), by = trim(rest.substr(op + 1));
    const auto f = count_value(from), t = count_value(to);
    if (!f) fail(option, invalid_count(from));
    if (!t) fail(option, invalid_count(to));
    c.value = *f;
    c.to = *t;
    if (rest[op] == '*') {
      const auto x = factor_value(by);
      if (!x)
        fail(option, fmt::format("invalid factor {} in {} (a number greater than 1: 2, 1.5, 2^2)",
                                 quote(by), quote(item)));
      c.factor = *x;
    } else {
      const auto x = count_value(by);
      if (!x)
        fail(option, fmt::format("invalid step {} in {} (an element count: {})", quote(by),
                                 quote(item), count_syntax));
      c.step = *x;
    }
    items.push_back(std::move(c));
  }
  return items;
}

std::vector<std::uint64_t> expand_counts(std::string_view option,
                                         const std::vector<CountItem>& items,
                                         const CountLimits& limits, std::size_t most) {
  std::vector<std::uint64_t> out;
  for (const CountItem& c : items) {
    if (!c.is_range) {
      check_limits(option, c.text, c.value, limits);
      out.push_back(c.value);
      continue;
    }
    const std::size_t dots = c.text.find("..");
    check_limits(option, trim(std::string_view(c.text).substr(0, dots)), c.value, limits);
    const std::string_view rest = std::string_view(c.text).substr(dots + 2);
    check_limits(option, trim(rest.substr(0, rest.find_first_of("*+"))), c.to, limits);
    const auto range = expand_range(c.value, c.to, c.step, c.factor,
                                    fmt::format("{}: {}", option, quote(c.text)), most);
    out.insert(out.end(), range.begin(), range.end());
    if (out.size() > 2 * most) {  // many ranges: the limit holds before all are expanded
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      if (out.size() > most)
        fail(option, fmt::format("gives more than {0} sizes; at most {0} are allowed", most));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.empty()) fail(option, "no element count given");
  if (out.size() > most)
    fail(option, fmt::format("gives {} sizes; at most {} are allowed", out.size(), most));
  return out;
}

std::vector<std::uint64_t> parse_counts(std::string_view option,
                                        const std::vector<std::string>& values,
                                        const CountLimits& limits, std::size_t most) {
  std::vector<CountItem> items;
  for (const std::string& v : values) {
    auto more = parse_count_items(option, v);
    items.insert(items.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  }
  return expand_counts(option, items, limits, most);
}

std::vector<std::uint64_t> expand_range(std::uint64_t from, std::uint64_t to,
                                        std::optional<std::uint64_t> step,
                                        std::optional<double> factor, const std::string& where,
                                        std::size_t most) {
  std::vector<std::uint64_t> out;
  if (from > to) throw Error(where + ": from is greater than to", exit_code::usage);
  auto too_many = [&] {
    return Error(fmt::format("{}: the range gives more than {} sizes; use a larger step or factor",
                             where, most),
                 exit_code::usage);
  };
  if (step) {
    if (*step < 1) throw Error(where + ": a step below 1 does not advance", exit_code::usage);
    if ((to - from) / *step + 1 > most) throw too_many();
    for (std::uint64_t v = from;; v += *step) {
      out.push_back(v);
      if (to - v < *step) break;
    }
    return out;
  }
  if (!factor || !(*factor > 1))
    throw Error(where + ": a factor of at most 1 does not advance", exit_code::usage);
  out.push_back(from);
  for (int k = 1;; ++k) {
    const double x = static_cast<double>(from) * std::pow(*factor, k);
    if (x > static_cast<double>(to) + 0.5) break;
    std::uint64_t v = static_cast<std::uint64_t>(std::llround(x));
    v = std::max(v, out.back() + 1);  // rounding may repeat a size for factors near 1
    if (v > to) break;
    out.push_back(v);
    if (out.size() > most) throw too_many();
  }
  return out;
}

std::string count_text(std::uint64_t n) {
  if (n >= 64 && (n & (n - 1)) == 0) {
    int e = 0;
    while ((std::uint64_t{1} << e) != n) ++e;
    return fmt::format("2^{}", e);
  }
  return std::to_string(n);
}

std::vector<std::string> split_list(std::string_view option,
                                    const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values)
    for (const std::string_view item : split_commas(v)) {
      if (item.empty())
        fail(option, trim(v).empty() ? std::string("empty value")
                                     : fmt::format("empty item in {}", quote(v)));
      out.emplace_back(item);
    }
  if (out.empty()) fail(option, "no value given");
  return out;
}

}  // namespace tunedreduce::grammar
