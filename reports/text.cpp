#include "reports/text.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace tunedreduce::reports {

namespace {

constexpr char32_t replacement = 0xFFFD;

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Decodes one code point at s[i], advancing i; invalid input yields U+FFFD and skips one byte
// (so that the next valid character is kept).
char32_t decode(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int len = 0;
  char32_t c = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, c = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, c = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, c = b0 & 0x07, min = 0x10000;
  } else {
    ++i;
    return replacement;
  }
  if (i + len > s.size()) {
    ++i;
    return replacement;
  }
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return replacement;
    }
    c = (c << 6) | (b & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
    ++i;
    return replacement;
  }
  i += len;
  return c;
}

template <class F>
void for_each_char(std::string_view s, F&& f) {
  for (std::size_t i = 0; i < s.size();) f(decode(s, i));
}

bool is_control(char32_t c) { return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F); }

int char_width(char32_t c) {
  if ((c >= 0x0300 && c <= 0x036F) || (c >= 0x200B && c <= 0x200F) ||
      (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x20D0 && c <= 0x20FF))
    return 0;
  if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF && c != 0x303F) ||
      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
      (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
      (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
    return 2;
  return 1;
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_char(s, [&](char32_t c) { append_utf8(out, c); });
  return out;
}

std::string terminal_escape(std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for_each_char(s, [&](char32_t c) {
    if (!is_control(c)) return append_utf8(out, c);
    switch (c) {
      case '\n':
        out += "\\n";
        return;
      case '\r':
        out += "\\r";
        return;
      case '\t':
        out += "\\t";
        return;
      default:
        break;
    }
    if (c < 0x80) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xF];
    } else {
      out += "\\u00";
      out += hex[(c >> 4) & 0xF];
      out += hex[c & 0xF];
    }
  });
  return out;
}

std::size_t display_width(std::string_view s) {
  std::size_t w = 0;
  for_each_char(s, [&](char32_t c) { w += static_cast<std::size_t>(char_width(c)); });
  return w;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  for_each_char(s, [&](char32_t c) {
    switch (c) {
      case '&':
        out += "&amp;";
        return;
      case '<':
        out += "&lt;";
        return;
      case '>':
        out += "&gt;";
        return;
      case '"':
        out += "&quot;";
        return;
      case '\'':
        out += "&#39;";
        return;
      case '\t':
      case '\n':
        out += static_cast<char>(c);
        return;
      default:
        break;
    }
    append_utf8(out, is_control(c) ? replacement : c);
  });
  return out;
}

std::string markdown_escape(std::string_view s) {
  std::u32string chars;
  for_each_char(s, [&](char32_t c) { chars += c; });
  auto word = [&](std::size_t i) {
    if (i >= chars.size()) return false;
    const char32_t c = chars[i];
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c >= 0x80;
  };
  std::string out;
  out.reserve(s.size() + 16);
  for (std::size_t i = 0; i < chars.size(); ++i) {
    const char32_t c = chars[i];
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\r':
        out += "<br>";
        continue;
      case '\n':
        if (i == 0 || chars[i - 1] != '\r') out += "<br>";  // CRLF is one break
        continue;
      case '_':
        // Inside a word (single_pass) GFM never reads '_' as emphasis: keep ids readable.
        if (i > 0 && word(i - 1) && word(i + 1)) break;
        [[fallthrough]];
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
      case '|':
      case '~':
      case '#':
        out += '\\';
        out += static_cast<char>(c);
        continue;
      default:
        break;
    }
    append_utf8(out, is_control(c) && c != '\t' ? replacement : c);
  }
  return out;
}

std::string csv_field(std::string_view raw) {
  const std::string s = valid_utf8(raw);
  bool quote = !s.empty() && (s.front() == ' ' || s.back() == ' ');
  for (char c : s)
    if (c == ',' || c == '"' || c == '\r' || c == '\n') quote = true;
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "nan";  // fmt writes a negative NaN "-nan"
  return fmt::format("{:.{}f}", v, decimals);
}

std::string shortest(double v) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

bool is_pow2(std::uint64_t n, int* log2) {
  if (n == 0 || (n & (n - 1)) != 0) return false;
  if (log2) {
    int k = 0;
    while ((std::uint64_t{1} << k) != n) ++k;
    *log2 = k;
  }
  return true;
}

std::string size_text(std::uint64_t n) {
  int k = 0;
  if (n >= 1024 && is_pow2(n, &k)) return fmt::format("2^{}", k);
  return std::to_string(n);
}

std::string cuda_version_text(int v) {
  if (v <= 0) return "unknown";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

}  // namespace tunedreduce::reports
