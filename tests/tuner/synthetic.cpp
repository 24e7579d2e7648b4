#include "synthetic.hpp"

#include <cmath>

#include "common/hash.hpp"
#include "common/timing.hpp"
#include "kernels/manifest.hpp"
#include "kernels/registry.hpp"
#include "tests/support/fixtures.hpp"

namespace tunedreduce::tuner::test {

namespace {

// Uniform in [-1, 1) from a hash.
double unit_noise(const std::string& id, std::uint64_t n, std::uint64_t salt) {
  const std::uint64_t h = fnv1a64(id + "@" + std::to_string(n) + "#" + std::to_string(salt));
  return static_cast<double>(h >> 11) / static_cast<double>(std::uint64_t{1} << 52) - 1.0;
}

}  // namespace

double model_us(const std::string& kernel_id, std::uint64_t n) {
  const auto p = kernels::parse_id(kernel_id);
  if (!p) return 1e9;
  using kernels::Family;
  double eff = 0.5, launch = 3.0;
  switch (p->family) {
    case Family::neighbored:
      eff = 0.30;
      break;
    case Family::neighbored_less:
      eff = 0.45;
      break;
    case Family::interleaved:
      eff = 0.50;
      break;
    case Family::unroll:
      eff = 0.62;
      break;
    case Family::unroll_warps:
      eff = 0.66;
      break;
    case Family::complete_unroll:
      eff = 0.70;
      break;
    case Family::smem:
      eff = 0.74 + (p->smem == kernels::SmemMode::dynamic ? 0.005 : 0);
      break;
    case Family::warp_shuffle:
      eff = 0.82, launch = 3.6;
      break;
    case Family::vectorized:
      eff = 0.90, launch = 4.2;
      break;
    case Family::tiled:
      eff = 0.89, launch = 4.3;
      break;
    case Family::streaming:
      eff = 0.885, launch = 4.3;
      break;
    case Family::single_tile:
      eff = 0.5, launch = 2.8;
      break;  // one block: latency, no bandwidth
    case Family::exact:
      eff = 0.80, launch = 4.6;
      break;
    case Family::exact_wide:
      eff = 0.76, launch = 4.6;
      break;
    case Family::exact_registers:
      eff = 0.78, launch = 4.4;
      break;
  }
  eff *= 1 - 0.04 * std::abs(std::log2(p->block / 256.0));
  eff *= 1 -
         0.03 * std::abs(std::log2(p->unroll / 4.0)) * (p->unroll > 1 || p->family >= Family::smem);
  launch += p->finish == kernels::Finish::two_pass ? 2.4
            : p->finish == kernels::Finish::packed ? 0.1
                                                   : 0.3;
  // Small problems: fewer elements per thread means more blocks to schedule.
  const double work = static_cast<double>(p->block) * p->unroll;
  launch += 0.2 * std::log2(work / 64.0) * (n < 65536 ? 1 : 0);
  const double bytes = static_cast<double>(n) * dtype_size(p->dtype);
  return launch + bytes / (3000e3 * eff);
}

Result model_result(const std::string& kernel_id, std::uint64_t n, int repeats, double noise,
                    double spread, std::uint64_t salt) {
  Result r;
  r.kernel_id = kernel_id;
  r.n = n;
  if (auto p = kernels::parse_id(kernel_id)) {
    r.dtype = p->dtype;
    r.op = p->op;
  }
  const double m = model_us(kernel_id, n) * (1 + noise * unit_noise(kernel_id, n, salt));
  r.outcome = Outcome::ok;
  r.median_us = m;
  r.p10_us = m * (1 - spread / 2);
  r.p90_us = m * (1 + spread / 2);
  r.repeats = repeats;
  r.gbps = gbps_of(n * dtype_size(r.dtype), m);
  return r;
}

std::vector<Result> FnRunner::measure(std::span<const Request> requests) {
  ++calls;
  clock += seconds_per_call;
  std::vector<Result> out;
  for (const Request& q : requests) {
    if (cancel && cancel->load()) ++requests_after_cancel;
    log.push_back(q);
    out.push_back(fn_(q));
    if (cancel && cancel_after && log.size() >= cancel_after) cancel->store(true);
  }
  return out;
}

Result model_answer(const Request& q) {
  return q.min_repeats ? model_result(q.kernel_id, q.n, *q.min_repeats, 0.03, 0.04, 1)
                       : model_result(q.kernel_id, q.n, 20, 0.005, 0.01, 2);
}

FnRunner model_runner(std::set<std::string> incorrect) {
  return FnRunner([incorrect = std::move(incorrect)](const Request& q) {
    Result r = model_answer(q);
    if (incorrect.count(q.kernel_id)) {
      r.outcome = Outcome::incorrect;
      r.error = "result differs from the reference";
    }
    return r;
  });
}

DeviceFingerprint h100() { return tunedreduce::test::h100_fingerprint(85045395456); }

namespace {

double ideal_log2(const kseg::SegParams& p) {
  switch (p.family) {
    case kseg::SegFamily::thread:
      return p.vec == 1 ? 0 : 2;
    case kseg::SegFamily::tile:
      return 1;
    case kseg::SegFamily::group:
      return 2 + std::log2(p.group);
    case kseg::SegFamily::block:
      return 8 + 2 * std::log2(p.block / 128.0);
    case kseg::SegFamily::split:
      return 20;
    case kseg::SegFamily::balanced:
      return 12;
  }
  return 100;
}

}  // namespace

double seg_model_us(const std::string& kernel_id, std::uint64_t segment_size, std::uint64_t count) {
  const auto p = kseg::parse_seg_id(kernel_id);
  if (!p) return 1e9;
  return 5 + std::abs(std::log2(static_cast<double>(segment_size)) - ideal_log2(*p)) +
         1e-4 * static_cast<double>(count);
}

Result seg_model_result(const Request& q) {
  Result r;
  r.kernel_id = q.kernel_id;
  r.n = q.n;
  r.segment_size = q.segment_size;
  if (const auto p = kseg::parse_seg_id(q.kernel_id)) {
    r.dtype = p->dtype;
    r.op = p->op;
  }
  const std::uint64_t l = q.segment_size.value_or(1);
  const double us = seg_model_us(q.kernel_id, l, q.n / l);
  r.outcome = Outcome::ok;
  r.median_us = us;
  r.p10_us = us * 0.995;
  r.p90_us = us * 1.005;
  r.repeats = q.min_repeats.value_or(20);
  r.gbps = gbps_of(q.n * dtype_size(r.dtype), us);
  return r;
}

std::int64_t fill_segmented_database(db::Database& db, const std::vector<SegKeySpace>& keys,
                                     const std::set<std::string>& incorrect, db::L2Mode l2) {
  const std::int64_t device = db.upsert_device(h100());
  db::RunInfo info;
  info.tool_version = "test";
  info.manifest_hash = "0000000000000000";
  info.config_hash = "synthetic-segmented";
  info.host = "test-host";
  info.l2_mode = l2;
  const std::int64_t run = db.begin_run(info);
  std::vector<db::Measurement> rows;
  for (const SegKeySpace& k : keys)
    for (const SegPoint& p : k.points)
      for (const std::string& id : p.candidates)
        for (int repeats : {3, 20}) {
          Request q;
          q.kernel_id = id;
          q.n = p.total();
          q.segment_size = p.segment_size;
          q.min_repeats = repeats;
          db::Measurement m = seg_model_result(q);
          m.run_id = run;
          m.device_id = device;
          m.params = kseg::stored_params(*kseg::parse_seg_id(id));
          m.l2_mode = l2;
          if (incorrect.count(id)) {
            m.outcome = db::Outcome::incorrect;
            m.error = "result differs from the reference";
            m.median_us = m.p10_us = m.p90_us = m.gbps = std::nullopt;
          }
          rows.push_back(std::move(m));
        }
  db.insert_measurements(rows);
  db.end_run(run, db::RunStatus::finished);
  return device;
}

std::int64_t fill_database(db::Database& db, const std::vector<std::string>& ids,
                           const std::vector<std::uint64_t>& sizes,
                           const std::set<std::string>& incorrect, db::L2Mode l2) {
  const std::int64_t device = db.upsert_device(h100());
  db::RunInfo info;
  info.tool_version = "test";
  info.manifest_hash = "0000000000000000";
  info.config_hash = "synthetic";
  info.host = "test-host";
  info.l2_mode = l2;
  const std::int64_t run = db.begin_run(info);
  db.record_attainable_bandwidth(run, device, 3190);
  for (std::uint64_t n : sizes)
    for (const std::string& id : ids)
      for (int full = 0; full < 2; ++full) {
        const Result r = full ? model_result(id, n, 20, 0.005, 0.01, 2)
                              : model_result(id, n, 3, 0.03, 0.04, 1);
        db::Measurement m = r;  // the model's measurement, recorded
        m.run_id = run;
        m.device_id = device;
        m.params = kernels::stored_params(*kernels::parse_id(id));
        m.l2_mode = l2;
        if (incorrect.count(id)) {
          m.outcome = db::Outcome::incorrect;
          m.error = "result differs from the reference";
          m.median_us = m.p10_us = m.p90_us = m.gbps = std::nullopt;
        }
        db.insert_measurement(m);
      }
  db.end_run(run, db::RunStatus::finished);
  return device;
}

}  // namespace tunedreduce::tuner::test
