#include "tuner/config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "common/error.hpp"
#include "common/files.hpp"
#include "common/grammar.hpp"
#include "common/hash.hpp"
#include "common/names.hpp"
#include "kernels/manifest.hpp"
#include "kernels/space.hpp"

namespace tunedreduce::tuner {

namespace {

using kernels::Family;
using kernels::Finish;
using kernels::SmemMode;

constexpr std::uint64_t default_size_from = std::uint64_t{1} << 10;
constexpr std::uint64_t default_size_to = std::uint64_t{1} << 30;

// Every problem found, reported together: one line each.
class Diagnostics {
 public:
  void add(const std::string& where, const std::string& message) {
    lines_.push_back(where.empty() ? message : where + ": " + message);
  }
  bool empty() const { return lines_.empty(); }
  std::size_t size() const { return lines_.size(); }
  void throw_if_any() const {
    if (lines_.empty()) return;
    std::string text;
    for (const std::string& l : lines_) {
      if (!text.empty()) text += "\n";
      text += l;
    }
    throw Error(text, exit_code::usage);
  }

 private:
  std::vector<std::string> lines_;
};

/// What toml++ may read of a tune.toml: the text with the non-ASCII bytes of its comments replaced
/// by spaces, or where (1-based line and column, in characters) the first non-ASCII character
/// outside a comment is.
///
/// toml++ 3.3.0 (Debian 12's) reaches __builtin_unreachable(), which is undefined behaviour, when
/// it asks whether one of many non-ASCII characters is whitespace (U+00A1..U+0499 and
/// U+2CDE..U+30D7 but U+3000: Latin letters with accents, CJK punctuation); tests/fuzz found it
/// first in a table name (`[ȥp`), then after a malformed value (`[64"0...ħ`), where toml++ scans
/// ahead to report the error. Every value of a tune.toml is an ASCII name or a number, so a
/// non-ASCII character outside a comment is refused here (a string with one could only be an
/// unknown name), and the comments' are blanked: toml++ never reads a byte above 0x7F. The scan
/// knows the four kinds of TOML string (a '#' inside one starts no comment); an unterminated
/// string ends at its line's end, where toml++ reports it.
struct AsciiToml {
  std::string text;                                          // for toml++
  std::optional<std::pair<std::size_t, std::size_t>> error;  // line, column of a non-ASCII
};

AsciiToml ascii_toml(std::string_view t) {
  enum class In { code, comment, basic, literal, ml_basic, ml_literal } in = In::code;
  AsciiToml out;
  out.text.assign(t);
  std::size_t line = 1, column = 0;
  auto run_of = [&](std::size_t i, char q) {
    std::size_t r = 0;
    while (i + r < t.size() && t[i + r] == q) ++r;
    return r;
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto c = static_cast<unsigned char>(t[i]);
    if ((c & 0xC0) != 0x80) ++column;  // a character starts here (not a UTF-8 continuation)
    if (c == '\n') {
      ++line;
      column = 0;
      if (in == In::comment || in == In::basic || in == In::literal) in = In::code;
      continue;
    }
    if (c >= 0x80) {
      if (in != In::comment) {
        out.error = std::pair{line, column};
        return out;
      }
      out.text[i] = ' ';
      continue;
    }
    switch (in) {
      case In::code:
        if (c == '#') {
          in = In::comment;
        } else if (c == '"' || c == '\'') {
          const std::size_t r = run_of(i, static_cast<char>(c));
          if (r >= 3) {
            in = c == '"' ? In::ml_basic : In::ml_literal;
            i += 2;
            column += 2;
          } else if (r == 2) {  // an empty string
            ++i;
            ++column;
          } else {
            in = c == '"' ? In::basic : In::literal;
          }
        }
        break;
      case In::comment:
        break;
      case In::basic:
      case In::ml_basic:
        if (c == '\\' && i + 1 < t.size() && t[i + 1] != '\n' &&
            static_cast<unsigned char>(t[i + 1]) < 0x80) {
          ++i;  // the escaped character (a quote, a backslash, ...)
          ++column;
        } else if (c == '"') {
          const std::size_t r = run_of(i, '"');
          if (in == In::basic || r >= 3) in = In::code;
          i += r - 1;  // a closing """ may follow up to two quotes of the string
          column += r - 1;
        }
        break;
      case In::literal:
      case In::ml_literal:
        if (c == '\'') {
          const std::size_t r = run_of(i, '\'');
          if (in == In::literal || r >= 3) in = In::code;
          i += r - 1;
          column += r - 1;
        }
        break;
    }
  }
  return out;
}

std::string join(const auto& items, std::string_view sep = ", ") {
  std::ostringstream s;
  bool first = true;
  for (const auto& i : items) {
    if (!first) s << sep;
    s << i;
    first = false;
  }
  return s.str();
}

const KeySpec* find_key(std::string_view path) {
  for (const KeySpec& k : config_keys())
    if (k.path == path) return &k;
  return nullptr;
}

// Names directly under \p prefix ("" for the top level): keys and sub-tables.
std::vector<std::string> children_of(std::string_view prefix) {
  std::vector<std::string> out;
  for (const KeySpec& k : config_keys()) {
    std::string_view p = k.path;
    if (!prefix.empty()) {
      if (p.size() <= prefix.size() + 1 || p.substr(0, prefix.size()) != prefix ||
          p[prefix.size()] != '.')
        continue;
      p.remove_prefix(prefix.size() + 1);
    }
    std::string child(p.substr(0, p.find('.')));
    if (std::find(out.begin(), out.end(), child) == out.end()) out.push_back(child);
  }
  return out;
}

bool is_table_path(std::string_view path) {
  for (const KeySpec& k : config_keys())
    if (k.path.size() > path.size() && k.path.substr(0, path.size()) == path &&
        k.path[path.size()] == '.')
      return true;
  return false;
}

std::string type_phrase(toml::node_type t) {
  switch (t) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

std::string kind_phrase(KeyKind k) {
  switch (k) {
    case KeyKind::integer: return "an integer";
    case KeyKind::number: return "a number";
    case KeyKind::boolean: return "a boolean (true or false)";
    case KeyKind::string: return "a string";
    case KeyKind::string_list: return "an array of strings (or \"all\")";
    case KeyKind::integer_list: return "an array of integers (or \"all\")";
    case KeyKind::sizes:
      return "an array of integers or a table { from, to, step } / { from, to, factor }";
  }
  return "?";
}

// --- TOML -> RawConfig --------------------------------------------------------------------------

class TomlReader {
 public:
  TomlReader(const std::string& file, RawConfig& raw, Diagnostics& diag)
      : file_(file), raw_(raw), diag_(diag) {}

  void read_table(const toml::table& t, const std::string& prefix) {
    for (auto&& [k, node] : t) {
      const std::string name(k.str());
      const std::string path = prefix.empty() ? name : prefix + "." + name;
      if (const KeySpec* spec = find_key(path)) {
        read_value(node, *spec, path);
      } else if (is_table_path(path)) {
        if (const toml::table* sub = node.as_table())
          read_table(*sub, path);
        else
          diag_.add(at(node.source(), path),
                    "expected a table, got " + type_phrase(node.type()));
      } else {
        unknown_key(k, name, prefix, children_of(prefix));
      }
    }
  }

 private:
  std::string at(const toml::source_region& r, const std::string& path) const {
    return file_ + ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column) +
           ": " + path;
  }

  void unknown_key(const toml::key& k, const std::string& name, const std::string& prefix,
                   const std::vector<std::string>& valid) {
    std::string msg = "unknown key '" + name + "'";
    if (!prefix.empty()) msg += " in [" + prefix + "]";
    if (auto near = nearest(name, valid))
      msg += " (did you mean '" + *near + "'?)";
    else
      msg += " (valid keys: " + join(valid) + ")";
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    diag_.add(at(k.source(), path), msg);
  }

  void wrong_type(const toml::node& node, const std::string& path, const std::string& expected) {
    diag_.add(at(node.source(), path),
              "expected " + expected + ", got " + type_phrase(node.type()));
  }

  void set(const std::string& path, const toml::node& node, RawValue v) {
    raw_.values[path] = Located<RawValue>{std::move(v), at(node.source(), path)};
  }

  std::optional<double> number(const toml::node& node, const std::string& path) {
    double v;
    if (auto i = node.as_integer())
      v = static_cast<double>(i->get());
    else if (auto f = node.as_floating_point())
      v = f->get();
    else {
      wrong_type(node, path, "a number");
      return std::nullopt;
    }
    if (!std::isfinite(v)) {
      diag_.add(at(node.source(), path), "expected a finite number");
      return std::nullopt;
    }
    return v;
  }

  void read_value(const toml::node& node, const KeySpec& spec, const std::string& path) {
    switch (spec.kind) {
      case KeyKind::integer:
        if (auto i = node.as_integer())
          set(path, node, i->get());
        else
          wrong_type(node, path, kind_phrase(spec.kind));
        return;
      case KeyKind::number:
        if (auto v = number(node, path)) set(path, node, *v);
        return;
      case KeyKind::boolean:
        if (auto b = node.as_boolean())
          set(path, node, b->get());
        else
          wrong_type(node, path, kind_phrase(spec.kind));
        return;
      case KeyKind::string:
        if (auto s = node.as_string())
          set(path, node, s->get());
        else
          wrong_type(node, path, kind_phrase(spec.kind));
        return;
      case KeyKind::string_list:
      case KeyKind::integer_list:
        read_list(node, spec, path);
        return;
      case KeyKind::sizes:
        read_sizes(node, path);
        return;
    }
  }

  // A list key: an array, or the string "all" (every compiled value: the key's default).
  void read_list(const toml::node& node, const KeySpec& spec, const std::string& path) {
    if (auto s = node.as_string()) {
      if (s->get() == "all")
        set(path, node, std::string("all"));
      else
        diag_.add(at(node.source(), path),
                  "expected " + kind_phrase(spec.kind) + ", got the string '" + s->get() + "'");
      return;
    }
    const toml::array* arr = node.as_array();
    if (!arr) {
      wrong_type(node, path, kind_phrase(spec.kind));
      return;
    }
    const bool strings = spec.kind == KeyKind::string_list;
    std::vector<Located<std::string>> svals;
    std::vector<Located<std::int64_t>> ivals;
    bool ok = true;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& e = *arr->get(i);
      const std::string epath = path + "[" + std::to_string(i) + "]";
      if (strings) {
        if (auto s = e.as_string())
          svals.push_back({s->get(), at(e.source(), epath)});
        else
          wrong_type(e, epath, "a string"), ok = false;
      } else {
        if (auto v = e.as_integer())
          ivals.push_back({v->get(), at(e.source(), epath)});
        else
          wrong_type(e, epath, "an integer"), ok = false;
      }
    }
    if (!ok) return;
    if (strings)
      set(path, node, std::move(svals));
    else
      set(path, node, std::move(ivals));
  }

  void read_sizes(const toml::node& node, const std::string& path) {
    RawSizes sizes;
    if (const toml::array* arr = node.as_array()) {
      bool ok = true;
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const toml::node& e = *arr->get(i);
        const std::string epath = path + "[" + std::to_string(i) + "]";
        if (auto v = e.as_integer())
          sizes.list.push_back({v->get(), at(e.source(), epath)});
        else
          wrong_type(e, epath, "an integer"), ok = false;
      }
      if (ok) set(path, node, std::move(sizes));
      return;
    }
    const toml::table* t = node.as_table();
    if (!t) {
      wrong_type(node, path, kind_phrase(KeyKind::sizes));
      return;
    }
    sizes.is_range = true;
    bool ok = true;
    static const std::vector<std::string> range_keys = {"from", "to", "step", "factor"};
    for (auto&& [k, e] : *t) {
      const std::string name(k.str());
      const std::string epath = path + "." + name;
      if (name == "factor") {
        if (auto v = number(e, epath))
          sizes.factor = Located<double>{*v, at(e.source(), epath)};
        else
          ok = false;
        continue;
      }
      std::optional<Located<std::int64_t>>* slot = name == "from" ? &sizes.from
                                                   : name == "to" ? &sizes.to
                                                   : name == "step" ? &sizes.step
                                                                    : nullptr;
      if (!slot) {
        unknown_key(k, name, path, range_keys);
        ok = false;
      } else if (auto v = e.as_integer()) {
        *slot = Located<std::int64_t>{v->get(), at(e.source(), epath)};
      } else {
        wrong_type(e, epath, "an integer");
        ok = false;
      }
    }
    if (ok) set(path, node, std::move(sizes));
  }

  const std::string& file_;
  RawConfig& raw_;
  Diagnostics& diag_;
};

// --- command-line text -> RawValue --------------------------------------------------------------

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = s.find(',', start);
    out.emplace_back(trim(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// Integer as typed on the command line: decimal, optionally negative, or B^E.
std::optional<std::int64_t> parse_integer_text(std::string_view s) {
  s = trim(s);
  if (auto caret = s.find('^'); caret != std::string_view::npos) {
    auto base = parse_integer_text(s.substr(0, caret));
    auto exp = parse_integer_text(s.substr(caret + 1));
    if (!base || !exp || *exp < 0 || *exp > 62) return std::nullopt;
    std::int64_t v = 1;
    for (std::int64_t i = 0; i < *exp; ++i) {
      if (*base != 0 && std::abs(v) > std::numeric_limits<std::int64_t>::max() / std::abs(*base))
        return std::nullopt;
      v *= *base;
    }
    return v;
  }
  std::int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_number_text(std::string_view s) {
  s = trim(s);
  if (s.find('^') != std::string_view::npos) {
    auto i = parse_integer_text(s);
    if (!i) return std::nullopt;
    return static_cast<double>(*i);
  }
  if (s.empty()) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno != 0 || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool_text(std::string_view s) {
  s = trim(s);
  if (s == "on" || s == "true" || s == "yes" || s == "1") return true;
  if (s == "off" || s == "false" || s == "no" || s == "0") return false;
  return std::nullopt;
}

[[noreturn]] void bad_flag(std::string_view flag, const std::string& message) {
  throw Error("--" + std::string(flag) + ": " + message, exit_code::usage);
}

// The command line's counts grammar (common/grammar.hpp). One range alone, or a list of counts
// alone, stays as written, so that the validator reports its values as it does the file's; a
// list that mixes ranges and counts is expanded here (limits checked) into a list.
RawSizes parse_sizes_text(std::string_view flag, std::string_view text, const std::string& where) {
  const std::string option = "--" + std::string(flag);
  const std::vector<grammar::CountItem> items = grammar::parse_count_items(option, text);
  auto located = [&](std::uint64_t v) {
    return Located<std::int64_t>{
        static_cast<std::int64_t>(std::min<std::uint64_t>(v, std::numeric_limits<std::int64_t>::max())),
        where};
  };
  RawSizes sizes;
  if (items.size() == 1 && items[0].is_range) {
    const grammar::CountItem& r = items[0];
    sizes.is_range = true;
    sizes.from = located(r.value);
    sizes.to = located(r.to);
    if (r.factor) sizes.factor = Located<double>{*r.factor, where};
    if (r.step) sizes.step = located(*r.step);
    return sizes;
  }
  const bool mixed = std::any_of(items.begin(), items.end(),
                                 [](const grammar::CountItem& c) { return c.is_range; });
  if (!mixed) {
    for (const grammar::CountItem& c : items) sizes.list.push_back(located(c.value));
    return sizes;
  }
  for (std::uint64_t v : grammar::expand_counts(option, items, {1, kernels::max_elements},
                                                max_grid_sizes))
    sizes.list.push_back(located(v));
  return sizes;
}

RawValue parse_override(const OverrideSpec& spec, const KeySpec& key, const std::string& text) {
  const std::string where = "--" + std::string(spec.flag);
  switch (key.kind) {
    case KeyKind::integer:
      if (auto v = parse_integer_text(text)) return *v;
      bad_flag(spec.flag, "'" + text + "' is not an integer");
    case KeyKind::number:
      if (auto v = parse_number_text(text)) return *v;
      bad_flag(spec.flag, "'" + text + "' is not a number");
    case KeyKind::boolean:
      if (auto v = parse_bool_text(text)) return *v;
      bad_flag(spec.flag, "'" + text + "' is not on or off");
    case KeyKind::string:
      return std::string(trim(text));
    case KeyKind::string_list: {
      if (trim(text) == "all") return std::string("all");
      std::vector<Located<std::string>> out;
      for (const std::string& item : split_list(text)) {
        if (item.empty()) bad_flag(spec.flag, "empty item in '" + text + "'");
        out.push_back({item, where});
      }
      return out;
    }
    case KeyKind::integer_list: {
      if (trim(text) == "all") return std::string("all");
      std::vector<Located<std::int64_t>> out;
      for (const std::string& item : split_list(text)) {
        auto v = parse_integer_text(item);
        if (!v) bad_flag(spec.flag, "'" + item + "' is not an integer");
        out.push_back({*v, where});
      }
      return out;
    }
    case KeyKind::sizes:
      return parse_sizes_text(spec.flag, text, where);
  }
  bad_flag(spec.flag, "unsupported key kind");
}

// --- validation ---------------------------------------------------------------------------------

class Validator {
 public:
  Validator(const RawConfig& raw, const ValidationLimits& limits, Diagnostics& diag)
      : raw_(raw), limits_(limits), diag_(diag) {}

  TuneConfig run() {
    TuneConfig c = default_config();
    c.source = raw_.file;
    space(c.space);
    measure(c.measure);
    strategy(c.strategy);
    bisect(c.bisect);
    return c;
  }

 private:
  const Located<RawValue>* get(std::string_view path) const {
    auto it = raw_.values.find(std::string(path));
    return it == raw_.values.end() ? nullptr : &it->second;
  }

  template <class T>
  std::optional<Located<T>> scalar(std::string_view path) const {
    const Located<RawValue>* v = get(path);
    if (!v) return std::nullopt;
    if (const T* x = std::get_if<T>(&v->value)) return Located<T>{*x, v->where};
    throw std::logic_error("tune.toml key " + std::string(path) + " holds the wrong type");
  }

  // A list key: its items, or nullopt for "every compiled value" (absent or "all").
  template <class T>
  std::optional<std::vector<Located<T>>> list(std::string_view path, std::string& where) const {
    const Located<RawValue>* v = get(path);
    where = v ? v->where : std::string(path);
    if (!v || std::holds_alternative<std::string>(v->value)) return std::nullopt;
    return std::get<std::vector<Located<T>>>(v->value);
  }

  template <class E, class Parse, class Name>
  std::vector<E> names(std::string_view path, std::span<const E> all, Parse parse, Name name,
                       std::string_view what) {
    std::string where;
    auto items = list<std::string>(path, where);
    if (!items) return {all.begin(), all.end()};
    if (items->empty()) diag_.add(where, "is empty: nothing to tune");
    std::vector<std::string> choices;
    for (E e : all) choices.push_back(name(e));
    std::vector<E> out;
    for (const auto& item : *items) {
      std::optional<E> e = parse(item.value);
      if (e && std::find(all.begin(), all.end(), *e) == all.end()) e.reset();
      if (!e) {
        std::string msg = "unknown " + std::string(what) + " '" + item.value + "'";
        if (auto near = nearest(item.value, choices)) msg += " (did you mean '" + *near + "'?)";
        msg += "; choices: " + join(choices);
        diag_.add(item.where, msg);
        continue;
      }
      if (std::find(out.begin(), out.end(), *e) == out.end()) out.push_back(*e);
    }
    return out;
  }

  static std::vector<int> compiled_unrolls(Family f) {
    for (const auto& fam : kernels::space::families)
      if (fam.family == f) {
        std::vector<int> out;
        for (int u : fam.unrolls)
          if (u) out.push_back(u);
        return out;
      }
    return {};
  }
  static bool has_unroll_axis(Family f) { return compiled_unrolls(f) != std::vector<int>{1}; }
  static bool has_smem_axis(Family f) { return f == Family::smem; }

  void space(SpaceConfig& s) {
    const std::size_t errors_before = diag_.size();
    s.blocks.clear();
    s.unrolls.clear();
    s.sizes.clear();
    std::string families_where, blocks_where, unrolls_where;
    auto fam_items = list<std::string>("space.families", families_where);
    s.families = names<Family>(
        "space.families", kernels::all_families, [](const std::string& x) { return kernels::parse_family(x); },
        [](Family f) { return std::string(kernels::family_name(f)); }, "family");
    static constexpr SmemMode modes[] = {SmemMode::static_, SmemMode::dynamic};
    s.smem = names<SmemMode>(
        "space.smem", modes, [](const std::string& x) { return kernels::parse_smem_mode(x); },
        [](SmemMode m) { return std::string(kernels::smem_mode_name(m)); }, "shared-memory mode");
    s.finishes = names<Finish>(
        "space.finishes", kernels::all_finishes,
        [](const std::string& x) { return kernels::parse_finish(x); },
        [](Finish f) { return std::string(kernels::finish_name(f)); }, "finishing strategy");
    s.dtypes = names<DType>(
        "space.dtypes", all_dtypes, [](const std::string& x) { return parse_dtype(x); },
        [](DType t) { return std::string(dtype_name(t)); }, "element type");
    s.ops = names<Op>(
        "space.ops", all_ops, [](const std::string& x) { return parse_op(x); },
        [](Op o) { return std::string(op_name(o)); }, "operator");

    // Blocks: CUDA's rules first, then the registry's.
    std::vector<int> compiled_blocks(std::begin(kernels::space::blocks), std::end(kernels::space::blocks));
    if (auto items = list<std::int64_t>("space.blocks", blocks_where)) {
      if (items->empty()) diag_.add(blocks_where, "is empty: nothing to tune");
      for (const auto& item : *items) {
        const std::int64_t b = item.value;
        const std::string bs = std::to_string(b);
        if (b <= 0)
          diag_.add(item.where, "block size " + bs + " must be positive");
        else if (b % 32 != 0)
          diag_.add(item.where, "block size " + bs + " is not a multiple of 32 (the warp size)");
        else if (b > 1024)
          diag_.add(item.where, "block size " + bs + " is above 1024, the most threads a CUDA block can have");
        else if (limits_.max_threads_per_block && b > *limits_.max_threads_per_block)
          diag_.add(item.where, "block size " + bs + " is above this device's limit of " +
                                    std::to_string(*limits_.max_threads_per_block) + " threads");
        else if (std::find(compiled_blocks.begin(), compiled_blocks.end(), b) == compiled_blocks.end())
          diag_.add(item.where, "block size " + bs + " is not in the registry (compiled block sizes: " +
                                    join(compiled_blocks) + ")");
        else if (std::find(s.blocks.begin(), s.blocks.end(), b) == s.blocks.end())
          s.blocks.push_back(static_cast<int>(b));
      }
    } else {
      for (int b : compiled_blocks)
        if (!limits_.max_threads_per_block || b <= *limits_.max_threads_per_block) s.blocks.push_back(b);
    }

    // Unrolls: compiled by some family, and by a selected family that has an unroll factor.
    std::set<int> all_unrolls;
    for (const auto& fam : kernels::space::families)
      for (int u : fam.unrolls)
        if (u) all_unrolls.insert(u);
    std::vector<Family> with_unroll;
    for (Family f : s.families)
      if (has_unroll_axis(f)) with_unroll.push_back(f);
    if (auto items = list<std::int64_t>("space.unrolls", unrolls_where)) {
      if (items->empty()) diag_.add(unrolls_where, "is empty: nothing to tune");
      for (const auto& item : *items) {
        const std::int64_t u = item.value;
        const std::string us = std::to_string(u);
        if (u < 1) {
          diag_.add(item.where, "unroll factor " + us + " must be at least 1");
          continue;
        }
        if (!all_unrolls.count(static_cast<int>(std::min<std::int64_t>(u, 1 << 20)))) {
          diag_.add(item.where, "unroll " + us + " is not in the registry for any family (compiled unroll factors: " +
                                    join(all_unrolls) + ")");
          continue;
        }
        bool somewhere = with_unroll.empty();
        std::vector<std::string> per_family;
        for (Family f : with_unroll) {
          auto us_f = compiled_unrolls(f);
          somewhere |= std::find(us_f.begin(), us_f.end(), u) != us_f.end();
          per_family.push_back(std::string(kernels::family_name(f)) + ": " + join(us_f));
        }
        if (!somewhere) {
          diag_.add(item.where, "unroll " + us +
                                    " is not in the registry for the selected families with an "
                                    "unroll factor (" + join(per_family, "; ") + ")");
          continue;
        }
        if (std::find(s.unrolls.begin(), s.unrolls.end(), u) == s.unrolls.end())
          s.unrolls.push_back(static_cast<int>(u));
      }
    } else {
      s.unrolls.assign(all_unrolls.begin(), all_unrolls.end());
    }

    // Whether a compiled configuration lies on the selected blocks, unrolls, modes and finishes.
    auto axes_selected = [&](const kernels::KernelParams& p) {
      return contains(s.blocks, p.block) &&
             (!has_unroll_axis(p.family) || contains(s.unrolls, p.unroll)) &&
             (!has_smem_axis(p.family) || contains(s.smem, p.smem)) &&
             contains(s.finishes, p.finish);
    };

    // A selected family whose axes leave no compiled entry: reported at the family.
    if (diag_.size() == errors_before) {
      for (std::size_t i = 0; i < s.families.size(); ++i) {
        const Family f = s.families[i];
        std::size_t count = 0;
        kernels::space::for_each_config(DType::i32, Op::sum, [&](const kernels::KernelParams& p) {
          count += p.family == f && axes_selected(p);
        });
        if (count) continue;
        std::string where = families_where;
        if (fam_items)
          for (const auto& item : *fam_items)
            if (kernels::parse_family(item.value) == f) {
              where = item.where;
              break;
            }
        std::string why;
        if (f == Family::single_tile && !contains(s.finishes, kernels::Finish::single_pass))
          why = "its one block has nothing to finish: it compiles finish single_pass only";
        else if (has_unroll_axis(f))
          why = "it compiles unroll " + join(compiled_unrolls(f)) + "; space.unrolls selects " +
                join(s.unrolls);
        diag_.add(where, "family '" + std::string(kernels::family_name(f)) +
                             "' has no compiled entry with the selected axes" +
                             (why.empty() ? std::string() : " (" + why + ")"));
      }
    }
    // A selected (dtype, op) left with no entry (only `packed`, which exists for i32/u32 sum).
    if (diag_.size() == errors_before) {
      for (DType t : s.dtypes)
        for (Op o : s.ops) {
          std::size_t count = 0;
          kernels::space::for_each_config(t, o, [&](const kernels::KernelParams& p) {
            count += contains(s.families, p.family) && axes_selected(p);
          });
          if (count == 0)
            diag_.add(get("space.finishes") ? get("space.finishes")->where : "space.finishes",
                      std::string("selects no compiled entry for ") + dtype_name(t) + " " +
                          op_name(o) + " (finish 'packed' exists for i32 and u32 sum only)");
        }
    }
    sizes(s.sizes);
  }

  template <class V, class T>
  static bool contains(const V& v, const T& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }

  void sizes(std::vector<std::uint64_t>& out) {
    const Located<RawValue>* v = get("space.sizes");
    if (!v) {
      out = expand_range(default_size_from, default_size_to, std::nullopt, 2.0);
      return;
    }
    const RawSizes& r = std::get<RawSizes>(v->value);
    const auto max_n = static_cast<std::int64_t>(kernels::max_elements);
    auto check_n = [&](const Located<std::int64_t>& x, const char* what) {
      if (x.value < 1) {
        diag_.add(x.where, std::string(what) + std::to_string(x.value) + " is below 1");
        return false;
      }
      if (x.value > max_n) {
        diag_.add(x.where, std::string(what) + std::to_string(x.value) +
                               " is above 2^40 = 1099511627776, the largest n a kernel accepts");
        return false;
      }
      return true;
    };
    if (!r.is_range) {
      if (r.list.empty()) diag_.add(v->where, "is empty: nothing to tune");
      for (const auto& x : r.list)
        if (check_n(x, "size ")) out.push_back(static_cast<std::uint64_t>(x.value));
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      if (out.size() > max_grid_sizes)
        diag_.add(v->where, "has " + std::to_string(out.size()) + " sizes; at most " +
                                std::to_string(max_grid_sizes) + " are allowed");
      return;
    }
    bool ok = true;
    if (!r.from) diag_.add(v->where, "a range needs 'from'"), ok = false;
    if (!r.to) diag_.add(v->where, "a range needs 'to'"), ok = false;
    if (r.step && r.factor)
      diag_.add(r.factor->where, "give either 'step' (additive) or 'factor' (geometric), not both"), ok = false;
    if (!r.step && !r.factor)
      diag_.add(v->where, "a range needs 'step' (additive) or 'factor' (geometric)"), ok = false;
    if (r.from && !check_n(*r.from, "from = ")) ok = false;
    if (r.to && !check_n(*r.to, "to = ")) ok = false;
    if (r.from && r.to && r.from->value > r.to->value) {
      diag_.add(v->where, "from (" + std::to_string(r.from->value) + ") is greater than to (" +
                              std::to_string(r.to->value) + ")");
      ok = false;
    }
    if (r.step && r.step->value < 1) {
      diag_.add(r.step->where, "step " + std::to_string(r.step->value) +
                                   " does not advance the range (it must be at least 1)");
      ok = false;
    }
    if (r.factor && !(r.factor->value > 1)) {
      std::ostringstream f;
      f << r.factor->value;
      diag_.add(r.factor->where, "factor " + f.str() +
                                     " does not advance the range (it must be greater than 1)");
      ok = false;
    }
    if (!ok) return;
    try {
      out = expand_range(static_cast<std::uint64_t>(r.from->value),
                         static_cast<std::uint64_t>(r.to->value),
                         r.step ? std::optional<std::uint64_t>(r.step->value) : std::nullopt,
                         r.factor ? std::optional<double>(r.factor->value) : std::nullopt,
                         v->where);
    } catch (const Error& e) {
      diag_.add("", e.what());
    }
  }

  // Integer setting within [lo, hi], into an int.
  void integer(std::string_view path, int& out, std::int64_t lo, std::int64_t hi,
               const std::string& rule) {
    auto v = scalar<std::int64_t>(path);
    if (!v) return;
    if (v->value < lo || v->value > hi) {
      diag_.add(v->where, std::to_string(v->value) + " is out of range: " + rule);
      return;
    }
    out = static_cast<int>(v->value);
  }

  void number(std::string_view path, double& out, bool (*ok)(double), const std::string& rule) {
    auto v = scalar<double>(path);
    if (!v) return;
    if (!ok(v->value)) {
      std::ostringstream s;
      s << v->value;
      diag_.add(v->where, s.str() + " is out of range: " + rule);
      return;
    }
    out = v->value;
  }

  void measure(MeasurePolicy& m) {
    integer("measure.warmup", m.warmup, 0, 10000, "warm-up launches must be 0 to 10000");
    integer("measure.min_repeats", m.min_repeats, 1, 100000, "min_repeats must be 1 to 100000");
    integer("measure.max_repeats", m.max_repeats, 1, 100000, "max_repeats must be 1 to 100000");
    number("measure.budget_ms", m.budget_ms, [](double x) { return x > 0 && x <= 3.6e6; },
           "budget_ms must be above 0 (and at most an hour)");
    number("measure.target_spread", m.target_spread, [](double x) { return x >= 0 && x <= 10; },
           "target_spread must be 0 to 10 (0: never stop early)");
    number("measure.timeout_s", m.timeout_s, [](double x) { return x > 0 && x <= 86400; },
           "timeout_s must be above 0 (and at most a day)");
    if (auto l2 = scalar<std::string>("measure.l2")) {
      if (auto mode = db::parse_l2_mode(l2->value))
        m.l2 = *mode;
      else
        diag_.add(l2->where, "unknown L2 mode '" + l2->value + "'; choices: cold, warm");
    }
    if (m.max_repeats < m.min_repeats) {
      auto where = get("measure.max_repeats") ? get("measure.max_repeats")->where
                                              : get("measure.min_repeats")->where;
      diag_.add(where, "max_repeats (" + std::to_string(m.max_repeats) +
                           ") is less than min_repeats (" + std::to_string(m.min_repeats) + ")");
    }
    if (m.timeout_s * 1000 <= m.budget_ms) {
      auto* v = get("measure.timeout_s") ? get("measure.timeout_s") : get("measure.budget_ms");
      std::ostringstream s;
      s << "timeout_s (" << m.timeout_s << " s) must exceed budget_ms (" << m.budget_ms
        << " ms): every candidate would time out";
      diag_.add(v ? v->where : "measure", s.str());
    }
  }

  void strategy(StrategyConfig& s) {
    std::string name_where = "strategy.name";
    if (auto name = scalar<std::string>("strategy.name")) {
      name_where = name->where;
      if (!find_strategy(name->value)) {
        std::vector<std::string> choices;
        for (const StrategyInfo& i : strategies()) choices.emplace_back(i.name);
        std::string msg = "unknown strategy '" + name->value + "'";
        if (auto near = nearest(name->value, choices)) msg += " (did you mean '" + *near + "'?)";
        diag_.add(name->where, msg + "; choices: " + join(choices));
      } else {
        s.name = name->value;
      }
    }
    if (auto seed = scalar<std::int64_t>("strategy.seed")) {
      if (seed->value < 0)
        diag_.add(seed->where, "seed " + std::to_string(seed->value) + " must be 0 or more");
      else
        s.seed = static_cast<std::uint64_t>(seed->value);
    }
    if (auto count = scalar<std::int64_t>("strategy.random.count")) {
      if (count->value < 1)
        diag_.add(count->where, "count " + std::to_string(count->value) + " must be at least 1");
      else
        s.random.count = count->value;
    }
    double seconds = 1;
    number("strategy.random.seconds", seconds, [](double x) { return x > 0; },
           "seconds must be above 0");
    if (get("strategy.random.seconds")) s.random.seconds = seconds;
    if (s.name == "random" && !s.random.count && !s.random.seconds &&
        !get("strategy.random.count") && !get("strategy.random.seconds"))
      diag_.add(name_where,
                "strategy 'random' needs a budget: strategy.random.count and/or "
                "strategy.random.seconds");
    number("strategy.halving.keep", s.halving.keep, [](double x) { return x > 0 && x < 1; },
           "keep is the fraction kept after a round: above 0 and below 1");
    integer("strategy.halving.first_repeats", s.halving.first_repeats, 1, 100000,
            "first_repeats must be 1 to 100000");
    number("strategy.halving.growth", s.halving.growth, [](double x) { return x >= 1 && x <= 1000; },
           "growth must be 1 to 1000");
    integer("strategy.halving.final_size", s.halving.final_size, 1, 1000000,
            "final_size must be at least 1");
  }

  void bisect(BisectConfig& b) {
    if (auto e = scalar<bool>("bisect.enabled")) b.enabled = e->value;
    integer("bisect.max_depth", b.max_depth, 0, 60, "max_depth must be 0 to 60");
    number("bisect.precision", b.precision, [](double x) { return x > 0 && x <= 100; },
           "precision must be above 0 (a relative width, e.g. 0.05)");
  }

  const RawConfig& raw_;
  const ValidationLimits& limits_;
  Diagnostics& diag_;
};

std::string format_double(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

}  // namespace

// --- public ------------------------------------------------------------------------------------

std::span<const KeySpec> config_keys() {
  static constexpr KeySpec keys[] = {
      {"space.families", KeyKind::string_list, "kernel families to search"},
      {"space.blocks", KeyKind::integer_list, "threads per block"},
      {"space.unrolls", KeyKind::integer_list, "unroll factors (families that have one)"},
      {"space.smem", KeyKind::string_list, "shared-memory modes of the smem family"},
      {"space.finishes", KeyKind::string_list, "finishing strategies"},
      {"space.dtypes", KeyKind::string_list, "element types"},
      {"space.ops", KeyKind::string_list, "operators"},
      {"space.sizes", KeyKind::sizes, "element counts: a list or a range"},
      {"measure.warmup", KeyKind::integer, "untimed launches before timing"},
      {"measure.min_repeats", KeyKind::integer, "timed launches, at least"},
      {"measure.max_repeats", KeyKind::integer, "timed launches, at most"},
      {"measure.budget_ms", KeyKind::number, "wall time per candidate before it stops repeating"},
      {"measure.target_spread", KeyKind::number, "stop once (p90 - p10) / median is at most this"},
      {"measure.l2", KeyKind::string, "cold (L2 flushed before every timed launch) or warm"},
      {"measure.timeout_s", KeyKind::number, "a candidate silent this long is killed"},
      {"strategy.name", KeyKind::string, "exhaustive, random or halving"},
      {"strategy.seed", KeyKind::integer, "seed of the random strategy"},
      {"strategy.random.count", KeyKind::integer, "candidates sampled per size, at most"},
      {"strategy.random.seconds", KeyKind::number, "wall time per size, at most"},
      {"strategy.halving.keep", KeyKind::number, "fraction kept after each round"},
      {"strategy.halving.first_repeats", KeyKind::integer, "repeats in the first round"},
      {"strategy.halving.growth", KeyKind::number, "repeats multiply by this each round"},
      {"strategy.halving.final_size", KeyKind::integer,
       "survivors measured with the full policy"},
      {"bisect.enabled", KeyKind::boolean, "locate crossovers between grid sizes"},
      {"bisect.max_depth", KeyKind::integer, "midpoints per crossover, at most"},
      {"bisect.precision", KeyKind::number, "stop once hi / lo <= 1 + precision"},
  };
  return keys;
}

std::span<const OverrideSpec> override_specs() {
  using O = ConfigOverrides;
  static const OverrideSpec specs[] = {
      {&O::families, "families", "space.families"},
      {&O::blocks, "blocks", "space.blocks"},
      {&O::unrolls, "unrolls", "space.unrolls"},
      {&O::smem, "smem", "space.smem"},
      {&O::finishes, "finishes", "space.finishes"},
      {&O::dtypes, "dtypes", "space.dtypes"},
      {&O::ops, "ops", "space.ops"},
      {&O::sizes, "sizes", "space.sizes"},
      {&O::strategy, "strategy", "strategy.name"},
      {&O::seed, "seed", "strategy.seed"},
      {&O::random_count, "random-count", "strategy.random.count"},
      {&O::random_seconds, "random-seconds", "strategy.random.seconds"},
      {&O::halving_keep, "halving-keep", "strategy.halving.keep"},
      {&O::halving_first_repeats, "halving-first-repeats", "strategy.halving.first_repeats"},
      {&O::halving_growth, "halving-growth", "strategy.halving.growth"},
      {&O::halving_final_size, "halving-final-size", "strategy.halving.final_size"},
      {&O::warmup, "warmup", "measure.warmup"},
      {&O::repeats, "repeats", "measure.min_repeats"},
      {&O::repeats, "repeats", "measure.max_repeats"},
      {&O::min_repeats, "min-repeats", "measure.min_repeats"},
      {&O::max_repeats, "max-repeats", "measure.max_repeats"},
      {&O::budget_ms, "budget-ms", "measure.budget_ms"},
      {&O::target_spread, "target-spread", "measure.target_spread"},
      {&O::l2, "l2", "measure.l2"},
      {&O::timeout_s, "timeout", "measure.timeout_s"},
      {&O::bisect, "bisect", "bisect.enabled"},
      {&O::bisect_depth, "bisect-depth", "bisect.max_depth"},
      {&O::bisect_precision, "bisect-precision", "bisect.precision"},
  };
  return specs;
}

TuneConfig default_config() {
  TuneConfig c;
  SpaceConfig& s = c.space;
  s.families.assign(std::begin(kernels::all_families), std::end(kernels::all_families));
  s.blocks.assign(std::begin(kernels::space::blocks), std::end(kernels::space::blocks));
  std::set<int> unrolls;
  for (const auto& fam : kernels::space::families)
    for (int u : fam.unrolls)
      if (u) unrolls.insert(u);
  s.unrolls.assign(unrolls.begin(), unrolls.end());
  s.smem = {SmemMode::static_, SmemMode::dynamic};
  s.finishes.assign(std::begin(kernels::all_finishes), std::end(kernels::all_finishes));
  s.dtypes.assign(std::begin(all_dtypes), std::end(all_dtypes));
  s.ops.assign(std::begin(all_ops), std::end(all_ops));
  s.sizes = expand_range(default_size_from, default_size_to, std::nullopt, 2.0);
  return c;
}

RawConfig parse_config_text(std::string_view text, const std::string& file) {
  RawConfig raw;
  raw.file = file;
  Diagnostics diag;
  toml::table root;
  const AsciiToml ascii = ascii_toml(text);
  if (ascii.error) {
    diag.add(file + ":" + std::to_string(ascii.error->first) + ":" +
                 std::to_string(ascii.error->second),
             "syntax error: a non-ASCII character outside a comment (every key and value of a "
             "tune.toml is an ASCII name or number)");
    diag.throw_if_any();
  }
  try {
    root = toml::parse(ascii.text, file);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    diag.add(file + ":" + std::to_string(b.line) + ":" + std::to_string(b.column),
             "syntax error: " + std::string(e.description()));
    diag.throw_if_any();
  }
  TomlReader(file, raw, diag).read_table(root, "");
  diag.throw_if_any();
  return raw;
}

RawConfig parse_config_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(path.string() + ": no such file (give the configuration with --config FILE)",
                exit_code::usage);
  if (std::filesystem::is_directory(path, ec))
    throw Error(path.string() + ": is a directory, not a tune.toml file", exit_code::usage);
  return parse_config_text(
      read_file_limited(path, max_config_bytes, "a tune.toml", exit_code::usage), path.string());
}

void apply_overrides(RawConfig& raw, const ConfigOverrides& o) {
  for (const OverrideSpec& spec : override_specs()) {
    const std::optional<std::string>& text = o.*(spec.member);
    if (!text) continue;
    const KeySpec* key = find_key(spec.key);
    if (!key) throw std::logic_error("override of unknown key " + std::string(spec.key));
    raw.values[std::string(spec.key)] =
        Located<RawValue>{parse_override(spec, *key, *text), "--" + std::string(spec.flag)};
  }
  // --repeats and --min-repeats/--max-repeats together: the specific flag wins, as listed last.
}

TuneConfig validate_config(const RawConfig& raw, const ValidationLimits& limits) {
  Diagnostics diag;
  TuneConfig c = Validator(raw, limits, diag).run();
  diag.throw_if_any();
  return c;
}

TuneConfig load_config(const std::filesystem::path& path, const ConfigOverrides& overrides,
                       const ValidationLimits& limits) {
  RawConfig raw = parse_config_file(path);
  apply_overrides(raw, overrides);
  return validate_config(raw, limits);
}

std::vector<std::uint64_t> expand_range(std::uint64_t from, std::uint64_t to,
                                        std::optional<std::uint64_t> step,
                                        std::optional<double> factor, const std::string& where) {
  return grammar::expand_range(from, to, step, factor, where, max_grid_sizes);
}

std::string canonical_text(const TuneConfig& c) {
  std::ostringstream s;
  auto list = [&](const char* key, const auto& items, auto name) {
    s << key << "=";
    bool first = true;
    for (const auto& i : items) {
      s << (first ? "" : ",") << name(i);
      first = false;
    }
    s << "\n";
  };
  auto ident = [](auto x) { return x; };
  list("space.families", c.space.families, [](Family f) { return kernels::family_name(f); });
  list("space.blocks", c.space.blocks, ident);
  list("space.unrolls", c.space.unrolls, ident);
  list("space.smem", c.space.smem, [](SmemMode m) { return kernels::smem_mode_name(m); });
  list("space.finishes", c.space.finishes, [](Finish f) { return kernels::finish_name(f); });
  list("space.dtypes", c.space.dtypes, [](DType t) { return dtype_name(t); });
  list("space.ops", c.space.ops, [](Op o) { return op_name(o); });
  list("space.sizes", c.space.sizes, ident);
  const MeasurePolicy& m = c.measure;
  s << "measure.warmup=" << m.warmup << "\nmeasure.min_repeats=" << m.min_repeats
    << "\nmeasure.max_repeats=" << m.max_repeats << "\nmeasure.budget_ms=" << format_double(m.budget_ms)
    << "\nmeasure.target_spread=" << format_double(m.target_spread)
    << "\nmeasure.l2=" << db::l2_mode_name(m.l2) << "\nmeasure.timeout_s=" << format_double(m.timeout_s)
    << "\nstrategy.name=" << c.strategy.name << "\nstrategy.seed=" << c.strategy.seed
    << "\nstrategy.random.count=" << (c.strategy.random.count ? std::to_string(*c.strategy.random.count) : "none")
    << "\nstrategy.random.seconds="
    << (c.strategy.random.seconds ? format_double(*c.strategy.random.seconds) : "none")
    << "\nstrategy.halving.keep=" << format_double(c.strategy.halving.keep)
    << "\nstrategy.halving.first_repeats=" << c.strategy.halving.first_repeats
    << "\nstrategy.halving.growth=" << format_double(c.strategy.halving.growth)
    << "\nstrategy.halving.final_size=" << c.strategy.halving.final_size
    << "\nbisect.enabled=" << (c.bisect.enabled ? "true" : "false")
    << "\nbisect.max_depth=" << c.bisect.max_depth
    << "\nbisect.precision=" << format_double(c.bisect.precision) << "\n";
  return s.str();
}

std::string config_hash(const TuneConfig& c) { return hex64(fnv1a64(canonical_text(c))); }

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and transpositions of two
  // neighbouring characters ("stpe" -> "step") each cost 1.
  const std::size_t w = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * w);
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      std::size_t v = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                                d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      d[i * w + j] = v;
    }
  return d[a.size() * w + b.size()];
}

std::optional<std::string> nearest(std::string_view word, std::span<const std::string> candidates) {
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_d) {
      best = c;
      best_d = d;
    }
  }
  // A plausible typo: at most a third of the word (1 to 3 edits), or one name extending the
  // other ("measurement" for "measure", "unroll" for "unrolls").
  const std::size_t limit = std::clamp<std::size_t>((word.size() + 1) / 3, 1, 3);
  if (best && best_d <= limit) return best;
  for (const std::string& c : candidates) {
    const std::string_view shorter = c.size() < word.size() ? std::string_view(c) : word;
    const std::string_view longer = c.size() < word.size() ? word : std::string_view(c);
    if (shorter.size() >= 4 && longer.substr(0, shorter.size()) == shorter) return c;
  }
  return std::nullopt;
}

}  // namespace tunedreduce::tuner
