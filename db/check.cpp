#include "db/check.hpp"

#include <set>
#include <string>

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
        std::string("SELECT kernel_id, count(*) FROM (SELECT kernel_id FROM measurements UNION ALL"
                    " SELECT kernel_id FROM winners UNION ALL SELECT runner_up_kernel_id FROM"
                    " winners WHERE runner_up_kernel_id IS NOT NULL") +
        (db.has_segmented()
             ? " UNION ALL SELECT kernel_id FROM segmented_winners UNION ALL SELECT"
               " runner_up_kernel_id FROM segmented_winners WHERE runner_up_kernel_id IS NOT NULL"
             : "") +
        ") GROUP BY kernel_id ORDER BY kernel_id");
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
  if (db.has_segmented()) {
    std::set<std::int64_t> bad;
    Statement st = c.prepare(
        "SELECT a.l2_mode, a.id, b.id FROM segmented_winners a JOIN segmented_winners b"
        " ON a.device_id = b.device_id AND a.dtype = b.dtype AND a.op = b.op"
        " AND a.layout = b.layout AND a.l2_mode = b.l2_mode AND a.id < b.id"
        " AND a.size_lo <= b.size_hi AND b.size_lo <= a.size_hi"
        " AND a.count_lo <= b.count_hi AND b.count_lo <= a.count_hi");
    while (st.step()) {
      if (const auto mode = parse_l2_mode(st.column_text(0)))
        ++r.overlapping_segmented_by_mode[static_cast<int>(*mode)];
      ++r.overlapping_segmented_winners;
      bad.insert(st.column_int(1));
      bad.insert(st.column_int(2));
    }
    // The evidence of the winner's kernel, and a runner-up of the winner's layout: an ok
    // segmented measurement (segment_size set) of the winner's device, dtype, op and L2 mode.
    Statement ev = c.prepare(
        "SELECT w.id, w.layout, r.kernel_id, w.runner_up_kernel_id,"
        " m.id IS NULL OR m.outcome <> 'ok' OR m.kernel_id <> w.kernel_id"
        " OR m.device_id <> w.device_id OR m.dtype <> w.dtype OR m.op <> w.op"
        " OR m.l2_mode <> w.l2_mode OR m.segment_size IS NULL,"
        " w.runner_up_measurement_id IS NOT NULL AND (r.id IS NULL OR r.outcome <> 'ok'"
        " OR r.device_id <> w.device_id OR r.dtype <> w.dtype OR r.op <> w.op"
        " OR r.l2_mode <> w.l2_mode OR r.segment_size IS NULL)"
        " FROM segmented_winners w LEFT JOIN measurements m ON m.id = w.measurement_id"
        " LEFT JOIN measurements r ON r.id = w.runner_up_measurement_id ORDER BY w.id");
    while (ev.step()) {
      bool without = ev.column_int(4) != 0 || ev.column_int(5) != 0;
      if (!without && !ev.is_null(2)) {
        const std::string kernel = ev.column_text_prefix(2, max_name_bytes + 1);
        const auto id = parse_segmented_id(kernel);
        without = !id || id->layout != ev.column_text_prefix(1, max_name_bytes + 1) ||
                  (!ev.is_null(3) && ev.column_text_prefix(3, max_name_bytes + 1) != kernel);
      }
      if (without) {
        ++r.segmented_winners_without_ok_evidence;
        bad.insert(ev.column_int(0));
      }
    }
    for (std::int64_t id : bad) {
      if (r.bad_segmented_winner_ids.size() >= CheckReport::max_row_findings) break;
      r.bad_segmented_winner_ids.push_back(id);
    }
  }
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
