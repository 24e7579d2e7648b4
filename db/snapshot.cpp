#include "db/snapshot.hpp"

#include <map>
#include <tuple>

#include "common/names.hpp"
#include "db/statement.hpp"

namespace tunedreduce::db {

namespace {

SnapshotEntry read_entry(const Statement& st) {
  SnapshotEntry e;
  e.device_key = st.column_text(0);
  e.dtype = parse_dtype(st.column_text(1)).value_or(DType::i32);
  e.op = parse_op(st.column_text(2)).value_or(Op::sum);
  e.n_lo = static_cast<std::uint64_t>(st.column_int(3));
  e.n_hi = static_cast<std::uint64_t>(st.column_int(4));
  e.kernel_id = st.column_text(5);
  e.driver_version = static_cast<int>(st.column_int(6));
  e.runtime_version = static_cast<int>(st.column_int(7));
  e.median_us = st.column_double(8);
  e.l2_mode = parse_l2_mode(st.column_text(10)).value_or(L2Mode::cold);
  return e;
}

constexpr const char* entry_select =
    "SELECT d.fingerprint, w.dtype, w.op, w.n_lo, w.n_hi, w.kernel_id, w.driver_version,"
    " w.runtime_version, coalesce(m.median_us, 0), d.name, w.l2_mode"
    " FROM winners w JOIN devices d ON d.id = w.device_id"
    " LEFT JOIN measurements m ON m.id = w.measurement_id ";

}  // namespace

WinnerTables load_device_winners(Database& db, std::string_view device_key) {
  Statement st = db.connection().prepare(
      std::string(entry_select) +
      "WHERE d.fingerprint = ?1 ORDER BY w.dtype, w.op, w.l2_mode, w.n_lo");
  st.bind(1, device_key);
  std::vector<SnapshotEntry> rows;
  while (st.step()) rows.push_back(read_entry(st));
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
    SnapshotEntry e = read_entry(st);
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
