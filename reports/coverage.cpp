// `report coverage`: keys asked for but not tuned, stale winners, failed candidates, and rows
// naming kernels this binary does not have.
//
// What a run asked for is read from the configuration it stored (runs.config_text, schema version
// 5: the canonical text of tuner/config/canonical.hpp): its types × operators, at its sizes, in
// its L2 mode, on the devices it tuned. Runs older than that stored only a hash, so for them it is
// inferred from what they measured: tune.toml's space is a cross product, so a run that measured
// some types and some operators on a device asked for every type × operator of those, at the sizes
// it measured for each. The manifest says which configurations exist. Everything is per L2 mode
// as well: a run measures in one mode, and winners of each mode cover that mode's sizes only.

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/names.hpp"
#include "db/statement.hpp"
#include "kernels/manifest.hpp"
#include "reports/kinds.hpp"
#include "reports/text.hpp"

namespace tunedreduce::reports::detail {

namespace {

struct KeyStats {
  std::set<std::int64_t> runs;                   // runs that asked for the key
  std::set<std::uint64_t> asked;                 // sizes a stored configuration asked for
  bool inferred = false;                         // a run without its configuration asked for it
  std::set<std::uint64_t> sizes;                 // measured, any outcome
  std::set<std::uint64_t> ok_sizes;              // with at least one ok measurement
  std::set<std::string> kernels;                 // distinct ids measured
  std::set<std::string> families;                // measured
  std::int64_t failed = 0;                       // measurements not ok
  std::vector<const db::WinnerRecord*> winners;  // its intervals
};

/// A report key and an L2 mode: the unit coverage is counted in.
struct ModeKey {
  std::int64_t device = 0;
  DType dtype = DType::i32;
  Op op = Op::sum;
  db::L2Mode l2 = db::L2Mode::cold;
  friend auto operator<=>(const ModeKey&, const ModeKey&) = default;
};

bool covered(const std::vector<const db::WinnerRecord*>& ws, std::uint64_t n) {
  return std::any_of(ws.begin(), ws.end(),
                     [n](const db::WinnerRecord* w) { return w->n_lo <= n && n <= w->n_hi; });
}

template <class T>
bool selected(const std::vector<T>& filter, T v) {
  return filter.empty() || std::find(filter.begin(), filter.end(), v) != filter.end();
}

Cell version_cell(int v) {
  Cell c = Cell::integer(v);
  c.text = cuda_version_text(v);
  return c;
}

/// What a run's stored configuration asked for: the lines space.dtypes, space.ops, space.sizes
/// and measure.l2 of its canonical text. Absent when one is missing or unreadable (a text this
/// binary does not understand): the run's keys are then inferred, as for a run without one.
struct AskedFor {
  std::set<DType> dtypes;
  std::set<Op> ops;
  std::set<std::uint64_t> sizes;
  db::L2Mode l2 = db::L2Mode::cold;
};

template <class T, class Parse>
bool parse_list(std::string_view value, std::set<T>& out, Parse parse) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view item = value.substr(0, comma);
    const std::optional<T> v = parse(item);
    if (!v) return false;
    out.insert(*v);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
  }
  return !out.empty();
}

std::optional<std::uint64_t> parse_size(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<AskedFor> asked_for(const std::string& config_text) {
  AskedFor a;
  bool dtypes = false, ops = false, sizes = false, l2 = false;
  std::string_view text = config_text;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "space.dtypes") dtypes = parse_list(value, a.dtypes, parse_dtype);
    else if (key == "space.ops") ops = parse_list(value, a.ops, parse_op);
    else if (key == "space.sizes") sizes = parse_list(value, a.sizes, parse_size);
    else if (key == "measure.l2") {
      const auto mode = db::parse_l2_mode(value);
      l2 = mode.has_value();
      if (mode) a.l2 = *mode;
    }
  }
  if (!dtypes || !ops || !sizes || !l2) return std::nullopt;
  return a;
}

struct FailureKey {
  std::int64_t device;
  DType dtype;
  Op op;
  db::L2Mode l2;
  std::string kernel;
  db::Outcome outcome;
  std::string error;
  friend auto operator<=>(const FailureKey&, const FailureKey&) = default;
};

struct FailureGroup {
  std::set<std::uint64_t> sizes;
  std::set<std::int64_t> runs;
  std::int64_t count = 0;
  std::string last_at;
};

}  // namespace

void build_coverage(db::Database& db, const Data& d, const ReportOptions& o, Report& r) {
  r.notes.push_back(
      "What was asked for is read from each run's stored configuration (runs recorded since "
      "schema version 5): its types × operators at its sizes, in its L2 mode, on the devices it "
      "tuned — 'asked' says 'configuration', and a size it asked for but never measured (an "
      "interrupted run) is listed. For older runs, which stored only a hash, it is inferred "
      "('asked' says 'inferred'): a run that measured some types and operators on a device asked "
      "for every type × operator of them (tune.toml's space is a cross product), at the sizes it "
      "measured for that key. Each L2 mode is a key of its own: a warm run asks for warm winners, "
      "which do not cover cold sizes. 'configurations' counts the distinct kernels measured at "
      "least once against the configurations this binary compiles for the key (the manifest).");

  std::set<std::int64_t> device_ids;
  for (const auto& dev : d.devices) device_ids.insert(dev.id);
  std::map<ModeKey, KeyStats> keys;

  // What each run asked for: its stored configuration where it has one; else the cross product
  // of the types and operators it measured, per device (and L2 mode, which is the run's).
  std::set<std::int64_t> configured;  // runs whose configuration says what they asked for
  {
    // The devices each run tuned: where it measured its attainable bandwidth or anything at all.
    std::map<std::int64_t, std::set<std::int64_t>> run_devices;
    for (const auto& [id, run] : d.runs)
      for (const auto& a : run.attainable) run_devices[id].insert(a.device_id);
    db::Statement devs =
        db.connection().prepare("SELECT DISTINCT run_id, device_id FROM measurements");
    while (devs.step()) run_devices[devs.column_int(0)].insert(devs.column_int(1));
    // A configuration's space.* lines are its whole-array keys; what it asks of [segmented]
    // (segmented.* lines, measured after them in the same run) is not this report's.
    for (const auto& [id, run] : d.runs) {
      if (!run.info.config_text) continue;
      const std::optional<AskedFor> asked = asked_for(*run.info.config_text);
      if (!asked) continue;
      configured.insert(id);
      for (std::int64_t dev : run_devices[id]) {
        if (!device_ids.count(dev)) continue;
        for (DType t : asked->dtypes)
          for (Op op : asked->ops)
            if (op_applies(t, op) && selected(o.dtypes, t) && selected(o.ops, op)) {
              KeyStats& k = keys[{dev, t, op, asked->l2}];
              k.runs.insert(id);
              k.asked.insert(asked->sizes.begin(), asked->sizes.end());
            }
      }
    }
  }
  {
    std::map<std::tuple<std::int64_t, std::int64_t, db::L2Mode>,
             std::pair<std::set<DType>, std::set<Op>>>
        per_run;
    // Whole-array measurements only: a segmented one (its id begins "seg."; the row rules give
    // exactly those a segment size) says nothing of the whole-array keys a run asked for.
    db::Statement st = db.connection().prepare(
        "SELECT DISTINCT run_id, device_id, dtype, op, l2_mode FROM measurements "
        "WHERE substr(kernel_id, 1, 4) <> 'seg.'");
    while (st.step()) {
      const std::int64_t dev = st.column_int(1);
      if (!device_ids.count(dev) || configured.count(st.column_int(0))) continue;
      const db::L2Mode l2 = db::parse_l2_mode(st.column_text(4)).value_or(db::L2Mode::cold);
      auto& [ts, os] = per_run[{st.column_int(0), dev, l2}];
      if (auto t = parse_dtype(st.column_text(2))) ts.insert(*t);
      if (auto op = parse_op(st.column_text(3))) os.insert(*op);
    }
    for (const auto& [rd, types_ops] : per_run) {
      const auto& [run_id, dev, l2] = rd;
      for (DType t : types_ops.first)
        for (Op op : types_ops.second)
          if (op_applies(t, op) && selected(o.dtypes, t) && selected(o.ops, op)) {
            KeyStats& k = keys[{dev, t, op, l2}];
            k.runs.insert(run_id);
            k.inferred = true;
          }
    }
  }
  std::map<std::int64_t, std::map<std::pair<DType, Op>, std::set<std::string>>> ok_kernels_at;
  std::map<FailureKey, FailureGroup> failures;
  std::map<std::pair<std::int64_t, std::string>, std::pair<std::int64_t, std::int64_t>> unknown;
  for (const auto& m : d.measurements) {
    KeyStats& k = keys[{m.device_id, m.dtype, m.op, m.l2_mode}];
    k.runs.insert(m.run_id);
    if (!configured.count(m.run_id)) k.inferred = true;
    k.sizes.insert(m.n);
    k.kernels.insert(m.kernel_id);
    k.families.insert(m.params.family);
    if (!kernels::manifest_find(m.kernel_id)) ++unknown[{m.device_id, m.kernel_id}].first;
    if (m.outcome == db::Outcome::ok) {
      k.ok_sizes.insert(m.n);
      continue;
    }
    ++k.failed;
    FailureGroup& g =
        failures[{m.device_id, m.dtype, m.op, m.l2_mode, m.kernel_id, m.outcome, m.error}];
    g.sizes.insert(m.n);
    g.runs.insert(m.run_id);
    ++g.count;
    g.last_at = std::max(g.last_at, m.measured_at);
  }
  for (const auto& w : d.winners) {
    keys[{w.device_id, w.dtype, w.op, w.l2_mode}].winners.push_back(&w);
    if (!kernels::manifest_find(w.kernel_id)) ++unknown[{w.device_id, w.kernel_id}].second;
  }
  if (keys.empty()) return;  // nothing in the selection: build_report says so

  std::map<std::pair<DType, Op>, std::size_t> compiled;
  std::map<std::pair<DType, Op>, std::set<std::string>> compiled_families;
  for (const auto& e : kernels::manifest()) {
    ++compiled[{e.params.dtype, e.params.op}];
    compiled_families[{e.params.dtype, e.params.op}].insert(kernels::family_name(e.params.family));
  }
  auto add_device_cols = [](Section& s) {
    s.columns.push_back(col("device", "device"));
    s.columns.push_back(col("fingerprint", "fingerprint", false, {}, Show::machines));
    s.columns.push_back(col("dtype", "type"));
    s.columns.push_back(col("op", "op"));
    s.columns.push_back(col("l2", "L2"));
  };
  auto device_cells = [&](std::int64_t dev, DType t, Op op, db::L2Mode l2) {
    return std::vector<Cell>{Cell::str(d.label(dev)).with_detail(d.full_label(dev)),
                             Cell::str(d.device(dev).key), Cell::str(dtype_name(t)),
                             Cell::str(op_name(op)), Cell::str(db::l2_mode_name(l2))};
  };

  // --- keys ---
  Section keys_s;
  keys_s.table = "keys";
  keys_s.title = "Keys asked for";
  add_device_cols(keys_s);
  keys_s.columns.push_back(col("status", "status"));
  keys_s.columns.push_back(col("asked", "asked", false, {}, Show::not_terminal));
  keys_s.columns.push_back(col("runs", "runs", true));
  keys_s.columns.push_back(col("sizes_asked", "sizes asked", true, {}, Show::not_terminal));
  keys_s.columns.push_back(col("sizes_measured", "sizes measured", true));
  keys_s.columns.push_back(col("sizes_tuned", "sizes tuned", true));
  keys_s.columns.push_back(col("winners", "intervals", true));
  keys_s.columns.push_back(col("stale_winners", "stale", true));
  keys_s.columns.push_back(col("configs_measured", "configurations", true));
  keys_s.columns.push_back(col("configs_compiled", "compiled", true));
  keys_s.columns.push_back(col("families_not_measured", "families never measured"));
  keys_s.columns.push_back(col("failed", "failed", true));

  Section not_tuned;
  not_tuned.table = "not_tuned";
  not_tuned.title = "Asked for but not tuned";
  not_tuned.empty_text = "every size asked for has a winner";
  add_device_cols(not_tuned);
  not_tuned.columns.push_back(col("reason", "reason"));
  not_tuned.columns.push_back(col("count", "sizes", true));
  not_tuned.columns.push_back(col("sizes", "which"));

  Section stale;
  stale.table = "stale";
  stale.title = "Stale winners (the driver or CUDA runtime changed since tuning)";
  stale.empty_text =
      "no stale winner: every winner was tuned with the device's current driver "
      "and runtime";
  add_device_cols(stale);
  stale.columns.push_back(col("intervals", "intervals", true));
  stale.columns.push_back(col("n_lo", "n from", true));
  stale.columns.push_back(col("n_hi", "n to", true));
  stale.columns.push_back(col("tuned_driver", "tuned: driver", true));
  stale.columns.push_back(col("tuned_runtime", "runtime", true));
  stale.columns.push_back(col("device_driver", "now: driver", true));
  stale.columns.push_back(col("device_runtime", "runtime", true));

  for (const auto& [key, k] : keys) {
    const auto& dev = d.device(key.device);
    std::set<std::uint64_t> tuned, no_winner, all_failed, never_measured;
    std::set<std::uint64_t> wanted = k.sizes;  // measured, or asked for by a configuration
    wanted.insert(k.asked.begin(), k.asked.end());
    for (std::uint64_t n : wanted) {
      if (covered(k.winners, n)) tuned.insert(n);
      else if (!k.sizes.count(n)) never_measured.insert(n);
      else if (k.ok_sizes.count(n)) no_winner.insert(n);
      else all_failed.insert(n);
    }
    // Stale winners, grouped by the versions they were tuned with.
    std::int64_t n_stale = 0;
    std::map<std::pair<int, int>, std::vector<const db::WinnerRecord*>> stale_by_version;
    for (const auto* w : k.winners)
      if (is_stale(*w, dev)) {
        ++n_stale;
        stale_by_version[{w->driver_version, w->runtime_version}].push_back(w);
      }
    for (const auto& [versions, ws] : stale_by_version) {
      auto row = device_cells(key.device, key.dtype, key.op, key.l2);
      std::uint64_t lo = ws.front()->n_lo, hi = ws.front()->n_hi;
      std::string kernels_list;
      for (const auto* w : ws) {
        lo = std::min(lo, w->n_lo);
        hi = std::max(hi, w->n_hi);
        kernels_list += (kernels_list.empty() ? "" : "\n") + w->kernel_id;
      }
      row.push_back(Cell::integer(static_cast<std::int64_t>(ws.size())).with_detail(kernels_list));
      row.push_back(Cell::count(lo));
      row.push_back(Cell::count(hi));
      row.push_back(
          version_cell(versions.first).marked(versions.first != dev.fingerprint.driver_version));
      row.push_back(
          version_cell(versions.second).marked(versions.second != dev.fingerprint.runtime_version));
      row.push_back(version_cell(dev.fingerprint.driver_version));
      row.push_back(version_cell(dev.fingerprint.runtime_version));
      stale.rows.push_back(std::move(row));
    }
    std::string status;
    if (k.sizes.empty() && k.winners.empty()) status = "not measured";
    else if (k.sizes.empty() && never_measured.empty())
      status = "tuned (winners only: imported or merged)";
    else if (tuned.size() == wanted.size()) status = "tuned";
    else if (!tuned.empty()) status = "partly tuned";
    else if (k.ok_sizes.empty()) status = "every candidate failed";
    else status = "no winner";

    std::size_t configs_known = 0;
    for (const auto& id : k.kernels)
      if (kernels::manifest_find(id)) ++configs_known;
    std::string missing_families;  // said only where something was measured
    if (!k.sizes.empty())
      for (const auto& f : compiled_families[{key.dtype, key.op}])
        if (!k.families.count(f)) missing_families += (missing_families.empty() ? "" : ", ") + f;

    auto row = device_cells(key.device, key.dtype, key.op, key.l2);
    row.push_back(Cell::str(status).marked(status != "tuned"));
    // Where the key's sizes came from: stored configurations, a guess for older runs, or both;
    // neither for a key that has only winners (imported or merged).
    if (!k.asked.empty())
      row.push_back(Cell::str(k.inferred ? "configuration, inferred" : "configuration"));
    else row.push_back(k.inferred ? Cell::str("inferred") : Cell::none());
    row.push_back(Cell::integer(static_cast<std::int64_t>(k.runs.size())));
    row.push_back(k.asked.empty() ? Cell::none()
                                  : Cell::integer(static_cast<std::int64_t>(k.asked.size())));
    row.push_back(Cell::integer(static_cast<std::int64_t>(k.sizes.size())));
    row.push_back(Cell::integer(static_cast<std::int64_t>(tuned.size())));
    row.push_back(Cell::integer(static_cast<std::int64_t>(k.winners.size())));
    row.push_back(Cell::integer(n_stale).marked(n_stale > 0));
    row.push_back(Cell::integer(static_cast<std::int64_t>(configs_known)));
    row.push_back(Cell::integer(static_cast<std::int64_t>(compiled[{key.dtype, key.op}])));
    row.push_back(missing_families.empty() ? Cell::none() : Cell::str(missing_families));
    row.push_back(Cell::integer(k.failed));
    keys_s.rows.push_back(std::move(row));

    auto add_not_tuned = [&](const std::string& reason, const std::set<std::uint64_t>& sizes) {
      auto nt = device_cells(key.device, key.dtype, key.op, key.l2);
      nt.push_back(Cell::str(reason));
      nt.push_back(Cell::integer(static_cast<std::int64_t>(sizes.size())));
      Cell c = Cell::str(sizes_value(sizes));
      c.text = sizes.empty() ? "—" : sizes_text(sizes);
      nt.push_back(std::move(c));
      not_tuned.rows.push_back(std::move(nt));
    };
    if (k.sizes.empty() && k.winners.empty() && k.asked.empty()) {
      std::string runs;
      for (std::int64_t id : k.runs) {
        auto it = d.runs.find(id);
        if (!runs.empty()) runs += ", ";
        runs += it != d.runs.end()
                    ? fmt::format("{} ({})", id, db::run_status_name(it->second.status))
                    : std::to_string(id);
      }
      add_not_tuned("not measured: its run(s) " + runs +
                        " measured other keys of this type × operator cross product",
                    {});
    }
    if (!never_measured.empty())
      add_not_tuned("asked for by the run's configuration, never measured", never_measured);
    if (!no_winner.empty()) add_not_tuned("measured, but no winner covers these sizes", no_winner);
    if (!all_failed.empty()) add_not_tuned("every candidate failed at these sizes", all_failed);
  }

  // --- failures ---
  Section fail;
  fail.table = "failures";
  fail.title = "Candidates that failed, and why";
  fail.empty_text = "no candidate failed";
  add_device_cols(fail);
  fail.columns.push_back(col("kernel", "kernel"));
  fail.columns.push_back(col("outcome", "outcome"));
  fail.columns.push_back(col("error", "error"));
  fail.columns.push_back(col("count", "times", true));
  fail.columns.push_back(col("sizes", "sizes"));
  fail.columns.push_back(col("later_ok", "later ok", true));
  fail.columns.push_back(col("last_at", "last", false, {}, Show::not_terminal));
  {
    // Sizes where the same kernel later (or elsewhere) measured ok: crashed and timeout are
    // retried on resume, so they may have been settled since.
    std::set<std::tuple<std::int64_t, DType, Op, db::L2Mode, std::string, std::uint64_t>> ok_at;
    for (const auto& m : d.measurements)
      if (m.outcome == db::Outcome::ok)
        ok_at.insert({m.device_id, m.dtype, m.op, m.l2_mode, m.kernel_id, m.n});
    for (const auto& [fk, g] : failures) {
      auto row = device_cells(fk.device, fk.dtype, fk.op, fk.l2);
      row.push_back(Cell::str(fk.kernel));
      row.push_back(Cell::str(db::outcome_name(fk.outcome)));
      row.push_back(fk.error.empty() ? Cell::none("(no message)") : Cell::str(fk.error));
      row.push_back(Cell::integer(g.count));
      Cell sizes = Cell::str(sizes_value(g.sizes));
      sizes.text = sizes_text(g.sizes, 4);
      row.push_back(std::move(sizes));
      std::int64_t later = 0;
      for (std::uint64_t n : g.sizes)
        later += ok_at.count({fk.device, fk.dtype, fk.op, fk.l2, fk.kernel, n});
      Cell lc = Cell::integer(later);
      lc.text = fmt::format("{} of {}", later, g.sizes.size());
      row.push_back(std::move(lc));
      row.push_back(Cell::str(g.last_at));
      fail.rows.push_back(std::move(row));
    }
  }

  // --- unknown kernels ---
  Section unk;
  unk.table = "unknown_kernels";
  unk.title = "Kernels this binary does not have";
  unk.empty_text = "every kernel id is in this binary's registry";
  unk.columns.push_back(col("device", "device"));
  unk.columns.push_back(col("fingerprint", "fingerprint", false, {}, Show::machines));
  unk.columns.push_back(col("kernel", "kernel"));
  unk.columns.push_back(col("measurements", "measurements", true));
  unk.columns.push_back(col("winners", "winners", true));
  for (const auto& [dk, counts] : unknown) {
    unk.rows.push_back({Cell::str(d.label(dk.first)).with_detail(d.full_label(dk.first)),
                        Cell::str(d.device(dk.first).key), Cell::str(dk.second),
                        Cell::integer(counts.first), Cell::integer(counts.second)});
  }

  r.sections.push_back(std::move(keys_s));
  r.sections.push_back(std::move(not_tuned));
  r.sections.push_back(std::move(stale));
  r.sections.push_back(std::move(fail));
  r.sections.push_back(std::move(unk));
}

}  // namespace tunedreduce::reports::detail
