#include "demo_db.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "common/hash.hpp"
#include "db/bench.hpp"
#include "db/statement.hpp"
#include "kernels/manifest.hpp"
#include "kernels/segmented/space.hpp"
#include "tests/support/fixtures.hpp"

namespace tunedreduce::reports::test {

namespace {

using kernels::Family;

// Fraction of the attainable bandwidth a family reaches on large inputs.
double family_efficiency(const kernels::KernelParams& p) {
  auto by_unroll = [&](double u1, double u2, double u4, double u8, double u16) {
    switch (p.unroll) {
      case 1:
        return u1;
      case 2:
        return u2;
      case 4:
        return u4;
      case 8:
        return u8;
      default:
        return u16;
    }
  };
  switch (p.family) {
    case Family::neighbored:
      return 0.16;
    case Family::neighbored_less:
      return 0.26;
    case Family::interleaved:
      return 0.38;
    case Family::unroll:
      return by_unroll(0.38, 0.60, 0.78, 0.88, 0.87);
    case Family::unroll_warps:
      return by_unroll(0.40, 0.62, 0.80, 0.90, 0.89);
    case Family::complete_unroll:
      return by_unroll(0.41, 0.63, 0.81, 0.91, 0.90);
    case Family::smem:
      return by_unroll(0.46, 0.66, 0.83, 0.93, 0.935) *
             (p.smem == kernels::SmemMode::dynamic ? 0.998 : 1.0);
    case Family::warp_shuffle:
      return by_unroll(0.70, 0.85, 0.93, 0.95, 0.945);
    case Family::vectorized:
      return by_unroll(0.90, 0.945, 0.96, 0.955, 0.95);
    case Family::tiled:
      return by_unroll(0.89, 0.94, 0.955, 0.95, 0.945);
    case Family::streaming:
      return by_unroll(0.885, 0.935, 0.95, 0.945, 0.94);
    case Family::single_tile:
      return 0.3;  // one block
    case Family::exact:
    case Family::exact_wide:
    case Family::exact_registers:
      return by_unroll(0.80, 0.86, 0.88, 0.88, 0.88);  // exact_sum; the demo has none
  }
  return 0.5;
}

double block_factor(int block) {
  switch (block) {
    case 64:
      return 0.86;
    case 128:
      return 0.96;
    case 256:
      return 1.0;
    case 512:
      return 0.99;
    default:
      return 0.93;
  }
}

// Deterministic noise in [-1, 1] per configuration and size.
double noise(const std::string& id, std::uint64_t n) {
  const std::uint64_t h = fnv1a64(id + "@" + std::to_string(n));
  return static_cast<double>(h % 20001) / 10000.0 - 1.0;
}

struct Model {
  double attainable_gbps;
  double launch_us;
};
constexpr Model h100_model{3190.0, 3.4};
constexpr Model h200_model{4350.0, 3.3};

struct Candidate {
  const kernels::ManifestEntry* entry;
  std::int64_t id;  // measurement id
  double us;
};

// Winners from the best candidate at each size: equal neighbours joined, boundaries at the
// geometric midpoints, the first interval from 1, the last to the registry's maximum.
std::vector<db::Winner> make_winners(DType dtype, Op op,
                                     const std::map<std::uint64_t, std::vector<Candidate>>& by_n,
                                     int driver, int runtime, std::int64_t run,
                                     db::L2Mode l2 = db::L2Mode::cold) {
  std::vector<db::Winner> out;
  std::uint64_t prev_n = 0;
  for (const auto& [n, cands] : by_n) {
    std::vector<Candidate> sorted = cands;
    std::sort(sorted.begin(), sorted.end(), [](const Candidate& a, const Candidate& b) {
      return a.us != b.us ? a.us < b.us : a.entry->id < b.entry->id;
    });
    const Candidate& best = sorted.front();
    if (!out.empty() && out.back().kernel_id == best.entry->id) {
      prev_n = n;
      continue;
    }
    db::Winner w;
    w.dtype = dtype;
    w.op = op;
    w.l2_mode = l2;
    w.kernel_id = best.entry->id;
    w.measurement_id = best.id;
    if (sorted.size() > 1) {
      w.runner_up_kernel_id = sorted[1].entry->id;
      w.runner_up_measurement_id = sorted[1].id;
    }
    w.driver_version = driver;
    w.runtime_version = runtime;
    w.run_id = run;
    if (out.empty()) {
      w.n_lo = 1;
    } else {
      const auto mid = static_cast<std::uint64_t>(
          std::sqrt(static_cast<double>(prev_n) * static_cast<double>(n)));
      out.back().n_hi = mid;
      w.n_lo = mid + 1;
    }
    w.n_hi = kernels::max_elements;
    out.push_back(std::move(w));
    prev_n = n;
  }
  return out;
}

db::Measurement measurement_of(const kernels::ManifestEntry& e, std::int64_t run, std::int64_t dev,
                               std::uint64_t n) {
  db::Measurement m;
  m.run_id = run;
  m.device_id = dev;
  m.kernel_id = e.id;
  m.params = kernels::stored_params(e.params);
  m.dtype = e.params.dtype;
  m.op = e.params.op;
  m.n = n;
  return m;
}

void set_ok(db::Measurement& m, double us) {
  m.outcome = db::Outcome::ok;
  m.median_us = us;
  m.p10_us = us * 0.985;
  m.p90_us = us * 1.02;
  m.repeats = us < 100 ? 100 : 20;
  m.gbps = static_cast<double>(m.n) * dtype_size(m.dtype) / (us * 1e3);
  m.sm_clock_mhz = 1980;
  m.mem_clock_mhz = 2619;
}

void set_failed(db::Measurement& m, db::Outcome o, std::string error) {
  m.outcome = o;
  m.error = std::move(error);
  m.repeats = 0;
}

db::RunInfo run_info(const std::string& host, db::L2Mode l2 = db::L2Mode::cold) {
  db::RunInfo r;
  r.tool_version = "0.1.0";
  r.manifest_hash = kernels::manifest_hash();
  r.config_hash = "3f1c9a7e5b2d4c68";
  r.host = host;
  r.l2_mode = l2;
  return r;
}

// Which configurations to measure for one (dtype, op).
std::vector<const kernels::ManifestEntry*> configs(DType dtype, Op op, int stride) {
  std::vector<const kernels::ManifestEntry*> out;
  std::map<Family, int> seen;
  for (const auto& e : kernels::manifest())
    // single_tile takes one tile only (up to 32768 elements): not measured at the demo's sizes.
    if (e.params.dtype == dtype && e.params.op == op && e.params.family != Family::single_tile &&
        seen[e.params.family]++ % stride == 0)
      out.push_back(&e);
  return out;
}

}  // namespace

std::string hostile_name() {
  return "NVIDIA \"H200\", <script>alert('x')</script>\r\nline 2 | *bold* _u_ \x1b[31mred\x1b[0m "
         "\xff \xCE\xBCs \xE2\x88\x91 \xF0\x9F\x98\x80 =1+2";
}
std::string hostile_error() {
  return "cudaErrorUnknown: \"quoted\", comma, <b>bold</b>\nnext "
         "line\r\n</td><script>alert(1)</script>";
}
std::string hostile_kernel() { return "x\",\"y<script>alert(2)</script>.b256.two_pass.i32.sum"; }
std::string hostile_family() { return "fam\"ily,<i>x</i>\n2"; }

DeviceFingerprint demo_h100() { return tunedreduce::test::h100_fingerprint(85045395456, 12080); }

FixtureRun begin_fixture_run(db::Database& d) {
  FixtureRun f;
  f.dev = d.upsert_device(demo_h100());
  db::RunInfo info;
  info.tool_version = "0.1.0";
  info.manifest_hash = "0123456789abcdef";
  info.config_hash = "fedcba9876543210";
  info.host = "test-host";
  f.run = d.begin_run(info);
  d.record_attainable_bandwidth(f.run, f.dev, 3200.0);
  return f;
}

DeviceFingerprint demo_h200() {
  DeviceFingerprint f = demo_h100();
  f.name = "NVIDIA H200";
  f.total_mem_bytes = 150754820096;
  f.bus_width_bits = 6144;
  f.mem_clock_khz = 3201000;
  f.l2_bytes = 62914560;
  f.driver_version = 13000;
  f.runtime_version = 13000;
  return f;
}

double model_us(const kernels::KernelParams& p, std::uint64_t n, bool h200) {
  const Model& dev = h200 ? h200_model : h100_model;
  const double eff = std::min(0.97, family_efficiency(p) * block_factor(p.block));
  double overhead = dev.launch_us + (p.finish == kernels::Finish::two_pass ? 1.5 : 0.4);
  if (p.family == Family::warp_shuffle || p.family == Family::vectorized) overhead += 0.3;
  const double bytes = static_cast<double>(n) * dtype_size(p.dtype);
  const double us = overhead + bytes / (dev.attainable_gbps * eff * 1e3);
  return us * (1 + 0.015 * noise(kernels::make_id(p), n));
}

double seg_model_us(const kernels::segmented::SegParams& p, std::uint64_t size, std::uint64_t count,
                    bool h200) {
  using kernels::segmented::SegFamily;
  const Model& dev = h200 ? h200_model : h100_model;
  const double L = static_cast<double>(size), S = static_cast<double>(count);
  const double fill = std::min(1.0, S / 132);  // a block per segment fills the GPU from 132 up
  double eff = 0.3, overhead = dev.launch_us;
  switch (p.family) {
    case SegFamily::thread:
      eff = p.vec > 1 ? (L <= 8 ? 0.85 : L <= 32 ? 0.6 : 0.3) : (L <= 2 ? 0.5 : 0.25);
      break;
    case SegFamily::tile:
      eff = 0.97;
      break;
    case SegFamily::group: {
      const double per_lane = L / p.group;  // 2 to 8 vectors a lane in flight: the best
      eff = per_lane < 1 ? 0.3 : 0.93 * std::min(1.0, per_lane / 8) * (per_lane > 64 ? 0.8 : 1);
      break;
    }
    case SegFamily::block:
      eff = 0.96 * fill * std::max(0.2, std::min(1.0, L / (p.block * 4.0)));
      break;
    case SegFamily::split:
      eff = L >= 16384 ? 0.9 : 0.4;
      overhead += 3;  // the second kernel
      break;
    case SegFamily::balanced:
      eff = 0.85;
      overhead += 4;  // the scan, the tiles' first segments and the join
      break;
  }
  if (p.layout != kernels::segmented::SegLayout::fixed) eff *= 0.92;  // the offsets' reads
  const double bytes = L * S * dtype_size(p.dtype) + S * result_bytes(p.dtype, p.op);
  const double us = overhead + bytes / (dev.attainable_gbps * std::max(eff, 0.05) * 1e3);
  return us * (1 + 0.015 * noise(kernels::segmented::make_seg_id(p), size * 131 + count));
}

namespace {

// Segmented f32 sum on one device (DemoOptions::segmented), in a run of its own.
std::int64_t build_segmented(db::Database& d, std::int64_t dev, const DeviceFingerprint& fp,
                             bool h200) {
  namespace seg = kernels::segmented;
  const std::int64_t run = d.begin_run(run_info("gpu-node-07"));
  d.record_attainable_bandwidth(run, dev,
                                h200 ? h200_model.attainable_gbps : h100_model.attainable_gbps);
  for (seg::SegLayout layout : {seg::SegLayout::fixed, seg::SegLayout::offsets32}) {
    std::vector<db::SegmentedWinner> winners;
    for (int total_log2 : {16, 20, 24})
      for (std::uint64_t size : {1, 4, 32, 256, 4096, 65536}) {
        const std::uint64_t total = std::uint64_t{1} << total_log2;
        if (size > total) continue;
        struct Cand {
          std::string id;
          std::int64_t measurement;
          double us;
        };
        std::vector<Cand> cands;
        seg::space::for_each_config(DType::f32, Op::sum, [&](const seg::SegParams& p) {
          // The tile family takes rows that divide a 16-byte vector only.
          if (p.layout != layout ||
              (p.family == seg::SegFamily::tile && seg::vector_elements(p.dtype) % size != 0))
            return;
          db::Measurement m;
          m.run_id = run;
          m.device_id = dev;
          m.kernel_id = seg::make_seg_id(p);
          m.params = seg::stored_params(p);
          m.dtype = p.dtype;
          m.op = p.op;
          m.n = total;
          m.segment_size = size;
          const double us = seg_model_us(p, size, total / size, h200);
          set_ok(m, us);
          cands.push_back({m.kernel_id, d.insert_measurement(m), us});
        });
        std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
          return a.us != b.us ? a.us < b.us : a.id < b.id;
        });
        db::SegmentedWinner w;
        w.dtype = DType::f32;
        w.op = Op::sum;
        w.layout = seg::seg_layout_name(layout);
        w.size_lo = w.size_hi = size;
        w.count_lo = w.count_hi = total / size;
        w.kernel_id = cands[0].id;
        w.measurement_id = cands[0].measurement;
        w.runner_up_kernel_id = cands[1].id;
        w.runner_up_measurement_id = cands[1].measurement;
        w.driver_version = fp.driver_version;
        w.runtime_version = fp.runtime_version;
        w.run_id = run;
        winners.push_back(std::move(w));
      }
    d.replace_segmented_winners(dev, DType::f32, Op::sum, seg::seg_layout_name(layout), winners);
  }
  d.end_run(run, db::RunStatus::finished);
  return run;
}

}  // namespace

DemoIds build_demo(db::Database& d, const DemoOptions& o) {
  DemoIds ids;
  DeviceFingerprint h100 = demo_h100();
  DeviceFingerprint h200 = demo_h200();
  if (o.hostile) h200.name = hostile_name();
  ids.h100 = d.upsert_device(h100);
  if (o.second_device) ids.h200 = d.upsert_device(h200);

  std::vector<std::pair<DType, Op>> keys{{DType::i32, Op::sum}};
  if (o.f32_sum) keys.push_back({DType::f32, Op::sum});
  if (o.arg_ops) {
    keys.push_back({DType::i32, Op::argmin});
    keys.push_back({DType::f64, Op::argmax});
  }
  std::vector<std::uint64_t> sizes;
  for (int k = o.log2_from; k <= o.log2_to; k += o.log2_step)
    sizes.push_back(std::uint64_t{1} << k);

  struct Dev {
    std::int64_t id;
    bool h200;
    const DeviceFingerprint* fp;
    std::int64_t* run;
  };
  std::vector<Dev> devs{{ids.h100, false, &h100, &ids.run1_h100}};
  if (o.second_device) devs.push_back({ids.h200, true, &h200, &ids.run1_h200});

  std::vector<db::BenchResult> bench, bench_old, bench_dirty;
  for (const Dev& dev : devs) {
    *dev.run =
        d.begin_run(run_info(o.hostile && dev.h200 ? "lab,\"host\"\n<script>" : "gpu-node-07"));
    d.record_attainable_bandwidth(*dev.run, dev.id,
                                  dev.h200 ? h200_model.attainable_gbps
                                           : h100_model.attainable_gbps);
    for (const auto& [dtype, op] : keys) {
      std::map<std::uint64_t, std::vector<Candidate>> by_n;
      const std::string suffix = std::string(".") + dtype_name(dtype) + "." + op_name(op);
      for (std::uint64_t n : sizes) {
        // The failures, whichever configurations are measured otherwise.
        std::vector<std::pair<std::string, std::pair<db::Outcome, std::string>>> failures;
        if (o.failures) {
          for (const char* fin : {"single_pass", "two_pass"})
            failures.push_back(
                {"complete_unroll.b1024.u16." + std::string(fin) + suffix,
                 {db::Outcome::launch_failed,
                  "cudaErrorLaunchOutOfResources: too many resources requested for launch"}});
          if (n == sizes.back())
            failures.push_back(
                {"vectorized.b64.u8.single_pass" + suffix,
                 {db::Outcome::timeout, "no answer within 10 s; the worker was killed"}});
          if (dtype == DType::f32 && n == sizes[sizes.size() / 2])
            failures.push_back(
                {"interleaved.b1024.single_pass" + suffix,
                 {db::Outcome::incorrect, o.hostile && dev.h200
                                              ? hostile_error()
                                              : "result 1.6777e+07 differs from the reference "
                                                "1.6777216e+07 by more than n*eps*sum|x|"}});
        }
        // Only the failures of configurations that exist (argmin and argmax have no
        // complete_unroll).
        std::erase_if(failures, [](const auto& f) { return !kernels::manifest_find(f.first); });
        auto failing = [&](const std::string& id) {
          return std::any_of(failures.begin(), failures.end(),
                             [&](const auto& f) { return f.first == id; });
        };
        std::vector<const kernels::ManifestEntry*> measured = configs(dtype, op, o.config_stride);
        const std::string crash_id = "neighbored.b64.two_pass" + suffix;
        if (o.failures && n == sizes.back() && kernels::manifest_find(crash_id)) {
          // Crashed once, then measured fine on the retry.
          const auto* e = kernels::manifest_find(crash_id);
          db::Measurement crash = measurement_of(*e, *dev.run, dev.id, n);
          set_failed(crash, db::Outcome::crashed, "worker exited with signal 11 (SIGSEGV)");
          d.insert_measurement(crash);
          if (std::find(measured.begin(), measured.end(), e) == measured.end())
            measured.push_back(e);
        }
        for (const auto* e : measured) {
          if (failing(e->id)) continue;
          db::Measurement m = measurement_of(*e, *dev.run, dev.id, n);
          const double us = model_us(e->params, n, dev.h200);
          set_ok(m, us);
          by_n[n].push_back({e, d.insert_measurement(m), us});
        }
        for (const auto& [id, what] : failures) {
          db::Measurement m = measurement_of(*kernels::manifest_find(id), *dev.run, dev.id, n);
          set_failed(m, what.first, what.second);
          d.insert_measurement(m);
        }
        if (o.hostile && dev.h200 && dtype == DType::i32) {
          // A kernel this binary does not know, with a hostile id and family (never the winner).
          db::Measurement m;
          m.run_id = *dev.run;
          m.device_id = dev.id;
          m.kernel_id = hostile_kernel();
          m.params.family = hostile_family();
          m.params.block = 256;
          m.params.unroll = 1;
          m.dtype = dtype;
          m.op = op;
          m.n = n;
          set_ok(m, 50 + static_cast<double>(n) * 4 / 1e5);
          d.insert_measurement(m);
        }
      }
      d.replace_winners(dev.id, dtype, op,
                        make_winners(dtype, op, by_n, dev.fp->driver_version,
                                     dev.fp->runtime_version, *dev.run));
      if (o.bench && !dev.h200)
        for (const auto& [n, cands] : by_n) {
          const Candidate* top = nullptr;
          for (const auto& c : cands)
            if (!top || c.us < top->us) top = &c;
          auto result = [&](db::BenchMethod m, double us) {
            db::BenchResult r;
            r.dtype = dtype;
            r.op = op;
            r.n = n;
            r.method = m;
            r.verified = true;
            r.median_us = us;
            r.p10_us = us * 0.985;
            r.p90_us = us * 1.03;
            r.repeats = 50;
            if (db::is_tuned(m)) {
              r.kernel_id = top->entry->id;
              r.lookup_level = "exact";
              r.winner_l2 = db::L2Mode::cold;
            }
            return r;
          };
          const double cub_factor = n < (1u << 16) ? 1.06 : n >= (1u << 24) ? 1.0 : 1.03;
          bench.push_back(result(db::BenchMethod::cached, top->us * 1.01));
          bench.push_back(result(db::BenchMethod::two_phase, top->us * 1.005));
          bench.push_back(result(db::BenchMethod::cub, top->us * cub_factor));
          db::BenchResult thrust = result(db::BenchMethod::thrust, top->us * cub_factor + 8);
          if (n == sizes.back()) {
            thrust.verified = false;
            thrust.median_us = thrust.p10_us = thrust.p90_us = std::nullopt;
            thrust.repeats = 0;
            thrust.error = o.hostile
                               ? hostile_error()
                               : "thrust::reduce threw: cudaErrorMemoryAllocation: out of memory";
          }
          bench.push_back(thrust);
          if (n <= (1u << 14)) {
            // The older run: CUB looked faster then.
            bench_old.push_back(result(db::BenchMethod::cached, top->us * 1.2));
            bench_old.push_back(result(db::BenchMethod::cub, top->us));
          }
          if (n == (1u << 20)) {
            bench_dirty.push_back(result(db::BenchMethod::cached, top->us * 1.3));
            bench_dirty.push_back(result(db::BenchMethod::cub, top->us * 1.35));
          }
        }
    }
    d.end_run(*dev.run, db::RunStatus::finished);
  }

  if (o.interrupted_run) {
    ids.run2 = d.begin_run(run_info("gpu-node-07"));
    d.record_attainable_bandwidth(ids.run2, ids.h100, 3185.0);
    for (std::uint64_t n : {std::uint64_t{1} << 10, std::uint64_t{1} << 12, std::uint64_t{1} << 14})
      for (const auto* e : configs(DType::i32, Op::min, 8)) {
        db::Measurement m = measurement_of(*e, ids.run2, ids.h100, n);
        set_ok(m, model_us(e->params, n));
        d.insert_measurement(m);
      }
    for (const auto* e : configs(DType::f32, Op::max, 16)) {
      db::Measurement m = measurement_of(*e, ids.run2, ids.h100, 1024);
      set_ok(m, model_us(e->params, 1024));
      d.insert_measurement(m);
    }
    d.end_run(ids.run2, db::RunStatus::interrupted);
  }
  if (o.warm_run) {
    // Warm L2: an input that fits in the H100's 50 MiB L2 is read from it, about twice as fast.
    ids.run_warm = d.begin_run(run_info("gpu-node-09", db::L2Mode::warm));
    d.record_attainable_bandwidth(ids.run_warm, ids.h100, 3188.0);
    std::map<std::uint64_t, std::vector<Candidate>> by_n;
    for (std::uint64_t n : sizes)
      for (const auto* e : configs(DType::i32, Op::sum, 8)) {
        db::Measurement m = measurement_of(*e, ids.run_warm, ids.h100, n);
        m.l2_mode = db::L2Mode::warm;
        const double us = model_us(e->params, n) * (n * 4 < (std::uint64_t{50} << 20) ? 0.55 : 1.0);
        set_ok(m, us);
        by_n[n].push_back({e, d.insert_measurement(m), us});
      }
    d.replace_winners(ids.h100, DType::i32, Op::sum,
                      make_winners(DType::i32, Op::sum, by_n, h100.driver_version,
                                   h100.runtime_version, ids.run_warm, db::L2Mode::warm),
                      db::L2Mode::warm);
    d.end_run(ids.run_warm, db::RunStatus::finished);
  }
  if (o.bench) {
    db::BenchRunInfo info;
    info.tool_version = "0.3.0";
    info.manifest_hash = kernels::manifest_hash();
    info.host = o.hostile ? "lab,\"bench\"\n<script>alert('b')</script>" : "gpu-node-07";
    info.library_database = o.hostile ? "/tmp/<i>x</i>,\"db\"\r\n.db"
                                      : "/home/lab/.local/share/tunedreduce/tune.db";
    info.repeats = 50;
    info.warmups = 2;
    info.seed = 0x5eed;
    info.attainable_gbps = h100_model.attainable_gbps;
    info.sm_clock_mhz = 1980;
    info.mem_clock_mhz = 2619;
    ids.bench_old = db::record_bench_run(d, h100, info, bench_old);
    ids.bench = db::record_bench_run(d, h100, info, bench);
    info.l2 = db::BenchL2::dirty;
    ids.bench_dirty = db::record_bench_run(d, h100, info, bench_dirty);
  }
  if (o.segmented) {
    ids.run_seg_h100 = build_segmented(d, ids.h100, h100, false);
    if (o.second_device) ids.run_seg_h200 = build_segmented(d, ids.h200, h200, true);
  }
  if (o.stale) {
    h100.driver_version = 13000;
    h100.runtime_version = 13000;
    d.upsert_device(h100);
  }
  return ids;
}

void write_demo(const std::filesystem::path& out, const DemoOptions& o) {
  if (std::filesystem::exists(out))
    throw std::runtime_error("'" + out.string() + "' exists; write_demo writes a new file only");
  db::Database mem = db::Database::create_in_memory(out.string());
  build_demo(mem, o);
  db::Statement vacuum = mem.connection().prepare("VACUUM INTO ?1");
  vacuum.bind(1, out.string()).run();
}

}  // namespace tunedreduce::reports::test
