// Fuzz target: the database loader of the library (db::load_snapshot, what libtunedreduce reads
// once per device), on a file of arbitrary bytes. Its contract: it never throws; a database it
// cannot use is reported in Snapshot::problem with a message, and every row it returns has a
// registry-shaped id and an interval n_lo <= n_hi. Anything else is a finding.
//
// The round trip, on the same file: for every database the tool can read, its export imports
// (rows that break the row rules are left out of the export, never written as something the
// import refuses), and export -> import into an empty database -> export gives the same bytes.

#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "common/device_fingerprint.hpp"
#include "common/json.hpp"
#include "db/dataset.hpp"
#include "db/snapshot.hpp"
#include "tests/support/fixtures.hpp"

namespace {

const std::filesystem::path& scratch() {
  static const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                         ("tr-fuzz-snapshot-" + std::to_string(::getpid()) + ".db");
  return p;
}

/// The device of the seed database (tests/fuzz/corpus/snapshot/v3-both-modes.db), so that the
/// loader's queries find its rows.
tunedreduce::DeviceFingerprint h100() { return tunedreduce::test::h100_fingerprint(85045395456); }

void check(const tunedreduce::db::WinnerTables& tables) {
  for (const auto mode : {tunedreduce::db::L2Mode::cold, tunedreduce::db::L2Mode::warm})
    for (const auto& e : tables[mode].entries())
      if (e.n_lo > e.n_hi || e.kernel_id.empty()) __builtin_trap();
}

/// export -> import -> export of the database at \p path is byte-identical.
void check_round_trip(const std::filesystem::path& path,
                      const tunedreduce::db::ReaderOptions& opt) {
  using namespace tunedreduce;
  std::string first;
  try {
    db::Database in = db::Database::open_reader(path, opt);
    first = db::dataset_to_json(db::read_dataset(in)).dump(2);
  } catch (const db::DbError&) {
    return;  // a file the tool does not read: load_snapshot's contract covers it
  }
  db::Dataset back;
  try {
    back = db::dataset_from_json(Json::parse(first), path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "an export the tool cannot import: %s\n", e.what());
    __builtin_trap();
  }
  db::Database mem = db::Database::create_in_memory("round-trip");
  db::import_dataset(mem, back);
  const std::string second = db::dataset_to_json(db::read_dataset(mem)).dump(2);
  if (second != first) {
    std::fprintf(stderr, "export -> import -> export differs:\n%s\n---\n%s\n", first.c_str(),
                 second.c_str());
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tunedreduce;
  const std::filesystem::path& path = scratch();
  for (const char* suffix : {"", "-journal", "-wal", "-shm"})
    std::remove((path.string() + suffix).c_str());
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  db::ReaderOptions opt;
  opt.busy_timeout = std::chrono::milliseconds(0);
  const db::Snapshot s = db::load_snapshot(path, h100(), opt);
  check(s.exact);
  check(s.similar);
  if (s.problem && s.message.empty()) __builtin_trap();
  check_round_trip(path, opt);
  return 0;
}
