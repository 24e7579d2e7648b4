#include "db/row_rules.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <set>

#include <sqlite3.h>
#include <fmt/format.h>

#include "common/names.hpp"
#include "common/printable.hpp"
#include "db/bench.hpp"
#include "db/connection.hpp"
#include "db/records.hpp"
#include "db/statement.hpp"

namespace tunedreduce::db {

namespace {

constexpr std::size_t shown_value_bytes = 60;

/// One value of a row as the validator sees it: its storage class and, for text, its first
/// bytes only (never a whole 10 MB string) and its length.
struct Cell {
  int type = SQLITE_NULL;
  std::int64_t i = 0;
  double d = 0;
  std::string text;  // at most the column's limit + 1 bytes
  std::size_t bytes = 0;
  std::string shown() const {
    switch (type) {
      case SQLITE_NULL:
        return "NULL";
      case SQLITE_INTEGER:
        return std::to_string(i);
      case SQLITE_FLOAT:
        return fmt::format("{}", d);
      case SQLITE_BLOB:
        return fmt::format("a blob of {} bytes", bytes);
      default: {
        std::string s =
            fmt::format("'{}'", printable(text.substr(0, shown_value_bytes), shown_value_bytes));
        if (bytes > std::min(text.size(), shown_value_bytes))
          s += fmt::format("... ({} bytes)", bytes);
        return s;
      }
    }
  }
};

enum class Kind { integer, real, text };
using Check = std::optional<std::string> (*)(const Cell&);

struct Col {
  std::string_view name;
  Kind kind;
  bool nullable = false;
  Check check = nullptr;
  std::size_t max_bytes = max_name_bytes;  // text only
};

/// The columns of one row, by name, as the table has them (a column an older schema lacks is
/// absent).
class Row {
 public:
  const Cell* get(std::string_view name) const {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &cells_[it->second];
  }
  std::vector<Cell> cells_;
  std::map<std::string, std::size_t> index_;
};

using Emit = std::function<void(std::string column, const std::string& value, std::string why)>;

struct TableSpec {
  std::string_view name;
  std::string_view key;  // SQL naming the row: "id", or the key of a table without ids
  bool has_id;
  std::vector<Col> cols;
  void (*row_rule)(const Row&, const Emit&) = nullptr;
};

// --- field checks --------------------------------------------------------------------------------

/// RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    std::uint32_t cp = 0, min = 0;
    if ((c & 0xe0) == 0xc0) n = 1, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) n = 2, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) n = 3, cp = c & 0x07, min = 0x10000;
    else return false;
    if (i + n >= s.size()) return false;  // cut short
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

std::optional<std::string> at_least_0(const Cell& c) {
  if (c.i < 0) return "must be at least 0";
  return std::nullopt;
}
std::optional<std::string> at_least_1(const Cell& c) {
  if (c.i < 1) return "must be at least 1";
  return std::nullopt;
}
std::optional<std::string> int32_at_least_0(const Cell& c) {
  if (c.i < 0) return "must be at least 0";
  if (c.i > std::numeric_limits<int>::max()) return "does not fit a 32-bit integer";
  return std::nullopt;
}
std::optional<std::string> int32(const Cell& c) {
  if (c.i < std::numeric_limits<int>::min() || c.i > std::numeric_limits<int>::max())
    return "does not fit a 32-bit integer";
  return std::nullopt;
}
std::optional<std::string> zero_or_one(const Cell& c) {
  if (c.i != 0 && c.i != 1) return "must be 0 or 1";
  return std::nullopt;
}
// Zero is refused for ok measurements and verified results only (a row rule below).
std::optional<std::string> time_check(const Cell& c) { return bad_time(c.d, false); }

/// The times of an ok measurement or a verified result: more than 0.
void positive_times(const Row& r, const Emit& emit) {
  for (const char* t : {"median_us", "p10_us", "p90_us"}) {
    const Cell* c = r.get(t);
    if (!c || (c->type != SQLITE_FLOAT && c->type != SQLITE_INTEGER)) continue;
    const double v = c->type == SQLITE_FLOAT ? c->d : static_cast<double>(c->i);
    if (v == 0) emit(t, c->shown(), *bad_time(0.0));
  }
}
std::optional<std::string> rate_check(const Cell& c) { return bad_rate(c.d); }
std::optional<std::string> not_empty(const Cell& c) {
  if (c.bytes == 0) return "must not be empty";
  return std::nullopt;
}
std::optional<std::string> dtype_check(const Cell& c) { return bad_dtype_name(c.text); }
std::optional<std::string> op_check(const Cell& c) { return bad_op_name(c.text); }

template <class T>
std::optional<std::string> named(const Cell& c, std::optional<T> (*parse)(std::string_view),
                                 const char* (*name)(T) noexcept, const char* choices) {
  const auto v = parse(c.text);
  if (!v || c.text != name(*v)) return std::string("is not one of ") + choices;
  return std::nullopt;
}
std::optional<std::string> one_of(const Cell& c, std::initializer_list<std::string_view> names,
                                  const char* choices) {
  for (std::string_view n : names)
    if (c.text == n) return std::nullopt;
  return std::string("is not one of ") + choices;
}

std::optional<std::string> run_status_check(const Cell& c) {
  return named(c, parse_run_status, run_status_name, "running, finished, interrupted, failed");
}
std::optional<std::string> l2_check(const Cell& c) {
  return named(c, parse_l2_mode, l2_mode_name, "cold, warm");
}
std::optional<std::string> outcome_check(const Cell& c) {
  return named(c, parse_outcome, outcome_name, "ok, incorrect, launch_failed, crashed, timeout");
}
std::optional<std::string> bench_l2_check(const Cell& c) {
  return named(c, parse_bench_l2, bench_l2_name, "cold, dirty, warm");
}
std::optional<std::string> method_check(const Cell& c) {
  return named(c, parse_bench_method, bench_method_name, "cached, two_phase, cub, thrust, floor");
}
std::optional<std::string> smem_check(const Cell& c) {
  return one_of(c, {"none", "static", "dynamic"}, "none, static, dynamic");
}
std::optional<std::string> finish_check(const Cell& c) {
  return one_of(c, {"two_pass", "single_pass", "packed"}, "two_pass, single_pass, packed");
}
std::optional<std::string> source_kind_check(const Cell& c) {
  return one_of(c, {"merge", "import"}, "merge, import");
}
std::optional<std::string> lookup_check(const Cell& c) {
  return one_of(c, {"exact", "nearest", "same_model", "default"},
                "exact, nearest, same_model, default");
}
std::optional<std::string> seed_check(const Cell& c) {
  if (c.text.empty() || c.text.size() > 16 ||
      c.text.find_first_not_of("0123456789abcdef") != std::string::npos)
    return "expected up to 16 lowercase hex digits";
  return std::nullopt;
}

std::optional<std::string> layout_check(const Cell& c) { return bad_layout_name(c.text); }

// --- segmented kernels ---------------------------------------------------------------------------

constexpr std::string_view seg_prefix = "seg.";
// kernels/segmented/segmented.hpp's SegFamily and SegLayout names (tests/db compares them with
// the segmented registry).
constexpr std::string_view seg_families[] = {"thread", "group", "block",
                                             "split",  "tile",  "balanced"};
constexpr std::string_view seg_layouts[] = {"fixed", "offsets32", "offsets64"};
constexpr const char* seg_id_form = "seg.FAMILY.bBLOCK[.gGROUP].vVEC.LAYOUT.DTYPE.OP";

/// "b256" with \p prefix 'b': a positive decimal without a leading zero that fits an int.
bool prefixed_int(std::string_view s, char prefix) {
  if (s.size() < 2 || s[0] != prefix || s[1] == '0' || s.size() > 11) return false;
  std::int64_t v = 0;
  for (char ch : s.substr(1)) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  return v <= std::numeric_limits<int>::max();
}

/// A broken segmentation rule: the columns it is between ("kernel_id/segment_size") and why.
struct SegBreak {
  const char* columns;
  std::string why;
};

/// The segmentation rules of a measurement (bad_segmentation); \p dtype and \p op are absent
/// when the row's are no names of this binary (a finding of their own).
std::optional<SegBreak> segmentation_break(std::string_view kernel_id, std::optional<DType> dtype,
                                           std::optional<Op> op, std::uint64_t n,
                                           std::optional<std::uint64_t> segment_size) {
  if (!is_segmented_id(kernel_id)) {
    if (segment_size)
      return SegBreak{"kernel_id/segment_size",
                      "a whole-array kernel's measurement has no segment_size"};
    return std::nullopt;
  }
  const auto id = parse_segmented_id(kernel_id);
  if (!id)
    return SegBreak{"kernel_id",
                    fmt::format("is not a segmented kernel id of this binary ({})", seg_id_form)};
  if (dtype && op && (id->dtype != *dtype || id->op != *op))
    return SegBreak{"kernel_id/dtype/op",
                    fmt::format("the segmented kernel is of {} {}, not of the row's {} {}",
                                dtype_name(id->dtype), op_name(id->op), dtype_name(*dtype),
                                op_name(*op))};
  if (!segment_size)
    return SegBreak{"kernel_id/segment_size",
                    "a segmented kernel's measurement needs a segment_size"};
  if (*segment_size >= 1 && n % *segment_size != 0)
    return SegBreak{"n/segment_size", "segment_size does not divide n"};
  return std::nullopt;
}

/// The kernel of a segmented winner (or its runner-up) of \p dtype, \p op and \p layout,
/// each absent when the row's is no name of this binary.
std::optional<SegBreak> segmented_kernel_break(std::string_view kernel_id,
                                               std::optional<DType> dtype, std::optional<Op> op,
                                               std::optional<std::string_view> layout) {
  const auto id = parse_segmented_id(kernel_id);
  if (!id)
    return SegBreak{"kernel_id",
                    fmt::format("is not a segmented kernel id of this binary ({})", seg_id_form)};
  if ((dtype && id->dtype != *dtype) || (op && id->op != *op) || (layout && id->layout != *layout))
    return SegBreak{"kernel_id/dtype/op/layout",
                    fmt::format("the segmented kernel is of {} {} {}, not of the row's {} {} {}",
                                dtype_name(id->dtype), op_name(id->op), id->layout,
                                dtype ? dtype_name(*dtype) : "?", op ? op_name(*op) : "?",
                                layout ? std::string(*layout) : std::string("?"))};
  return std::nullopt;
}

// --- rules between columns -----------------------------------------------------------------------

/// The operator must be defined for the element type (op_applies), where both are names.
void op_pair(const Row& r, const Emit& emit) {
  const Cell *d = r.get("dtype"), *o = r.get("op");
  if (!d || !o || d->type != SQLITE_TEXT || o->type != SQLITE_TEXT) return;
  const auto t = parse_dtype(d->text);
  const auto op = parse_op(o->text);
  if (!t || !op) return;
  if (std::string why = op_dtype_mismatch(*t, *op); !why.empty())
    emit("dtype/op", d->shown() + "/" + o->shown(), why);
}

/// The row's values of \p columns ("kernel_id/segment_size"), joined by '/' as the columns are;
/// NULL for a column the row lacks (an older schema's).
std::string shown_values(const Row& r, std::string_view columns) {
  std::string out;
  for (std::size_t start = 0;;) {
    const std::size_t end = columns.find('/', start);
    const Cell* c = r.get(columns.substr(start, end == std::string_view::npos ? end : end - start));
    if (start) out += '/';
    out += c ? c->shown() : "NULL";
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

/// The row's element type and operator, where both are names of this binary.
std::optional<DType> row_dtype(const Row& r) {
  const Cell* c = r.get("dtype");
  return c && c->type == SQLITE_TEXT && !bad_dtype_name(c->text) ? parse_dtype(c->text)
                                                                 : std::nullopt;
}
std::optional<Op> row_op(const Row& r) {
  const Cell* c = r.get("op");
  return c && c->type == SQLITE_TEXT && !bad_op_name(c->text) ? parse_op(c->text) : std::nullopt;
}

/// A segmented kernel's measurement has a segment_size that divides n, and its id agrees with
/// the row's dtype and op; a whole-array kernel's has none (segmentation_break). A file older
/// than version 12 has no segment_size: every measurement reads as a whole-array one.
void segmentation_rule(const Row& r, const Emit& emit) {
  const Cell *id = r.get("kernel_id"), *n = r.get("n"), *size = r.get("segment_size");
  if (!id || id->type != SQLITE_TEXT || id->bytes > max_name_bytes) return;
  if (size && size->type != SQLITE_NULL && size->type != SQLITE_INTEGER) return;  // named
  if (n && n->type != SQLITE_INTEGER) return;
  std::optional<std::uint64_t> segment_size;
  if (size && size->type == SQLITE_INTEGER) {
    if (size->i < 1) return;  // named by the column's rule
    segment_size = static_cast<std::uint64_t>(size->i);
  }
  const std::uint64_t total = n && n->i > 0 ? static_cast<std::uint64_t>(n->i) : 0;
  if (auto b = segmentation_break(id->text, row_dtype(r), row_op(r), total, segment_size))
    emit(b->columns, shown_values(r, b->columns), b->why);
}

void measurement_rule(const Row& r, const Emit& emit) {
  op_pair(r, emit);
  const Cell *out = r.get("outcome"), *med = r.get("median_us");
  if (out && med && out->type == SQLITE_TEXT && out->text == "ok" && med->type == SQLITE_NULL)
    emit("outcome/median_us", "'ok'/NULL", "an ok measurement needs a median");
  if (out && out->type == SQLITE_TEXT && out->text == "ok") positive_times(r, emit);
  segmentation_rule(r, emit);
}

void winner_rule(const Row& r, const Emit& emit) {
  op_pair(r, emit);
  const Cell *lo = r.get("n_lo"), *hi = r.get("n_hi");
  if (lo && hi && lo->type == SQLITE_INTEGER && hi->type == SQLITE_INTEGER && lo->i > hi->i)
    emit("n_lo/n_hi", lo->shown() + "/" + hi->shown(), "n_lo is larger than n_hi");
  // A segmented kernel wins in segmented_winners, by segment size and count, never by n.
  for (const char* column : {"kernel_id", "runner_up_kernel_id"}) {
    const Cell* id = r.get(column);
    if (id && id->type == SQLITE_TEXT && is_segmented_id(id->text))
      emit(column, id->shown(),
           "a segmented kernel is no whole-array winner (segmented_winners holds those)");
  }
}

/// Rectangles (1 <= lo <= hi on both axes; the lower bounds are the columns' rules), and kernels
/// of the row's dtype, op and layout.
void segmented_winner_rule(const Row& r, const Emit& emit) {
  op_pair(r, emit);
  for (const auto& [lo_name, hi_name] :
       {std::pair{"size_lo", "size_hi"}, std::pair{"count_lo", "count_hi"}}) {
    const Cell *lo = r.get(lo_name), *hi = r.get(hi_name);
    if (lo && hi && lo->type == SQLITE_INTEGER && hi->type == SQLITE_INTEGER && lo->i > hi->i)
      emit(std::string(lo_name) + "/" + hi_name, lo->shown() + "/" + hi->shown(),
           std::string(lo_name) + " is larger than " + hi_name);
  }
  const Cell* layout_cell = r.get("layout");
  std::optional<std::string_view> layout;
  if (layout_cell && layout_cell->type == SQLITE_TEXT && !bad_layout_name(layout_cell->text))
    layout = layout_cell->text;
  for (const char* column : {"kernel_id", "runner_up_kernel_id"}) {
    const Cell* id = r.get(column);
    if (!id || id->type != SQLITE_TEXT || id->bytes > max_name_bytes) continue;
    if (auto b = segmented_kernel_break(id->text, row_dtype(r), row_op(r), layout)) {
      // The runner-up's break is named by its own column.
      std::string columns = b->columns;
      if (std::string_view(column) != "kernel_id")
        columns.replace(0, std::string_view("kernel_id").size(), column);
      emit(columns, shown_values(r, columns), b->why);
    }
  }
}

void bench_result_rule(const Row& r, const Emit& emit) {
  op_pair(r, emit);
  const Cell *v = r.get("verified"), *med = r.get("median_us"), *err = r.get("error");
  if (v && v->type == SQLITE_INTEGER && v->i == 1) {
    positive_times(r, emit);
    if (med && med->type == SQLITE_NULL)
      emit("verified/median_us", "1/NULL", "a verified result needs a median");
    if (err && err->bytes != 0)
      emit("verified/error", "1/" + err->shown(), "a verified result has no error");
  }
}

void segmented_bench_rule(const Row& r, const Emit& emit) {
  bench_result_rule(r, emit);
  const Cell *size = r.get("segment_size"), *n = r.get("n"), *method = r.get("method");
  if (size && n && size->type == SQLITE_INTEGER && n->type == SQLITE_INTEGER && size->i > n->i)
    emit("segment_size/n", std::to_string(size->i) + "/" + std::to_string(n->i),
         "a segment larger than the total");
  if (method && method->type == SQLITE_TEXT && method->text == "thrust")
    emit("method", "thrust", "Thrust has no segmented reduction");
}

// --- the tables ----------------------------------------------------------------------------------

/// A bench result's columns (bench_results); a segmented one's (segmented_bench_results, schema
/// version 13) are the same with segment_size and layout after them.
std::vector<Col> bench_result_cols(bool segmented) {
  using K = Kind;
  std::vector<Col> c = {{"bench_run_id", K::integer},
                        {"dtype", K::text, false, dtype_check},
                        {"op", K::text, false, op_check},
                        {"n", K::integer, false, at_least_1},
                        {"method", K::text, false, method_check},
                        {"verified", K::integer, false, zero_or_one},
                        {"error", K::text, false, nullptr, max_error_bytes},
                        {"median_us", K::real, true, time_check},
                        {"p10_us", K::real, true, time_check},
                        {"p90_us", K::real, true, time_check},
                        {"repeats", K::integer, false, int32_at_least_0},
                        {"temp_bytes", K::integer, true, at_least_0},
                        {"kernel_id", K::text, true, not_empty},
                        {"lookup_level", K::text, true, lookup_check},
                        {"winner_l2", K::text, true, l2_check},
                        {"measured_at", K::text}};
  if (segmented) {
    c.push_back({"segment_size", K::integer, false, at_least_1});
    c.push_back({"layout", K::text, false, layout_check});
  }
  return c;
}

const std::vector<TableSpec>& specs() {
  using K = Kind;
  static const std::vector<TableSpec> s = {
      {"devices",
       "id",
       true,
       {{"fingerprint", K::text, false, not_empty},
        {"name", K::text},
        {"cc_major", K::integer, false, int32_at_least_0},
        {"cc_minor", K::integer, false, int32_at_least_0},
        {"sm_count", K::integer, false, int32_at_least_0},
        {"bus_width_bits", K::integer, false, int32_at_least_0},
        {"l2_bytes", K::integer, false, at_least_0},
        {"ecc", K::integer, false, zero_or_one},
        {"total_mem_bytes", K::integer, false, at_least_0},
        {"mem_clock_khz", K::integer, false, int32_at_least_0},
        {"theoretical_gbps", K::real, false, rate_check},
        {"driver_version", K::integer, false, int32_at_least_0},
        {"runtime_version", K::integer, false, int32_at_least_0},
        {"first_seen", K::text},
        {"last_seen", K::text}}},
      {"gpus", "id", true, {{"uuid", K::text, false, not_empty}, {"device_id", K::integer}}},
      {"runs",
       "id",
       true,
       {{"uuid", K::text, false, not_empty},
        {"tool_version", K::text},
        {"manifest_hash", K::text},
        {"config_hash", K::text},
        {"host", K::text},
        {"origin", K::text, false, nullptr, max_path_bytes},
        {"started_at", K::text},
        {"ended_at", K::text, true},
        {"status", K::text, false, run_status_check},
        {"l2_mode", K::text, false, l2_check},
        {"driver_version", K::integer, true, int32_at_least_0},
        {"runtime_version", K::integer, true, int32_at_least_0},
        {"config_text", K::text, true, nullptr, max_config_bytes}}},
      {"run_devices",
       "'run_id ' || run_id || ', device_id ' || device_id",
       false,
       {{"run_id", K::integer},
        {"device_id", K::integer},
        {"attainable_gbps", K::real, false, rate_check}}},
      {"sources",
       "id",
       true,
       {{"path", K::text, false, not_empty, max_path_bytes},
        {"kind", K::text, false, source_kind_check}}},
      {"run_sources",
       "'run_id ' || run_id || ', source_id ' || source_id",
       false,
       {{"run_id", K::integer}, {"source_id", K::integer}}},
      {"measurements",
       "id",
       true,
       {{"run_id", K::integer},
        {"seq", K::integer, false, at_least_1},
        {"device_id", K::integer},
        {"gpu_id", K::integer, true},
        {"kernel_id", K::text, false, not_empty},
        {"family", K::text, false, not_empty},
        {"block", K::integer, false, int32_at_least_0},
        {"unroll", K::integer, false, int32_at_least_0},
        {"smem", K::text, false, smem_check},
        {"finish", K::text, false, finish_check},
        {"dtype", K::text, false, dtype_check},
        {"op", K::text, false, op_check},
        {"n", K::integer, false, at_least_0},
        {"l2_mode", K::text, false, l2_check},
        {"outcome", K::text, false, outcome_check},
        {"median_us", K::real, true, time_check},
        {"p10_us", K::real, true, time_check},
        {"p90_us", K::real, true, time_check},
        {"repeats", K::integer, false, int32_at_least_0},
        {"gbps", K::real, true, rate_check},
        {"sm_clock_mhz", K::integer, true, int32},
        {"mem_clock_mhz", K::integer, true, int32},
        {"error", K::text, false, nullptr, max_error_bytes},
        {"measured_at", K::text},
        {"segment_size", K::integer, true, at_least_1}},
       measurement_rule},
      {"winners",
       "id",
       true,
       {{"device_id", K::integer},
        {"dtype", K::text, false, dtype_check},
        {"op", K::text, false, op_check},
        {"n_lo", K::integer, false, at_least_0},
        {"n_hi", K::integer, false, at_least_0},
        {"kernel_id", K::text, false, not_empty},
        {"measurement_id", K::integer},
        {"runner_up_kernel_id", K::text, true, not_empty},
        {"runner_up_measurement_id", K::integer, true},
        {"driver_version", K::integer, false, int32_at_least_0},
        {"runtime_version", K::integer, false, int32_at_least_0},
        {"run_id", K::integer, true},
        {"source_id", K::integer, true},
        {"l2_mode", K::text, false, l2_check}},
       winner_rule},
      {"segmented_winners",
       "id",
       true,
       {{"device_id", K::integer},
        {"dtype", K::text, false, dtype_check},
        {"op", K::text, false, op_check},
        {"l2_mode", K::text, false, l2_check},
        {"layout", K::text, false, layout_check},
        {"size_lo", K::integer, false, at_least_1},
        {"size_hi", K::integer, false, at_least_1},
        {"count_lo", K::integer, false, at_least_1},
        {"count_hi", K::integer, false, at_least_1},
        {"kernel_id", K::text, false, not_empty},
        {"measurement_id", K::integer},
        {"runner_up_kernel_id", K::text, true, not_empty},
        {"runner_up_measurement_id", K::integer, true},
        {"driver_version", K::integer, false, int32_at_least_0},
        {"runtime_version", K::integer, false, int32_at_least_0},
        {"run_id", K::integer, true},
        {"source_id", K::integer, true}},
       segmented_winner_rule},
      {"bench_runs",
       "id",
       true,
       {{"uuid", K::text, false, not_empty},
        {"device_id", K::integer},
        {"tool_version", K::text},
        {"manifest_hash", K::text},
        {"host", K::text},
        {"origin", K::text, false, nullptr, max_path_bytes},
        {"library_database", K::text, false, nullptr, max_path_bytes},
        {"started_at", K::text},
        {"ended_at", K::text, true},
        {"status", K::text, false, run_status_check},
        {"l2", K::text, false, bench_l2_check},
        {"repeats", K::integer, false,
         [](const Cell& c) {
           return c.i < 1 ? std::optional<std::string>("must be at least 1") : int32(c);
         }},
        {"warmups", K::integer, false, int32_at_least_0},
        {"seed", K::text, false, seed_check},
        {"driver_version", K::integer, false, int32_at_least_0},
        {"runtime_version", K::integer, false, int32_at_least_0},
        {"attainable_gbps", K::real, true, rate_check},
        {"sm_clock_mhz", K::integer, true, int32},
        {"mem_clock_mhz", K::integer, true, int32}}},
      {"bench_results", "id", true, bench_result_cols(false), bench_result_rule},
      {"segmented_bench_results", "id", true, bench_result_cols(true), segmented_bench_rule},
  };
  return s;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::integer:
      return "an integer";
    case Kind::real:
      return "a number";
    case Kind::text:
      return "text";
  }
  return "?";
}

std::set<std::string> columns_of(Connection& conn, std::string_view table) {
  std::set<std::string> cols;
  Statement st = conn.prepare("SELECT name FROM pragma_table_info(?1)");
  st.bind(1, table);
  while (st.step()) cols.insert(st.column_text(0));
  return cols;
}

/// Runs \p spec over its table; calls \p found for each broken rule until it returns false.
void run_table(Connection& conn, const TableSpec& spec,
               const std::function<bool(RowFinding)>& found) {
  const std::set<std::string> have = columns_of(conn, spec.name);
  if (have.empty()) return;  // a table this file's version does not have
  std::vector<const Col*> cols;
  std::string sql = "SELECT " + std::string(spec.key);
  for (const Col& c : spec.cols)
    if (have.count(std::string(c.name))) {
      cols.push_back(&c);
      sql += ", \"" + std::string(c.name) + "\"";
    }
  sql += " FROM " + std::string(spec.name) + (spec.has_id ? " ORDER BY id" : "");
  Statement st = conn.prepare(sql);
  bool go_on = true;
  while (go_on && st.step()) {
    Row row;
    row.cells_.resize(cols.size());
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const int col = static_cast<int>(k) + 1;
      Cell& c = row.cells_[k];
      c.type = st.column_type(col);
      if (c.type == SQLITE_INTEGER) c.i = st.column_int(col);
      else if (c.type == SQLITE_FLOAT) c.d = st.column_double(col);
      else if (c.type == SQLITE_TEXT || c.type == SQLITE_BLOB) {
        c.bytes = st.column_bytes(col);
        if (c.type == SQLITE_TEXT) c.text = st.column_text_prefix(col, cols[k]->max_bytes + 1);
      }
      row.index_[std::string(cols[k]->name)] = k;
    }
    const std::string key = spec.has_id ? "id " + st.column_text(0) : st.column_text(0);
    const std::int64_t id = spec.has_id ? st.column_int(0) : 0;
    auto emit = [&](std::string column, const std::string& value, std::string why) {
      if (!go_on) return;
      go_on = found({std::string(spec.name), key, id, std::move(column), value, std::move(why)});
    };
    for (std::size_t k = 0; k < cols.size() && go_on; ++k) {
      const Col& col = *cols[k];
      const Cell& c = row.cells_[k];
      if (c.type == SQLITE_NULL) {
        if (!col.nullable) emit(std::string(col.name), "NULL", "must not be NULL");
        continue;
      }
      const bool type_ok = col.kind == Kind::integer ? c.type == SQLITE_INTEGER
                           : col.kind == Kind::real
                               ? (c.type == SQLITE_FLOAT || c.type == SQLITE_INTEGER)
                               : c.type == SQLITE_TEXT;
      if (!type_ok) {
        emit(std::string(col.name), c.shown(), std::string("must be ") + kind_name(col.kind));
        continue;
      }
      Cell v = c;
      if (col.kind == Kind::real && c.type == SQLITE_INTEGER) v.d = static_cast<double>(c.i);
      if (col.kind == Kind::text && c.bytes > col.max_bytes) {
        emit(std::string(col.name), c.shown(),
             fmt::format("is longer than {} bytes ({} bytes)", col.max_bytes, c.bytes));
        continue;
      }
      if (col.kind == Kind::text && !valid_utf8(c.text)) {
        emit(std::string(col.name), c.shown(), "is not valid UTF-8");
        continue;
      }
      if (col.check)
        if (auto why = col.check(v)) emit(std::string(col.name), c.shown(), *why);
    }
    if (go_on && spec.row_rule) spec.row_rule(row, emit);
  }
}

const TableSpec* find_spec(std::string_view table) {
  for (const TableSpec& s : specs())
    if (s.name == table) return &s;
  return nullptr;
}

}  // namespace

std::string RowFinding::text() const {
  return table + " " + row + ": " + column + " = " + value + ": " + why;
}

std::optional<std::string> bad_time(double v, bool of_ok_result) {
  if (!std::isfinite(v)) return "must be a finite number of microseconds";
  if (v < 0 || (of_ok_result && v == 0)) return "must be more than 0 microseconds";
  return std::nullopt;
}

std::optional<std::string> bad_rate(double v) {
  if (!std::isfinite(v)) return "must be finite";
  if (v < 0) return "must be at least 0";
  return std::nullopt;
}

std::optional<std::string> bad_text(std::string_view v, std::size_t max, bool may_be_empty) {
  if (!may_be_empty && v.empty()) return "must not be empty";
  if (v.size() > max) return fmt::format("is longer than {} bytes ({} bytes)", max, v.size());
  if (!valid_utf8(v)) return "is not valid UTF-8";
  return std::nullopt;
}

std::optional<std::string> bad_dtype_name(std::string_view v) {
  const auto t = parse_dtype(v);
  if (!t || v != dtype_name(*t))
    return "is not an element type of this binary (" + dtype_choices() + ")";
  return std::nullopt;
}

std::optional<std::string> bad_op_name(std::string_view v) {
  const auto o = parse_op(v);
  if (!o || v != op_name(*o)) return "is not an operator of this binary (" + op_choices() + ")";
  return std::nullopt;
}

bool is_segmented_id(std::string_view kernel_id) { return kernel_id.starts_with(seg_prefix); }

std::optional<SegmentedId> parse_segmented_id(std::string_view id) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t pos = id.find('.', start);
    parts.push_back(id.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  if (parts.size() < 7 || parts[0] != "seg") return std::nullopt;
  const auto family = std::find(std::begin(seg_families), std::end(seg_families), parts[1]);
  if (family == std::end(seg_families)) return std::nullopt;
  const bool has_group = *family == "group";
  if (parts.size() != (has_group ? 8u : 7u)) return std::nullopt;
  std::size_t i = 2;
  if (!prefixed_int(parts[i++], 'b')) return std::nullopt;
  if (has_group && !prefixed_int(parts[i++], 'g')) return std::nullopt;
  if (!prefixed_int(parts[i++], 'v')) return std::nullopt;
  const std::string_view layout = parts[i++];
  if (bad_layout_name(layout)) return std::nullopt;
  const auto dtype = dtype_names.from_name(parts[i++]);
  const auto op = op_names.from_name(parts[i++]);
  if (!dtype || !op) return std::nullopt;
  return SegmentedId{std::string(*family), std::string(layout), *dtype, *op};
}

std::optional<std::string> bad_layout_name(std::string_view v) {
  for (std::string_view l : seg_layouts)
    if (v == l) return std::nullopt;
  return "is not a layout of segments (fixed, offsets32, offsets64)";
}

std::optional<std::string> bad_segmentation(std::string_view kernel_id, DType dtype, Op op,
                                            std::uint64_t n,
                                            std::optional<std::uint64_t> segment_size) {
  if (segment_size && *segment_size < 1) return "segment_size must be at least 1";
  if (auto b = segmentation_break(kernel_id, dtype, op, n, segment_size)) return b->why;
  return std::nullopt;
}

std::optional<std::string> bad_segmented_kernel(std::string_view kernel_id, DType dtype, Op op,
                                                std::string_view layout) {
  if (auto b = segmented_kernel_break(kernel_id, dtype, op, layout)) {
    if (std::string_view(b->columns) == "kernel_id")
      return fmt::format("'{}' {}", printable(kernel_id, 80), b->why);
    return b->why;
  }
  return std::nullopt;
}

const std::vector<std::string_view>& validated_tables() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const TableSpec& s : specs()) v.push_back(s.name);
    return v;
  }();
  return names;
}

std::vector<RowFinding> validate_table(Connection& conn, std::string_view table,
                                       std::size_t limit) {
  std::vector<RowFinding> out;
  const TableSpec* spec = find_spec(table);
  if (!spec || limit == 0) return out;
  run_table(conn, *spec, [&](RowFinding f) {
    out.push_back(std::move(f));
    return out.size() < limit;
  });
  return out;
}

std::vector<RowFinding> validate_rows(Connection& conn, std::size_t limit) {
  std::vector<RowFinding> out;
  for (std::string_view t : validated_tables()) {
    if (out.size() >= limit) break;
    for (RowFinding& f : validate_table(conn, t, limit - out.size())) out.push_back(std::move(f));
  }
  return out;
}

std::map<std::int64_t, RowFinding> invalid_rows(Connection& conn, std::string_view table) {
  std::map<std::int64_t, RowFinding> out;
  if (const TableSpec* spec = find_spec(table))
    run_table(conn, *spec, [&](RowFinding f) {
      out.try_emplace(f.id, std::move(f));
      return true;
    });
  return out;
}

}  // namespace tunedreduce::db
