#include "db/bench.hpp"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <limits>

#include "common/enum_names.hpp"
#include "common/names.hpp"
#include "db/columns.hpp"
#include "db/db_error.hpp"
#include "db/row_rules.hpp"
#include "db/schema.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"

namespace tunedreduce::db {

namespace {

constexpr auto bench_l2_names = enum_names<BenchL2>(
    {{BenchL2::cold, "cold"}, {BenchL2::dirty, "dirty"}, {BenchL2::warm, "warm"}});
constexpr auto bench_method_names = enum_names<BenchMethod>({{BenchMethod::cached, "cached"},
                                                             {BenchMethod::two_phase, "two_phase"},
                                                             {BenchMethod::cub, "cub"},
                                                             {BenchMethod::thrust, "thrust"},
                                                             {BenchMethod::floor, "floor"}});
static_assert(bench_l2_names.lists_all_through(BenchL2::warm));
static_assert(bench_method_names.lists_all_through(BenchMethod::floor));

void require_writable(Database& db, const char* what) {
  if (!db.writable())
    throw DbError(Problem::readonly, db.path(),
                  quoted(db.path()) + ": opened read-only, cannot " + std::string(what));
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

std::int64_t begin_in_tx(Connection& c, std::int64_t device_id, const BenchRunInfo& info,
                         int driver_version, int runtime_version) {
  if (info.repeats < 1)
    throw DbError(Problem::invalid_data, c.path(),
                  quoted(c.path()) + ": a bench run needs at least one repeat");
  BenchRunRecord run;
  run.uuid = random_uuid();
  run.device_id = device_id;
  run.info = info;
  if (run.info.host.empty()) run.info.host = host_name();
  run.origin = c.path().string();
  run.driver_version = driver_version;
  run.runtime_version = runtime_version;
  run.started_at = utc_timestamp();
  run.status = RunStatus::running;
  Statement st = c.prepare("INSERT INTO bench_runs (" + bench_run_columns.names() + ") VALUES (" +
                           bench_run_columns.parameters(1) + ")");
  bind_bench_run(st, 1, run);
  st.run();
  return c.last_insert_rowid();
}

std::int64_t insert_in_tx(Connection& c, std::int64_t run, const BenchResult& r) {
  const std::string file = quoted(c.path());
  const std::string what =
      std::string(bench_method_name(r.method)) + " at " + dtype_name(r.dtype) + " " +
      op_name(r.op) + " n = " + std::to_string(r.n) +
      (r.segmented() ? " in segments of " + std::to_string(*r.segment_size) + " (" + r.layout + ")"
                     : std::string());
  if (const std::string why = op_dtype_mismatch(r.dtype, r.op); !why.empty())
    throw DbError(Problem::invalid_data, c.path(), file + ": bench result " + what + ": " + why);
  if (r.verified && (!r.median_us || !r.error.empty()))
    throw DbError(Problem::invalid_data, c.path(),
                  file + ": bench result " + what +
                      (r.median_us ? " is verified but has an error"
                                   : " is verified but has no median"));
  if (!r.verified && r.error.empty())
    throw DbError(Problem::invalid_data, c.path(),
                  file + ": bench result " + what + " is not verified and says no why");
  if (r.n == 0 || r.n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw DbError(Problem::invalid_data, c.path(), file + ": bench result " + what + ": bad n");
  if (r.segmented()) {
    if (*r.segment_size < 1 || *r.segment_size > r.n)
      throw DbError(Problem::invalid_data, c.path(),
                    file + ": bench result " + what + ": the segment size must be 1..n");
    if (auto why = bad_layout_name(r.layout))
      throw DbError(Problem::invalid_data, c.path(),
                    file + ": bench result " + what + ": '" + r.layout + "' " + *why);
    if (r.method == BenchMethod::thrust)
      throw DbError(Problem::invalid_data, c.path(),
                    file + ": bench result " + what + ": Thrust has no segmented reduction");
    if (!has_table(c, "segmented_bench_results"))
      throw DbError(Problem::too_old, c.path(),
                    file +
                        ": segmented bench results need schema version 13 (`tunedreduce db "
                        "migrate` upgrades the file)");
  } else if (!r.layout.empty()) {
    throw DbError(Problem::invalid_data, c.path(),
                  file + ": bench result " + what + ": a layout without a segment size");
  } else if (r.method == BenchMethod::floor) {
    throw DbError(Problem::invalid_data, c.path(),
                  file + ": bench result " + what +
                      ": the floor is measured for segmented results only");
  }
  {
    Statement q = c.prepare("SELECT status FROM bench_runs WHERE id = ?1");
    q.bind(1, run);
    if (!q.step())
      throw DbError(Problem::invalid_data, c.path(),
                    file + ": no bench run with id " + std::to_string(run));
    Statement dup = c.prepare(
        r.segmented()
            ? "SELECT 1 FROM segmented_bench_results WHERE bench_run_id = ?1 AND dtype = ?2 AND "
              "op = ?3 AND n = ?4 AND method = ?5 AND segment_size = ?6 AND layout = ?7"
            : "SELECT 1 FROM bench_results WHERE bench_run_id = ?1 AND dtype = ?2 AND op = ?3"
              " AND n = ?4 AND method = ?5 AND ?6 IS NULL AND ?7 = ''");
    dup.bind_all(run, dtype_name(r.dtype), op_name(r.op), static_cast<std::int64_t>(r.n),
                 bench_method_name(r.method),
                 r.segment_size ? std::optional<std::int64_t>(*r.segment_size) : std::nullopt,
                 r.layout);
    if (dup.step())
      throw DbError(Problem::invalid_data, c.path(),
                    file + ": bench run " + std::to_string(run) + " already has a result for " +
                        what);
  }
  BenchResultRecord row;
  static_cast<BenchResult&>(row) = r;
  row.bench_run_id = run;
  row.measured_at = utc_timestamp();
  Statement st = c.prepare(insert_bench_result_sql(r.segmented()));
  bind_bench_result(st, 1, row);
  st.run();
  return c.last_insert_rowid();
}

void end_in_tx(Connection& c, std::int64_t run, RunStatus status) {
  Statement st = c.prepare("UPDATE bench_runs SET status = ?2, ended_at = ?3 WHERE id = ?1");
  st.bind_all(run, run_status_name(status), utc_timestamp()).run();
  if (c.changes() != 1)
    throw DbError(Problem::invalid_data, c.path(),
                  quoted(c.path()) + ": no bench run with id " + std::to_string(run));
}

}  // namespace

const char* bench_l2_name(BenchL2 l) noexcept { return bench_l2_names.to_name(l); }
const char* bench_method_name(BenchMethod m) noexcept { return bench_method_names.to_name(m); }

std::optional<BenchL2> parse_bench_l2(std::string_view s) { return bench_l2_names.from_name(s); }
std::optional<BenchMethod> parse_bench_method(std::string_view s) {
  return bench_method_names.from_name(s);
}

std::string bench_seed_text(std::uint64_t seed) {
  char b[24];
  std::snprintf(b, sizeof b, "%016" PRIx64, seed);
  return b;
}

std::optional<L2Mode> tuned_l2_of(BenchL2 l) noexcept {
  switch (l) {
    case BenchL2::cold:
      return L2Mode::cold;
    case BenchL2::warm:
      return L2Mode::warm;
    case BenchL2::dirty:
      return std::nullopt;
  }
  return std::nullopt;
}

bool has_bench_tables(Database& db) {
  Statement st = db.connection().prepare(
      "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('bench_runs',"
      " 'bench_results')");
  st.step();
  return st.column_int(0) == 2;
}

std::int64_t begin_bench_run(Database& db, std::int64_t device_id, const BenchRunInfo& info,
                             int driver_version, int runtime_version) {
  require_writable(db, "begin a bench run");
  Transaction tx(db.connection(), TxKind::immediate);
  const std::int64_t id =
      begin_in_tx(db.connection(), device_id, info, driver_version, runtime_version);
  tx.commit();
  return id;
}

std::int64_t insert_bench_result(Database& db, std::int64_t bench_run_id, const BenchResult& r) {
  require_writable(db, "record a bench result");
  Transaction tx(db.connection(), TxKind::immediate);
  const std::int64_t id = insert_in_tx(db.connection(), bench_run_id, r);
  tx.commit();
  return id;
}

void end_bench_run(Database& db, std::int64_t bench_run_id, RunStatus status) {
  require_writable(db, "end a bench run");
  Transaction tx(db.connection(), TxKind::immediate);
  end_in_tx(db.connection(), bench_run_id, status);
  tx.commit();
}

std::int64_t record_bench_run(Database& db, const DeviceFingerprint& device,
                              const BenchRunInfo& info, std::span<const BenchResult> results,
                              RunStatus status) {
  require_writable(db, "record a bench run");
  const std::int64_t dev = db.upsert_device(device);
  Transaction tx(db.connection(), TxKind::immediate);
  const std::int64_t run =
      begin_in_tx(db.connection(), dev, info, device.driver_version, device.runtime_version);
  for (const BenchResult& r : results) insert_in_tx(db.connection(), run, r);
  if (status != RunStatus::running) end_in_tx(db.connection(), run, status);
  tx.commit();
  return run;
}

std::vector<BenchRunRecord> bench_runs(Database& db, std::optional<std::int64_t> device_id) {
  std::vector<BenchRunRecord> out;
  if (!has_bench_tables(db)) return out;
  Statement st = db.connection().prepare("SELECT id, " + bench_run_columns.names() +
                                         " FROM bench_runs WHERE ?1 IS NULL OR device_id = ?1"
                                         " ORDER BY id");
  st.bind(1, device_id);
  while (st.step()) {
    BenchRunRecord r;
    r.id = st.column_int(0);
    read_bench_run(st, 1, r);
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

std::vector<BenchResultRecord> read_results(Database& db, bool segmented,
                                            std::optional<std::int64_t> bench_run_id) {
  std::vector<BenchResultRecord> out;
  if (!has_bench_tables(db) ||
      (segmented && !has_table(db.connection(), "segmented_bench_results")))
    return out;
  const ColumnList& cols = segmented ? segmented_bench_result_columns : bench_result_columns;
  Statement st = db.connection().prepare(
      "SELECT id, " + cols.names() + " FROM " +
      (segmented ? "segmented_bench_results" : "bench_results") +
      " WHERE ?1 IS NULL OR bench_run_id = ?1 ORDER BY bench_run_id, dtype, op, " +
      (segmented ? "layout, segment_size, " : "") +
      "n, CASE method WHEN 'cached' THEN 0 WHEN 'two_phase' THEN 1 WHEN 'cub' THEN 2 ELSE 3 END");
  st.bind(1, bench_run_id);
  while (st.step()) {
    if (!bench_result_names_known(st, 1)) continue;  // a row db check names (db/row_rules.hpp)
    BenchResultRecord r;
    r.id = st.column_int(0);
    read_bench_result(st, 1, r);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::vector<BenchResultRecord> bench_results(Database& db,
                                             std::optional<std::int64_t> bench_run_id) {
  return read_results(db, false, bench_run_id);
}

std::vector<BenchResultRecord> segmented_bench_results(Database& db,
                                                       std::optional<std::int64_t> bench_run_id) {
  return read_results(db, true, bench_run_id);
}

}  // namespace tunedreduce::db
