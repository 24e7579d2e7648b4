#include "tuner/replay_runner.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "kernels/registry.hpp"
#include "kernels/segmented/segmented.hpp"

namespace tunedreduce::tuner {

ReplayRunner::ReplayRunner(db::Database& db, const ReplayOptions& options) : options_(options) {
  label_ = db.path().string();
  label_.insert(label_.begin(), '\'');
  label_ += "' device " + std::to_string(options.device_id);
  db::MeasurementFilter f;
  f.device_id = options.device_id;
  for (db::MeasurementRecord& m : db.measurements(f)) {
    if (m.l2_mode != options.policy.l2) continue;
    ++recorded_;
    by_key_[Key{m.kernel_id, m.n, m.segment_size.value_or(0)}].push_back(std::move(m));
  }
  // The latest attainable bandwidth recorded for this device.
  for (const db::RunRecord& r : db.runs())
    for (const auto& a : r.attainable)
      if (a.device_id == options.device_id) attainable_ = a.gbps;
}

std::vector<Result> ReplayRunner::measure(std::span<const Request> requests) {
  std::vector<Result> out;
  out.reserve(requests.size());
  for (const Request& q : requests) {
    Result r;
    r.kernel_id = q.kernel_id;
    r.n = q.n;
    r.segment_size = q.segment_size;
    if (auto p = kernels::parse_id(q.kernel_id)) {
      r.dtype = p->dtype;
      r.op = p->op;
    } else if (auto s = kernels::segmented::parse_seg_id(q.kernel_id)) {
      r.dtype = s->dtype;
      r.op = s->op;
    }
    auto it = by_key_.find(Key{q.kernel_id, q.n, q.segment_size.value_or(0)});
    if (it == by_key_.end()) {
      ++missing_;
      r.outcome = Outcome::launch_failed;
      r.error =
          "not recorded in the replay database: '" + q.kernel_id + "' at n=" + std::to_string(q.n) +
          (q.segment_size ? " segment_size=" + std::to_string(*q.segment_size) : std::string()) +
          " with L2 " + db::l2_mode_name(options_.policy.l2) + " (" + label_ + ")";
      if (options_.strict) throw Error(r.error);
      out.push_back(std::move(r));
      continue;
    }
    const auto& recs = it->second;  // ascending id
    const int want = q.min_repeats.value_or(options_.policy.min_repeats);
    const db::MeasurementRecord* pick = nullptr;
    for (const auto& m : recs)
      if (m.outcome == Outcome::incorrect) pick = &m;
    if (!pick) {
      const db::MeasurementRecord* enough = nullptr;
      const db::MeasurementRecord* most = nullptr;
      for (const auto& m : recs) {
        if (m.outcome != Outcome::ok || !m.median_us) continue;
        if (m.repeats >= want && (!enough || m.repeats <= enough->repeats)) enough = &m;
        if (!most || m.repeats >= most->repeats) most = &m;
      }
      pick = enough ? enough : most;
    }
    if (!pick)
      for (const auto& m : recs)
        if (db::is_final(m.outcome)) pick = &m;
    if (!pick) pick = &recs.back();
    static_cast<db::Measurement&>(r) = *pick;  // of this kernel id and n
    r.measurement_id = pick->id;
    r.reused = true;
    ++answered_;
    out.push_back(std::move(r));
  }
  return out;
}

db::DeviceRecord choose_replay_device(db::Database& db,
                                      const std::optional<std::string>& selector) {
  const std::vector<db::DeviceRecord> devices = db.devices();
  auto list = [&] {
    std::string s;
    for (const auto& d : devices)
      s += "\n  " + std::to_string(d.id) + "  " + d.key + "  " + d.fingerprint.name;
    return s;
  };
  if (devices.empty())
    throw Error("'" + db.path().string() + "' has no devices: nothing to replay", exit_code::usage);
  if (!selector) {
    if (devices.size() == 1) return devices.front();
    throw Error("'" + db.path().string() + "' has " + std::to_string(devices.size()) +
                    " devices; choose one with --replay-device (id, key or name):" + list(),
                exit_code::usage);
  }
  std::vector<const db::DeviceRecord*> hits;
  for (const auto& d : devices)
    if (d.key == *selector || std::to_string(d.id) == *selector) return d;
  for (const auto& d : devices)
    if (d.fingerprint.name.find(*selector) != std::string::npos) hits.push_back(&d);
  if (hits.size() == 1) return *hits.front();
  throw Error("--replay-device '" + *selector + "' matches " +
                  (hits.empty() ? std::string("no device")
                                : std::to_string(hits.size()) + " devices") +
                  " of '" + db.path().string() + "':" + list(),
              exit_code::usage);
}

}  // namespace tunedreduce::tuner
