#include "db/database.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "common/hash.hpp"
#include "common/names.hpp"
#include "common/printable.hpp"
#include "db/columns.hpp"
#include "db/row_rules.hpp"
#include "db/schema.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"

namespace tunedreduce::db {

namespace fs = std::filesystem;

namespace {

fs::path folder_of(const fs::path& p) {
  fs::path parent = p.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

bool is_writable(const fs::path& p) { return ::access(p.c_str(), W_OK) == 0; }

struct FileFacts {
  bool exists = false;
  bool regular = false;
  std::uintmax_t size = 0;
  bool sqlite_header = false;
  bool wal_with_content = false;
};

FileFacts inspect(const fs::path& path) {
  FileFacts f;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return f;
  f.exists = true;
  f.regular = fs::is_regular_file(st);
  if (!f.regular) return f;
  f.size = fs::file_size(path, ec);
  const fs::path wal = path.string() + "-wal";
  f.wal_with_content = fs::exists(wal, ec) && fs::file_size(wal, ec) > 0;
  char header[16] = {};
  std::ifstream in(path, std::ios::binary);
  if (in.read(header, sizeof header) && f.size >= 100)
    f.sqlite_header = std::memcmp(header, "SQLite format 3\0", 16) == 0;
  return f;
}

void check_regular_and_header(const fs::path& path, const FileFacts& f) {
  if (!f.regular)
    throw DbError(Problem::not_a_file, path,
                  quoted(path) + ": not a regular file (a folder or a device sits at that path)");
  if (f.size > 0 && !f.sqlite_header)
    throw DbError(Problem::not_sqlite, path,
                  quoted(path) + ": not an SQLite database (" + std::to_string(f.size) +
                      " bytes without the SQLite header)");
}

std::int64_t to_db_n(std::uint64_t n, const fs::path& path) {
  if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw DbError(Problem::invalid_data, path,
                  quoted(path) + ": n = " + std::to_string(n) + " does not fit a 64-bit row");
  return static_cast<std::int64_t>(n);
}

DType column_dtype(const Statement& st, int col) {
  auto t = parse_dtype(st.column_text(col));
  return t ? *t : DType::i32;  // the CHECK constraint admits only valid names
}
Op column_op(const Statement& st, int col) {
  auto o = parse_op(st.column_text(col));
  return o ? *o : Op::sum;
}

void set_journal_wal(Connection& conn) {
  if (conn.query_text("PRAGMA journal_mode") == "wal") return;
  // Changing the journal mode takes an exclusive lock; retry it with the connection's timeout.
  const auto deadline = std::chrono::steady_clock::now() + conn.busy_timeout();
  for (int attempt = 0;; ++attempt) {
    try {
      const std::string mode = conn.query_text("PRAGMA journal_mode = WAL");
      if (mode == "wal") return;
      throw DbError(Problem::readonly, conn.path(),
                    quoted(conn.path()) + ": cannot switch to WAL (journal mode stays '" + mode +
                        "'); its folder must be writable for the -wal and -shm files");
    } catch (const DbError& e) {
      if (e.problem() != Problem::busy || std::chrono::steady_clock::now() >= deadline) throw;
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::min(1 << std::min(attempt, 5), 50)));
    }
  }
}

// A whole row: its id and links, then measurement_columns. A file older than version 5 has no
// gpu_id: its measurements read as measured by an unknown GPU; one older than version 12 no
// segment_size: its measurements read as whole-array ones.
std::string select_measurements(bool provenance, bool segmented) {
  static constexpr std::string_view no_segments[] = {"segment_size"};
  return std::string("SELECT id, run_id, seq, device_id, ") + (provenance ? "gpu_id" : "NULL") +
         ", " +
         (segmented ? measurement_columns.names()
                    : measurement_columns.names_reading(no_segments)) +
         " FROM measurements";
}

MeasurementRecord read_measurement_row(const Statement& st) {
  MeasurementRecord m;
  m.id = st.column_int(0);
  m.run_id = st.column_int(1);
  m.seq = st.column_int(2);
  m.device_id = st.column_int(3);
  m.gpu_id = st.column_opt_int(4);
  read_measurement(st, 5, m);
  return m;
}

const char* const device_columns =
    "id, fingerprint, name, cc_major, cc_minor, sm_count, bus_width_bits, l2_bytes, ecc,"
    " total_mem_bytes, mem_clock_khz, theoretical_gbps, driver_version, runtime_version,"
    " first_seen, last_seen";

DeviceRecord read_device(const Statement& st) {
  DeviceRecord d;
  d.id = st.column_int(0);
  // Text is read up to its limit (db/row_rules.hpp) and no further: a 10 MB name in a damaged
  // file costs a reader 256 bytes per row, and the row validator names the row.
  d.key = st.column_text_prefix(1, max_name_bytes);
  auto& f = d.fingerprint;
  f.name = st.column_text_prefix(2, max_name_bytes);
  f.cc_major = static_cast<int>(st.column_int(3));
  f.cc_minor = static_cast<int>(st.column_int(4));
  f.sm_count = static_cast<int>(st.column_int(5));
  f.bus_width_bits = static_cast<int>(st.column_int(6));
  f.l2_bytes = st.column_int(7);
  f.ecc = st.column_int(8) != 0;
  f.total_mem_bytes = st.column_int(9);
  f.mem_clock_khz = static_cast<int>(st.column_int(10));
  d.theoretical_gbps = st.column_double(11);
  f.driver_version = static_cast<int>(st.column_int(12));
  f.runtime_version = static_cast<int>(st.column_int(13));
  d.first_seen = st.column_text_prefix(14, max_name_bytes);
  d.last_seen = st.column_text_prefix(15, max_name_bytes);
  return d;
}

// The run's columns; a file older than version 5 reads its driver, runtime and configuration
// text as absent.
std::string run_columns(bool provenance) {
  return std::string(
             "id, uuid, tool_version, manifest_hash, config_hash, host, origin, started_at,"
             " ended_at, status, l2_mode, ") +
         (provenance ? "driver_version, runtime_version, config_text" : "NULL, NULL, NULL");
}

std::optional<int> opt_int(const Statement& st, int col) {
  if (auto v = st.column_opt_int(col)) return static_cast<int>(*v);
  return std::nullopt;
}

RunRecord read_run(const Statement& st) {
  RunRecord r;
  r.id = st.column_int(0);
  // Each text up to its limit (db/row_rules.hpp), as read_device.
  r.uuid = st.column_text_prefix(1, max_name_bytes);
  r.info.tool_version = st.column_text_prefix(2, max_name_bytes);
  r.info.manifest_hash = st.column_text_prefix(3, max_name_bytes);
  r.info.config_hash = st.column_text_prefix(4, max_name_bytes);
  r.info.host = st.column_text_prefix(5, max_name_bytes);
  r.origin = st.column_text_prefix(6, max_path_bytes);
  r.started_at = st.column_text_prefix(7, max_name_bytes);
  if (!st.is_null(8)) r.ended_at = st.column_text_prefix(8, max_name_bytes);
  r.status = parse_run_status(st.column_text(9)).value_or(RunStatus::failed);
  r.info.l2_mode = parse_l2_mode(st.column_text(10)).value_or(L2Mode::cold);
  r.info.driver_version = opt_int(st, 11);
  r.info.runtime_version = opt_int(st, 12);
  if (!st.is_null(13)) r.info.config_text = st.column_text_prefix(13, max_config_bytes);
  return r;
}

// The header fields and the table list read in one read transaction: a writer creating the
// schema meanwhile is seen either not at all or completely.
SchemaState consistent_schema_state(Connection& conn) {
  Transaction tx(conn, TxKind::deferred);
  SchemaState s = read_schema_state(conn);
  tx.commit();
  return s;
}

}  // namespace

// --- opening -------------------------------------------------------------------------------------

Database Database::open_reader(const fs::path& path, const ReaderOptions& opt) {
  const FileFacts f = inspect(path);
  if (!f.exists)
    throw DbError(Problem::missing, path, quoted(path) + ": no database (the file does not exist)");
  check_regular_and_header(path, f);
  if (f.size == 0 && !f.wal_with_content)
    throw DbError(Problem::empty, path,
                  quoted(path) + ": empty file (0 bytes), not a tuning database");
  Connection conn =
      Connection::open(path, opt.immutable ? OpenMode::immutable : OpenMode::read_only);
  conn.set_busy_timeout(opt.busy_timeout);
  SchemaState state;
  try {
    state = consistent_schema_state(conn);
  } catch (const DbError& e) {
    // A WAL database needs its -shm file; in a read-only folder SQLite cannot create it.
    if (e.problem() == Problem::io && !opt.immutable && !is_writable(folder_of(path)))
      throw DbError(Problem::readonly, path,
                    quoted(path) + ": cannot be read in place: it is in WAL mode and its folder " +
                        quoted(folder_of(path)) +
                        " is read-only (SQLite needs the -shm file); open it as immutable, or"
                        " ship files made by `tunedreduce db merge` (journal mode DELETE)");
    throw;
  }
  classify(state, conn, false);
  return Database(std::move(conn), false, state.user_version);
}

Database Database::open_writer(const fs::path& path, const WriterOptions& opt) {
  const FileFacts f = inspect(path);
  const fs::path folder = folder_of(path);
  if (!f.exists) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      throw DbError(Problem::missing_folder, path,
                    "cannot create " + quoted(path) + ": the folder " + quoted(folder) +
                        " does not exist");
    if (!is_writable(folder))
      throw DbError(Problem::readonly, path,
                    "cannot create " + quoted(path) + ": the folder " + quoted(folder) +
                        " is read-only");
  } else {
    check_regular_and_header(path, f);
    if (!is_writable(path))
      throw DbError(Problem::readonly, path,
                    quoted(path) + ": the file is read-only (no write permission)");
    const fs::path wal = path.string() + "-wal", shm = path.string() + "-shm";
    std::error_code ec;
    // SQLite gives a new -wal the main file's mode, so a file made read-only once can leave a
    // read-only -wal behind after its own mode is restored.
    for (const fs::path& side : {wal, shm})
      if (fs::exists(side, ec) && !is_writable(side))
        throw DbError(Problem::readonly, path,
                      quoted(path) + ": its " + quoted(side) +
                          " is read-only; restore its write permission too");
    const bool sidecars_ready = fs::exists(wal, ec) && fs::exists(shm, ec) && is_writable(wal) &&
                                is_writable(shm);
    if (!is_writable(folder) && !sidecars_ready)
      throw DbError(Problem::readonly, path,
                    quoted(path) + ": the folder " + quoted(folder) +
                        " is read-only, and a writer must create the -wal and -shm files there");
  }
  Connection conn = Connection::open(path, OpenMode::read_write);
  if (conn.read_only())
    throw DbError(Problem::readonly, path, quoted(path) + ": SQLite opened it read-only");
  conn.set_busy_timeout(opt.busy_timeout);
  // Refuse files that are not ours, or too new, before changing anything in them.
  classify(consistent_schema_state(conn), conn, true);
  set_journal_wal(conn);
  conn.exec("PRAGMA synchronous = FULL");
  conn.exec("PRAGMA foreign_keys = ON");
  int version = 0;
  std::optional<int> migrated_from;
  {
    Transaction tx(conn, TxKind::immediate);
    // Another writer may have created or migrated the file since the check above.
    const SchemaState state = read_schema_state(conn);
    const SchemaAction action = classify(state, conn, true);
    if (action != SchemaAction::use) {
      apply_migrations(conn, migrations(), schema_version);
      migrated_from = action == SchemaAction::create ? -1 : state.user_version;
    }
    version = static_cast<int>(conn.query_int("PRAGMA user_version"));
    tx.commit();
  }
  Database db(std::move(conn), true, version);
  db.migrated_from_ = migrated_from;
  return db;
}

Database Database::create_in_memory(std::string label) {
  Connection conn = Connection::open(label, OpenMode::memory);
  conn.exec("PRAGMA foreign_keys = ON");
  Transaction tx(conn, TxKind::immediate);
  apply_migrations(conn, migrations(), schema_version);
  tx.commit();
  return Database(std::move(conn), true, schema_version);
}

bool Database::has_provenance() const { return file_version_ >= provenance_version; }

bool Database::has_segmented() const { return file_version_ >= segmented_version; }

void Database::require_writable(const char* what) const {
  if (!writable_)
    throw DbError(Problem::readonly, path(),
                  quoted(path()) + ": opened read-only, cannot " + std::string(what));
}

// --- writer API ----------------------------------------------------------------------------------

std::int64_t Database::upsert_device(const DeviceFingerprint& fp) {
  require_writable("record a device");
  const std::string key = fp.key();
  const std::string now = utc_timestamp();
  Transaction tx(conn_, TxKind::immediate);
  Statement ins = conn_.prepare(
      "INSERT INTO devices (fingerprint, name, cc_major, cc_minor, sm_count, bus_width_bits,"
      " l2_bytes, ecc, total_mem_bytes, mem_clock_khz, theoretical_gbps, driver_version,"
      " runtime_version, first_seen, last_seen)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)"
      " ON CONFLICT (fingerprint) DO UPDATE SET driver_version = excluded.driver_version,"
      " runtime_version = excluded.runtime_version, last_seen = excluded.last_seen");
  ins.bind_all(key, fp.name, fp.cc_major, fp.cc_minor, fp.sm_count, fp.bus_width_bits, fp.l2_bytes,
               fp.ecc, fp.total_mem_bytes, fp.mem_clock_khz, fp.theoretical_gbps(),
               fp.driver_version, fp.runtime_version, now)
      .run();
  Statement sel = conn_.prepare("SELECT id FROM devices WHERE fingerprint = ?1");
  sel.bind(1, key);
  sel.step();
  const std::int64_t id = sel.column_int(0);
  tx.commit();
  return id;
}

namespace {

std::string this_host() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

}  // namespace

std::int64_t Database::upsert_gpu(std::string_view uuid, std::int64_t device_id) {
  require_writable("record a GPU");
  if (uuid.empty())
    throw DbError(Problem::invalid_data, path(), quoted(path()) + ": a GPU without a UUID");
  Transaction tx(conn_, TxKind::immediate);
  Statement ins = conn_.prepare(
      "INSERT INTO gpus (uuid, device_id) VALUES (?1, ?2) ON CONFLICT (uuid, device_id) DO "
      "NOTHING");
  ins.bind_all(uuid, device_id).run();
  Statement sel = conn_.prepare("SELECT id FROM gpus WHERE uuid = ?1 AND device_id = ?2");
  sel.bind_all(uuid, device_id);
  sel.step();
  const std::int64_t id = sel.column_int(0);
  tx.commit();
  return id;
}

std::int64_t Database::begin_run(const RunInfo& info) {
  require_writable("begin a run");
  if (info.config_text && hex64(fnv1a64(*info.config_text)) != info.config_hash)
    throw DbError(Problem::invalid_data, path(),
                  fmt::format("{}: the run's configuration text hashes to {}, not to its config "
                              "hash {}",
                              quoted(path()), hex64(fnv1a64(*info.config_text)), info.config_hash));
  std::string host = info.host.empty() ? this_host() : info.host;
  const std::string uuid = random_uuid();
  // The lease first: a `running` row must never be visible without it.
  std::error_code ec;
  if (std::filesystem::is_regular_file(path(), ec))
    leases_.push_back(RunLease::acquire(path(), uuid));
  Transaction tx(conn_, TxKind::immediate);
  Statement st = conn_.prepare(
      "INSERT INTO runs (uuid, tool_version, manifest_hash, config_hash, host, origin,"
      " started_at, status, l2_mode, driver_version, runtime_version, config_text)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8, ?9, ?10, ?11)");
  st.bind_all(uuid, info.tool_version, info.manifest_hash, info.config_hash, host, path().string(),
              utc_timestamp(), l2_mode_name(info.l2_mode), info.driver_version,
              info.runtime_version, info.config_text)
      .run();
  const std::int64_t id = conn_.last_insert_rowid();
  tx.commit();
  return id;
}

void Database::record_attainable_bandwidth(std::int64_t run_id, std::int64_t device_id,
                                           double gbps) {
  require_writable("record the attainable bandwidth");
  Transaction tx(conn_, TxKind::immediate);
  Statement st = conn_.prepare(
      "INSERT INTO run_devices (run_id, device_id, attainable_gbps) VALUES (?1, ?2, ?3)"
      " ON CONFLICT (run_id, device_id) DO UPDATE SET attainable_gbps = excluded.attainable_gbps");
  st.bind_all(run_id, device_id, gbps).run();
  tx.commit();
}

std::int64_t Database::insert_measurement(const Measurement& m) {
  return insert_measurements(std::span<const Measurement>(&m, 1)).front();
}

std::vector<std::int64_t> Database::insert_measurements(std::span<const Measurement> ms) {
  require_writable("record a measurement");
  for (const Measurement& m : ms) {
    if (m.kernel_id.empty())
      throw DbError(Problem::invalid_data, path(),
                    quoted(path()) + ": a measurement without a kernel id");
    if (m.outcome == Outcome::ok && !m.median_us)
      throw DbError(Problem::invalid_data, path(),
                    quoted(path()) + ": measurement of '" + m.kernel_id +
                        "' has outcome ok but no median time");
    if (const std::string why = op_dtype_mismatch(m.dtype, m.op); !why.empty())
      throw DbError(Problem::invalid_data, path(),
                    quoted(path()) + ": measurement of '" + m.kernel_id + "': " + why);
    // The row rules (db/row_rules.hpp) a reader applies, applied before writing.
    auto refuse = [&](const char* column, const std::string& why) {
      throw DbError(Problem::invalid_data, path(),
                    fmt::format("{}: measurement of '{}': {}: {}", quoted(path()),
                                printable(m.kernel_id, 80), column, why));
    };
    if (auto why = bad_text(m.kernel_id, max_name_bytes, false)) refuse("kernel_id", *why);
    if (auto why = bad_text(m.params.family, max_name_bytes, false)) refuse("family", *why);
    if (auto why = bad_text(m.error, max_error_bytes, true)) refuse("error", *why);
    for (const auto& [column, t] : {std::pair{"median_us", m.median_us},
                                    std::pair{"p10_us", m.p10_us}, std::pair{"p90_us", m.p90_us}})
      if (t)
        if (auto why = bad_time(*t, m.outcome == Outcome::ok)) refuse(column, *why);
    if (m.gbps)
      if (auto why = bad_rate(*m.gbps)) refuse("gbps", *why);
    to_db_n(m.n, path());  // throws for an n beyond a 64-bit row
    if (m.segment_size) to_db_n(*m.segment_size, path());
    if (auto why = bad_segmentation(m.kernel_id, m.dtype, m.op, m.n, m.segment_size))
      refuse("segment_size", *why);
  }
  std::vector<std::int64_t> ids;
  if (ms.empty()) return ids;
  ids.reserve(ms.size());
  Transaction tx(conn_, TxKind::immediate);
  // A measurement's GPU must be a card of its device's model (the foreign key says only that
  // the GPU exists); a runner stamps every result with one GPU, so one look-up a call will do.
  std::map<std::int64_t, std::int64_t> gpu_device;
  Statement gpu = conn_.prepare("SELECT device_id FROM gpus WHERE id = ?1");
  for (const Measurement& m : ms) {
    if (!m.gpu_id || gpu_device.count(*m.gpu_id)) continue;
    gpu.reset();
    gpu.bind(1, *m.gpu_id);
    if (!gpu.step())
      throw DbError(Problem::invalid_data, path(),
                    fmt::format("{}: measurement of '{}': no GPU with id {}", quoted(path()),
                                m.kernel_id, *m.gpu_id));
    gpu_device[*m.gpu_id] = gpu.column_int(0);
  }
  for (const Measurement& m : ms)
    if (m.gpu_id && gpu_device.at(*m.gpu_id) != m.device_id)
      throw DbError(Problem::invalid_data, path(),
                    fmt::format("{}: measurement of '{}': GPU {} is a card of device {}, not of "
                                "device {}",
                                quoted(path()), m.kernel_id, *m.gpu_id, gpu_device.at(*m.gpu_id),
                                m.device_id));
  Statement st = conn_.prepare(
      "INSERT INTO measurements (run_id, seq, device_id, gpu_id, " + measurement_columns.names() +
      ") VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM measurements WHERE run_id = ?1), ?2, "
      "?3, " +
      measurement_columns.parameters(4) + ")");
  for (const Measurement& m : ms) {
    st.reset();
    st.bind_all(m.run_id, m.device_id, m.gpu_id);
    if (m.measured_at.empty()) {
      Measurement stamped = m;
      stamped.measured_at = utc_timestamp();
      bind_measurement(st, 4, stamped);
    } else {
      bind_measurement(st, 4, m);
    }
    st.run();
    ids.push_back(conn_.last_insert_rowid());
  }
  tx.commit();
  return ids;
}

void Database::end_run(std::int64_t run_id, RunStatus status) {
  require_writable("end a run");
  Transaction tx(conn_, TxKind::immediate);
  Statement st = conn_.prepare("UPDATE runs SET status = ?2, ended_at = ?3 WHERE id = ?1");
  st.bind_all(run_id, run_status_name(status), utc_timestamp()).run();
  if (conn_.changes() != 1)
    throw DbError(Problem::invalid_data, path(),
                  quoted(path()) + ": no run with id " + std::to_string(run_id));
  Statement q = conn_.prepare("SELECT uuid FROM runs WHERE id = ?1");
  q.bind_all(run_id);
  const std::string uuid = q.step() ? q.column_text(0) : std::string();
  tx.commit();
  std::erase_if(leases_, [&](const RunLease& l) { return l.uuid() == uuid; });
}

std::vector<std::int64_t> Database::settle_abandoned_runs() {
  require_writable("settle abandoned runs");
  std::vector<std::int64_t> settled;
  const std::string host = this_host();
  std::error_code ec;
  // An in-memory database's runs live and die with this process: nothing to settle.
  if (host.empty() || !std::filesystem::is_regular_file(path(), ec)) return settled;
  std::vector<std::pair<std::int64_t, std::string>> running;
  {
    Statement q = conn_.prepare("SELECT id, uuid FROM runs WHERE status = 'running' AND host = ?1");
    q.bind_all(host);
    while (q.step()) running.emplace_back(q.column_int(0), q.column_text(1));
  }
  for (const auto& [id, uuid] : running) {
    if (RunLease::held(path(), uuid)) continue;
    Transaction tx(conn_, TxKind::immediate);
    Statement st = conn_.prepare(
        "UPDATE runs SET status = 'interrupted', ended_at = COALESCE("
        "(SELECT max(measured_at) FROM measurements WHERE run_id = ?1), started_at)"
        " WHERE id = ?1 AND status = 'running'");
    st.bind_all(id).run();
    const bool changed = conn_.changes() == 1;
    tx.commit();
    if (changed) settled.push_back(id);
    std::filesystem::remove(RunLease::file(path(), uuid), ec);
  }
  return settled;
}

void Database::replace_winners(std::int64_t device_id, DType dtype, Op op,
                               std::span<const Winner> winners, L2Mode mode) {
  require_writable("replace winners");
  const std::string file = quoted(path());
  const std::string mode_name = l2_mode_name(mode);
  auto bad = [&](const std::string& what) {
    return DbError(Problem::invalid_data, path(),
                   file + ": " + mode_name + " winners of " + dtype_name(dtype) + " " +
                       op_name(op) + ": " + what);
  };
  if (const std::string why = op_dtype_mismatch(dtype, op); !why.empty()) throw bad(why);
  std::vector<Winner> sorted(winners.begin(), winners.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const Winner& a, const Winner& b) { return a.n_lo < b.n_lo; });
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const Winner& w = sorted[i];
    if (w.dtype != dtype || w.op != op) throw bad("a winner of another dtype or op was passed");
    if (w.l2_mode != mode)
      throw bad("a " + std::string(l2_mode_name(w.l2_mode)) + " winner ('" + w.kernel_id +
                "') was passed");
    if (w.n_lo > w.n_hi)
      throw bad("interval [" + std::to_string(w.n_lo) + ", " + std::to_string(w.n_hi) +
                "] is empty");
    for (const std::string* id :
         {&w.kernel_id, w.runner_up_kernel_id ? &*w.runner_up_kernel_id : nullptr})
      if (id && is_segmented_id(*id))
        throw bad("'" + *id +
                  "' is a segmented kernel: its winners are segmented winners "
                  "(replace_segmented_winners)");
    if (i > 0 && w.n_lo <= sorted[i - 1].n_hi)
      throw bad("intervals [" + std::to_string(sorted[i - 1].n_lo) + ", " +
                std::to_string(sorted[i - 1].n_hi) + "] and [" + std::to_string(w.n_lo) + ", " +
                std::to_string(w.n_hi) + "] overlap");
  }
  Transaction tx(conn_, TxKind::immediate);
  Statement evidence = conn_.prepare(
      "SELECT kernel_id, outcome, l2_mode, segment_size IS NOT NULL FROM measurements"
      " WHERE id = ?1 AND device_id = ?2 AND dtype = ?3 AND op = ?4");
  for (const Winner& w : sorted) {
    evidence.reset();
    evidence.bind_all(w.measurement_id, device_id, dtype_name(dtype), op_name(op));
    if (!evidence.step())
      throw bad("measurement " + std::to_string(w.measurement_id) +
                " is not one of this device, dtype and op");
    if (evidence.column_text(0) != w.kernel_id || evidence.column_text(1) != "ok")
      throw bad("measurement " + std::to_string(w.measurement_id) +
                " is not an ok measurement of '" + w.kernel_id + "'");
    // A winner's mode is its evidence's: a warm time says nothing about a cold launch.
    if (evidence.column_text(2) != mode_name)
      throw bad("measurement " + std::to_string(w.measurement_id) + " of '" + w.kernel_id +
                "' is a " + evidence.column_text(2) + "-L2 measurement, not " + mode_name);
    if (w.runner_up_measurement_id) {
      evidence.reset();
      evidence.bind_all(*w.runner_up_measurement_id, device_id, dtype_name(dtype), op_name(op));
      if (!evidence.step())
        throw bad("runner-up measurement " + std::to_string(*w.runner_up_measurement_id) +
                  " is not one of this device, dtype and op");
      if (evidence.column_text(2) != mode_name)
        throw bad("runner-up measurement " + std::to_string(*w.runner_up_measurement_id) +
                  " is a " + evidence.column_text(2) + "-L2 measurement, not " + mode_name);
      if (evidence.column_int(3) != 0)
        throw bad("runner-up measurement " + std::to_string(*w.runner_up_measurement_id) +
                  " is a segmented measurement");
    }
  }
  evidence.reset();
  Statement del = conn_.prepare(
      "DELETE FROM winners WHERE device_id = ?1 AND dtype = ?2 AND op = ?3 AND l2_mode = ?4");
  del.bind_all(device_id, dtype_name(dtype), op_name(op), mode_name).run();
  Statement ins = conn_.prepare(
      "INSERT INTO winners (device_id, dtype, op, l2_mode, n_lo, n_hi, kernel_id, measurement_id,"
      " runner_up_kernel_id, runner_up_measurement_id, driver_version, runtime_version, run_id)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  for (const Winner& w : sorted) {
    ins.reset();
    ins.bind_all(device_id, dtype_name(dtype), op_name(op), mode_name, to_db_n(w.n_lo, path()),
                 to_db_n(w.n_hi, path()), w.kernel_id, w.measurement_id, w.runner_up_kernel_id,
                 w.runner_up_measurement_id, w.driver_version, w.runtime_version, w.run_id)
        .run();
  }
  tx.commit();
}

namespace {
/// "'seg.group.b256.g8.v4.fixed.f32.sum' (sizes 1..64, counts 1..4096)": a segmented winner as
/// messages name it.
std::string seg_winner_name(const SegmentedWinner& w) {
  return fmt::format("'{}' (sizes {}..{}, counts {}..{})", printable(w.kernel_id, 80), w.size_lo,
                     w.size_hi, w.count_lo, w.count_hi);
}
}  // namespace

void Database::replace_segmented_winners(std::int64_t device_id, DType dtype, Op op,
                                         std::string_view layout,
                                         std::span<const SegmentedWinner> winners, L2Mode mode) {
  require_writable("replace segmented winners");
  const std::string mode_name = l2_mode_name(mode);
  auto bad = [&](const std::string& what) {
    return DbError(Problem::invalid_data, path(),
                   fmt::format("{}: {} segmented winners of {} {} {} on device {}: {}",
                               quoted(path()), mode_name, dtype_name(dtype), op_name(op),
                               printable(layout, 80), device_id, what));
  };
  if (const std::string why = op_dtype_mismatch(dtype, op); !why.empty()) throw bad(why);
  if (auto why = bad_layout_name(layout)) throw bad("the layout " + *why);
  std::vector<SegmentedWinner> sorted(winners.begin(), winners.end());
  std::sort(sorted.begin(), sorted.end(), [](const SegmentedWinner& a, const SegmentedWinner& b) {
    return std::tie(a.size_lo, a.count_lo) < std::tie(b.size_lo, b.count_lo);
  });
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const SegmentedWinner& w = sorted[i];
    const std::string name = "winner " + seg_winner_name(w);
    if (w.dtype != dtype || w.op != op)
      throw bad(fmt::format("{} is of {} {}", name, dtype_name(w.dtype), op_name(w.op)));
    if (w.layout != layout)
      throw bad(fmt::format("{} is of the layout '{}'", name, printable(w.layout, 80)));
    if (w.l2_mode != mode) throw bad(fmt::format("{} is {}-L2", name, l2_mode_name(w.l2_mode)));
    if (w.size_lo < 1 || w.size_lo > w.size_hi || w.count_lo < 1 || w.count_lo > w.count_hi)
      throw bad(name + " is no rectangle: each bound must be at least 1 and lo <= hi");
    for (std::uint64_t v : {w.size_hi, w.count_hi}) to_db_n(v, path());
    if (auto why = bad_segmented_kernel(w.kernel_id, dtype, op, layout))
      throw bad(name + ": " + *why);
    if (w.runner_up_kernel_id)
      if (auto why = bad_segmented_kernel(*w.runner_up_kernel_id, dtype, op, layout))
        throw bad(name + ": its runner-up " + *why);
    for (std::size_t k = 0; k < i; ++k) {
      const SegmentedWinner& o = sorted[k];
      if (o.size_lo <= w.size_hi && w.size_lo <= o.size_hi && o.count_lo <= w.count_hi &&
          w.count_lo <= o.count_hi)
        throw bad(fmt::format("winners {} and {} overlap", seg_winner_name(o), seg_winner_name(w)));
    }
  }
  Transaction tx(conn_, TxKind::immediate);
  Statement evidence = conn_.prepare(
      "SELECT kernel_id, outcome, l2_mode, segment_size FROM measurements"
      " WHERE id = ?1 AND device_id = ?2 AND dtype = ?3 AND op = ?4");
  // Why measurement \p id cannot be the evidence (of \p kernel_id when given) or the runner-up
  // of a winner: it must be an ok segmented measurement of this device, dtype, op and L2 mode
  // whose kernel has this layout.
  auto refuse_evidence = [&](const std::string& name, const char* role, std::int64_t id,
                             const std::optional<std::string>& kernel_id) {
    evidence.reset();
    evidence.bind_all(id, device_id, dtype_name(dtype), op_name(op));
    const std::string m = fmt::format("{}: its {} measurement {}", name, role, id);
    if (!evidence.step()) throw bad(m + " is not one of this device, dtype and op");
    const std::string kernel = evidence.column_text(0);
    if (kernel_id && kernel != *kernel_id)
      throw bad(fmt::format("{} is a measurement of '{}', not of '{}'", m, printable(kernel, 80),
                            printable(*kernel_id, 80)));
    if (evidence.column_text(1) != "ok")
      throw bad(fmt::format("{} is not ok ({})", m, printable(evidence.column_text(1), 40)));
    if (evidence.column_text(2) != mode_name)
      throw bad(fmt::format("{} is a {}-L2 measurement, not {}", m,
                            printable(evidence.column_text(2), 40), mode_name));
    if (evidence.is_null(3)) throw bad(m + " is a whole-array measurement, not a segmented one");
    const auto seg = parse_segmented_id(kernel);
    if (!seg || seg->layout != layout)
      throw bad(fmt::format("{} is of the kernel '{}', not of the layout {}", m,
                            printable(kernel, 80), printable(layout, 80)));
  };
  for (const SegmentedWinner& w : sorted) {
    const std::string name = "winner " + seg_winner_name(w);
    refuse_evidence(name, "evidence", w.measurement_id, w.kernel_id);
    if (w.runner_up_measurement_id)
      refuse_evidence(name, "runner-up", *w.runner_up_measurement_id, w.runner_up_kernel_id);
  }
  evidence.reset();
  Statement del = conn_.prepare(
      "DELETE FROM segmented_winners WHERE device_id = ?1 AND dtype = ?2 AND op = ?3"
      " AND layout = ?4 AND l2_mode = ?5");
  del.bind_all(device_id, dtype_name(dtype), op_name(op), layout, mode_name).run();
  Statement ins = conn_.prepare(
      "INSERT INTO segmented_winners (device_id, dtype, op, l2_mode, layout, size_lo, size_hi,"
      " count_lo, count_hi, kernel_id, measurement_id, runner_up_kernel_id,"
      " runner_up_measurement_id, driver_version, runtime_version, run_id)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
  for (const SegmentedWinner& w : sorted) {
    ins.reset();
    ins.bind_all(device_id, dtype_name(dtype), op_name(op), mode_name, layout,
                 to_db_n(w.size_lo, path()), to_db_n(w.size_hi, path()),
                 to_db_n(w.count_lo, path()), to_db_n(w.count_hi, path()), w.kernel_id,
                 w.measurement_id, w.runner_up_kernel_id, w.runner_up_measurement_id,
                 w.driver_version, w.runtime_version, w.run_id)
        .run();
  }
  tx.commit();
}

// --- queries -------------------------------------------------------------------------------------

bool Database::has_final_measurement(const MeasurementKey& k) {
  // A whole-array key (segment_size 0) is a row without one: `IS` matches NULL, and the index
  // measurements_by_key covers it.
  Statement st = conn_.prepare(
      std::string("SELECT 1 FROM measurements WHERE device_id = ?1 AND kernel_id = ?2 AND dtype = "
                  "?3 AND op = ?4 AND n = ?5 AND l2_mode = ?6 AND ") +
      (has_segmented() ? "segment_size IS ?7" : "?7 IS NULL") +
      " AND outcome IN ('ok', 'incorrect', 'launch_failed') LIMIT 1");
  std::optional<std::int64_t> size;
  if (k.segment_size) size = to_db_n(k.segment_size, path());
  st.bind_all(k.device_id, k.kernel_id, dtype_name(k.dtype), op_name(k.op), to_db_n(k.n, path()),
              l2_mode_name(k.l2_mode), size);
  return st.step();
}

std::set<MeasurementKey> Database::final_measured_keys(std::int64_t device_id) {
  std::set<MeasurementKey> keys;
  Statement st = conn_.prepare(std::string("SELECT DISTINCT kernel_id, dtype, op, n, l2_mode, ") +
                               (has_segmented() ? "coalesce(segment_size, 0)" : "0") +
                               " FROM measurements WHERE device_id = ?1"
                               " AND outcome IN ('ok', 'incorrect', 'launch_failed')");
  st.bind(1, device_id);
  while (st.step())
    if (names_known(st, 1, 2, 4))
      keys.insert({device_id, st.column_text(0), column_dtype(st, 1), column_op(st, 2),
                   static_cast<std::uint64_t>(st.column_int(3)),
                   parse_l2_mode(st.column_text(4)).value_or(L2Mode::cold),
                   static_cast<std::uint64_t>(std::max<std::int64_t>(st.column_int(5), 0))});
  return keys;
}

std::vector<DeviceRecord> Database::devices() {
  std::vector<DeviceRecord> out;
  Statement st =
      conn_.prepare(std::string("SELECT ") + device_columns + " FROM devices ORDER BY id");
  while (st.step()) out.push_back(read_device(st));
  return out;
}

std::optional<DeviceRecord> Database::find_device(std::string_view key) {
  Statement st = conn_.prepare(std::string("SELECT ") + device_columns +
                               " FROM devices WHERE fingerprint = ?1");
  st.bind(1, key);
  if (!st.step()) return std::nullopt;
  return read_device(st);
}

namespace {
void attach_attainable(Connection& conn, std::vector<RunRecord>& runs) {
  Statement st = conn.prepare(
      "SELECT device_id, attainable_gbps FROM run_devices WHERE run_id = ?1 ORDER BY device_id");
  for (RunRecord& r : runs) {
    st.reset();
    st.bind(1, r.id);
    while (st.step()) r.attainable.push_back({st.column_int(0), st.column_double(1)});
  }
}
}  // namespace

std::vector<RunRecord> Database::runs() {
  std::vector<RunRecord> out;
  {
    Statement st =
        conn_.prepare("SELECT " + run_columns(has_provenance()) + " FROM runs ORDER BY id");
    while (st.step()) out.push_back(read_run(st));
  }
  attach_attainable(conn_, out);
  return out;
}

std::vector<GpuRecord> Database::gpus() {
  std::vector<GpuRecord> out;
  if (!has_provenance()) return out;
  Statement st = conn_.prepare("SELECT id, uuid, device_id FROM gpus ORDER BY id");
  while (st.step()) out.push_back({st.column_int(0), st.column_text(1), st.column_int(2)});
  return out;
}

std::optional<RunRecord> Database::find_run(std::int64_t run_id) {
  std::vector<RunRecord> out;
  {
    Statement st =
        conn_.prepare("SELECT " + run_columns(has_provenance()) + " FROM runs WHERE id = ?1");
    st.bind(1, run_id);
    if (st.step()) out.push_back(read_run(st));
  }
  if (out.empty()) return std::nullopt;
  attach_attainable(conn_, out);
  return out.front();
}

std::vector<MeasurementRecord> Database::measurements(const MeasurementFilter& f) {
  std::vector<MeasurementRecord> out;
  Statement st =
      conn_.prepare(select_measurements(has_provenance(), has_segmented()) +
                    " WHERE (?1 IS NULL OR device_id = ?1) AND (?2 IS NULL OR run_id = ?2)"
                    " AND (?3 IS NULL OR dtype = ?3) AND (?4 IS NULL OR op = ?4) ORDER BY id");
  st.bind(1, f.device_id).bind(2, f.run_id);
  if (f.dtype) st.bind(3, dtype_name(*f.dtype));
  else st.bind(3, nullptr);
  if (f.op) st.bind(4, op_name(*f.op));
  else st.bind(4, nullptr);
  while (st.step())
    if (measurement_names_known(st, 5)) out.push_back(read_measurement_row(st));
  return out;
}

std::optional<MeasurementRecord> Database::find_measurement(std::int64_t id) {
  Statement st =
      conn_.prepare(select_measurements(has_provenance(), has_segmented()) + " WHERE id = ?1");
  st.bind(1, id);
  if (!st.step() || !measurement_names_known(st, 5)) return std::nullopt;
  return read_measurement_row(st);
}

std::vector<WinnerRecord> Database::winners(std::optional<std::int64_t> device_id) {
  std::vector<WinnerRecord> out;
  Statement st = conn_.prepare(
      "SELECT w.id, w.device_id, w.dtype, w.op, w.n_lo, w.n_hi, w.kernel_id, w.measurement_id,"
      " w.runner_up_kernel_id, w.runner_up_measurement_id, w.driver_version, w.runtime_version,"
      " w.run_id, s.path, w.l2_mode FROM winners w LEFT JOIN sources s ON s.id = w.source_id"
      " WHERE ?1 IS NULL OR w.device_id = ?1"
      " ORDER BY w.device_id, w.dtype, w.op, w.l2_mode, w.n_lo");
  st.bind(1, device_id);
  while (st.step()) {
    if (!names_known(st, 2, 3, 14)) continue;  // a row db check names (db/row_rules.hpp)
    WinnerRecord w;
    w.id = st.column_int(0);
    w.device_id = st.column_int(1);
    w.dtype = column_dtype(st, 2);
    w.op = column_op(st, 3);
    w.n_lo = static_cast<std::uint64_t>(st.column_int(4));
    w.n_hi = static_cast<std::uint64_t>(st.column_int(5));
    w.kernel_id = st.column_text_prefix(6, max_name_bytes);
    w.measurement_id = st.column_int(7);
    if (!st.is_null(8)) w.runner_up_kernel_id = st.column_text_prefix(8, max_name_bytes);
    w.runner_up_measurement_id = st.column_opt_int(9);
    w.driver_version = static_cast<int>(st.column_int(10));
    w.runtime_version = static_cast<int>(st.column_int(11));
    w.run_id = st.column_opt_int(12);
    w.source = st.column_opt_text(13);
    w.l2_mode = parse_l2_mode(st.column_text(14)).value_or(L2Mode::cold);
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<SegmentedWinnerRecord> Database::segmented_winners(
    std::optional<std::int64_t> device_id) {
  std::vector<SegmentedWinnerRecord> out;
  if (!has_segmented()) return out;
  Statement st = conn_.prepare(
      "SELECT w.id, w.device_id, w.dtype, w.op, w.l2_mode, w.layout, w.size_lo, w.size_hi,"
      " w.count_lo, w.count_hi, w.kernel_id, w.measurement_id, w.runner_up_kernel_id,"
      " w.runner_up_measurement_id, w.driver_version, w.runtime_version, w.run_id, s.path"
      " FROM segmented_winners w LEFT JOIN sources s ON s.id = w.source_id"
      " WHERE ?1 IS NULL OR w.device_id = ?1"
      " ORDER BY w.device_id, w.dtype, w.op, w.layout, w.l2_mode, w.size_lo, w.count_lo");
  st.bind(1, device_id);
  while (st.step()) {
    // A row whose names this binary lacks is skipped, never read as the enums' first values;
    // db check names it (db/row_rules.hpp).
    if (!names_known(st, 2, 3, 4) || bad_layout_name(st.column_text_prefix(5, max_name_bytes)))
      continue;
    SegmentedWinnerRecord w;
    w.id = st.column_int(0);
    w.device_id = st.column_int(1);
    w.dtype = column_dtype(st, 2);
    w.op = column_op(st, 3);
    w.l2_mode = parse_l2_mode(st.column_text(4)).value_or(L2Mode::cold);
    w.layout = st.column_text_prefix(5, max_name_bytes);
    w.size_lo = static_cast<std::uint64_t>(st.column_int(6));
    w.size_hi = static_cast<std::uint64_t>(st.column_int(7));
    w.count_lo = static_cast<std::uint64_t>(st.column_int(8));
    w.count_hi = static_cast<std::uint64_t>(st.column_int(9));
    w.kernel_id = st.column_text_prefix(10, max_name_bytes);
    w.measurement_id = st.column_int(11);
    if (!st.is_null(12)) w.runner_up_kernel_id = st.column_text_prefix(12, max_name_bytes);
    w.runner_up_measurement_id = st.column_opt_int(13);
    w.driver_version = static_cast<int>(st.column_int(14));
    w.runtime_version = static_cast<int>(st.column_int(15));
    w.run_id = st.column_opt_int(16);
    w.source = st.column_opt_text(17);
    out.push_back(std::move(w));
  }
  return out;
}

Counts Database::counts() {
  Counts c;
  Transaction tx(conn_, TxKind::deferred);  // one consistent snapshot of them all
  c.devices = conn_.query_int("SELECT count(*) FROM devices");
  c.runs = conn_.query_int("SELECT count(*) FROM runs");
  c.measurements = conn_.query_int("SELECT count(*) FROM measurements");
  c.winners = conn_.query_int("SELECT count(*) FROM winners");
  if (has_segmented())
    c.segmented_winners = conn_.query_int("SELECT count(*) FROM segmented_winners");
  tx.commit();
  return c;
}

}  // namespace tunedreduce::db
