// `report coverage`: keys asked for but not tuned, stale winners, failed candidates, and rows
// naming kernels this binary does not have.
//
// The database keeps a run's configuration only as a hash (runs.config_hash), so what a run
// asked for is inferred from what it measured: tune.toml's space is a cross product, so a run
// that measured some types and some operators on a device asked for every type × operator of
// those, at the sizes it measured for each. The manifest says which configurations exist.
// Everything is per L2 mode as well: a run measures in one mode, and winners of each mode cover
// that mode's sizes only.

#include <algorithm>
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
      "The database keeps each run's configuration only as a hash, so what was asked for is "
      "inferred: a run that measured some types and operators on a device asked for every type × "
      "operator of them (tune.toml's space is a cross product), at the sizes it measured for that "
      "key. Each L2 mode is a key of its own: a warm run asks for warm winners, which do not "
      "cover cold sizes. 'configurations' counts the distinct kernels measured at least once "
      "against the configurations this binary compiles for the key (the manifest).");

  std::set<std::int64_t> device_ids;
  for (const auto& dev : d.devices) device_ids.insert(dev.id);
  std::map<ModeKey, KeyStats> keys;

  // What each run asked for: the cross product of its types and operators, per device (and L2
  // mode, which is the run's).
  {
    std::map<std::tuple<std::int64_t, std::int64_t, db::L2Mode>,
             std::pair<std::set<DType>, std::set<Op>>>
        per_run;
    db::Statement st = db.connection().prepare(
        "SELECT DISTINCT run_id, device_id, dtype, op, l2_mode FROM measurements");
    while (st.step()) {
      const std::int64_t dev = st.column_int(1);
      if (!device_ids.count(dev)) continue;
      const db::L2Mode l2 = db::parse_l2_mode(st.column_text(4)).value_or(db::L2Mode::cold);
      auto& [ts, os] = per_run[{st.column_int(0), dev, l2}];
      if (auto t = parse_dtype(st.column_text(2))) ts.insert(*t);
      if (auto op = parse_op(st.column_text(3))) os.insert(*op);
    }
    for (const auto& [rd, types_ops] : per_run) {
      const auto& [run_id, dev, l2] = rd;
      for (DType t : types_ops.first)
        for (Op op : types_ops.second)
          if (selected(o.dtypes, t) && selected(o.ops, op))
            keys[{dev, t, op, l2}].runs.insert(run_id);
    }
  }
  std::map<std::int64_t, std::map<std::pair<DType, Op>, std::set<std::string>>> ok_kernels_at;
  std::map<FailureKey, FailureGroup> failures;
  std::map<std::pair<std::int64_t, std::string>, std::pair<std::int64_t, std::int64_t>> unknown;
  for (const auto& m : d.measurements) {
    KeyStats& k = keys[{m.device_id, m.dtype, m.op, m.l2_mode}];
    k.runs.insert(m.run_id);
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
  keys_s.columns.push_back(col("runs", "runs", true));
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
  stale.empty_text = "no stale winner: every winner was tuned with the device's current driver "
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
    std::set<std::uint64_t> tuned, no_winner, all_failed;
    for (std::uint64_t n : k.sizes) {
      if (covered(k.winners, n)) tuned.insert(n);
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
      row.push_back(version_cell(versions.first).marked(versions.first != dev.fingerprint.driver_version));
      row.push_back(version_cell(versions.second).marked(versions.second != dev.fingerprint.runtime_version));
      row.push_back(version_cell(dev.fingerprint.driver_version));
      row.push_back(version_cell(dev.fingerprint.runtime_version));
      stale.rows.push_back(std::move(row));
    }
    std::string status;
    if (k.sizes.empty() && k.winners.empty()) status = "not measured";
    else if (k.sizes.empty()) status = "tuned (winners only: imported or merged)";
    else if (tuned.size() == k.sizes.size()) status = "tuned";
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
    row.push_back(Cell::integer(static_cast<std::int64_t>(k.runs.size())));
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
    if (k.sizes.empty() && k.winners.empty()) {
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
