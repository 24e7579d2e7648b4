// Escaping, number formatting and the parsing of the command's values.

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"
#include "reports/reports.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports {
namespace {

const std::string fffd = "\xEF\xBF\xBD";

TEST(ReportText, ValidUtf8KeepsValidTextAndReplacesEveryInvalidSequence) {
  const std::string ok = "ascii µs ∑ 😀 漢字";
  EXPECT_EQ(valid_utf8(ok), ok);
  EXPECT_EQ(valid_utf8("a\xff"
                       "b"),
            "a" + fffd + "b");
  EXPECT_EQ(valid_utf8("\xC0\xAF"), fffd + fffd);                        // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), fffd + fffd + fffd);             // a UTF-16 surrogate
  EXPECT_EQ(valid_utf8("x\xE2\x88"), "x" + fffd + fffd);                 // truncated
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // beyond U+10FFFF
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(ReportText, TerminalEscapeMakesEveryControlCharacterVisible) {
  EXPECT_EQ(terminal_escape("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(terminal_escape("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(terminal_escape("\x7f"), "\\x7f");
  EXPECT_EQ(terminal_escape("\xC2\x85"), "\\u0085");  // C1 next-line
  EXPECT_EQ(terminal_escape("µs ∑ 😀"), "µs ∑ 😀");
  EXPECT_EQ(terminal_escape("\xff"), fffd);
}

TEST(ReportText, DisplayWidthCountsColumnsNotBytes) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("µs"), 2u);
  EXPECT_EQ(display_width("×1.5"), 4u);
  EXPECT_EQ(display_width("😀"), 2u);
  EXPECT_EQ(display_width("漢字"), 4u);
  EXPECT_EQ(display_width("e\xCC\x81"), 1u);  // e + combining acute
}

TEST(ReportText, HtmlEscape) {
  EXPECT_EQ(html_escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  EXPECT_EQ(html_escape("a\nb\tc"), "a\nb\tc");
  EXPECT_EQ(html_escape("a\x01"
                        "b\x1b"),
            "a" + fffd + "b" + fffd);
  EXPECT_EQ(html_escape("\xff"), fffd);
  EXPECT_EQ(html_escape("µs 😀"), "µs 😀");
}

TEST(ReportText, MarkdownEscape) {
  EXPECT_EQ(markdown_escape("a|b"), "a\\|b");
  EXPECT_EQ(markdown_escape("<script>"), "&lt;script&gt;");
  EXPECT_EQ(markdown_escape("l1\r\nl2\nl3\rl4"), "l1<br>l2<br>l3<br>l4");
  EXPECT_EQ(markdown_escape("*b* `c` [l](u) #h ~s~ \\"),
            "\\*b\\* \\`c\\` \\[l\\](u) \\#h \\~s\\~ \\\\");
  // Intraword underscores are never emphasis: kernel ids stay readable.
  EXPECT_EQ(markdown_escape("smem.b256.u8.dynamic.single_pass.f32.sum"),
            "smem.b256.u8.dynamic.single_pass.f32.sum");
  EXPECT_EQ(markdown_escape("_u_ a_"), "\\_u\\_ a\\_");
  EXPECT_EQ(markdown_escape("x\x1b"
                            "y"),
            "x" + fffd + "y");
}

TEST(ReportText, CsvFieldFollowsRfc4180) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("l1\nl2"), "\"l1\nl2\"");
  EXPECT_EQ(csv_field("l1\r\nl2"), "\"l1\r\nl2\"");
  EXPECT_EQ(csv_field(" padded"), "\" padded\"");
  EXPECT_EQ(csv_field("µs ∑"), "µs ∑");
  EXPECT_EQ(csv_field("\xff"), fffd);
}

TEST(ReportText, Numbers) {
  EXPECT_EQ(size_text(1024), "2^10");
  EXPECT_EQ(size_text(std::uint64_t{1} << 40), "2^40");
  EXPECT_EQ(size_text(1000), "1000");
  EXPECT_EQ(size_text(512), "512");  // small counts read better as numbers
  EXPECT_EQ(size_text(1448), "1448");
  int k = 0;
  EXPECT_TRUE(is_pow2(std::uint64_t{1} << 33, &k));
  EXPECT_EQ(k, 33);
  EXPECT_FALSE(is_pow2(0));
  EXPECT_FALSE(is_pow2(12));
  EXPECT_EQ(fixed(3352.3199, 1), "3352.3");
  EXPECT_EQ(fixed(0.126, 2), "0.13");
  EXPECT_EQ(fixed(2.5, 0), "2");  // round half to even, as printf
  EXPECT_EQ(fixed(-0.001, 2), "-0.00");
  EXPECT_EQ(fixed(std::nan(""), 1), "nan");
  EXPECT_EQ(fixed(-std::nan(""), 1), "nan");
  EXPECT_EQ(fixed(-HUGE_VAL, 1), "-inf");
  // Every digit of a value beyond the 64 characters the formatter once wrote into.
  EXPECT_EQ(fixed(1e70, 1).size(), 73u);
  EXPECT_TRUE(fixed(1e70, 1).starts_with("10000000000000000"));
  EXPECT_EQ(shortest(0.1), "0.1");
  EXPECT_EQ(shortest(1398.75), "1398.75");
  EXPECT_EQ(cuda_version_text(12080), "12.8");
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(0), "unknown");
}

// Each parser throws a usage error (exit 2) whose message names the bad value.
template <class F>
void expect_usage_error(F&& f, const std::string& value) {
  try {
    f();
    ADD_FAILURE() << "no error for '" << value << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("'" + value + "'"), std::string::npos) << e.what();
  }
}

TEST(ReportOptions, ValuesParseOrNameTheBadValue) {
  EXPECT_EQ(kind_from_text("ladder"), Kind::ladder);
  EXPECT_EQ(format_from_text("html"), Format::html);
  EXPECT_EQ(format_from_text("md"), Format::markdown);
  EXPECT_EQ(dtype_from_text("float"), DType::f32);
  EXPECT_EQ(op_from_text("max"), Op::max);
  EXPECT_EQ(family_from_text("warp_shuffle"), "warp_shuffle");
  EXPECT_EQ(l2_from_text("warm"), db::L2Mode::warm);
  expect_usage_error([] { kind_from_text("bestest"); }, "bestest");
  expect_usage_error([] { format_from_text("xml"); }, "xml");
  expect_usage_error([] { dtype_from_text("f8"); }, "f8");
  expect_usage_error([] { op_from_text("prod"); }, "prod");
  expect_usage_error([] { family_from_text("fast"); }, "fast");
  expect_usage_error([] { l2_from_text("hot"); }, "hot");
  try {
    kind_from_text("x");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "best, variants, ladder, heatmap, compare, bench, coverage"),
              std::string::npos);
  }
}

TEST(ReportOptions, Sizes) {
  EXPECT_EQ(size_from_text("16777216"), std::uint64_t{1} << 24);
  EXPECT_EQ(size_from_text("2^24"), std::uint64_t{1} << 24);
  EXPECT_EQ(size_from_text("10^3"), 1000u);
  EXPECT_EQ(size_from_text("16Mi"), std::uint64_t{1} << 24);
  EXPECT_EQ(size_from_text("1Gi"), std::uint64_t{1} << 30);
  EXPECT_EQ(size_from_text("2^40"), std::uint64_t{1} << 40);
  EXPECT_EQ(size_from_text("1Ti"), std::uint64_t{1} << 40);  // the CLI's one grammar
  for (const char* bad :
       {"0", "2^41", "2Ti", "abc", "-1", "1.5", "", "2^", "^3", "99999999999999999999"})
    expect_usage_error([&] { size_from_text(bad); }, bad);
}

TEST(ReportOptions, FormatFromTheOutputFileName) {
  EXPECT_EQ(format_for_path("r.html"), Format::html);
  EXPECT_EQ(format_for_path("out/R.HTM"), Format::html);
  EXPECT_EQ(format_for_path("r.csv"), Format::csv);
  EXPECT_EQ(format_for_path("r.json"), Format::json);
  EXPECT_EQ(format_for_path("r.md"), Format::markdown);
  EXPECT_EQ(format_for_path("r.txt"), Format::table);
  EXPECT_EQ(format_for_path("report"), std::nullopt);
}

}  // namespace
}  // namespace tunedreduce::reports
