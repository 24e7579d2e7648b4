#include "db/check.hpp"

#include "common/hash.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"

namespace tunedreduce::db {

CheckReport check_database(Database& db, const std::set<std::string>& known_ids, bool full) {
  Connection& c = db.connection();
  CheckReport r;
  r.schema_version = db.file_schema_version();
  try {
    Statement st = c.prepare(full ? "PRAGMA integrity_check(100)" : "PRAGMA quick_check(100)");
    while (st.step()) r.integrity.push_back(st.column_text(0));
  } catch (const DbError& e) {
    // Damage bad enough that the check itself stops is a finding, not a failure to check.
    if (e.problem() != Problem::corrupt) throw;
    r.integrity.push_back(e.what());
  }
  if (!r.sound()) return r;  // the queries below could fail or mislead on a damaged file
  Transaction tx(c, TxKind::deferred);
  // The row rules first: SQLite does not verify CHECK constraints on a read-only connection.
  r.row_findings = validate_rows(c, CheckReport::max_row_findings);
  r.foreign_key_violations = c.query_int("SELECT count(*) FROM pragma_foreign_key_check");
  {
    Statement st = c.prepare(
        "SELECT kernel_id, count(*) FROM (SELECT kernel_id FROM measurements UNION ALL"
        " SELECT kernel_id FROM winners UNION ALL SELECT runner_up_kernel_id FROM winners"
        " WHERE runner_up_kernel_id IS NOT NULL) GROUP BY kernel_id ORDER BY kernel_id");
    while (st.step()) {
      // An id longer than any kernel's is unknown anyway: only its first bytes are kept.
      std::string id = st.column_text_prefix(0, max_name_bytes + 1);
      if (!known_ids.count(id)) r.unknown_kernel_ids[id] = st.column_int(1);
    }
  }
  {
    Statement st = c.prepare(
        "SELECT a.l2_mode, count(*) FROM winners a JOIN winners b ON a.device_id = b.device_id"
        " AND a.dtype = b.dtype AND a.op = b.op AND a.l2_mode = b.l2_mode AND a.id < b.id"
        " AND a.n_lo <= b.n_hi AND b.n_lo <= a.n_hi GROUP BY a.l2_mode");
    while (st.step()) {
      // A mode the binary does not know is a row finding already; counted in the total only.
      if (const auto mode = parse_l2_mode(st.column_text(0)))
        r.overlapping_by_mode[static_cast<int>(*mode)] += st.column_int(1);
      r.overlapping_winners += st.column_int(1);
    }
  }
  r.winners_without_ok_evidence = c.query_int(
      "SELECT count(*) FROM winners w LEFT JOIN measurements m ON m.id = w.measurement_id"
      " WHERE m.id IS NULL OR m.outcome <> 'ok' OR m.kernel_id <> w.kernel_id"
      " OR m.device_id <> w.device_id OR m.dtype <> w.dtype OR m.op <> w.op"
      " OR m.l2_mode <> w.l2_mode");
  if (db.has_provenance()) {
    r.measurements_on_another_models_gpu = c.query_int(
        "SELECT count(*) FROM measurements m JOIN gpus g ON g.id = m.gpu_id"
        " WHERE g.device_id <> m.device_id");
    Statement st =
        c.prepare("SELECT config_hash, config_text FROM runs WHERE config_text IS NOT NULL");
    while (st.step())
      if (hex64(fnv1a64(st.column_text(1))) != st.column_text(0)) ++r.runs_with_foreign_config_text;
  }
  tx.commit();
  return r;
}

}  // namespace tunedreduce::db
