#include "db/snapshot.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "common/names.hpp"
#include "db/row_rules.hpp"
#include "db/statement.hpp"

namespace tunedreduce::db {

namespace {

/// The winner and device rows that break the row rules (db/row_rules.hpp), by id: SQLite does not
/// verify CHECK constraints on a read-only connection, so a hand-edited or damaged file may have
/// them. Each is skipped by name; the others are read, so one bad row never takes the file down.
struct BadRows {
  std::map<std::int64_t, RowFinding> winners, devices;
  explicit BadRows(Database& db)
      : winners(invalid_rows(db.connection(), "winners")),
        devices(invalid_rows(db.connection(), "devices")) {}
};

/// One winner row, or nothing (and why, in \p skipped) when it or its device breaks a rule, or
/// its evidence's median is not a positive finite time.
std::optional<SnapshotEntry> read_entry(const Statement& st, const BadRows& bad,
                                        std::vector<std::string>& skipped) {
  const std::int64_t winner_id = st.column_int(11), device_id = st.column_int(12);
  if (auto it = bad.winners.find(winner_id); it != bad.winners.end()) {
    skipped.push_back(it->second.text());
    return std::nullopt;
  }
  if (auto it = bad.devices.find(device_id); it != bad.devices.end()) {
    skipped.push_back(
        fmt::format("winners id {}: its device breaks a rule: {}", winner_id, it->second.text()));
    return std::nullopt;
  }
  SnapshotEntry e;
  e.device_key = st.column_text(0);
  e.dtype = *parse_dtype(st.column_text(1));
  e.op = *parse_op(st.column_text(2));
  e.l2_mode = *parse_l2_mode(st.column_text(10));
  e.n_lo = static_cast<std::uint64_t>(st.column_int(3));
  e.n_hi = static_cast<std::uint64_t>(st.column_int(4));
  e.kernel_id = st.column_text(5);
  e.driver_version = static_cast<int>(st.column_int(6));
  e.runtime_version = static_cast<int>(st.column_int(7));
  if (!st.is_null(8)) {
    const double median = st.column_double(8);
    if (bad_time(median)) {
      skipped.push_back(fmt::format("winners id {}: its evidence's median_us = {}: {}", winner_id,
                                    median, *bad_time(median)));
      return std::nullopt;
    }
    e.median_us = median;
  }
  return e;
}

constexpr const char* entry_select =
    "SELECT d.fingerprint, w.dtype, w.op, w.n_lo, w.n_hi, w.kernel_id, w.driver_version,"
    " w.runtime_version, m.median_us, d.name, w.l2_mode, w.id, d.id"
    " FROM winners w JOIN devices d ON d.id = w.device_id"
    " LEFT JOIN measurements m ON m.id = w.measurement_id ";

/// The segmented winner and device rows that break the row rules, by id.
struct BadSegRows {
  std::map<std::int64_t, RowFinding> winners, devices;
  explicit BadSegRows(Database& db)
      : winners(invalid_rows(db.connection(), "segmented_winners")),
        devices(invalid_rows(db.connection(), "devices")) {}
};

constexpr const char* seg_entry_select =
    "SELECT d.fingerprint, w.dtype, w.op, w.l2_mode, w.layout, w.size_lo, w.size_hi, w.count_lo,"
    " w.count_hi, w.kernel_id, w.driver_version, w.runtime_version, m.median_us, w.id, d.id"
    " FROM segmented_winners w JOIN devices d ON d.id = w.device_id"
    " LEFT JOIN measurements m ON m.id = w.measurement_id ";

struct SegRead {
  SegSnapshotEntry e;
  std::int64_t id = 0;
};

/// One segmented winner row, or nothing (and why, in \p skipped), as read_entry.
std::optional<SegRead> read_seg_entry(const Statement& st, const BadSegRows& bad,
                                      std::vector<std::string>& skipped) {
  const std::int64_t winner_id = st.column_int(13), device_id = st.column_int(14);
  if (auto it = bad.winners.find(winner_id); it != bad.winners.end()) {
    skipped.push_back(it->second.text());
    return std::nullopt;
  }
  if (auto it = bad.devices.find(device_id); it != bad.devices.end()) {
    skipped.push_back(fmt::format("segmented_winners id {}: its device breaks a rule: {}",
                                  winner_id, it->second.text()));
    return std::nullopt;
  }
  SegRead r;
  r.id = winner_id;
  SegSnapshotEntry& e = r.e;
  e.device_key = st.column_text(0);
  e.dtype = *parse_dtype(st.column_text(1));
  e.op = *parse_op(st.column_text(2));
  e.l2_mode = *parse_l2_mode(st.column_text(3));
  e.layout = st.column_text(4);
  e.size_lo = static_cast<std::uint64_t>(st.column_int(5));
  e.size_hi = static_cast<std::uint64_t>(st.column_int(6));
  e.count_lo = static_cast<std::uint64_t>(st.column_int(7));
  e.count_hi = static_cast<std::uint64_t>(st.column_int(8));
  e.kernel_id = st.column_text(9);
  e.driver_version = static_cast<int>(st.column_int(10));
  e.runtime_version = static_cast<int>(st.column_int(11));
  if (!st.is_null(12)) {
    const double median = st.column_double(12);
    if (bad_time(median)) {
      skipped.push_back(fmt::format("segmented_winners id {}: its evidence's median_us = {}: {}",
                                    winner_id, median, *bad_time(median)));
      return std::nullopt;
    }
    e.median_us = median;
  }
  return r;
}

/// \p rows split by L2 mode, less the rows whose rectangle overlaps an earlier one's of the
/// same (device, dtype, op, layout, L2 mode) (by size_lo, count_lo, id: a hand-edited or damaged
/// file; the row rules see one row at a time), each named in \p skipped: SegWinnerTable refuses
/// overlaps, and one bad row must not take the others down.
SegWinnerTables seg_tables(std::vector<SegRead> rows, std::vector<std::string>& skipped) {
  auto key = [](const SegRead& r) {
    return std::tie(r.e.device_key, r.e.dtype, r.e.op, r.e.layout, r.e.l2_mode);
  };
  std::sort(rows.begin(), rows.end(), [&](const SegRead& a, const SegRead& b) {
    return std::tuple_cat(key(a), std::tie(a.e.size_lo, a.e.count_lo, a.id)) <
           std::tuple_cat(key(b), std::tie(b.e.size_lo, b.e.count_lo, b.id));
  });
  std::vector<SegSnapshotEntry> kept;
  std::size_t group_start = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && key(rows[i]) != key(rows[i - 1])) group_start = kept.size();
    const SegSnapshotEntry& e = rows[i].e;
    const bool overlaps = std::any_of(kept.begin() + static_cast<std::ptrdiff_t>(group_start),
                                      kept.end(), [&](const SegSnapshotEntry& k) {
                                        return k.size_lo <= e.size_hi && e.size_lo <= k.size_hi &&
                                               k.count_lo <= e.count_hi && e.count_lo <= k.count_hi;
                                      });
    if (overlaps) {
      skipped.push_back(fmt::format(
          "segmented_winners id {}: its rectangle (sizes {}..{}, counts {}..{}) overlaps another "
          "segmented winner's of the same device, dtype, op, layout and L2 mode",
          rows[i].id, e.size_lo, e.size_hi, e.count_lo, e.count_hi));
      continue;
    }
    kept.push_back(rows[i].e);  // a copy: key() of the next row compares with this one
  }
  return SegWinnerTables::split(std::move(kept));
}

}  // namespace

WinnerTables load_device_winners(Database& db, std::string_view device_key,
                                 std::vector<std::string>* skipped) {
  const BadRows bad(db);
  std::vector<std::string> ignored;
  std::vector<std::string>& out = skipped ? *skipped : ignored;
  Statement st =
      db.connection().prepare(std::string(entry_select) +
                              "WHERE d.fingerprint = ?1 ORDER BY w.dtype, w.op, w.l2_mode, w.n_lo");
  st.bind(1, device_key);
  std::vector<SnapshotEntry> rows;
  while (st.step())
    if (auto e = read_entry(st, bad, out)) rows.push_back(std::move(*e));
  return WinnerTables::split(std::move(rows));
}

WinnerTables load_similar_winners(Database& db, const DeviceFingerprint& fp,
                                  std::vector<std::string>* skipped) {
  const BadRows bad(db);
  std::vector<std::string> ignored;
  std::vector<std::string>& out = skipped ? *skipped : ignored;
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
    auto read = read_entry(st, bad, out);
    if (!read) continue;
    SnapshotEntry& e = *read;
    auto [it, inserted] = chosen.try_emplace({e.dtype, e.op, e.l2_mode}, e.device_key);
    if (inserted || it->second == e.device_key) rows.push_back(std::move(e));
  }
  return WinnerTables::split(std::move(rows));
}

SegWinnerTables load_device_segmented_winners(Database& db, std::string_view device_key,
                                              std::vector<std::string>* skipped) {
  if (!db.has_segmented()) return {};
  const BadSegRows bad(db);
  std::vector<std::string> ignored;
  std::vector<std::string>& out = skipped ? *skipped : ignored;
  Statement st = db.connection().prepare(std::string(seg_entry_select) +
                                         "WHERE d.fingerprint = ?1 ORDER BY w.id");
  st.bind(1, device_key);
  std::vector<SegRead> rows;
  while (st.step())
    if (auto r = read_seg_entry(st, bad, out)) rows.push_back(std::move(*r));
  return seg_tables(std::move(rows), out);
}

SegWinnerTables load_similar_segmented_winners(Database& db, const DeviceFingerprint& fp,
                                               std::vector<std::string>* skipped) {
  if (!db.has_segmented()) return {};
  const BadSegRows bad(db);
  std::vector<std::string> ignored;
  std::vector<std::string>& out = skipped ? *skipped : ignored;
  Statement st = db.connection().prepare(
      std::string(seg_entry_select) +
      "WHERE d.cc_major = ?1 AND d.cc_minor = ?2 AND d.sm_count = ?3 AND d.fingerprint <> ?4"
      " AND d.bus_width_bits = ?6 AND d.l2_bytes = ?7 AND d.mem_clock_khz = ?8"
      " ORDER BY d.name <> ?5, d.fingerprint, w.id");
  st.bind_all(fp.cc_major, fp.cc_minor, fp.sm_count, fp.key(), fp.name, fp.bus_width_bits,
              fp.l2_bytes, fp.mem_clock_khz);
  // Rows arrive best device first; keep, per (dtype, op, layout, L2 mode), the first device that
  // has any.
  std::map<std::tuple<DType, Op, std::string, L2Mode>, std::string> chosen;
  std::vector<SegRead> rows;
  while (st.step()) {
    auto read = read_seg_entry(st, bad, out);
    if (!read) continue;
    const SegSnapshotEntry& e = read->e;
    auto [it, inserted] = chosen.try_emplace({e.dtype, e.op, e.layout, e.l2_mode}, e.device_key);
    if (inserted || it->second == e.device_key) rows.push_back(std::move(*read));
  }
  return seg_tables(std::move(rows), out);
}

Snapshot load_snapshot(const std::filesystem::path& path, const DeviceFingerprint& fp,
                       const ReaderOptions& opt) {
  Snapshot s;
  try {
    Database db = Database::open_reader(path, opt);
    s.exact = load_device_winners(db, fp.key(), &s.skipped);
    s.similar = load_similar_winners(db, fp, &s.skipped);
    s.seg_exact = load_device_segmented_winners(db, fp.key(), &s.skipped);
    s.seg_similar = load_similar_segmented_winners(db, fp, &s.skipped);
  } catch (const DbError& e) {
    s = Snapshot{};
    s.problem = e.problem();
    s.message = e.what();
  }
  return s;
}

}  // namespace tunedreduce::db
