// The database side of a tune run (tuner/session.hpp): the winners of complete keys and the
// run's end, on a database file; the tuning itself is replayed from recorded measurements.

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "db/database.hpp"
#include "kernels/manifest.hpp"
#include "synthetic.hpp"
#include "tests/db/test_util.hpp"
#include "tuner/config.hpp"
#include "tuner/driver.hpp"
#include "tuner/replay_runner.hpp"
#include "tuner/search_space.hpp"
#include "tuner/session.hpp"

namespace tunedreduce::tuner {
namespace {

namespace fs = std::filesystem;

TuneConfig small() { return validate_config(parse_config_file(TR_TUNER_DATA "/small.toml")); }

/// A run of the session's kind begun in \p database; its id.
std::int64_t begin_test_run(db::Database& database) {
  db::RunInfo info;
  info.tool_version = "test";
  info.manifest_hash = "0000000000000000";
  info.config_hash = "session";
  info.host = "test-host";
  return database.begin_run(info);
}

/// A database file with every candidate of small.toml measured at its sizes (a finished run),
/// the outcome of tuning it again by replay, and a second run that the session ends.
struct Tuned {
  db::test::TempDir dir;
  fs::path path = dir / "t.db";
  Recording rec;
  TuneOutcome outcome;

  Tuned() {
    const TuneConfig c = small();
    db::Database database = db::Database::open_writer(path);
    std::vector<std::string> ids;
    for (const KeySpace& k : enumerate_space(c.space))
      ids.insert(ids.end(), k.candidates.begin(), k.candidates.end());
    rec.device_id = test::fill_database(database, ids, c.space.sizes);
    rec.run_id = begin_test_run(database);
    rec.driver_version = rec.runtime_version = 13000;
    ReplayOptions ro;
    ro.device_id = rec.device_id;
    ro.policy = c.measure;
    ReplayRunner runner(database, ro);
    outcome = run_tuning(c, runner);
  }

  db::RunStatus status() const {
    db::Database database = db::Database::open_reader(path);
    for (const db::RunRecord& r : database.runs())
      if (r.id == rec.run_id) return r.status;
    ADD_FAILURE() << "run " << rec.run_id << " is not in the database";
    return db::RunStatus::running;
  }
  /// The winners' (dtype, op) of the session's run.
  std::set<std::pair<DType, Op>> keys_with_winners() const {
    db::Database database = db::Database::open_reader(path);
    std::set<std::pair<DType, Op>> keys;
    for (const db::WinnerRecord& w : database.winners(rec.device_id)) keys.insert({w.dtype, w.op});
    return keys;
  }
};

TEST(Session, AFinishedRunStoresTheWinnersOfEveryKeyAndEndsFinished) {
  Tuned t;
  ASSERT_EQ(t.outcome.keys.size(), 2u);
  EXPECT_EQ(t.status(), db::RunStatus::running);
  EXPECT_TRUE(t.keys_with_winners().empty());
  const RunEnded ended = TuningSession(t.path).end(t.rec, t.outcome);
  EXPECT_EQ(ended.status, db::RunStatus::finished);
  EXPECT_EQ(ended.keys_stored, 2u);
  EXPECT_EQ(t.status(), db::RunStatus::finished);
  EXPECT_EQ(t.keys_with_winners().size(), 2u);
  db::Database database = db::Database::open_reader(t.path);
  std::size_t intervals = 0;
  for (const KeyOutcome& k : t.outcome.keys) intervals += k.bisect.intervals.size();
  const auto winners = database.winners(t.rec.device_id);
  EXPECT_EQ(winners.size(), intervals);
  for (const db::WinnerRecord& w : winners) EXPECT_EQ(w.run_id, t.rec.run_id);
}

TEST(Session, ExactSumKeysAreTunedByReplayAndAnIncorrectFamilyNeverWins) {
  db::test::TempDir dir;
  const fs::path path = dir / "exact.db";
  const TuneConfig c = validate_config(parse_config_text(
      "[space]\nfamilies = \"all\"\nblocks = [128, 256]\nunrolls = [1, 2]\n"
      "dtypes = [\"i32\", \"f32\", \"f64\"]\nops = [\"sum\", \"exact_sum\"]\n"
      "sizes = [4096, 1048576]\n[strategy]\nname = \"exhaustive\"\n[bisect]\nenabled = false\n",
      "exact.toml"));
  const auto keys = enumerate_space(c.space);
  ASSERT_EQ(keys.size(), 5u);  // i32 sum, f32 and f64 sum and exact_sum: no i32 exact_sum
  std::vector<std::string> ids;
  std::set<std::string> incorrect;  // the model's fastest exact family, recorded wrong
  for (const KeySpace& k : keys)
    for (const std::string& id : k.candidates) {
      ids.push_back(id);
      if (id.rfind("exact.", 0) == 0) incorrect.insert(id);
    }
  ASSERT_EQ(incorrect.size(), 2u * 2 * 2 * 2);  // f32, f64 x 2 blocks x 2 unrolls x 2 finishes
  Recording rec;
  TuneOutcome outcome;
  {
    db::Database database = db::Database::open_writer(path);
    rec.device_id = test::fill_database(database, ids, c.space.sizes, incorrect);
    rec.run_id = begin_test_run(database);
    rec.driver_version = rec.runtime_version = 13000;
    ReplayOptions ro;
    ro.device_id = rec.device_id;
    ro.policy = c.measure;
    ReplayRunner runner(database, ro);
    outcome = run_tuning(c, runner);
  }
  const RunEnded ended = TuningSession(path).end(rec, outcome);
  EXPECT_EQ(ended.status, db::RunStatus::finished);
  EXPECT_EQ(ended.keys_stored, 5u);
  db::Database database = db::Database::open_reader(path);
  std::size_t exact_winners = 0;
  for (const db::WinnerRecord& w : database.winners(rec.device_id)) {
    const auto* e = kernels::manifest_find(w.kernel_id);
    ASSERT_NE(e, nullptr) << w.kernel_id;
    EXPECT_EQ(kernels::is_exact_family(e->params.family), w.op == Op::exact_sum) << w.kernel_id;
    EXPECT_EQ(incorrect.count(w.kernel_id), 0u) << w.kernel_id;
    EXPECT_FALSE(w.op == Op::exact_sum && w.dtype == DType::i32);
    exact_winners += w.op == Op::exact_sum;
  }
  EXPECT_EQ(exact_winners, 2u * 2);  // f32 and f64, one winner per size (bisection off)
}

TEST(Session, AnInterruptedRunStoresOnlyItsCompleteKeysAndEndsInterrupted) {
  Tuned t;
  ASSERT_EQ(t.outcome.keys.size(), 2u);
  TuneOutcome cut = t.outcome;
  cut.cancelled = true;
  cut.keys.back().complete = false;  // the key in flight when Ctrl-C came
  const RunEnded ended = TuningSession(t.path).end(t.rec, cut);
  EXPECT_EQ(ended.status, db::RunStatus::interrupted);
  EXPECT_EQ(ended.keys_stored, 1u);
  EXPECT_EQ(t.status(), db::RunStatus::interrupted);
  const auto keys = t.keys_with_winners();
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(*keys.begin(), std::make_pair(cut.keys.front().dtype, cut.keys.front().op));
}

TEST(Session, AFailedRunStoresNoWinnerAndEndsFailed) {
  Tuned t;
  const TuningSession session(t.path);
  const RunEnded ended = session.end_failed(t.rec);
  EXPECT_EQ(ended.status, db::RunStatus::failed);
  EXPECT_EQ(ended.keys_stored, 0u);
  EXPECT_EQ(t.status(), db::RunStatus::failed);
  EXPECT_TRUE(t.keys_with_winners().empty());
  session.end_failed(std::vector<Recording>{});  // nothing begun: nothing to end, no error
}

TEST(Session, WinnersOfAnotherRunOfTheKeyAreReplacedAndASettledDatabaseHasNothingToSettle) {
  Tuned t;
  const TuningSession session(t.path);
  EXPECT_TRUE(session.settle_abandoned_runs().empty());  // the run is ours and alive
  session.end(t.rec, t.outcome);
  const auto first = db::Database::open_reader(t.path).winners(t.rec.device_id).size();
  // A second run of the same keys replaces the first's winners rather than adding to them.
  Recording again = t.rec;
  {
    db::Database database = db::Database::open_writer(t.path);
    again.run_id = begin_test_run(database);
  }
  session.end(again, t.outcome);
  db::Database database = db::Database::open_reader(t.path);
  const auto winners = database.winners(t.rec.device_id);
  EXPECT_EQ(winners.size(), first);
  for (const db::WinnerRecord& w : winners) EXPECT_EQ(w.run_id, again.run_id);
}

}  // namespace
}  // namespace tunedreduce::tuner
