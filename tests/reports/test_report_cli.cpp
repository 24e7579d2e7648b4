// `tunedreduce report` run as a person would (TR_CLI: the real CLI, or tr_report_cmd, which is
// cli/cmd_report.cpp without the kernels): exit codes, messages that name the bad value, the
// default format, --output and the format its extension asks for.

#include <gtest/gtest.h>

#include <filesystem>

#include "common/json.hpp"
#include "demo_db.hpp"
#include "test_util.hpp"

namespace tunedreduce::reports {
namespace {

namespace fs = std::filesystem;
using db::test::ProcessResult;
using db::test::TempDir;

class ReportCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    test::DemoOptions o;
    o.log2_step = 4;
    o.config_stride = 4;
    o.bench = true;
    test::write_demo(dir_->path() / "demo.db", o);
    db::Database::open_writer(dir_->path() / "empty.db");  // a valid database with no rows
    o.arg_ops = true;  // i32 argmin and f64 argmax besides the sums (schema version 9)
    o.second_device = false;
    test::write_demo(dir_->path() / "indexed.db", o);
    o = {};
    o.log2_step = 4;
    o.config_stride = 4;
    o.segmented = true;  // segmented f32 sum on both devices (schema version 12)
    test::write_demo(dir_->path() / "segmented.db", o);
  }
  static void TearDownTestSuite() { delete dir_; }

  static ProcessResult report(std::vector<std::string> args, const std::string& db = "demo.db") {
    std::vector<std::string> argv{TR_CLI, "report"};
    argv.insert(argv.end(), args.begin(), args.end());
    if (!db.empty()) argv.push_back("--db=" + (dir_->path() / db).string());
    return db::test::run_process(argv, {"TUNEDREDUCE_DB=", "XDG_DATA_HOME=" + dir_->path().string(),
                                        "COLUMNS=" + columns_});
  }
  static std::string columns_;  // $COLUMNS for report(): empty, so the tables keep every column
  static TempDir* dir_;
};
TempDir* ReportCli::dir_ = nullptr;
std::string ReportCli::columns_;

TEST_F(ReportCli, TheDefaultIsATableOnStdout) {
  const ProcessResult r = report({"best"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("Winners: the tuned kernel per device")) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("== NVIDIA H100 80GB HBM3 (" + test::demo_h100().key() + ") =="),
            std::string::npos);
  EXPECT_NE(r.out.find("== NVIDIA H200 ("), std::string::npos);
  EXPECT_EQ(r.err, "");
}

TEST_F(ReportCli, EveryKindAndFormatExitsZero) {
  for (const char* kind : {"best", "variants", "ladder", "heatmap", "compare", "bench", "coverage"})
    for (const char* format : {"table", "markdown", "csv", "json", "html"}) {
      const ProcessResult r = report({kind, "--format", format, "--dtype", "i32"});
      EXPECT_EQ(r.exit_code, 0) << kind << " " << format << ": " << r.err;
      EXPECT_GT(r.out.size(), 100u) << kind << " " << format;
    }
  const ProcessResult j =
      report({"ladder", "--format=json", "--device", "H200", "--n", "2^20", "--op", "sum"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const Json doc = Json::parse(j.out);
  EXPECT_EQ(doc.find("filters")->find("n")->as_string(), "1048576");
  EXPECT_EQ(doc.find("sections")->as_array().size(), 2u);  // i32 sum and f32 sum on the H200
}

TEST_F(ReportCli, OutputFileTakesItsFormatFromTheExtension) {
  const fs::path html = dir_->path() / "out" / "variants.html";
  fs::create_directories(html.parent_path());
  ProcessResult r = report({"variants", "--output", html.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string text = db::test::read_file(html);
  EXPECT_TRUE(text.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(text.find("<svg class=\"chart line-chart\""), std::string::npos);
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(html.parent_path()), fs::directory_iterator()), 1);

  const fs::path csv = dir_->path() / "out" / "coverage.csv";
  r = report({"coverage", "-o", csv.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(db::test::read_file(csv).starts_with("table,device,fingerprint,dtype,op,l2,status"));

  const fs::path forced = dir_->path() / "out" / "best.txt";
  r = report({"best", "--format", "json", "-o", forced.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(Json::parse(db::test::read_file(forced)));

  r = report({"best", "-o", (dir_->path() / "no-such-folder" / "x.html").string()});
  EXPECT_EQ(r.exit_code, 10);
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;

  // An extension no format has is refused (nothing written); --format overrides; no extension
  // is a text table.
  const fs::path xlsx = dir_->path() / "out" / "best.xlsx";
  r = report({"best", "-o", xlsx.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no report format has the extension '.xlsx' (.txt, .md, .csv, .json, "
                       ".html; or name one with --format)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(xlsx));
  r = report({"best", "--format", "csv", "-o", xlsx.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const fs::path plain = dir_->path() / "out" / "best";
  r = report({"best", "-o", plain.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(db::test::read_file(plain).starts_with("Winners:"));
}

TEST_F(ReportCli, BadValuesExitTwoAndNameTheValue) {
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  const std::vector<Case> cases{
      {{"bestest"}, "unknown report kind 'bestest'"},
      {{"best", "--format", "xml"}, "unknown format 'xml'"},
      {{"best", "--dtype", "f8"}, "unknown element type 'f8'"},
      {{"best", "--op", "prod"}, "unknown op 'prod'"},
      {{"heatmap", "--family", "fastest"}, "unknown family 'fastest'"},
      {{"segmented", "--layouts", "fixed,ragged"},
       "--layouts: unknown layout 'ragged' (choose from fixed, offsets32, offsets64)"},
      {{"ladder", "--n", "2^50"}, "invalid size '2^50'"},
      {{"variants", "--l2", "hot"}, "unknown L2 mode 'hot'"},
      {{"best", "--device", "A100"}, "unknown device 'A100'"},
      {{"best", "--bogus"}, "bogus"},
      {{}, "report needs a KIND"},
  };
  for (const Case& c : cases) {
    const ProcessResult r = report(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.said << ": " << r.err;
    EXPECT_NE(r.err.find(c.said), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.starts_with("tunedreduce report: error: ")) << r.err;
    EXPECT_EQ(r.out, "");
  }
  // Values are checked before the database is opened.
  const ProcessResult r = report({"bestest"}, "missing.db");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(ReportCli, EmptyDatabaseAndEmptySelectionExitZeroAndSaySo) {
  ProcessResult r = report({"best"}, "empty.db");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the database is empty"), std::string::npos) << r.out;

  r = report({"variants", "--format", "csv"}, "empty.db");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("the database is empty"), std::string::npos) << r.err;

  r = report({"compare", "--dtype", "f64"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("nothing matches the selection (dtype f64)"), std::string::npos) << r.out;
}

TEST_F(ReportCli, AMissingDatabaseIsExitThreeAndSaysWhereTheLocationCameFrom) {
  const ProcessResult r = report({"best"}, "missing.db");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("missing.db"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--db"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_->path() / "missing.db"));  // a reader never creates it
}

TEST_F(ReportCli, ArgminAndArgmaxRowsReportInEveryKindAndFormat) {
  for (const char* kind : {"best", "variants", "ladder", "heatmap", "compare", "bench", "coverage"})
    for (const char* format : {"table", "markdown", "csv", "json", "html"}) {
      const ProcessResult r =
          report({kind, "--format", format, "--ops", "argmin,argmax"}, "indexed.db");
      EXPECT_EQ(r.exit_code, 0) << kind << " " << format << ": " << r.err;
      EXPECT_NE(r.out.find("argmin"), std::string::npos) << kind << " " << format;
      EXPECT_NE(r.out.find("argmax"), std::string::npos) << kind << " " << format;
    }
  // JSON: the filter, and one section per key (i32 argmin, f64 argmax), named so.
  ProcessResult r =
      report({"variants", "--format=json", "--op", "argmin", "--op", "argmax"}, "indexed.db");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc.find("filters")->find("op")->as_string(), "argmin, argmax");
  const auto& sections = doc.find("sections")->as_array();
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_EQ(sections[0].find("key")->find("dtype")->as_string(), "i32");
  EXPECT_EQ(sections[0].find("key")->find("op")->as_string(), "argmin");
  EXPECT_EQ(sections[1].find("key")->find("dtype")->as_string(), "f64");
  EXPECT_EQ(sections[1].find("key")->find("op")->as_string(), "argmax");
  // The sums of the same file are still there, before them; --ops sum leaves argmin out.
  r = report({"best", "--ops", "sum"}, "indexed.db");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("argmin"), std::string::npos);
  r = report({"best"}, "indexed.db");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(r.out.find(" sum "), r.out.find(" argmin ")) << r.out;
  EXPECT_LT(r.out.find(" argmin "), r.out.find(" argmax ")) << r.out;
  // A misspelt operator names the choices, argmin and argmax among them.
  r = report({"best", "--ops", "argmn"}, "indexed.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--ops: unknown op 'argmn' (choose from sum, min, max, exact_sum, "
                       "wide_sum, argmin, argmax, absmax)"),
            std::string::npos)
      << r.err;
}

TEST_F(ReportCli, SegmentedReportsInEveryFormatAndTakesItsFilters) {
  for (const char* format : {"table", "markdown", "csv", "json", "html"}) {
    const ProcessResult r = report({"segmented", "--format", format}, "segmented.db");
    EXPECT_EQ(r.exit_code, 0) << format << ": " << r.err;
    EXPECT_NE(r.out.find("seg.tile.b256.v4.fixed.f32.sum"), std::string::npos) << format;
  }
  const ProcessResult r = report({"segmented", "--format=json", "--devices", "H200", "--layouts",
                                  "offsets32", "--dtypes", "f32", "--ops", "sum"},
                                 "segmented.db");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc.find("filters")->find("layout")->as_string(), "offsets32");
  const auto& sections = doc.find("sections")->as_array();
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].find("key")->find("device")->as_string(), "NVIDIA H200");
  EXPECT_EQ(sections[0].find("key")->find("layout")->as_string(), "offsets32");
  // The whole-array kinds of the same file show no segmented kernel.
  for (const char* kind : {"best", "variants", "ladder", "heatmap", "compare", "coverage"}) {
    const ProcessResult w = report({kind, "--format", "csv"}, "segmented.db");
    EXPECT_EQ(w.exit_code, 0) << kind << ": " << w.err;
    EXPECT_EQ(w.out.find("seg."), std::string::npos) << kind;
  }
  // A database without segmented measurements says so, exit 0.
  const ProcessResult none = report({"segmented"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("no segmented measurements or segmented bench results in the selection"),
            std::string::npos)
      << none.out;
}

// A table wider than $COLUMNS (or --width) comes as groups of its columns that fit, each under
// the row's label column again, with every cell still there; --width 0, or a file, keeps the
// whole lines; a width below 20 is a usage error that names --width.
TEST_F(ReportCli, TablesFitTheTerminalsWidth) {
  auto widest = [](const std::string& text) {
    std::size_t w = 0, from = 0;
    while (from < text.size()) {
      std::size_t to = text.find('\n', from);
      if (to == std::string::npos) to = text.size();
      // Columns: the code points of the line (the report's ×, ·, µ and — take one each).
      std::size_t cols = 0;
      for (std::size_t i = from; i < to; ++i)
        cols += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
      w = std::max(w, cols);
      from = to + 1;
    }
    return w;
  };
  auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  const ProcessResult full = report({"segmented"}, "segmented.db");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_GT(widest(full.out), 100u);  // the test needs a table wider than the limits below
  columns_ = "80";
  const ProcessResult narrow = report({"segmented"}, "segmented.db");
  columns_.clear();
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  EXPECT_LE(widest(narrow.out), 80u) << narrow.out;
  EXPECT_NE(narrow.out.find(": wider than 80 columns)"), std::string::npos);
  // Every kernel id and every header of the whole table is still printed; the label column's
  // header comes once a group.
  EXPECT_EQ(count(narrow.out, "seg.tile.b256.v4.fixed.f32.sum"),
            count(full.out, "seg.tile.b256.v4.fixed.f32.sum"));
  EXPECT_GT(count(narrow.out, "segment size"), count(full.out, "segment size"));
  const ProcessResult w60 = report({"segmented", "--width", "60"}, "segmented.db");
  ASSERT_EQ(w60.exit_code, 0) << w60.err;
  EXPECT_LE(widest(w60.out), 60u);
  columns_ = "80";
  const ProcessResult unlimited = report({"segmented", "--width", "0"}, "segmented.db");
  const fs::path file = dir_->path() / "wide.txt";
  const ProcessResult to_file = report({"segmented", "-o", file.string()}, "segmented.db");
  columns_.clear();
  EXPECT_EQ(unlimited.out, full.out);
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_EQ(db::test::read_file(file), full.out);
  for (const char* bad : {"5", "wide", "-1"}) {
    const ProcessResult r = report({"segmented", "--width", bad}, "segmented.db");
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--width '"), std::string::npos) << r.err;
  }
}

TEST_F(ReportCli, HelpListsTheKinds) {
  const ProcessResult r = report({"--help"}, "");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* k : {"best", "variants", "ladder", "heatmap", "compare", "bench", "coverage",
                        "segmented", "--layouts", "--format", "--output"})
    EXPECT_NE(r.out.find(k), std::string::npos) << k;
  // --ops lists every operator (the text is wrapped after wide_sum).
  const std::size_t ops = r.out.find("--ops LIST");
  ASSERT_NE(ops, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("sum, min, max, exact_sum, wide_sum,"), r.out.find("sum, min", ops))
      << r.out;
  EXPECT_NE(r.out.find("argmin, argmax, absmax (default: all)", ops), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tunedreduce::reports
