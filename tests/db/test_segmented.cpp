// Segmented measurements and winners (schema version 12): the migration from version 11, the
// writers and queries, the row rules, export, import, merge, db check and the runtime's snapshot.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/exit_codes.hpp"
#include "common/names.hpp"
#include "db/check.hpp"
#include "db/dataset.hpp"
#include "db/row_rules.hpp"
#include "db/schema.hpp"
#include "db/snapshot.hpp"
#include "db/statement.hpp"
#include "kernels/segmented/segmented.hpp"
#include "test_util.hpp"

namespace tunedreduce::db {
namespace {

namespace fs = std::filesystem;
namespace kseg = kernels::segmented;
using test::TempDir;

constexpr std::uint64_t mi = std::uint64_t{1} << 20, gi = std::uint64_t{1} << 30;
constexpr std::uint64_t all_counts = std::uint64_t{1} << 40;
const std::string k_thread = "seg.thread.b256.v4.fixed.f32.sum";
const std::string k_group = "seg.group.b256.g8.v4.fixed.f32.sum";
const std::string k_block = "seg.block.b256.v4.fixed.f32.sum";
const std::string k_offsets = "seg.block.b256.v2.offsets32.f64.max";
const std::string k_split = "seg.split.b512.v4.fixed.f32.sum";
const std::string k_shuffle = "warp_shuffle.b256.u1.two_pass.f32.sum";

/// Runs \p f, which must throw DbError(invalid_data) whose message holds every one of \p words.
template <class F>
void expect_invalid(F&& f, std::initializer_list<std::string> words) {
  try {
    f();
    ADD_FAILURE() << "accepted";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::invalid_data) << e.what();
    for (const std::string& w : words)
      EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << w << "\n" << e.what();
  }
}

std::string export_of(const fs::path& path) {
  Database db = Database::open_reader(path);
  return dataset_to_json(read_dataset(db)).dump(2);
}

/// Every kernel id of both registries' kinds that the sample names (db check's known ids).
std::set<std::string> sample_ids() {
  return {k_shuffle,
          k_thread,
          k_group,
          k_block,
          k_offsets,
          "seg.group.b256.g32.v4.fixed.f32.sum",
          "vectorized.b256.u4.single_pass.i64.max",
          "warp_shuffle.b256.u1.two_pass.f32.sum"};
}

// --- segmented ids
// ---------------------------------------------------------------------------------

// db/ links no kernels, so it reads a segmented id's form itself: that reading must agree with
// kernels::segmented::parse_seg_id on every id of the registry and on ids both refuse.
TEST(SegmentedIds, TheDatabasesReadingAgreesWithTheSegmentedRegistry) {
  const auto entries = kseg::seg_registry();
  ASSERT_FALSE(entries.empty());
  for (const kseg::SegEntry& e : entries) {
    SCOPED_TRACE(e.id);
    EXPECT_TRUE(is_segmented_id(e.id));
    const auto mine = parse_segmented_id(e.id);
    ASSERT_TRUE(mine);
    EXPECT_EQ(mine->family, kseg::seg_family_name(e.params.family));
    EXPECT_EQ(mine->layout, kseg::seg_layout_name(e.params.layout));
    EXPECT_EQ(mine->dtype, e.params.dtype);
    EXPECT_EQ(mine->op, e.params.op);
  }
  for (kseg::SegLayout l : kseg::all_seg_layouts)
    EXPECT_FALSE(bad_layout_name(kseg::seg_layout_name(l))) << kseg::seg_layout_name(l);
  for (const char* id : {"seg.group.b256.v4.fixed.f32.sum",
                         "seg.thread.b256.g2.v4.fixed.f32.sum",
                         "seg.block.b0256.v4.fixed.f32.sum",
                         "seg.block.b256.v04.fixed.f32.sum",
                         "seg.warp.b256.v4.fixed.f32.sum",
                         "seg.block.b256.v4.strided.f32.sum",
                         "seg.block.b256.v4.fixed.float.sum",
                         "seg.block.b256.v4.fixed.f32.add",
                         "seg.block.b99999999999.v4.fixed.f32.sum",
                         "seg.block.b2147483648.v4.fixed.f32.sum",
                         "seg.block.b256.v4.fixed.f32",
                         "seg.block.b256.v4.fixed.f32.sum.x",
                         "seg.block.b.v4.fixed",
                         "seg.",
                         "seg",
                         "",
                         "block.b256.v4.fixed.f32.sum",
                         "seg.block.b256.v4.fixed.bfloat16.sum",
                         "seg.group.b256.g8.v4.offsets64.f16.wide_sum",
                         "seg.block.b2147483647.v1.offsets64.u64.argmax"}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(parse_segmented_id(id).has_value(), kseg::parse_seg_id(id).has_value());
  }
  EXPECT_TRUE(is_segmented_id("seg.anything"));
  EXPECT_FALSE(is_segmented_id("segmented.b256.u1.two_pass.f32.sum"));
  EXPECT_FALSE(is_segmented_id(k_shuffle));
}

// --- the migration from version 11 -------------------------------------------------------------

// The version-11 writer's own file: read as it is by this binary (every measurement a whole-array
// one, no segmented winners), migrated once by a writer with every row kept, and then it takes
// segmented rows.
TEST(Migration, Version11IsReadAsItIsAndMigratedToTakeSegmentedRows) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v11.db", dir);
  const std::string before = test::read_file(path);
  std::string export_before;
  {
    Database r = Database::open_reader(path);
    EXPECT_EQ(r.file_schema_version(), 11);
    EXPECT_FALSE(r.has_segmented());
    EXPECT_EQ(r.counts().measurements, 41);
    EXPECT_EQ(r.counts().winners, 2);
    EXPECT_EQ(r.counts().segmented_winners, 0);
    EXPECT_TRUE(r.segmented_winners().empty());
    for (const MeasurementRecord& m : r.measurements()) EXPECT_FALSE(m.segment_size) << m.id;
    EXPECT_FALSE(r.find_measurement(1)->segment_size);
    const auto keys = r.final_measured_keys(1);
    EXPECT_EQ(keys.size(), 41u);
    for (const MeasurementKey& k : keys) EXPECT_EQ(k.segment_size, 0u);
    MeasurementKey k = *keys.begin();
    EXPECT_TRUE(r.has_final_measurement(k));
    k.segment_size = 4;
    EXPECT_FALSE(r.has_final_measurement(k));
    const CheckReport check = check_database(r, sample_ids(), true);
    EXPECT_TRUE(check.ok()) << (check.row_findings.empty() ? "" : check.row_findings[0].text());
    EXPECT_EQ(check.overlapping_segmented_winners, 0);
    const Snapshot s = load_snapshot(path, test::h100());
    EXPECT_FALSE(s.problem) << s.message;
    EXPECT_EQ(s.exact.size(), 2u);
    EXPECT_TRUE(s.seg_exact.empty());
    EXPECT_TRUE(s.seg_similar.empty());
    EXPECT_TRUE(s.skipped.empty());
    export_before = dataset_to_json(read_dataset(r)).dump(2);
    // No segmented rows: format version 1, as the version-11 binary wrote it, with the new
    // members empty.
    EXPECT_NE(export_before.find("\"format_version\": 1,"), std::string::npos);
    EXPECT_NE(export_before.find("\"segmented_winners\": []"), std::string::npos);
    EXPECT_EQ(export_before.find("\"segment_size\": 4"), std::string::npos);
  }
  EXPECT_EQ(test::read_file(path), before);  // readers never migrate

  Database db = Database::open_writer(path);
  EXPECT_EQ(db.migrated_from(), 11);
  EXPECT_EQ(db.file_schema_version(), schema_version);
  EXPECT_TRUE(db.has_segmented());
  Connection& c = db.connection();
  EXPECT_EQ(c.query_text("PRAGMA quick_check"), "ok");
  EXPECT_EQ(c.query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(c.query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"), "12");
  EXPECT_EQ(c.query_int("SELECT count(*) FROM measurements WHERE segment_size IS NOT NULL"), 0);
  EXPECT_EQ(c.query_int("SELECT count(*) FROM segmented_winners"), 0);
  // The resume index covers the segment size.
  EXPECT_NE(c.query_text("SELECT sql FROM sqlite_schema WHERE name = 'measurements_by_key'")
                .find("l2_mode, segment_size)"),
            std::string::npos);
  {
    TempDir fresh_dir;
    Database fresh = Database::open_writer(fresh_dir / "fresh.db");
    const char* q =
        "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_schema ORDER BY name)";
    EXPECT_EQ(c.query_text(q), fresh.connection().query_text(q));
  }
  // Every row kept: the export is the same document.
  EXPECT_EQ(dataset_to_json(read_dataset(db)).dump(2), export_before);
  // The migrated file takes segmented rows, and its checks see them.
  const auto run = db.runs().at(0).id;
  const auto dev = db.devices().at(0).id;
  const auto m = db.insert_measurement(test::segmented_measurement(run, dev, k_group, mi, 64, 8.0));
  db.replace_segmented_winners(dev, DType::f32, Op::sum, "fixed",
                               std::vector{test::segmented_winner(k_group, m, 1, 64, 1, gi)});
  EXPECT_EQ(db.counts().segmented_winners, 1);
  EXPECT_EQ(db.find_measurement(m)->segment_size, 64u);
  auto ids = sample_ids();
  EXPECT_TRUE(check_database(db, ids, true).ok());
}

TEST(Migration, AVersion12FileIsReadByThisBinaryAndItsSampleRowsAreSound) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v12.db", dir);
  Database r = Database::open_reader(path);
  EXPECT_EQ(r.file_schema_version(), 12);
  EXPECT_EQ(r.counts().measurements, 7);
  EXPECT_EQ(r.counts().segmented_winners, 5);
  const CheckReport check = check_database(r, sample_ids(), true);
  EXPECT_TRUE(check.ok()) << (check.row_findings.empty() ? "" : check.row_findings[0].text());
}

// --- writers and queries -------------------------------------------------------------------------

struct SegFixture : ::testing::Test {
  TempDir dir;
  fs::path path = dir / "tune.db";
  Database db = Database::open_writer(path);
  test::SegmentedSample s = test::write_segmented_sample(db);
};

TEST_F(SegFixture, SegmentedMeasurementsRoundTripAndResumeBySegmentSize) {
  const auto group = db.find_measurement(s.group64);
  ASSERT_TRUE(group);
  EXPECT_EQ(group->segment_size, 64u);
  EXPECT_EQ(group->n, mi);
  EXPECT_EQ(group->kernel_id, k_group);
  EXPECT_EQ(group->params.family, "seg.group");
  EXPECT_EQ(group->params.unroll, 8);
  const auto ms = db.measurements();
  ASSERT_EQ(ms.size(), 7u);
  EXPECT_FALSE(ms[0].segment_size);  // the whole-array one
  EXPECT_EQ(ms[1].segment_size, 4u);

  // The same kernel at the same n in segments of 64 and of 4096: two keys; a whole-array key
  // has segment size 0.
  const std::set<MeasurementKey> keys = db.final_measured_keys(s.device);
  ASSERT_EQ(keys.size(), 7u);
  MeasurementKey k{s.device, k_group, DType::f32, Op::sum, mi, L2Mode::cold, 64};
  EXPECT_TRUE(keys.count(k));
  EXPECT_TRUE(db.has_final_measurement(k));
  k.segment_size = 4096;
  EXPECT_TRUE(keys.count(k));
  EXPECT_TRUE(db.has_final_measurement(k));
  k.segment_size = 128;
  EXPECT_FALSE(keys.count(k));
  EXPECT_FALSE(db.has_final_measurement(k));
  k.segment_size = 0;
  EXPECT_FALSE(db.has_final_measurement(k));
  const MeasurementKey whole{s.device, k_shuffle, DType::f32, Op::sum, 4096, L2Mode::cold, 0};
  EXPECT_TRUE(keys.count(whole));
  EXPECT_TRUE(db.has_final_measurement(whole));
  MeasurementKey whole_as_segmented = whole;
  whole_as_segmented.segment_size = 4096;
  EXPECT_FALSE(db.has_final_measurement(whole_as_segmented));
  // A crashed measurement is no final outcome: a rerun measures it again.
  Measurement crashed = test::segmented_measurement(s.run, s.device, k_group, mi, 128, 1.0);
  crashed.outcome = Outcome::crashed;
  crashed.median_us.reset();
  db.insert_measurement(crashed);
  k.segment_size = 128;
  EXPECT_FALSE(db.has_final_measurement(k));
  EXPECT_EQ(db.final_measured_keys(s.device).size(), 7u);
  // Measurement::key() carries the segment size.
  EXPECT_EQ(group->key().segment_size, 64u);
  EXPECT_EQ(ms[0].key().segment_size, 0u);
}

TEST_F(SegFixture, WritersRefuseMeasurementsThatBreakTheSegmentationRules) {
  const auto before = db.counts().measurements;
  auto refused = [&](Measurement m, std::initializer_list<std::string> words) {
    SCOPED_TRACE(m.kernel_id);
    expect_invalid([&] { db.insert_measurement(m); }, words);
    // insert_measurements is all or nothing.
    std::vector<Measurement> two = {test::segmented_measurement(s.run, s.device, k_group, mi, 256,
                                                                3.0),
                                    m};
    expect_invalid([&] { db.insert_measurements(two); }, words);
  };
  Measurement m = test::segmented_measurement(s.run, s.device, k_group, mi, 64, 3.0);
  m.segment_size.reset();
  refused(m, {"a segmented kernel's measurement needs a segment_size"});
  m = test::measurement(s.run, s.device, k_shuffle, 4096, 3.0);
  m.segment_size = 64;
  refused(m, {"a whole-array kernel's measurement has no segment_size"});
  m = test::segmented_measurement(s.run, s.device, k_group, 1000, 64, 3.0);
  refused(m, {"segment_size does not divide n"});
  m = test::segmented_measurement(s.run, s.device, k_group, mi, 64, 3.0);
  m.segment_size = 0;
  refused(m, {"segment_size must be at least 1"});
  m = test::segmented_measurement(s.run, s.device, k_group, mi, 64, 3.0);
  m.dtype = DType::f64;
  refused(m, {"the segmented kernel is of f32 sum, not of the row's f64 sum"});
  m = test::segmented_measurement(s.run, s.device, k_group, mi, 64, 3.0);
  m.kernel_id = "seg.group.b256.v4.fixed.f32.sum";  // a group without its g part
  refused(m, {"is not a segmented kernel id of this binary"});
  EXPECT_EQ(db.counts().measurements, before);
}

TEST_F(SegFixture, SegmentedWinnersAreOrderedCountedAndReplacedByGroup) {
  const auto ws = db.segmented_winners();
  ASSERT_EQ(ws.size(), 5u);
  // By device, dtype, op, layout, L2 mode, size_lo, count_lo (names as text: f32 before f64).
  EXPECT_EQ(ws[0].kernel_id, k_thread);
  EXPECT_EQ(ws[0].count_hi, all_counts);
  EXPECT_EQ(ws[1].kernel_id, k_group);
  EXPECT_EQ(ws[2].kernel_id, k_block);
  EXPECT_EQ(ws[2].size_lo, 513u);
  EXPECT_EQ(ws[2].size_hi, gi);
  EXPECT_EQ(ws[2].runner_up_kernel_id, k_group);
  EXPECT_EQ(ws[2].runner_up_measurement_id, s.group4096);
  EXPECT_EQ(ws[2].measurement_id, s.block4096);
  EXPECT_EQ(ws[2].run_id, s.run);
  EXPECT_FALSE(ws[2].source);
  EXPECT_EQ(ws[3].l2_mode, L2Mode::warm);
  EXPECT_EQ(ws[4].kernel_id, k_offsets);
  EXPECT_EQ(ws[4].layout, "offsets32");
  EXPECT_EQ(ws[4].dtype, DType::f64);
  EXPECT_EQ(ws[4].op, Op::max);
  EXPECT_EQ(db.counts().segmented_winners, 5);
  EXPECT_EQ(db.segmented_winners(s.device).size(), 5u);
  EXPECT_TRUE(db.segmented_winners(s.device + 1).empty());

  // Replacing (f32, sum, fixed, cold) keeps the warm row, the offsets layout and the
  // whole-array winners.
  db.replace_segmented_winners(s.device, DType::f32, Op::sum, "fixed",
                               std::vector{
                                   test::segmented_winner(k_group, s.group64, 1, gi, 1, gi)});
  EXPECT_EQ(db.counts().segmented_winners, 3);
  EXPECT_EQ(db.counts().winners, 1);
  db.replace_segmented_winners(s.device, DType::f32, Op::sum, "fixed", {});
  EXPECT_EQ(db.counts().segmented_winners, 2);
}

TEST_F(SegFixture, ReplaceSegmentedWinnersRefusesBadRowsAndChangesNothing) {
  Measurement bad = test::segmented_measurement(s.run, s.device, k_thread, mi, 8, 0.5);
  bad.outcome = Outcome::incorrect;
  bad.error = "wrong result";
  const auto failed = db.insert_measurement(bad);
  const std::string rows_before = export_of(path);
  const auto refused = [&](const std::vector<SegmentedWinner>& ws,
                           std::initializer_list<std::string> words, std::string layout = "fixed",
                           L2Mode mode = L2Mode::cold, DType t = DType::f32, Op o = Op::sum) {
    expect_invalid([&] { db.replace_segmented_winners(s.device, t, o, layout, ws, mode); }, words);
  };
  const auto thread = test::segmented_winner(k_thread, s.thread4, 1, 8, 1, gi);
  const auto group = test::segmented_winner(k_group, s.group64, 9, 512, 1, gi);
  // Overlap: the second rectangle shares the cell (8, 1000) with the first; the message names
  // both rows.
  auto over = test::segmented_winner(k_group, s.group64, 8, 512, 1000, gi);
  refused({thread, over},
          {"cold segmented winners of f32 sum fixed on device", "overlap",
           "'seg.thread.b256.v4.fixed.f32.sum' (sizes 1..8, counts 1..1073741824)",
           "'seg.group.b256.g8.v4.fixed.f32.sum' (sizes 8..512, counts 1000..1073741824)"});
  // Rectangles that share one cell, (8, 100), at the corner of both.
  refused({test::segmented_winner(k_thread, s.thread4, 1, 8, 100, 200),
           test::segmented_winner(k_group, s.group64, 8, 512, 1, 100)},
          {"overlap"});
  // Touching rectangles do not overlap.
  db.replace_segmented_winners(s.device, DType::f32, Op::sum, "fixed", std::vector{thread, group});
  const std::string two_rows = export_of(path);
  // A winner of another layout than the call's, or a kernel of another layout.
  refused({test::segmented_winner(k_offsets, s.offsets, 1, 8, 1, 8)}, {"is of f64 max"}, "fixed");
  auto wrong_layout = thread;
  wrong_layout.layout = "offsets32";
  refused({wrong_layout}, {"is of the layout 'offsets32'"});
  auto other_layout =
      test::segmented_winner("seg.block.b256.v4.offsets32.f32.sum", s.block4096, 1, 8, 1, 8);
  other_layout.layout = "fixed";
  refused({other_layout},
          {"the segmented kernel is of f32 sum offsets32, not of the row's f32 sum fixed"});
  refused({thread}, {"the layout is not a layout of segments"}, "strided");
  // Missing evidence, not-ok evidence, evidence of another kernel, mode or device.
  auto missing = thread;
  missing.measurement_id = 999;
  refused({missing}, {"its evidence measurement 999 is not one of this device, dtype and op"});
  auto not_ok = thread;
  not_ok.measurement_id = failed;
  refused({not_ok}, {"is not ok (incorrect)", "sizes 1..8"});
  auto other_kernel = thread;
  other_kernel.measurement_id = s.group64;
  refused({other_kernel}, {"is a measurement of 'seg.group.b256.g8.v4.fixed.f32.sum', not of "
                           "'seg.thread.b256.v4.fixed.f32.sum'"});
  auto warm = thread;
  warm.l2_mode = L2Mode::warm;
  refused({warm}, {"is a cold-L2 measurement, not warm"}, "fixed", L2Mode::warm);
  refused({thread}, {"is cold-L2"}, "fixed", L2Mode::warm);
  // The runner-up likewise: an ok segmented measurement of this layout.
  auto runner = group;
  runner.runner_up_kernel_id = k_thread;
  runner.runner_up_measurement_id = not_ok.measurement_id;
  refused({runner}, {"its runner-up measurement", "is not ok"});
  runner.runner_up_measurement_id = s.offsets;
  refused({runner}, {"its runner-up measurement", "is not one of this device, dtype and op"});
  runner.runner_up_kernel_id = k_shuffle;
  runner.runner_up_measurement_id = 1;  // the whole-array measurement
  refused({runner}, {"its runner-up 'warp_shuffle.b256.u1.two_pass.f32.sum' is not a segmented "
                     "kernel id"});
  runner.runner_up_kernel_id.reset();
  refused({runner}, {"its runner-up measurement 1", "a whole-array measurement"});
  // No rectangle.
  auto empty = thread;
  empty.size_lo = 9;
  refused({empty}, {"is no rectangle"});
  auto zero = thread;
  zero.count_lo = 0;
  refused({zero}, {"is no rectangle"});
  // A whole-array winner cannot name a segmented kernel, nor the other way round.
  Winner w;
  w.dtype = DType::f32;
  w.op = Op::sum;
  w.n_lo = 1;
  w.n_hi = 100;
  w.kernel_id = k_thread;
  w.measurement_id = s.thread4;
  expect_invalid([&] { db.replace_winners(s.device, DType::f32, Op::sum, std::vector{w}); },
                 {"is a segmented kernel"});
  auto whole = thread;
  whole.kernel_id = k_shuffle;
  whole.measurement_id = 1;
  refused({whole}, {"'warp_shuffle.b256.u1.two_pass.f32.sum' is not a segmented kernel id"});
  EXPECT_EQ(export_of(path), two_rows);  // every refusal left the rows as they were
  EXPECT_NE(rows_before, two_rows);
}

// --- export, import, merge
// --------------------------------------------------------------------------

TEST_F(SegFixture, ExportImportExportIsByteIdenticalWithSegmentedRows) {
  const std::string text = export_of(path);
  EXPECT_NE(text.find("\"format_version\": 2,"), std::string::npos);
  EXPECT_NE(text.find("\"segment_size\": 4096"), std::string::npos);
  EXPECT_NE(text.find("\"segment_size\": null"), std::string::npos);  // the whole-array one
  EXPECT_NE(text.find("\"layout\": \"offsets32\""), std::string::npos);
  EXPECT_NE(text.find("\"count_hi\": 1099511627776"), std::string::npos);
  const Dataset back = dataset_from_json(Json::parse(text), dir / "x.json");
  ASSERT_EQ(back.segmented_winners.size(), 5u);
  EXPECT_EQ(back.segmented_winners[2].runner_up->seq, 5);
  EXPECT_EQ(dataset_to_json(back).dump(2), text);
  // Into an empty database and out again: the same bytes.
  {
    Database mem = Database::create_in_memory();
    const MergeStats st = import_dataset(mem, back);
    EXPECT_EQ(st.segmented_winner_groups_changed, 3);
    EXPECT_EQ(st.winner_groups_changed, 4);
    EXPECT_EQ(dataset_to_json(read_dataset(mem)).dump(2), text);
  }
  // Importing the same file again changes nothing.
  const MergeStats again = import_dataset(db, back);
  EXPECT_EQ(again.winner_groups_changed, 0);
  EXPECT_EQ(again.segmented_winner_groups_changed, 0);
  EXPECT_EQ(again.measurements_added, 0);
  EXPECT_EQ(export_of(path), text);
  // And a merge of the file carries every segmented winner with its evidence.
  const auto out = dir / "merged.db";
  const MergeStats ms = merge_files({path}, out);
  EXPECT_EQ(ms.segmented_winner_conflicts, 0);
  Database merged = Database::open_reader(out);
  EXPECT_EQ(merged.counts().segmented_winners, 5);
  EXPECT_EQ(merged.counts().measurements, 7);
  for (const SegmentedWinnerRecord& w : merged.segmented_winners())
    EXPECT_EQ(w.source, path.string()) << w.kernel_id;
  EXPECT_TRUE(check_database(merged, sample_ids(), true).ok());
}

TEST_F(SegFixture, AnExportWithoutSegmentedMembersImportsAsAnOlderOne) {
  // An older binary's export (format version 1) has neither member: it imports, every
  // measurement a whole-array one.
  TempDir other;
  Database older = Database::open_writer(other / "old.db");
  const auto dev = older.upsert_device(test::h100());
  const auto run = older.begin_run(test::run_info());
  older.insert_measurement(test::measurement(run, dev, k_shuffle, 4096, 5.0));
  Json doc = Json::parse(export_of(other / "old.db"));
  Json stripped = Json::object();
  for (const auto& [key, value] : doc.as_object()) {
    if (key == "segmented_winners") continue;
    if (key != "measurements") {
      stripped.set(key, value);
      continue;
    }
    Json ms = Json::array();
    for (const Json& m : value.as_array()) {
      Json bare = Json::object();
      for (const auto& [k, v] : m.as_object())
        if (k != "segment_size") bare.set(k, v);
      ms.push_back(std::move(bare));
    }
    stripped.set(key, std::move(ms));
  }
  EXPECT_EQ(stripped.find("segmented_winners"), nullptr);
  const Dataset d = dataset_from_json(stripped, other / "old.json");
  EXPECT_TRUE(d.segmented_winners.empty());
  ASSERT_EQ(d.measurements.size(), 1u);
  EXPECT_FALSE(d.measurements.begin()->second.m.segment_size);
  import_dataset(db, d);
  EXPECT_EQ(db.counts().measurements, 8);
  EXPECT_EQ(db.counts().segmented_winners, 5);
}

/// The sample's export with \p from replaced by \p to (once), imported into a fresh database:
/// refused as invalid data, naming the member and \p words, and nothing written.
void expect_import_refused(const std::string& text, const std::string& from, const std::string& to,
                           std::initializer_list<std::string> words) {
  SCOPED_TRACE(from + " -> " + to);
  const auto pos = text.find(from);
  ASSERT_NE(pos, std::string::npos) << from;
  std::string bad = text;
  bad.replace(pos, from.size(), to);
  Database mem = Database::create_in_memory();
  expect_invalid([&] { import_dataset(mem, dataset_from_json(Json::parse(bad), "in.json")); },
                 words);
  EXPECT_EQ(mem.counts().devices, 0);
}

TEST_F(SegFixture, ImportRefusesSegmentedRowsThatBreakTheRules) {
  const std::string t = Json::parse(export_of(path)).dump();
  // Measurements: a segment size on a whole-array kernel's, none on a segmented kernel's, one
  // that does not divide n, one below 1.
  expect_import_refused(t, "\"measured_at\":\"2026-11-28T12:00:00.000Z\",\"segment_size\":null",
                        "\"measured_at\":\"2026-11-28T12:00:00.000Z\",\"segment_size\":2",
                        {"'in.json': $.measurements[0].segment_size: a whole-array kernel's "
                         "measurement has no segment_size"});
  expect_import_refused(t, "\"segment_size\":4}", "\"segment_size\":null}",
                        {"$.measurements[1].kernel_id: a segmented kernel's measurement needs a "
                         "segment_size"});
  expect_import_refused(t, "\"segment_size\":4}", "\"segment_size\":3}",
                        {"$.measurements[1].segment_size: segment_size does not divide n"});
  expect_import_refused(t, "\"segment_size\":4}", "\"segment_size\":0}",
                        {"$.measurements[1].segment_size: must be at least 1"});
  // Segmented winners: a layout of another name or of another kernel, an empty rectangle, an
  // overlap, evidence that is not ok or of another kernel, a runner-up of another layout.
  const std::string offsets_row = "\"layout\":\"offsets32\"";
  expect_import_refused(t, offsets_row, "\"layout\":\"strided\"",
                        {"$.segmented_winners[4].layout: 'strided' is not a layout of segments"});
  expect_import_refused(t, offsets_row, "\"layout\":\"offsets64\"",
                        {"$.segmented_winners[4].kernel_id: the segmented kernel is of f64 max "
                         "offsets32, not of the row's f64 max offsets64"});
  expect_import_refused(t, "\"size_lo\":9,\"size_hi\":512", "\"size_lo\":9,\"size_hi\":8",
                        {"$.segmented_winners[1].size_hi: smaller than size_lo"});
  expect_import_refused(t, "\"size_lo\":9,\"size_hi\":512", "\"size_lo\":8,\"size_hi\":512",
                        {"$.segmented_winners: overlapping rectangles for device " +
                         test::h100().key() +
                         " f32 sum fixed cold: sizes 1..8 x counts "
                         "1..1099511627776 and sizes 8..512 x counts 1..1099511627776"});
  expect_import_refused(t, "\"count_lo\":1,\"count_hi\":1099511627776",
                        "\"count_lo\":0,\"count_hi\":1099511627776",
                        {"$.segmented_winners[0].count_lo: must be at least 1"});
  // The thread measurement (the first at 2^20) failed: the thread winner has no ok evidence.
  expect_import_refused(t, "\"n\":1048576,\"l2_mode\":\"cold\",\"outcome\":\"ok\"",
                        "\"n\":1048576,\"l2_mode\":\"cold\",\"outcome\":\"incorrect\"",
                        {"$.segmented_winners[0].measurement: not an ok measurement"});
  // The thread winner's evidence is seq 2; point it at seq 3 (the group's).
  expect_import_refused(t,
                        "\"kernel_id\":\"seg.thread.b256.v4.fixed.f32.sum\",\"measurement\":{"
                        "\"run\":",
                        "\"kernel_id\":\"seg.group.b256.g8.v4.fixed.f32.sum\",\"measurement\":{"
                        "\"run\":",
                        {"$.segmented_winners[0].measurement: a measurement of "
                         "'seg.thread.b256.v4.fixed.f32.sum', not of "
                         "'seg.group.b256.g8.v4.fixed.f32.sum'"});
  expect_import_refused(t, "\"runner_up_kernel_id\":\"seg.group.b256.g8.v4.fixed.f32.sum\"",
                        "\"runner_up_kernel_id\":\"seg.block.b256.v4.fixed.f32.sum\"",
                        {"$.segmented_winners[2].runner_up_measurement: a measurement of "
                         "'seg.group.b256.g8.v4.fixed.f32.sum', not of "
                         "'seg.block.b256.v4.fixed.f32.sum'"});
  // A whole-array winner naming a segmented kernel.
  expect_import_refused(t,
                        "\"kernel_id\":\"warp_shuffle.b256.u1.two_pass.f32.sum\",\"measurement\"",
                        "\"kernel_id\":\"seg.thread.b256.v4.fixed.f32.sum\",\"measurement\"",
                        {"$.winners[0].kernel_id: a segmented kernel is no whole-array winner"});
}

/// A database of one run on \p fp where each of \p rows (kernel, sizes, counts, median) wins its
/// rectangle of (f32, sum, fixed, cold), its evidence measured at 2^20 elements.
struct Rect {
  std::string kernel;
  std::uint64_t size_lo, size_hi, count_lo, count_hi;
  double median;
};
void make_seg_db(const fs::path& path, const std::vector<Rect>& rows, const std::string& host) {
  Database db = Database::open_writer(path);
  const auto dev = db.upsert_device(test::h100());
  RunInfo info = test::run_info();
  info.host = host;
  const auto run = db.begin_run(info);
  std::vector<SegmentedWinner> ws;
  for (const Rect& r : rows) {
    // Measured in segments of a power of two that divides 2^20.
    Measurement m =
        test::segmented_measurement(run, dev, r.kernel, mi, std::bit_floor(r.size_lo), r.median);
    m.measured_at = "2026-11-28T12:00:00.000Z";
    ws.push_back(test::segmented_winner(r.kernel, db.insert_measurement(m), r.size_lo, r.size_hi,
                                        r.count_lo, r.count_hi));
  }
  db.replace_segmented_winners(dev, DType::f32, Op::sum, "fixed", ws);
  db.end_run(run, RunStatus::finished);
}

std::string rects(Database& db) {
  std::string out;
  for (const SegmentedWinnerRecord& w : db.segmented_winners())
    out += fmt::format("{} {}..{} x {}..{}\n", w.kernel_id, w.size_lo, w.size_hi, w.count_lo,
                       w.count_hi);
  return out;
}

// Two shards claim overlapping rectangles: each cell goes to the faster evidence outside the
// noise (time per element), cells with one winner are joined again, in any order of the inputs.
TEST(Merge, SegmentedWinnersAreDecidedCellByCellInAnyOrder) {
  TempDir dir;
  // A: the group kernel wins sizes 1..100 x counts 1..1000 in 5 us; B: the block kernel wins
  // 51..200 x 1..500 in 4 us (20 % faster: outside the noise).
  make_seg_db(dir / "a.db", {{k_group, 1, 100, 1, 1000, 5.0}}, "a");
  make_seg_db(dir / "b.db", {{k_block, 51, 200, 1, 500, 4.0}}, "b");
  MergeStats ab = merge_files({dir / "a.db", dir / "b.db"}, dir / "ab.db");
  MergeStats ba = merge_files({dir / "b.db", dir / "a.db"}, dir / "ba.db");
  EXPECT_EQ(test::read_file(dir / "ab.db"), test::read_file(dir / "ba.db"));
  // One cell (51..100 x 1..500) was claimed by both.
  EXPECT_EQ(ab.segmented_winner_conflicts, 1);
  EXPECT_EQ(ab.winner_conflicts, 1);
  EXPECT_EQ(ba.segmented_winner_conflicts, 1);
  Database merged = Database::open_reader(dir / "ab.db");
  // By size_lo, then count_lo: the counts 1..500 joined along the sizes, 501..1000 apart.
  EXPECT_EQ(rects(merged), k_group + " 1..50 x 1..500\n" + k_group + " 1..100 x 501..1000\n" +
                               k_block + " 51..200 x 1..500\n");
  // The evidence came along, and the file is sound.
  EXPECT_EQ(merged.counts().measurements, 2);
  EXPECT_TRUE(check_database(merged, {k_group, k_block}, true).ok());

  // Within the noise (0.3 % apart), the tie goes to the smaller kernel id, not the faster.
  make_seg_db(dir / "c.db", {{k_group, 1, 100, 1, 1000, 5.0}}, "c");
  make_seg_db(dir / "d.db", {{k_thread, 1, 100, 1, 1000, 4.985}}, "d");
  merge_files({dir / "c.db", dir / "d.db"}, dir / "cd.db");
  Database tie = Database::open_reader(dir / "cd.db");
  EXPECT_EQ(rects(tie), k_group + " 1..100 x 1..1000\n");
  // Importing B into A decides the same way as the merge.
  TempDir other;
  make_seg_db(other / "a.db", {{k_group, 1, 100, 1, 1000, 5.0}}, "a");
  Database into = Database::open_writer(other / "a.db");
  Database rb = Database::open_reader(dir / "b.db");
  Dataset b = read_dataset(rb);
  add_provenance(b, (dir / "b.db").string(), "import");
  const MergeStats st = import_dataset(into, b);
  EXPECT_EQ(st.segmented_winner_groups_changed, 1);
  EXPECT_EQ(st.segmented_winner_conflicts, 1);
  EXPECT_EQ(rects(into), rects(merged));
}

TEST(Merge, ResolveSegmentedWinnersJoinsCellsOfOneWinnerAgain) {
  // The same winner in two rows that touch, and a gap no row covers.
  Dataset d;
  MeasurementRow m;
  m.ref = {"r", 1};
  m.device_key = "dev";
  m.m = test::segmented_measurement(0, 0, k_group, mi, 64, 5.0);
  d.measurements[m.ref] = m;
  SegmentedWinnerRow a;
  a.device_key = "dev";
  a.w = test::segmented_winner(k_group, 0, 1, 10, 1, 10);
  a.evidence = m.ref;
  SegmentedWinnerRow b = a;
  b.w.size_lo = 11;
  b.w.size_hi = 20;
  SegmentedWinnerRow c = a;
  c.w.size_lo = 1;
  c.w.size_hi = 20;
  c.w.count_lo = 11;
  c.w.count_hi = 20;
  SegmentedWinnerRow far = a;
  far.w.size_lo = far.w.size_hi = 40;
  std::int64_t conflicts = 0;
  const auto out = resolve_segmented_winners({c, far, b, a}, d, conflicts);
  EXPECT_EQ(conflicts, 0);
  // a, b and c are one rectangle again; the gap stays uncovered.
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::make_tuple(out[0].w.size_lo, out[0].w.size_hi, out[0].w.count_lo,
                            out[0].w.count_hi),
            std::make_tuple(1u, 20u, 1u, 20u));
  EXPECT_EQ(std::make_tuple(out[1].w.size_lo, out[1].w.size_hi, out[1].w.count_lo,
                            out[1].w.count_hi),
            std::make_tuple(40u, 40u, 1u, 10u));
}

// --- db check and the row rules
// -------------------------------------------------------------------

TEST_F(SegFixture, CheckNamesSegmentedRowsThatBreakTheRules) {
  {
    Connection& c = db.connection();
    c.exec("PRAGMA ignore_check_constraints = ON");
    // measurements: 2 without its segment size, 1 (whole-array) with one, 3 with one that does
    // not divide n; segmented_winners: 1 of an unknown layout, 2 of a kernel of another layout,
    // 3 no rectangle, 4 not-ok evidence (measurement 6 failed), 5 overlapping a new row 6.
    c.exec(
        "UPDATE measurements SET segment_size = NULL WHERE id = 2;"
        "UPDATE measurements SET segment_size = 16 WHERE id = 1;"
        "UPDATE measurements SET segment_size = 3 WHERE id = 3;"
        "UPDATE segmented_winners SET layout = 'strided' WHERE id = 1;"
        "UPDATE segmented_winners SET kernel_id = 'seg.group.b256.g8.v4.offsets64.f32.sum'"
        " WHERE id = 2;"
        "UPDATE segmented_winners SET size_lo = 600, size_hi = 599 WHERE id = 3;"
        "UPDATE measurements SET outcome = 'incorrect', error = 'x' WHERE id = 6;"
        "INSERT INTO segmented_winners (device_id, dtype, op, l2_mode, layout, size_lo, size_hi,"
        " count_lo, count_hi, kernel_id, measurement_id, driver_version, runtime_version)"
        " SELECT device_id, dtype, op, l2_mode, layout, 5, 6, 5, 6, kernel_id, measurement_id,"
        " driver_version, runtime_version FROM segmented_winners WHERE id = 5;");
  }
  Database r = Database::open_reader(path);
  const CheckReport check = check_database(r, sample_ids(), false);
  EXPECT_FALSE(check.ok());
  std::vector<std::string> texts;
  for (const RowFinding& f : check.row_findings) texts.push_back(f.text());
  const std::vector<std::string> expected = {
      "measurements id 1: kernel_id/segment_size = 'warp_shuffle.b256.u1.two_pass.f32.sum'/16: a "
      "whole-array kernel's measurement has no segment_size",
      "measurements id 2: kernel_id/segment_size = 'seg.thread.b256.v4.fixed.f32.sum'/NULL: a "
      "segmented kernel's measurement needs a segment_size",
      "measurements id 3: n/segment_size = 1048576/3: segment_size does not divide n",
      "segmented_winners id 1: layout = 'strided': is not a layout of segments (fixed, offsets32, "
      "offsets64)",
      "segmented_winners id 2: kernel_id/dtype/op/layout = "
      "'seg.group.b256.g8.v4.offsets64.f32.sum'/'f32'/'sum'/'fixed': the segmented kernel is of "
      "f32 sum offsets64, not of the row's f32 sum fixed",
      "segmented_winners id 3: size_lo/size_hi = 600/599: size_lo is larger than size_hi",
  };
  EXPECT_EQ(texts, expected);
  // The rectangles and evidence, counted per mode and named by id: 1's evidence has no segment
  // size now (measurement 2), 2's is of another kernel now, 4's failed (measurement 6); 5 and 6
  // overlap (warm).
  EXPECT_EQ(check.overlapping_segmented_winners, 1);
  EXPECT_EQ(check.overlapping_segmented_by_mode[static_cast<int>(L2Mode::warm)], 1);
  EXPECT_EQ(check.overlapping_segmented_by_mode[static_cast<int>(L2Mode::cold)], 0);
  EXPECT_EQ(check.segmented_winners_without_ok_evidence, 3);
  EXPECT_EQ(check.bad_segmented_winner_ids, (std::vector<std::int64_t>{1, 2, 4, 5, 6}));
  // The kernel ids of segmented winners are checked against the registry too.
  EXPECT_EQ(check.unknown_kernel_ids.count("seg.group.b256.g8.v4.offsets64.f32.sum"), 1u);

  // Export leaves every such row out by name, and what it writes imports and exports again as
  // the same bytes.
  const Dataset d = read_dataset(r);
  std::string skipped;
  for (const std::string& line : d.skipped) skipped += line + "\n";
  for (const char* row :
       {"measurements id 1:", "measurements id 2:", "measurements id 3:", "segmented_winners id 1:",
        "segmented_winners id 2:", "segmented_winners id 3:",
        "segmented_winners id 4: its evidence (measurement id 6) is not an ok measurement",
        "segmented_winners id 6: its rectangle (sizes 5..6, counts 5..6) overlaps"})
    EXPECT_NE(skipped.find(row), std::string::npos) << row << "\n" << skipped;
  EXPECT_EQ(d.segmented_winners.size(), 1u);  // the warm row 5
  const std::string text = dataset_to_json(d).dump(2);
  Database mem = Database::create_in_memory();
  import_dataset(mem, dataset_from_json(Json::parse(text), "x.json"));
  EXPECT_EQ(dataset_to_json(read_dataset(mem)).dump(2), text);
}

// --- the runtime's snapshot ---------------------------------------------------------------------

SegSnapshotEntry entry(const std::string& kernel, std::uint64_t size_lo, std::uint64_t size_hi,
                       std::uint64_t count_lo, std::uint64_t count_hi, L2Mode mode = L2Mode::cold) {
  const auto id = parse_segmented_id(kernel);
  SegSnapshotEntry e;
  e.device_key = "75ee52f54f3ef9f9";
  e.dtype = id->dtype;
  e.op = id->op;
  e.layout = id->layout;
  e.l2_mode = mode;
  e.size_lo = size_lo;
  e.size_hi = size_hi;
  e.count_lo = count_lo;
  e.count_hi = count_hi;
  e.kernel_id = kernel;
  return e;
}

TEST(SegWinnerTable, FindsTheRectangleContainingAShapeBoundsIncluded) {
  const SegWinnerTable t({entry(k_block, 513, gi, 1, gi), entry(k_thread, 1, 8, 1, all_counts),
                          entry(k_group, 9, 512, 1, 1000), entry(k_group, 9, 512, 2000, 3000),
                          entry(k_offsets, 1, gi, 1, gi)});
  ASSERT_EQ(t.size(), 5u);
  auto at = [&](std::uint64_t size, std::uint64_t count, DType d = DType::f32, Op o = Op::sum,
                std::string_view layout = "fixed") {
    const SegSnapshotEntry* e = t.find(d, o, layout, size, count);
    return e ? fmt::format("{} {}..{}", e->kernel_id, e->count_lo, e->count_hi)
             : std::string("none");
  };
  // Every corner of a rectangle is in it; one step outside is not.
  EXPECT_EQ(at(1, 1), k_thread + " 1..1099511627776");
  EXPECT_EQ(at(8, all_counts), k_thread + " 1..1099511627776");
  EXPECT_EQ(at(8, all_counts + 1), "none");
  EXPECT_EQ(at(9, 1), k_group + " 1..1000");
  EXPECT_EQ(at(512, 1000), k_group + " 1..1000");
  EXPECT_EQ(at(512, 1001), "none");  // the gap between the group's two rows
  EXPECT_EQ(at(9, 1999), "none");
  EXPECT_EQ(at(9, 2000), k_group + " 2000..3000");
  EXPECT_EQ(at(300, 3000), k_group + " 2000..3000");
  EXPECT_EQ(at(300, 3001), "none");
  EXPECT_EQ(at(513, 1), k_block + " 1..1073741824");
  EXPECT_EQ(at(gi, gi), k_block + " 1..1073741824");
  EXPECT_EQ(at(gi + 1, 1), "none");
  EXPECT_EQ(at(0, 1), "none");
  EXPECT_EQ(at(1, 0), "none");
  // Another layout, type or operator has rows of its own, or none.
  EXPECT_EQ(at(1, 1, DType::f64, Op::max, "offsets32"), k_offsets + " 1..1073741824");
  EXPECT_EQ(at(1, 1, DType::f64, Op::max, "fixed"), "none");
  EXPECT_EQ(at(1, 1, DType::f32, Op::sum, "offsets32"), "none");
  EXPECT_EQ(at(1, 1, DType::f32, Op::max), "none");
  EXPECT_EQ(at(1, 1, DType::i32, Op::sum), "none");
  EXPECT_EQ(SegWinnerTable().find(DType::f32, Op::sum, "fixed", 1, 1), nullptr);
  // Sorted by dtype, op, layout, size_lo, count_lo.
  EXPECT_EQ(t.entries()[0].kernel_id, k_thread);
  EXPECT_EQ(t.entries()[4].kernel_id, k_offsets);
}

TEST(SegWinnerTable, RefusesOverlapNamingBothRowsAndMixedModes) {
  try {
    SegWinnerTable({entry(k_thread, 1, 8, 1, 100), entry(k_group, 5, 512, 100, 200),
                    entry(k_offsets, 1, 8, 1, 100)});
    ADD_FAILURE() << "took overlapping rows";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'seg.thread.b256.v4.fixed.f32.sum' of device 75ee52f54f3ef9f9 (f32 sum "
                        "fixed cold, sizes 1..8, counts 1..100)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("'seg.group.b256.g8.v4.fixed.f32.sum' of device 75ee52f54f3ef9f9 (f32 "
                        "sum fixed cold, sizes 5..512, counts 100..200)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("overlap"), std::string::npos) << what;
  }
  // The same rectangles of another layout, type or L2 mode do not overlap.
  EXPECT_NO_THROW(SegWinnerTable({entry(k_thread, 1, 8, 1, 100), entry(k_offsets, 1, 8, 1, 100),
                                  entry(k_group, 9, 512, 1, 100)}));
  EXPECT_THROW(SegWinnerTable(
                   {entry(k_thread, 1, 8, 1, 100), entry(k_group, 9, 16, 1, 100, L2Mode::warm)}),
               std::invalid_argument);
  EXPECT_THROW(SegWinnerTable({entry(k_thread, 9, 8, 1, 100)}), std::invalid_argument);
  const SegWinnerTables both = SegWinnerTables::split(
      {entry(k_thread, 1, 8, 1, 100), entry(k_group, 1, 8, 1, 100, L2Mode::warm)});
  EXPECT_EQ(both.size(), 2u);
  EXPECT_EQ(both[L2Mode::cold].find(DType::f32, Op::sum, "fixed", 1, 1)->kernel_id, k_thread);
  EXPECT_EQ(both[L2Mode::warm].find(DType::f32, Op::sum, "fixed", 1, 1)->kernel_id, k_group);
}

TEST_F(SegFixture, SnapshotLoadsThisDevicesAndTheSameModelsSegmentedWinners) {
  // Two other devices of the same model (same compute capability, SMs and memory system, other
  // fingerprints): one named as this one, one not; each with an f32 sum fixed cold row, and only
  // the second with an f64 max offsets32 row.
  DeviceFingerprint same_name = test::h100(), other_name = test::h100();
  same_name.ecc = false;
  other_name.name = "NVIDIA H100 PCIe";
  // The other name's fingerprint sorts first, so that the name decides, not the fingerprint.
  for (std::int64_t mem = 1; other_name.key() >= same_name.key(); ++mem)
    other_name.total_mem_bytes = mem;
  const auto a = db.upsert_device(same_name), b = db.upsert_device(other_name);
  for (const auto dev : {a, b}) {
    const auto m =
        db.insert_measurement(test::segmented_measurement(s.run, dev, k_split, mi, 4096, 2.0));
    db.replace_segmented_winners(dev, DType::f32, Op::sum, "fixed",
                                 std::vector{test::segmented_winner(k_split, m, 1, 100, 1, 100)});
  }
  const auto m =
      db.insert_measurement(test::segmented_measurement(s.run, b, k_offsets, 4 * mi, 1024, 2.0));
  db.replace_segmented_winners(b, DType::f64, Op::max, "offsets32",
                               std::vector{test::segmented_winner(k_offsets, m, 1, 7, 1, 7)});

  const Snapshot snap = load_snapshot(path, test::h100());
  ASSERT_FALSE(snap.problem) << snap.message;
  EXPECT_TRUE(snap.skipped.empty());
  EXPECT_EQ(snap.seg_exact.size(), 5u);
  EXPECT_EQ(snap.seg_exact[L2Mode::cold].size(), 4u);
  EXPECT_EQ(snap.seg_exact[L2Mode::warm].size(), 1u);
  const SegSnapshotEntry* e =
      snap.seg_exact[L2Mode::cold].find(DType::f32, Op::sum, "fixed", 600, 1000);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->kernel_id, k_block);
  EXPECT_EQ(e->median_us, 7.0);
  EXPECT_EQ(e->device_key, test::h100().key());
  EXPECT_EQ(e->driver_version, 13000);
  EXPECT_FALSE(e->stale(13000, 13000));
  EXPECT_TRUE(e->stale(13010, 13000));
  // The same model: per (dtype, op, layout, L2 mode), the device of the same name first; the
  // other device only where the first has none.
  ASSERT_EQ(snap.seg_similar.size(), 2u);
  const SegSnapshotEntry* sim =
      snap.seg_similar[L2Mode::cold].find(DType::f32, Op::sum, "fixed", 50, 50);
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->device_key, same_name.key());
  const SegSnapshotEntry* off =
      snap.seg_similar[L2Mode::cold].find(DType::f64, Op::max, "offsets32", 7, 7);
  ASSERT_NE(off, nullptr);
  EXPECT_EQ(off->device_key, other_name.key());
  // Loading the tables alone gives the same.
  EXPECT_EQ(load_device_segmented_winners(db, test::h100().key()).size(), 5u);
  EXPECT_EQ(load_similar_segmented_winners(db, test::h100()).size(), 2u);
}

TEST_F(SegFixture, SnapshotSkipsSegmentedRowsThatBreakTheRulesOrOverlapByName) {
  {
    Connection& c = db.connection();
    c.exec(
        "PRAGMA ignore_check_constraints = ON;"
        "UPDATE segmented_winners SET layout = 'strided' WHERE id = 1;"
        "INSERT INTO segmented_winners (device_id, dtype, op, l2_mode, layout, size_lo, size_hi,"
        " count_lo, count_hi, kernel_id, measurement_id, driver_version, runtime_version)"
        " SELECT device_id, dtype, op, l2_mode, layout, 100, 101, 5, 6, kernel_id, measurement_id,"
        " driver_version, runtime_version FROM segmented_winners WHERE id = 2;"
        "UPDATE measurements SET median_us = -1 WHERE id = 7;");
  }
  const Snapshot snap = load_snapshot(path, test::h100());
  ASSERT_FALSE(snap.problem) << snap.message;
  std::string skipped;
  for (const std::string& line : snap.skipped) skipped += line + "\n";
  EXPECT_EQ(snap.skipped.size(), 3u) << skipped;
  EXPECT_NE(skipped.find("segmented_winners id 1: layout = 'strided': is not a layout"),
            std::string::npos)
      << skipped;
  EXPECT_NE(skipped.find("segmented_winners id 5: its evidence's median_us = -1"),
            std::string::npos)
      << skipped;
  // The group row (2) and its copy (6) overlap: the earlier by size_lo is kept.
  EXPECT_NE(skipped.find("segmented_winners id 6: its rectangle (sizes 100..101, counts 5..6) "
                         "overlaps"),
            std::string::npos)
      << skipped;
  EXPECT_EQ(snap.seg_exact.size(), 3u);
  EXPECT_EQ(snap.seg_exact[L2Mode::cold].find(DType::f32, Op::sum, "fixed", 100, 5)->kernel_id,
            k_group);
  EXPECT_EQ(snap.seg_exact[L2Mode::cold].find(DType::f32, Op::sum, "fixed", 5, 5), nullptr);
  EXPECT_EQ(snap.exact.size(), 1u);  // the whole-array winner is untouched
}

}  // namespace
}  // namespace tunedreduce::db
