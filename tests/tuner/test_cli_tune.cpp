// `tunedreduce tune` as a person runs it: the dry-run plan, replay, exit codes of bad input.

#include <gtest/gtest.h>

#include "synthetic.hpp"
#include "common/json.hpp"
#include "tests/db/test_util.hpp"
#include "tuner/estimate.hpp"
#include "tuner/config.hpp"
#include "tuner/search_space.hpp"

namespace tunedreduce {
namespace {

using db::test::ProcessResult;
using db::test::run_process;
using db::test::TempDir;

const std::string data = TR_TUNER_DATA;

ProcessResult tune(std::vector<std::string> args) {
  args.insert(args.begin(), {TR_CLI, "tune"});
  return run_process(args, {"TUNEDREDUCE_DB=/nonexistent/should-not-be-used.db"});
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(CliTune, HelpListsTheOverrides) {
  const auto r = tune({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* flag :
       {"--config",       "--dry-run",      "--json",         "--replay",    "--devices",
        "--retune",       "--families",     "--blocks",       "--sizes",     "--strategy",
        "--l2",           "--repeats",      "--bisect-depth", "--db",        "--log-level",
        "--seg-keys",     "--seg-families", "--seg-layouts",  "--seg-sizes", "--seg-counts",
        "--seg-max-total"})
    EXPECT_HAS(r.out, flag);
  const auto top = run_process({TR_CLI, "--help"});
  EXPECT_HAS(top.out, "tune");
}

TEST(CliTune, DryRunPrintsThePlan) {
  const auto r = tune({"--dry-run", "--config", data + "/small.toml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.out, "configuration: " + data + "/small.toml (config hash ");
  EXPECT_HAS(r.out, "plan: strategy halving, L2 cold");
  EXPECT_HAS(r.out, "estimate model: per measurement");
  EXPECT_HAS(r.out, "f32   sum           60      8           960");
  EXPECT_HAS(r.out, "i64   sum           60      8           960");
  EXPECT_HAS(r.out, "total: 2 keys (dtype, op), 120 candidates, 8 sizes each, 1948 measurements");
}

// --dry-run --json: the plan's facts as the text form gives them.
TEST(CliTune, DryRunAsJsonHasTheTextFormsFigures) {
  const auto text = tune({"--dry-run", "--config", TR_DEFAULT_TUNE_TOML});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const auto r = tune({"--dry-run", "--json", "--config", TR_DEFAULT_TUNE_TOML});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j.find("configuration")->as_string(), std::string(TR_DEFAULT_TUNE_TOML));
  EXPECT_HAS(text.out, "(config hash " + j.find("config_hash")->as_string() + ")");
  EXPECT_EQ(j.find("strategy")->as_string(), "halving");
  EXPECT_EQ(j.find("l2_mode")->as_string(), "cold");
  const Json& total = *j.find("total");
  EXPECT_EQ(total.find("keys")->as_int(), 39);
  EXPECT_EQ(total.find("candidates")->as_int(), 10500);
  EXPECT_EQ(total.find("segmented_keys")->as_int(), 6);
  EXPECT_EQ(total.find("segmented_points")->as_int(), 324);
  EXPECT_EQ(total.find("segmented_candidates")->as_int(), 3954);
  EXPECT_HAS(text.out, std::to_string(total.find("measurements")->as_int()) +
                           " measurements, estimated " +
                           tuner::format_duration(total.find("estimate_s")->as_double()));
  const Json::Array& keys = j.find("keys")->as_array();
  ASSERT_EQ(keys.size(), 39u);
  double sum = 0;
  for (const Json& k : keys) sum += k.find("estimate_s")->as_double();
  for (const Json& k : j.find("segmented")->as_array()) {
    sum += k.find("estimate_s")->as_double();
    if (k.find("dtype")->as_string() == "f32" && k.find("op")->as_string() == "sum") {
      EXPECT_EQ(k.find("layout")->as_string(), "fixed");
      EXPECT_EQ(k.find("points")->as_int(), 54);
      EXPECT_EQ(k.find("candidates")->as_int(), 660);
      EXPECT_EQ(k.find("measurements")->as_int(), 876);
      EXPECT_EQ(k.find("bisection_measurements")->as_int(), 246);
    }
  }
  EXPECT_LE(sum, total.find("estimate_s")->as_double());  // the workers' start on top
}

TEST(CliTune, DryRunOfTheDefaultFileWithOverrides) {
  auto r = tune({"--dry-run", "--config", TR_DEFAULT_TUNE_TOML});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.out,
             "total: 39 keys (dtype, op), 10500 candidates, 21 sizes each; 6 segmented keys and "
             "layouts, 324 grid points, 3954 candidates over them, ");
  // The six segmented keys: 54 grid points each, halving over 12 or 13 candidates a point.
  EXPECT_HAS(r.out, "\nf32   sum      fixed             660      54           876         246");
  EXPECT_HAS(r.out, "\nf64   sum      fixed             654      54           870         228");
  r = tune({"--dry-run", "--config", TR_DEFAULT_TUNE_TOML, "--strategy", "exhaustive", "--dtypes",
            "f32", "--ops", "sum,max", "--sizes", "2^10..2^20*2", "--l2", "warm", "--bisect",
            "off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.out, "plan: strategy exhaustive, L2 warm");
  EXPECT_HAS(r.out, "bisection off");
  EXPECT_HAS(r.out, "f32   max          440     11          4671");
  // The file's segmented keys too: every candidate of every grid point once.
  EXPECT_HAS(r.out,
             "total: 2 keys (dtype, op), 880 candidates, 11 sizes each; 6 segmented keys and "
             "layouts, 324 grid points, 3954 candidates over them, 13296 measurements");
  // Without them (an empty --seg-keys), the plan of the keys alone.
  r = tune({"--dry-run", "--config", TR_DEFAULT_TUNE_TOML, "--strategy", "exhaustive", "--dtypes",
            "f32", "--ops", "sum,max", "--sizes", "2^10..2^20*2", "--l2", "warm", "--bisect", "off",
            "--seg-keys", ""});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.out, "total: 2 keys (dtype, op), 880 candidates, 11 sizes each, 9342 measurements");
  EXPECT_EQ(r.out.find("segmented"), std::string::npos) << r.out;
  // Other segmented keys, layouts and grid from the flags; a bad key is exit 2, named.
  r = tune({"--dry-run", "--config", TR_DEFAULT_TUNE_TOML, "--seg-keys", "i64.min", "--seg-layouts",
            "fixed,offsets32", "--seg-sizes", "2^4,2^8", "--seg-counts", "2^10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.out, "\ni64   min  fixed");
  EXPECT_HAS(r.out, "\ni64   min  offsets32");
  EXPECT_HAS(r.out, "; 2 segmented keys and layouts, 4 grid points, ");
  r = tune({"--dry-run", "--config", TR_DEFAULT_TUNE_TOML, "--seg-keys", "f32.sum,f16.sum"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, "tunedreduce tune: error: --seg-keys: 'f16.sum' has no segmented kernels");
}

// examples/tune-exact.toml, the exact keys' tune the docs recommend (docs/tuning.md): it loads,
// and selects the four exact_sum keys and every exact candidate.
TEST(CliTune, DryRunOfTheExactExample) {
  const auto r = tune({"--dry-run", "--config", TR_EXACT_TUNE_TOML});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.out, "\nf32   exact_sum          54     21");
  EXPECT_HAS(r.out, "\nf64   exact_sum          36     21");
  EXPECT_HAS(r.out, "\nf16   exact_sum          54     21");
  EXPECT_HAS(r.out, "\nbf16  exact_sum          54     21");
  EXPECT_HAS(r.out, "total: 4 keys (dtype, op), 198 candidates, 21 sizes each");
}

TEST(CliTune, DryRunOfArgminAndArgmax) {
  // small.toml's families: vectorized alone implements them (blocks 128, 256, 512 x unrolls 2,
  // 4, 8 x two finishes: 18 candidates a key).
  auto r = tune({"--dry-run", "--config", data + "/small.toml", "--ops", "argmin,argmax",
                 "--dtypes", "i32,f64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.out, "\ni32   argmin          18      8");
  EXPECT_HAS(r.out, "\nf64   argmax          18      8");
  EXPECT_HAS(r.out, "total: 4 keys (dtype, op), 72 candidates, 8 sizes each");
  // The half types have no argmin: asked for with them alone, exit 2 naming the types.
  r = tune({"--dry-run", "--config", data + "/small.toml", "--ops", "argmin", "--dtypes", "bf16"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err,
             "--ops: operator 'argmin' is defined for i32, u32, i64, u64, f32 and f64 only; "
             "space.dtypes selects bf16");
}

TEST(CliTune, InvalidConfigurationIsExit2WithThePosition) {
  auto r = tune({"--dry-run", "--config", data + "/block_96.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err,
             "tunedreduce tune: error: " + data +
                 "/block_96.toml:2:15: space.blocks[1]: block size 96 is not in the registry");
  r = tune({"--dry-run", "--config", data + "/malformed.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, data + "/malformed.toml:1:");
  EXPECT_HAS(r.err, "syntax error");
  r = tune({"--dry-run", "--config", data + "/small.toml", "--blocks", "128,2048"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, "tunedreduce tune: error: --blocks: block size 2048 is above 1024");
  r = tune({"--dry-run", "--config", data + "/small.toml", "--unrolls", "3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, "--unrolls: unroll 3 is not in the registry for any family");
  r = tune({"--dry-run", "--config", data + "/missing.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, "missing.toml: no such file");
}

TEST(CliTune, WithoutConfigAndWithoutTuneTomlHereTheInstalledOneOrAClearError) {
  // The build tree has no BIN/../share/tunedreduce/tune.toml (an install has: the consumer test
  // checks that one is found), so from a folder without tune.toml the error names both places.
  TempDir dir;
  const auto r = run_process(
      {"/bin/sh", "-c",
       "cd '" + dir.path().string() + "' && exec '" + std::string(TR_CLI) + "' tune --dry-run"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_HAS(r.err, "tunedreduce tune: error: no tune.toml in the current folder nor at ");
  EXPECT_HAS(r.err, "/share/tunedreduce/tune.toml (the installed one): name one with --config");
  // With a tune.toml in the folder, that one.
  db::test::write_file(dir / "tune.toml", "[space]\nfamilies = [\"smem\"]\n");
  const auto here = run_process(
      {"/bin/sh", "-c",
       "cd '" + dir.path().string() + "' && exec '" + std::string(TR_CLI) + "' tune --dry-run"});
  EXPECT_EQ(here.exit_code, 0) << here.err;
  EXPECT_HAS(here.out, "configuration: tune.toml (config hash ");
}

TEST(CliTune, BadFlagsAreExit2) {
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{"--frobnicate"},
                                             {"--dry-run", "--replay", "x.db"},
                                             {"--dry-run", "--progress", "sideways"},
                                             {"--dry-run", "--log-level", "loud"},
                                             {"--dry-run", "--repeats", "many"},
                                             {"--dry-run", "--sizes", "1024..4096"},
                                             {"--replay-device", "H100", "--dry-run"},
                                             {"--dry-run", "--blocks"}}) {
    args.push_back("--config");
    args.push_back(data + "/small.toml");
    const auto r = tune(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << "\n" << r.err;
    EXPECT_HAS(r.err, "tunedreduce tune: error: ");
  }
}

TEST(CliTune, ReplayPrintsTheWinners) {
  TempDir dir;
  const std::string path = (dir / "replay.db").string();
  {
    const auto cfg = tuner::validate_config(tuner::parse_config_file(data + "/small.toml"));
    auto mem = db::Database::create_in_memory();
    std::vector<std::string> ids;
    for (const auto& k : tuner::enumerate_space(cfg.space))
      ids.insert(ids.end(), k.candidates.begin(), k.candidates.end());
    tuner::test::fill_database(mem, ids, cfg.space.sizes);
    mem.connection().exec("VACUUM INTO '" + path + "'");
  }
  const auto r = tune({"--config", data + "/small.toml", "--replay", path, "--progress", "lines"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.err, "replaying 1920 measurements (L2 cold) of NVIDIA H100 80GB HBM3");
  EXPECT_HAS(r.err, "tune: f32 sum n=2^10: ");
  EXPECT_HAS(r.err, "tune: i64 sum done: ");
  EXPECT_HAS(r.out, "winners on NVIDIA H100 80GB HBM3 (");
  EXPECT_HAS(r.out, "replayed), cold L2:");
  EXPECT_HAS(r.out, "dtype  op    n from");
  EXPECT_HAS(r.out, "f32    sum        1  ");
  EXPECT_HAS(r.out, "1099511627776");
  EXPECT_HAS(r.out, "runner-up");
  // Bisection midpoints are not recorded in this database: reported, not fatal.
  EXPECT_HAS(r.err, "requests had no recorded measurement (treated as failed)");

  // --json: the same winners, an array of one object a device model, the progress on stderr.
  const auto j =
      tune({"--config", data + "/small.toml", "--replay", path, "--progress", "lines", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_HAS(j.err, "tune: i64 sum done: ");
  const Json doc = Json::parse(j.out);
  ASSERT_EQ(doc.as_array().size(), 1u);
  const Json& dev = doc.as_array()[0];
  EXPECT_HAS(dev.find("device")->as_string(), "NVIDIA H100 80GB HBM3 (");
  EXPECT_EQ(dev.find("l2_mode")->as_string(), "cold");
  EXPECT_TRUE(dev.find("complete")->as_bool());
  const Json::Array& keys = dev.find("keys")->as_array();
  ASSERT_EQ(keys.size(), 2u);
  for (const Json& k : keys) {
    const Json::Array& iv = k.find("intervals")->as_array();
    ASSERT_FALSE(iv.empty());
    EXPECT_EQ(iv.front().find("n_lo")->as_int(), 1);
    EXPECT_EQ(iv.back().find("n_hi")->as_int(), std::int64_t{1099511627776});
    for (std::size_t i = 1; i < iv.size(); ++i)  // the intervals tile the sizes
      EXPECT_EQ(iv[i].find("n_lo")->as_int(), iv[i - 1].find("n_hi")->as_int() + 1);
    for (const Json& w : iv) {
      // Every winner, with its time, is a row of the text table.
      EXPECT_HAS(r.out, w.find("kernel")->as_string());
      EXPECT_GT(w.find("median_us")->as_double(), 0.0);
    }
  }
  EXPECT_TRUE(dev.find("segmented")->as_array().empty());

  // Warm L2 was never recorded: no request has a measurement, which is an error (exit 1) that
  // says why, not an empty winners table.
  const auto warm = tune(
      {"--config", data + "/small.toml", "--replay", path, "--l2", "warm", "--progress", "off"});
  EXPECT_EQ(warm.exit_code, 1) << warm.err;
  EXPECT_HAS(warm.err, "none of the ");
  EXPECT_HAS(warm.err,
             " requests of this configuration has a recorded measurement (the file holds 0 of "
             "NVIDIA H100 80GB HBM3 (");
  EXPECT_HAS(warm.err,
             ") with L2 warm); replay the configuration that recorded them, in their L2 mode");
  EXPECT_EQ(warm.out, "");
}

TEST(CliTune, ReplayOfTheRecordedH100Database) {
  const auto r =
      tune({"--config", TR_TEST_DATA "/h100-sample.toml", "--replay",
            TR_TEST_DATA "/h100-sample.db", "--strategy", "halving", "--progress", "off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_HAS(r.err, "replaying 12180 measurements (L2 cold) of NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.err.find("no recorded measurement"), std::string::npos) << r.err;  // bisection off
  for (const char* key : {"i32    sum", "i32    max", "f32    sum", "f32    max"})
    EXPECT_HAS(r.out, key);
  EXPECT_HAS(r.out, "1099511627776");
}

TEST(CliTune, ReplayOfAMissingDatabaseIsExit3) {
  const auto r = tune({"--config", data + "/small.toml", "--replay", "/nonexistent/x.db"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_HAS(r.err, "tunedreduce tune: error: ");
}

TEST(CliTune, ARealRunWithoutAGpuIsExit6) {
  TempDir dir;
  const auto r = tune({"--config", data + "/small.toml", "--db", (dir / "t.db").string()});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_HAS(r.err, "tunedreduce tune: error: ");
}

}  // namespace
}  // namespace tunedreduce
