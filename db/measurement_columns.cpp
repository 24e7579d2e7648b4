#include "db/measurement_columns.hpp"

#include <array>
#include <cstdint>
#include <string_view>

#include "common/names.hpp"

namespace tunedreduce::db {

namespace {

// In the order bind_measurement binds and read_measurement reads them: the candidate, the
// request and what came of it, its Timing with the clocks, the error and when.
constexpr std::array<std::string_view, 20> columns = {
    "kernel_id", "family", "block",        "unroll",        "smem",      "finish",     "dtype",
    "op",        "n",      "l2_mode",      "outcome",       "median_us", "p10_us",     "p90_us",
    "repeats",   "gbps",   "sm_clock_mhz", "mem_clock_mhz", "error",     "measured_at"};

template <class Item>
std::string joined(Item item) {
  std::string s;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i) s += ", ";
    item(s, i);
  }
  return s;
}

}  // namespace

std::string measurement_columns() {
  return joined([](std::string& s, std::size_t i) { s += columns[i]; });
}

std::string measurement_parameters(int first) {
  return joined([&](std::string& s, std::size_t i) {
    s += "?" + std::to_string(first + static_cast<int>(i));
  });
}

std::string measurement_assignments(int first) {
  return joined([&](std::string& s, std::size_t i) {
    s += columns[i];
    s += " = ?" + std::to_string(first + static_cast<int>(i));
  });
}

void bind_measurement(Statement& st, int first, const Measurement& m) {
  int p = first;
  st.bind(p++, m.kernel_id);
  st.bind(p++, m.params.family);
  st.bind(p++, m.params.block);
  st.bind(p++, m.params.unroll);
  st.bind(p++, m.params.smem);
  st.bind(p++, m.params.finish);
  st.bind(p++, dtype_name(m.dtype));
  st.bind(p++, op_name(m.op));
  st.bind(p++, static_cast<std::int64_t>(m.n));
  st.bind(p++, l2_mode_name(m.l2_mode));
  st.bind(p++, outcome_name(m.outcome));
  st.bind(p++, m.median_us);
  st.bind(p++, m.p10_us);
  st.bind(p++, m.p90_us);
  st.bind(p++, m.repeats);
  st.bind(p++, m.gbps);
  st.bind(p++, m.sm_clock_mhz);
  st.bind(p++, m.mem_clock_mhz);
  st.bind(p++, m.error);
  st.bind(p++, m.measured_at);
}

void read_measurement(const Statement& st, int first, Measurement& m) {
  int c = first;
  m.kernel_id = st.column_text(c++);
  m.params.family = st.column_text(c++);
  m.params.block = static_cast<int>(st.column_int(c++));
  m.params.unroll = static_cast<int>(st.column_int(c++));
  m.params.smem = st.column_text(c++);
  m.params.finish = st.column_text(c++);
  // The CHECK constraints admit only valid names.
  m.dtype = parse_dtype(st.column_text(c++)).value_or(DType::i32);
  m.op = parse_op(st.column_text(c++)).value_or(Op::sum);
  m.n = static_cast<std::uint64_t>(st.column_int(c++));
  m.l2_mode = parse_l2_mode(st.column_text(c++)).value_or(L2Mode::cold);
  m.outcome = parse_outcome(st.column_text(c++)).value_or(Outcome::crashed);
  m.median_us = st.column_opt_double(c++);
  m.p10_us = st.column_opt_double(c++);
  m.p90_us = st.column_opt_double(c++);
  m.repeats = static_cast<int>(st.column_int(c++));
  m.gbps = st.column_opt_double(c++);
  m.sm_clock_mhz.reset();
  if (auto v = st.column_opt_int(c++)) m.sm_clock_mhz = static_cast<int>(*v);
  m.mem_clock_mhz.reset();
  if (auto v = st.column_opt_int(c++)) m.mem_clock_mhz = static_cast<int>(*v);
  m.error = st.column_text(c++);
  m.measured_at = st.column_text(c++);
}

}  // namespace tunedreduce::db
