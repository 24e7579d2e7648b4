// The CLI as a person runs it: help, version, list, and bad input.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "common/json.hpp"
#include "db/database.hpp"
#include "kernels/registry.hpp"
#include "runtime/defaults.hpp"
#include "tests/db/test_util.hpp"

namespace tunedreduce {
namespace {

using db::test::ProcessResult;
using db::test::run_process;

ProcessResult cli(std::vector<std::string> args) {
  args.insert(args.begin(), TR_CLI);
  return run_process(args);
}

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(Cli, VersionNamesTheManifest) {
  auto r = cli({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("tunedreduce 0."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kernels::manifest_hash()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::string("CUDA architectures ") + TR_EXPECTED_ARCHS + ")"),
            std::string::npos)
      << r.out;
}

TEST(Cli, HelpListsCommands) {
  auto r = cli({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  // The options every command takes, every exit code and the environment.
  for (const char* part : {"--db PATH", "--log-level LEVEL", "exit codes", " 2 bad command line",
                           " 6 no CUDA device", " 9 db check found rows", " 10 an output could not",
                           "130 interrupted", "TUNEDREDUCE_DB", "TUNEDREDUCE_CACHE_STATE",
                           "NO_COLOR"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  EXPECT_NE(r.out.find("list"), std::string::npos);
  EXPECT_NE(r.out.find("db"), std::string::npos);
  auto none = cli({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("usage"), std::string::npos);
}

TEST(Cli, UnknownCommandIsAUsageError) {
  auto r = cli({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos) << r.err;
}

TEST(CliList, OneLineAnEntry) {
  auto r = cli({"list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), kernels::registry().size());
  std::istringstream in(r.out);
  std::string line;
  std::size_t i = 0;
  while (std::getline(in, line)) EXPECT_EQ(line, kernels::registry()[i++].id);
}

TEST(CliList, FiltersAndJson) {
  auto r = cli({"list", "--json", "--family", "smem", "--dtype", "double", "--op", "max"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json doc = Json::parse(r.out);
  EXPECT_EQ(doc.find("manifest_hash")->as_string(), kernels::manifest_hash());
  const auto& entries = doc.find("entries")->as_array();
  EXPECT_EQ(entries.size(), 100u);  // 5 blocks x 5 unrolls x 2 modes x 2 finishes
  for (const Json& e : entries) {
    EXPECT_EQ(e.find("family")->as_string(), "smem");
    EXPECT_EQ(e.find("dtype")->as_string(), "f64");
    EXPECT_EQ(e.find("op")->as_string(), "max");
    const auto* entry = kernels::find(e.find("id")->as_string());
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(e.find("block")->as_int(), entry->params.block);
    EXPECT_EQ(e.find("unroll")->as_int(), entry->params.unroll);
    EXPECT_EQ(e.find("smem")->as_string(), kernels::smem_mode_name(entry->params.smem));
    EXPECT_EQ(e.find("finish")->as_string(), kernels::finish_name(entry->params.finish));
  }
  auto all = cli({"list", "--json"});
  ASSERT_EQ(all.exit_code, 0);
  EXPECT_EQ(Json::parse(all.out).find("entries")->as_array().size(), kernels::registry().size());
}

TEST(CliList, BadFiltersNameTheProblem) {
  auto r = cli({"list", "--family", "fastest"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown family 'fastest'"), std::string::npos) << r.err;
  r = cli({"list", "--dtype", "int"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'int'"), std::string::npos) << r.err;
  r = cli({"list", "--op", "avg"});
  EXPECT_EQ(r.exit_code, 2);
  r = cli({"list", "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bogus"), std::string::npos) << r.err;
}

// --- deploy ----------------------------------------------------------------------------------

std::set<std::string> winner_kernels(const std::string& path) {
  db::Database d = db::Database::open_reader(path);
  std::set<std::string> ids;
  for (const db::WinnerRecord& w : d.winners()) ids.insert(w.kernel_id);
  return ids;
}

std::vector<std::string> ids_of_list(const std::string& text) {
  std::vector<std::string> ids;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') ids.push_back(line);
  return ids;
}

const std::string h100_db = TR_TEST_DATA "/h100-sample.db";
const std::string h200_db = TR_TEST_DATA "/h200-sample.db";

TEST(CliDeploy, ListsEveryWinnersKernelAndEveryBuiltInRulesOnceSorted) {
  auto r = cli({"deploy", "--db", h100_db, "--db", h200_db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> expected = winner_kernels(h100_db);
  const std::set<std::string> h200 = winner_kernels(h200_db);
  ASSERT_FALSE(expected.empty());
  ASSERT_FALSE(h200.empty());
  expected.insert(h200.begin(), h200.end());
  const std::size_t winners = expected.size();
  for (const runtime::DefaultRule& rule : runtime::builtin_default_rules())
    expected.insert(rule.kernel_id);
  const std::vector<std::string> ids = ids_of_list(r.out);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()), expected);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(ids.size(), expected.size());  // no id twice
  for (const std::string& id : ids) EXPECT_NE(kernels::find(id), nullptr) << id;
  // The header says where the list came from.
  EXPECT_NE(r.out.find("h100-sample.db: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("h200-sample.db: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kernels::manifest_hash()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# " + std::to_string(expected.size()) + " kernels (" +
                       std::to_string(winners) + " of winners"),
            std::string::npos)
      << r.out;
}

TEST(CliDeploy, WritesAFileOnlyWhenAsked) {
  db::test::TempDir dir;
  const std::string out = (dir / "kernels.list").string();
  auto r = cli({"deploy", "--db", h100_db, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("kernels written to " + out), std::string::npos) << r.err;
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), cli({"deploy", "--db", h100_db}).out);
}

TEST(CliDeploy, BadInputNamesWhatWasWrong) {
  db::test::TempDir dir;
  auto r = cli({"deploy", "--db", h100_db, "--db", h100_db});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is given twice"), std::string::npos) << r.err;
  r = cli({"deploy", "--db", (dir / "missing.db").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("missing.db"), std::string::npos) << r.err;
  r = cli({"deploy", "--db", h100_db, "--check", (dir / "nothing.so").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot load the library '" + (dir / "nothing.so").string() + "'"),
            std::string::npos)
      << r.err;
  r = cli({"deploy", "--db", h100_db, "--check", "x.so", "-o", (dir / "k.list").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not both"), std::string::npos) << r.err;
  // A shared library that is not a libtunedreduce.
  r = cli({"deploy", "--db", h100_db, "--check", "libm.so.6"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not a libtunedreduce that lists its kernels"), std::string::npos)
      << r.err;
}

TEST(CliDeploy, TheFullLibraryServesEveryRow) {
  for (const char* command : {"deploy", "db"}) {
    std::vector<std::string> args =
        std::string(command) == "deploy"
            ? std::vector<std::string>{"deploy", "--db", h100_db, "--db", h200_db, "--check", TR_LIBRARY}
            : std::vector<std::string>{"db", "check", "--db", h200_db, "--library", TR_LIBRARY};
    auto r = cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(std::to_string(kernels::registry().size()) + " kernels"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("all served"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("result:    ok"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace tunedreduce
