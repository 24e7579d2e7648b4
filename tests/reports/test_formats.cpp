// Every format of every kind on a database full of hostile strings (quotes, commas, <script>,
// CR/LF, ESC sequences, invalid UTF-8, emoji): each comes out escaped for its format, CSV parses
// as RFC 4180 with every field intact, JSON parses and follows the documented schema.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

#include "common/json.hpp"
#include "demo_db.hpp"
#include "reports/reports.hpp"
#include "reports/text.hpp"
#include "report_test_util.hpp"

namespace tunedreduce::reports {
namespace {

using test::lower;
using test::parse_csv;

constexpr Kind all_kinds[] = {Kind::best,    Kind::variants, Kind::ladder,   Kind::heatmap,
                              Kind::compare, Kind::bench,    Kind::coverage, Kind::segmented};

class Hostile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db_ = new db::Database(db::Database::create_in_memory());
    test::DemoOptions o;
    o.hostile = true;
    o.bench = true;      // the bench's host, path and error are hostile too
    o.segmented = true;  // the H200's hostile name in the segmented sections
    o.log2_step = 4;     // 2^10, 2^14, ..., 2^30
    o.config_stride = 4;
    test::build_demo(*db_, o);
  }
  static void TearDownTestSuite() {
    delete db_;
    db_ = nullptr;
  }
  static std::string out(Kind k, Format f) {
    ReportOptions o;
    o.kind = k;
    return render(build_report(*db_, o), f);
  }
  static db::Database* db_;
};
db::Database* Hostile::db_ = nullptr;

TEST(ReportCsvParser, ReadsWhatRfc4180Allows) {
  const auto r = parse_csv("a,\"b,c\",\"d\"\"e\"\r\n\"x\r\ny\",,z\r\n");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (std::vector<std::string>{"a", "b,c", "d\"e"}));
  EXPECT_EQ(r[1], (std::vector<std::string>{"x\r\ny", "", "z"}));
  EXPECT_THROW(parse_csv("a,b\n"), std::runtime_error);
  EXPECT_THROW(parse_csv("a\"b\r\n"), std::runtime_error);
}

TEST_F(Hostile, TableEscapesControlCharacters) {
  const std::string name = terminal_escape(test::hostile_name());
  for (Kind k : all_kinds) {
    const std::string t = out(k, Format::table);
    SCOPED_TRACE(kind_name(k));
    EXPECT_EQ(t.find('\x1b'), std::string::npos);
    EXPECT_EQ(t.find('\r'), std::string::npos);
    EXPECT_EQ(t.find("\xff"), std::string::npos);
    // Every line of a table has the header's width: no name or error broke a row apart.
    std::size_t pos = 0, rule_width = 0, lines_checked = 0;
    while (pos < t.size()) {
      const std::size_t end = t.find('\n', pos);
      const std::string line = t.substr(pos, end - pos);
      if (line.starts_with("--")) rule_width = display_width(line);
      else if (line.empty() || line.starts_with("==")) rule_width = 0;
      else if (rule_width) {
        EXPECT_LE(display_width(line), rule_width) << line;
        ++lines_checked;
      }
      pos = end + 1;
    }
    EXPECT_GT(lines_checked, 0u);
  }
  EXPECT_NE(out(Kind::compare, Format::table).find(name), std::string::npos);
  EXPECT_NE(out(Kind::coverage, Format::table).find(terminal_escape(test::hostile_error())),
            std::string::npos);
}

TEST_F(Hostile, MarkdownEscapesHtmlPipesAndLineBreaks) {
  for (Kind k : all_kinds) {
    const std::string m = out(k, Format::markdown);
    SCOPED_TRACE(kind_name(k));
    EXPECT_EQ(lower(m).find("<script"), std::string::npos);
    EXPECT_EQ(lower(m).find("<b>"), std::string::npos);
    EXPECT_EQ(m.find('\x1b'), std::string::npos);
    EXPECT_EQ(m.find('\r'), std::string::npos);
    // Table rows keep their cell count: unescaped pipes are only the separators.
    std::size_t pos = 0, want = 0;
    while (pos < m.size()) {
      const std::size_t end = m.find('\n', pos);
      const std::string line = m.substr(pos, end - pos);
      if (line.starts_with("|")) {
        std::size_t pipes = 0;
        for (std::size_t i = 0; i < line.size(); ++i)
          if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++pipes;
        if (!want) want = pipes;
        EXPECT_EQ(pipes, want) << line;
      } else {
        want = 0;
      }
      pos = end + 1;
    }
  }
  EXPECT_NE(out(Kind::compare, Format::markdown)
                .find("&lt;script&gt;alert('x')&lt;/script&gt;<br>line 2 \\| \\*bold\\*"),
            std::string::npos);
}

TEST_F(Hostile, HtmlHasNoMarkupFromTheDatabaseAndFetchesNothing) {
  for (Kind k : all_kinds) {
    const std::string h = out(k, Format::html);
    SCOPED_TRACE(kind_name(k));
    const std::string l = lower(h);
    EXPECT_EQ(l.find("<script"), std::string::npos);
    EXPECT_EQ(l.find("<b>"), std::string::npos);
    EXPECT_EQ(l.find("<i>"), std::string::npos);
    EXPECT_EQ(h.find('\x1b'), std::string::npos);
    EXPECT_EQ(h.find("\xff"), std::string::npos);
    // Nothing outside the file: no src, no external href, no url() but in-document ones.
    EXPECT_EQ(l.find("src="), std::string::npos);
    EXPECT_EQ(l.find("href=\"http"), std::string::npos);
    EXPECT_EQ(l.find("@import"), std::string::npos);
    std::size_t u = 0;
    while ((u = l.find("url(", u)) != std::string::npos) EXPECT_EQ(l.substr(u++, 5), "url(#");
    EXPECT_NE(l.find("content-security-policy"), std::string::npos);
    EXPECT_TRUE(h.starts_with("<!DOCTYPE html>"));
    EXPECT_TRUE(h.ends_with("</html>\n"));
  }
  const std::string c = out(Kind::compare, Format::html);
  EXPECT_NE(c.find("NVIDIA &quot;H200&quot;, &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_NE(c.find("data-series=\"NVIDIA &quot;H200&quot;, &lt;script&gt;"), std::string::npos);
  EXPECT_NE(
      out(Kind::coverage, Format::html).find("&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;"),
      std::string::npos);
  const std::string v = out(Kind::variants, Format::html);
  EXPECT_NE(v.find(html_escape(test::hostile_family())), std::string::npos);  // a column and a line
  EXPECT_NE(out(Kind::segmented, Format::html)
                .find("NVIDIA &quot;H200&quot;, &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
            std::string::npos);  // a section's title
  const std::string b = out(Kind::bench, Format::html);
  EXPECT_NE(b.find("lab,&quot;bench&quot;\n&lt;script&gt;alert(&#39;b&#39;)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_NE(b.find(html_escape(test::hostile_error())), std::string::npos);  // Thrust's failure
}

TEST_F(Hostile, CsvIsRfc4180AndKeepsEveryStringIntact) {
  for (Kind k : all_kinds) {
    const std::string c = out(k, Format::csv);
    SCOPED_TRACE(kind_name(k));
    std::vector<std::vector<std::string>> rows;
    ASSERT_NO_THROW(rows = parse_csv(c));
    ASSERT_GT(rows.size(), 1u);
    for (const auto& r : rows) EXPECT_EQ(r.size(), rows[0].size());
  }
  const auto rows = parse_csv(out(Kind::coverage, Format::csv));
  const auto& h = rows[0];
  const auto at = [&](const std::string& id) {
    return static_cast<std::size_t>(std::find(h.begin(), h.end(), id) - h.begin());
  };
  ASSERT_LT(at("error"), h.size());
  bool name_seen = false, error_seen = false, kernel_seen = false;
  for (const auto& r : rows) {
    name_seen |= r[at("device")] == valid_utf8(test::hostile_name());
    error_seen |= r[at("error")] == test::hostile_error();
    kernel_seen |= r[at("table")] == "unknown_kernels" && r[at("kernel")] == test::hostile_kernel();
  }
  EXPECT_TRUE(name_seen);
  EXPECT_TRUE(error_seen);
  EXPECT_TRUE(kernel_seen);

  // Key fields are columns too: compare's device columns are named by fingerprint.
  const auto cmp = parse_csv(out(Kind::compare, Format::csv));
  EXPECT_EQ(cmp[0][0], "dtype");
  EXPECT_EQ(cmp[0][1], "op");
  EXPECT_EQ(cmp[0][2], "n");
  EXPECT_EQ(cmp[0][3], "gbps_" + test::demo_h100().key());
}

TEST_F(Hostile, JsonParsesFollowsTheSchemaAndKeepsEveryStringIntact) {
  for (Kind k : all_kinds) {
    SCOPED_TRACE(kind_name(k));
    Json doc;
    ASSERT_NO_THROW(doc = Json::parse(out(k, Format::json)));
    EXPECT_EQ(doc.find("format")->as_string(), "tunedreduce-report");
    EXPECT_EQ(doc.find("format_version")->as_int(), 1);
    EXPECT_EQ(doc.find("kind")->as_string(), kind_name(k));
    EXPECT_FALSE(doc.find("empty")->as_bool());
    EXPECT_TRUE(doc.find("message")->is_null());
    EXPECT_TRUE(doc.find("filters")->is_object());
    EXPECT_TRUE(doc.find("notes")->is_array());
    for (const Json& s : doc.find("sections")->as_array()) {
      for (const char* member : {"table", "title"}) EXPECT_TRUE(s.find(member)->is_string());
      EXPECT_TRUE(s.find("key")->is_object());
      EXPECT_TRUE(s.find("charts")->is_array());
      std::vector<std::string> ids;
      for (const Json& c : s.find("columns")->as_array()) {
        ids.push_back(c.find("id")->as_string());
        EXPECT_TRUE(c.find("label")->is_string());
        EXPECT_TRUE(c.find("numeric")->is_bool());
        EXPECT_TRUE(c.find("unit")->is_null() || c.find("unit")->is_string());
      }
      for (const Json& row : s.find("rows")->as_array()) {
        ASSERT_EQ(row.as_object().size(), ids.size());
        for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(row.as_object()[i].first, ids[i]);
      }
      for (const Json& c : s.find("charts")->as_array()) {
        const std::string type = c.find("type")->as_string();
        EXPECT_TRUE(type == "line" || type == "bar" || type == "heatmap") << type;
      }
    }
  }
  const Json cov = Json::parse(out(Kind::coverage, Format::json));
  bool error_seen = false, name_seen = false;
  for (const Json& s : cov.find("sections")->as_array())
    for (const Json& row : s.find("rows")->as_array()) {
      if (const Json* e = row.find("error"); e && e->is_string())
        error_seen |= e->as_string() == test::hostile_error();
      if (const Json* n = row.find("device"); n && n->is_string())
        name_seen |= n->as_string() == valid_utf8(test::hostile_name());
    }
  EXPECT_TRUE(error_seen);
  EXPECT_TRUE(name_seen);
  const Json cmp = Json::parse(out(Kind::compare, Format::json));
  const Json& series =
      *cmp.find("sections")->as_array().at(0).find("charts")->as_array().at(0).find("series");
  EXPECT_EQ(series.as_array().at(1).find("name")->as_string(), valid_utf8(test::hostile_name()));
}

TEST(ReportFormats, AnEmptyDatabaseSaysSoInEveryFormat) {
  db::Database empty = db::Database::create_in_memory();
  ReportOptions o;
  o.kind = Kind::variants;
  const Report r = build_report(empty, o);
  EXPECT_NE(render(r, Format::table).find("the database is empty"), std::string::npos);
  EXPECT_NE(render(r, Format::markdown).find("the database is empty"), std::string::npos);
  EXPECT_NE(render(r, Format::html).find("<p class=\"empty\" id=\"empty\">the database is empty"),
            std::string::npos);
  EXPECT_EQ(render(r, Format::csv), "");  // no rows, no header (the CLI says why on stderr)
  const Json j = Json::parse(render(r, Format::json));
  EXPECT_TRUE(j.find("empty")->as_bool());
  EXPECT_NE(j.find("message")->as_string().find("the database is empty"), std::string::npos);
  EXPECT_TRUE(j.find("sections")->as_array().empty());
}

}  // namespace
}  // namespace tunedreduce::reports
