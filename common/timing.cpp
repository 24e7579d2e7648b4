#include "common/timing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/json.hpp"

namespace tunedreduce {

std::optional<double> gbps_of(std::uint64_t bytes, std::optional<double> median_us) {
  if (!median_us || !(*median_us > 0)) return std::nullopt;
  return static_cast<double>(bytes) / (*median_us * 1e3);
}

double relative_median_error(const RepeatStats& s) {
  if (!s.median_us || !s.p10_us || !s.p90_us || !(*s.median_us > 0)) return 0;
  const double spread = std::max(0.0, (*s.p90_us - *s.p10_us) / *s.median_us);
  if (s.repeats <= 0) return spread;
  return 0.48898 * spread / std::sqrt(static_cast<double>(s.repeats));
}

double noise_band(const RepeatStats& a, const RepeatStats& b, double floor, double ceiling) {
  const double ea = relative_median_error(a), eb = relative_median_error(b);
  return std::clamp(2 * std::sqrt(ea * ea + eb * eb), floor, ceiling);
}

RecordMemberError::RecordMemberError(const char* member, std::string problem)
    : std::runtime_error(problem.empty() ? std::string("missing member \"") + member + "\""
                                         : std::string("\"") + member + "\": " + problem),
      member_(member),
      problem_(std::move(problem)) {}

namespace {

const Json& present(const Json& j, const char* key) {
  const Json* v = j.find(key);
  if (!v) throw RecordMemberError(key, "");
  return *v;
}

std::optional<double> opt_number(const Json& j, const char* key) {
  const Json& v = present(j, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number()) throw RecordMemberError(key, "expected a number");
  return v.as_double();
}

std::optional<int> opt_int(const Json& j, const char* key) {
  const Json& v = present(j, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_int()) throw RecordMemberError(key, "expected an integer");
  const std::int64_t x = v.as_int();
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
    throw RecordMemberError(key, "out of range");
  return static_cast<int>(x);
}

int count(const Json& j, const char* key) {
  const Json& v = present(j, key);
  if (!v.is_int()) throw RecordMemberError(key, "expected an integer");
  const std::int64_t x = v.as_int();
  if (x < 0) throw RecordMemberError(key, "must be at least 0");
  if (x > std::numeric_limits<int>::max()) throw RecordMemberError(key, "out of range");
  return static_cast<int>(x);
}

}  // namespace

void append_clocks(Json& j, const ClockReading& c) {
  j.set("sm_clock_mhz", c.sm_clock_mhz);
  j.set("mem_clock_mhz", c.mem_clock_mhz);
}

ClockReading clocks_from_json(const Json& j) {
  ClockReading c;
  c.sm_clock_mhz = opt_int(j, "sm_clock_mhz");
  c.mem_clock_mhz = opt_int(j, "mem_clock_mhz");
  return c;
}

void append_repeat_stats(Json& j, const RepeatStats& s) {
  j.set("median_us", s.median_us);
  j.set("p10_us", s.p10_us);
  j.set("p90_us", s.p90_us);
  j.set("repeats", s.repeats);
}

RepeatStats repeat_stats_from_json(const Json& j) {
  RepeatStats s;
  s.median_us = opt_number(j, "median_us");
  s.p10_us = opt_number(j, "p10_us");
  s.p90_us = opt_number(j, "p90_us");
  s.repeats = count(j, "repeats");
  return s;
}

void append_timing(Json& j, const Timing& t) {
  append_repeat_stats(j, t);
  j.set("gbps", t.gbps);
  append_clocks(j, t);
}

Timing timing_from_json(const Json& j) {
  Timing t;
  static_cast<RepeatStats&>(t) = repeat_stats_from_json(j);
  t.gbps = opt_number(j, "gbps");
  static_cast<ClockReading&>(t) = clocks_from_json(j);
  return t;
}

}  // namespace tunedreduce
