#include "db/records.hpp"

#include <chrono>
#include <ctime>
#include <random>

#include "common/enum_names.hpp"
#include "common/names.hpp"

namespace tunedreduce::db {

namespace {
constexpr auto run_status_names = enum_names<RunStatus>({{RunStatus::running, "running"},
                                                         {RunStatus::finished, "finished"},
                                                         {RunStatus::interrupted, "interrupted"},
                                                         {RunStatus::failed, "failed"}});
constexpr auto outcome_names = enum_names<Outcome>({{Outcome::ok, "ok"},
                                                    {Outcome::incorrect, "incorrect"},
                                                    {Outcome::launch_failed, "launch_failed"},
                                                    {Outcome::crashed, "crashed"},
                                                    {Outcome::timeout, "timeout"}});
constexpr auto l2_mode_names = enum_names<L2Mode>({{L2Mode::cold, "cold"}, {L2Mode::warm, "warm"}});
static_assert(run_status_names.lists_all_through(RunStatus::failed));
static_assert(outcome_names.lists_all_through(Outcome::timeout));
static_assert(l2_mode_names.lists_all_through(L2Mode::warm));
}  // namespace

const char* run_status_name(RunStatus s) noexcept { return run_status_names.to_name(s); }
const char* outcome_name(Outcome o) noexcept { return outcome_names.to_name(o); }
const char* l2_mode_name(L2Mode m) noexcept { return l2_mode_names.to_name(m); }

std::optional<RunStatus> parse_run_status(std::string_view s) {
  return run_status_names.from_name(s);
}
std::optional<Outcome> parse_outcome(std::string_view s) { return outcome_names.from_name(s); }
std::optional<L2Mode> parse_l2_mode(std::string_view s) { return l2_mode_names.from_name(s); }

std::string op_dtype_mismatch(DType t, Op o) {
  if (op_applies(t, o)) return {};
  return std::string("the operator '") + op_name(o) + "' is defined for " + op_dtypes(o) +
         " only, not for " + dtype_name(t);
}

std::string utc_timestamp() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t t = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

std::string random_uuid() {
  static constexpr char hex[] = "0123456789abcdef";
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i) {
    std::uint32_t v = rd();
    for (int j = 0; j < 8; ++j, v >>= 4) out += hex[v & 0xf];
  }
  return out;
}

}  // namespace tunedreduce::db
