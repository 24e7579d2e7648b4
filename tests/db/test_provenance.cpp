// Schema version 5: the provenance of every measurement — the GPU that measured it, its run's
// driver, CUDA runtime and configuration text — written, read, migrated, exported, imported,
// merged and checked (docs/database.md, "Provenance per row").

#include <gtest/gtest.h>

#include <algorithm>

#include "common/exit_codes.hpp"
#include "common/hash.hpp"
#include "db/check.hpp"
#include "db/dataset.hpp"
#include "db/schema.hpp"
#include "db/statement.hpp"
#include "test_util.hpp"

namespace tunedreduce::db {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

const std::string gpu_a = "GPU-5eed0001-0000-4000-8000-00000000000a";
const std::string gpu_b = "GPU-5eed0001-0000-4000-8000-00000000000b";
const std::string k_shuffle = "warp_shuffle.b256.u4.two_pass.f32.sum";
const std::string k_vec = "vectorized.b512.u2.two_pass.f32.sum";
const std::string config = "space.dtypes=f32\nspace.ops=sum\nspace.sizes=512,1024\n";

/// A run with its driver, runtime and configuration text.
RunInfo provenance_run(const std::string& host, int driver) {
  RunInfo info = test::run_info();
  info.host = host;
  info.driver_version = driver;
  info.runtime_version = 13000;
  info.config_text = config;
  info.config_hash = hex64(fnv1a64(config));
  return info;
}

/// One run on \p host shared by the GPUs \p uuids of an H100 (as `tune --devices all` shares a
/// model's work), each measuring one kernel at 512, and a winner.
void make_shard(const fs::path& path, const std::string& host,
                const std::vector<std::string>& uuids, int driver = 13000) {
  Database db = Database::open_writer(path);
  const auto dev = db.upsert_device(test::h100());
  const auto run = db.begin_run(provenance_run(host, driver));
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < uuids.size(); ++i) {
    Measurement m = test::measurement(run, dev, i % 2 ? k_vec : k_shuffle, 512, 5.0 + double(i));
    m.gpu_id = db.upsert_gpu(uuids[i], dev);
    ids.push_back(db.insert_measurement(m));
  }
  Winner w;
  w.dtype = DType::f32;
  w.op = Op::sum;
  w.n_lo = 1;
  w.n_hi = 1024;
  w.kernel_id = k_shuffle;
  w.measurement_id = ids.front();
  w.driver_version = driver;
  w.runtime_version = 13000;
  w.run_id = run;
  db.replace_winners(dev, DType::f32, Op::sum, std::vector<Winner>{w});
  db.end_run(run, RunStatus::finished);
}

/// \p doc with the members of schema version 5 taken off (gpus; runs' driver_version,
/// runtime_version, config_text; measurements' gpu), as an export of a version-4 binary.
Json without_provenance(const Json& doc) {
  auto strip = [](const Json& rows, std::initializer_list<const char*> members) {
    Json out = Json::array();
    for (const Json& r : rows.as_array()) {
      Json bare = Json::object();
      for (const auto& [k, v] : r.as_object())
        if (std::none_of(members.begin(), members.end(), [&](const char* m) { return k == m; }))
          bare.set(k, v);
      out.push_back(std::move(bare));
    }
    return out;
  };
  Json out = Json::object();
  for (const auto& [key, value] : doc.as_object()) {
    if (key == "gpus") continue;
    if (key == "runs")
      out.set(key, strip(value, {"driver_version", "runtime_version", "config_text"}));
    else if (key == "measurements") out.set(key, strip(value, {"gpu"}));
    else out.set(key, value);
  }
  return out;
}

TEST(Provenance, EachMeasurementNamesItsGpuAndEachRunItsDriverRuntimeAndConfiguration) {
  TempDir dir;
  make_shard(dir / "a.db", "node-1", {gpu_a, gpu_b});
  Database db = Database::open_reader(dir / "a.db");
  const auto gpus = db.gpus();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].uuid, gpu_a);
  EXPECT_EQ(gpus[1].uuid, gpu_b);
  const auto ms = db.measurements();
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].gpu_id, gpus[0].id);  // one run, two cards: each measurement its own
  EXPECT_EQ(ms[1].gpu_id, gpus[1].id);
  EXPECT_EQ(db.find_measurement(ms[1].id)->gpu_id, gpus[1].id);
  const auto runs = db.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].info.driver_version, 13000);
  EXPECT_EQ(runs[0].info.runtime_version, 13000);
  EXPECT_EQ(runs[0].info.config_text, config);
  EXPECT_EQ(db.find_run(runs[0].id)->info.config_text, config);
  // A run without them (a caller that does not know) stores NULL.
  Database w = Database::open_writer(dir / "a.db");
  const auto bare = w.begin_run(test::run_info());
  EXPECT_FALSE(w.find_run(bare)->info.driver_version);
  EXPECT_FALSE(w.find_run(bare)->info.config_text);
  // A GPU is recorded once per (uuid, device).
  EXPECT_EQ(w.upsert_gpu(gpu_a, w.devices()[0].id), gpus[0].id);
  const auto h200 = w.upsert_device(test::h200());
  EXPECT_NE(w.upsert_gpu(gpu_a, h200), gpus[0].id);  // the same card as another model
  EXPECT_EQ(w.gpus().size(), 3u);
}

TEST(Provenance, AGpuOfAnotherModelAConfigurationOfAnotherHashAndAnEmptyUuidAreRefused) {
  TempDir dir;
  Database db = Database::open_writer(dir / "a.db");
  const auto h100 = db.upsert_device(test::h100());
  const auto h200 = db.upsert_device(test::h200());
  const auto run = db.begin_run(provenance_run("n", 13000));
  Measurement m = test::measurement(run, h100, k_shuffle, 512, 5.0);
  m.gpu_id = db.upsert_gpu(gpu_a, h200);
  try {
    db.insert_measurement(m);
    FAIL() << "a measurement of an H100 was stamped with an H200's card";
  } catch (const DbError& e) {
    EXPECT_EQ(e.problem(), Problem::invalid_data);
    EXPECT_NE(std::string(e.what()).find("is a card of device 2, not of device 1"),
              std::string::npos)
        << e.what();
  }
  m.gpu_id = 99;
  EXPECT_THROW(db.insert_measurement(m), DbError);
  EXPECT_EQ(db.counts().measurements, 0);
  RunInfo info = provenance_run("n", 13000);
  info.config_hash = "0000000000000000";
  try {
    db.begin_run(info);
    FAIL() << "a configuration text that is not the hash's was stored";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("not to its config hash 0000000000000000"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(db.upsert_gpu("", h100), DbError);
}

TEST(Migration, Version4IsReadAsItIsAndMigratedByWriters) {
  TempDir dir;
  const auto path = test::copy_fixture("schema_v4.db", dir);
  const std::string before = test::read_file(path);
  {
    // Readers take the missing table for empty and the missing columns for NULL, and change
    // nothing; export reads the file like any other.
    Database r = Database::open_reader(path);
    EXPECT_EQ(r.file_schema_version(), 4);
    EXPECT_FALSE(r.has_provenance());
    EXPECT_TRUE(r.gpus().empty());
    const auto ms = r.measurements();
    ASSERT_EQ(ms.size(), 40u);
    for (const auto& m : ms) EXPECT_FALSE(m.gpu_id);
    ASSERT_EQ(r.runs().size(), 1u);
    EXPECT_FALSE(r.runs()[0].info.driver_version);
    EXPECT_FALSE(r.runs()[0].info.config_text);
    const Dataset d = read_dataset(r);
    EXPECT_TRUE(d.gpus.empty());
    EXPECT_EQ(d.measurements.size(), 40u);
    const CheckReport check = check_database(r, {}, false);
    EXPECT_TRUE(check.sound());
    EXPECT_EQ(check.schema_version, 4);
  }
  EXPECT_EQ(test::read_file(path), before);

  Database db = Database::open_writer(path);
  EXPECT_EQ(db.file_schema_version(), schema_version);
  EXPECT_TRUE(db.has_provenance());
  EXPECT_EQ(db.counts().measurements, 40);
  EXPECT_EQ(db.connection().query_text("PRAGMA quick_check"), "ok");
  EXPECT_EQ(db.connection().query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  // Version 6 (the operator exact_sum) raised it from 3 to 6, version 7 (wide_sum) to 7, version
  // 8 (the element types f16 and bf16) to 8, version 9 (the operators argmin and argmax) to 9,
  // version 10 (exact_sum of f16 and bf16) to 10, version 11 (no lists of names) to 11, version
  // 12 (segmented measurements) to 12.
  EXPECT_EQ(db.connection().query_text("SELECT value FROM meta WHERE key = 'min_reader_version'"),
            std::to_string(min_reader_version));
  // Rows older than version 5 have no provenance; nothing is invented for them.
  for (const auto& m : db.measurements()) EXPECT_FALSE(m.gpu_id);
  EXPECT_FALSE(db.runs()[0].info.driver_version);
  // The migrated file has exactly the schema of a new one.
  Database fresh = Database::open_writer(dir / "fresh.db");
  const char* q =
      "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_schema ORDER BY name)";
  EXPECT_EQ(db.connection().query_text(q), fresh.connection().query_text(q));
  // New runs record their GPU.
  const auto dev = db.devices()[0].id;
  const auto run = db.begin_run(provenance_run("n", 13010));
  Measurement m = test::measurement(run, dev, k_shuffle, 4096, 5.0);
  m.gpu_id = db.upsert_gpu(gpu_a, dev);
  EXPECT_EQ(db.find_measurement(db.insert_measurement(m))->gpu_id, m.gpu_id);
}

TEST(Export, GpusAndRunProvenanceRoundTripAndOlderExportsStillImport) {
  TempDir dir;
  make_shard(dir / "a.db", "node-1", {gpu_a, gpu_b});
  Dataset d;
  {
    Database r = Database::open_reader(dir / "a.db");
    d = read_dataset(r);
  }
  const Json doc = dataset_to_json(d);
  ASSERT_TRUE(doc.find("gpus"));
  EXPECT_EQ(doc.find("gpus")->as_array().size(), 2u);
  const std::string text = doc.dump(2);
  const Dataset back = dataset_from_json(Json::parse(text), dir / "a.json");
  EXPECT_EQ(dataset_to_json(back).dump(2), text);
  ASSERT_EQ(back.gpus.size(), 2u);
  EXPECT_EQ(back.gpus.begin()->uuid, gpu_a);
  EXPECT_EQ(back.measurements.begin()->second.gpu_uuid, gpu_a);
  EXPECT_EQ(back.runs.begin()->second.info.config_text, config);
  {
    Database fresh = Database::open_writer(dir / "b.db");
    import_dataset(fresh, back);
    EXPECT_EQ(fresh.gpus().size(), 2u);
    EXPECT_EQ(fresh.measurements()[1].gpu_id, fresh.gpus()[1].id);
    EXPECT_EQ(fresh.runs()[0].info.driver_version, 13000);
  }

  // An export of a version-4 binary has none of it, and imports as rows without provenance.
  const Dataset old = dataset_from_json(without_provenance(doc), dir / "old.json");
  EXPECT_TRUE(old.gpus.empty());
  EXPECT_FALSE(old.measurements.begin()->second.gpu_uuid);
  EXPECT_FALSE(old.runs.begin()->second.info.config_text);
  Database c = Database::open_writer(dir / "c.db");
  import_dataset(c, old);
  EXPECT_TRUE(c.gpus().empty());
  // Importing the full export afterwards adds what the old one lacked, without a conflict.
  const MergeStats stats = import_dataset(c, back);
  EXPECT_EQ(stats.measurement_conflicts, 0);
  EXPECT_EQ(stats.gpus_added, 2);
  EXPECT_EQ(c.gpus().size(), 2u);
  EXPECT_EQ(c.measurements()[0].gpu_id, c.gpus()[0].id);
  EXPECT_EQ(c.runs()[0].info.config_text, config);

  // Import names what is wrong.
  auto expect_refused = [&](Json bad, const std::string& what) {
    try {
      dataset_from_json(bad, dir / "bad.json");
      FAIL() << "accepted: " << what;
    } catch (const DbError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto edited = [&](const char* table, std::size_t i, const char* key, Json value) {
    Json doc = Json::parse(text);
    Json rows = *doc.find(table);
    rows.as_array()[i].set(key, std::move(value));
    doc.set(table, std::move(rows));
    return doc;
  };
  expect_refused(edited("measurements", 0, "gpu", "GPU-nobody"),
                 "$.measurements[0].gpu: no GPU 'GPU-nobody' of device");
  expect_refused(edited("runs", 0, "config_text", "space.dtypes=i32\n"),
                 "$.runs[0].config_text: hashes to");
  Json bad = edited("gpus", 1, "uuid", gpu_a);
  expect_refused(bad, "$.gpus[1]: duplicate GPU");
}

TEST(Merge, EveryGpuOnceAndACopyWithoutProvenanceTakesItFromTheOther) {
  TempDir dir;
  make_shard(dir / "a.db", "node-1", {gpu_a, gpu_b}, 13000);
  make_shard(dir / "b.db", "node-2", {gpu_b}, 13010);  // gpu_b moved to node-2
  // c.db: node-1's run as a version-4 binary exported it, imported into a database of its own.
  {
    Database a = Database::open_reader(dir / "a.db");
    const Json old = without_provenance(dataset_to_json(read_dataset(a)));
    Database c = Database::open_writer(dir / "c.db");
    import_dataset(c, dataset_from_json(old, dir / "old.json"));
  }
  std::vector<std::string> bytes;
  MergeStats stats;
  for (const auto& order :
       std::vector<std::vector<fs::path>>{{dir / "a.db", dir / "b.db", dir / "c.db"},
                                          {dir / "c.db", dir / "b.db", dir / "a.db"},
                                          {dir / "b.db", dir / "c.db", dir / "a.db"}}) {
    const fs::path out = dir / ("out" + std::to_string(bytes.size()) + ".db");
    stats = merge_files(order, out);
    bytes.push_back(test::read_file(out));
  }
  for (const std::string& b : bytes) EXPECT_TRUE(b == bytes[0]);
  EXPECT_EQ(stats.measurement_conflicts, 0);
  Database out = Database::open_reader(dir / "out0.db");
  const auto gpus = out.gpus();
  ASSERT_EQ(gpus.size(), 2u);  // gpu_b once, though two shards have it
  const Dataset d = read_dataset(out);
  ASSERT_EQ(d.runs.size(), 2u);
  ASSERT_EQ(d.measurements.size(), 3u);
  for (const auto& [ref, m] : d.measurements) {
    const RunRow& run = d.runs.at(ref.run_uuid);
    // node-1's copy from c.db lacks the GPUs, driver and configuration; a.db's has them.
    ASSERT_TRUE(m.gpu_uuid) << run.info.host << " " << ref.seq;
    EXPECT_EQ(*m.gpu_uuid, run.info.host == "node-2" || ref.seq == 2 ? gpu_b : gpu_a);
    EXPECT_EQ(run.info.driver_version, run.info.host == "node-1" ? 13000 : 13010);
    EXPECT_EQ(run.info.config_text, config);
  }
  const CheckReport check = check_database(out, {}, false);
  EXPECT_EQ(check.foreign_key_violations, 0);
  EXPECT_EQ(check.measurements_on_another_models_gpu, 0);
  EXPECT_EQ(check.runs_with_foreign_config_text, 0);
}

TEST(Check, CountsMeasurementsOnAnotherModelsGpuAndForeignConfigurationText) {
  TempDir dir;
  make_shard(dir / "a.db", "node-1", {gpu_a, gpu_b});
  {
    // What only a hand-edited or damaged file can hold: the writers refuse both.
    Database db = Database::open_writer(dir / "a.db");
    const auto h200 = db.upsert_device(test::h200());
    const auto other = db.upsert_gpu(gpu_a, h200);
    Statement st = db.connection().prepare("UPDATE measurements SET gpu_id = ?1 WHERE seq = 2");
    st.bind_all(other).run();
    db.connection().exec("UPDATE runs SET config_text = 'space.dtypes=i32\n'");
  }
  Database r = Database::open_reader(dir / "a.db");
  const CheckReport check = check_database(r, {k_shuffle, k_vec}, false);
  EXPECT_TRUE(check.sound());
  EXPECT_EQ(check.foreign_key_violations, 0);
  EXPECT_EQ(check.measurements_on_another_models_gpu, 1);
  EXPECT_EQ(check.runs_with_foreign_config_text, 1);
  EXPECT_FALSE(check.ok());
}

}  // namespace
}  // namespace tunedreduce::db
