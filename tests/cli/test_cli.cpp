// The CLI as a person runs it: help, version, list, and bad input.

#include <gtest/gtest.h>

#include <sstream>

#include "common/json.hpp"
#include "kernels/registry.hpp"
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

}  // namespace
}  // namespace tunedreduce
