#include "tuner/protocol.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/names.hpp"
#include "common/timing.hpp"

namespace tunedreduce::tuner::protocol {

namespace {

/// An integer that must lie in [lo, hi].
std::int64_t in_range(const Json& v, const char* key, std::int64_t lo, std::int64_t hi) {
  const std::int64_t x = v.as_int();
  if (x < lo || x > hi)
    throw std::runtime_error(std::string("protocol message: \"") + key +
                             "\" = " + std::to_string(x) + " is out of range");
  return x;
}
int int_member(const Json& j, const char* key, int lo = std::numeric_limits<int>::min()) {
  return static_cast<int>(in_range(member(j, key), key, lo, std::numeric_limits<int>::max()));
}
std::uint64_t count_member(const Json& j, const char* key) {
  return static_cast<std::uint64_t>(
      in_range(member(j, key), key, 0, std::numeric_limits<std::int64_t>::max()));
}
double finite_member(const Json& j, const char* key) {
  const double x = member(j, key).as_double();
  if (!std::isfinite(x))
    throw std::runtime_error(std::string("protocol message: \"") + key + "\" is not finite");
  return x;
}
/// The "segment_size" of a measure command or a result of \p kernel_id at \p n: there (a
/// positive integer that divides n) exactly when the kernel is segmented. Absent or null: none.
std::optional<std::uint64_t> segment_size_member(const Json& j, const std::string& kernel_id,
                                                 std::uint64_t n) {
  const Json* v = j.find("segment_size");
  const bool segmented = is_segmented_kernel(kernel_id);
  if (!v || v->is_null()) {
    if (segmented)
      throw std::runtime_error(
          "protocol message lacks \"segment_size\", which the segmented kernel '" + kernel_id +
          "' needs");
    return std::nullopt;
  }
  if (!segmented)
    throw std::runtime_error(
        "protocol message: \"segment_size\" is for segmented kernels "
        "(\"seg.*\") only, not '" +
        kernel_id + "'");
  if (!v->is_int())
    throw std::runtime_error("protocol message: \"segment_size\" is not an integer");
  const auto size = static_cast<std::uint64_t>(
      in_range(*v, "segment_size", 1, std::numeric_limits<std::int64_t>::max()));
  if (n % size != 0)
    throw std::runtime_error("protocol message: \"segment_size\" = " + std::to_string(size) +
                             " does not divide \"n\" = " + std::to_string(n));
  return size;
}
Json parse_object(std::string_view line) {
  Json j = Json::parse(line);
  if (!j.is_object()) throw std::runtime_error("protocol message: not a JSON object");
  return j;
}

}  // namespace

const Json& member(const Json& j, const char* key) {
  const Json* v = j.find(key);
  if (!v) throw std::runtime_error(std::string("protocol message lacks \"") + key + "\"");
  return *v;
}

bool is_segmented_kernel(std::string_view kernel_id) { return kernel_id.starts_with("seg."); }

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
  p.warmup = int_member(j, "warmup", 0);
  p.min_repeats = int_member(j, "min_repeats", 1);
  p.max_repeats = int_member(j, "max_repeats", 1);
  p.budget_ms = finite_member(j, "budget_ms");
  p.target_spread = finite_member(j, "target_spread");
  auto l2 = db::parse_l2_mode(member(j, "l2").as_string());
  if (!l2) throw std::runtime_error("bad l2 mode in protocol message");
  p.l2 = *l2;
  p.timeout_s = finite_member(j, "timeout_s");
  return p;
}

Json to_json(const Result& r) {
  Json j = Json::object();
  j.set("kernel_id", r.kernel_id);
  j.set("dtype", dtype_name(r.dtype));
  j.set("op", op_name(r.op));
  j.set("n", static_cast<std::int64_t>(r.n));
  if (r.segment_size) j.set("segment_size", static_cast<std::int64_t>(*r.segment_size));
  j.set("outcome", db::outcome_name(r.outcome));
  append_timing(j, r);
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
  r.n = count_member(j, "n");
  r.segment_size = segment_size_member(j, r.kernel_id, r.n);
  try {
    static_cast<Timing&>(r) = timing_from_json(j);
  } catch (const RecordMemberError& e) {
    throw std::runtime_error(e.missing()
                                 ? std::string("protocol message lacks \"") + e.member() + "\""
                                 : std::string("protocol message: ") + e.what());
  }
  r.error = member(j, "error").as_string();
  return r;
}

Json to_json(const DeviceFingerprint& f) {
  Json j = Json::object();
  append_hard_attributes(j, f);
  j.set("driver_version", f.driver_version);
  j.set("runtime_version", f.runtime_version);
  j.set("uuid", f.uuid);
  return j;
}

DeviceFingerprint fingerprint_from_json(const Json& j) {
  DeviceFingerprint f;
  f.name = member(j, "name").as_string();
  f.cc_major = int_member(j, "cc_major");
  f.cc_minor = int_member(j, "cc_minor");
  f.sm_count = int_member(j, "sm_count");
  f.bus_width_bits = int_member(j, "bus_width_bits");
  f.l2_bytes = member(j, "l2_bytes").as_int();
  f.ecc = member(j, "ecc").as_bool();
  f.total_mem_bytes = member(j, "total_mem_bytes").as_int();
  f.mem_clock_khz = int_member(j, "mem_clock_khz");
  f.driver_version = int_member(j, "driver_version");
  f.runtime_version = int_member(j, "runtime_version");
  // Soft, and optional: a peer that does not know its GPU's UUID leaves it out.
  if (const Json* uuid = j.find("uuid"); uuid && !uuid->is_null()) {
    if (!uuid->is_string()) throw std::runtime_error("protocol message: \"uuid\" is not a string");
    f.uuid = uuid->as_string();
  }
  return f;
}

Json to_json(const Command& c) {
  Json j = Json::object();
  switch (c.kind) {
    case Command::Kind::init:
      j.set("cmd", "init");
      j.set("device", c.device);
      j.set("seed", static_cast<std::int64_t>(c.seed));
      break;
    case Command::Kind::bandwidth:
      j.set("cmd", "bandwidth");
      break;
    case Command::Kind::measure:
      j.set("cmd", "measure");
      j.set("kernel_id", c.kernel_id);
      j.set("n", static_cast<std::int64_t>(c.n));
      if (c.segment_size) j.set("segment_size", static_cast<std::int64_t>(*c.segment_size));
      j.set("policy", to_json(c.policy));
      break;
    case Command::Kind::quit:
      j.set("cmd", "quit");
      break;
  }
  return j;
}

Command parse_command(std::string_view line) {
  const Json j = parse_object(line);
  const std::string& cmd = member(j, "cmd").as_string();
  Command c;
  if (cmd == "init") {
    c.kind = Command::Kind::init;
    c.device = int_member(j, "device");
    c.seed = static_cast<std::uint64_t>(member(j, "seed").as_int());
  } else if (cmd == "bandwidth") {
    c.kind = Command::Kind::bandwidth;
  } else if (cmd == "measure") {
    c.kind = Command::Kind::measure;
    c.kernel_id = member(j, "kernel_id").as_string();
    c.n = count_member(j, "n");
    c.segment_size = segment_size_member(j, c.kernel_id, c.n);
    c.policy = policy_from_json(member(j, "policy"));
  } else if (cmd == "quit") {
    c.kind = Command::Kind::quit;
  } else {
    throw std::runtime_error("protocol message: unknown command '" + cmd + "'");
  }
  return c;
}

Reply parse_reply(std::string_view line) {
  const Json j = parse_object(line);
  const std::string& ev = member(j, "event").as_string();
  Reply r;
  if (ev == "ready") {
    r.event = Reply::Event::ready;
    r.fingerprint = fingerprint_from_json(member(j, "fingerprint"));
  } else if (ev == "busy") {
    r.event = Reply::Event::busy;
  } else if (ev == "bandwidth") {
    r.event = Reply::Event::bandwidth;
    r.gbps = finite_member(j, "gbps");
  } else if (ev == "result") {
    r.event = Reply::Event::result;
    r.result = result_from_json(member(j, "result"));
  } else if (ev == "fatal") {
    r.event = Reply::Event::fatal;
    r.error = member(j, "error").as_string();
    r.exit_code = int_member(j, "exit_code");
  } else {
    throw std::runtime_error("protocol message: unknown event '" + ev + "'");
  }
  return r;
}

Probe parse_probe(std::string_view line) {
  const Json j = parse_object(line);
  Probe p;
  for (const Json& d : member(j, "devices").as_array()) {
    const int ordinal = int_member(d, "ordinal", 0);
    p.devices.emplace_back(ordinal, fingerprint_from_json(member(d, "fingerprint")));
  }
  if (const Json* why = j.find("error"); why && !why->is_null()) p.error = why->as_string();
  return p;
}

}  // namespace tunedreduce::tuner::protocol
