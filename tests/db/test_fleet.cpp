// The fleet's merge (docs/fleet.md): hundreds of shard databases, each what one node's `tune`
// wrote, merged into one. Checks that the merge is order-independent (the same bytes for three
// orders of the inputs), loses nothing (every device, run and measurement of every shard, every
// size any shard's winners cover), applies the noise-aware conflict rule (docs/database.md, "Merge
// and import rules", recomputed here independently), and takes seconds. Each measurement keeps its
// provenance (schema version 5): the GPU that measured it — some nodes share their run between two
// GPUs, as `tune --devices all` does — and its run's driver and CUDA runtime; every GPU is in the
// merged file once.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>

#include "db/check.hpp"
#include "db/dataset.hpp"
#include "test_util.hpp"

namespace tunedreduce::db {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr int shard_count = 300;
constexpr int grid_points = 15;  // sizes 2^10 .. 2^24
const char* const families[] = {"smem.b256.u8.dynamic.single_pass", "streaming.b256.u4.packed",
                                "vectorized.b512.u2.two_pass", "warp_shuffle.b256.u4.two_pass"};

std::uint64_t grid_size(int k) { return std::uint64_t{1} << (10 + k); }

// Uniform in [0, 1) from the raw output of mt19937_64 (its sequence is fixed by the standard;
// the standard distributions' are not).
double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::string kernel_id(int kernel, DType dtype) {
  return std::string(families[kernel]) + "." + dtype_name(dtype) + ".sum";
}

/// The "true" time of a kernel on a model at a grid size: bandwidth-bound, with factors that
/// make different kernels the fastest at different sizes, some of them within 0.5 % of each other.
double true_us(int model, int kernel, int k) {
  const double bytes = static_cast<double>(grid_size(k)) * 4;
  const double base = 3.0 + bytes / (model == 0 ? 3.0e6 : 4.2e6);
  static const double factor[4][3] = {{1.000, 1.004, 1.020},
                                      {1.003, 1.000, 1.002},
                                      {1.020, 1.006, 1.000},
                                      {1.006, 1.030, 1.004}};
  return base * factor[kernel][(k + model) % 3];
}

/// The UUID of card \p card of node \p node, as nvidia-smi prints one.
std::string gpu_uuid(int node, int card) {
  char s[48];
  std::snprintf(s, sizeof s, "GPU-%08x-0000-4000-8000-%012d", 0x5eed0000 + card, node);
  return s;
}

struct ShardMaker {
  std::mt19937_64 rng{20261125};

  /// One node's tuning run into \p path: one model, one dtype, a contiguous range of grid sizes,
  /// four kernels measured at each with noise, the fastest of them the node's winner there.
  void make(const fs::path& path, int index) {
    const int model = index % 2;
    const DType dtype = (index / 2) % 2 ? DType::i32 : DType::f32;
    const int first = static_cast<int>(uniform(rng) * 12);
    const int last = std::min(grid_points - 1, first + 1 + static_cast<int>(uniform(rng) * 5));
    static const double spreads[] = {0.02, 0.1, 0.3};
    static const int repeat_counts[] = {10, 50, 200};

    Database db = Database::open_writer(path);
    db.connection().exec(
        "PRAGMA synchronous = OFF");  // a test's files need not survive a power cut
    const DeviceFingerprint fp = model == 0 ? test::h100() : test::h200();
    const auto dev = db.upsert_device(fp);
    RunInfo info = test::run_info();
    char host[32];
    std::snprintf(host, sizeof host, "node-%03d", index);
    info.host = host;
    // Nodes of one model run different drivers: the device row keeps only the latest, the run
    // its own.
    info.driver_version = 12080 + 10 * (index % 3);
    info.runtime_version = 13000;
    const auto run = db.begin_run(info);
    // Every 7th node has two GPUs of its model sharing the run, which measure alternately.
    std::vector<std::int64_t> gpus = {db.upsert_gpu(gpu_uuid(index, 0), dev)};
    if (index % 7 == 3) gpus.push_back(db.upsert_gpu(gpu_uuid(index, 1), dev));
    db.record_attainable_bandwidth(run, dev, model == 0 ? 3000 : 4200);
    std::vector<Winner> winners;
    for (int k = first; k <= last; ++k) {
      std::int64_t best_id = 0;
      double best_us = 0;
      int best_kernel = 0;
      for (int kernel = 0; kernel < 4; ++kernel) {
        const double noise = 1 + (uniform(rng) - 0.5) * 0.008;  // +-0.4 %
        const double median = true_us(model, kernel, k) * noise;
        Measurement m = test::measurement(run, dev, kernel_id(kernel, dtype), grid_size(k), median,
                                          dtype, Op::sum);
        const double spread = spreads[static_cast<int>(uniform(rng) * 3)];
        m.p10_us = median * (1 - spread / 2);
        m.p90_us = median * (1 + spread / 2);
        m.repeats = repeat_counts[static_cast<int>(uniform(rng) * 3)];
        m.gpu_id = gpus[static_cast<std::size_t>(kernel) % gpus.size()];
        const auto id = db.insert_measurement(m);
        if (best_id == 0 || median < best_us) {
          best_id = id;
          best_us = median;
          best_kernel = kernel;
        }
      }
      Winner w;
      w.dtype = dtype;
      w.op = Op::sum;
      w.n_lo = grid_size(k);
      w.n_hi = grid_size(k + 1) - 1;
      w.kernel_id = kernel_id(best_kernel, dtype);
      w.measurement_id = best_id;
      w.driver_version = fp.driver_version;
      w.runtime_version = fp.runtime_version;
      w.run_id = run;
      winners.push_back(w);
    }
    db.replace_winners(dev, dtype, Op::sum, winners);
    db.end_run(run, RunStatus::finished);
  }
};

/// The rule of docs/database.md, written out again from the text: the fastest time per element,
/// the tie within two standard errors of the medians' difference clamped to [0.5 %, 1 %], the tie
/// to the smaller kernel id, then evidence, then source.
struct Candidate {
  const WinnerRow* row;
  const Measurement* m;
  std::string source;
};

double relative_error(const Measurement& m) {
  return 0.489 * (*m.p90_us - *m.p10_us) / *m.median_us / std::sqrt(double(m.repeats));
}

const Candidate* expected_winner(const std::vector<Candidate>& cs, bool& tie_decided) {
  auto tpe = [](const Candidate& c) { return *c.m->median_us / double(c.m->n); };
  auto order = [](const Candidate& c) {
    return std::make_tuple(c.row->w.kernel_id, c.row->evidence, c.source);
  };
  const Candidate* fastest = nullptr;
  for (const Candidate& c : cs)
    if (!fastest ||
        std::make_tuple(tpe(c), order(c)) < std::make_tuple(tpe(*fastest), order(*fastest)))
      fastest = &c;
  const Candidate* best = nullptr;
  for (const Candidate& c : cs) {
    const double ea = relative_error(*c.m), eb = relative_error(*fastest->m);
    const double tol = std::clamp(2 * std::sqrt(ea * ea + eb * eb), 0.005, 0.01);
    if (&c != fastest && (tpe(c) - tpe(*fastest)) / tpe(*fastest) >= tol) continue;
    if (!best || order(c) < order(*best)) best = &c;
  }
  tie_decided = best->row->w.kernel_id != fastest->row->w.kernel_id;
  return best;
}

TEST(Fleet, HundredsOfShardsMergeInAnyOrderLosingNothing) {
  TempDir dir;
  fs::create_directories(dir / "shards");
  std::vector<fs::path> shards;
  const auto t0 = std::chrono::steady_clock::now();
  ShardMaker maker;
  for (int i = 0; i < shard_count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "tune-%03d.db", i);
    shards.push_back(dir / "shards" / name);
    maker.make(shards.back(), i);
    // Every 20th node also carries the run of a node two before it (same model and dtype), as a
    // shard that imported another's export: the same run, measurements and winners in two shards.
    if (i % 20 == 19) {
      Dataset other;
      {
        Database src = Database::open_reader(shards[i - 2]);
        other = read_dataset(src);
      }
      add_provenance(other, shards[i - 2].string() + ".json", "import");
      Database db = Database::open_writer(shards.back());
      import_dataset(db, other);
    }
  }
  const double make_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Every input as merge_files reads it, its provenance added.
  std::vector<Dataset> inputs;
  for (const fs::path& p : shards) {
    Database db = Database::open_reader(p);
    inputs.push_back(read_dataset(db));
    add_provenance(inputs.back(), p.string(), "merge");
  }

  // Three orders: as made, reversed, shuffled.
  std::vector<std::vector<fs::path>> orders = {shards, shards, shards};
  std::reverse(orders[1].begin(), orders[1].end());
  std::mt19937_64 shuffle_rng(17);
  for (std::size_t i = orders[2].size(); i > 1; --i)
    std::swap(orders[2][i - 1], orders[2][shuffle_rng() % i]);
  std::vector<std::string> bytes;
  double slowest_s = 0;
  MergeStats stats;
  for (std::size_t o = 0; o < orders.size(); ++o) {
    const fs::path out = dir / ("fleet-" + std::to_string(o) + ".db");
    const auto start = std::chrono::steady_clock::now();
    stats = merge_files(orders[o], out);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    slowest_s = std::max(slowest_s, s);
    bytes.push_back(test::read_file(out));
  }
  std::printf("[ fleet    ] %d shards made in %.2f s; merged in %.2f s at most (3 orders)\n",
              shard_count, make_s, slowest_s);
  EXPECT_LT(slowest_s, 30.0) << "a merge of " << shard_count << " shards should take seconds";
  for (std::size_t o = 1; o < bytes.size(); ++o)
    EXPECT_TRUE(bytes[o] == bytes[0]) << "order " << o << " gave other bytes";

  Database merged = Database::open_reader(dir / "fleet-0.db");
  const CheckReport check = check_database(merged, {}, false);
  EXPECT_TRUE(check.sound());
  EXPECT_EQ(check.foreign_key_violations, 0);
  EXPECT_EQ(check.overlapping_winners, 0);
  EXPECT_EQ(check.winners_without_ok_evidence, 0);
  EXPECT_EQ(check.measurements_on_another_models_gpu, 0);
  const Dataset out = read_dataset(merged);

  // Nothing lost: every device, run (with every shard it was in) and measurement, unchanged.
  std::set<std::string> runs;
  std::set<MeasurementRef> measurements;
  for (const Dataset& in : inputs) {
    for (const auto& [key, dev] : in.devices) EXPECT_TRUE(out.devices.count(key)) << key;
    for (const auto& [uuid, run] : in.runs) {
      runs.insert(uuid);
      auto it = out.runs.find(uuid);
      ASSERT_NE(it, out.runs.end()) << uuid;
      EXPECT_EQ(it->second.info.host, run.info.host);
      EXPECT_EQ(it->second.info.driver_version, run.info.driver_version);
      EXPECT_EQ(it->second.info.runtime_version, run.info.runtime_version);
      for (const std::string& s : run.sources) EXPECT_TRUE(it->second.sources.count(s)) << s;
    }
    for (const auto& [ref, m] : in.measurements) {
      measurements.insert(ref);
      auto it = out.measurements.find(ref);
      ASSERT_NE(it, out.measurements.end()) << ref.run_uuid << " " << ref.seq;
      EXPECT_EQ(it->second.device_key, m.device_key);
      EXPECT_EQ(it->second.m.kernel_id, m.m.kernel_id);
      EXPECT_EQ(it->second.m.n, m.m.n);
      EXPECT_EQ(it->second.m.median_us, m.m.median_us);
      EXPECT_EQ(it->second.m.p10_us, m.m.p10_us);
      EXPECT_EQ(it->second.m.p90_us, m.m.p90_us);
      EXPECT_EQ(it->second.m.repeats, m.m.repeats);
      EXPECT_EQ(it->second.m.measured_at, m.m.measured_at);
      ASSERT_TRUE(m.gpu_uuid);
      EXPECT_EQ(it->second.gpu_uuid, m.gpu_uuid);
    }
    for (const GpuRow& g : in.gpus) EXPECT_TRUE(out.gpus.count(g)) << g.uuid;
  }
  // Every GPU once: one per node, two on every 7th node.
  const std::size_t two_gpu_nodes = (shard_count - 3 + 6) / 7;
  EXPECT_EQ(out.gpus.size(), static_cast<std::size_t>(shard_count) + two_gpu_nodes);
  EXPECT_EQ(merged.gpus().size(), out.gpus.size());
  EXPECT_EQ(out.devices.size(), 2u);
  EXPECT_EQ(out.runs.size(), runs.size());
  EXPECT_EQ(runs.size(), static_cast<std::size_t>(shard_count));  // the carried runs once each
  EXPECT_EQ(out.measurements.size(), measurements.size());
  EXPECT_EQ(stats.measurement_conflicts, 0);
  EXPECT_GT(stats.winner_conflicts, 0);

  // Winners: at every boundary of every input winner, the merged file has the winner the rule
  // picks among the inputs' winners covering that size; and it covers nothing else.
  std::map<std::tuple<std::string, DType>, std::vector<Candidate>> groups;
  for (const Dataset& in : inputs)
    for (const WinnerRow& w : in.winners)
      groups[{w.device_key, w.w.dtype}].push_back(
          {&w, &in.measurements.at(w.evidence).m, w.source.value_or("")});
  EXPECT_EQ(groups.size(), 4u);  // two models x two dtypes
  int checked = 0, ties_to_a_slower_kernel = 0, contested = 0;
  for (const auto& [key, cs] : groups) {
    const auto& [device, dtype] = key;
    std::vector<const WinnerRow*> got;
    for (const WinnerRow& w : out.winners)
      if (w.device_key == device && w.w.dtype == dtype) got.push_back(&w);
    auto at = [&](std::uint64_t n) -> const WinnerRow* {
      for (const WinnerRow* w : got)
        if (w->w.n_lo <= n && n <= w->w.n_hi) return w;
      return nullptr;
    };
    auto covered_by_input = [&](std::uint64_t n) {
      return std::any_of(cs.begin(), cs.end(), [&](const Candidate& c) {
        return c.row->w.n_lo <= n && n <= c.row->w.n_hi;
      });
    };
    for (const WinnerRow* w : got) {
      EXPECT_TRUE(covered_by_input(w->w.n_lo) && covered_by_input(w->w.n_hi)) << "invented sizes";
    }
    std::set<std::uint64_t> points;
    for (const Candidate& c : cs) {
      points.insert(c.row->w.n_lo);
      points.insert(c.row->w.n_hi);
    }
    for (std::uint64_t n : points) {
      std::vector<Candidate> covering;
      for (const Candidate& c : cs)
        if (c.row->w.n_lo <= n && n <= c.row->w.n_hi) covering.push_back(c);
      bool tie_decided = false;
      const Candidate* want = expected_winner(covering, tie_decided);
      const WinnerRow* have = at(n);
      ASSERT_NE(have, nullptr) << device << " " << dtype_name(dtype) << " n = " << n << " lost";
      EXPECT_EQ(have->w.kernel_id, want->row->w.kernel_id) << "n = " << n;
      EXPECT_EQ(have->evidence, want->row->evidence) << "n = " << n;
      EXPECT_EQ(have->source.value_or(""), want->source) << "n = " << n;
      ++checked;
      if (tie_decided) ++ties_to_a_slower_kernel;
      std::set<std::string> kernels;
      for (const Candidate& c : covering) kernels.insert(c.row->w.kernel_id);
      if (kernels.size() > 1) ++contested;
    }
  }
  std::printf(
      "[ fleet    ] %d sizes checked, %d contested by several kernels, %d of them won by a "
      "slower kernel within the noise\n",
      checked, contested, ties_to_a_slower_kernel);
  // The simulation exercises both branches of the rule.
  EXPECT_GT(contested, 50);
  EXPECT_GT(ties_to_a_slower_kernel, 0);
  EXPECT_LT(ties_to_a_slower_kernel, contested);
}

}  // namespace
}  // namespace tunedreduce::db
