#include "json.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

namespace tunedreduce {

namespace {
[[noreturn]] void type_error(const char* expected) {
  throw std::runtime_error(std::string("expected a JSON ") + expected);
}
}  // namespace

bool Json::as_bool() const {
  if (auto p = std::get_if<bool>(&v_)) return *p;
  type_error("boolean");
}
std::int64_t Json::as_int() const {
  if (auto p = std::get_if<std::int64_t>(&v_)) return *p;
  type_error("integer");
}
double Json::as_double() const {
  if (auto p = std::get_if<double>(&v_)) return *p;
  if (auto p = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*p);
  type_error("number");
}
const std::string& Json::as_string() const {
  if (auto p = std::get_if<std::string>(&v_)) return *p;
  type_error("string");
}
const Json::Array& Json::as_array() const {
  if (auto p = std::get_if<Array>(&v_)) return *p;
  type_error("array");
}
Json::Array& Json::as_array() {
  if (auto p = std::get_if<Array>(&v_)) return *p;
  type_error("array");
}
const Json::Object& Json::as_object() const {
  if (auto p = std::get_if<Object>(&v_)) return *p;
  type_error("object");
}

const Json* Json::find(std::string_view key) const {
  for (const auto& [k, v] : as_object())
    if (k == key) return &v;
  return nullptr;
}

Json& Json::set(std::string key, Json value) {
  auto* obj = std::get_if<Object>(&v_);
  if (!obj) type_error("object");
  for (auto& [k, v] : *obj)
    if (k == key) return v = std::move(value);
  obj->emplace_back(std::move(key), std::move(value));
  return obj->back().second;
}

void Json::push_back(Json value) { as_array().push_back(std::move(value)); }

void json_escape(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xf];
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through unchanged
        }
    }
  }
  out += '"';
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

void Json::dump_to(std::string& out, int indent, int depth) const {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<std::size_t>(indent * d), ' ');
  };
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          out += "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          out += std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(v)) {
            out += "null";
            return;
          }
          char buf[64];
          auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
          std::string_view num(buf, static_cast<std::size_t>(end - buf));
          out += num;
          // Keep the value a double on the way back ("2" would read as an integer).
          if (num.find_first_of(".eEn") == std::string_view::npos) out += ".0";
        } else if constexpr (std::is_same_v<T, std::string>) {
          json_escape(out, v);
        } else if constexpr (std::is_same_v<T, Array>) {
          out += '[';
          for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) out += ',';
            newline(depth + 1);
            v[i].dump_to(out, indent, depth + 1);
          }
          if (!v.empty()) newline(depth);
          out += ']';
        } else {
          out += '{';
          for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) out += ',';
            newline(depth + 1);
            json_escape(out, v[i].first);
            out += indent < 0 ? ":" : ": ";
            v[i].second.dump_to(out, indent, depth + 1);
          }
          if (!v.empty()) newline(depth);
          out += '}';
        }
      },
      v_);
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Json document() {
    Json v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected characters after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw std::runtime_error(fmt::format("{}:{}: {}", line, col, what));
  }

  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool consume(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }

  Json value(int depth) {
    if (depth > 256) fail("nesting deeper than 256 levels");
    skip_ws();
    if (pos_ >= s_.size()) fail("unexpected end of input");
    char c = s_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Json(string());
    if (consume("null")) return Json();
    if (consume("true")) return Json(true);
    if (consume("false")) return Json(false);
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail(std::string("unexpected character '") + c + "'");
  }

  Json object(int depth) {
    ++pos_;
    Json::Object members;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return Json(std::move(members));
    }
    // The names seen so far, hashed: a duplicate is found in constant time, so an object of m
    // members costs O(m), not O(m^2) (Json::set looks members up one by one).
    std::unordered_set<std::string> names;
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a member name");
      std::string key = string();
      if (!names.insert(key).second) fail("duplicate member \"" + key + "\"");
      skip_ws();
      if (!consume(":")) fail("expected ':'");
      Json v = value(depth + 1);
      members.emplace_back(std::move(key), std::move(v));
      skip_ws();
      if (consume(",")) continue;
      if (consume("}")) return Json(std::move(members));
      fail("expected ',' or '}'");
    }
  }

  Json array(int depth) {
    ++pos_;
    Json arr = Json::array();
    skip_ws();
    if (consume("]")) return arr;
    for (;;) {
      arr.push_back(value(depth + 1));
      skip_ws();
      if (consume(",")) continue;
      if (consume("]")) return arr;
      fail("expected ',' or ']'");
    }
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else fail("bad hex digit in \\u escape");
    }
    return v;
  }

  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(s_[pos_++]);
      if (c == '"') return out;
      if (c < 0x20) fail("control character in a string (it must be escaped)");
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xd800 && cp <= 0xdbff) {
            if (!consume("\\u")) fail("unpaired surrogate in \\u escape");
            unsigned lo = hex4();
            if (lo < 0xdc00 || lo > 0xdfff) fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            fail("unpaired surrogate in \\u escape");
          }
          put_utf8(out, cp);
          break;
        }
        default:
          fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  Json number() {
    std::size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      std::size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - d;
    };
    std::size_t int_start = pos_;
    if (digits() == 0) fail("expected digits");
    if (s_[int_start] == '0' && pos_ - int_start > 1) fail("leading zero in a number");
    bool is_double = false;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      is_double = true;
      if (digits() == 0) fail("expected digits after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      is_double = true;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) fail("expected digits in the exponent");
    }
    const char* b = s_.data() + start;
    const char* e = s_.data() + pos_;
    if (!is_double) {
      std::int64_t i = 0;
      auto [p, ec] = std::from_chars(b, e, i);
      if (ec == std::errc() && p == e) return Json(i);
      // Out of the int64 range: fall through to a double.
    }
    double d = 0;
    auto [p, ec] = std::from_chars(b, e, d);
    if (ec != std::errc() || p != e) fail("number out of range");
    return Json(d);
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

Json Json::parse(std::string_view text) { return Parser(text).document(); }

}  // namespace tunedreduce
