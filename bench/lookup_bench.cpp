// The cost of a lookup after the first, on the CPU (no GPU needed): the snapshot of
// tests/data/h100-sample.db for a hand-made fingerprint of its H100, installed in a Runtime on
// the fake platform, then timed in a loop over sizes and keys that hit every lookup level.
//
//   bench_lookup [--db FILE] [--json FILE] [--check-ns NS]
//
// Prints a table (ns per lookup, median of 9 rounds); --check-ns makes it exit 1 when the
// median of Runtime::lookup is above NS.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/fake_platform.hpp"
#include "runtime/runtime.hpp"
#include "tunedreduce/version.hpp"
#include "tests/support/fixtures.hpp"

namespace {

using namespace tunedreduce;
using Clock = std::chrono::steady_clock;

DeviceFingerprint h100_sample_device() { return tunedreduce::test::h100_fingerprint(); }

struct Key {
  int device;
  DType dtype;
  Op op;
  std::uint64_t n;
};

template <class F>
double ns_per_call(const std::vector<Key>& keys, std::size_t calls, F&& f) {
  std::vector<double> rounds;
  for (int r = 0; r < 9; ++r) {
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < calls; ++i) f(keys[i % keys.size()]);
    const auto t1 = Clock::now();
    rounds.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                     static_cast<double>(calls));
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      return pos == std::string::npos ? line : line.substr(pos + 2);
    }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  std::string db_path = TR_SAMPLE_DB, json_path;
  double check_ns = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--db" && i + 1 < argc) db_path = argv[++i];
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--check-ns" && i + 1 < argc) check_ns = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_lookup [--db FILE] [--json FILE] [--check-ns NS]\n");
      return 2;
    }
  }

  // Device 0 is the sample's H100; device 1 another H100 (other memory size: another
  // fingerprint, the same model), whose lookups find the sample's rows at level 3.
  runtime::DeviceInfo info, twin;
  info.fingerprint = h100_sample_device();
  twin.fingerprint = h100_sample_device();
  twin.fingerprint.total_mem_bytes = 85045395456;
  twin.limits.ordinal = 1;
  auto fake = std::make_unique<runtime::FakePlatform>();
  fake->devices = {info, twin};
  runtime::FakePlatform& platform = *fake;
  runtime::Options opt;
  opt.platform = std::move(fake);
  opt.database = db_path;
  opt.reader.immutable = true;  // the sample lives in the source tree: no -shm file beside it
  runtime::Runtime rt(std::move(opt));

  // The first lookup loads the snapshot (timed once), every later one is what is measured.
  const auto t0 = Clock::now();
  const Config first = rt.lookup(DType::i32, Op::sum, 1 << 20, 0);
  const double first_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  if (first.level != Level::exact) {
    std::fprintf(stderr, "bench_lookup: '%s' gave level %s for i32 sum 2^20, expected exact\n",
                 db_path.c_str(), level_name(first.level));
    return 1;
  }

  // Keys over every level: tuned (i32/f32 x sum/max: exact on device 0, same_model on device 1),
  // the other types (default) and sizes outside the tuned intervals (n = 0: nearest).
  std::vector<Key> keys;
  for (int dev = 0; dev < 2; ++dev)
    for (DType d : all_dtypes)
      for (Op o : all_ops)
        if (op_applies(d, o))
          for (int e = 0; e <= 30; e += 3)
            keys.push_back({dev, d, o, e == 0 ? 0 : std::uint64_t{1} << e});
  std::size_t hits[5] = {};
  for (const Key& k : keys) ++hits[static_cast<int>(rt.lookup(k.dtype, k.op, k.n, k.device).level)];

  const runtime::DeviceState* states[2] = {&rt.device_state(0), &rt.device_state(1)};
  const runtime::DeviceState& state = *states[0];
  const std::size_t calls = 2'000'000;
  volatile std::uintptr_t sink = 0;
  const double choose_ns = ns_per_call(keys, calls, [&](const Key& k) {
    sink = sink + reinterpret_cast<std::uintptr_t>(
                      states[k.device]->table.choose(k.dtype, k.op, k.n).entry);
  });
  const double lookup_ns = ns_per_call(keys, calls, [&](const Key& k) {
    sink =
        sink + reinterpret_cast<std::uintptr_t>(rt.lookup(k.dtype, k.op, k.n, k.device).kernel_id);
  });
  const double current_ns = ns_per_call(keys, calls, [&](const Key& k) {
    platform.current = k.device;
    sink = sink + reinterpret_cast<std::uintptr_t>(rt.lookup(k.dtype, k.op, k.n, -1).kernel_id);
  });

  std::printf("tunedreduce %s lookup benchmark, %s\n", TUNEDREDUCE_VERSION_STRING,
              cpu_model().c_str());
  std::printf("snapshot: '%s' (%zu rows of this device), first lookup (loads it): %.0f us\n",
              db_path.c_str(), state.table.exact_rows(), first_us);
  std::printf(
      "%zu keys: %zu exact, %zu nearest, %zu same_model, %zu default; %zu calls a round, "
      "median of 9 rounds\n\n",
      keys.size(), hits[1], hits[2], hits[3], hits[4], calls);
  std::printf("%-52s %10s\n", "what", "ns/lookup");
  std::printf("%-52s %10.1f\n", "TuningTable::choose (levels 1-4)", choose_ns);
  std::printf("%-52s %10.1f\n", "Runtime::lookup(device) -> Config", lookup_ns);
  std::printf("%-52s %10.1f\n", "Runtime::lookup(current device, fake platform)", current_ns);

  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\n  \"tool\": \"bench_lookup\",\n  \"version\": \"" << TUNEDREDUCE_VERSION_STRING
        << "\",\n  \"cpu\": \"" << cpu_model() << "\",\n  \"database\": \"" << db_path
        << "\",\n  \"keys\": " << keys.size() << ",\n  \"calls_per_round\": " << calls
        << ",\n  \"first_lookup_us\": " << first_us << ",\n  \"choose_ns\": " << choose_ns
        << ",\n  \"lookup_ns\": " << lookup_ns
        << ",\n  \"lookup_current_device_ns\": " << current_ns << "\n}\n";
  }
  if (check_ns > 0 && lookup_ns > check_ns) {
    std::fprintf(stderr, "bench_lookup: %.1f ns per lookup is above the %.0f ns limit\n", lookup_ns,
                 check_ns);
    return 1;
  }
  return 0;
}
