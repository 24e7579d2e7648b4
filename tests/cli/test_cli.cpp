// The CLI as a person runs it: help, version, list, and bad input.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "common/json.hpp"
#include "db/database.hpp"
#include "kernels/registry.hpp"
#include "runtime/defaults.hpp"
#include "tests/db/test_util.hpp"
#include "tests/support/kernel_list.hpp"

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
  for (const char* part :
       {"--db PATH", "--log-level LEVEL", "exit codes", " 2 bad command line", " 6 no CUDA device",
        " 9 db check found rows", " 10 an output could not", "130 interrupted", "TUNEDREDUCE_DB",
        "TUNEDREDUCE_CACHE_STATE", "NO_COLOR"})
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
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
  // A typo gets the nearest command; control characters are shown escaped.
  r = cli({"repot"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'repot' (did you mean 'report'?)"), std::string::npos)
      << r.err;
  r = cli({"db", "improt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown action 'improt' (did you mean 'import'?)"), std::string::npos)
      << r.err;
  r = cli({"bench\x1b[31m"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
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

using test::ids_of_list;

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
  // The same file by another name, and by a link to it.
  const std::filesystem::path h100_path(h100_db);
  const std::string dotted = (h100_path.parent_path() / "." / h100_path.filename()).string();
  r = cli({"deploy", "--db", h100_db, "--db", dotted});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--db " + dotted + " is given twice (the same file as --db " + h100_db +
                       ")"),
            std::string::npos)
      << r.err;
  std::filesystem::create_symlink(std::filesystem::absolute(h100_path), dir / "link.db");
  r = cli({"deploy", "--db", (dir / "link.db").string(), "--db", h100_db});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is given twice (the same file as --db " + (dir / "link.db").string()),
            std::string::npos)
      << r.err;
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
            ? std::vector<std::string>{"deploy", "--db",    h100_db,   "--db",
                                       h200_db,  "--check", TR_LIBRARY}
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

// --- one grammar (docs/cli.md): lists and element counts, the same in every command -----------

const std::string small_toml = TR_TEST_DATA "/tuner/small.toml";

std::size_t listed(std::vector<std::string> args) {
  args.insert(args.begin(), "list");
  const auto r = cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return count_lines(r.out);
}

/// "N sizes each" of tune --dry-run with small.toml and \p args; 0 when it fails.
int planned_sizes(std::vector<std::string> args) {
  args.insert(args.begin(), {"tune", "--dry-run", "--config", small_toml});
  const auto r = cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find(" sizes each");
  if (at == std::string::npos) return 0;
  const auto start = r.out.rfind(", ", at);
  return std::stoi(r.out.substr(start + 2, at - start - 2));
}

TEST(CliGrammar, ListOptionsTakeCommasAndRepeatsAndTheOldSpellings) {
  const std::size_t i32 = listed({"--dtypes", "i32"}), f32 = listed({"--dtypes", "f32"}),
                    f64 = listed({"--dtypes", "f64"});
  ASSERT_GT(i32, 0u);
  EXPECT_EQ(listed({"--dtypes", "i32,f32", "--dtypes", "f64"}), i32 + f32 + f64);
  EXPECT_EQ(listed({"--dtypes", " i32 , f32 ,f64"}), i32 + f32 + f64);
  EXPECT_EQ(listed({"--dtypes=i32,f32,f64"}), i32 + f32 + f64);
  EXPECT_EQ(listed({"--dtype", "i32", "--dtypes", "f32", "--dtype", "f64"}), i32 + f32 + f64);
  EXPECT_EQ(listed({"--dtypes", "i32,i32"}), i32);
  const std::size_t smem = listed({"--families", "smem"}),
                    vec = listed({"--families", "vectorized"});
  EXPECT_EQ(listed({"--family", "smem", "--families", "vectorized"}), smem + vec);
  const std::size_t exact = listed({"--ops", "exact_sum"});
  EXPECT_EQ(exact, 198u);  // the exact families: f32 54, f64 36, f16 54, bf16 54
  const std::size_t wide = listed({"--ops", "wide_sum"});
  EXPECT_EQ(wide, 700u);  // the 16-byte-load families of i32, u32, f32, f16, bf16: 140 each
  const std::size_t argmin = listed({"--ops", "argmin"}), argmax = listed({"--ops", "argmax"});
  EXPECT_EQ(argmin, 600u);  // vectorized, streaming, single_tile of the six 4- and 8-byte types
  EXPECT_EQ(argmax, 600u);
  EXPECT_EQ(listed({"--ops", "argmin,argmax", "--dtypes", "f16,bf16"}), 0u);
  EXPECT_EQ(listed({"--ops", "argmax", "--dtypes", "i64", "--families", "streaming"}), 40u);
  const std::size_t absmax = listed({"--ops", "absmax"});
  EXPECT_EQ(absmax, 560u);  // the 16-byte-load families of f32, f64, f16, bf16: 140 each
  EXPECT_EQ(listed({"--ops", "sum,min", "--op", "max"}),
            kernels::registry().size() - exact - wide - argmin - argmax - absmax);
  EXPECT_EQ(listed({"--op", "sum", "--op", "min", "--op", "max", "--op", "exact_sum", "--op",
                    "wide_sum", "--ops", "argmin,argmax,absmax"}),
            kernels::registry().size());
  {
    // JSON names the operator of each entry.
    const auto r =
        cli({"list", "--json", "--ops", "argmin", "--dtypes", "u32", "--families", "single_tile"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("{\"id\": \"single_tile.b64.u1.single_pass.u32.argmin\", \"family\": "
                         "\"single_tile\", \"block\": 64, \"unroll\": 1, \"smem\": \"none\", "
                         "\"finish\": \"single_pass\", \"dtype\": \"u32\", \"op\": \"argmin\"}"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("argmax"), std::string::npos) << r.out;
  }
  EXPECT_EQ(listed({"--families", "exact,exact_wide,exact_registers"}), exact);

  // report: the old spellings and the new give the same report.
  const std::vector<std::string> base{"report", "best", "--db", h100_db, "--immutable"};
  auto report = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    const auto r = cli(more);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string joined = report({"--dtypes", "i32,f32", "--ops", "sum", "--devices", "H100"});
  EXPECT_NE(joined.find("dtype i32, f32 · op sum"), std::string::npos) << joined.substr(0, 400);
  EXPECT_EQ(report({"--dtype", "i32", "--dtype", "f32", "--op", "sum", "--device", "H100"}),
            joined);
  EXPECT_EQ(report({"--dtypes", "i32", "--dtype", "f32", "--ops=sum", "--devices", "H100"}),
            joined);

  // tune: a repeated list override is one list.
  auto r = cli({"tune", "--dry-run", "--config", small_toml, "--dtypes", "f32", "--dtypes",
                "f64,i32", "--ops", "sum", "--ops", "max"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("total: 6 keys (dtype, op)"), std::string::npos) << r.out;
  r = cli({"tune", "--dry-run", "--config", small_toml, "--blocks", "128", "--blocks", "256",
           "--families", "smem"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto both = r.out;
  r = cli(
      {"tune", "--dry-run", "--config", small_toml, "--blocks", "128,256", "--families", "smem"});
  EXPECT_EQ(r.out, both);
}

TEST(CliGrammar, OldSpellingsWorkButHelpDoesNotShowThem) {
  using Names = std::vector<std::string>;
  for (const auto& [command, hidden, shown] : std::vector<std::tuple<std::string, Names, Names>>{
           {"list", {"--dtype", "--family", "--op"}, {"--dtypes", "--families", "--ops"}},
           {"report",
            {"--dtype", "--family", "--op", "--device", "--kind"},
            {"--dtypes", "--families", "--ops", "--devices"}}}) {
    const auto r = cli({command, "--help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& h : hidden)
      EXPECT_EQ(r.out.find("  " + h + " "), std::string::npos) << command << " shows " << h;
    for (const std::string& o : shown)
      EXPECT_NE(r.out.find("  " + o + " LIST"), std::string::npos) << command << " lacks " << o;
  }
}

TEST(CliGrammar, OpsHelpNamesEveryOperator) {
  for (const char* command : {"list", "report", "tune"}) {
    const auto r = cli({command, "--help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::size_t at = r.out.find("  --ops LIST");
    ASSERT_NE(at, std::string::npos) << command << ": " << r.out;
    const std::string help = r.out.substr(at, r.out.find("\n  -", at + 3) - at);
    for (Op o : all_ops)
      EXPECT_NE(help.find(op_name(o)), std::string::npos) << command << " " << op_name(o) << help;
  }
}

TEST(CliGrammar, ElementCountsInEveryFormAndCommand) {
  // tune --sizes
  EXPECT_EQ(planned_sizes({"--sizes", "1000"}), 1);
  EXPECT_EQ(planned_sizes({"--sizes", "2^20"}), 1);
  EXPECT_EQ(planned_sizes({"--sizes", "16Mi"}), 1);
  EXPECT_EQ(planned_sizes({"--sizes", "1Ki,2^11,4096"}), 3);
  EXPECT_EQ(planned_sizes({"--sizes", "1Ki,1024,2^10"}), 1);
  EXPECT_EQ(planned_sizes({"--sizes", "2^10..2^20*2"}), 11);
  EXPECT_EQ(planned_sizes({"--sizes", "2^10..2^20*4"}), 6);
  EXPECT_EQ(planned_sizes({"--sizes", "1000..5000+1000"}), 5);
  EXPECT_EQ(planned_sizes({"--sizes", "4Ki..16Ki+4Ki"}), 4);
  EXPECT_EQ(planned_sizes({"--sizes", "2^10,2^12..2^14*2,16Mi"}), 5);
  EXPECT_EQ(planned_sizes({"--sizes", "2^10", "--sizes", "2^11..2^12*2"}), 3);
  EXPECT_EQ(planned_sizes({"--sizes=2^10..2^30*2"}), 21);

  // report --n: the same size however it is written.
  std::string first;
  for (const char* n : {"16777216", "2^24", "16Mi", "16384Ki"}) {
    const auto r =
        cli({"report", "ladder", "--db", h100_db, "--immutable", "--n", n, "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << n << ": " << r.err;
    if (first.empty()) first = r.out;
    EXPECT_EQ(r.out, first) << n;
  }

  // bench --sizes: accepted (the command goes on to the next check, --l2, which fails here
  // before any GPU work).
  for (const char* sizes : {"2^12", "4Ki,2^16", "2^10..2^30*2", "1000..5000+1000", "64", "16Mi"}) {
    const auto r = cli({"bench", "--sizes", sizes, "--l2", "lukewarm"});
    EXPECT_EQ(r.exit_code, 2) << sizes;
    EXPECT_NE(r.err.find("--l2 must be"), std::string::npos) << sizes << ": " << r.err;
  }
}

TEST(CliGrammar, BadInputIsExit2NamingTheOptionAndTheValue) {
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  const std::string tune_dry = "--dry-run";
  const std::vector<Case> cases{
      // tune
      {{"tune", tune_dry, "--sizes", "12x"}, "--sizes: invalid size '12x'"},
      {{"tune", tune_dry, "--sizes", "1024..4096"},
       "--sizes: a range is FROM..TO*FACTOR or FROM..TO+STEP, got '1024..4096'"},
      {{"tune", tune_dry, "--sizes", "2^50"}, "--sizes: size 1125899906842624 is above 2^40"},
      // Past 2^63 the value saturates: the message names the text, not the saturated number.
      {{"tune", tune_dry, "--sizes", "2^99"},
       "--sizes: invalid size '2^99': at least 2^63, above 2^40"},
      {{"tune", tune_dry, "--seg-counts", "1..2^70*2"},
       "--seg-counts: invalid size '1..2^70*2': at least 2^63, above 2^40"},
      {{"tune", tune_dry, "--sizes", "2^10,2^50..2^51*2"}, "--sizes: invalid size '2^50'"},
      {{"tune", tune_dry, "--sizes", "2^10,,2^12"}, "--sizes: empty item in '2^10,,2^12'"},
      {{"tune", tune_dry, "--sizes", "16M"}, "did you mean 16Mi?"},
      {{"tune", tune_dry, "--dtypes", "f32,f8"}, "--dtypes: unknown element type 'f8'"},
      {{"tune", tune_dry, "--blocks", "128", "--blocks", "abc"},
       "--blocks: 'abc' is not an integer"},
      {{"tune", tune_dry, "--strategy", "random", "--strategy", "halving"},
       "'--strategy' cannot be specified more than once"},
      {{"tune", tune_dry, "--devices", "abc"}, "--devices: 'abc' is not a device ordinal or 'all'"},
      {{"tune", tune_dry, "--devices", "0", "--devices", "all"},
       "--devices: 'all' is not a device ordinal ('all' stands alone)"},
      {{"tune", tune_dry, "--devices", "0,,1"}, "--devices: empty item in '0,,1'"},
      // bench: the old exponents are refused with the new spelling
      {{"bench", "--sizes", "12,16"},
       "--sizes 12: bench sizes are element counts now; did you mean 2^12?"},
      {{"bench", "--sizes", "2^10", "--sizes", "16"},
       "--sizes 16: bench sizes are element counts now; did you mean 2^16?"},
      {{"bench", "--sizes", "24-30"},
       "--sizes 24-30: bench sizes are element counts now; for the exponents of two 24 to 30 write "
       "2^24..2^30*2"},
      {{"bench", "--sizes", "2^35"}, "--sizes: invalid size '2^35'"},
      {{"bench", "--sizes", "0x10"}, "--sizes: invalid size '0x10'"},
      {{"bench", "--sizes", ""}, "--sizes: empty value"},
      {{"bench", "--dtypes", "i32,i8"}, "--dtypes: unknown element type 'i8'"},
      {{"bench", "--ops", "sum", "--ops", "avg"}, "--ops: unknown operator 'avg'"},
      {{"bench", "--dtypes", "i32,"}, "--dtypes: empty item in 'i32,'"},
      {{"bench", "--dtypes", "i32,u64", "--ops", "exact_sum"},
       "--ops exact_sum: defined for f32, f64, f16 and bf16 only; --dtypes selects i32, u64"},
      {{"tune", tune_dry, "--dtypes", "i64", "--ops", "exact_sum"},
       "operator 'exact_sum' is defined for f32, f64, f16 and bf16 only; space.dtypes selects i64"},
      {{"tune", tune_dry, "--dtypes", "f16", "--ops", "argmin"},
       "--ops: operator 'argmin' is defined for i32, u32, i64, u64, f32 and f64 only; "
       "space.dtypes selects f16"},
      {{"tune", tune_dry, "--ops", "argmax", "--families", "smem"},
       "selects no compiled entry for f32 argmax (only the families vectorized, streaming and "
       "single_tile implement it, with finishes two_pass and single_pass)"},
      // report
      {{"report", "ladder", "--db", h100_db, "--n", "2^10,2^12"},
       "--n: takes one element count, not a list or range: '2^10,2^12'"},
      {{"report", "ladder", "--db", h100_db, "--n", "2^41"}, "--n: invalid size '2^41'"},
      {{"report", "ladder", "--db", h100_db, "--n", "16M"}, "--n: invalid size '16M'"},
      {{"report", "best", "--db", h100_db, "--dtypes", "i32,f8"},
       "--dtypes: unknown element type 'f8'"},
      {{"report", "best", "--db", h100_db, "--dtype", "f8"}, "unknown element type 'f8'"},
      {{"report", "best", "--db", h100_db, "--ops", "prod"}, "--ops: unknown op 'prod'"},
      {{"report", "best", "--db", h100_db, "--ops", "arg_min"},
       "--ops: unknown op 'arg_min' (choose from sum, min, max, exact_sum, wide_sum, argmin, "
       "argmax, absmax)"},
      {{"report", "heatmap", "--db", h100_db, "--families", "fastest"},
       "--families: unknown family 'fastest'"},
      {{"report", "best", "--db", h100_db, "--immutable", "--devices", "A100"},
       "--devices: unknown device 'A100'"},
      {{"report", "best", "--db", h100_db, "--format", "xml"}, "--format: unknown format 'xml'"},
      {{"report", "best", "--db", h100_db, "--l2", "hot"}, "--l2: unknown L2 mode 'hot'"},
      // list
      {{"list", "--families", "smem,fastest"}, "--families: unknown family 'fastest'"},
      {{"list", "--dtype", "int"}, "--dtypes: unknown element type 'int'"},
      {{"list", "--ops", "sum,,max"}, "--ops: empty item in 'sum,,max'"},
      {{"list", "--ops", "argmn"},
       "--ops: unknown operator 'argmn' (choose from sum, min, max, exact_sum, wide_sum, argmin, "
       "argmax, absmax)"},
      {{"list", "--op", ""}, "--op: empty value"},
      // every command
      {{"list", "--log-level", "loud"}, "--log-level: unknown log level 'loud'"},
      {{"report", "best", "--log-level", "loud"}, "--log-level: unknown log level 'loud'"},
      {{"db", "info", "--log-level", "loud"}, "--log-level: unknown log level 'loud'"},
      {{"deploy", "--log-level", "loud"}, "--log-level: unknown log level 'loud'"},
      {{"tune", tune_dry, "--log-level", "loud"}, "--log-level: unknown log level 'loud'"},
      {{"completion", "zsh"}, "unknown shell 'zsh'"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    if (args[0] == "tune") args.insert(args.end(), {"--config", small_toml});
    const auto r = cli(args);
    EXPECT_EQ(r.exit_code, 2) << c.said << "\n" << r.err;
    EXPECT_NE(r.err.find(c.said), std::string::npos) << r.err;
    // The command, and for db its action: "tunedreduce db info: error: ".
    const std::string who = c.args[0] == "db" ? "db " + c.args[1] : c.args[0];
    EXPECT_TRUE(r.err.starts_with("tunedreduce " + who + ": error: ")) << r.err;
  }
}

TEST(CliGrammar, EveryCommandsHelpShowsItsUsageAndOptions) {
  struct Help {
    std::vector<std::string> args;
    std::vector<std::string> parts;
  };
  const std::vector<Help> helps{
      {{"list"},
       {"usage: tunedreduce list", "--families LIST", "--dtypes LIST", "--ops LIST", "--json"}},
      {{"tune"},
       {"usage: tunedreduce tune", "--sizes COUNTS", "--dtypes LIST", "--devices LIST|all",
        "--strategy exhaustive|random|halving", "--l2 cold|warm", "may\nbe repeated"}},
      {{"bench"},
       {"usage: tunedreduce bench", "--sizes COUNTS", "--dtypes LIST", "--ops LIST",
        "--l2 cold|clean|dirty|warm", "element counts", "2^10..2^30*2"}},
      {{"report"},
       {"usage: tunedreduce report KIND", "--devices LIST", "--dtypes LIST", "--ops LIST",
        "--families LIST", "--n N", "--format table|markdown|csv|json|html"}},
      {{"deploy"}, {"usage: tunedreduce deploy", "--db PATH", "--check LIB"}},
      {{"db", "check"}, {"usage: tunedreduce db check", "--library LIB", "--db PATH"}},
      {{"db", "merge"}, {"usage: tunedreduce db merge", "--into OUT"}},
      {{"completion"}, {"usage: tunedreduce completion [bash]", "--output FILE"}},
      {{"man"}, {"usage: tunedreduce man", "--output FILE"}},
  };
  for (const Help& h : helps) {
    std::vector<std::string> args = h.args;
    args.push_back("--help");
    const auto r = cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& part : h.parts)
      EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
    if (h.args[0] != "completion" && h.args[0] != "man") {
      EXPECT_NE(r.out.find("--log-level LEVEL"), std::string::npos) << r.out;
    }
  }
  // The top-level help says where the grammar is.
  const auto top = cli({"--help"});
  EXPECT_NE(top.out.find("element counts (--sizes, --n)"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("--dtypes i32,f32 --dtypes f64"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("'tunedreduce completion bash'\nand 'tunedreduce man'"), std::string::npos)
      << top.out;
}

}  // namespace
}  // namespace tunedreduce
