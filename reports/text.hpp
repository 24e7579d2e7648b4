#pragma once
// Escaping and number formatting shared by the renderers. Every string that comes from the
// database passes through one of the escapes below before it reaches an output.

#include <cstdint>
#include <string>
#include <string_view>

namespace tunedreduce::reports {

/// \p s with every invalid UTF-8 sequence (bad lead or continuation byte, overlong form,
/// surrogate, beyond U+10FFFF, truncated) replaced by U+FFFD. Valid text is returned unchanged.
std::string valid_utf8(std::string_view s);

/// For a terminal: valid UTF-8 with control characters (C0, DEL, C1, so also ESC sequences)
/// written as visible escapes: "\n", "\r", "\t", "\x1b", "\u0085".
std::string terminal_escape(std::string_view s);

/// Columns \p s occupies on a terminal (after terminal_escape): wide East Asian characters and
/// emoji count 2, combining marks 0.
std::size_t display_width(std::string_view s);

/// HTML text and attribute values: & < > " ' as character references; control characters other
/// than tab and newline become U+FFFD (they are not allowed in HTML or SVG text).
std::string html_escape(std::string_view s);

/// A GitHub-flavoured Markdown table cell or inline text: HTML-significant characters as
/// character references, Markdown punctuation (\ ` * _ [ ] | # ~ ! etc.) backslash-escaped, line
/// breaks as <br>, other control characters as U+FFFD.
std::string markdown_escape(std::string_view s);

/// One RFC 4180 field: quoted when it contains a comma, a double quote, CR or LF (or starts or
/// ends with a space), with double quotes doubled.
std::string csv_field(std::string_view s);

/// "%.Nf" without the locale.
std::string fixed(double v, int decimals);
/// The shortest text that reads back as \p v (CSV numbers).
std::string shortest(double v);
/// Element counts for people: "2^24" for powers of two, else the decimal number.
std::string size_text(std::uint64_t n);
/// True when n is a power of two; then *log2 is its exponent.
bool is_pow2(std::uint64_t n, int* log2 = nullptr);
/// CUDA versions as reported by cudaDriverGetVersion/cudaRuntimeGetVersion: 12080 -> "12.8".
std::string cuda_version_text(int v);

}  // namespace tunedreduce::reports
