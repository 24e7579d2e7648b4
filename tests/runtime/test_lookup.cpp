// The lookup order and levels on snapshots of synthetic databases and of
// tests/data/h100-sample.db, and the check of every row against the registry and the device.
// No GPU: TuningTable makes no CUDA call.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "db/dataset.hpp"
#include "db/snapshot.hpp"
#include "kernels/exact_geometry.hpp"
#include "kernels/geometry.hpp"
#include "kernels/registry.hpp"
#include "runtime/defaults.hpp"
#include "runtime/tuning.hpp"
#include "runtime_test_util.hpp"
#include "tests/db/test_util.hpp"

namespace tunedreduce::runtime::test {
namespace {

using db::test::TempDir;
constexpr std::uint64_t max_n = std::uint64_t{1} << 40;

db::Snapshot sample_snapshot(const DeviceFingerprint& fp) {
  db::ReaderOptions opt;
  opt.immutable = true;  // read in place, no -shm beside the source tree's file
  db::Snapshot s = db::load_snapshot(sample_db(), fp, opt);
  EXPECT_FALSE(s.problem) << s.message;
  return s;
}

std::string id(const Choice& c) { return c.entry ? c.entry->id : "(none)"; }

TEST(SampleDb, TunedKeysMatchTheirIntervalExactly) {
  const DeviceFingerprint fp = sample_device();
  ASSERT_EQ(fp.key(), "09b523d0aee380fb") << "the hand-made fingerprint must match the device row";
  TuningTable t(sample_snapshot(fp), info_of(fp).limits);
  EXPECT_EQ(t.exact_rows(), 25u);
  EXPECT_TRUE(t.rejected().empty());
  struct Case {
    DType d;
    Op o;
    std::uint64_t n;
    const char* kernel;
  } cases[] = {
      {DType::i32, Op::sum, 1, "streaming.b128.u2.packed.i32.sum"},
      {DType::i32, Op::sum, 4095, "streaming.b128.u2.packed.i32.sum"},
      {DType::i32, Op::sum, 4096, "streaming.b64.u1.packed.i32.sum"},
      {DType::i32, Op::sum, 1 << 20, "vectorized.b128.u1.packed.i32.sum"},
      {DType::i32, Op::sum, std::uint64_t{1} << 30, "streaming.b256.u2.packed.i32.sum"},
      {DType::i32, Op::sum, max_n, "streaming.b256.u2.packed.i32.sum"},
      {DType::i32, Op::max, std::uint64_t{1} << 26, "streaming.b1024.u2.single_pass.i32.max"},
      {DType::f32, Op::max, 5000, "tiled.b1024.u4.single_pass.f32.max"},
      {DType::f32, Op::sum, 33554431, "streaming.b1024.u2.single_pass.f32.sum"},
  };
  for (const Case& c : cases) {
    const Choice ch = t.choose(c.d, c.o, c.n);
    EXPECT_EQ(ch.level, Level::exact) << dtype_name(c.d) << " " << op_name(c.o) << " " << c.n;
    EXPECT_EQ(id(ch), c.kernel) << dtype_name(c.d) << " " << op_name(c.o) << " " << c.n;
    ASSERT_NE(ch.row, nullptr);
    EXPECT_LE(ch.row->n_lo, c.n);
    EXPECT_GE(ch.row->n_hi, c.n);
    EXPECT_EQ(ch.row->device_key, fp.key());
    EXPECT_GT(ch.row->median_us, 0);
  }
}

TEST(SampleDb, SizesOutsideEveryIntervalTakeTheNearest) {
  const DeviceFingerprint fp = sample_device();
  TuningTable t(sample_snapshot(fp), info_of(fp).limits);
  // The intervals start at 1 and end at 2^40: n = 0 and n above 2^40 are outside all of them.
  Choice c = t.choose(DType::i32, Op::sum, 0);
  EXPECT_EQ(c.level, Level::nearest);
  EXPECT_EQ(id(c), "streaming.b128.u2.packed.i32.sum");
  c = t.choose(DType::f32, Op::max, max_n + 1);
  EXPECT_EQ(c.level, Level::nearest);
  EXPECT_EQ(id(c), "streaming.b1024.u2.single_pass.f32.max");
}

TEST(SampleDb, AnotherDeviceOfTheSameModelUsesItsWinners) {
  const DeviceFingerprint fp = same_model_device();
  ASSERT_NE(fp.key(), sample_device().key());
  db::Snapshot s = sample_snapshot(fp);
  EXPECT_TRUE(s.exact.empty());
  TuningTable t(s, info_of(fp).limits);
  EXPECT_EQ(t.similar_rows(), 25u);
  const Choice c = t.choose(DType::i32, Op::sum, 1 << 20);
  EXPECT_EQ(c.level, Level::same_model);
  EXPECT_EQ(id(c), "vectorized.b128.u1.packed.i32.sum");
  EXPECT_EQ(c.row->device_key, sample_device().key());
  // Untuned keys still fall to the default.
  EXPECT_EQ(t.choose(DType::f64, Op::sum, 1 << 20).level, Level::builtin_default);
}

TEST(SampleDb, ADeviceWithTheSameCoresButAnotherMemorySystemGetsTheBuiltInDefault) {
  // An H200: the H100's compute capability and SM count, another bus, memory clock and L2. Its
  // timings are not the H100's, so the H100's rows are no evidence for it.
  DeviceFingerprint h200 = sample_device();
  h200.name = "NVIDIA H200";
  h200.bus_width_bits = 6016;  // as the driver reports it (tests/data/h200-sample.db)
  h200.l2_bytes = 62914560;
  h200.mem_clock_khz = 3201000;
  h200.total_mem_bytes = 150109880320;
  const db::Snapshot s = sample_snapshot(h200);
  EXPECT_TRUE(s.exact.empty());
  EXPECT_TRUE(s.similar.empty());
  TuningTable t(s, info_of(h200).limits);
  for (std::uint64_t n : {std::uint64_t{1} << 12, std::uint64_t{1} << 20, std::uint64_t{1} << 26}) {
    const Choice c = t.choose(DType::i32, Op::sum, n);
    EXPECT_EQ(c.level, Level::builtin_default);
    EXPECT_STREQ(c.entry->id, builtin_default_id(DType::i32, Op::sum, n));
  }
  // One difference of the memory system is enough.
  for (int which = 0; which < 3; ++which) {
    DeviceFingerprint f = same_model_device();
    if (which == 0) f.bus_width_bits += 1024;
    if (which == 1) f.l2_bytes *= 2;
    if (which == 2) f.mem_clock_khz += 100000;
    EXPECT_TRUE(sample_snapshot(f).similar.empty()) << which;
  }
}

TEST(Order, ANearestRowServesOnlyWithinAFactorOfFourOfItsInterval) {
  TempDir dir;
  const auto path = dir / "tune.db";
  const DeviceFingerprint me = sample_device(), twin = same_model_device();
  add_device_rows(path, me,
                  {{DType::f32, Op::sum, 1 << 16, 1 << 20,
                    "smem.b256.u4.static.two_pass.f32.sum"}});
  add_device_rows(path, twin,
                  {{DType::i64, Op::min, 1 << 16, 1 << 20,
                    "warp_shuffle.b512.u8.single_pass.i64.min"}});
  TuningTable t(db::load_snapshot(path, me), info_of(me).limits);
  EXPECT_EQ(t.choose(DType::f32, Op::sum, 1 << 14).level, Level::nearest);
  EXPECT_EQ(t.choose(DType::f32, Op::sum, (1 << 14) - 1).level, Level::builtin_default);
  EXPECT_EQ(t.choose(DType::f32, Op::sum, 1 << 22).level, Level::nearest);
  EXPECT_EQ(t.choose(DType::f32, Op::sum, (1 << 22) + 4).level, Level::builtin_default);
  EXPECT_EQ(t.choose(DType::f32, Op::sum, 1 << 30).level, Level::builtin_default);
  EXPECT_EQ(t.choose(DType::i64, Op::min, 1 << 22).level, Level::same_model);
  EXPECT_EQ(t.choose(DType::i64, Op::min, 1 << 24).level, Level::builtin_default);
  EXPECT_EQ(t.choose(DType::i64, Op::min, 1 << 12).level, Level::builtin_default);
}

TEST(Order, ASingleTileRowServesOnlyItsTileThenTheNextIntervalWithinReach) {
  TempDir dir;
  const auto path = dir / "tune.db";
  const DeviceFingerprint me = sample_device(), twin = same_model_device();
  const char* tile = "single_tile.b256.u4.single_pass.f32.sum";  // 4096 elements
  // An interval that reaches past the tile (a hand-made or older database): the next row takes
  // the sizes its kernel cannot.
  add_device_rows(path, me,
                  {{DType::f32, Op::sum, 1, 5792, tile},
                   {DType::f32, Op::sum, 5793, max_n, "tiled.b256.u4.single_pass.f32.sum"},
                   {DType::i32, Op::max, 1, 4096, "single_tile.b256.u4.single_pass.i32.max"}});
  add_device_rows(path, twin,
                  {{DType::f64, Op::min, 1, 8192, "single_tile.b256.u4.single_pass.f64.min"},
                   {DType::f64, Op::min, 8193, max_n, "vectorized.b256.u2.single_pass.f64.min"}});
  TuningTable t(db::load_snapshot(path, me), info_of(me).limits);
  EXPECT_TRUE(t.rejected().empty());
  Choice c = t.choose(DType::f32, Op::sum, 4096);
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_EQ(id(c), tile);
  c = t.choose(DType::f32, Op::sum, 4097);
  EXPECT_EQ(c.level, Level::nearest);
  EXPECT_EQ(id(c), "tiled.b256.u4.single_pass.f32.sum");
  EXPECT_EQ(c.row->n_lo, 5793u);
  // Nothing above the tile row: past its tile the built-in default, which takes n.
  c = t.choose(DType::i32, Op::max, 4096);
  EXPECT_EQ(c.level, Level::exact);
  c = t.choose(DType::i32, Op::max, 5000);
  EXPECT_EQ(c.level, Level::builtin_default);
  EXPECT_LE(5000u, kernels::max_elements_of(c.entry->params));
  // The same model's rows: the tile row up to 2048 elements, then its next interval.
  c = t.choose(DType::f64, Op::min, 2048);
  EXPECT_EQ(c.level, Level::same_model);
  EXPECT_EQ(id(c), "single_tile.b256.u4.single_pass.f64.min");
  c = t.choose(DType::f64, Op::min, 3000);
  EXPECT_EQ(c.level, Level::same_model);
  EXPECT_EQ(id(c), "vectorized.b256.u2.single_pass.f64.min");
  // Every choice takes its n.
  for (std::uint64_t n = 1; n < 20000; n += 97)
    for (auto [d, o] : {std::pair{DType::f32, Op::sum}, std::pair{DType::i32, Op::max},
                        std::pair{DType::f64, Op::min}})
      EXPECT_LE(n, kernels::max_elements_of(t.choose(d, o, n).entry->params)) << n;
}

TEST(SampleDb, UntunedKeysAndOtherModelsGetTheBuiltInDefault) {
  TuningTable same(sample_snapshot(sample_device()), info_of(sample_device()).limits);
  for (DType d : {DType::u32, DType::i64, DType::u64, DType::f64})
    for (Op o : all_ops) {
      if (!op_applies(d, o)) continue;
      const Choice c = same.choose(d, o, 1 << 20);
      EXPECT_EQ(c.level, Level::builtin_default);
      EXPECT_EQ(id(c), builtin_default_id(d, o, 1 << 20));
      EXPECT_EQ(c.row, nullptr);
    }
  EXPECT_EQ(same.choose(DType::i32, Op::min, 1000).level, Level::builtin_default);

  const DeviceFingerprint a100 = other_model_device();
  TuningTable other(sample_snapshot(a100), info_of(a100).limits);
  EXPECT_EQ(other.exact_rows() + other.similar_rows(), 0u);
  const Choice c = other.choose(DType::i32, Op::sum, 1 << 20);
  EXPECT_EQ(c.level, Level::builtin_default);
  EXPECT_EQ(id(c), builtin_default_id(DType::i32, Op::sum, 1 << 20));
}

TEST(Defaults, EveryKeyHasARegistryEntryThatRunsOnSm75AndUp) {
  kernels::DeviceLimits turing;
  turing.cc_major = 7;
  turing.cc_minor = 5;
  turing.max_threads_per_block = 1024;
  TuningTable t(turing);
  for (const DefaultRule& r : builtin_default_rules()) {
    const kernels::Entry* e = kernels::find(r.kernel_id);
    ASSERT_NE(e, nullptr) << r.kernel_id;
    EXPECT_EQ(e->params.dtype, r.dtype) << r.kernel_id;
    EXPECT_EQ(e->params.op, r.op) << r.kernel_id;
    EXPECT_FALSE(e->can_implement(1, dtype_size(r.dtype), turing)) << r.kernel_id;
    // Up to the end of its interval (a single_tile rule ends at its tile).
    EXPECT_FALSE(e->can_implement(std::min({max_n, r.n_hi, kernels::max_elements_of(e->params)}),
                                  dtype_size(r.dtype), turing))
        << r.kernel_id;
    EXPECT_EQ(t.default_entry(r.dtype, r.op, r.n_hi), e);
    EXPECT_EQ(std::string(builtin_default_id(r.dtype, r.op, r.n_hi)), r.kernel_id);
  }
}

TEST(Defaults, EveryKeyHasRulesInIncreasingSizeEndingAtTheLargestSize) {
  const auto rules = builtin_default_rules();
  for (DType d : all_dtypes)
    for (Op o : all_ops) {
      if (!op_applies(d, o)) continue;  // no integer exact_sum: no rules (checked below)
      std::vector<std::uint64_t> ends;
      for (const DefaultRule& r : rules)
        if (r.dtype == d && r.op == o) ends.push_back(r.n_hi);
      ASSERT_FALSE(ends.empty()) << dtype_name(d) << " " << op_name(o);
      EXPECT_TRUE(std::is_sorted(ends.begin(), ends.end()));
      EXPECT_EQ(std::adjacent_find(ends.begin(), ends.end()), ends.end());
      EXPECT_EQ(ends.back(), ~std::uint64_t{0}) << dtype_name(d) << " " << op_name(o);
      // Every size gets the rule whose interval contains it.
      for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 12,
                              std::uint64_t{1} << 20, std::uint64_t{1} << 30, max_n}) {
        const char* want = nullptr;
        for (const DefaultRule& r : rules)
          if (r.dtype == d && r.op == o && n <= r.n_hi) {
            want = r.kernel_id;
            break;
          }
        EXPECT_STREQ(builtin_default_id(d, o, n), want);
        TuningTable t((kernels::DeviceLimits()));
        EXPECT_STREQ(t.choose(d, o, n).entry->id, want);
      }
    }
}

TEST(Order, ThisDevicesNearestSizeComesBeforeAnotherDevicesExactInterval) {
  TempDir dir;
  const auto path = dir / "tune.db";
  const DeviceFingerprint me = sample_device(), twin = same_model_device();
  add_device_rows(path, me,
                  {{DType::f32, Op::sum, 1, 1000, "smem.b256.u4.static.two_pass.f32.sum"}});
  add_device_rows(path, twin,
                  {{DType::f32, Op::sum, 1, max_n, "warp_shuffle.b512.u8.single_pass.f32.sum"},
                   {DType::i64, Op::min, 1, max_n, "warp_shuffle.b512.u8.single_pass.i64.min"}});
  TuningTable t(db::load_snapshot(path, me), info_of(me).limits);
  Choice c = t.choose(DType::f32, Op::sum, 500);
  EXPECT_EQ(c.level, Level::exact);
  c = t.choose(DType::f32, Op::sum, 3000);  // level 2 beats level 3
  EXPECT_EQ(c.level, Level::nearest);
  EXPECT_EQ(id(c), "smem.b256.u4.static.two_pass.f32.sum");
  c = t.choose(DType::f32, Op::sum, 5000);  // beyond 4 x 1000: level 3
  EXPECT_EQ(c.level, Level::same_model);
  EXPECT_EQ(id(c), "warp_shuffle.b512.u8.single_pass.f32.sum");
  c = t.choose(DType::i64, Op::min, 5000);  // nothing of this device: level 3
  EXPECT_EQ(c.level, Level::same_model);
  EXPECT_EQ(id(c), "warp_shuffle.b512.u8.single_pass.i64.min");
  EXPECT_EQ(c.row->device_key, twin.key());
  c = t.choose(DType::u64, Op::max, 5000);  // nothing at all: level 4
  EXPECT_EQ(c.level, Level::builtin_default);
}

TEST(Order, NearestPrefersTheCloserIntervalAndTheSmallerOnATie) {
  TempDir dir;
  const auto path = dir / "tune.db";
  const DeviceFingerprint me = sample_device();
  add_device_rows(path, me,
                  {{DType::u32, Op::sum, 1000, 2000, "interleaved.b128.two_pass.u32.sum"},
                   {DType::u32, Op::sum, 6000, 7000, "unroll.b256.u8.two_pass.u32.sum"}});
  TuningTable t(db::load_snapshot(path, me), info_of(me).limits);
  EXPECT_EQ(id(t.choose(DType::u32, Op::sum, 2500)), "interleaved.b128.two_pass.u32.sum");
  EXPECT_EQ(id(t.choose(DType::u32, Op::sum, 5500)), "unroll.b256.u8.two_pass.u32.sum");
  EXPECT_EQ(id(t.choose(DType::u32, Op::sum, 4000)), "interleaved.b128.two_pass.u32.sum");  // tie
  EXPECT_EQ(id(t.choose(DType::u32, Op::sum, 250)), "interleaved.b128.two_pass.u32.sum");
  EXPECT_EQ(id(t.choose(DType::u32, Op::sum, 28000)), "unroll.b256.u8.two_pass.u32.sum");
  // Further than a factor of 4 from every interval: the built-in default.
  EXPECT_EQ(t.choose(DType::u32, Op::sum, 249).level, Level::builtin_default);
  EXPECT_EQ(t.choose(DType::u32, Op::sum, 28004).level, Level::builtin_default);
  EXPECT_EQ(t.choose(DType::u32, Op::sum, 1 << 30).level, Level::builtin_default);
  EXPECT_EQ(t.choose(DType::u32, Op::sum, 6500).level, Level::exact);
  EXPECT_EQ(t.choose(DType::u32, Op::sum, 6500).row->n_lo, 6000u);
}

TEST(Order, SameModelPrefersTheIntervalContainingN) {
  TempDir dir;
  const auto path = dir / "tune.db";
  add_device_rows(path, same_model_device(),
                  {{DType::f64, Op::max, 1, 99999, "smem.b128.u2.dynamic.single_pass.f64.max"},
                   {DType::f64, Op::max, 100000, max_n, "vectorized.b256.u2.single_pass.f64.max"}});
  TuningTable t(db::load_snapshot(path, sample_device()), info_of(sample_device()).limits);
  EXPECT_EQ(id(t.choose(DType::f64, Op::max, 50)), "smem.b128.u2.dynamic.single_pass.f64.max");
  EXPECT_EQ(id(t.choose(DType::f64, Op::max, 1 << 20)), "vectorized.b256.u2.single_pass.f64.max");
  EXPECT_EQ(t.choose(DType::f64, Op::max, 1 << 20).level, Level::same_model);
}

TEST(CacheStateOrder, ThePreferredModeComesFirstThenTheOtherModeOfThisDeviceThenTheSameModel) {
  TempDir dir;
  const auto path = dir / "tune.db";
  const DeviceFingerprint me = sample_device(), twin = same_model_device();
  const auto cold = db::L2Mode::cold, warm = db::L2Mode::warm;
  // This device: cold rows over every size, warm rows below 2^20 only; the twin: warm rows of
  // i64 min, cold rows of u32 max.
  add_device_rows(path, me,
                  {{DType::f32, Op::sum, 1, max_n, "vectorized.b256.u4.single_pass.f32.sum"}},
                  cold);
  add_device_rows(path, me,
                  {{DType::f32, Op::sum, 1, (1u << 20) - 1,
                    "smem.b128.u2.dynamic.single_pass.f32.sum"}},
                  warm);
  add_device_rows(path, twin,
                  {{DType::i64, Op::min, 1, max_n, "warp_shuffle.b512.u8.single_pass.i64.min"}},
                  warm);
  add_device_rows(path, twin,
                  {{DType::i64, Op::min, 1, max_n, "smem.b256.u4.dynamic.single_pass.i64.min"}},
                  cold);
  add_device_rows(path, me, {{DType::u32, Op::max, 1, 1000, "interleaved.b128.two_pass.u32.max"}},
                  warm);
  TuningTable t(db::load_snapshot(path, me), info_of(me).limits);
  EXPECT_EQ(t.exact_rows(), 3u);
  EXPECT_EQ(t.similar_rows(), 2u);

  // Cold preferred (the default): the cold row everywhere.
  for (std::uint64_t n : {std::uint64_t{1000}, std::uint64_t{1} << 30}) {
    const Choice c = t.choose(DType::f32, Op::sum, n);
    EXPECT_EQ(id(c), "vectorized.b256.u4.single_pass.f32.sum");
    EXPECT_EQ(c.level, Level::exact);
    EXPECT_EQ(c.row->l2_mode, cold);
  }
  // Warm preferred: the warm row where it is tuned, and within reach (level nearest) before the
  // cold row of the exact size; beyond reach, this device's cold row.
  Choice c = t.choose(DType::f32, Op::sum, 1000, warm);
  EXPECT_EQ(id(c), "smem.b128.u2.dynamic.single_pass.f32.sum");
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_EQ(c.row->l2_mode, warm);
  c = t.choose(DType::f32, Op::sum, 1u << 21, warm);
  EXPECT_EQ(id(c), "smem.b128.u2.dynamic.single_pass.f32.sum");
  EXPECT_EQ(c.level, Level::nearest);
  c = t.choose(DType::f32, Op::sum, 1u << 24, warm);
  EXPECT_EQ(id(c), "vectorized.b256.u4.single_pass.f32.sum");
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_EQ(c.row->l2_mode, cold);
  // This device's rows of either mode come before the same model's rows.
  c = t.choose(DType::u32, Op::max, 500, db::L2Mode::cold);
  EXPECT_EQ(c.level, Level::exact);
  EXPECT_EQ(c.row->l2_mode, warm);
  // At the same-model level the preferred mode comes first too.
  c = t.choose(DType::i64, Op::min, 1u << 20, warm);
  EXPECT_EQ(c.level, Level::same_model);
  EXPECT_EQ(id(c), "warp_shuffle.b512.u8.single_pass.i64.min");
  c = t.choose(DType::i64, Op::min, 1u << 20, cold);
  EXPECT_EQ(c.level, Level::same_model);
  EXPECT_EQ(id(c), "smem.b256.u4.dynamic.single_pass.i64.min");
  // Nothing of either mode: the built-in default.
  EXPECT_EQ(t.choose(DType::u64, Op::sum, 1u << 20, warm).level, Level::builtin_default);
}

TEST(RowChecks, RowsThisBinaryCannotRunAreDroppedWithTheReason) {
  TempDir dir;
  const auto path = dir / "tune.db";
  const DeviceFingerprint me = sample_device();
  add_device_rows(path, me,
                  {{DType::i32, Op::sum, 1, 1000, "vectorized.b128.u2.single_pass.i32.sum"},
                   {DType::i32, Op::sum, 1001, 5000, "hyperspeed.b256.single_pass.i32.sum"},
                   {DType::i32, Op::sum, 5001, max_n, "vectorized.b128.u2.single_pass.f32.sum"},
                   {DType::f32, Op::min, 1, max_n, "complete_unroll.b1024.u8.two_pass.f32.min"}});
  kernels::DeviceLimits small = info_of(me).limits;
  small.max_threads_per_block = 512;  // a device where block-1024 kernels cannot run
  TuningTable t(db::load_snapshot(path, me), small);
  ASSERT_EQ(t.rejected().size(), 3u);
  std::string all;
  for (const auto& r : t.rejected()) all += r + "\n";
  EXPECT_NE(all.find("'hyperspeed.b256.single_pass.i32.sum', which this binary does not have"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("reduces another type or operator"), std::string::npos) << all;
  EXPECT_NE(all.find("cannot run on this device: block size 1024 exceeds the device limit of 512"),
            std::string::npos)
      << all;
  EXPECT_EQ(t.exact_rows(), 1u);
  // The dropped rows' sizes fall to the nearest usable row of this device.
  EXPECT_EQ(t.choose(DType::i32, Op::sum, 3000).level, Level::nearest);
  EXPECT_EQ(id(t.choose(DType::i32, Op::sum, 3000)), "vectorized.b128.u2.single_pass.i32.sum");
  // A key whose only row was dropped gets the default (which itself must run on the device:
  // block 1024 does not here, so another entry of the registry stands in).
  const Choice c = t.choose(DType::f32, Op::min, 3000);
  EXPECT_EQ(c.level, Level::builtin_default);
  ASSERT_NE(c.entry, nullptr);
  EXPECT_FALSE(c.entry->can_implement(3000, 4, small));
  EXPECT_EQ(c.entry->params.dtype, DType::f32);
  EXPECT_EQ(c.entry->params.op, Op::min);
}

TEST(RowChecks, ABrokenDatabaseGivesEmptyTablesAndDefaults) {
  db::Snapshot s = db::load_snapshot("/nonexistent/folder/tune.db", sample_device());
  ASSERT_TRUE(s.problem);
  TuningTable t(s, info_of(sample_device()).limits);
  for (DType d : all_dtypes)
    for (Op o : all_ops) {
      if (!op_applies(d, o)) continue;
      EXPECT_EQ(t.choose(d, o, 1 << 20).level, Level::builtin_default);
    }
}

TEST(Defaults, ExactSumHasItsOwnRulesForFloatTypesOnly) {
  for (const DefaultRule& r : builtin_default_rules())
    EXPECT_EQ(r.op == Op::exact_sum,
              kernels::is_exact_family(kernels::find(r.kernel_id)->params.family))
        << r.kernel_id;
  EXPECT_STREQ(builtin_default_id(DType::f32, Op::exact_sum, 1 << 20),
               "exact_registers.b512.u1.single_pass.f32.exact_sum");
  EXPECT_STREQ(builtin_default_id(DType::f64, Op::exact_sum, 1 << 20),
               "exact.b512.u1.single_pass.f64.exact_sum");
  EXPECT_STREQ(builtin_default_id(DType::f32, Op::exact_sum, std::uint64_t{1} << 30),
               "exact_wide.b512.u4.single_pass.f32.exact_sum");
  for (DType d : {DType::i32, DType::u32, DType::i64, DType::u64})
    EXPECT_STREQ(builtin_default_id(d, Op::exact_sum, 1 << 20), "") << dtype_name(d);
  // 2^40 is past the exact kernels' limit: the rule's kernel still comes back, and says why.
  TuningTable t((kernels::DeviceLimits()));
  const kernels::Entry* e = t.default_entry(DType::f32, Op::exact_sum, max_n);
  ASSERT_NE(e, nullptr);
  const auto why = e->can_implement(max_n, 256, kernels::DeviceLimits());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("exceeds the limit of 1099511627775 elements"), std::string::npos) << *why;
}

}  // namespace
}  // namespace tunedreduce::runtime::test

namespace tunedreduce::runtime::test {
namespace {

/// The device row of a recorded database.
DeviceFingerprint recorded_device(const std::filesystem::path& path) {
  db::ReaderOptions ro;
  ro.immutable = true;
  db::Database d = db::Database::open_reader(path, ro);
  const auto devs = d.devices();
  EXPECT_EQ(devs.size(), 1u);
  return devs.empty() ? DeviceFingerprint{} : devs.front().fingerprint;
}

db::Snapshot snapshot_of(const std::filesystem::path& path, const DeviceFingerprint& fp) {
  db::ReaderOptions ro;
  ro.immutable = true;
  db::Snapshot s = db::load_snapshot(path, fp, ro);
  EXPECT_FALSE(s.problem) << s.message;
  return s;
}

TEST(H200SampleDb, TheH200GetsItsOwnRowsAndTheH100NoneOfThem) {
  const DeviceFingerprint h200 = recorded_device(TR_H200_SAMPLE_DB);
  EXPECT_EQ(h200.name, "NVIDIA H200");
  EXPECT_EQ(h200.cc_major * 10 + h200.cc_minor,
            sample_device().cc_major * 10 + sample_device().cc_minor);
  EXPECT_EQ(h200.sm_count, sample_device().sm_count);
  TuningTable t(snapshot_of(TR_H200_SAMPLE_DB, h200), info_of(h200).limits);
  EXPECT_EQ(t.exact_rows(), 26u);
  EXPECT_TRUE(t.rejected().empty());
  for (DType d : {DType::i32, DType::f32})
    for (Op o : {Op::sum, Op::max})
      for (std::uint64_t n :
           {std::uint64_t{1} << 10, std::uint64_t{1} << 18, std::uint64_t{1} << 26}) {
        const Choice c = t.choose(d, o, n);
        EXPECT_EQ(c.level, Level::exact) << dtype_name(d) << " " << op_name(o) << " " << n;
        ASSERT_NE(c.row, nullptr);
        EXPECT_EQ(c.row->device_key, h200.key());
      }
  // The H100 is another memory system: nothing of the H200's serves it, and vice versa.
  TuningTable h100_on_h200(snapshot_of(TR_H200_SAMPLE_DB, sample_device()),
                           info_of(sample_device()).limits);
  EXPECT_EQ(h100_on_h200.exact_rows() + h100_on_h200.similar_rows(), 0u);
  EXPECT_EQ(h100_on_h200.choose(DType::f32, Op::max, 1 << 26).level, Level::builtin_default);
  TuningTable h200_on_h100(sample_snapshot(h200), info_of(h200).limits);
  EXPECT_EQ(h200_on_h100.exact_rows() + h200_on_h100.similar_rows(), 0u);
}

TEST(TwoSamples, AMergedDatabaseServesEachGpuItsOwnRowsAtLevelExact) {
  TempDir dir;
  const auto merged = dir / "fleet.db";
  db::merge_files({sample_db(), TR_H200_SAMPLE_DB}, merged);
  const DeviceFingerprint h100 = sample_device(), h200 = recorded_device(TR_H200_SAMPLE_DB);
  for (const DeviceFingerprint& fp : {h100, h200}) {
    TuningTable t(snapshot_of(merged, fp), info_of(fp).limits);
    EXPECT_EQ(t.similar_rows(), 0u) << fp.name;
    for (std::uint64_t n :
         {std::uint64_t{1} << 12, std::uint64_t{1} << 20, std::uint64_t{1} << 26}) {
      const Choice c = t.choose(DType::i32, Op::sum, n);
      EXPECT_EQ(c.level, Level::exact) << fp.name << " " << n;
      ASSERT_NE(c.row, nullptr);
      EXPECT_EQ(c.row->device_key, fp.key());
    }
  }
}

// --- the registry without kernels (tr_kernels_host), which these tests link -----------------

TEST(HostRegistry, HasEveryEntryOfTheCompiledRegistryAndLaunchesNone) {
  // tests/data/registry_ids.txt is the compiled registry's list (test_registry checks it).
  std::ifstream in(TR_REGISTRY_IDS);
  ASSERT_TRUE(in);
  std::vector<std::string> ids;
  for (std::string line; std::getline(in, line);) ids.push_back(line);
  const auto entries = kernels::registry();
  ASSERT_EQ(entries.size(), ids.size());
  kernels::DeviceLimits dev;
  kernels::LaunchArgs args;
  args.n = 1000;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const kernels::Entry& e = entries[i];
    ASSERT_EQ(ids[i], e.id);
    EXPECT_EQ(kernels::make_id(e.params), e.id);
    EXPECT_EQ(kernels::find(e.id), &e);
    EXPECT_EQ(e.launch(args, dev), cudaErrorNoKernelImageForDevice) << e.id;
    // The geometry is the parameters' (kernels/geometry.hpp; an exact family's is exact_sum's,
    // kernels/exact_geometry.hpp), with the estimated occupancy.
    const int resident = kernels::has_persistent_grid(e.params.family)
                             ? kernels::geometry::estimated_resident_blocks(e.params, dev)
                             : 0;
    const bool exact = kernels::is_exact_family(e.params.family);
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{4096}, std::uint64_t{1} << 30}) {
      EXPECT_EQ(e.grid_size(n, dev),
                exact ? kernels::exact_geometry::grid_size(e.params, n, dev, resident)
                      : kernels::geometry::grid_size(e.params, n, dev, resident));
      EXPECT_EQ(e.workspace_bytes(n, dev),
                exact ? kernels::exact_geometry::workspace_bytes(e.params, n, dev, resident)
                      : kernels::geometry::workspace_bytes(e.params, n, dev, resident));
      EXPECT_EQ(e.can_implement(n, 256, dev).has_value(), n > kernels::max_elements_of(e.params))
          << e.id << " n=" << n;
    }
  }
  EXPECT_EQ(kernels::find("streaming.b96.u4.two_pass.f32.sum"), nullptr);
}

}  // namespace
}  // namespace tunedreduce::runtime::test
