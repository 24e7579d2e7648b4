#include "tuner/config/read_toml.hpp"

#include <toml++/toml.h>

#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "tuner/config/diagnostics.hpp"
#include "tuner/config/schema.hpp"
#include "tuner/config/suggest.hpp"

namespace tunedreduce::tuner {

namespace {

using detail::Diagnostics;
using detail::join;

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

std::string type_phrase(toml::node_type t) {
  static constexpr auto phrases = enum_names<toml::node_type>({
      {toml::node_type::table, "a table"},
      {toml::node_type::array, "an array"},
      {toml::node_type::string, "a string"},
      {toml::node_type::integer, "an integer"},
      {toml::node_type::floating_point, "a floating-point number"},
      {toml::node_type::boolean, "a boolean"},
      {toml::node_type::date, "a date"},
      {toml::node_type::time, "a time"},
      {toml::node_type::date_time, "a date-time"},
  });
  return phrases.to_name(t, "nothing");  // toml::node_type::none
}

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
        if (const toml::table* sub = node.as_table()) read_table(*sub, path);
        else
          diag_.add(at(node.source(), path), "expected a table, got " + type_phrase(node.type()));
      } else {
        unknown_key(k, name, prefix, children_of(prefix));
      }
    }
  }

 private:
  std::string at(const toml::source_region& r, const std::string& path) const {
    return fmt::format("{}:{}:{}: {}", file_, r.begin.line, r.begin.column, path);
  }

  void unknown_key(const toml::key& k, const std::string& name, const std::string& prefix,
                   const std::vector<std::string>& valid) {
    std::string msg = "unknown key '" + name + "'";
    if (!prefix.empty()) msg += " in [" + prefix + "]";
    if (auto near = nearest(name, valid)) msg += " (did you mean '" + *near + "'?)";
    else msg += " (valid keys: " + join(valid) + ")";
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
    if (auto i = node.as_integer()) v = static_cast<double>(i->get());
    else if (auto f = node.as_floating_point()) v = f->get();
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
        if (auto i = node.as_integer()) set(path, node, i->get());
        else wrong_type(node, path, kind_phrase(spec.kind));
        return;
      case KeyKind::number:
        if (auto v = number(node, path)) set(path, node, *v);
        return;
      case KeyKind::boolean:
        if (auto b = node.as_boolean()) set(path, node, b->get());
        else wrong_type(node, path, kind_phrase(spec.kind));
        return;
      case KeyKind::string:
        if (auto s = node.as_string()) set(path, node, s->get());
        else wrong_type(node, path, kind_phrase(spec.kind));
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
      if (s->get() == "all") set(path, node, std::string("all"));
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
      const std::string epath = fmt::format("{}[{}]", path, i);
      if (strings) {
        if (auto s = e.as_string()) svals.push_back({s->get(), at(e.source(), epath)});
        else wrong_type(e, epath, "a string"), ok = false;
      } else {
        if (auto v = e.as_integer()) ivals.push_back({v->get(), at(e.source(), epath)});
        else wrong_type(e, epath, "an integer"), ok = false;
      }
    }
    if (!ok) return;
    if (strings) set(path, node, std::move(svals));
    else set(path, node, std::move(ivals));
  }

  void read_sizes(const toml::node& node, const std::string& path) {
    RawSizes sizes;
    if (const toml::array* arr = node.as_array()) {
      bool ok = true;
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const toml::node& e = *arr->get(i);
        const std::string epath = fmt::format("{}[{}]", path, i);
        if (auto v = e.as_integer()) sizes.list.push_back({v->get(), at(e.source(), epath)});
        else wrong_type(e, epath, "an integer"), ok = false;
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
        if (auto v = number(e, epath)) sizes.factor = Located<double>{*v, at(e.source(), epath)};
        else ok = false;
        continue;
      }
      std::optional<Located<std::int64_t>>* slot = name == "from"   ? &sizes.from
                                                   : name == "to"   ? &sizes.to
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

}  // namespace

RawConfig parse_config_text(std::string_view text, const std::string& file) {
  RawConfig raw;
  raw.file = file;
  Diagnostics diag;
  toml::table root;
  const AsciiToml ascii = ascii_toml(text);
  if (ascii.error) {
    diag.add(fmt::format("{}:{}:{}", file, ascii.error->first, ascii.error->second),
             "syntax error: a non-ASCII character outside a comment (every key and value of a "
             "tune.toml is an ASCII name or number)");
    diag.throw_if_any();
  }
  try {
    root = toml::parse(ascii.text, file);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    diag.add(fmt::format("{}:{}:{}", file, b.line, b.column),
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
  return parse_config_text(read_file_limited(path, max_config_bytes, "a tune.toml",
                                             exit_code::usage),
                           path.string());
}

}  // namespace tunedreduce::tuner
