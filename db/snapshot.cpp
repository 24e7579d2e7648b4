#include "db/snapshot.hpp"

#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/names.hpp"
#include "db/statement.hpp"

namespace tunedreduce::db {

namespace {

/// One winner row, checked: a row that breaks the schema's own rules (a NULL, a type, operator or
/// L2 mode the schema does not have, an empty kernel id, n_lo > n_hi) can only come from a damaged
/// file, since SQLite enforces the rules on every write. Such a database is corrupt: DbError, which
/// load_snapshot turns into Snapshot::problem (the library then uses its built-in rules).
SnapshotEntry read_entry(const Statement& st, const std::filesystem::path& path) {
  auto corrupt = [&](const std::string& what) {
    return DbError(Problem::corrupt, path,
                   quoted(path) + ": is corrupt (a winner row breaks the schema's rules: " + what +
                       "); run `tunedreduce db check`");
  };
  for (int col = 0; col <= 7; ++col)
    if (st.is_null(col)) throw corrupt("a NULL where the schema forbids one");
  SnapshotEntry e;
  e.device_key = st.column_text(0);
  const std::string dtype = st.column_text(1), op = st.column_text(2), l2 = st.column_text(10);
  const auto d = parse_dtype(dtype);
  const auto o = parse_op(op);
  const auto m = parse_l2_mode(l2);
  if (!d || !o || !m)
    throw corrupt("element type '" + dtype + "', operator '" + op + "', L2 mode '" + l2 + "'");
  e.dtype = *d;
  e.op = *o;
  e.l2_mode = *m;
  const std::int64_t lo = st.column_int(3), hi = st.column_int(4);
  if (lo < 0 || lo > hi) throw corrupt(fmt::format("the interval [{}, {}]", lo, hi));
  e.n_lo = static_cast<std::uint64_t>(lo);
  e.n_hi = static_cast<std::uint64_t>(hi);
  e.kernel_id = st.column_text(5);
  if (e.kernel_id.empty()) throw corrupt("an empty kernel id");
  e.driver_version = static_cast<int>(st.column_int(6));
  e.runtime_version = static_cast<int>(st.column_int(7));
  e.median_us = st.column_double(8);
  return e;
}

constexpr const char* entry_select =
    "SELECT d.fingerprint, w.dtype, w.op, w.n_lo, w.n_hi, w.kernel_id, w.driver_version,"
    " w.runtime_version, coalesce(m.median_us, 0), d.name, w.l2_mode"
    " FROM winners w JOIN devices d ON d.id = w.device_id"
    " LEFT JOIN measurements m ON m.id = w.measurement_id ";

}  // namespace

WinnerTables load_device_winners(Database& db, std::string_view device_key) {
  Statement st =
      db.connection().prepare(std::string(entry_select) +
                              "WHERE d.fingerprint = ?1 ORDER BY w.dtype, w.op, w.l2_mode, w.n_lo");
  st.bind(1, device_key);
  std::vector<SnapshotEntry> rows;
  while (st.step()) rows.push_back(read_entry(st, db.path()));
  return WinnerTables::split(std::move(rows));
}

WinnerTables load_similar_winners(Database& db, const DeviceFingerprint& fp) {
  Statement st = db.connection().prepare(
      std::string(entry_select) +
      "WHERE d.cc_major = ?1 AND d.cc_minor = ?2 AND d.sm_count = ?3 AND d.fingerprint <> ?4"
      " AND d.bus_width_bits = ?6 AND d.l2_bytes = ?7 AND d.mem_clock_khz = ?8"
      " ORDER BY d.name <> ?5, d.fingerprint, w.dtype, w.op, w.n_lo");
  st.bind_all(fp.cc_major, fp.cc_minor, fp.sm_count, fp.key(), fp.name, fp.bus_width_bits,
              fp.l2_bytes, fp.mem_clock_khz);
  // Rows arrive best device first; keep, per (dtype, op, L2 mode), the first device that has any.
  std::map<std::tuple<DType, Op, L2Mode>, std::string> chosen;
  std::vector<SnapshotEntry> rows;
  while (st.step()) {
    SnapshotEntry e = read_entry(st, db.path());
    auto [it, inserted] = chosen.try_emplace({e.dtype, e.op, e.l2_mode}, e.device_key);
    if (inserted || it->second == e.device_key) rows.push_back(std::move(e));
  }
  return WinnerTables::split(std::move(rows));
}

Snapshot load_snapshot(const std::filesystem::path& path, const DeviceFingerprint& fp,
                       const ReaderOptions& opt) {
  Snapshot s;
  try {
    Database db = Database::open_reader(path, opt);
    s.exact = load_device_winners(db, fp.key());
    s.similar = load_similar_winners(db, fp);
  } catch (const DbError& e) {
    s = Snapshot{};
    s.problem = e.problem();
    s.message = e.what();
  }
  return s;
}

}  // namespace tunedreduce::db
