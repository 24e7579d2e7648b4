// Many host threads at once: concurrent first lookups load each device once, lookups agree with
// a single-threaded run, set_database during lookups is safe, and concurrent reductions on many
// streams each get their own workspace. Built twice: plain, and with ThreadSanitizer
// (test_runtime_threads_tsan, label sanitizer).

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "runtime/defaults.hpp"
#include "runtime_test_util.hpp"
#include "tests/db/test_util.hpp"

namespace tunedreduce::runtime::test {
namespace {

namespace fs = std::filesystem;
using db::test::TempDir;

constexpr int threads = 16;

struct Key {
  DType d;
  Op o;
  std::uint64_t n;
};

std::vector<Key> keys() {
  std::vector<Key> k;
  for (DType d : all_dtypes)
    for (Op o : all_ops)
      if (op_applies(d, o))
        for (int e = 0; e <= 32; e += 4) k.push_back({d, o, e ? std::uint64_t{1} << e : 0});
  return k;
}

TEST(Threads, ConcurrentFirstLookupsLoadEachDeviceOnceAndAgree) {
  TempDir dir;
  const fs::path db = dir / "tune.db";
  fs::copy_file(sample_db(), db);
  const std::vector<Key> ks = keys();
  // The answers of a single thread.
  std::vector<std::string> expected[2];
  {
    TestRuntime ref({sample_device(), same_model_device()}, db.string());
    for (int dev = 0; dev < 2; ++dev)
      for (const Key& k : ks)
        expected[dev].push_back(std::string(ref.rt->lookup(k.d, k.o, k.n, dev).kernel_id) + "/" +
                                level_name(ref.rt->lookup(k.d, k.o, k.n, dev).level));
  }
  TestRuntime t({sample_device(), same_model_device()}, db.string());
  std::atomic<int> mismatches{0}, go{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      while (go.load() == 0) std::this_thread::yield();  // start together: racing first loads
      for (int round = 0; round < 20; ++round)
        for (std::size_t j = 0; j < ks.size(); ++j) {
          const int dev = (i + static_cast<int>(j)) % 2;
          const Key& k = ks[(j + static_cast<std::size_t>(i) * 7) % ks.size()];
          const Config c = t.rt->lookup(k.d, k.o, k.n, dev);
          const std::size_t idx = (j + static_cast<std::size_t>(i) * 7) % ks.size();
          if (std::string(c.kernel_id) + "/" + level_name(c.level) != expected[dev][idx])
            ++mismatches;
        }
    });
  go = 1;
  for (auto& th : pool) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(t.fake->describe_calls.load(), 2);  // one load per device
  EXPECT_LE(t.log.lines("warning").size(), 1u) << t.log.all();
}

TEST(Threads, SetDatabaseWhileOthersLookUp) {
  TempDir dir;
  const fs::path db = dir / "tune.db";
  fs::copy_file(sample_db(), db);
  TestRuntime t({sample_device()}, db.string());
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < threads - 1; ++i)
    pool.emplace_back([&] {
      while (!stop.load()) {
        const Config c = t.rt->lookup(DType::i32, Op::sum, 1 << 20, 0);
        // Either the sample's winner or the default, never anything else.
        const std::string id = c.kernel_id;
        if (id != "vectorized.b128.u1.packed.i32.sum" &&
            id != builtin_default_id(DType::i32, Op::sum, 1 << 20))
          ++bad;
        if (c.source == nullptr || c.source[0] == '\0') ++bad;
      }
    });
  for (int i = 0; i < 200; ++i)
    t.rt->set_database(i % 2 ? db.string() : (dir / "missing.db").string());
  stop = true;
  for (auto& th : pool) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(Threads, ManyThreadsManyStreamsEachStreamOneWorkspace) {
  TempDir dir;
  const fs::path db = dir / "tune.db";
  fs::copy_file(sample_db(), db);
  TestRuntime t({sample_device()}, db.string());
  float* in = reinterpret_cast<float*>(0x7000'0000'0000);
  float* out = reinterpret_cast<float*>(0x7000'1000'0000);
  t.fake->set_pointer(in, {MemoryKind::device, 0});
  t.fake->set_pointer(out, {MemoryKind::device, 0});
  constexpr int streams = 8, calls = 200;
  std::atomic<int> errors{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      for (int c = 0; c < calls; ++c) {
        // Two threads share each stream, as two host threads may.
        auto s = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x5000} + 16 * ((i + c) % streams));
        try {
          t.rt->reduce(in, out, std::uint64_t{1} << (10 + (c % 16)), DType::f32,
                       c % 3 ? Op::sum : Op::max, s);
        } catch (const ReduceError&) {
          ++errors;
        }
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(t.fake->launches().size(), std::size_t{threads} * calls);
  std::set<cudaStream_t> allocated;
  for (const auto& e : t.fake->events())
    if (e.what == "alloc") {
      EXPECT_TRUE(allocated.insert(e.stream).second) << "two allocations on one stream";
    }
  EXPECT_EQ(allocated.size(), std::size_t{streams});
  // Every launch used its own stream's workspace, with the counter clean.
  std::map<cudaStream_t, void*> ws;
  for (const auto& e : t.fake->events())
    if (e.what == "alloc") ws[e.stream] = e.ptr;
  for (const auto& l : t.fake->launches()) {
    EXPECT_EQ(l.args.workspace, ws[l.args.stream]);
    EXPECT_TRUE(l.args.workspace_clean);
  }
}

}  // namespace
}  // namespace tunedreduce::runtime::test
