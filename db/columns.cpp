#include "db/columns.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>

#include "common/names.hpp"
#include "db/row_rules.hpp"

namespace tunedreduce::db {

namespace {

// Each in the order its bind and read functions below bind and read the columns.
// clang-format off
// The candidate, the request and what came of it, its Timing with the clocks, the error and when.
// The elements per segment of a segmented measurement (schema version 12) last.
constexpr std::array<std::string_view, 21> measurement_names = {
    "kernel_id", "family", "block", "unroll", "smem", "finish",
    "dtype", "op", "n", "l2_mode", "outcome",
    "median_us", "p10_us", "p90_us", "repeats", "gbps", "sm_clock_mhz", "mem_clock_mhz",
    "error", "measured_at", "segment_size"};

constexpr std::array<std::string_view, 19> bench_run_names = {
    "uuid", "device_id", "tool_version", "manifest_hash", "host", "origin", "library_database",
    "started_at", "ended_at", "status", "l2", "repeats", "warmups", "seed", "driver_version",
    "runtime_version", "attainable_gbps", "sm_clock_mhz", "mem_clock_mhz"};

// A segmented one's (schema version 13) are the same with segment_size and layout after them.
constexpr std::array<std::string_view, 18> segmented_bench_result_names = {
    "bench_run_id", "dtype", "op", "n", "method", "verified", "error",
    "median_us", "p10_us", "p90_us", "repeats",
    "temp_bytes", "kernel_id", "lookup_level", "winner_l2", "measured_at",
    "segment_size", "layout"};
constexpr std::size_t bench_result_count = 16;
// clang-format on

template <class Item>
std::string joined(std::span<const std::string_view> names, Item item) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) s += ", ";
    item(s, i);
  }
  return s;
}

std::optional<int> opt_int(const Statement& st, int col) {
  if (auto v = st.column_opt_int(col)) return static_cast<int>(*v);
  return std::nullopt;
}

// Readers skip rows whose names this binary lacks (measurement_names_known and the like) before
// they read them: the fallbacks are never taken for a row that is read.
DType column_dtype(const Statement& st, int col) {
  return parse_dtype(st.column_text(col)).value_or(DType::i32);
}
Op column_op(const Statement& st, int col) {
  return parse_op(st.column_text(col)).value_or(Op::sum);
}

}  // namespace

bool names_known(const Statement& st, int dtype_col, int op_col, int l2_col) {
  const auto t = parse_dtype(st.column_text(dtype_col));
  const auto o = parse_op(st.column_text(op_col));
  return t && o && op_applies(*t, *o) && parse_l2_mode(st.column_text(l2_col));
}

bool measurement_names_known(const Statement& st, int first) {
  return names_known(st, first + 6, first + 7, first + 9) &&
         parse_outcome(st.column_text(first + 10));
}

bool bench_result_names_known(const Statement& st, int first) {
  const auto t = parse_dtype(st.column_text(first + 1));
  const auto o = parse_op(st.column_text(first + 2));
  const int layout = first + static_cast<int>(bench_result_count) + 1;
  return t && o && op_applies(*t, *o) && parse_bench_method(st.column_text(first + 4)) &&
         (st.column_count() <= layout || !bad_layout_name(st.column_text(layout)));
}

std::string ColumnList::names() const {
  return joined(names_, [&](std::string& s, std::size_t i) { s += names_[i]; });
}

std::string ColumnList::names_reading(std::span<const std::string_view> absent) const {
  return joined(names_, [&](std::string& s, std::size_t i) {
    s += std::find(absent.begin(), absent.end(), names_[i]) == absent.end() ? names_[i] : "NULL";
  });
}

std::string ColumnList::parameters(int first) const {
  return joined(names_, [&](std::string& s, std::size_t i) {
    s += '?';
    s += std::to_string(first + static_cast<int>(i));
  });
}

std::string ColumnList::assignments(int first) const {
  return joined(names_, [&](std::string& s, std::size_t i) {
    s += names_[i];
    s += " = ?";
    s += std::to_string(first + static_cast<int>(i));
  });
}

constinit const ColumnList measurement_columns(measurement_names);
constinit const ColumnList bench_run_columns(bench_run_names);
constinit const ColumnList bench_result_columns(
    std::span<const std::string_view>(segmented_bench_result_names).first(bench_result_count));
constinit const ColumnList segmented_bench_result_columns(segmented_bench_result_names);

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
  if (m.segment_size) st.bind(p++, static_cast<std::int64_t>(*m.segment_size));
  else st.bind(p++, nullptr);
}

void read_measurement(const Statement& st, int first, Measurement& m) {
  int c = first;
  // Each text up to its limit (db/row_rules.hpp): a reader's memory stays bounded by the rows.
  m.kernel_id = st.column_text_prefix(c++, max_name_bytes);
  m.params.family = st.column_text_prefix(c++, max_name_bytes);
  m.params.block = static_cast<int>(st.column_int(c++));
  m.params.unroll = static_cast<int>(st.column_int(c++));
  m.params.smem = st.column_text_prefix(c++, max_name_bytes);
  m.params.finish = st.column_text_prefix(c++, max_name_bytes);
  m.dtype = column_dtype(st, c++);
  m.op = column_op(st, c++);
  m.n = static_cast<std::uint64_t>(st.column_int(c++));
  m.l2_mode = parse_l2_mode(st.column_text(c++)).value_or(L2Mode::cold);
  m.outcome = parse_outcome(st.column_text(c++)).value_or(Outcome::crashed);
  m.median_us = st.column_opt_double(c++);
  m.p10_us = st.column_opt_double(c++);
  m.p90_us = st.column_opt_double(c++);
  m.repeats = static_cast<int>(st.column_int(c++));
  m.gbps = st.column_opt_double(c++);
  m.sm_clock_mhz = opt_int(st, c++);
  m.mem_clock_mhz = opt_int(st, c++);
  m.error = st.column_text_prefix(c++, max_error_bytes);
  m.measured_at = st.column_text_prefix(c++, max_name_bytes);
  m.segment_size.reset();
  if (auto size = st.column_opt_int(c++)) m.segment_size = static_cast<std::uint64_t>(*size);
}

void bind_bench_run(Statement& st, int first, const BenchRunRecord& r) {
  int p = first;
  st.bind(p++, r.uuid);
  st.bind(p++, r.device_id);
  st.bind(p++, r.info.tool_version);
  st.bind(p++, r.info.manifest_hash);
  st.bind(p++, r.info.host);
  st.bind(p++, r.origin);
  st.bind(p++, r.info.library_database);
  st.bind(p++, r.started_at);
  st.bind(p++, r.ended_at);
  st.bind(p++, run_status_name(r.status));
  st.bind(p++, bench_l2_name(r.info.l2));
  st.bind(p++, r.info.repeats);
  st.bind(p++, r.info.warmups);
  st.bind(p++, bench_seed_text(r.info.seed));
  st.bind(p++, r.driver_version);
  st.bind(p++, r.runtime_version);
  st.bind(p++, r.info.attainable_gbps);
  st.bind(p++, r.info.sm_clock_mhz);
  st.bind(p++, r.info.mem_clock_mhz);
}

void read_bench_run(const Statement& st, int first, BenchRunRecord& r) {
  int c = first;
  r.uuid = st.column_text_prefix(c++, max_name_bytes);
  r.device_id = st.column_int(c++);
  r.info.tool_version = st.column_text_prefix(c++, max_name_bytes);
  r.info.manifest_hash = st.column_text_prefix(c++, max_name_bytes);
  r.info.host = st.column_text_prefix(c++, max_name_bytes);
  r.origin = st.column_text_prefix(c++, max_path_bytes);
  r.info.library_database = st.column_text_prefix(c++, max_path_bytes);
  r.started_at = st.column_text(c++);
  r.ended_at = st.column_opt_text(c++);
  r.status = parse_run_status(st.column_text(c++)).value_or(RunStatus::failed);
  r.info.l2 = parse_bench_l2(st.column_text(c++)).value_or(BenchL2::cold);
  r.info.repeats = static_cast<int>(st.column_int(c++));
  r.info.warmups = static_cast<int>(st.column_int(c++));
  r.info.seed = std::strtoull(st.column_text(c++).c_str(), nullptr, 16);
  r.driver_version = static_cast<int>(st.column_int(c++));
  r.runtime_version = static_cast<int>(st.column_int(c++));
  r.info.attainable_gbps = st.column_opt_double(c++);
  r.info.sm_clock_mhz = opt_int(st, c++);
  r.info.mem_clock_mhz = opt_int(st, c++);
}

void bind_bench_result(Statement& st, int first, const BenchResultRecord& r) {
  int p = first;
  st.bind(p++, r.bench_run_id);
  st.bind(p++, dtype_name(r.dtype));
  st.bind(p++, op_name(r.op));
  st.bind(p++, static_cast<std::int64_t>(r.n));
  st.bind(p++, bench_method_name(r.method));
  st.bind(p++, r.verified);
  st.bind(p++, r.error);
  st.bind(p++, r.median_us);
  st.bind(p++, r.p10_us);
  st.bind(p++, r.p90_us);
  st.bind(p++, r.repeats);
  st.bind(p++, r.temp_bytes);
  st.bind(p++, r.kernel_id);
  st.bind(p++, r.lookup_level);
  if (r.winner_l2) st.bind(p++, l2_mode_name(*r.winner_l2));
  else st.bind(p++, nullptr);
  st.bind(p++, r.measured_at);
  if (r.segment_size) {
    st.bind(p++, static_cast<std::int64_t>(*r.segment_size));
    st.bind(p++, r.layout);
  }
}

void read_bench_result(const Statement& st, int first, BenchResultRecord& r) {
  int c = first;
  r.bench_run_id = st.column_int(c++);
  r.dtype = column_dtype(st, c++);
  r.op = column_op(st, c++);
  r.n = static_cast<std::uint64_t>(st.column_int(c++));
  r.method = parse_bench_method(st.column_text(c++)).value_or(BenchMethod::cub);
  r.verified = st.column_int(c++) != 0;
  r.error = st.column_text_prefix(c++, max_error_bytes);
  r.median_us = st.column_opt_double(c++);
  r.p10_us = st.column_opt_double(c++);
  r.p90_us = st.column_opt_double(c++);
  r.repeats = static_cast<int>(st.column_int(c++));
  r.temp_bytes = st.column_opt_int(c++);
  r.kernel_id = st.column_opt_text(c++);
  r.lookup_level = st.column_opt_text(c++);
  r.winner_l2.reset();
  if (auto w = st.column_opt_text(c++)) r.winner_l2 = parse_l2_mode(*w);
  r.measured_at = st.column_text(c++);
  r.segment_size.reset();
  r.layout.clear();
  if (st.column_count() > c) {
    if (auto size = st.column_opt_int(c++)) r.segment_size = static_cast<std::uint64_t>(*size);
    r.layout = st.column_text_prefix(c++, max_name_bytes);
  }
}

std::string insert_bench_result_sql(bool segmented) {
  const ColumnList& cols = segmented ? segmented_bench_result_columns : bench_result_columns;
  return std::string("INSERT INTO ") + (segmented ? "segmented_bench_results" : "bench_results") +
         " (" + cols.names() + ") VALUES (" + cols.parameters(1) + ")";
}

}  // namespace tunedreduce::db
