// tunedreduce db: inspect, check, export, import, merge and migrate tuning databases.
// Behaviour and exit codes: docs/database.md.

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "common/exit_codes.hpp"
#include "common/json.hpp"
#include "common/paths.hpp"
#include "common/printable.hpp"
#include "db/bench.hpp"
#include "db/check.hpp"
#include "db/dataset.hpp"
#include "db/schema.hpp"
#include "db/statement.hpp"
#include "kernels/registry.hpp"
#include "tuner/config/suggest.hpp"
#include "kernels/segmented/segmented.hpp"

namespace po = boost::program_options;

namespace tunedreduce::cli {

namespace {

constexpr const char* usage_text =
    "usage: tunedreduce db ACTION [OPTIONS]\n\n"
    "actions:\n"
    "  info                      devices, runs and row counts (--json: as JSON)\n"
    "  check [--full] [--library LIB] [--json]\n"
    "                            quick_check (integrity_check with --full), schema version,\n"
    "                            rows naming kernel ids this binary lacks; with --library, the\n"
    "                            winner rows a built libtunedreduce.so has no kernel for\n"
    "  export [--output FILE]    the whole database as JSON (stdout by default)\n"
    "  import FILE               add an export file's rows to the database\n"
    "  merge --into OUT A.db B.db ...\n"
    "                            union of databases into a new file OUT (deterministic)\n"
    "  migrate                   upgrade an older schema in place\n\n"
    "Every action takes --db PATH (default: $TUNEDREDUCE_DB, else\n"
    "$XDG_DATA_HOME/tunedreduce/tune.db, else ~/.local/share/tunedreduce/tune.db),\n"
    "--log-level and --help. Exit codes: docs/database.md.\n";

struct Options {
  CommonOptions common;
  double busy_timeout_s = 30;
  bool immutable = false;
};

void add_reader_options(po::options_description& desc, Options& o) {
  desc.add_options()("immutable", po::bool_switch(&o.immutable),
                     "open the file as immutable (no locks; for shipped files nobody writes)");
}

void add_writer_options(po::options_description& desc, Options& o) {
  desc.add_options()("busy-timeout",
                     po::value<double>(&o.busy_timeout_s)->default_value(30)->value_name("S"),
                     "seconds to wait for another writer before giving up (exit 4)");
}

std::chrono::milliseconds busy_ms(double s) {
  if (!(s >= 0) || s > 86400)
    throw Error("--busy-timeout must be between 0 and 86400 seconds", exit_code::usage);
  return std::chrono::milliseconds(static_cast<long long>(std::llround(s * 1000)));
}

// The location, and where it came from, are part of every "no database" message.
db::Database open_reader(const Options& o, DbLocation& loc) {
  loc = resolve_db_path_for_reading(o.common.db);
  db::ReaderOptions ro;
  ro.immutable = o.immutable;
  try {
    return db::Database::open_reader(loc.path, ro);
  } catch (const db::DbError& e) {
    if (e.problem() != db::Problem::missing) throw;
    throw db::DbError(e.problem(), e.path(),
                      std::string(e.what()) + "; the location came from " + loc.source);
  }
}

// (A fresh account has no data folder yet: import creates it, as the tuner does.)
db::Database open_writer(const Options& o, DbLocation& loc) {
  loc = resolve_db_path(o.common.db);
  create_data_folder(loc);
  db::WriterOptions wo;
  wo.busy_timeout = busy_ms(o.busy_timeout_s);
  return db::Database::open_writer(loc.path, wo);
}

// --- info ----------------------------------------------------------------------------------------

int info(const Options& o, bool json) {
  DbLocation loc;
  db::Database d = open_reader(o, loc);
  db::Connection& c = d.connection();
  const db::Counts n = d.counts();
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(loc.path, ec);
  std::string journal = c.query_text("PRAGMA journal_mode");
  // An immutable open ignores a -wal file and calls every file "delete"; the header tells what
  // the file is (byte 18, its read version: 2 in WAL mode).
  if (o.immutable) {
    std::ifstream f(loc.path, std::ios::binary);
    char header[19] = {};
    if (f.read(header, sizeof header) && header[18] == 2) journal = "wal";
  }
  const std::size_t bench_runs = db::bench_runs(d).size(),
                    bench_results = db::bench_results(d).size(),
                    segmented_bench = db::segmented_bench_results(d).size();
  // Per device: measurements, winners and segmented winners of each L2 mode.
  struct DeviceRows {
    std::int64_t measurements, cold, warm, seg_cold, seg_warm;
  };
  const std::vector<db::DeviceRecord> devices = d.devices();
  std::vector<DeviceRows> device_rows;
  for (const db::DeviceRecord& dev : devices) {
    // Segmented winners since schema version 12: none in an older file.
    db::Statement st = c.prepare(
        std::string("SELECT (SELECT count(*) FROM measurements WHERE device_id = ?1),"
                    " (SELECT count(*) FROM winners WHERE device_id = ?1 AND l2_mode = 'cold'),"
                    " (SELECT count(*) FROM winners WHERE device_id = ?1 AND l2_mode = 'warm'), ") +
        (d.has_segmented()
             ? "(SELECT count(*) FROM segmented_winners WHERE device_id = ?1 AND l2_mode = "
               "'cold'), (SELECT count(*) FROM segmented_winners WHERE device_id = ?1 AND "
               "l2_mode = 'warm')"
             : "0, 0"));
    st.bind(1, dev.id);
    st.step();
    device_rows.push_back(
        {st.column_int(0), st.column_int(1), st.column_int(2), st.column_int(3), st.column_int(4)});
  }
  const std::vector<db::RunRecord> runs = d.runs();
  std::vector<std::int64_t> run_measurements;
  for (const db::RunRecord& r : runs) {
    db::Statement st = c.prepare("SELECT count(*) FROM measurements WHERE run_id = ?1");
    st.bind(1, r.id);
    st.step();
    run_measurements.push_back(st.column_int(0));
  }
  std::vector<std::pair<std::string, std::string>> sources;
  db::Statement src = c.prepare("SELECT path, kind FROM sources ORDER BY path");
  while (src.step()) sources.emplace_back(src.column_text(0), src.column_text(1));

  if (json) {
    // The same facts for scripts; text from the file as stored (JSON escapes it).
    Json out = Json::object();
    out.set("database", loc.path.string());
    out.set("location_from", loc.source);
    out.set("schema_version", static_cast<std::int64_t>(d.file_schema_version()));
    out.set("binary_schema_version", static_cast<std::int64_t>(db::schema_version));
    out.set("journal_mode", journal);
    out.set("bytes", static_cast<std::int64_t>(ec ? 0 : bytes));
    Json rows = Json::object();
    rows.set("devices", static_cast<std::int64_t>(n.devices));
    rows.set("runs", static_cast<std::int64_t>(n.runs));
    rows.set("measurements", static_cast<std::int64_t>(n.measurements));
    rows.set("winners", static_cast<std::int64_t>(n.winners));
    rows.set("segmented_winners", static_cast<std::int64_t>(n.segmented_winners));
    rows.set("bench_runs", static_cast<std::int64_t>(bench_runs));
    rows.set("bench_results", static_cast<std::int64_t>(bench_results));
    rows.set("segmented_bench_results", static_cast<std::int64_t>(segmented_bench));
    out.set("rows", std::move(rows));
    Json devs = Json::array();
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const auto& dev = devices[i];
      const auto& f = dev.fingerprint;
      const DeviceRows& k = device_rows[i];
      Json j = Json::object();
      j.set("key", dev.key);
      j.set("name", f.name);
      j.set("arch", f.arch());
      j.set("sm_count", static_cast<std::int64_t>(f.sm_count));
      j.set("total_mem_bytes", static_cast<std::int64_t>(f.total_mem_bytes));
      j.set("bus_width_bits", static_cast<std::int64_t>(f.bus_width_bits));
      j.set("l2_bytes", static_cast<std::int64_t>(f.l2_bytes));
      j.set("ecc", f.ecc);
      j.set("theoretical_gbps", dev.theoretical_gbps);
      j.set("driver_version", static_cast<std::int64_t>(f.driver_version));
      j.set("runtime_version", static_cast<std::int64_t>(f.runtime_version));
      j.set("measurements", k.measurements);
      j.set("winners", Json(Json::Object{{"cold", Json(k.cold)}, {"warm", Json(k.warm)}}));
      j.set("segmented_winners",
            Json(Json::Object{{"cold", Json(k.seg_cold)}, {"warm", Json(k.seg_warm)}}));
      devs.push_back(std::move(j));
    }
    out.set("devices", std::move(devs));
    Json rs = Json::array();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const db::RunRecord& r = runs[i];
      Json j = Json::object();
      j.set("id", r.id);
      j.set("uuid", r.uuid);
      j.set("status", db::run_status_name(r.status));
      j.set("started_at", r.started_at);
      j.set("ended_at", r.ended_at);
      j.set("host", r.info.host);
      j.set("tool_version", r.info.tool_version);
      j.set("manifest_hash", r.info.manifest_hash);
      j.set("l2_mode", db::l2_mode_name(r.info.l2_mode));
      j.set("measurements", run_measurements[i]);
      rs.push_back(std::move(j));
    }
    out.set("runs", std::move(rs));
    Json srcs = Json::array();
    for (const auto& [path, kind] : sources)
      srcs.push_back(Json(Json::Object{{"path", Json(path)}, {"kind", Json(kind)}}));
    out.set("sources", std::move(srcs));
    std::cout << out.dump(2) << "\n";
    return exit_code::ok;
  }
  // Text from the file (names, hosts, paths) is shown with its control characters escaped
  // (common/printable.hpp): no escape sequence from a database reaches the terminal.
  auto shown = [](std::string_view text) { return printable(text, 400); };
  std::cout << "database: " << shown(loc.path.string()) << " (from " << loc.source << ")\n"
            << "schema:   version " << d.file_schema_version()
            << " (this binary: " << db::schema_version << "), journal mode " << journal << ", "
            << bytes << " bytes\n"
            << "rows:     " << n.devices << " devices, " << n.runs << " runs, " << n.measurements
            << " measurements, " << n.winners << " winners, " << n.segmented_winners
            << " segmented winners, " << bench_runs << " bench runs (" << bench_results
            << " results"
            << (segmented_bench ? ", " + std::to_string(segmented_bench) + " segmented" : "")
            << ")\n";
  if (n.devices) std::cout << "devices:\n";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& dev = devices[i];
    const auto& f = dev.fingerprint;
    const DeviceRows& k = device_rows[i];
    std::cout << fmt::format(
        "  {}  {}\n      {}, {} SMs, {:.1f} GiB, {}-bit bus, L2 {} KiB, ECC {}, {:.0f} GB/s "
        "theoretical; driver {}, runtime {}; {} measurements, {} winners ({} cold-L2, {} "
        "warm-L2), {} segmented winners ({} cold-L2, {} warm-L2)\n",
        shown(dev.key), shown(f.name), f.arch(), f.sm_count,
        static_cast<double>(f.total_mem_bytes) / (1 << 30), f.bus_width_bits, f.l2_bytes / 1024,
        f.ecc ? "on" : "off", dev.theoretical_gbps, f.driver_version, f.runtime_version,
        k.measurements, k.cold + k.warm, k.cold, k.warm, k.seg_cold + k.seg_warm, k.seg_cold,
        k.seg_warm);
  }
  if (!runs.empty()) std::cout << "runs:\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const db::RunRecord& r = runs[i];
    std::cout << "  " << r.id << "  " << shown(r.uuid) << "  " << db::run_status_name(r.status)
              << "  " << shown(r.started_at) << " .. " << shown(r.ended_at.value_or(""))
              << "  host " << shown(r.info.host) << "  tool " << shown(r.info.tool_version)
              << "  manifest " << shown(r.info.manifest_hash) << "  L2 "
              << db::l2_mode_name(r.info.l2_mode) << "  " << run_measurements[i]
              << " measurements\n";
  }
  if (!sources.empty()) std::cout << "merged or imported from:\n";
  for (const auto& [path, kind] : sources)
    std::cout << "  " << shown(path) << " (" << shown(kind) << ")\n";
  return exit_code::ok;
}

// --- check ---------------------------------------------------------------------------------------

/// The ids of this binary's registries, whole-array and segmented (db check's "unknown" ids).
std::set<std::string> known_kernel_ids() {
  std::set<std::string> known;
  for (const kernels::Entry& e : kernels::registry()) known.insert(e.id);
  for (const kernels::segmented::SegEntry& e : kernels::segmented::seg_registry())
    known.insert(e.id);
  return known;
}

/// `db check --json`: the report's facts as one object (text from the file as stored: JSON
/// escapes it), every finding named as the text form names it.
Json check_json(const DbLocation& loc, const db::CheckReport& r, bool full) {
  const auto by_mode = [](const std::array<std::int64_t, 2>& m) {
    return Json(Json::Object{{"cold", Json(m[static_cast<int>(db::L2Mode::cold)])},
                             {"warm", Json(m[static_cast<int>(db::L2Mode::warm)])}});
  };
  Json out = Json::object();
  out.set("database", loc.path.string());
  out.set("location_from", loc.source);
  out.set("schema_version", static_cast<std::int64_t>(r.schema_version));
  out.set("binary_schema_version", static_cast<std::int64_t>(db::schema_version));
  out.set("integrity_check", full ? "integrity_check" : "quick_check");
  out.set("sound", r.sound());
  Json integrity = Json::array();
  for (const std::string& line : r.integrity) integrity.push_back(Json(line));
  out.set("integrity", std::move(integrity));
  out.set("foreign_key_violations", r.foreign_key_violations);
  out.set("registry_manifest", kernels::manifest_hash());
  Json unknown = Json::array();
  for (const auto& [id, rows] : r.unknown_kernel_ids)
    unknown.push_back(Json(Json::Object{{"id", Json(id)}, {"rows", Json(rows)}}));
  out.set("unknown_kernel_ids", std::move(unknown));
  out.set("winners",
          Json(Json::Object{{"overlapping", by_mode(r.overlapping_by_mode)},
                            {"without_ok_evidence", Json(r.winners_without_ok_evidence)}}));
  Json bad_ids = Json::array();
  for (std::int64_t id : r.bad_segmented_winner_ids) bad_ids.push_back(Json(id));
  out.set("segmented_winners",
          Json(Json::Object{{"overlapping", by_mode(r.overlapping_segmented_by_mode)},
                            {"without_ok_evidence", Json(r.segmented_winners_without_ok_evidence)},
                            {"ids", std::move(bad_ids)}}));
  out.set("provenance", Json(Json::Object{{"measurements_on_another_models_gpu",
                                           Json(r.measurements_on_another_models_gpu)},
                                          {"runs_with_foreign_config_text",
                                           Json(r.runs_with_foreign_config_text)}}));
  Json rows = Json::array();
  for (const db::RowFinding& f : r.row_findings)
    rows.push_back(Json(Json::Object{{"table", Json(f.table)},
                                     {"row", Json(f.row)},
                                     {"id", Json(f.id)},
                                     {"column", Json(f.column)},
                                     {"value", Json(f.value)},
                                     {"why", Json(f.why)}}));
  out.set("row_findings", std::move(rows));
  out.set("row_findings_cut", r.row_findings.size() >= db::CheckReport::max_row_findings);
  out.set("ok", r.ok());
  return out;
}

/// `db check`'s exit code and error line, the same for the text and the JSON form: a corrupt
/// file, rows this binary cannot use (\p where: where the findings were printed), or ok.
int check_verdict(const DbLocation& loc, const db::CheckReport& r, const char* where) {
  if (!r.sound()) {
    std::cerr << "tunedreduce db check: error: " << db::quoted(loc.path)
              << ": is corrupt (the integrity check failed)\n";
    return exit_code::db_unusable;
  }
  if (r.ok()) return exit_code::ok;
  std::cerr << "tunedreduce db check: error: " << db::quoted(loc.path)
            << ": has rows this binary cannot use (" << where << ")\n";
  return exit_code::db_check_failed;
}

int check(const Options& o, bool full, bool json) {
  DbLocation loc;
  db::Database d = open_reader(o, loc);
  const db::CheckReport r = db::check_database(d, known_kernel_ids(), full);
  if (json) {
    std::cout << check_json(loc, r, full).dump(2) << "\n";
    return check_verdict(loc, r, "see the JSON on stdout");
  }
  std::cout << "database:    " << loc.path.string() << "\n"
            << "schema:      version " << r.schema_version
            << " (this binary: " << db::schema_version << ")\n"
            << (full ? "integrity:   " : "quick_check: ") << (r.sound() ? "ok" : "FAILED") << "\n";
  if (!r.sound()) {
    for (const std::string& line : r.integrity) std::cout << "  " << line << "\n";
    return check_verdict(loc, r, "see above");
  }
  std::cout << "foreign keys: "
            << (r.foreign_key_violations ? fmt::format("{} violations", r.foreign_key_violations)
                                         : std::string("ok"))
            << "\n";
  if (r.unknown_kernel_ids.empty()) {
    std::cout << "kernel ids:  all known to this binary (registry manifest "
              << kernels::manifest_hash() << ")\n";
  } else {
    std::cout << "kernel ids:  " << r.unknown_kernel_ids.size()
              << " unknown to this binary (registry manifest " << kernels::manifest_hash()
              << "):\n";
    for (const auto& [id, rows] : r.unknown_kernel_ids)
      std::cout << "  " << printable(id, 120) << " (" << rows << " rows)\n";
  }
  // Overlaps are within one L2 mode: a cold and a warm winner of the same sizes do not overlap.
  std::cout << "winners:     " << r.overlapping_winners << " overlapping ("
            << r.overlapping_by_mode[static_cast<int>(db::L2Mode::cold)] << " cold-L2, "
            << r.overlapping_by_mode[static_cast<int>(db::L2Mode::warm)] << " warm-L2), "
            << r.winners_without_ok_evidence << " without ok evidence of their L2 mode\n";
  // Schema version 12's segmented winners (none in older files): overlaps within one (device,
  // dtype, op, layout, L2 mode), and evidence; each such row named by its id.
  std::cout << "segmented:   " << r.overlapping_segmented_winners << " overlapping ("
            << r.overlapping_segmented_by_mode[static_cast<int>(db::L2Mode::cold)] << " cold-L2, "
            << r.overlapping_segmented_by_mode[static_cast<int>(db::L2Mode::warm)] << " warm-L2), "
            << r.segmented_winners_without_ok_evidence
            << " without ok segmented evidence of their L2 mode and layout\n";
  if (!r.bad_segmented_winner_ids.empty()) {
    std::cout << "  segmented_winners ids:";
    for (std::int64_t id : r.bad_segmented_winner_ids) std::cout << " " << id;
    std::cout << "\n";
  }
  // Schema version 5's provenance (0 and 0 in older files, which have none).
  std::cout << "provenance:  " << r.measurements_on_another_models_gpu
            << " measurements on another model's GPU, " << r.runs_with_foreign_config_text
            << " runs whose configuration text does not hash to their config hash\n";
  // Every rule of db/row_rules.hpp, which SQLite does not verify on a read-only connection.
  if (r.row_findings.empty()) {
    std::cout << "rows:        all keep the row rules\n";
  } else {
    std::cout << "rows:        "
              << (r.row_findings.size() >= db::CheckReport::max_row_findings ? "at least " : "")
              << r.row_findings.size()
              << " break the row rules (table, row, column = value: why):\n";
    for (const db::RowFinding& f : r.row_findings) std::cout << "  " << f.text() << "\n";
  }
  std::cout << "result:      " << (r.ok() ? "ok" : "problems found") << "\n";
  return check_verdict(loc, r, "see above");
}

// --- export / import -----------------------------------------------------------------------------

/// Rows left out because they break the row rules (db/row_rules.hpp): each named on stderr, and
/// exit 9 so that no script takes the output for the whole file.
int report_skipped(const char* action, const std::filesystem::path& file,
                   const std::vector<std::string>& skipped) {
  if (skipped.empty()) return exit_code::ok;
  for (const std::string& line : skipped)
    std::cerr << "tunedreduce " << action << ": skipped " << printable_message(line) << "\n";
  std::cerr << "tunedreduce " << action << ": error: " << printable(db::quoted(file), 400) << ": "
            << skipped.size()
            << " row(s) break the row rules or name such a row and were left out (above); "
               "`tunedreduce db check` lists them\n";
  return exit_code::db_check_failed;
}

int do_export(const Options& o, const std::string& output) {
  DbLocation loc;
  db::Database d = open_reader(o, loc);
  const db::Dataset data = db::read_dataset(d);
  const std::string text = db::dataset_to_json(data).dump(2) + "\n";
  if (output.empty() || output == "-") write_stdout(text);
  else write_file(output, text);
  if (!output.empty() && output != "-")
    std::cerr << "exported " << loc.path.string() << " to " << output << "\n";
  return report_skipped("db export", loc.path, data.skipped);
}

int do_import(const Options& o, const std::string& file) {
  const std::string text =
      read_file_limited(file, max_import_bytes, "an export to import", exit_code::failure);
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const std::runtime_error& e) {
    throw db::DbError(db::Problem::invalid_data, file,
                      "'" + file + "': not valid JSON: " + e.what());
  }
  db::Dataset data = db::dataset_from_json(doc, file);
  db::add_provenance(data, file, "import");
  DbLocation loc;
  db::Database d = open_writer(o, loc);
  const db::MergeStats s = db::import_dataset(d, data);
  std::cout << "imported " << file << " into " << loc.path.string() << ": " << s.devices_added
            << " devices, " << s.runs_added << " runs, " << s.measurements_added
            << " measurements added; " << s.winner_groups_changed << " winner groups changed; "
            << s.bench_runs_added << " bench runs, " << s.gpus_added << " GPUs added";
  if (s.measurement_conflicts || s.winner_conflicts)
    std::cout << "; " << s.measurement_conflicts << " measurement and " << s.winner_conflicts
              << " winner conflicts decided by rule";
  std::cout << "\n";
  return exit_code::ok;
}

// --- merge / migrate -----------------------------------------------------------------------------

int merge(const std::string& into, const std::vector<std::string>& inputs) {
  if (into.empty()) throw Error("db merge needs --into OUT", exit_code::usage);
  if (inputs.empty()) throw Error("db merge needs at least one input database", exit_code::usage);
  refuse_a_file_twice(inputs, "the input");
  std::vector<std::filesystem::path> paths(inputs.begin(), inputs.end());
  const db::MergeStats s = db::merge_files(paths, into);
  db::Database out = db::Database::open_reader(into);
  const db::Counts n = out.counts();
  std::cout << "merged " << inputs.size() << " databases into " << into << ": " << n.devices
            << " devices, " << n.runs << " runs, " << n.measurements << " measurements, "
            << n.winners << " winners, " << db::bench_runs(out).size() << " bench runs, "
            << out.gpus().size() << " GPUs";
  if (s.measurement_conflicts || s.winner_conflicts)
    std::cout << "; " << s.measurement_conflicts << " measurement and " << s.winner_conflicts
              << " winner conflicts decided by rule";
  std::cout << "\n";
  return report_skipped("db merge", into, s.skipped);
}

int migrate(const Options& o) {
  // A file that is not there is not migrated into existence: `--db typo.db` would leave an
  // empty database behind and say it migrated.
  const DbLocation where = resolve_db_path(o.common.db);
  std::error_code ec;
  if (!std::filesystem::exists(where.path, ec) && !ec)
    throw db::DbError(db::Problem::missing, where.path,
                      db::quoted(where.path) +
                          ": no database (the file does not exist; `db migrate` upgrades an "
                          "existing one, `tunedreduce tune` and `db import` create one); the "
                          "location came from " +
                          where.source);
  // What this open did, decided inside its own transaction: of several `db migrate` at once,
  // one migrates and the others find the file current.
  DbLocation loc;
  db::Database d = open_writer(o, loc);
  const std::optional<int> from = d.migrated_from();
  std::cout << printable(loc.path.string(), 400) << ": schema version "
            << (!from ? std::to_string(d.file_schema_version()) + " (already current)"
                : *from < 0
                    ? "(new file) -> " + std::to_string(d.file_schema_version())
                    : std::to_string(*from) + " -> " + std::to_string(d.file_schema_version()))
            << "\n";
  // Rows that break the row rules (db/row_rules.hpp) but no CHECK constraint pass SQLite's
  // quick_check and so the migration: each is named, and exit 9, as export and merge do, so that
  // no script takes the file for a clean one (readers skip those rows).
  const db::CheckReport r = db::check_database(d, known_kernel_ids(), false);
  if (r.row_findings.empty()) return exit_code::ok;
  for (const db::RowFinding& f : r.row_findings)
    std::cerr << "tunedreduce db migrate: " << f.text() << "\n";
  std::cerr << "tunedreduce db migrate: error: " << printable(db::quoted(loc.path), 400) << ": "
            << (r.row_findings.size() >= db::CheckReport::max_row_findings ? "at least " : "")
            << r.row_findings.size()
            << " row(s) break the row rules (above): readers skip them; `tunedreduce db check` "
               "lists them\n";
  return exit_code::db_check_failed;
}

}  // namespace

std::vector<std::string> db_actions() {
  return {"info", "check", "export", "import", "merge", "migrate"};
}

int cmd_db(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << usage_text;
    return exit_code::usage;
  }
  const std::string action = argv[1];
  if (action == "--help" || action == "-h" || action == "help") {
    std::cout << usage_text;
    return exit_code::ok;
  }
  // The action's own argv: argv[0] names the action.
  std::string argv0 = std::string(argv[0]) + " " + action;
  std::vector<char*> args{argv0.data()};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  const int n = static_cast<int>(args.size());

  Options o;
  po::options_description desc("options");
  add_common_options(desc, o.common);
  po::positional_options_description pos;
  po::variables_map vm;
  if (action == "info") {
    bool json = false;
    add_reader_options(desc, o);
    desc.add_options()("json", po::bool_switch(&json),
                       "print the same facts as one JSON object (for scripts)");
    if (parse_command_line(n, args.data(), desc, nullptr, vm, o.common,
                           "tunedreduce db info [--db PATH] [--immutable] [--json]"))
      return exit_code::ok;
    return info(o, json);
  }
  if (action == "check") {
    bool full = false, json = false;
    std::string library;
    add_reader_options(desc, o);
    desc.add_options()("full", po::bool_switch(&full),
                       "PRAGMA integrity_check instead of quick_check")(
        "library", po::value<std::string>(&library)->value_name("LIB"),
        "also say which winner rows LIBRARY (a libtunedreduce.so, e.g. a deployment build) "
        "cannot serve")("json", po::bool_switch(&json),
                        "print the same facts as one JSON object (for scripts); the exit code "
                        "is the same");
    if (parse_command_line(
            n, args.data(), desc, nullptr, vm, o.common,
            "tunedreduce db check [--db PATH] [--full] [--immutable] [--library LIB] [--json]"))
      return exit_code::ok;
    if (json && !library.empty())
      throw Error("--json and --library exclude each other (the library's check prints text)",
                  exit_code::usage);
    const int rc = check(o, full, json);
    if (library.empty() || rc == exit_code::db_unusable) return rc;
    const int lib_rc = check_library(library,
                                     {resolve_db_path_for_reading(o.common.db).path.string()},
                                     "tunedreduce db check");
    return rc != exit_code::ok ? rc : lib_rc;
  }
  if (action == "export") {
    std::string output;
    add_reader_options(desc, o);
    desc.add_options()("output,o", po::value<std::string>(&output)->value_name("FILE"),
                       "write to FILE instead of stdout");
    if (parse_command_line(n, args.data(), desc, nullptr, vm, o.common,
                           "tunedreduce db export [--db PATH] [--output FILE]"))
      return exit_code::ok;
    return do_export(o, output);
  }
  if (action == "import") {
    std::string file;
    add_writer_options(desc, o);
    po::options_description hidden;
    hidden.add_options()("file", po::value<std::string>(&file), "export file to import");
    pos.add("file", 1);
    if (parse_command_line(n, args.data(), desc, &pos, vm, o.common,
                           "tunedreduce db import FILE [--db PATH] [--busy-timeout S]", &hidden))
      return exit_code::ok;
    if (file.empty()) throw Error("db import needs a FILE", exit_code::usage);
    busy_ms(o.busy_timeout_s);  // a bad value is a usage error before any work
    return do_import(o, file);
  }
  if (action == "merge") {
    std::string into;
    std::vector<std::string> inputs;
    // No --db: merge reads the databases it is given and writes OUT.
    po::options_description merge_desc("options");
    merge_desc.add_options()("help,h", "show this help")(
        "log-level",
        po::value<std::string>(&o.common.log_level)->default_value("warn")->value_name("LEVEL"),
        "trace, debug, info, warn, error, critical or off")(
        "into", po::value<std::string>(&into)->value_name("OUT"), "the new database to write");
    po::options_description hidden;
    hidden.add_options()("inputs", po::value<std::vector<std::string>>(&inputs),
                         "databases to merge");
    pos.add("inputs", -1);
    if (parse_command_line(n, args.data(), merge_desc, &pos, vm, o.common,
                           "tunedreduce db merge --into OUT A.db B.db ...", &hidden))
      return exit_code::ok;
    return merge(into, inputs);
  }
  if (action == "migrate") {
    add_writer_options(desc, o);
    if (parse_command_line(n, args.data(), desc, nullptr, vm, o.common,
                           "tunedreduce db migrate [--db PATH] [--busy-timeout S]"))
      return exit_code::ok;
    busy_ms(o.busy_timeout_s);
    return migrate(o);
  }
  std::cerr << "tunedreduce db: error: unknown action '" << printable(action) << "'"
            << tuner::did_you_mean(action, db_actions()) << "\n\n"
            << usage_text;
  return exit_code::usage;
}

}  // namespace tunedreduce::cli
