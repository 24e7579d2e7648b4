#include "reports/data.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "common/error.hpp"
#include "kernels/registry.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// The devices one --device value selects: an exact fingerprint key, else an exact name, else a
// unique fingerprint prefix (4+ hex digits), else every device whose name contains the value.
std::vector<std::int64_t> match_device(const std::vector<db::DeviceRecord>& all,
                                       const std::string& want) {
  const std::string w = lower(want);
  std::vector<std::int64_t> out;
  for (const auto& d : all)
    if (lower(d.key) == w) return {d.id};
  for (const auto& d : all)
    if (lower(d.fingerprint.name) == w) out.push_back(d.id);
  if (!out.empty()) return out;
  if (w.size() >= 4 && is_hex(w)) {
    for (const auto& d : all)
      if (lower(d.key).starts_with(w)) out.push_back(d.id);
    if (out.size() == 1) return out;
    out.clear();
  }
  if (!w.empty())
    for (const auto& d : all)
      if (lower(d.fingerprint.name).find(w) != std::string::npos) out.push_back(d.id);
  return out;
}

std::string device_list(const std::vector<db::DeviceRecord>& all) {
  if (all.empty()) return "the database has no devices";
  std::string s = "the database has ";
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i) s += ", ";
    s += "'" + terminal_escape(all[i].fingerprint.name) + "' (" + all[i].key + ")";
  }
  return s;
}

template <class T>
bool selected(const std::vector<T>& filter, T v) {
  return filter.empty() || std::find(filter.begin(), filter.end(), v) != filter.end();
}

}  // namespace

const db::DeviceRecord& Data::device(std::int64_t id) const {
  for (const auto& d : devices)
    if (d.id == id) return d;
  throw Error(fmt::format("internal: device {} is not selected", id));
}

const db::MeasurementRecord* Data::measurement(std::int64_t id) const {
  auto it = by_id.find(id);
  return it == by_id.end() ? nullptr : &measurements[it->second];
}

const db::MeasurementRecord* Data::segmented_measurement(std::int64_t id) const {
  auto it = segmented_by_id.find(id);
  return it == segmented_by_id.end() ? nullptr : &segmented[it->second];
}

bool is_segmented(const db::MeasurementRecord& m) {
  return m.segment_size.has_value() || std::string_view(m.kernel_id).starts_with("seg.");
}

std::optional<double> Data::attainable(std::optional<std::int64_t> run,
                                       std::int64_t device_id) const {
  if (!run) return std::nullopt;
  auto it = runs.find(*run);
  if (it == runs.end()) return std::nullopt;
  for (const auto& a : it->second.attainable)
    if (a.device_id == device_id && a.gbps > 0) return a.gbps;
  return std::nullopt;
}

std::string Data::label(std::int64_t id) const {
  auto it = labels.find(id);
  return it == labels.end() ? std::to_string(id) : it->second;
}

std::string Data::full_label(std::int64_t id) const {
  const auto& d = device(id);
  return d.fingerprint.name + " (" + d.key + ")";
}

std::map<Key, std::vector<const db::MeasurementRecord*>> Data::ok_by_key() const {
  std::map<Key, std::vector<const db::MeasurementRecord*>> out;
  for (const auto& m : measurements)
    if (m.outcome == db::Outcome::ok && m.l2_mode == l2 && m.median_us && *m.median_us > 0)
      out[{m.device_id, m.dtype, m.op}].push_back(&m);
  return out;
}

Data load_data(db::Database& db, const ReportOptions& o) {
  Data d;
  d.path = db.path().string();
  d.counts = db.counts();
  const std::vector<db::DeviceRecord> all = db.devices();

  std::set<std::int64_t> chosen;
  for (const std::string& want : o.devices) {
    const auto ids = match_device(all, want);
    if (ids.empty())
      throw Error("unknown device '" + terminal_escape(want) + "': " + device_list(all),
                  exit_code::usage);
    chosen.insert(ids.begin(), ids.end());
  }
  std::map<std::string, int> name_count;
  for (const auto& dev : all) ++name_count[dev.fingerprint.name];
  for (const auto& dev : all) {
    d.labels[dev.id] = dev.fingerprint.name;
    if (name_count[dev.fingerprint.name] > 1) d.labels[dev.id] += " [" + dev.key.substr(0, 8) + "]";
    if (o.devices.empty() || chosen.count(dev.id)) d.devices.push_back(dev);
  }

  for (auto& r : db.runs()) d.runs.emplace(r.id, std::move(r));
  for (auto& g : db.gpus()) d.gpus.emplace(g.id, std::move(g));  // none before version 5

  for (const auto& dev : d.devices) {
    db::MeasurementFilter f;
    f.device_id = dev.id;
    if (o.dtypes.size() == 1) f.dtype = o.dtypes.front();
    if (o.ops.size() == 1) f.op = o.ops.front();
    for (auto& m : db.measurements(f))
      if (selected(o.dtypes, m.dtype) && selected(o.ops, m.op))
        (is_segmented(m) ? d.segmented : d.measurements).push_back(std::move(m));
    // The database gives a device's winners by the names' text (f64 before i32, argmax before
    // sum); the report takes them in the types' and operators' order (i32 ... bf16, sum ...
    // argmax), as its sections and charts are, then by L2 mode (cold first) and n_lo.
    const std::size_t first = d.winners.size();
    for (auto& w : db.winners(dev.id))
      if (selected(o.dtypes, w.dtype) && selected(o.ops, w.op)) d.winners.push_back(std::move(w));
    std::stable_sort(d.winners.begin() + static_cast<std::ptrdiff_t>(first), d.winners.end(),
                     [](const db::WinnerRecord& a, const db::WinnerRecord& b) {
                       return std::tuple(a.dtype, a.op, a.l2_mode, a.n_lo) <
                              std::tuple(b.dtype, b.op, b.l2_mode, b.n_lo);
                     });
  }
  for (std::size_t i = 0; i < d.measurements.size(); ++i) d.by_id[d.measurements[i].id] = i;
  for (std::size_t i = 0; i < d.segmented.size(); ++i) d.segmented_by_id[d.segmented[i].id] = i;
  d.schema_version = db.file_schema_version();
  if (o.kind == Kind::segmented)  // none in a file older than version 12
    for (const auto& dev : d.devices)
      for (auto& w : db.segmented_winners(dev.id))
        if (selected(o.dtypes, w.dtype) && selected(o.ops, w.op))
          d.segmented_winners.push_back(std::move(w));

  // Bench runs (schema version 4; none in a version-3 file) of the selected devices, and their
  // results of the selected types and operators. For every (key, size) the latest run that has
  // it counts: a rerun replaces an older measurement rather than mixing with it.
  std::set<std::int64_t> device_ids;
  for (const auto& dev : d.devices) device_ids.insert(dev.id);
  for (auto& run : db::bench_runs(db))
    if (device_ids.count(run.device_id)) d.bench_runs.push_back(std::move(run));
  std::map<std::int64_t, std::size_t> run_index;
  for (std::size_t i = 0; i < d.bench_runs.size(); ++i) run_index[d.bench_runs[i].id] = i;
  for (auto& r : db::bench_results(db))
    if (run_index.count(r.bench_run_id) && selected(o.dtypes, r.dtype) && selected(o.ops, r.op))
      d.bench_results.push_back(std::move(r));
  // None in a file older than version 13; `bench` only counts them.
  if (o.kind == Kind::segmented || o.kind == Kind::bench)
    for (auto& r : db::segmented_bench_results(db))
      if (run_index.count(r.bench_run_id) && selected(o.dtypes, r.dtype) && selected(o.ops, r.op))
        d.segmented_bench.push_back(std::move(r));
  d.bench_run_index = run_index;
  for (const auto& r : d.bench_results) {
    const db::BenchRunRecord& run = d.bench_runs[run_index.at(r.bench_run_id)];
    BenchPoint& p = d.bench[{run.device_id, r.dtype, r.op, run.info.l2}][r.n];
    if (p.run && p.run != &run) {
      // Runs are in id order: a later run replaces the point whole.
      if (p.run->started_at > run.started_at) continue;
      if (p.run->id != run.id) p = BenchPoint{};
    }
    p.run = &run;
    p.by_method[static_cast<std::size_t>(r.method)] = &r;
  }

  // The L2 mode from the measurements the kind reads: the segmented ones for `segmented`, the
  // whole-array ones for every other kind.
  bool cold = false, warm = false;
  for (const auto& m : o.kind == Kind::segmented ? d.segmented : d.measurements)
    if (m.outcome == db::Outcome::ok) (m.l2_mode == db::L2Mode::cold ? cold : warm) = true;
  d.both_l2_modes = cold && warm;
  if (o.l2) {
    d.l2 = *o.l2;
  } else {
    d.l2 = cold || !warm ? db::L2Mode::cold : db::L2Mode::warm;
    d.l2_chosen = true;
  }
  return d;
}

std::optional<double> BenchPoint::median(db::BenchMethod m) const {
  const db::BenchResultRecord* r = get(m);
  if (!r || !r->verified || !r->median_us || *r->median_us <= 0) return std::nullopt;
  return r->median_us;
}

std::optional<double> BenchPoint::speedup_vs_cub(db::BenchMethod m) const {
  const auto cub = median(db::BenchMethod::cub), x = median(m);
  if (!cub || !x) return std::nullopt;
  return *cub / *x;
}

const db::BenchRunRecord* Data::bench_run(std::int64_t id) const {
  auto it = bench_run_index.find(id);
  return it == bench_run_index.end() ? nullptr : &bench_runs[it->second];
}

const BenchPoint* Data::bench_at(const Key& key, std::uint64_t n, db::L2Mode mode) const {
  const db::BenchL2 l2 = mode == db::L2Mode::warm ? db::BenchL2::warm : db::BenchL2::cold;
  auto it = bench.find({key.device, key.dtype, key.op, l2});
  if (it == bench.end()) return nullptr;
  auto jt = it->second.find(n);
  return jt == it->second.end() ? nullptr : &jt->second;
}

std::optional<double> spread_pct(std::optional<double> median, std::optional<double> p10,
                                 std::optional<double> p90) {
  if (!median || !p10 || !p90 || *median <= 0) return std::nullopt;
  return 100 * std::max(0.0, *p90 - *p10) / *median;
}

std::string spread_detail(std::optional<double> p10, std::optional<double> p90, int repeats) {
  if (!p10 || !p90) return "no p10/p90 recorded";
  return fmt::format("p10 {} µs, p90 {} µs, {} repeats", fixed(*p10, 2), fixed(*p90, 2), repeats);
}

double noise_tolerance(std::optional<double> median_a, std::optional<double> p10_a,
                       std::optional<double> p90_a, int repeats_a, std::optional<double> median_b,
                       std::optional<double> p10_b, std::optional<double> p90_b, int repeats_b) {
  return noise_band(RepeatStats{median_a, p10_a, p90_a, repeats_a},
                    RepeatStats{median_b, p10_b, p90_b, repeats_b}, 0.005,
                    std::numeric_limits<double>::infinity());
}

std::optional<double> gbps_of(const db::MeasurementRecord& m) {
  if (m.gbps && std::isfinite(*m.gbps) && *m.gbps > 0) return m.gbps;
  return tunedreduce::gbps_of(m.n * dtype_size(m.dtype), m.median_us);
}

double us_per_element(const db::MeasurementRecord& m) {
  return m.median_us && m.n ? *m.median_us / static_cast<double>(m.n) : INFINITY;
}

bool faster(const db::MeasurementRecord& a, const db::MeasurementRecord& b) {
  const double ta = us_per_element(a), tb = us_per_element(b);
  if (ta != tb) return ta < tb;
  return a.kernel_id < b.kernel_id;
}

int family_rank(const std::string& family) {
  const auto f = kernels::parse_family(family);
  if (!f) return -1;
  for (std::size_t i = 0; i < std::size(kernels::all_families); ++i)
    if (kernels::all_families[i] == *f) return static_cast<int>(i);
  return -1;
}

std::vector<std::string> family_order(const std::set<std::string>& present) {
  std::vector<std::string> out(present.begin(), present.end());
  std::stable_sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    const int ra = family_rank(a), rb = family_rank(b);
    if ((ra < 0) != (rb < 0)) return ra >= 0;  // known families first
    if (ra >= 0) return ra < rb;
    return a < b;
  });
  return out;
}

std::uint64_t nearest_size(const std::set<std::uint64_t>& sizes, std::uint64_t want) {
  std::uint64_t best = 0;
  double best_d = INFINITY;
  for (std::uint64_t n : sizes) {
    const double dist =
        std::fabs(std::log2(static_cast<double>(n)) - std::log2(static_cast<double>(want)));
    if (dist < best_d - 1e-12) {
      best = n;
      best_d = dist;
    }
  }
  return best;
}

std::string key_text(DType d, Op o) { return std::string(dtype_name(d)) + " " + op_name(o); }

}  // namespace tunedreduce::reports::detail
