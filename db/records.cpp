#include "db/records.hpp"

#include <chrono>
#include <ctime>
#include <random>

namespace tunedreduce::db {

namespace {
template <class E, std::size_t N>
std::optional<E> parse_name(std::string_view s, const E (&all)[N],
                            const char* (*name)(E) noexcept) {
  for (E e : all)
    if (s == name(e)) return e;
  return std::nullopt;
}
constexpr RunStatus all_statuses[] = {RunStatus::running, RunStatus::finished,
                                      RunStatus::interrupted, RunStatus::failed};
constexpr Outcome all_outcomes[] = {Outcome::ok, Outcome::incorrect, Outcome::launch_failed,
                                    Outcome::crashed, Outcome::timeout};
constexpr L2Mode all_l2_modes[] = {L2Mode::cold, L2Mode::warm};
}  // namespace

const char* run_status_name(RunStatus s) noexcept {
  switch (s) {
    case RunStatus::running:
      return "running";
    case RunStatus::finished:
      return "finished";
    case RunStatus::interrupted:
      return "interrupted";
    case RunStatus::failed:
      return "failed";
  }
  return "?";
}

const char* outcome_name(Outcome o) noexcept {
  switch (o) {
    case Outcome::ok:
      return "ok";
    case Outcome::incorrect:
      return "incorrect";
    case Outcome::launch_failed:
      return "launch_failed";
    case Outcome::crashed:
      return "crashed";
    case Outcome::timeout:
      return "timeout";
  }
  return "?";
}

const char* l2_mode_name(L2Mode m) noexcept { return m == L2Mode::cold ? "cold" : "warm"; }

std::optional<RunStatus> parse_run_status(std::string_view s) {
  return parse_name(s, all_statuses, run_status_name);
}
std::optional<Outcome> parse_outcome(std::string_view s) {
  return parse_name(s, all_outcomes, outcome_name);
}
std::optional<L2Mode> parse_l2_mode(std::string_view s) {
  return parse_name(s, all_l2_modes, l2_mode_name);
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
