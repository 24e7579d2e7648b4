// `tunedreduce deploy --tolerance` as a person runs it: the deployment database, the list that
// serves it, what it says, and bad input.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tests/db/test_util.hpp"
#include "tests/support/kernel_list.hpp"

namespace tunedreduce {
namespace {

using db::test::ProcessResult;
using db::test::TempDir;

ProcessResult cli(std::vector<std::string> args) {
  args.insert(args.begin(), TR_CLI);
  return db::test::run_process(args);
}

using test::ids_of_list;

const std::string h100_db = TR_TEST_DATA "/h100-sample.db";
const std::string h200_db = TR_TEST_DATA "/h200-sample.db";

TEST(CliDeployBudget, WritesTheDeploymentDatabaseAndTheListThatServesIt) {
  TempDir dir;
  const std::string out = (dir / "deploy.db").string();
  auto r =
      cli({"deploy", "--db", h100_db, "--db", h200_db, "--tolerance", "2%", "--deploy-db", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> ids = ids_of_list(r.out);
  // The list is what the deployment database's rows and the built-in rules need: the list
  // `deploy` writes for that database alone.
  auto plain = cli({"deploy", "--db", out});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(ids, ids_of_list(plain.out));
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  // Fewer kernels than without a budget.
  auto full = cli({"deploy", "--db", h100_db, "--db", h200_db});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_LT(ids.size(), ids_of_list(full.out).size());
  // Every winner row of the deployment database names a kernel of the list.
  const std::set<std::string> listed(ids.begin(), ids.end());
  db::Database d = db::Database::open_reader(out);
  ASSERT_EQ(d.winners().size(), 51u);
  for (const db::WinnerRecord& w : d.winners())
    EXPECT_TRUE(listed.count(w.kernel_id)) << w.kernel_id;
  // What it says: the budget, the counts, each device's worst slowdown, and the file.
  for (const std::string& part : std::vector<std::string>{
           "a kernel budget of 2.00 %: the winner rows name ", "winner rows changed kernel",
           "NVIDIA H100 80GB HBM3 (09b523d0aee380fb): 25 rows, ",
           "NVIDIA H200 (10abb470d82462b9): 26 rows, ",
           "worst measured slowdown versus the row's winner ", "deployment database: " + out})
    EXPECT_NE(r.err.find(part), std::string::npos) << part << "\n" << r.err;
  EXPECT_NE(r.out.find("with a kernel budget of 2.00 % over\n#   " + h100_db + "\n#   " + h200_db),
            std::string::npos)
      << r.out;
  // The database is never overwritten.
  r = cli({"deploy", "--db", h100_db, "--tolerance", "2%", "--deploy-db", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;  // as `db merge --into` an existing file
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
}

TEST(CliDeployBudget, BadInputNamesWhatWasWrong) {
  TempDir dir;
  const std::string out = (dir / "deploy.db").string();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--tolerance", "1%"}, "give --deploy-db OUT"},
           {{"--deploy-db", out}, "give --tolerance too"},
           {{"--tolerance", "-1%", "--deploy-db", out}, "--tolerance '-1%': negative"},
           {{"--tolerance", "1 percent", "--deploy-db", out},
            "--tolerance '1 percent': not a number"},
           {{"--tolerance", "1%", "--deploy-db", out, "--check", "x.so"}, "not both"}}) {
    std::vector<std::string> args = {"deploy", "--db", h100_db};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = cli(args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace tunedreduce
