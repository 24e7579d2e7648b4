// A writer process for the db tests: several of them write one database at once, one is killed
// in the middle of a transaction, one holds the write lock.
//
//   tr_db_test_writer write DB WORKER COUNT START_EPOCH_MS   (one run, COUNT measurements)
//   tr_db_test_writer hang DB COMMITTED PENDING     (prints READY inside an open transaction)
//   tr_db_test_writer hold-lock DB SECONDS          (prints READY holding BEGIN IMMEDIATE)
//   tr_db_test_writer as-nobody PROGRAM ARGS...     (drops root to uid 65534, then execs)
//   tr_db_test_writer write-segmented DB            (test::write_segmented_sample: a run with
//                                                    whole-array and segmented rows)
// Exit status: 0, or the DbError's exit code with its message on stderr.

#include <grp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "db/database.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"
#include "test_util.hpp"

using namespace tunedreduce::db;

namespace {

int write(const std::string& path, int worker, int count, long long start_ms) {
  using namespace std::chrono;
  std::this_thread::sleep_until(system_clock::time_point(milliseconds(start_ms)));
  Database db = Database::open_writer(path);
  const auto device = db.upsert_device(test::h100());
  RunInfo info = test::run_info();
  info.host = "worker-" + std::to_string(worker);
  info.driver_version = 13000;
  info.runtime_version = 13000;
  const auto run = db.begin_run(info);
  // Each worker a card of its own, as each host of a fleet has.
  const std::string digits = std::to_string(1000000000000 + worker).substr(1);
  const auto gpu = db.upsert_gpu("GPU-00000000-0000-0000-0000-" + digits, device);
  for (int i = 0; i < count; ++i) {
    const std::string id = "warp_shuffle.b256.u" + std::to_string(worker + 1) + ".two_pass.f32.sum";
    Measurement m = test::measurement(run, device, id, 1024u + static_cast<unsigned>(i), 10.0 + i);
    m.gpu_id = gpu;
    db.insert_measurement(m);
  }
  db.end_run(run, RunStatus::finished);
  return 0;
}

int hang(const std::string& path, int committed, int pending) {
  Database db = Database::open_writer(path);
  const auto device = db.upsert_device(test::h100());
  RunInfo info = test::run_info();
  info.host.clear();  // this machine: a later writer here may settle the run once we are killed
  const auto run = db.begin_run(info);
  for (int i = 0; i < committed; ++i)
    db.insert_measurement(test::measurement(run, device, "smem.b256.u8.dynamic.single_pass.f32.sum",
                                            static_cast<unsigned>(i + 1), 5.0));
  Transaction tx(db.connection(), TxKind::immediate);
  Statement st = db.connection().prepare(
      "INSERT INTO measurements (run_id, seq, device_id, kernel_id, family, block, unroll, smem,"
      " finish, dtype, op, n, l2_mode, outcome, median_us, repeats, error, measured_at)"
      " VALUES (?1, ?2, ?3, 'pending.b64.two_pass.f32.sum', 'pending', 64, 1, 'none', 'two_pass',"
      " 'f32', 'sum', ?4, 'cold', 'ok', 1.0, 1, ?5, '2026-01-01T00:00:00.000Z')");
  const std::string padding(2000, 'x');  // many pages in the WAL, not just one
  for (int i = 0; i < pending; ++i) {
    st.reset();
    st.bind_all(run, committed + i + 1, device, static_cast<std::int64_t>(i), padding).run();
  }
  std::cout << "READY" << std::endl;
  for (;;) pause();
}

int hold_lock(const std::string& path, int seconds) {
  Database db = Database::open_writer(path);
  Transaction tx(db.connection(), TxKind::immediate);
  std::cout << "READY" << std::endl;
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "write" && argc == 6)
      return write(argv[2], std::stoi(argv[3]), std::stoi(argv[4]), std::stoll(argv[5]));
    if (mode == "hang" && argc == 5) return hang(argv[2], std::stoi(argv[3]), std::stoi(argv[4]));
    if (mode == "hold-lock" && argc == 4) return hold_lock(argv[2], std::stoi(argv[3]));
    if (mode == "write-segmented" && argc == 3) {
      Database db = Database::open_writer(argv[2]);
      test::write_segmented_sample(db);
      return 0;
    }
    if (mode == "as-nobody" && argc >= 3) {
      if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
        std::perror("as-nobody");
        return 200;
      }
      execv(argv[2], argv + 2);
      std::perror("execv");
      return 127;
    }
  } catch (const tunedreduce::Error& e) {
    std::cerr << e.what() << "\n";
    return e.exit_code();
  }
  std::cerr << "usage: see the comment at the top of writer_helper.cpp\n";
  return 2;
}
