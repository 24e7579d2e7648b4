#include "deploy/budget.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/exit_codes.hpp"
#include "db/database.hpp"
#include "db/db_error.hpp"
#include "db/statement.hpp"

namespace tunedreduce::deploy {

namespace fs = std::filesystem;

double parse_tolerance(std::string_view text) {
  auto bad = [&](const char* why) {
    return Error(fmt::format("--tolerance '{}': {} (a percentage such as 1% or 0.5%)", text, why),
                 exit_code::usage);
  };
  std::string_view s = text;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (!s.empty() && s.back() == '%') s.remove_suffix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) throw bad("no number");
  double pct = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), pct);
  if (ec != std::errc() || end != s.data() + s.size()) throw bad("not a number");
  if (!std::isfinite(pct)) throw bad("not a finite number");
  if (pct < 0 || std::signbit(pct))
    throw bad("negative: a kernel slower than the best by less than 0 % is none");
  if (pct > 100) throw bad("more than 100 %");
  return pct / 100;
}

namespace {

using GroupKey = std::tuple<std::string, DType, Op, db::L2Mode>;

GroupKey group_of(const db::WinnerRow& w) { return {w.device_key, w.w.dtype, w.w.op, w.w.l2_mode}; }

/// The measurement of one kernel at one size that stands for it: the most repeated ok one, the
/// latest of equals in stored order (runs by start, then seq), as the tuner's resume reuses it.
struct Pick {
  const db::MeasurementRow* row = nullptr;
  std::tuple<std::string_view, std::string_view, std::int64_t> order;
  double median() const { return *row->m.median_us; }
};

/// Per size: each measured kernel's pick.
using Column = std::map<std::string_view, Pick>;
using Table = std::map<std::uint64_t, Column>;

std::map<GroupKey, Table> tables_of(const db::Dataset& d) {
  std::map<GroupKey, Table> tables;
  for (const auto& [ref, row] : d.measurements) {
    const db::Measurement& m = row.m;
    if (m.outcome != db::Outcome::ok || !m.median_us) continue;
    const auto run = d.runs.find(ref.run_uuid);
    Pick p{&row,
           {run != d.runs.end() ? std::string_view(run->second.started_at) : std::string_view(),
            ref.run_uuid, ref.seq}};
    Column& col = tables[{row.device_key, m.dtype, m.op, m.l2_mode}][m.n];
    auto [it, inserted] = col.try_emplace(m.kernel_id, p);
    if (inserted) continue;
    const Pick& have = it->second;
    if (m.repeats > have.row->m.repeats ||
        (m.repeats == have.row->m.repeats && p.order > have.order))
      it->second = p;
  }
  return tables;
}

const Pick* pick_at(const Table& t, std::uint64_t n, std::string_view kernel) {
  const auto col = t.find(n);
  if (col == t.end()) return nullptr;
  const auto it = col->second.find(kernel);
  return it == col->second.end() ? nullptr : &it->second;
}

/// A kernel that serves a row, and how close it is (for the greedy's ties).
struct Server {
  std::string kernel;
  double ratio_sum = 0;  // sum over the row's points of median / best
};

}  // namespace

std::string describe_row(const db::Dataset& d, const db::WinnerRow& w) {
  const auto dev = d.devices.find(w.device_key);
  const std::string device = dev != d.devices.end()
                                 ? dev->second.fingerprint.name + " (" + w.device_key + ")"
                                 : "device " + w.device_key;
  return fmt::format("{}: {} {} [{}, {}], L2 {}, kernel {}", device, dtype_name(w.w.dtype),
                     op_name(w.w.op), w.w.n_lo, w.w.n_hi, db::l2_mode_name(w.w.l2_mode),
                     w.w.kernel_id);
}

Budget choose_kernels(const db::Dataset& d, const BudgetOptions& opt) {
  if (!std::isfinite(opt.tolerance) || opt.tolerance < 0)
    throw Error(fmt::format("a kernel budget's tolerance must be a finite fraction of at least 0, "
                            "not {}",
                            opt.tolerance),
                exit_code::usage);
  auto known = [&](const std::string& id) -> std::optional<std::uint64_t> {
    return opt.max_elements ? opt.max_elements(id) : std::nullopt;
  };
  const std::map<GroupKey, Table> tables = tables_of(d);
  const Table empty_table;

  Budget b;
  b.tolerance = opt.tolerance;
  const std::size_t n_rows = d.winners.size();
  std::vector<std::vector<Server>> servers(n_rows);
  std::vector<std::uint64_t> evidence_n(n_rows);
  std::vector<const Table*> table_of(n_rows);
  b.rows.resize(n_rows);

  for (std::size_t i = 0; i < n_rows; ++i) {
    const db::WinnerRow& w = d.winners[i];
    RowChoice& rc = b.rows[i];
    rc.row = w;
    rc.description = describe_row(d, w);
    if (w.source) rc.description += " (from " + db::quoted(*w.source) + ")";
    const auto ev = d.measurements.find(w.evidence);
    if (ev == d.measurements.end() || ev->second.m.outcome != db::Outcome::ok ||
        !ev->second.m.median_us || ev->second.m.kernel_id != w.w.kernel_id ||
        ev->second.device_key != w.device_key || ev->second.m.l2_mode != w.w.l2_mode)
      throw Error("the winner for " + rc.description +
                      " has no ok measurement of its kernel as evidence: a kernel budget "
                      "compares the tuning run's measurements (`tunedreduce db check` counts "
                      "such rows)",
                  exit_code::db_check_failed);
    evidence_n[i] = ev->second.m.n;
    const auto t = tables.find(group_of(w));
    const Table& table = t != tables.end() ? t->second : empty_table;
    table_of[i] = &table;

    for (auto it = table.lower_bound(w.w.n_lo); it != table.end() && it->first <= w.w.n_hi; ++it)
      if (it->second.size() > 2) rc.points.push_back(it->first);
    if (std::find(rc.points.begin(), rc.points.end(), evidence_n[i]) == rc.points.end()) {
      rc.points.push_back(evidence_n[i]);
      std::sort(rc.points.begin(), rc.points.end());
    }
    std::vector<double> best;
    rc.compared = true;
    for (std::uint64_t n : rc.points) {
      const Column& col = table.at(n);
      double lo = std::numeric_limits<double>::infinity();
      bool other = false;
      for (const auto& [k, p] : col) {
        // The reference is what this registry can build (and the row's own kernel, whatever
        // registry it is of): a kernel of another registry is no choice of this deployment.
        const bool own = k == w.w.kernel_id;
        if (!own && !known(std::string(k))) continue;
        lo = std::min(lo, p.median());
        other = other || !own;
      }
      best.push_back(lo);
      rc.compared = rc.compared && other;
    }

    // Candidates: the kernels measured at the evidence's size (a server is measured at every
    // point, and that is one of them).
    for (const auto& [k, unused] : table.at(evidence_n[i])) {
      const std::string id(k);
      const std::optional<std::uint64_t> max_n = known(id);
      if (!max_n) continue;
      const bool own = id == w.w.kernel_id;
      if (!own && *max_n < w.w.n_hi) continue;
      Server s{id, 0};
      bool serves = true;
      for (std::size_t j = 0; j < rc.points.size() && serves; ++j) {
        const Pick* p = pick_at(table, rc.points[j], k);
        if (!p) {
          serves = own;  // its own kernel always serves its row
          continue;
        }
        s.ratio_sum += p->median() / best[j];
        serves = own || p->median() <= best[j] * (1 + opt.tolerance);
      }
      if (serves) servers[i].push_back(std::move(s));
    }
  }

  // Greedy cover of the rows, free kernels first.
  auto is_free = [&](const std::string& k) { return opt.free_kernels.count(k) > 0; };
  std::vector<bool> covered(n_rows, false);
  for (std::size_t i = 0; i < n_rows; ++i)
    for (const Server& s : servers[i])
      if (is_free(s.kernel)) covered[i] = true;
  std::vector<std::string> chosen;
  std::set<std::string> in_set;
  for (;;) {
    std::map<std::string, std::pair<std::size_t, double>> gain;  // points, ratio sum
    for (std::size_t i = 0; i < n_rows; ++i) {
      if (covered[i]) continue;
      for (const Server& s : servers[i]) {
        auto& g = gain[s.kernel];
        g.first += b.rows[i].points.size();
        g.second += s.ratio_sum;
      }
    }
    if (gain.empty()) break;  // every row covered, or the rest have no kernel at all
    auto best = gain.begin();
    for (auto it = std::next(gain.begin()); it != gain.end(); ++it)
      if (it->second.first > best->second.first ||
          (it->second.first == best->second.first && it->second.second < best->second.second))
        best = it;  // (ids ascend: the first of equals is the smaller id)
    chosen.push_back(best->first);
    in_set.insert(best->first);
    for (std::size_t i = 0; i < n_rows; ++i)
      if (!covered[i])
        for (const Server& s : servers[i])
          if (s.kernel == best->first) covered[i] = true;
  }
  // A kernel chosen early may have been made redundant by later ones.
  auto in_library = [&](const std::string& k) { return in_set.count(k) > 0 || is_free(k); };
  for (auto k = chosen.rbegin(); k != chosen.rend(); ++k) {
    bool needed = false;
    for (std::size_t i = 0; i < n_rows && !needed; ++i) {
      const auto& sv = servers[i];
      if (std::none_of(sv.begin(), sv.end(), [&](const Server& s) { return s.kernel == *k; }))
        continue;
      needed = std::none_of(sv.begin(), sv.end(), [&](const Server& s) {
        return s.kernel != *k && in_library(s.kernel);
      });
    }
    if (!needed) in_set.erase(*k);
  }

  // Each row: the fastest serving kernel of the library at its evidence's size.
  for (std::size_t i = 0; i < n_rows; ++i) {
    RowChoice& rc = b.rows[i];
    const db::WinnerRow& w = d.winners[i];
    const Table& table = *table_of[i];
    if (known(w.w.kernel_id)) b.original_kernels.insert(w.w.kernel_id);
    const Server* pick = nullptr;
    double pick_median = 0;
    for (const Server& s : servers[i]) {
      if (!in_library(s.kernel)) continue;
      const double m = pick_at(table, evidence_n[i], s.kernel)->median();
      const bool better =
          !pick || m < pick_median ||
          (m == pick_median && (s.kernel == w.w.kernel_id ||
                                (pick->kernel != w.w.kernel_id && s.kernel < pick->kernel)));
      if (better) {
        pick = &s;
        pick_median = m;
      }
    }
    DeviceSummary& dev = b.devices[w.device_key];
    if (dev.name.empty()) {
      const auto it = d.devices.find(w.device_key);
      dev.name = (it != d.devices.end() ? it->second.fingerprint.name : std::string("device")) +
                 " (" + w.device_key + ")";
    }
    ++dev.rows;
    if (!rc.compared) ++dev.uncompared;
    if (!pick) {
      ++dev.dropped;
      ++b.dropped;
      continue;
    }
    rc.chosen = pick->kernel;
    b.kernels.insert(pick->kernel);
    if (pick->kernel == w.w.kernel_id) continue;
    rc.chosen_evidence = pick_at(table, evidence_n[i], pick->kernel)->row->ref;
    ++dev.changed;
    ++b.changed;
    std::optional<double> worst;
    for (std::uint64_t n : rc.points) {
      const Pick* c = pick_at(table, n, pick->kernel);
      const Pick* o = pick_at(table, n, w.w.kernel_id);
      if (!c || !o) continue;
      const double s = c->median() / o->median() - 1;
      if (!worst || s > *worst) worst = s;
    }
    rc.slowdown = worst;
    if (worst && (!dev.worst_slowdown || *worst > *dev.worst_slowdown)) {
      dev.worst_slowdown = worst;
      dev.worst_row = fmt::format("{} {} [{}, {}], L2 {}: {} -> {}", dtype_name(w.w.dtype),
                                  op_name(w.w.op), w.w.n_lo, w.w.n_hi,
                                  db::l2_mode_name(w.w.l2_mode), w.w.kernel_id, pick->kernel);
    }
  }
  return b;
}

db::Dataset apply_budget(const db::Dataset& merged, const Budget& budget) {
  if (budget.rows.size() != merged.winners.size())
    throw Error("internal error: a kernel budget of another set of winners", exit_code::failure);
  db::Dataset out = merged;
  out.winners.clear();
  for (std::size_t i = 0; i < merged.winners.size(); ++i) {
    const RowChoice& rc = budget.rows[i];
    if (!rc.chosen) continue;
    db::WinnerRow w = merged.winners[i];
    if (*rc.chosen != w.w.kernel_id) {
      w.w.runner_up_kernel_id = w.w.kernel_id;
      w.runner_up = w.evidence;
      w.w.kernel_id = *rc.chosen;
      w.evidence = *rc.chosen_evidence;
    }
    out.winners.push_back(std::move(w));
  }
  return out;
}

namespace {

/// Removes a scratch file (and SQLite's journal beside it) when it goes out of scope.
struct Scratch {
  fs::path path;
  explicit Scratch(fs::path p) : path(std::move(p)) { remove(); }
  ~Scratch() { remove(); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void remove() const {
    std::error_code ignored;
    fs::remove(path, ignored);
    fs::remove(fs::path(path.string() + "-journal"), ignored);
  }
};

fs::path folder_of(const fs::path& p) {
  return p.parent_path().empty() ? fs::path(".") : p.parent_path();
}

/// Every winner of \p path has an ok measurement of its kernel as evidence.
void check_evidence(const fs::path& path) {
  db::Database db = db::Database::open_reader(path);
  std::map<std::int64_t, std::string> names;
  for (const db::DeviceRecord& dev : db.devices())
    names[dev.id] = dev.fingerprint.name + " (" + dev.key + ")";
  for (const db::WinnerRecord& w : db.winners()) {
    const std::optional<db::MeasurementRecord> m = db.find_measurement(w.measurement_id);
    std::string why;
    if (!m)
      why = fmt::format("its evidence, measurement {}, is not in the database", w.measurement_id);
    else if (m->outcome != db::Outcome::ok || !m->median_us)
      why = fmt::format("its evidence, measurement {}, is '{}', not ok", w.measurement_id,
                        db::outcome_name(m->outcome));
    else if (m->kernel_id != w.kernel_id)
      why = fmt::format("its evidence, measurement {}, is of another kernel ({})", w.measurement_id,
                        m->kernel_id);
    if (why.empty()) continue;
    throw Error(fmt::format("{}: the winner for {}: {} {} [{}, {}], L2 {}, kernel {} has no "
                            "measurement to compare: {}. A kernel budget compares the tuning "
                            "run's measurements (`tunedreduce db check` counts such rows)",
                            db::quoted(path), names[w.device_id], dtype_name(w.dtype),
                            op_name(w.op), w.n_lo, w.n_hi, db::l2_mode_name(w.l2_mode), w.kernel_id,
                            why),
                exit_code::db_check_failed);
  }
}

void write_database(const db::Dataset& d, const fs::path& out) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out, ec)))
    throw db::DbError(db::Problem::exists, out,
                      db::quoted(out) + ": already exists; deploy writes a new database only");
  db::Database mem = db::Database::create_in_memory(out.string());
  db::write_dataset(mem, d);
  // Complete beside the target, then linked into place (link never replaces a file), as a merge.
  const Scratch tmp(fs::path(out.string() + ".tmp." + std::to_string(::getpid())));
  db::Statement vacuum = mem.connection().prepare("VACUUM INTO ?1");
  vacuum.bind(1, tmp.path.string()).run();
  if (::link(tmp.path.c_str(), out.c_str()) != 0) {
    const int err = errno;
    if (err == EEXIST)
      throw db::DbError(db::Problem::exists, out,
                        db::quoted(out) + ": already exists; deploy writes a new database only");
    throw db::DbError(db::Problem::io, out,
                      "cannot create " + db::quoted(out) + ": " + std::strerror(err));
  }
}

}  // namespace

db::Dataset merge_inputs(const std::vector<fs::path>& inputs, const fs::path& scratch_dir) {
  const Scratch merged(scratch_dir /
                       ("tunedreduce-deploy-merge." + std::to_string(::getpid()) + ".db"));
  db::merge_files(inputs, merged.path);
  db::Database db = db::Database::open_reader(merged.path);
  return db::read_dataset(db);
}

Budget deploy_database(const std::vector<fs::path>& inputs, const fs::path& out,
                       const BudgetOptions& opt) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out, ec)))
    throw db::DbError(db::Problem::exists, out,
                      db::quoted(out) + ": already exists; deploy writes a new database only");
  if (!fs::is_directory(folder_of(out), ec))
    throw db::DbError(db::Problem::missing_folder, out,
                      "cannot create " + db::quoted(out) + ": the folder " +
                          db::quoted(folder_of(out)) + " does not exist");
  for (const fs::path& in : inputs) check_evidence(in);
  const db::Dataset merged = merge_inputs(inputs, folder_of(out));
  Budget b = choose_kernels(merged, opt);
  write_database(apply_budget(merged, b), out);
  return b;
}

}  // namespace tunedreduce::deploy
