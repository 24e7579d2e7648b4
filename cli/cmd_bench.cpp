// tunedreduce bench: the tuned reduction as production calls it (the library's public API: the
// cached-workspace call and CUB's two-phase call with caller-owned temporary storage) against
// cub::DeviceReduce (and thrust::reduce on request), in one process on the same buffers, every
// result verified, timed after the tuner's L2 flush (measure/gpu.cu). With
// --host-calls, the host's cost per call instead.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/bench_gpu.hpp"
#include "cli/bench_record.hpp"
#include "cli/bench_session.hpp"
#include "cli/command.hpp"
#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "common/grammar.hpp"
#include "common/json.hpp"
#include "common/percentile.hpp"
#include "common/names.hpp"
#include "common/timing.hpp"
#include "kernels/device.hpp"
#include "kernels/registry.hpp"
#include "kernels/segmented/segmented.hpp"
#include "measure/clocks.hpp"
#include "measure/gpu.hpp"
#include "measure/reference.hpp"
#include "tunedreduce/tunedreduce.hpp"
#include "tunedreduce/version.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

using namespace bench;  // cli/bench_session.hpp

namespace {

/// The largest size the benchmark takes: 2^34 elements (128 GiB of f64), more than any GPU holds.
constexpr std::uint64_t max_bench_size = std::uint64_t{1} << 34;

/// --sizes: element counts in the common grammar (common/grammar.hpp). They were exponents of
/// two ("10-30", "12,16") before, so the old forms, which would now silently mean other sizes,
/// are refused with the new spelling: a bare number below 64 and A-B.
std::vector<std::uint64_t> parse_sizes(const std::vector<std::string>& values) {
  for (const std::string& item : grammar::split_list("--sizes", values)) {
    const auto dash = item.find('-');
    const bool digits = !item.empty() && item.find_first_not_of("0123456789") == std::string::npos;
    if (dash != std::string::npos && dash > 0 && dash + 1 < item.size() &&
        item.find_first_not_of("0123456789-") == std::string::npos &&
        item.find('-', dash + 1) == std::string::npos) {
      const std::string a = item.substr(0, dash), b = item.substr(dash + 1);
      throw Error("--sizes " + item +
                      ": bench sizes are element counts now; for the exponents "
                      "of two " +
                      a + " to " + b + " write 2^" + a + "..2^" + b + "*2",
                  exit_code::usage);
    }
    if (const auto v = grammar::count_value(item); digits && v && *v < 64)
      throw Error("--sizes " + item + ": bench sizes are element counts now; did you mean 2^" +
                      item + "? (counts below 64 are written as 2^E)",
                  exit_code::usage);
  }
  return grammar::parse_counts("--sizes", values, {1, max_bench_size});
}

/// The three calls a row times, over the same buffers: the library's cached-workspace call, its
/// two-phase call with caller-owned temporary storage, and CUB's two-phase call.
struct Calls {
  std::function<void()> cached, two_phase, cub;
};

/// --host-calls: the host's cost per call, for CUB and both of the library's calls. Two figures
/// per call: back-to-back (N calls enqueued as fast as the host can, then one synchronisation:
/// wall time / N, the GPU's time per call included where it is the larger) and enqueue (the
/// host's time per call alone: batches of calls enqueued behind a busy-wait kernel, so that
/// neither the GPU nor a full launch queue holds the host up; median of the batches).
struct HostCost {
  double b2b_us = 0, enqueue_us = 0;
};

/// CUB's call and the library's two, measured interleaved: in each of 7 rounds every method makes
/// n_calls / 7 back-to-back calls (the order rotating round by round), so a drift of clocks or
/// of the machine weighs on all three alike; then the gated batches, interleaved the same way.
std::array<HostCost, 3> host_costs(Bench& b,
                                   const std::array<const std::function<void()>*, 3>& calls,
                                   int n_calls) {
  using clock = std::chrono::steady_clock;
  auto us_since = [](clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(clock::now() - t0).count();
  };
  for (const auto* call : calls)
    for (int i = 0; i < 100; ++i) (*call)();
  check(cudaStreamSynchronize(b.stream()), "host-cost warm-up");
  constexpr int rounds = 7;
  const int per_round = std::max(1, n_calls / rounds);
  std::array<std::vector<double>, 3> b2b, enq;
  for (int r = 0; r < rounds; ++r)
    for (int j = 0; j < 3; ++j) {
      const int m = (r + j) % 3;
      const auto t0 = clock::now();
      for (int i = 0; i < per_round; ++i) (*calls[m])();
      check(cudaStreamSynchronize(b.stream()), "back-to-back calls");
      b2b[m].push_back(us_since(t0) / per_round);
    }
  constexpr int batch = 200;  // at most 2 launches each: the launch queue never fills
  for (int done = 0, r = 0; done < n_calls; done += batch, ++r)
    for (int j = 0; j < 3; ++j) {
      const int m = (r + j) % 3;
      b.gate(3'000'000);  // 3 ms: longer than 200 enqueues take
      const auto t0 = clock::now();
      for (int i = 0; i < batch; ++i) (*calls[m])();
      enq[m].push_back(us_since(t0) / batch);
      check(cudaStreamSynchronize(b.stream()), "gated calls");
    }
  std::array<HostCost, 3> c;
  for (int m = 0; m < 3; ++m) {
    std::sort(b2b[m].begin(), b2b[m].end());
    std::sort(enq[m].begin(), enq[m].end());
    c[m] = {percentile(b2b[m], 0.5), percentile(enq[m], 0.5)};
  }
  return c;
}

std::string api_name(Api a) { return api_names.to_name(a); }

/// The whole-array rows: for each element type, operator and size, the library's calls and CUB's
/// (and Thrust's with --thrust), or the host's cost per call (--host-calls). Returns how many
/// calls failed or were wrong.
int bench_whole_arrays(Bench& b, const Options& opt, BenchRecorder* recorder, Json& rows) {
  int failures = 0;
  const bool want_cached = opt.api != Api::two_phase, want_two_phase = opt.api != Api::cached;
  for (DType dtype : opt.dtypes) {
    // exact_sum exists for the floating types only, wide_sum for i32, u32, f32 and the halves: a
    // type with no other operator is skipped.
    if (std::none_of(opt.ops.begin(), opt.ops.end(), [&](Op o) { return op_applies(dtype, o); }))
      continue;
    std::vector<std::uint64_t> sizes = opt.sizes;
    while (!b.prepare_input(dtype, sizes.back())) {
      std::printf("(%s: %s elements do not fit in device memory; skipped)\n", dtype_name(dtype),
                  grammar::count_text(sizes.back()).c_str());
      sizes.pop_back();
      if (sizes.empty()) break;
    }
    if (sizes.empty()) continue;
    const std::size_t elem = dtype_size(dtype);
    for (Op op : opt.ops) {
      if (!op_applies(dtype, op)) continue;
      std::printf("\n%s %s%s\n", dtype_name(dtype), op_name(op),
                  op == Op::exact_sum && is_half(dtype)
                      ? " (CUB: cub::DeviceReduce::Reduce into float, the inexact sum)"
                  : op == Op::exact_sum ? " (CUB: cub::DeviceReduce::Sum, the inexact sum)"
                  : op == Op::wide_sum  ? " (CUB: cub::DeviceReduce::Sum into the wide type)"
                  : op == Op::argmin    ? " (CUB: cub::DeviceReduce::ArgMin, int64 index)"
                  : op == Op::argmax    ? " (CUB: cub::DeviceReduce::ArgMax, int64 index)"
                  : op == Op::absmax    ? " (CUB: cub::DeviceReduce::TransformReduce, |x| by max)"
                                        : "");
      if (opt.host_calls > 0)
        std::printf("%6s %9s %9s %9s %9s %9s %9s  %s\n", "n", "CUB b2b", "cached", "2-phase",
                    "CUB enq", "cached", "2-phase", "tuned kernel (lookup level)");
      else
        std::printf("%6s %10s %10s %10s %8s %6s %10s %10s%s  %s\n", "n", "cached us", "2-phase us",
                    "CUB us", "GB/s", "%att", "cached/CUB", "2-phase/CUB",
                    opt.thrust ? "  Thrust us" : "", "tuned kernel (lookup level)");
      for (const std::uint64_t n : sizes) {
        void* in = b.input();
        void* out = b.output();
        cudaStream_t s = b.stream();

        const Config cfg = tunedreduce::lookup(dtype, op, n, opt.device);
        std::size_t cub_bytes = 0;
        check(bench::cub_reduce(dtype, op, nullptr, cub_bytes, in, out, n, s), "CUB size query");
        void* cub_temp = b.cub_temp(std::max<std::size_t>(cub_bytes, 1));
        std::size_t tuned_bytes = 0;
        tunedreduce::reduce(nullptr, tuned_bytes, in, out, n, dtype, op, s);
        void* tuned_temp = b.tuned_temp(tuned_bytes);
        const Calls calls{[&] { tunedreduce::reduce(in, out, n, dtype, op, s); },
                          [&] {
                            std::size_t tb = tuned_bytes;
                            tunedreduce::reduce(tuned_temp, tb, in, out, n, dtype, op, s);
                          },
                          [&] {
                            std::size_t tb = cub_bytes;
                            check(bench::cub_reduce(dtype, op, cub_temp, tb, in, out, n, s),
                                  "cub::DeviceReduce");
                          }};

        Json row = Json::object();
        row.set("dtype", dtype_name(dtype));
        row.set("op", op_name(op));
        row.set("n", static_cast<std::int64_t>(n));
        row.set("bytes", static_cast<std::int64_t>(n * elem));
        row.set("kernel_id", cfg.kernel_id);
        row.set("lookup_level", level_name(cfg.level));
        row.set("cache_state", cache_state_name(cfg.cache_state));
        row.set("source", cfg.source);

        if (opt.host_calls > 0) {
          std::array<HostCost, 3> hc;
          try {
            hc = host_costs(b, {&calls.cub, &calls.cached, &calls.two_phase}, opt.host_calls);
          } catch (const std::exception& ex) {
            throw Error(std::string("benchmark aborted: ") + ex.what());
          }
          std::printf("%6s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f  %s (%s)\n",
                      grammar::count_text(n).c_str(), hc[0].b2b_us, hc[1].b2b_us, hc[2].b2b_us,
                      hc[0].enqueue_us, hc[1].enqueue_us, hc[2].enqueue_us, cfg.kernel_id,
                      level_text(cfg).c_str());
          constexpr db::BenchMethod methods[3] = {db::BenchMethod::cub, db::BenchMethod::cached,
                                                  db::BenchMethod::two_phase};
          Json hj = Json::object();
          for (int k = 0; k < 3; ++k) {
            Json one = Json::object();
            one.set("back_to_back_us_per_call", hc[k].b2b_us);
            one.set("enqueue_us_per_call", hc[k].enqueue_us);
            hj.set(db::bench_method_name(methods[k]), one);
          }
          row.set("host_cost", hj);
          rows.push_back(row);
          std::fflush(stdout);
          continue;
        }

        const measure::Reference ref =
            measure::compute_reference(dtype, op, measure::data_seed(opt.seed, dtype), n);
        // exact_sum is held to the exact reference bit for bit, its baselines (ordinary sums;
        // of the half types, the float-accumulated sum wide_sum is) to the float sum's.
        const measure::Reference base_ref =
            op == Op::exact_sum
                ? measure::compute_reference(dtype, is_half(dtype) ? Op::wide_sum : Op::sum,
                                             measure::data_seed(opt.seed, dtype), n)
                : ref;
        // The timed calls alternate run by run; Thrust, which synchronises on every call, is
        // timed on its own afterwards.
        std::vector<Bench::Method> methods;
        if (want_cached) methods.push_back({calls.cached});
        if (want_two_phase) methods.push_back({calls.two_phase});
        methods.push_back({calls.cub, nullptr, &base_ref});
        const std::vector<MethodTiming> t = b.measure(methods, ref);
        const MethodTiming none;
        const MethodTiming& cached = want_cached ? t[0] : none;
        const MethodTiming& two_phase = want_two_phase ? t[want_cached ? 1 : 0] : none;
        const MethodTiming& cub = t.back();
        MethodTiming thrust;
        unsigned char thrust_result[16] = {};
        if (opt.thrust)
          thrust = b.measure({{[&] { bench::thrust_reduce(dtype, op, in, n, s, thrust_result); },
                               thrust_result, &base_ref}},
                             ref)[0];

        auto ok = [](const MethodTiming& x) { return x.verified(); };
        auto ratio = [&](const MethodTiming& x) {
          return ok(x) && ok(cub) ? fmt::format("{:.3f}x", cub.median() / x.median())
                                  : std::string("-");
        };
        const MethodTiming& shown = want_cached ? cached : two_phase;
        std::printf("%6s %10s %10s %10s %8s %6s %10s %10s%s  %s (%s)\n",
                    grammar::count_text(n).c_str(), want_cached ? fmt_us(cached).c_str() : "-",
                    want_two_phase ? fmt_us(two_phase).c_str() : "-", fmt_us(cub).c_str(),
                    fmt::format("{:.0f}", shown.gbps).c_str(),
                    fmt::format("{:.1f}", shown.pct).c_str(),
                    want_cached ? ratio(cached).c_str() : "-",
                    want_two_phase ? ratio(two_phase).c_str() : "-",
                    opt.thrust
                        ? (" " +
                           std::string(10 - std::min<std::size_t>(10, fmt_us(thrust).size()), ' ') +
                           fmt_us(thrust))
                              .c_str()
                        : "",
                    cfg.kernel_id, level_text(cfg).c_str());
        const std::pair<const char*, const MethodTiming*> all[] = {
            {"cached", want_cached ? &cached : nullptr},
            {"two-phase", want_two_phase ? &two_phase : nullptr},
            {"CUB", &cub},
            {"Thrust", opt.thrust ? &thrust : nullptr}};
        for (const auto& [name, x] : all)
          if (x && !x->error.empty()) {
            ++failures;
            std::printf("       %s: %s\n", name, x->error.c_str());
          }
        std::fflush(stdout);

        if (want_cached) {
          row.set("cached", cached.to_json());
          if (ok(cached) && ok(cub))
            row.set("cached_speedup_vs_cub", cub.median() / cached.median());
        }
        if (want_two_phase) {
          Json tj = two_phase.to_json();
          tj.set("temp_bytes", static_cast<std::int64_t>(tuned_bytes));
          row.set("two_phase", tj);
          if (ok(two_phase) && ok(cub))
            row.set("two_phase_speedup_vs_cub", cub.median() / two_phase.median());
        }
        Json cj = cub.to_json();
        cj.set("temp_bytes", static_cast<std::int64_t>(cub_bytes));
        row.set("cub", cj);
        if (opt.thrust) row.set("thrust", thrust.to_json());
        if (recorder) {
          if (want_cached)
            recorder->add(bench_result(dtype, op, n, db::BenchMethod::cached, cached, &cfg, {}));
          if (want_two_phase)
            recorder->add(bench_result(dtype, op, n, db::BenchMethod::two_phase, two_phase, &cfg,
                                       static_cast<std::int64_t>(tuned_bytes)));
          recorder->add(bench_result(dtype, op, n, db::BenchMethod::cub, cub, nullptr,
                                     static_cast<std::int64_t>(cub_bytes)));
          if (opt.thrust)
            recorder->add(bench_result(dtype, op, n, db::BenchMethod::thrust, thrust, nullptr, {}));
        }
        rows.push_back(row);
      }
    }
  }
  return failures;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  CommonOptions common;
  std::vector<std::string> dtypes, ops, sizes, segments;
  std::string l2 = "cold", api = "both", layout = "rows";
  Options opt;
  std::string seed;
  po::options_description desc("options");
  po::options_description hidden;
  add_common_options(desc, common);
  // Lists: comma-separated, repeatable (docs/cli.md).
  add_list_option(desc, hidden, "dtypes", dtypes, "element types (default: all)", "LIST");
  add_list_option(desc, hidden, "ops", ops,
                  "operators (default: every one but exact_sum, where it applies)", "LIST");
  desc.add_options()(
      "sizes", po::value<std::vector<std::string>>(&sizes)->value_name("COUNTS"),
      "element counts: N, B^E or N with Ki/Mi/Gi/Ti, comma-separated, ranges FROM..TO*FACTOR "
      "or FROM..TO+STEP; repeatable (default: 2^10..2^30*2; with --segments the totals, "
      "default 2^16,2^20,2^24,2^28)")(
      "segments", po::value<std::vector<std::string>>(&segments)->value_name("COUNTS"),
      "bench segmented reductions instead: the segment sizes (elements per segment, the same "
      "grammar; e.g. 1..2^28*2), each up to each total of --sizes (total / size segments), "
      "against cub::DeviceSegmentedReduce; repeatable")(
      "layout", po::value<std::string>(&layout)->default_value(layout)->value_name("rows|offsets"),
      "with --segments, how the library is given the segments: rows (Segments::rows, a "
      "row-major matrix) or offsets (Segments::csr, int64 CSR offsets and no hint, what CUB is "
      "told); CUB gets the same int64 offsets either way")(
      "repeats", po::value<int>(&opt.repeats)->default_value(opt.repeats)->value_name("N"),
      "timed runs per measurement (median, p10, p90)")(
      "api", po::value<std::string>(&api)->default_value(api)->value_name("cached|two-phase|both"),
      "the library's calls to time: cached (tunedreduce::sum/reduce with the library's "
      "workspace), two-phase (reduce(d_temp, temp_bytes, ...) with caller-owned temporary "
      "storage, as CUB), or both")(
      "l2", po::value<std::string>(&l2)->default_value(l2)->value_name("cold|clean|dirty|warm"),
      "cold (or clean): a read of 4x the L2 (at least 256 MiB) before every timed run, as the "
      "tuner; dirty: a memset of twice the L2 instead (its dirty lines are written back during "
      "the timed run); warm: no flush (data that fits stays in L2)")(
      "thrust", po::bool_switch(&opt.thrust), "also time thrust::reduce (synchronises per call)")(
      "host-calls", po::value<int>(&opt.host_calls)->default_value(0)->value_name("N"),
      "measure the host's cost per call instead: N back-to-back calls of CUB and of both "
      "library calls per size (e.g. 20000)")(
      "device", po::value<int>(&opt.device)->default_value(0)->value_name("N"),
      "CUDA device ordinal")("seed", po::value<std::string>(&seed)->value_name("S"),
                             "data seed (default: random; printed)")(
      "json", po::value<std::string>(&opt.json)->value_name("FILE"),
      "also write every figure to this JSON file")(
      "no-record", po::bool_switch(&opt.no_record),
      "do not store the results in the tuning database (by default they go into --db, the "
      "database the library reads, as a bench run for `tunedreduce report`)");
  po::variables_map vm;
  if (parse_command_line(argc, argv, desc, nullptr, vm, common,
                         "tunedreduce bench [--dtypes LIST] [--ops LIST] [--sizes COUNTS] "
                         "[--repeats N] [--api cached|two-phase|both] [--l2 cold|dirty|warm] "
                         "[--thrust] [--host-calls N] [--segments COUNTS [--layout rows|offsets]] "
                         "[--json FILE] [--no-record]\n\n"
                         "--sizes takes element counts (2^12, 4Ki, 2^10..2^30*2), not exponents; "
                         "lists are\ncomma-separated and may be repeated (docs/cli.md).",
                         &hidden))
    return exit_code::ok;

  if (dtypes.empty())
    for (DType t : all_dtypes) dtypes.push_back(dtype_name(t));
  // Unless --ops says: sum, min, max, wide_sum, argmin, argmax, absmax (of the types they apply
  // to); the exact sum when asked for (--ops exact_sum).
  const bool ops_given = !ops.empty();
  if (!ops_given)
    for (Op o : all_ops)
      if (o != Op::exact_sum) ops.push_back(op_name(o));
  const bool segmented = !segments.empty();
  if (sizes.empty()) sizes.push_back(segmented ? "2^16,2^20,2^24,2^28" : "2^10..2^30*2");
  for (const std::string& d : dtypes) {
    auto t = parse_dtype(d);
    if (!t)
      throw Error("--dtypes: unknown element type '" + d + "' (expected " + dtype_choices() + ")",
                  exit_code::usage);
    opt.dtypes.push_back(*t);
  }
  for (const std::string& o : ops) {
    auto op = parse_op(o);
    if (!op)
      throw Error("--ops: unknown operator '" + o + "' (expected " + op_choices() + ")",
                  exit_code::usage);
    opt.ops.push_back(*op);
  }
  for (Op o : opt.ops)
    if (ops_given && std::none_of(opt.dtypes.begin(), opt.dtypes.end(),
                                  [o](DType t) { return op_applies(t, o); })) {
      std::string types;
      for (DType t : opt.dtypes) types += (types.empty() ? "" : ", ") + std::string(dtype_name(t));
      throw Error(fmt::format("--ops {}: defined for {} only; --dtypes selects {}", op_name(o),
                              op_dtypes(o), types),
                  exit_code::usage);
    }
  opt.sizes = parse_sizes(sizes);
  if (segmented) {
    opt.segment_sizes = grammar::parse_counts("--segments", segments, {1, max_bench_size});
    const auto l = seg_layout_names.from_name(layout);
    if (!l)
      throw Error(fmt::format("--layout must be {}, not '{}'",
                              seg_layout_names.joined(", ", " or "), layout),
                  exit_code::usage);
    opt.layout = *l;
    if (opt.thrust) throw Error("--thrust: Thrust has no segmented reduction", exit_code::usage);
    if (opt.host_calls > 0)
      throw Error("--host-calls measures whole-array calls; not with --segments", exit_code::usage);
    for (Op o : opt.ops)
      if (ops_given && std::none_of(opt.dtypes.begin(), opt.dtypes.end(), [o](DType t) {
            return kernels::segmented::seg_op_applies(t, o);
          }))
        throw Error(fmt::format("--ops {}: no segmented kernels for it{}", op_name(o),
                                o == Op::exact_sum ? " (exact sums are whole-array only)"
                                                   : " of the types --dtypes selects"),
                    exit_code::usage);
  } else if (vm.count("layout") && !vm["layout"].defaulted()) {
    throw Error("--layout: only with --segments", exit_code::usage);
  }
  if (opt.repeats < 1 || opt.repeats > 100000)
    throw Error("--repeats must be between 1 and 100000", exit_code::usage);
  if (opt.host_calls < 0 || opt.host_calls > 10'000'000)
    throw Error("--host-calls must be between 1 and 10000000 (0: off)", exit_code::usage);
  if (l2 == "clean") l2 = "cold";
  const auto prelude = db::parse_bench_l2(l2);
  if (!prelude)
    throw Error(fmt::format("--l2 must be cold (or clean), dirty or warm, not '{}'", l2),
                exit_code::usage);
  opt.l2 = *prelude;
  const auto api_named = api_names.from_name(api);
  if (!api_named)
    throw Error(fmt::format("--api must be {}, not '{}'", api_names.joined(", ", " or "), api),
                exit_code::usage);
  opt.api = *api_named;
  if (vm.count("seed")) {
    try {
      opt.seed = std::stoull(seed, nullptr, 0);
    } catch (const std::exception&) {
      throw Error("--seed: '" + seed + "' is not a number", exit_code::usage);
    }
  } else {
    std::random_device rd;
    opt.seed = (std::uint64_t(rd()) << 32) ^ rd();
  }

  std::string why;
  const int devices = kernels::device_count(&why);
  if (devices == 0)
    throw Error("no CUDA device (" + why + "): the benchmark needs a GPU", exit_code::no_gpu);
  if (opt.device < 0 || opt.device >= devices)
    throw Error(fmt::format("--device {}: there are {} CUDA device(s)", opt.device, devices),
                exit_code::usage);
  // The database the results go into is opened before any GPU work: a problem with it (read-only,
  // newer, locked) is its exit code at once, not after the benchmark.
  std::string record_note;
  std::optional<BenchRecorder> recorder =
      BenchRecorder::open(common.db, opt.no_record, opt.host_calls > 0, record_note);
  if (common.db) tunedreduce::set_database(*common.db);
  // The library prefers the winners tuned in the L2 state this benchmark measures in (a dirty
  // flush leaves the input out of L2 as a clean one does).
  tunedreduce::set_cache_state(opt.l2 == L2Prelude::warm ? CacheState::warm : CacheState::cold);
  check(cudaSetDevice(opt.device), "cudaSetDevice");

  Bench b(opt, opt.device);
  const DeviceFingerprint& fp = b.fingerprint();
  const measure::Clocks clocks = measure::read_clocks(opt.device);
  const double attainable = b.attainable();
  std::printf("tunedreduce %s bench: %s (%s, %d SMs), driver %d, CUDA runtime %d\n",
              TUNEDREDUCE_VERSION_STRING, fp.name.c_str(), fp.arch().c_str(), fp.sm_count,
              fp.driver_version, fp.runtime_version);
  std::printf(
      "clocks: SM %s MHz, memory %s MHz; theoretical %.0f GB/s; attainable read %.0f GB/s "
      "(streaming read, same timing)\n",
      clocks.sm_mhz ? std::to_string(*clocks.sm_mhz).c_str() : "?",
      clocks.mem_mhz ? std::to_string(*clocks.mem_mhz).c_str() : "?", fp.theoretical_gbps(),
      attainable);
  std::printf("tuning database: %s\n", tunedreduce::database_path().c_str());
  if (recorder) {
    db::BenchRunInfo info;
    info.tool_version = TUNEDREDUCE_VERSION_STRING;
    info.manifest_hash = kernels::manifest_hash();
    info.library_database = tunedreduce::database_path();
    info.l2 = opt.l2 == L2Prelude::warm    ? db::BenchL2::warm
              : opt.l2 == L2Prelude::dirty ? db::BenchL2::dirty
                                           : db::BenchL2::cold;
    info.repeats = opt.repeats;
    info.warmups = warmups;
    info.seed = opt.seed;
    info.attainable_gbps = attainable;
    static_cast<ClockReading&>(info) = {clocks.sm_mhz, clocks.mem_mhz};
    recorder->begin(fp, info);
    std::printf("recording into: %s (bench run %lld; --no-record does not)\n",
                recorder->path().c_str(), static_cast<long long>(*recorder->run_id()));
  } else {
    std::printf("%s\n", record_note.c_str());
  }
  if (opt.host_calls > 0) {
    std::printf(
        "host cost per call: %d calls of each method per size on one stream, the input "
        "warm in L2, the three methods interleaved; b2b: wall time of back-to-back calls "
        "/ calls (median of 7 rounds; the GPU's time is inside where it is the larger); "
        "enqueue: the host's time per call while a busy-wait kernel holds the GPU "
        "(median of batches of 200)\n",
        opt.host_calls);
  } else {
    std::printf(
        "timing: CUDA events, median of %d, L2 %s (%s before each start event, so the "
        "GPU is busy and launch latency stays out; each run waited for before the next "
        "is enqueued); seed 0x%016llx\n",
        opt.repeats, db::bench_l2_name(opt.l2),
        opt.l2 == L2Prelude::cold ? fmt::format("a read of {} MiB", b.flush_bytes() >> 20).c_str()
        : opt.l2 == L2Prelude::dirty
            ? fmt::format("a memset of {} MiB", b.flush_bytes() >> 20).c_str()
            : "a 20 us busy wait",
        static_cast<unsigned long long>(opt.seed));
    if (opt.segment_sizes.empty())
      std::printf(
          "calls timed (alternating run by run): cached = tunedreduce::reduce(d_in, d_out, "
          "n, ...) with the library's workspace; two-phase = tunedreduce::reduce(d_temp, "
          "temp_bytes, ...) with caller-owned storage of the size its query gave (filled "
          "with 0xff bytes first); CUB = cub::DeviceReduce two-phase, its storage "
          "allocated outside the timing%s\n",
          opt.thrust ? "; Thrust: thrust::reduce as called (its allocation and result "
                       "copy included), timed on its own"
                     : "");
    else
      std::printf(
          "calls timed (alternating run by run), each verified segment by segment first: "
          "cached = tunedreduce::segmented_reduce(d_in, d_out, seg, ...) with the library's "
          "workspace; two-phase = segmented_reduce(d_temp, temp_bytes, ...) with caller-owned "
          "storage of the size its query gave (filled with 0xff bytes first); CUB = "
          "cub::DeviceSegmentedReduce two-phase over int64 begin/end offsets, its storage "
          "allocated outside the timing; floor = a plain read of the input and write of the "
          "results' bytes (16-byte accesses, 4 blocks per multiprocessor), timed alike; %%floor: "
          "floor / the slower library call\n");
  }

  Json rows = Json::array();
  BenchRecorder* rec = recorder ? &*recorder : nullptr;
  const int failures = opt.segment_sizes.empty() ? bench_whole_arrays(b, opt, rec, rows)
                                                 : bench_segments(b, opt, rec, rows);

  if (recorder) {
    recorder->finish(db::RunStatus::finished);
    std::printf("\nrecorded bench run %lld (%lld results) in %s\n",
                static_cast<long long>(*recorder->run_id()),
                static_cast<long long>(recorder->results()), recorder->path().c_str());
  }
  if (!opt.json.empty()) {
    Json doc = Json::object();
    doc.set("tool", "tunedreduce bench");
    doc.set("version", TUNEDREDUCE_VERSION_STRING);
    doc.set("manifest_hash", kernels::manifest_hash());
    Json dev = Json::object();
    dev.set("ordinal", opt.device);
    dev.set("name", fp.name);
    dev.set("fingerprint", fp.key());
    dev.set("arch", fp.arch());
    dev.set("sm_count", fp.sm_count);
    dev.set("bus_width_bits", fp.bus_width_bits);
    dev.set("l2_bytes", static_cast<std::int64_t>(fp.l2_bytes));
    dev.set("mem_clock_khz", fp.mem_clock_khz);
    dev.set("theoretical_gbps", fp.theoretical_gbps());
    dev.set("driver_version", fp.driver_version);
    dev.set("runtime_version", fp.runtime_version);
    append_clocks(dev, {clocks.sm_mhz, clocks.mem_mhz});
    doc.set("device", dev);
    doc.set("attainable_gbps", attainable);
    doc.set("database", tunedreduce::database_path());
    Json timing = Json::object();
    if (opt.host_calls > 0) {
      timing.set("mode", "host cost per call");
      timing.set("calls", opt.host_calls);
      timing.set(
          "method",
          "back_to_back: wall time of N/7 calls then one synchronisation / (N/7), median of "
          "7 rounds, methods interleaved; "
          "enqueue: host time per call behind a busy-wait kernel (median of batches of 200)");
    } else {
      timing.set("mode", "device time per call");
      timing.set("method", "CUDA events; median, p10, p90; each run waited for before the next");
      timing.set("l2", db::bench_l2_name(opt.l2));
      timing.set("flush_bytes",
                 static_cast<std::int64_t>(opt.l2 == L2Prelude::warm ? 0 : b.flush_bytes()));
      timing.set("repeats", opt.repeats);
      timing.set("warmups", warmups);
    }
    timing.set("api", api_name(opt.api));
    timing.set("seed", std::to_string(opt.seed));
    timing.set("cached", "tunedreduce::reduce(d_in, d_out, n, ...) with the library's workspace");
    timing.set("two_phase",
               "tunedreduce::reduce(d_temp, temp_bytes, ...), caller storage allocated outside the "
               "timing and filled with 0xff bytes");
    timing.set("cub", "cub::DeviceReduce, temp storage allocated outside the timing");
    if (opt.thrust)
      timing.set("thrust", "thrust::reduce as called (allocation and result copy included)");
    doc.set("timing", timing);
    doc.set("results", rows);
    write_file(opt.json, doc.dump(2) + "\n");
    std::printf("\nwrote %s\n", opt.json.c_str());
  }
  if (failures) {
    std::fprintf(stderr, "tunedreduce bench: %d result(s) wrong or failed (see above)\n", failures);
    return exit_code::failure;
  }
  return exit_code::ok;
}

}  // namespace tunedreduce::cli
