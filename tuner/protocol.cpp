#include "tuner/protocol.hpp"

#include <stdexcept>

#include "common/names.hpp"

namespace tunedreduce::tuner::protocol {

namespace {

template <class T>
Json opt(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}
std::optional<double> opt_double(const Json& j, const char* key) {
  const Json* v = j.find(key);
  return (v && !v->is_null()) ? std::optional<double>(v->as_double()) : std::nullopt;
}
std::optional<int> opt_int(const Json& j, const char* key) {
  const Json* v = j.find(key);
  return (v && !v->is_null()) ? std::optional<int>(static_cast<int>(v->as_int())) : std::nullopt;
}

}  // namespace

const Json& member(const Json& j, const char* key) {
  const Json* v = j.find(key);
  if (!v) throw std::runtime_error(std::string("protocol message lacks \"") + key + "\"");
  return *v;
}

Json to_json(const MeasurePolicy& p) {
  Json j = Json::object();
  j.set("warmup", p.warmup);
  j.set("min_repeats", p.min_repeats);
  j.set("max_repeats", p.max_repeats);
  j.set("budget_ms", p.budget_ms);
  j.set("target_spread", p.target_spread);
  j.set("l2", db::l2_mode_name(p.l2));
  j.set("timeout_s", p.timeout_s);
  return j;
}

MeasurePolicy policy_from_json(const Json& j) {
  MeasurePolicy p;
  p.warmup = static_cast<int>(member(j, "warmup").as_int());
  p.min_repeats = static_cast<int>(member(j, "min_repeats").as_int());
  p.max_repeats = static_cast<int>(member(j, "max_repeats").as_int());
  p.budget_ms = member(j, "budget_ms").as_double();
  p.target_spread = member(j, "target_spread").as_double();
  auto l2 = db::parse_l2_mode(member(j, "l2").as_string());
  if (!l2) throw std::runtime_error("bad l2 mode in protocol message");
  p.l2 = *l2;
  p.timeout_s = member(j, "timeout_s").as_double();
  return p;
}

Json to_json(const Result& r) {
  Json j = Json::object();
  j.set("kernel_id", r.kernel_id);
  j.set("dtype", dtype_name(r.dtype));
  j.set("op", op_name(r.op));
  j.set("n", static_cast<std::int64_t>(r.n));
  j.set("outcome", db::outcome_name(r.outcome));
  j.set("median_us", opt(r.median_us));
  j.set("p10_us", opt(r.p10_us));
  j.set("p90_us", opt(r.p90_us));
  j.set("repeats", r.repeats);
  j.set("gbps", opt(r.gbps));
  j.set("sm_clock_mhz", opt(r.sm_clock_mhz));
  j.set("mem_clock_mhz", opt(r.mem_clock_mhz));
  j.set("error", r.error);
  return j;
}

Result result_from_json(const Json& j) {
  Result r;
  r.kernel_id = member(j, "kernel_id").as_string();
  auto d = parse_dtype(member(j, "dtype").as_string());
  auto o = parse_op(member(j, "op").as_string());
  auto out = db::parse_outcome(member(j, "outcome").as_string());
  if (!d || !o || !out) throw std::runtime_error("bad dtype, op or outcome in protocol message");
  r.dtype = *d;
  r.op = *o;
  r.outcome = *out;
  r.n = static_cast<std::uint64_t>(member(j, "n").as_int());
  r.median_us = opt_double(j, "median_us");
  r.p10_us = opt_double(j, "p10_us");
  r.p90_us = opt_double(j, "p90_us");
  r.repeats = static_cast<int>(member(j, "repeats").as_int());
  r.gbps = opt_double(j, "gbps");
  r.sm_clock_mhz = opt_int(j, "sm_clock_mhz");
  r.mem_clock_mhz = opt_int(j, "mem_clock_mhz");
  r.error = member(j, "error").as_string();
  return r;
}

Json to_json(const DeviceFingerprint& f) {
  Json j = Json::object();
  append_hard_attributes(j, f);
  j.set("driver_version", f.driver_version);
  j.set("runtime_version", f.runtime_version);
  return j;
}

DeviceFingerprint fingerprint_from_json(const Json& j) {
  DeviceFingerprint f;
  f.name = member(j, "name").as_string();
  f.cc_major = static_cast<int>(member(j, "cc_major").as_int());
  f.cc_minor = static_cast<int>(member(j, "cc_minor").as_int());
  f.sm_count = static_cast<int>(member(j, "sm_count").as_int());
  f.bus_width_bits = static_cast<int>(member(j, "bus_width_bits").as_int());
  f.l2_bytes = member(j, "l2_bytes").as_int();
  f.ecc = member(j, "ecc").as_bool();
  f.total_mem_bytes = member(j, "total_mem_bytes").as_int();
  f.mem_clock_khz = static_cast<int>(member(j, "mem_clock_khz").as_int());
  f.driver_version = static_cast<int>(member(j, "driver_version").as_int());
  f.runtime_version = static_cast<int>(member(j, "runtime_version").as_int());
  return f;
}

}  // namespace tunedreduce::tuner::protocol
