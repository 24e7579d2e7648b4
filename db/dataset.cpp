#include "db/dataset.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/hash.hpp"
#include "common/interrupt.hpp"
#include "common/names.hpp"
#include "common/printable.hpp"
#include "common/timing.hpp"
#include "db/columns.hpp"
#include "db/row_rules.hpp"
#include "db/schema.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"

namespace tunedreduce::db {

namespace fs = std::filesystem;

namespace {

constexpr const char* export_format = "tunedreduce-db-export";
/// Version 2: a document with segmented measurements or winners (schema version 12), which a
/// reader of version 1 would take for whole-array measurements of n elements (it ignores
/// "segment_size" and "segmented_winners"): it refuses the document instead (exit 5). A document
/// without them stays version 1, as older binaries wrote it. Version 3: a document with
/// segmented bench results (schema version 13), which a reader of version 2 would take for
/// whole-array bench results of n elements (it ignores their "segment_size" and "layout").
constexpr int export_format_version = 3;
constexpr int first_segmented_format_version = 2;
constexpr int first_segmented_bench_format_version = 3;

// --- JSON of one row each ------------------------------------------------------------------------

template <class T>
Json opt_json(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}

Json ref_json(const MeasurementRef& r) {
  Json j = Json::object();
  j.set("run", r.run_uuid);
  j.set("seq", r.seq);
  return j;
}

Json device_json(const DeviceRow& d) {
  const DeviceFingerprint& f = d.fingerprint;
  Json j = Json::object();
  j.set("fingerprint", d.key);
  append_hard_attributes(j, f);
  j.set("theoretical_gbps", d.theoretical_gbps);
  j.set("driver_version", f.driver_version);
  j.set("runtime_version", f.runtime_version);
  j.set("first_seen", d.first_seen);
  j.set("last_seen", d.last_seen);
  return j;
}

Json run_json(const RunRow& r) {
  Json j = Json::object();
  j.set("uuid", r.uuid);
  j.set("tool_version", r.info.tool_version);
  j.set("manifest_hash", r.info.manifest_hash);
  j.set("config_hash", r.info.config_hash);
  j.set("host", r.info.host);
  j.set("origin", r.origin);
  j.set("started_at", r.started_at);
  j.set("ended_at", r.ended_at);
  j.set("status", run_status_name(r.status));
  j.set("l2_mode", l2_mode_name(r.info.l2_mode));
  j.set("driver_version", opt_json(r.info.driver_version));
  j.set("runtime_version", opt_json(r.info.runtime_version));
  j.set("config_text", opt_json(r.info.config_text));
  Json att = Json::object();
  for (const auto& [key, gbps] : r.attainable) att.set(key, gbps);
  j.set("attainable_gbps", att);
  Json src = Json::array();
  for (const auto& s : r.sources) src.push_back(s);
  j.set("sources", src);
  return j;
}

Json measurement_json(const MeasurementRow& row) {
  const Measurement& m = row.m;
  Json j = Json::object();
  j.set("run", row.ref.run_uuid);
  j.set("seq", row.ref.seq);
  j.set("device", row.device_key);
  j.set("gpu", opt_json(row.gpu_uuid));
  j.set("kernel_id", m.kernel_id);
  j.set("family", m.params.family);
  j.set("block", m.params.block);
  j.set("unroll", m.params.unroll);
  j.set("smem", m.params.smem);
  j.set("finish", m.params.finish);
  j.set("dtype", dtype_name(m.dtype));
  j.set("op", op_name(m.op));
  j.set("n", static_cast<std::int64_t>(m.n));
  j.set("l2_mode", l2_mode_name(m.l2_mode));
  j.set("outcome", outcome_name(m.outcome));
  append_timing(j, m);
  j.set("error", m.error);
  j.set("measured_at", m.measured_at);
  // Schema version 12: the elements per segment of a segmented measurement (n is the total).
  j.set("segment_size", m.segment_size ? Json(static_cast<std::int64_t>(*m.segment_size)) : Json());
  return j;
}

Json winner_json(const WinnerRow& row) {
  const Winner& w = row.w;
  Json j = Json::object();
  j.set("device", row.device_key);
  j.set("dtype", dtype_name(w.dtype));
  j.set("op", op_name(w.op));
  j.set("l2_mode", l2_mode_name(w.l2_mode));
  j.set("n_lo", static_cast<std::int64_t>(w.n_lo));
  j.set("n_hi", static_cast<std::int64_t>(w.n_hi));
  j.set("kernel_id", w.kernel_id);
  j.set("measurement", ref_json(row.evidence));
  j.set("runner_up_kernel_id", opt_json(w.runner_up_kernel_id));
  j.set("runner_up_measurement", row.runner_up ? ref_json(*row.runner_up) : Json());
  j.set("driver_version", w.driver_version);
  j.set("runtime_version", w.runtime_version);
  j.set("run", opt_json(row.run_uuid));
  j.set("source", opt_json(row.source));
  return j;
}

Json segmented_winner_json(const SegmentedWinnerRow& row) {
  const SegmentedWinner& w = row.w;
  Json j = Json::object();
  j.set("device", row.device_key);
  j.set("dtype", dtype_name(w.dtype));
  j.set("op", op_name(w.op));
  j.set("layout", w.layout);
  j.set("l2_mode", l2_mode_name(w.l2_mode));
  j.set("size_lo", static_cast<std::int64_t>(w.size_lo));
  j.set("size_hi", static_cast<std::int64_t>(w.size_hi));
  j.set("count_lo", static_cast<std::int64_t>(w.count_lo));
  j.set("count_hi", static_cast<std::int64_t>(w.count_hi));
  j.set("kernel_id", w.kernel_id);
  j.set("measurement", ref_json(row.evidence));
  j.set("runner_up_kernel_id", opt_json(w.runner_up_kernel_id));
  j.set("runner_up_measurement", row.runner_up ? ref_json(*row.runner_up) : Json());
  j.set("driver_version", w.driver_version);
  j.set("runtime_version", w.runtime_version);
  j.set("run", opt_json(row.run_uuid));
  j.set("source", opt_json(row.source));
  return j;
}

Json bench_run_json(const BenchRunRow& b) {
  Json j = Json::object();
  j.set("uuid", b.uuid);
  j.set("device", b.device_key);
  j.set("tool_version", b.info.tool_version);
  j.set("manifest_hash", b.info.manifest_hash);
  j.set("host", b.info.host);
  j.set("origin", b.origin);
  j.set("library_database", b.info.library_database);
  j.set("started_at", b.started_at);
  j.set("ended_at", b.ended_at);
  j.set("status", run_status_name(b.status));
  j.set("l2", bench_l2_name(b.info.l2));
  j.set("repeats", b.info.repeats);
  j.set("warmups", b.info.warmups);
  j.set("seed", bench_seed_text(b.info.seed));
  j.set("driver_version", b.driver_version);
  j.set("runtime_version", b.runtime_version);
  j.set("attainable_gbps", opt_json(b.info.attainable_gbps));
  append_clocks(j, b.info);
  Json results = Json::array();
  for (const BenchResultRecord& r : b.results) {
    Json o = Json::object();
    o.set("dtype", dtype_name(r.dtype));
    o.set("op", op_name(r.op));
    o.set("n", static_cast<std::int64_t>(r.n));
    o.set("method", bench_method_name(r.method));
    o.set("verified", r.verified);
    o.set("error", r.error);
    append_repeat_stats(o, r);
    o.set("temp_bytes", opt_json(r.temp_bytes));
    o.set("kernel_id", opt_json(r.kernel_id));
    o.set("lookup_level", opt_json(r.lookup_level));
    o.set("winner_l2", r.winner_l2 ? Json(l2_mode_name(*r.winner_l2)) : Json());
    o.set("measured_at", r.measured_at);
    if (r.segmented()) {  // `bench --segments` (schema version 13): absent for a whole array
      o.set("segment_size", static_cast<std::int64_t>(*r.segment_size));
      o.set("layout", r.layout);
    }
    results.push_back(std::move(o));
  }
  j.set("results", std::move(results));
  return j;
}

/// Whole-array results first, then the segmented ones by layout and segment size.
auto bench_result_order(const BenchResult& x) {
  return std::make_tuple(x.segment_size.value_or(0), x.layout, std::string(dtype_name(x.dtype)),
                         std::string(op_name(x.op)), x.n, static_cast<int>(x.method));
}

// --- reading JSON with error messages that name the file and the member -------------------------

class Reader {
 public:
  Reader(const Json& v, const fs::path& file, std::string where)
      : v_(v), file_(file), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw DbError(Problem::invalid_data, file_, quoted(file_) + ": " + where_ + ": " + what);
  }
  Reader at(const char* key) const {
    if (!v_.is_object()) fail("expected an object");
    const Json* m = v_.find(key);
    if (!m) fail(std::string("missing member \"") + key + "\"");
    return Reader(*m, file_, where_ + "." + key);
  }
  Reader at(std::size_t i) const {
    return Reader(v_.as_array()[i], file_, where_ + "[" + std::to_string(i) + "]");
  }
  std::size_t size() const {
    if (!v_.is_array()) fail("expected an array");
    return v_.as_array().size();
  }
  bool null() const { return v_.is_null(); }
  const Json& json() const { return v_; }
  /// A string of at most \p max bytes (max_path_bytes unless said otherwise: docs/database.md,
  /// "Row rules").
  std::string str(std::size_t max = max_path_bytes) const {
    if (!v_.is_string()) fail("expected a string");
    if (auto why = bad_text(v_.as_string(), max, true)) fail(*why);
    return v_.as_string();
  }
  /// A kernel id, a name, a host, a hash, a uuid: at most max_name_bytes.
  std::string name() const { return str(max_name_bytes); }
  /// A time in microseconds: finite and more than 0.
  std::optional<double> opt_time(bool of_ok_result) const {
    if (null()) return std::nullopt;
    const double v = num();
    if (auto why = bad_time(v, of_ok_result)) fail(*why);
    return v;
  }
  std::int64_t i64(std::int64_t lo = std::numeric_limits<std::int64_t>::min()) const {
    if (!v_.is_int()) fail("expected an integer");
    if (v_.as_int() < lo) fail("must be at least " + std::to_string(lo));
    return v_.as_int();
  }
  int i32(std::int64_t lo = std::numeric_limits<int>::min()) const {
    const std::int64_t v = i64(lo);
    if (v > std::numeric_limits<int>::max()) fail("out of range");
    return static_cast<int>(v);
  }
  double num() const {
    if (!v_.is_number()) fail("expected a number");
    return v_.as_double();
  }
  bool boolean() const {
    if (!v_.is_bool()) fail("expected true or false");
    return v_.as_bool();
  }
  std::optional<std::string> opt_str(std::size_t max = max_path_bytes) const {
    return null() ? std::nullopt : std::optional(str(max));
  }
  std::optional<double> opt_num() const { return null() ? std::nullopt : std::optional(num()); }
  std::optional<int> opt_i32() const { return null() ? std::nullopt : std::optional(i32()); }
  /// A record read by its own JSON mapping (common/timing.hpp) from this object; a member it
  /// refuses is named like any other.
  template <class Read>
  auto record(Read read) const {
    if (!v_.is_object()) fail("expected an object");
    try {
      return read(v_);
    } catch (const RecordMemberError& e) {
      at(e.member()).fail(e.problem());  // a missing member fails in at() already
    }
  }
  template <class T>
  T parse(std::optional<T> (*parser)(std::string_view), const char* choices) const {
    const std::string s = str();
    auto v = parser(s);
    if (!v) fail("'" + s + "' is not one of " + choices);
    return *v;
  }

 private:
  const Json& v_;
  const fs::path& file_;
  std::string where_;
};

MeasurementRef read_ref(const Reader& r) { return {r.at("run").name(), r.at("seq").i64(1)}; }

// --- merging rows --------------------------------------------------------------------------------

void merge_device(DeviceRow& into, const DeviceRow& from) {
  const std::string first = std::min(into.first_seen, from.first_seen);
  const std::string last = std::max(into.last_seen, from.last_seen);
  auto rank = [](const DeviceRow& d) {
    return std::make_tuple(d.last_seen, d.fingerprint.driver_version, d.fingerprint.runtime_version,
                           device_json(d).dump());
  };
  if (rank(from) > rank(into)) into = from;  // latest soft attributes win
  into.first_seen = first;
  into.last_seen = last;
}

// The provenance of schema version 5 (driver, runtime, configuration text) is the same for
// every copy of a run that has it; a copy read by an older binary lacks it. So it is merged
// apart from the rest, by the larger value (any value beats none): commutative and associative.
template <class T>
void merge_present(std::optional<T>& into, const std::optional<T>& from) {
  into = std::max(into, from);
}

void merge_run(RunRow& into, const RunRow& from) {
  RunInfo provenance = into.info;
  merge_present(provenance.driver_version, from.info.driver_version);
  merge_present(provenance.runtime_version, from.info.runtime_version);
  merge_present(provenance.config_text, from.info.config_text);
  auto rank = [](const RunRow& r) {
    RunRow bare = r;
    bare.attainable.clear();
    bare.sources.clear();
    bare.info.driver_version.reset();
    bare.info.runtime_version.reset();
    bare.info.config_text.reset();
    // A copy that has ended beats one taken while the run was going on.
    return std::make_tuple(r.ended_at.has_value(), r.ended_at.value_or(""),
                           std::string(run_status_name(r.status)), run_json(bare).dump());
  };
  std::map<std::string, double> attainable = into.attainable;
  for (const auto& [k, v] : from.attainable) {
    auto [it, inserted] = attainable.try_emplace(k, v);
    if (!inserted) it->second = std::max(it->second, v);
  }
  std::set<std::string> sources = into.sources;
  sources.insert(from.sources.begin(), from.sources.end());
  if (rank(from) > rank(into)) into = from;
  into.attainable = std::move(attainable);
  into.sources = std::move(sources);
  into.info.driver_version = provenance.driver_version;
  into.info.runtime_version = provenance.runtime_version;
  into.info.config_text = std::move(provenance.config_text);
}

// The unit winners are decided in: intervals of one group never overlap; cold and warm winners
// of one (device, dtype, op) are two groups, which may cover the same sizes.
struct GroupKey {
  std::string device;
  std::string dtype, op, l2_mode;
  friend auto operator<=>(const GroupKey&, const GroupKey&) = default;
};
GroupKey group_of(const WinnerRow& w) {
  return {w.device_key, dtype_name(w.w.dtype), op_name(w.w.op), l2_mode_name(w.w.l2_mode)};
}

// Everything that makes two winner rows the same winner, apart from the interval.
auto identity(const WinnerRow& w) {
  return std::make_tuple(w.w.kernel_id, w.w.l2_mode, w.evidence, w.w.runner_up_kernel_id,
                         w.runner_up, w.w.driver_version, w.w.runtime_version, w.run_uuid,
                         w.source);
}

void sort_winners(std::vector<WinnerRow>& ws) {
  std::sort(ws.begin(), ws.end(), [](const WinnerRow& a, const WinnerRow& b) {
    return std::make_tuple(group_of(a), a.w.n_lo) < std::make_tuple(group_of(b), b.w.n_lo);
  });
}

// The unit segmented winners are decided in: rectangles of one group never overlap.
struct SegGroupKey {
  std::string device;
  std::string dtype, op, layout, l2_mode;
  friend auto operator<=>(const SegGroupKey&, const SegGroupKey&) = default;
};
SegGroupKey group_of(const SegmentedWinnerRow& w) {
  return {w.device_key, dtype_name(w.w.dtype), op_name(w.w.op), w.w.layout,
          l2_mode_name(w.w.l2_mode)};
}

// Everything that makes two segmented winner rows the same winner, apart from the rectangle.
auto identity(const SegmentedWinnerRow& w) {
  return std::make_tuple(w.w.kernel_id, w.w.l2_mode, w.w.layout, w.evidence,
                         w.w.runner_up_kernel_id, w.runner_up, w.w.driver_version,
                         w.w.runtime_version, w.run_uuid, w.source);
}

/// What a winner row claims, less where it came from: two copies of one winner from two sources
/// (a file imported again, shards that share a run) are no conflict.
template <class Row>
auto claim(const Row& w) {
  auto id = identity(w);
  std::get<std::tuple_size_v<decltype(id)> - 1>(id) = {};
  return id;
}

void sort_segmented_winners(std::vector<SegmentedWinnerRow>& ws) {
  std::sort(ws.begin(), ws.end(), [](const SegmentedWinnerRow& a, const SegmentedWinnerRow& b) {
    return std::make_tuple(group_of(a), a.w.size_lo, a.w.count_lo) <
           std::make_tuple(group_of(b), b.w.size_lo, b.w.count_lo);
  });
}

bool overlap(const SegmentedWinner& a, const SegmentedWinner& b) {
  return a.size_lo <= b.size_hi && b.size_lo <= a.size_hi && a.count_lo <= b.count_hi &&
         b.count_lo <= a.count_hi;
}

/// Why \p m cannot be the evidence (of \p kernel_id when given) or the runner-up of a segmented
/// winner of \p w's device, dtype, op, layout and L2 mode: it must be an ok segmented
/// measurement of them whose kernel has that layout. Import refuses such a winner, and export
/// and merge leave it out (read_dataset), by the same words.
std::optional<std::string> bad_segmented_evidence(const MeasurementRow& m,
                                                  const std::string& device_key,
                                                  const SegmentedWinner& w,
                                                  const std::optional<std::string>& kernel_id) {
  if (m.device_key != device_key || m.m.dtype != w.dtype || m.m.op != w.op)
    return std::string("not a measurement of this device, dtype and op");
  if (kernel_id && m.m.kernel_id != *kernel_id)
    return "a measurement of '" + m.m.kernel_id + "', not of '" + *kernel_id + "'";
  if (m.m.outcome != Outcome::ok) return std::string("not an ok measurement");
  if (m.m.l2_mode != w.l2_mode)
    return std::string("a ") + l2_mode_name(m.m.l2_mode) + "-L2 measurement, but the winner is " +
           l2_mode_name(w.l2_mode);
  if (!m.m.segment_size) return std::string("a whole-array measurement, not a segmented one");
  const auto id = parse_segmented_id(m.m.kernel_id);
  if (!id || id->layout != w.layout)
    return "a measurement of '" + m.m.kernel_id + "', not of the layout " + w.layout;
  return std::nullopt;
}

}  // namespace

// --- reading a database --------------------------------------------------------------------------

namespace {
Dataset read_dataset_in_tx(Database& db) {
  Dataset d;
  Connection& c = db.connection();
  // Rows that break the row rules (db/row_rules.hpp) are skipped, each named in d.skipped, and so
  // are the rows that name a skipped (or missing) row: never read as data, never taking the whole
  // file down with them.
  auto bad = [&](const char* table) { return invalid_rows(c, table); };
  const auto bad_sources = bad("sources"), bad_devices = bad("devices"), bad_gpus = bad("gpus"),
             bad_runs = bad("runs"), bad_measurements = bad("measurements"),
             bad_winners = bad("winners"), bad_seg_winners = bad("segmented_winners"),
             bad_bench_runs = bad("bench_runs"), bad_bench_results = bad("bench_results"),
             bad_segmented_bench = bad("segmented_bench_results");
  // Named up front: the queries below do not even return a row whose names this binary lacks.
  for (const auto* rows :
       {&bad_sources, &bad_devices, &bad_gpus, &bad_runs, &bad_measurements, &bad_winners,
        &bad_seg_winners, &bad_bench_runs, &bad_bench_results, &bad_segmented_bench})
    for (const auto& [id, f] : *rows) d.skipped.push_back(f.text());
  auto skip_bad = [&](const std::map<std::int64_t, RowFinding>& rows, std::int64_t id) {
    return rows.count(id) != 0;
  };
  auto skip_because = [&](const char* table, std::int64_t id, const std::string& why) {
    d.skipped.push_back(fmt::format("{} id {}: {}", table, id, why));
  };
  std::map<std::int64_t, std::string> source_path;
  {
    Statement st = c.prepare("SELECT id, path, kind FROM sources");
    while (st.step()) {
      if (skip_bad(bad_sources, st.column_int(0))) continue;
      source_path[st.column_int(0)] = st.column_text(1);
      d.sources[st.column_text(1)] = {st.column_text(1), st.column_text(2)};
    }
  }
  std::map<std::int64_t, std::string> device_key, run_uuid, gpu_uuid;
  for (const DeviceRecord& r : db.devices()) {
    if (skip_bad(bad_devices, r.id)) continue;
    device_key[r.id] = r.key;
    d.devices[r.key] = {r.key, r.fingerprint, r.theoretical_gbps, r.first_seen, r.last_seen};
  }
  auto device_of = [&](const char* table, std::int64_t id,
                       std::int64_t device_id) -> const std::string* {
    auto it = device_key.find(device_id);
    if (it != device_key.end()) return &it->second;
    skip_because(table, id, fmt::format("its device (id {}) is skipped or missing", device_id));
    return nullptr;
  };
  // A winner row (whole-array or segmented) takes its run's uuid and its source where both are
  // kept; else it is skipped by name and false is returned.
  auto link_run_and_source = [&](const char* table, const auto& w, auto& row) {
    if (w.run_id) {
      auto r = run_uuid.find(*w.run_id);
      if (r == run_uuid.end()) {
        skip_because(table, w.id, fmt::format("its run (id {}) is skipped or missing", *w.run_id));
        return false;
      }
      row.run_uuid = r->second;
    }
    if (w.source && !d.sources.count(*w.source)) {
      skip_because(table, w.id, "its source is skipped");
      return false;
    }
    row.source = w.source;
    return true;
  };
  for (const GpuRecord& g : db.gpus()) {  // none in a file older than version 5
    if (skip_bad(bad_gpus, g.id)) continue;
    const std::string* key = device_of("gpus", g.id, g.device_id);
    if (!key) continue;
    gpu_uuid[g.id] = g.uuid;
    d.gpus.insert({g.uuid, *key});
  }
  for (const RunRecord& r : db.runs()) {
    if (skip_bad(bad_runs, r.id)) continue;
    run_uuid[r.id] = r.uuid;
    RunRow row{r.uuid, r.info, r.origin, r.started_at, r.ended_at, r.status, {}, {}};
    // A configuration text that does not hash to the run's config_hash (db check counts them):
    // left out, named, as import would refuse it.
    if (row.info.config_text && hex64(fnv1a64(*row.info.config_text)) != row.info.config_hash) {
      d.skipped.push_back(
          fmt::format("runs id {}: config_text: does not hash to the run's "
                      "config_hash {} (left out)",
                      r.id, printable(row.info.config_hash, 80)));
      row.info.config_text.reset();
    }
    for (const auto& a : r.attainable) {
      auto key = device_key.find(a.device_id);
      if (key == device_key.end()) continue;  // a skipped device's: skipped with it
      if (auto why = bad_rate(a.gbps)) {
        d.skipped.push_back(
            fmt::format("run_devices run_id {}, device_id {}: attainable_gbps = "
                        "{}: {}",
                        r.id, a.device_id, a.gbps, *why));
        continue;
      }
      row.attainable[key->second] = a.gbps;
    }
    d.runs[r.uuid] = std::move(row);
  }
  {
    Statement st = c.prepare("SELECT run_id, source_id FROM run_sources");
    while (st.step()) {
      auto run = run_uuid.find(st.column_int(0));
      auto src = source_path.find(st.column_int(1));
      if (run != run_uuid.end() && src != source_path.end())
        d.runs.at(run->second).sources.insert(src->second);
    }
  }
  std::map<std::int64_t, MeasurementRef> ref_of;
  for (const MeasurementRecord& m : db.measurements()) {
    if (skip_bad(bad_measurements, m.id)) continue;
    const std::string* key = device_of("measurements", m.id, m.device_id);
    if (!key) continue;
    auto run = run_uuid.find(m.run_id);
    if (run == run_uuid.end()) {
      skip_because("measurements", m.id,
                   fmt::format("its run (id {}) is skipped or missing", m.run_id));
      continue;
    }
    std::optional<std::string> gpu;
    if (m.gpu_id) {
      auto g = gpu_uuid.find(*m.gpu_id);
      if (g == gpu_uuid.end()) {
        skip_because("measurements", m.id,
                     fmt::format("its GPU (id {}) is skipped or missing", *m.gpu_id));
        continue;
      }
      gpu = g->second;
    }
    MeasurementRef ref{run->second, m.seq};
    ref_of[m.id] = ref;
    Measurement bare = m;
    bare.run_id = bare.device_id = 0;
    bare.gpu_id.reset();
    d.measurements[ref] = {ref, *key, std::move(gpu), bare};
  }
  std::vector<std::pair<WinnerRow, std::int64_t>> winner_ids;
  for (const WinnerRecord& w : db.winners()) {
    if (skip_bad(bad_winners, w.id)) continue;
    const std::string* key = device_of("winners", w.id, w.device_id);
    if (!key) continue;
    auto evidence = ref_of.find(w.measurement_id);
    if (evidence == ref_of.end()) {
      skip_because("winners", w.id,
                   fmt::format("its evidence (measurement id {}) is skipped or missing",
                               w.measurement_id));
      continue;
    }
    WinnerRow row;
    row.device_key = *key;
    row.w = w;
    row.w.measurement_id = 0;
    row.w.runner_up_measurement_id.reset();
    row.w.run_id.reset();
    row.evidence = evidence->second;
    // The evidence import demands (dataset_from_json): an ok measurement of this winner's kernel,
    // device, dtype, op and L2 mode. A winner without it would export a file import refuses.
    {
      const MeasurementRow& ev = d.measurements.at(evidence->second);
      if (ev.device_key != *key || ev.m.dtype != w.dtype || ev.m.op != w.op ||
          ev.m.kernel_id != w.kernel_id || ev.m.outcome != Outcome::ok ||
          ev.m.l2_mode != w.l2_mode) {
        skip_because("winners", w.id,
                     fmt::format("its evidence (measurement id {}) is not an ok measurement of "
                                 "its kernel, device, dtype, op and L2 mode",
                                 w.measurement_id));
        continue;
      }
    }
    if (w.runner_up_measurement_id) {
      auto r = ref_of.find(*w.runner_up_measurement_id);
      if (r == ref_of.end()) {
        skip_because("winners", w.id,
                     fmt::format("its runner-up (measurement id {}) is skipped or missing",
                                 *w.runner_up_measurement_id));
        continue;
      }
      row.runner_up = r->second;
    }
    if (!link_run_and_source("winners", w, row)) continue;
    winner_ids.emplace_back(std::move(row), w.id);
  }
  // Overlapping winners of one group (which import refuses): the first by n_lo is kept, each
  // later one that overlaps a kept one is skipped by name.
  std::sort(winner_ids.begin(), winner_ids.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(group_of(a.first), a.first.w.n_lo, a.second) <
           std::make_tuple(group_of(b.first), b.first.w.n_lo, b.second);
  });
  for (auto& [row, id] : winner_ids) {
    if (!d.winners.empty() && group_of(d.winners.back()) == group_of(row) &&
        row.w.n_lo <= d.winners.back().w.n_hi) {
      skip_because("winners", id,
                   fmt::format("its sizes {}..{} overlap another winner's of the same device, "
                               "dtype, op and L2 mode",
                               row.w.n_lo, row.w.n_hi));
      continue;
    }
    d.winners.push_back(std::move(row));
  }
  sort_winners(d.winners);
  // Segmented winners (schema version 12; none in an older file), by the same rules.
  std::vector<std::pair<SegmentedWinnerRow, std::int64_t>> seg_ids;
  for (const SegmentedWinnerRecord& w : db.segmented_winners()) {
    if (skip_bad(bad_seg_winners, w.id)) continue;
    const std::string* key = device_of("segmented_winners", w.id, w.device_id);
    if (!key) continue;
    auto evidence = ref_of.find(w.measurement_id);
    if (evidence == ref_of.end()) {
      skip_because("segmented_winners", w.id,
                   fmt::format("its evidence (measurement id {}) is skipped or missing",
                               w.measurement_id));
      continue;
    }
    SegmentedWinnerRow row;
    row.device_key = *key;
    row.w = w;
    row.w.measurement_id = 0;
    row.w.runner_up_measurement_id.reset();
    row.w.run_id.reset();
    row.evidence = evidence->second;
    if (auto why = bad_segmented_evidence(d.measurements.at(row.evidence), *key, w, w.kernel_id)) {
      skip_because("segmented_winners", w.id,
                   fmt::format("its evidence (measurement id {}) is {}", w.measurement_id,
                               printable_message(*why)));
      continue;
    }
    if (w.runner_up_measurement_id) {
      auto r = ref_of.find(*w.runner_up_measurement_id);
      if (r == ref_of.end()) {
        skip_because("segmented_winners", w.id,
                     fmt::format("its runner-up (measurement id {}) is skipped or missing",
                                 *w.runner_up_measurement_id));
        continue;
      }
      if (auto why = bad_segmented_evidence(d.measurements.at(r->second), *key, w,
                                            w.runner_up_kernel_id)) {
        skip_because("segmented_winners", w.id,
                     fmt::format("its runner-up (measurement id {}) is {}",
                                 *w.runner_up_measurement_id, printable_message(*why)));
        continue;
      }
      row.runner_up = r->second;
    }
    if (!link_run_and_source("segmented_winners", w, row)) continue;
    seg_ids.emplace_back(std::move(row), w.id);
  }
  // Overlapping rectangles of one group (which import refuses): the first by (size_lo, count_lo,
  // id) is kept, each later one that overlaps a kept one is skipped by name.
  std::sort(seg_ids.begin(), seg_ids.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(group_of(a.first), a.first.w.size_lo, a.first.w.count_lo, a.second) <
           std::make_tuple(group_of(b.first), b.first.w.size_lo, b.first.w.count_lo, b.second);
  });
  std::size_t group_start = 0;
  for (auto& row_id : seg_ids) {
    SegmentedWinnerRow& row = row_id.first;
    const std::int64_t id = row_id.second;
    if (group_start < d.segmented_winners.size() &&
        group_of(d.segmented_winners[group_start]) != group_of(row))
      group_start = d.segmented_winners.size();
    const auto kept =
        std::find_if(d.segmented_winners.begin() + static_cast<std::ptrdiff_t>(group_start),
                     d.segmented_winners.end(),
                     [&](const SegmentedWinnerRow& k) { return overlap(k.w, row.w); });
    if (kept != d.segmented_winners.end()) {
      skip_because("segmented_winners", id,
                   fmt::format("its rectangle (sizes {}..{}, counts {}..{}) overlaps another "
                               "segmented winner's of the same device, dtype, op, layout and L2 "
                               "mode",
                               row.w.size_lo, row.w.size_hi, row.w.count_lo, row.w.count_hi));
      continue;
    }
    d.segmented_winners.push_back(std::move(row));
  }
  sort_segmented_winners(d.segmented_winners);
  std::map<std::int64_t, std::string> bench_uuid;
  for (const BenchRunRecord& b : bench_runs(db)) {
    if (skip_bad(bad_bench_runs, b.id)) continue;
    const std::string* key = device_of("bench_runs", b.id, b.device_id);
    if (!key) continue;
    bench_uuid[b.id] = b.uuid;
    BenchRunRow row;
    static_cast<BenchRunRecord&>(row) = b;
    row.id = row.device_id = 0;
    row.device_key = *key;
    d.bench_runs[b.uuid] = std::move(row);
  }
  std::vector<BenchResultRecord> results = bench_results(db),
                                 segmented = segmented_bench_results(db);
  for (BenchResultRecord& r : segmented) results.push_back(std::move(r));
  for (BenchResultRecord& r : results) {
    if (skip_bad(r.segmented() ? bad_segmented_bench : bad_bench_results, r.id)) continue;
    auto run = bench_uuid.find(r.bench_run_id);
    if (run == bench_uuid.end()) {
      skip_because(r.segmented() ? "segmented_bench_results" : "bench_results", r.id,
                   fmt::format("its bench run (id {}) is skipped or missing", r.bench_run_id));
      continue;
    }
    r.id = r.bench_run_id = 0;
    d.bench_runs.at(run->second).results.push_back(std::move(r));
  }
  for (auto& [uuid, b] : d.bench_runs)
    std::sort(b.results.begin(), b.results.end(), [](const auto& x, const auto& y) {
      return bench_result_order(x) < bench_result_order(y);
    });
  return d;
}
}  // namespace

Dataset read_dataset(Database& db) {
  Transaction tx(db.connection(), TxKind::deferred);
  Dataset d = read_dataset_in_tx(db);
  tx.commit();
  return d;
}

// --- JSON ----------------------------------------------------------------------------------------

Json dataset_to_json(const Dataset& d) {
  Json doc = Json::object();
  doc.set("format", export_format);
  // Version 1 unless segmented rows are in it (export_format_version).
  bool segmented = !d.segmented_winners.empty();
  for (const auto& [ref, m] : d.measurements) segmented = segmented || m.m.segment_size;
  bool segmented_bench = false;
  for (const auto& [uuid, b] : d.bench_runs)
    for (const auto& r : b.results) segmented_bench = segmented_bench || r.segmented();
  doc.set("format_version", segmented_bench ? first_segmented_bench_format_version
                            : segmented     ? first_segmented_format_version
                                            : 1);
  doc.set("schema_version", schema_version);
  Json sources = Json::array(), devices = Json::array(), runs = Json::array(),
       measurements = Json::array(), winners = Json::array();
  for (const auto& [path, s] : d.sources) {
    Json j = Json::object();
    j.set("path", s.path);
    j.set("kind", s.kind);
    sources.push_back(std::move(j));
  }
  for (const auto& [key, dev] : d.devices) devices.push_back(device_json(dev));
  Json gpus = Json::array();
  for (const GpuRow& g : d.gpus) {
    Json j = Json::object();
    j.set("uuid", g.uuid);
    j.set("device", g.device_key);
    gpus.push_back(std::move(j));
  }
  for (const auto& [uuid, r] : d.runs) runs.push_back(run_json(r));
  for (const auto& [ref, m] : d.measurements) measurements.push_back(measurement_json(m));
  for (const WinnerRow& w : d.winners) winners.push_back(winner_json(w));
  doc.set("sources", std::move(sources));
  doc.set("devices", std::move(devices));
  doc.set("gpus", std::move(gpus));
  doc.set("runs", std::move(runs));
  doc.set("measurements", std::move(measurements));
  doc.set("winners", std::move(winners));
  Json seg_winners = Json::array();
  for (const SegmentedWinnerRow& w : d.segmented_winners)
    seg_winners.push_back(segmented_winner_json(w));
  doc.set("segmented_winners", std::move(seg_winners));
  Json bench = Json::array();
  for (const auto& [uuid, b] : d.bench_runs) bench.push_back(bench_run_json(b));
  doc.set("bench_runs", std::move(bench));
  return doc;
}

Dataset dataset_from_json(const Json& json, const fs::path& file) {
  Reader doc(json, file, "$");
  if (!json.is_object()) doc.fail("expected an export document (a JSON object)");
  if (doc.at("format").str() != export_format)
    doc.at("format").fail(std::string("expected \"") + export_format + "\"");
  const std::int64_t version = doc.at("format_version").i64();
  if (version > export_format_version)
    throw DbError(Problem::too_new, file,
                  quoted(file) + ": export format version " + std::to_string(version) +
                      " is newer than this binary's " + std::to_string(export_format_version));
  if (version < 1) doc.at("format_version").fail("must be 1, 2 or 3");
  Dataset d;
  const Reader sources = doc.at("sources");
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const Reader s = sources.at(i);
    SourceRow row{s.at("path").str(), s.at("kind").str()};
    if (row.kind != "merge" && row.kind != "import") s.at("kind").fail("expected merge or import");
    if (!d.sources.emplace(row.path, row).second) s.fail("duplicate source path");
  }
  const Reader devices = doc.at("devices");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Reader r = devices.at(i);
    DeviceRow row;
    row.key = r.at("fingerprint").name();
    if (row.key.empty()) r.at("fingerprint").fail("must not be empty");
    DeviceFingerprint& f = row.fingerprint;
    f.name = r.at("name").name();
    f.cc_major = r.at("cc_major").i32(0);
    f.cc_minor = r.at("cc_minor").i32(0);
    f.sm_count = r.at("sm_count").i32(0);
    f.bus_width_bits = r.at("bus_width_bits").i32(0);
    f.l2_bytes = r.at("l2_bytes").i64(0);
    f.ecc = r.at("ecc").boolean();
    f.total_mem_bytes = r.at("total_mem_bytes").i64(0);
    f.mem_clock_khz = r.at("mem_clock_khz").i32(0);
    row.theoretical_gbps = r.at("theoretical_gbps").num();
    if (auto why = bad_rate(row.theoretical_gbps)) r.at("theoretical_gbps").fail(*why);
    f.driver_version = r.at("driver_version").i32(0);
    f.runtime_version = r.at("runtime_version").i32(0);
    row.first_seen = r.at("first_seen").str();
    row.last_seen = r.at("last_seen").str();
    if (!d.devices.emplace(row.key, row).second) r.fail("duplicate device fingerprint");
  }
  // GPUs came with schema version 5 in the same format version 1: older exports lack them.
  if (json.find("gpus")) {
    const Reader gpus = doc.at("gpus");
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const Reader g = gpus.at(i);
      GpuRow row{g.at("uuid").name(), g.at("device").name()};
      if (row.uuid.empty()) g.at("uuid").fail("must not be empty");
      if (!d.devices.count(row.device_key))
        g.at("device").fail("no device '" + row.device_key + "'");
      if (!d.gpus.insert(row).second) g.fail("duplicate GPU (uuid, device)");
    }
  }
  const Reader runs = doc.at("runs");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Reader r = runs.at(i);
    RunRow row;
    row.uuid = r.at("uuid").name();
    if (row.uuid.empty()) r.at("uuid").fail("must not be empty");
    row.info.tool_version = r.at("tool_version").name();
    row.info.manifest_hash = r.at("manifest_hash").name();
    row.info.config_hash = r.at("config_hash").name();
    row.info.host = r.at("host").name();
    row.origin = r.at("origin").str();
    row.started_at = r.at("started_at").str();
    row.ended_at = r.at("ended_at").opt_str();
    row.status = r.at("status").parse(parse_run_status, "running, finished, interrupted, failed");
    row.info.l2_mode = r.at("l2_mode").parse(parse_l2_mode, "cold, warm");
    // Since schema version 5, in the same format version 1: older exports lack them.
    if (r.json().find("driver_version")) row.info.driver_version = r.at("driver_version").opt_i32();
    if (r.json().find("runtime_version"))
      row.info.runtime_version = r.at("runtime_version").opt_i32();
    if (r.json().find("config_text")) {
      row.info.config_text = r.at("config_text").opt_str(max_config_bytes);
      if (row.info.config_text && hex64(fnv1a64(*row.info.config_text)) != row.info.config_hash)
        r.at("config_text")
            .fail("hashes to " + hex64(fnv1a64(*row.info.config_text)) +
                  ", not to the run's config_hash " + row.info.config_hash);
    }
    const Reader att = r.at("attainable_gbps");
    if (!att.json().is_object()) att.fail("expected an object");
    for (const auto& [key, v] : att.json().as_object()) {
      if (!d.devices.count(key)) att.fail("no device with fingerprint '" + key + "'");
      row.attainable[key] = Reader(v, file, "attainable").num();
      if (auto why = bad_rate(row.attainable[key])) att.fail(*why);
    }
    const Reader src = r.at("sources");
    for (std::size_t k = 0; k < src.size(); ++k) {
      const std::string p = src.at(k).str();
      if (!d.sources.count(p)) src.at(k).fail("not listed in $.sources");
      row.sources.insert(p);
    }
    if (!d.runs.emplace(row.uuid, row).second) r.fail("duplicate run uuid");
  }
  const Reader ms = doc.at("measurements");
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const Reader r = ms.at(i);
    MeasurementRow row;
    row.ref = {r.at("run").name(), r.at("seq").i64(1)};
    if (!d.runs.count(row.ref.run_uuid))
      r.at("run").fail("no run with uuid '" + row.ref.run_uuid + "'");
    row.device_key = r.at("device").name();
    if (!d.devices.count(row.device_key)) r.at("device").fail("no device '" + row.device_key + "'");
    if (r.json().find("gpu")) {
      row.gpu_uuid = r.at("gpu").opt_str();
      if (row.gpu_uuid && !d.gpus.count({*row.gpu_uuid, row.device_key}))
        r.at("gpu").fail("no GPU '" + *row.gpu_uuid + "' of device '" + row.device_key +
                         "' in $.gpus");
    }
    Measurement& m = row.m;
    m.kernel_id = r.at("kernel_id").name();
    if (m.kernel_id.empty()) r.at("kernel_id").fail("must not be empty");
    m.params.family = r.at("family").name();
    m.params.block = r.at("block").i32(0);
    m.params.unroll = r.at("unroll").i32(0);
    m.params.smem = r.at("smem").str();
    if (m.params.smem != "none" && m.params.smem != "static" && m.params.smem != "dynamic")
      r.at("smem").fail("expected none, static or dynamic");
    m.params.finish = r.at("finish").str();
    if (m.params.finish != "two_pass" && m.params.finish != "single_pass" &&
        m.params.finish != "packed")
      r.at("finish").fail("expected two_pass, single_pass or packed");
    m.dtype = r.at("dtype").parse(parse_dtype, dtype_choices().c_str());
    if (r.at("dtype").str() != dtype_name(m.dtype)) r.at("dtype").fail("use the short name");
    m.op = r.at("op").parse(parse_op, op_choices().c_str());
    if (const std::string why = op_dtype_mismatch(m.dtype, m.op); !why.empty())
      r.at("op").fail(why);
    m.n = static_cast<std::uint64_t>(r.at("n").i64(0));
    m.l2_mode = r.at("l2_mode").parse(parse_l2_mode, "cold, warm");
    m.outcome =
        r.at("outcome").parse(parse_outcome, "ok, incorrect, launch_failed, crashed, timeout");
    static_cast<Timing&>(m) = r.record(timing_from_json);
    // Times are refused at the door: a zero, negative or non-finite time is no evidence.
    for (const char* t : {"median_us", "p10_us", "p90_us"})
      if (r.json().find(t)) r.at(t).opt_time(m.outcome == Outcome::ok);
    if (m.gbps)
      if (auto why = bad_rate(*m.gbps)) r.at("gbps").fail(*why);
    if (m.outcome == Outcome::ok && !m.median_us)
      r.at("median_us").fail("required when outcome is ok");
    m.error = r.at("error").str(max_error_bytes);
    m.measured_at = r.at("measured_at").str();
    // Since schema version 12 (format version 2 where it is set): older exports lack it.
    if (r.json().find("segment_size") && !r.at("segment_size").null())
      m.segment_size = static_cast<std::uint64_t>(r.at("segment_size").i64(1));
    if (auto why = bad_segmentation(m.kernel_id, m.dtype, m.op, m.n, m.segment_size))
      r.at(m.segment_size ? "segment_size" : "kernel_id").fail(*why);
    if (!d.measurements.emplace(row.ref, row).second) r.fail("duplicate (run, seq)");
  }
  const Reader ws = doc.at("winners");
  for (std::size_t i = 0; i < ws.size(); ++i) {
    const Reader r = ws.at(i);
    WinnerRow row;
    row.device_key = r.at("device").name();
    if (!d.devices.count(row.device_key)) r.at("device").fail("no device '" + row.device_key + "'");
    Winner& w = row.w;
    w.dtype = r.at("dtype").parse(parse_dtype, dtype_choices().c_str());
    w.op = r.at("op").parse(parse_op, op_choices().c_str());
    if (const std::string why = op_dtype_mismatch(w.dtype, w.op); !why.empty())
      r.at("op").fail(why);
    w.n_lo = static_cast<std::uint64_t>(r.at("n_lo").i64(0));
    w.n_hi = static_cast<std::uint64_t>(r.at("n_hi").i64(0));
    if (w.n_hi < w.n_lo) r.at("n_hi").fail("smaller than n_lo");
    w.kernel_id = r.at("kernel_id").name();
    if (is_segmented_id(w.kernel_id))
      r.at("kernel_id")
          .fail(
              "a segmented kernel is no whole-array winner ($.segmented_winners "
              "holds those)");
    row.evidence = read_ref(r.at("measurement"));
    auto ev = d.measurements.find(row.evidence);
    if (ev == d.measurements.end()) r.at("measurement").fail("no such measurement");
    const Measurement& em = ev->second.m;
    if (ev->second.device_key != row.device_key || em.dtype != w.dtype || em.op != w.op ||
        em.kernel_id != w.kernel_id || em.outcome != Outcome::ok)
      r.at("measurement").fail("not an ok measurement of this kernel, device, dtype and op");
    // Exports before schema version 3 have no l2_mode on winners: a winner's mode is its
    // evidence's, as the migration 2 -> 3 decides it (cold for every export of a cold run).
    if (r.json().find("l2_mode")) {
      w.l2_mode = r.at("l2_mode").parse(parse_l2_mode, "cold, warm");
      if (em.l2_mode != w.l2_mode)
        r.at("measurement")
            .fail(std::string("a ") + l2_mode_name(em.l2_mode) +
                  "-L2 measurement, but the winner is " + l2_mode_name(w.l2_mode));
    } else {
      w.l2_mode = em.l2_mode;
    }
    w.runner_up_kernel_id = r.at("runner_up_kernel_id").opt_str(max_name_bytes);
    if (w.runner_up_kernel_id && is_segmented_id(*w.runner_up_kernel_id))
      r.at("runner_up_kernel_id").fail("a segmented kernel is no whole-array winner's runner-up");
    if (!r.at("runner_up_measurement").null()) {
      row.runner_up = read_ref(r.at("runner_up_measurement"));
      if (!d.measurements.count(*row.runner_up))
        r.at("runner_up_measurement").fail("no such measurement");
    }
    w.driver_version = r.at("driver_version").i32(0);
    w.runtime_version = r.at("runtime_version").i32(0);
    row.run_uuid = r.at("run").opt_str(max_name_bytes);
    if (row.run_uuid && !d.runs.count(*row.run_uuid)) r.at("run").fail("no such run");
    row.source = r.at("source").opt_str();
    if (row.source && !d.sources.count(*row.source)) r.at("source").fail("not listed in $.sources");
    d.winners.push_back(std::move(row));
  }
  sort_winners(d.winners);
  // Segmented winners came with schema version 12 (format version 2): older exports lack them.
  if (json.find("segmented_winners")) {
    const Reader sws = doc.at("segmented_winners");
    for (std::size_t i = 0; i < sws.size(); ++i) {
      const Reader r = sws.at(i);
      SegmentedWinnerRow row;
      row.device_key = r.at("device").name();
      if (!d.devices.count(row.device_key))
        r.at("device").fail("no device '" + row.device_key + "'");
      SegmentedWinner& w = row.w;
      w.dtype = r.at("dtype").parse(parse_dtype, dtype_choices().c_str());
      if (r.at("dtype").str() != dtype_name(w.dtype)) r.at("dtype").fail("use the short name");
      w.op = r.at("op").parse(parse_op, op_choices().c_str());
      if (const std::string why = op_dtype_mismatch(w.dtype, w.op); !why.empty())
        r.at("op").fail(why);
      w.layout = r.at("layout").name();
      if (auto why = bad_layout_name(w.layout)) r.at("layout").fail("'" + w.layout + "' " + *why);
      w.l2_mode = r.at("l2_mode").parse(parse_l2_mode, "cold, warm");
      w.size_lo = static_cast<std::uint64_t>(r.at("size_lo").i64(1));
      w.size_hi = static_cast<std::uint64_t>(r.at("size_hi").i64(1));
      if (w.size_hi < w.size_lo) r.at("size_hi").fail("smaller than size_lo");
      w.count_lo = static_cast<std::uint64_t>(r.at("count_lo").i64(1));
      w.count_hi = static_cast<std::uint64_t>(r.at("count_hi").i64(1));
      if (w.count_hi < w.count_lo) r.at("count_hi").fail("smaller than count_lo");
      w.kernel_id = r.at("kernel_id").name();
      if (auto why = bad_segmented_kernel(w.kernel_id, w.dtype, w.op, w.layout))
        r.at("kernel_id").fail(*why);
      row.evidence = read_ref(r.at("measurement"));
      auto ev = d.measurements.find(row.evidence);
      if (ev == d.measurements.end()) r.at("measurement").fail("no such measurement");
      if (auto why = bad_segmented_evidence(ev->second, row.device_key, w, w.kernel_id))
        r.at("measurement").fail(*why);
      w.runner_up_kernel_id = r.at("runner_up_kernel_id").opt_str(max_name_bytes);
      if (w.runner_up_kernel_id)
        if (auto why = bad_segmented_kernel(*w.runner_up_kernel_id, w.dtype, w.op, w.layout))
          r.at("runner_up_kernel_id").fail(*why);
      if (!r.at("runner_up_measurement").null()) {
        row.runner_up = read_ref(r.at("runner_up_measurement"));
        auto ru = d.measurements.find(*row.runner_up);
        if (ru == d.measurements.end()) r.at("runner_up_measurement").fail("no such measurement");
        if (auto why = bad_segmented_evidence(ru->second, row.device_key, w, w.runner_up_kernel_id))
          r.at("runner_up_measurement").fail(*why);
      }
      w.driver_version = r.at("driver_version").i32(0);
      w.runtime_version = r.at("runtime_version").i32(0);
      row.run_uuid = r.at("run").opt_str(max_name_bytes);
      if (row.run_uuid && !d.runs.count(*row.run_uuid)) r.at("run").fail("no such run");
      row.source = r.at("source").opt_str();
      if (row.source && !d.sources.count(*row.source))
        r.at("source").fail("not listed in $.sources");
      d.segmented_winners.push_back(std::move(row));
    }
    sort_segmented_winners(d.segmented_winners);
    for (std::size_t i = 0; i < d.segmented_winners.size(); ++i)
      for (std::size_t k = i + 1; k < d.segmented_winners.size(); ++k) {
        const SegmentedWinnerRow &a = d.segmented_winners[i], &b = d.segmented_winners[k];
        if (group_of(a) != group_of(b)) break;
        if (overlap(a.w, b.w))
          sws.fail(
              fmt::format("overlapping rectangles for device {} {} {} {} {}: sizes {}..{} x "
                          "counts {}..{} and sizes {}..{} x counts {}..{}",
                          a.device_key, dtype_name(a.w.dtype), op_name(a.w.op), a.w.layout,
                          l2_mode_name(a.w.l2_mode), a.w.size_lo, a.w.size_hi, a.w.count_lo,
                          a.w.count_hi, b.w.size_lo, b.w.size_hi, b.w.count_lo, b.w.count_hi));
      }
  }
  // Bench runs came with schema version 4 in the same format version 1: older exports lack them.
  if (json.find("bench_runs")) {
    const Reader bs = doc.at("bench_runs");
    for (std::size_t i = 0; i < bs.size(); ++i) {
      const Reader r = bs.at(i);
      BenchRunRow row;
      row.uuid = r.at("uuid").name();
      if (row.uuid.empty()) r.at("uuid").fail("must not be empty");
      row.device_key = r.at("device").name();
      if (!d.devices.count(row.device_key))
        r.at("device").fail("no device '" + row.device_key + "'");
      row.info.tool_version = r.at("tool_version").name();
      row.info.manifest_hash = r.at("manifest_hash").name();
      row.info.host = r.at("host").name();
      row.origin = r.at("origin").str();
      row.info.library_database = r.at("library_database").str();
      row.started_at = r.at("started_at").str();
      row.ended_at = r.at("ended_at").opt_str();
      row.status = r.at("status").parse(parse_run_status, "running, finished, interrupted, failed");
      row.info.l2 = r.at("l2").parse(parse_bench_l2, "cold, dirty, warm");
      row.info.repeats = r.at("repeats").i32(1);
      row.info.warmups = r.at("warmups").i32(0);
      const std::string seed = r.at("seed").str();
      if (seed.empty() || seed.size() > 16 ||
          seed.find_first_not_of("0123456789abcdef") != std::string::npos)
        r.at("seed").fail("expected up to 16 lowercase hex digits");
      row.info.seed = std::stoull(seed, nullptr, 16);
      row.driver_version = r.at("driver_version").i32(0);
      row.runtime_version = r.at("runtime_version").i32(0);
      row.info.attainable_gbps = r.at("attainable_gbps").opt_num();
      static_cast<ClockReading&>(row.info) = r.record(clocks_from_json);
      const Reader rs = r.at("results");
      std::set<decltype(bench_result_order(BenchResult{}))> seen;
      for (std::size_t k = 0; k < rs.size(); ++k) {
        const Reader x = rs.at(k);
        BenchResultRecord b;
        b.dtype = x.at("dtype").parse(parse_dtype, dtype_choices().c_str());
        if (x.at("dtype").str() != dtype_name(b.dtype)) x.at("dtype").fail("use the short name");
        b.op = x.at("op").parse(parse_op, op_choices().c_str());
        if (const std::string why = op_dtype_mismatch(b.dtype, b.op); !why.empty())
          x.at("op").fail(why);
        b.n = static_cast<std::uint64_t>(x.at("n").i64(1));
        b.method =
            x.at("method").parse(parse_bench_method, "cached, two_phase, cub, thrust, floor");
        b.verified = x.at("verified").boolean();
        b.error = x.at("error").str(max_error_bytes);
        static_cast<RepeatStats&>(b) = x.record(repeat_stats_from_json);
        for (const char* t : {"median_us", "p10_us", "p90_us"})
          if (x.json().find(t)) x.at(t).opt_time(b.verified);
        if (b.verified && !b.median_us) x.at("median_us").fail("required when verified");
        if (b.verified && !b.error.empty()) x.at("error").fail("must be empty when verified");
        if (!b.verified && b.error.empty()) x.at("error").fail("must say why when not verified");
        if (!x.at("temp_bytes").null()) b.temp_bytes = x.at("temp_bytes").i64(0);
        b.kernel_id = x.at("kernel_id").opt_str(max_name_bytes);
        b.lookup_level = x.at("lookup_level").opt_str();
        if (b.lookup_level && *b.lookup_level != "exact" && *b.lookup_level != "nearest" &&
            *b.lookup_level != "same_model" && *b.lookup_level != "default")
          x.at("lookup_level").fail("expected exact, nearest, same_model or default");
        if (!x.at("winner_l2").null())
          b.winner_l2 = x.at("winner_l2").parse(parse_l2_mode, "cold, warm");
        b.measured_at = x.at("measured_at").str();
        if (x.json().find("segment_size") || x.json().find("layout")) {
          if (version < first_segmented_bench_format_version)
            x.at("segment_size").fail("segmented bench results need format version 3");
          b.segment_size = static_cast<std::uint64_t>(x.at("segment_size").i64(1));
          if (*b.segment_size > b.n) x.at("segment_size").fail("larger than n");
          b.layout = x.at("layout").str(max_name_bytes);
          if (auto why = bad_layout_name(b.layout)) x.at("layout").fail(*why);
          if (b.method == BenchMethod::thrust)
            x.at("method").fail("Thrust has no segmented reduction");
        } else if (b.method == BenchMethod::floor) {
          x.at("method").fail("the floor is measured for segmented results only");
        }
        if (!seen.insert(bench_result_order(b)).second)
          x.fail("a second result for this dtype, op, n, method (and segment size and layout)");
        row.results.push_back(std::move(b));
      }
      std::sort(row.results.begin(), row.results.end(), [](const auto& a, const auto& b) {
        return bench_result_order(a) < bench_result_order(b);
      });
      if (!d.bench_runs.emplace(row.uuid, row).second) r.fail("duplicate bench run uuid");
    }
  }
  for (std::size_t i = 1; i < d.winners.size(); ++i) {
    const WinnerRow &a = d.winners[i - 1], &b = d.winners[i];
    if (group_of(a) == group_of(b) && b.w.n_lo <= a.w.n_hi)
      doc.at("winners").fail("overlapping intervals for device " + a.device_key + " " +
                             dtype_name(a.w.dtype) + " " + op_name(a.w.op) + " " +
                             l2_mode_name(a.w.l2_mode) + " at n = " + std::to_string(b.w.n_lo));
  }
  return d;
}

// --- merging -------------------------------------------------------------------------------------

void add_provenance(Dataset& d, const std::string& path, const std::string& kind) {
  d.sources.try_emplace(path, SourceRow{path, kind});
  for (auto& [uuid, r] : d.runs) r.sources.insert(path);
  for (WinnerRow& w : d.winners)
    if (!w.source) w.source = path;
  for (SegmentedWinnerRow& w : d.segmented_winners)
    if (!w.source) w.source = path;
}

double relative_median_error(const Measurement& m) {
  return m.outcome == Outcome::ok ? tunedreduce::relative_median_error(m) : 0;
}

double noise_tolerance(const Measurement& a, const Measurement& b) {
  const double ea = relative_median_error(a), eb = relative_median_error(b);
  return std::clamp(2 * std::sqrt(ea * ea + eb * eb), merge_noise_floor, merge_noise_ceiling);
}

namespace {
double time_per_element(const Measurement& m) {
  return m.median_us.value_or(std::numeric_limits<double>::infinity()) /
         static_cast<double>(std::max<std::uint64_t>(m.n, 1));
}
}  // namespace

bool within_noise(const Measurement& a, const Measurement& b) {
  const double ta = time_per_element(a), tb = time_per_element(b);
  const double lo = std::min(ta, tb), hi = std::max(ta, tb);
  if (!(lo > 0) || std::isinf(hi)) return lo == hi;
  return (hi - lo) / lo < noise_tolerance(a, b);
}

std::vector<WinnerRow> resolve_winners(const std::vector<WinnerRow>& candidates,
                                       const Dataset& evidence, std::int64_t& conflicts) {
  // Distinct candidates, each with its evidence and the key that makes it the fastest.
  struct Candidate {
    const WinnerRow* row;
    const Measurement* m;
    double time_per_element;
    double median;
  };
  std::vector<Candidate> cs;
  cs.reserve(candidates.size());
  for (const WinnerRow& w : candidates) {
    const Measurement& m = evidence.measurements.at(w.evidence).m;
    cs.push_back({&w, &m, time_per_element(m),
                  m.median_us.value_or(std::numeric_limits<double>::infinity())});
  }
  // By n_lo, so a segment's candidates are a prefix.
  std::sort(cs.begin(), cs.end(),
            [](const Candidate& a, const Candidate& b) { return a.row->w.n_lo < b.row->w.n_lo; });
  auto faster = [](const Candidate& a, const Candidate& b) {
    return std::make_tuple(a.time_per_element, a.median, identity(*a.row)) <
           std::make_tuple(b.time_per_element, b.median, identity(*b.row));
  };
  // Elementary segments between every interval boundary.
  std::vector<std::uint64_t> cuts;
  for (const Candidate& c : cs) {
    cuts.push_back(c.row->w.n_lo);
    cuts.push_back(c.row->w.n_hi + 1);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<WinnerRow> out;
  std::vector<const Candidate*> covering;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const std::uint64_t lo = cuts[i], hi = cuts[i + 1] - 1;
    covering.clear();
    const Candidate* fastest = nullptr;
    for (const Candidate& c : cs) {
      if (c.row->w.n_lo > lo) break;
      if (c.row->w.n_hi < hi) continue;
      covering.push_back(&c);
      if (!fastest || faster(c, *fastest)) fastest = &c;
    }
    if (!fastest) continue;  // a gap no candidate covers
    // The fastest sets the noise band; among it and every candidate within its noise, the
    // fixed order of identity() decides (the smaller kernel id, then evidence, then source).
    const Candidate* best = nullptr;
    bool contested = false;
    for (const Candidate* c : covering) {
      if (claim(*c->row) != claim(*fastest->row)) contested = true;
      if (c != fastest && !within_noise(*c->m, *fastest->m)) continue;
      if (!best || identity(*c->row) < identity(*best->row)) best = c;
    }
    if (contested) ++conflicts;
    if (!out.empty() && identity(out.back()) == identity(*best->row) &&
        out.back().w.n_hi + 1 == lo) {
      out.back().w.n_hi = hi;
      continue;
    }
    WinnerRow piece = *best->row;
    piece.w.n_lo = lo;
    piece.w.n_hi = hi;
    out.push_back(std::move(piece));
  }
  return out;
}

std::vector<SegmentedWinnerRow> resolve_segmented_winners(
    const std::vector<SegmentedWinnerRow>& candidates, const Dataset& evidence,
    std::int64_t& conflicts) {
  // As resolve_winners, over the cells of (segment size, segment count) instead of intervals of n.
  struct Candidate {
    const SegmentedWinnerRow* row;
    const Measurement* m;
    double time_per_element;
    double median;
  };
  std::vector<Candidate> cs;
  cs.reserve(candidates.size());
  for (const SegmentedWinnerRow& w : candidates) {
    const Measurement& m = evidence.measurements.at(w.evidence).m;
    cs.push_back({&w, &m, time_per_element(m),
                  m.median_us.value_or(std::numeric_limits<double>::infinity())});
  }
  // By size_lo, so the candidates of a cell are among a prefix.
  std::sort(cs.begin(), cs.end(), [](const Candidate& a, const Candidate& b) {
    return a.row->w.size_lo < b.row->w.size_lo;
  });
  auto faster = [](const Candidate& a, const Candidate& b) {
    return std::make_tuple(a.time_per_element, a.median, identity(*a.row)) <
           std::make_tuple(b.time_per_element, b.median, identity(*b.row));
  };
  // Elementary bands between every rectangle's bounds, on each axis (hi + 1 may wrap only for
  // a bound of 2^64 - 1, which no row holds: the database's integers are signed).
  std::vector<std::uint64_t> size_cuts, count_cuts;
  for (const Candidate& c : cs) {
    size_cuts.push_back(c.row->w.size_lo);
    size_cuts.push_back(c.row->w.size_hi + 1);
    count_cuts.push_back(c.row->w.count_lo);
    count_cuts.push_back(c.row->w.count_hi + 1);
  }
  for (auto* cuts : {&size_cuts, &count_cuts}) {
    std::sort(cuts->begin(), cuts->end());
    cuts->erase(std::unique(cuts->begin(), cuts->end()), cuts->end());
  }
  std::vector<SegmentedWinnerRow> out;
  // The rectangles of the previous band of counts that may grow into this one: the runs of a
  // band extend those with the same sizes and the same winner, else start rectangles of their
  // own.
  std::vector<std::size_t> open, next_open;
  std::vector<const Candidate*> covering;
  for (std::size_t j = 0; j + 1 < count_cuts.size(); ++j) {
    const std::uint64_t c_lo = count_cuts[j], c_hi = count_cuts[j + 1] - 1;
    next_open.clear();
    const Candidate* run = nullptr;  // the winner of the run of cells being joined
    std::uint64_t run_lo = 0, run_hi = 0;
    auto close_run = [&] {
      if (!run) return;
      for (std::size_t k : open) {
        SegmentedWinner& o = out[k].w;
        if (o.size_lo == run_lo && o.size_hi == run_hi && o.count_hi + 1 == c_lo &&
            identity(out[k]) == identity(*run->row)) {
          o.count_hi = c_hi;
          next_open.push_back(k);
          run = nullptr;
          return;
        }
      }
      SegmentedWinnerRow piece = *run->row;
      piece.w.size_lo = run_lo;
      piece.w.size_hi = run_hi;
      piece.w.count_lo = c_lo;
      piece.w.count_hi = c_hi;
      next_open.push_back(out.size());
      out.push_back(std::move(piece));
      run = nullptr;
    };
    for (std::size_t i = 0; i + 1 < size_cuts.size(); ++i) {
      const std::uint64_t s_lo = size_cuts[i], s_hi = size_cuts[i + 1] - 1;
      covering.clear();
      const Candidate* fastest = nullptr;
      for (const Candidate& c : cs) {
        if (c.row->w.size_lo > s_lo) break;
        if (c.row->w.size_hi < s_hi || c.row->w.count_lo > c_lo || c.row->w.count_hi < c_hi)
          continue;
        covering.push_back(&c);
        if (!fastest || faster(c, *fastest)) fastest = &c;
      }
      if (!fastest) {  // a cell no candidate covers
        close_run();
        continue;
      }
      const Candidate* best = nullptr;
      bool contested = false;
      for (const Candidate* c : covering) {
        if (claim(*c->row) != claim(*fastest->row)) contested = true;
        if (c != fastest && !within_noise(*c->m, *fastest->m)) continue;
        if (!best || identity(*c->row) < identity(*best->row)) best = c;
      }
      if (contested) ++conflicts;
      if (run && identity(*run->row) == identity(*best->row) && run_hi + 1 == s_lo) {
        run_hi = s_hi;
        continue;
      }
      close_run();
      run = best;
      run_lo = s_lo;
      run_hi = s_hi;
    }
    close_run();
    std::swap(open, next_open);
  }
  return out;
}

namespace {
/// How good the evidence of one copy of a measurement is, larger better: an ok (verified)
/// outcome, then more repeats, then a lower relative spread (p90 - p10) / median, then the newer
/// measurement time.
auto evidence_rank(const Measurement& m) {
  double spread = std::numeric_limits<double>::infinity();
  if (m.median_us && m.p10_us && m.p90_us && *m.median_us > 0)
    spread = (*m.p90_us - *m.p10_us) / *m.median_us;
  return std::make_tuple(m.outcome == Outcome::ok, m.repeats, -spread, m.measured_at);
}

// Everything but the winners (merge_dataset and merge_files decide those).
void union_rows(Dataset& into, const Dataset& from, MergeStats& stats) {
  for (const auto& [path, s] : from.sources) {
    auto [it, inserted] = into.sources.try_emplace(path, s);
    if (!inserted && s.kind < it->second.kind) it->second.kind = s.kind;
  }
  for (const auto& [key, dev] : from.devices) {
    auto [it, inserted] = into.devices.try_emplace(key, dev);
    if (inserted) ++stats.devices_added;
    else merge_device(it->second, dev);
  }
  for (const GpuRow& g : from.gpus)
    if (into.gpus.insert(g).second) ++stats.gpus_added;
  for (const auto& [uuid, run] : from.runs) {
    auto [it, inserted] = into.runs.try_emplace(uuid, run);
    if (inserted) ++stats.runs_added;
    else merge_run(it->second, run);
  }
  for (const auto& [ref, m] : from.measurements) {
    auto [it, inserted] = into.measurements.try_emplace(ref, m);
    if (inserted) {
      ++stats.measurements_added;
      continue;
    }
    // The GPU is compared apart: a copy read by a binary older than schema version 5 has none,
    // which is no conflict; the copy that names it is kept (the larger value, as for runs).
    auto without_gpu = [](MeasurementRow row) {
      row.gpu_uuid.reset();
      return measurement_json(row).dump();
    };
    const MeasurementRow have = it->second;
    const std::string a = without_gpu(have), b = without_gpu(m);
    if (a != b) {
      ++stats.measurement_conflicts;
      // Decided by evidence, whatever the order of inputs: the better-evidenced copy is kept
      // (evidence_rank); the text order decides only between copies of equal evidence.
      const auto have_rank = evidence_rank(have.m), new_rank = evidence_rank(m.m);
      if (new_rank > have_rank || (new_rank == have_rank && b < a)) it->second = m;
    } else if (have.gpu_uuid && m.gpu_uuid && have.gpu_uuid != m.gpu_uuid) {
      ++stats.measurement_conflicts;  // one measurement, two cards: the larger UUID is kept
    }
    // The GPU of a copy of the content kept (a GPU is a card of one device).
    MeasurementRow& kept = it->second;
    std::optional<std::string> gpu;
    for (const MeasurementRow* c : {&have, &m})
      if (c->device_key == kept.device_key) merge_present(gpu, c->gpu_uuid);
    kept.gpu_uuid = std::move(gpu);
  }
  // Bench runs: by uuid; a copy that has ended beats one taken while the bench was going on;
  // two ended copies that differ (a damaged or hand-edited file) keep the one whose JSON sorts
  // first, whatever the order of inputs.
  for (const auto& [uuid, b] : from.bench_runs) {
    auto [it, inserted] = into.bench_runs.try_emplace(uuid, b);
    if (inserted) {
      ++stats.bench_runs_added;
      continue;
    }
    BenchRunRow& have = it->second;
    if (have.ended_at.has_value() != b.ended_at.has_value()) {
      if (b.ended_at) have = b;
      continue;
    }
    const std::string x = bench_run_json(have).dump(), y = bench_run_json(b).dump();
    if (x == y) continue;
    bool take = y < x;
    if (have.ended_at) {
      ++stats.bench_run_conflicts;
    } else if (b.results.size() != have.results.size()) {
      take = b.results.size() > have.results.size();  // both running: the later copy has more
    }
    if (take) have = b;
  }
}
}  // namespace

void merge_dataset(Dataset& into, const Dataset& from, MergeStats& stats) {
  union_rows(into, from, stats);
  // Winners, group by group.
  std::map<GroupKey, std::vector<WinnerRow>> groups;
  for (const WinnerRow& w : into.winners) groups[group_of(w)].push_back(w);
  std::set<GroupKey> touched;
  for (const WinnerRow& w : from.winners) {
    groups[group_of(w)].push_back(w);
    touched.insert(group_of(w));
  }
  std::vector<WinnerRow> merged;
  for (auto& [key, ws] : groups) {
    std::vector<WinnerRow> resolved =
        touched.count(key) ? resolve_winners(ws, into, stats.winner_conflicts) : ws;
    for (auto& w : resolved) merged.push_back(std::move(w));
  }
  sort_winners(merged);
  into.winners = std::move(merged);
  // Segmented winners, group by group, by the same rule.
  std::map<SegGroupKey, std::vector<SegmentedWinnerRow>> seg_groups;
  for (const SegmentedWinnerRow& w : into.segmented_winners) seg_groups[group_of(w)].push_back(w);
  std::set<SegGroupKey> seg_touched;
  for (const SegmentedWinnerRow& w : from.segmented_winners) {
    seg_groups[group_of(w)].push_back(w);
    seg_touched.insert(group_of(w));
  }
  std::vector<SegmentedWinnerRow> seg_merged;
  std::int64_t seg_conflicts = 0;
  for (auto& [key, ws] : seg_groups) {
    std::vector<SegmentedWinnerRow> resolved =
        seg_touched.count(key) ? resolve_segmented_winners(ws, into, seg_conflicts) : ws;
    for (auto& w : resolved) seg_merged.push_back(std::move(w));
  }
  stats.winner_conflicts += seg_conflicts;
  stats.segmented_winner_conflicts += seg_conflicts;
  sort_segmented_winners(seg_merged);
  into.segmented_winners = std::move(seg_merged);
}

// --- writing -------------------------------------------------------------------------------------

namespace {

struct Ids {
  std::map<std::string, std::int64_t> source, device, run;
  std::map<GpuRow, std::int64_t> gpu;
  std::map<MeasurementRef, std::int64_t> measurement;
};

void insert_gpu(Connection& c, const GpuRow& g, Ids& ids) {
  Statement st = c.prepare("INSERT INTO gpus (uuid, device_id) VALUES (?1, ?2)");
  st.bind_all(g.uuid, ids.device.at(g.device_key)).run();
  ids.gpu[g] = c.last_insert_rowid();
}

void insert_source(Connection& c, const SourceRow& s, Ids& ids) {
  Statement st = c.prepare("INSERT INTO sources (path, kind) VALUES (?1, ?2)");
  st.bind_all(s.path, s.kind).run();
  ids.source[s.path] = c.last_insert_rowid();
}

void insert_device(Connection& c, const DeviceRow& d, Ids& ids) {
  const DeviceFingerprint& f = d.fingerprint;
  Statement st = c.prepare(
      "INSERT INTO devices (fingerprint, name, cc_major, cc_minor, sm_count, bus_width_bits,"
      " l2_bytes, ecc, total_mem_bytes, mem_clock_khz, theoretical_gbps, driver_version,"
      " runtime_version, first_seen, last_seen)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  st.bind_all(d.key, f.name, f.cc_major, f.cc_minor, f.sm_count, f.bus_width_bits, f.l2_bytes,
              f.ecc, f.total_mem_bytes, f.mem_clock_khz, d.theoretical_gbps, f.driver_version,
              f.runtime_version, d.first_seen, d.last_seen)
      .run();
  ids.device[d.key] = c.last_insert_rowid();
}

void update_device(Connection& c, const DeviceRow& d) {
  const DeviceFingerprint& f = d.fingerprint;
  Statement st = c.prepare(
      "UPDATE devices SET name = ?2, driver_version = ?3, runtime_version = ?4, first_seen = ?5,"
      " last_seen = ?6 WHERE fingerprint = ?1");
  st.bind_all(d.key, f.name, f.driver_version, f.runtime_version, d.first_seen, d.last_seen).run();
}

void insert_run(Connection& c, const RunRow& r, Ids& ids) {
  Statement st = c.prepare(
      "INSERT INTO runs (uuid, tool_version, manifest_hash, config_hash, host, origin, started_at,"
      " ended_at, status, l2_mode, driver_version, runtime_version, config_text)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  st.bind_all(r.uuid, r.info.tool_version, r.info.manifest_hash, r.info.config_hash, r.info.host,
              r.origin, r.started_at, r.ended_at, run_status_name(r.status),
              l2_mode_name(r.info.l2_mode), r.info.driver_version, r.info.runtime_version,
              r.info.config_text)
      .run();
  ids.run[r.uuid] = c.last_insert_rowid();
}

void update_run(Connection& c, const RunRow& r) {
  Statement st = c.prepare(
      "UPDATE runs SET ended_at = ?2, status = ?3, driver_version = ?4, runtime_version = ?5,"
      " config_text = ?6 WHERE uuid = ?1");
  st.bind_all(r.uuid, r.ended_at, run_status_name(r.status), r.info.driver_version,
              r.info.runtime_version, r.info.config_text)
      .run();
}

void write_run_links(Connection& c, const RunRow& r, Ids& ids) {
  Statement att = c.prepare(
      "INSERT INTO run_devices (run_id, device_id, attainable_gbps) VALUES (?1, ?2, ?3)"
      " ON CONFLICT (run_id, device_id) DO UPDATE SET attainable_gbps = excluded.attainable_gbps");
  for (const auto& [key, gbps] : r.attainable) {
    att.reset();
    att.bind_all(ids.run.at(r.uuid), ids.device.at(key), gbps).run();
  }
  Statement src =
      c.prepare("INSERT OR IGNORE INTO run_sources (run_id, source_id) VALUES (?1, ?2)");
  for (const auto& path : r.sources) {
    src.reset();
    src.bind_all(ids.run.at(r.uuid), ids.source.at(path)).run();
  }
}

// A measurement row's id is new in every file; its run, place in the run and device are found
// by their natural keys.
std::string insert_measurement_sql() {
  return "INSERT INTO measurements (run_id, seq, device_id, gpu_id, " +
         measurement_columns.names() + ") VALUES (?1, ?2, ?3, ?4, " +
         measurement_columns.parameters(5) + ")";
}

void bind_measurement_row(Statement& st, const MeasurementRow& row, const Ids& ids) {
  std::optional<std::int64_t> gpu;
  if (row.gpu_uuid) gpu = ids.gpu.at({*row.gpu_uuid, row.device_key});
  st.bind_all(ids.run.at(row.ref.run_uuid), row.ref.seq, ids.device.at(row.device_key), gpu);
  bind_measurement(st, 5, row.m);
}

void insert_winners(Connection& c, const std::vector<WinnerRow>& ws, const Ids& ids) {
  Statement st = c.prepare(
      "INSERT INTO winners (device_id, dtype, op, l2_mode, n_lo, n_hi, kernel_id, measurement_id,"
      " runner_up_kernel_id, runner_up_measurement_id, driver_version, runtime_version, run_id,"
      " source_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  for (const WinnerRow& w : ws) {
    std::optional<std::int64_t> runner_up, run, source;
    if (w.runner_up) runner_up = ids.measurement.at(*w.runner_up);
    if (w.run_uuid) run = ids.run.at(*w.run_uuid);
    if (w.source) source = ids.source.at(*w.source);
    st.reset();
    st.bind_all(ids.device.at(w.device_key), dtype_name(w.w.dtype), op_name(w.w.op),
                l2_mode_name(w.w.l2_mode), static_cast<std::int64_t>(w.w.n_lo),
                static_cast<std::int64_t>(w.w.n_hi), w.w.kernel_id, ids.measurement.at(w.evidence),
                w.w.runner_up_kernel_id, runner_up, w.w.driver_version, w.w.runtime_version, run,
                source)
        .run();
  }
}

void insert_segmented_winners(Connection& c, const std::vector<SegmentedWinnerRow>& ws,
                              const Ids& ids) {
  Statement st = c.prepare(
      "INSERT INTO segmented_winners (device_id, dtype, op, l2_mode, layout, size_lo, size_hi,"
      " count_lo, count_hi, kernel_id, measurement_id, runner_up_kernel_id,"
      " runner_up_measurement_id, driver_version, runtime_version, run_id, source_id)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)");
  for (const SegmentedWinnerRow& w : ws) {
    std::optional<std::int64_t> runner_up, run, source;
    if (w.runner_up) runner_up = ids.measurement.at(*w.runner_up);
    if (w.run_uuid) run = ids.run.at(*w.run_uuid);
    if (w.source) source = ids.source.at(*w.source);
    st.reset();
    st.bind_all(ids.device.at(w.device_key), dtype_name(w.w.dtype), op_name(w.w.op),
                l2_mode_name(w.w.l2_mode), w.w.layout, static_cast<std::int64_t>(w.w.size_lo),
                static_cast<std::int64_t>(w.w.size_hi), static_cast<std::int64_t>(w.w.count_lo),
                static_cast<std::int64_t>(w.w.count_hi), w.w.kernel_id,
                ids.measurement.at(w.evidence), w.w.runner_up_kernel_id, runner_up,
                w.w.driver_version, w.w.runtime_version, run, source)
        .run();
  }
}

void insert_bench_run(Connection& c, const BenchRunRow& b, const Ids& ids) {
  BenchRunRecord run = b;
  run.device_id = ids.device.at(b.device_key);
  Statement st = c.prepare("INSERT INTO bench_runs (" + bench_run_columns.names() + ") VALUES (" +
                           bench_run_columns.parameters(1) + ")");
  bind_bench_run(st, 1, run);
  st.run();
  const std::int64_t id = c.last_insert_rowid();
  Statement rs = c.prepare(insert_bench_result_sql(false)),
            ss = c.prepare(insert_bench_result_sql(true));
  for (BenchResultRecord r : b.results) {
    r.bench_run_id = id;
    Statement& st = r.segmented() ? ss : rs;
    st.reset();
    bind_bench_result(st, 1, r);
    st.run();
  }
}

std::vector<const BenchRunRow*> bench_runs_in_time_order(const Dataset& d) {
  std::vector<const BenchRunRow*> out;
  for (const auto& [uuid, b] : d.bench_runs) out.push_back(&b);
  std::sort(out.begin(), out.end(), [](const BenchRunRow* a, const BenchRunRow* b) {
    return std::tie(a->started_at, a->uuid) < std::tie(b->started_at, b->uuid);
  });
  return out;
}

std::vector<const RunRow*> runs_in_time_order(const Dataset& d) {
  std::vector<const RunRow*> runs;
  for (const auto& [uuid, r] : d.runs) runs.push_back(&r);
  std::sort(runs.begin(), runs.end(), [](const RunRow* a, const RunRow* b) {
    return std::tie(a->started_at, a->uuid) < std::tie(b->started_at, b->uuid);
  });
  return runs;
}

}  // namespace

void write_dataset(Database& db, const Dataset& d) {
  Connection& c = db.connection();
  Transaction tx(c, TxKind::immediate);
  Ids ids;
  for (const auto& [path, s] : d.sources) insert_source(c, s, ids);
  for (const auto& [key, dev] : d.devices) insert_device(c, dev, ids);
  for (const GpuRow& g : d.gpus) insert_gpu(c, g, ids);
  const auto runs = runs_in_time_order(d);
  for (const RunRow* r : runs) insert_run(c, *r, ids);
  for (const RunRow* r : runs) write_run_links(c, *r, ids);
  Statement st = c.prepare(insert_measurement_sql());
  for (const RunRow* r : runs) {
    for (auto it = d.measurements.lower_bound({r->uuid, 0});
         it != d.measurements.end() && it->first.run_uuid == r->uuid; ++it) {
      st.reset();
      bind_measurement_row(st, it->second, ids);
      st.run();
      ids.measurement[it->first] = c.last_insert_rowid();
    }
  }
  insert_winners(c, d.winners, ids);
  insert_segmented_winners(c, d.segmented_winners, ids);
  for (const BenchRunRow* b : bench_runs_in_time_order(d)) insert_bench_run(c, *b, ids);
  tx.commit();
}

MergeStats import_dataset(Database& db, const Dataset& incoming) {
  Connection& c = db.connection();
  Transaction tx(c, TxKind::immediate);
  const Dataset existing = read_dataset_in_tx(db);
  // Rows of the database that break the row rules would be taken for absent and written again:
  // the import is refused, naming them, until they are repaired (`db check` lists them all).
  if (!existing.skipped.empty())
    throw DbError(Problem::invalid_rows, db.path(),
                  fmt::format("{}: {} row(s) break the row rules or name such a row (the first: "
                              "{}); nothing was imported; `tunedreduce db check` lists them",
                              quoted(db.path()), existing.skipped.size(), existing.skipped[0]));
  Dataset merged = existing;
  MergeStats stats;
  merge_dataset(merged, incoming, stats);

  Ids ids;
  {
    Statement st = c.prepare("SELECT path, id FROM sources");
    while (st.step()) ids.source[st.column_text(0)] = st.column_int(1);
    Statement dv = c.prepare("SELECT fingerprint, id FROM devices");
    while (dv.step()) ids.device[dv.column_text(0)] = dv.column_int(1);
    Statement gp = c.prepare(
        "SELECT g.uuid, d.fingerprint, g.id FROM gpus g JOIN devices d ON d.id = g.device_id");
    while (gp.step()) ids.gpu[{gp.column_text(0), gp.column_text(1)}] = gp.column_int(2);
    Statement rn = c.prepare("SELECT uuid, id FROM runs");
    while (rn.step()) ids.run[rn.column_text(0)] = rn.column_int(1);
    Statement ms =
        c.prepare("SELECT r.uuid, m.seq, m.id FROM measurements m JOIN runs r ON r.id = m.run_id");
    while (ms.step()) ids.measurement[{ms.column_text(0), ms.column_int(1)}] = ms.column_int(2);
  }
  for (const auto& [path, s] : merged.sources)
    if (!existing.sources.count(path)) insert_source(c, s, ids);
  for (const auto& [key, dev] : merged.devices) {
    auto old = existing.devices.find(key);
    if (old == existing.devices.end()) insert_device(c, dev, ids);
    else if (device_json(old->second).dump() != device_json(dev).dump()) update_device(c, dev);
  }
  for (const GpuRow& g : merged.gpus)
    if (!existing.gpus.count(g)) insert_gpu(c, g, ids);
  for (const RunRow* r : runs_in_time_order(merged)) {
    auto old = existing.runs.find(r->uuid);
    if (old == existing.runs.end()) insert_run(c, *r, ids);
    else if (old->second.ended_at != r->ended_at || old->second.status != r->status ||
             old->second.info.driver_version != r->info.driver_version ||
             old->second.info.runtime_version != r->info.runtime_version ||
             old->second.info.config_text != r->info.config_text)
      update_run(c, *r);
    write_run_links(c, *r, ids);
  }
  Statement ins = c.prepare(insert_measurement_sql());
  for (const auto& [ref, m] : merged.measurements) {
    auto old = existing.measurements.find(ref);
    if (old == existing.measurements.end()) {
      ins.reset();
      bind_measurement_row(ins, m, ids);
      ins.run();
      ids.measurement[ref] = c.last_insert_rowid();
    } else if (measurement_json(old->second).dump() != measurement_json(m).dump()) {
      // Same identity, other content (see merge_dataset): the fixed choice replaces the row in
      // place, keeping its id.
      Statement st =
          c.prepare("UPDATE measurements SET device_id = ?3, gpu_id = ?4, " +
                    measurement_columns.assignments(5) + " WHERE run_id = ?1 AND seq = ?2");
      bind_measurement_row(st, m, ids);
      st.run();
    }
  }
  // Winner groups whose content changed are replaced whole.
  std::map<GroupKey, std::vector<const WinnerRow*>> before, after;
  for (const WinnerRow& w : existing.winners) before[group_of(w)].push_back(&w);
  for (const WinnerRow& w : merged.winners) after[group_of(w)].push_back(&w);
  for (const auto& [key, ws] : after) {
    auto dump = [](const std::vector<const WinnerRow*>& v) {
      std::string s;
      for (const WinnerRow* w : v) s += winner_json(*w).dump();
      return s;
    };
    auto old = before.find(key);
    if (old != before.end() && dump(old->second) == dump(ws)) continue;
    ++stats.winner_groups_changed;
    Statement del = c.prepare(
        "DELETE FROM winners WHERE device_id = ?1 AND dtype = ?2 AND op = ?3 AND l2_mode = ?4");
    del.bind_all(ids.device.at(key.device), key.dtype, key.op, key.l2_mode).run();
    std::vector<WinnerRow> rows;
    for (const WinnerRow* w : ws) rows.push_back(*w);
    insert_winners(c, rows, ids);
  }
  // Segmented winner groups whose content changed are replaced whole, as above.
  std::map<SegGroupKey, std::vector<const SegmentedWinnerRow*>> seg_before, seg_after;
  for (const SegmentedWinnerRow& w : existing.segmented_winners)
    seg_before[group_of(w)].push_back(&w);
  for (const SegmentedWinnerRow& w : merged.segmented_winners) seg_after[group_of(w)].push_back(&w);
  for (const auto& [key, ws] : seg_after) {
    auto dump = [](const std::vector<const SegmentedWinnerRow*>& v) {
      std::string s;
      for (const SegmentedWinnerRow* w : v) s += segmented_winner_json(*w).dump();
      return s;
    };
    auto old = seg_before.find(key);
    if (old != seg_before.end() && dump(old->second) == dump(ws)) continue;
    ++stats.winner_groups_changed;
    ++stats.segmented_winner_groups_changed;
    Statement del = c.prepare(
        "DELETE FROM segmented_winners WHERE device_id = ?1 AND dtype = ?2 AND op = ?3"
        " AND layout = ?4 AND l2_mode = ?5");
    del.bind_all(ids.device.at(key.device), key.dtype, key.op, key.layout, key.l2_mode).run();
    std::vector<SegmentedWinnerRow> rows;
    for (const SegmentedWinnerRow* w : ws) rows.push_back(*w);
    insert_segmented_winners(c, rows, ids);
  }
  // Bench runs: new ones inserted, changed ones (a running copy replaced by its end) rewritten.
  for (const BenchRunRow* b : bench_runs_in_time_order(merged)) {
    auto old = existing.bench_runs.find(b->uuid);
    if (old != existing.bench_runs.end()) {
      if (bench_run_json(old->second).dump() == bench_run_json(*b).dump()) continue;
      for (const char* table : {"bench_results", "segmented_bench_results"}) {
        Statement del_r = c.prepare(std::string("DELETE FROM ") + table +
                                    " WHERE bench_run_id = (SELECT id FROM bench_runs WHERE "
                                    "uuid = ?1)");
        del_r.bind_all(b->uuid).run();
      }
      Statement del = c.prepare("DELETE FROM bench_runs WHERE uuid = ?1");
      del.bind_all(b->uuid).run();
    }
    insert_bench_run(c, *b, ids);
  }
  tx.commit();
  return stats;
}

MergeStats merge_files(const std::vector<fs::path>& inputs, const fs::path& out) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out, ec)))
    throw DbError(Problem::exists, out,
                  quoted(out) + ": already exists; db merge writes a new file only");
  const fs::path folder = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (!fs::is_directory(folder, ec))
    throw DbError(Problem::missing_folder, out,
                  "cannot create " + quoted(out) + ": the folder " + quoted(folder) +
                      " does not exist");
  Dataset acc;
  MergeStats stats;
  // Every input's winners stay candidates until all inputs are read, and each group is decided
  // once over all of them: the noise-aware rule (resolve_winners) is a choice over the whole set,
  // not a total order, so deciding input by input would depend on the order of the inputs.
  std::map<GroupKey, std::vector<WinnerRow>> groups;
  std::map<SegGroupKey, std::vector<SegmentedWinnerRow>> seg_groups;
  for (const fs::path& in : inputs) {
    Database db = Database::open_reader(in);
    Dataset d = read_dataset(db);
    for (const std::string& line : d.skipped) stats.skipped.push_back(quoted(in) + ": " + line);
    add_provenance(d, in.string(), "merge");
    union_rows(acc, d, stats);
    for (WinnerRow& w : d.winners) groups[group_of(w)].push_back(std::move(w));
    for (SegmentedWinnerRow& w : d.segmented_winners)
      seg_groups[group_of(w)].push_back(std::move(w));
  }
  for (auto& [key, ws] : groups)
    for (WinnerRow& w : resolve_winners(ws, acc, stats.winner_conflicts))
      acc.winners.push_back(std::move(w));
  sort_winners(acc.winners);
  for (auto& [key, ws] : seg_groups)
    for (SegmentedWinnerRow& w :
         resolve_segmented_winners(ws, acc, stats.segmented_winner_conflicts))
      acc.segmented_winners.push_back(std::move(w));
  stats.winner_conflicts += stats.segmented_winner_conflicts;
  sort_segmented_winners(acc.segmented_winners);
  Database mem = Database::create_in_memory(out.string());
  write_dataset(mem, acc);
  // Written beside the target and linked into place only when complete: a merge that fails
  // (a full disk, a file-size limit) leaves nothing at \p out, and link(2) never replaces a file
  // that appeared meanwhile.
  fs::path tmp = out;
  tmp += ".tmp." + std::to_string(::getpid());
  auto remove_tmp = [&] {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    fs::remove(fs::path(tmp.string() + "-journal"), ignored);
  };
  remove_tmp();
  // Ctrl-C or SIGTERM during the write removes both (common/interrupt.hpp).
  const TempFileGuard tmp_on_signal(tmp), journal_on_signal(fs::path(tmp.string() + "-journal"));
  try {
    Statement vacuum = mem.connection().prepare("VACUUM INTO ?1");
    vacuum.bind(1, tmp.string()).run();
  } catch (...) {
    remove_tmp();
    throw;
  }
  if (::link(tmp.c_str(), out.c_str()) != 0) {
    const int err = errno;
    remove_tmp();
    if (err == EEXIST)
      throw DbError(Problem::exists, out,
                    quoted(out) + ": already exists; db merge writes a new file only");
    throw DbError(Problem::io, out, "cannot create " + quoted(out) + ": " + std::strerror(err));
  }
  remove_tmp();
  return stats;
}

}  // namespace tunedreduce::db
