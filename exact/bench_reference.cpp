// The host reference's speed (exact/reference.hpp), and the device-ready accumulator's when it
// runs on the host, on one core: elements per second over 2^30 elements (a buffer of 2^24
// added 64 times), per distribution, by the wall clock and by the process's CPU time (the
// steadier figure on a machine that other work shares). Prints a table, then one JSON line.
//
//   bench_exact_reference [--log2-total N] [--log2-buffer N]

#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "exact/accumulator.hpp"
#include "exact/reference.hpp"

namespace {

using tunedreduce::exact::ExactAccumulator;
using tunedreduce::exact::ReferenceSum;

template <class T>
std::vector<T> make_data(const std::string& distribution, std::size_t n) {
  std::mt19937_64 rng(42);
  std::vector<T> v(n);
  if (distribution == "uniform01") {
    std::uniform_real_distribution<T> d(T(0), T(1));
    for (T& x : v) x = d(rng);
  } else if (distribution == "normal") {
    std::normal_distribution<T> d(T(0), T(1));
    for (T& x : v) x = d(rng);
  } else if (distribution == "full_range") {  // every finite exponent, random signs
    std::uniform_real_distribution<T> significand(T(1), T(2));
    constexpr int lo = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
    constexpr int hi = std::numeric_limits<T>::max_exponent - 1;
    std::uniform_int_distribution<int> exponent(lo, hi);
    for (T& x : v)
      x = ((rng() & 1) != 0 ? T(1) : T(-1)) * std::ldexp(significand(rng), exponent(rng));
  } else {  // equal: one value, every add into the same bin
    for (T& x : v) x = T(0.1);
  }
  return v;
}

struct Row {
  std::string type;
  std::string method;
  std::string distribution;
  double elements_per_second;      // by the wall clock
  double elements_per_cpu_second;  // by the process's CPU time
  double result;
};

/// Wall and CPU seconds of f().
template <class F>
std::pair<double, double> timed(F&& f) {
  const std::clock_t cpu_start = std::clock();
  const auto start = std::chrono::steady_clock::now();
  f();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {wall, double(std::clock() - cpu_start) / CLOCKS_PER_SEC};
}

template <class T>
void bench_type(const char* type, int log2_total, int log2_buffer, std::vector<Row>& rows) {
  const std::size_t buffer = std::size_t{1} << log2_buffer;
  const std::uint64_t repeats = std::uint64_t{1} << (log2_total - log2_buffer);
  for (const char* distribution : {"uniform01", "normal", "full_range", "equal"}) {
    const std::vector<T> v = make_data<T>(distribution, buffer);
    {
      ReferenceSum<T> sum;
      T result{};
      const auto [wall, cpu] = timed([&] {
        for (std::uint64_t r = 0; r < repeats; ++r) sum.add(std::span<const T>(v));
        result = sum.result();
      });
      const double n = double(buffer) * double(repeats);
      rows.push_back({type, "reference", distribution, n / wall, n / cpu, double(result)});
    }
    {
      // The accumulator on the host: a sixteenth of the elements (it is the device's design).
      ExactAccumulator<T> acc;
      const std::uint64_t acc_repeats = repeats >= 16 ? repeats / 16 : 1;
      T result{};
      const auto [wall, cpu] = timed([&] {
        for (std::uint64_t r = 0; r < acc_repeats; ++r) {
          for (const T x : v) acc.add(x);
        }
        result = acc.result();
      });
      const double n = double(buffer) * double(acc_repeats);
      rows.push_back({type, "accumulator", distribution, n / wall, n / cpu, double(result)});
    }
  }
}

int parse_log2(const char* flag, const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 10 || value > 40) {
    std::fprintf(stderr, "%s: expected an integer in 10..40, got '%s'\n", flag, text);
    std::exit(2);
  }
  return static_cast<int>(value);
}

}  // namespace

int main(int argc, char** argv) {
  int log2_total = 30;
  int log2_buffer = 24;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--log2-total") == 0 && i + 1 < argc) {
      log2_total = parse_log2("--log2-total", argv[++i]);
    } else if (std::strcmp(argv[i], "--log2-buffer") == 0 && i + 1 < argc) {
      log2_buffer = parse_log2("--log2-buffer", argv[++i]);
    } else {
      std::fprintf(stderr, "unknown argument '%s'; usage: %s [--log2-total N] [--log2-buffer N]\n",
                   argv[i], argv[0]);
      return 2;
    }
  }
  if (log2_buffer > log2_total) log2_buffer = log2_total;
  std::vector<Row> rows;
  bench_type<float>("f32", log2_total, log2_buffer, rows);
  bench_type<double>("f64", log2_total, log2_buffer, rows);

  std::printf("%-5s %-12s %-12s %12s %12s  %s\n", "type", "method", "distribution", "M/s wall",
              "M/s cpu", "result");
  for (const Row& r : rows) {
    std::printf("%-5s %-12s %-12s %12.1f %12.1f  %a\n", r.type.c_str(), r.method.c_str(),
                r.distribution.c_str(), r.elements_per_second / 1e6,
                r.elements_per_cpu_second / 1e6, r.result);
  }
  std::printf("{\"bench\":\"exact_reference\",\"log2_elements\":%d,\"threads\":1,\"rows\":[",
              log2_total);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::printf(
        "%s{\"type\":\"%s\",\"method\":\"%s\",\"distribution\":\"%s\","
        "\"elements_per_second\":%.0f,\"elements_per_cpu_second\":%.0f}",
        i == 0 ? "" : ",", rows[i].type.c_str(), rows[i].method.c_str(),
        rows[i].distribution.c_str(), rows[i].elements_per_second, rows[i].elements_per_cpu_second);
  }
  std::printf("]}\n");
  return 0;
}
