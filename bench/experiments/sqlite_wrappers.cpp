// Experiment (docs/architecture.md, "SQLite: our wrappers"): the project's SQLite wrappers
// (db/connection, db/statement, db/transaction) against SQLiteCpp 3.2.1 (Debian libsqlitecpp-dev,
// which the product does not depend on) on the work the tuner gives them: one transaction inserting
// N rows shaped like a measurement through one prepared statement (one optional column, one NULL),
// then a read of them all. Prints the medians of 7 of each. docs/architecture.md, "SQLite: our
// wrappers", says what the figures decided. Built with -DTUNEDREDUCE_EXPERIMENTS=ON where CMake
// finds SQLiteCpp:
//   build/bin/experiments/sqlite_wrappers [N] [FILE]    (default 200000,
//   /tmp/tr_sqlite_wrappers.db)
#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "db/connection.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"

namespace {

namespace fs = std::filesystem;
using namespace tunedreduce;

constexpr const char* kCreate =
    "CREATE TABLE m (id INTEGER PRIMARY KEY, run INTEGER, kernel TEXT, n INTEGER, median REAL,"
    " p10 REAL, p90 REAL, repeats INTEGER, clk INTEGER, err TEXT)";
constexpr const char* kInsert =
    "INSERT INTO m (run, kernel, n, median, p10, p90, repeats, clk, err)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
constexpr const char* kSelect = "SELECT run, kernel, n, median, p10, p90, repeats, clk, err FROM m";
const std::string kKernel = "warp_shuffle.b256.u16.single_pass.f32.sum";

template <class F>
double median_ms(F f) {
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[3];
}

std::optional<int> clock_of(std::int64_t i) {
  return i % 7 ? std::optional<int>(1980) : std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 200000;
  const fs::path path = argc > 2 ? argv[2] : "/tmp/tr_sqlite_wrappers.db";
  if (n <= 0) {
    std::fprintf(stderr, "sqlite_wrappers: N must be a positive count, not '%s'\n", argv[1]);
    return 2;
  }
  double checksum = 0;

  const double ours_insert = median_ms([&] {
    fs::remove(path);
    auto conn = db::Connection::open(path, db::OpenMode::read_write);
    conn.exec(kCreate);
    db::Transaction tx(conn, db::TxKind::immediate);
    auto st = conn.prepare(kInsert);
    for (std::int64_t i = 0; i < n; ++i) {
      st.bind_all(1, kKernel, i, 1.5 + static_cast<double>(i), 1.4, 1.6, 21, clock_of(i), nullptr)
          .run();
      st.reset();
    }
    tx.commit();
  });
  const double ours_read = median_ms([&] {
    auto conn = db::Connection::open(path, db::OpenMode::read_only);
    auto st = conn.prepare(kSelect);
    while (st.step())
      checksum += st.column_double(3) + static_cast<double>(st.column_opt_int(7).value_or(0)) +
                  static_cast<double>(st.column_text(1).size());
  });

  const double cpp_insert = median_ms([&] {
    fs::remove(path);
    SQLite::Database d(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    d.exec(kCreate);
    SQLite::Transaction tx(d, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement st(d, kInsert);
    for (std::int64_t i = 0; i < n; ++i) {
      st.bind(1, 1);
      st.bind(2, kKernel);
      st.bind(3, i);
      st.bind(4, 1.5 + static_cast<double>(i));
      st.bind(5, 1.4);
      st.bind(6, 1.6);
      st.bind(7, 21);
      // 3.2.1 has no std::optional overload: each optional column is an if at every call site.
      if (const auto c = clock_of(i)) st.bind(8, *c);
      else st.bind(8);
      st.bind(9);
      st.exec();
      st.reset();
    }
    tx.commit();
  });
  const double cpp_read = median_ms([&] {
    SQLite::Database d(path.string(), SQLite::OPEN_READONLY);
    SQLite::Statement st(d, kSelect);
    while (st.executeStep()) {
      const SQLite::Column clk = st.getColumn(7);
      checksum += st.getColumn(3).getDouble() + (clk.isNull() ? 0 : clk.getInt()) +
                  static_cast<double>(st.getColumn(1).getString().size());
    }
  });
  fs::remove(path);

  std::printf("%lld rows, medians of 7 (ms):\n", static_cast<long long>(n));
  std::printf("  %-28s %9s %9s\n", "", "insert", "read");
  std::printf("  %-28s %9.1f %9.1f\n", "db::Connection/Statement", ours_insert, ours_read);
  std::printf("  %-28s %9.1f %9.1f\n", "SQLiteCpp 3.2.1", cpp_insert, cpp_read);
  std::printf("(checksum %g)\n", checksum);
  return 0;
}
