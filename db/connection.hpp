#pragma once
// RAII owner of one sqlite3 connection. Every SQLite failure becomes a DbError that names the
// file and says what was being done.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "db/db_error.hpp"

struct sqlite3;

namespace tunedreduce::db {

class Statement;

enum class OpenMode {
  read_only,   // SQLITE_OPEN_READONLY: never creates, never writes
  immutable,   // read-only and `immutable=1`: no locks, no -wal/-shm (shipped, unchanging files)
  read_write,  // SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
  memory,      // a private in-memory database (path is only a label for messages)
};

class Connection {
 public:
  /// Opens \p path. Paths are passed to SQLite literally (no URI parsing), except for
  /// OpenMode::immutable, which builds a percent-encoded `file:` URI.
  static Connection open(const std::filesystem::path& path, OpenMode mode);

  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  /// Waits for locks up to \p timeout with exponential backoff (1 ms doubling to 50 ms, with
  /// jitter), then lets SQLITE_BUSY through, which becomes DbError(Problem::busy).
  void set_busy_timeout(std::chrono::milliseconds timeout);
  std::chrono::milliseconds busy_timeout() const;

  Statement prepare(std::string_view sql);
  /// Runs SQL that takes no values (DDL, PRAGMAs, BEGIN/COMMIT). Values always go through
  /// prepare() and bind().
  void exec(std::string_view sql);
  /// The first column of the first row of \p sql as text ("" when there is no row).
  std::string query_text(std::string_view sql);
  std::int64_t query_int(std::string_view sql);

  std::int64_t last_insert_rowid() const;
  /// Rows changed by the last INSERT, UPDATE or DELETE.
  std::int64_t changes() const;
  /// True when SQLite opened the main database read-only (whatever was asked for).
  bool read_only() const;
  OpenMode mode() const noexcept { return mode_; }
  const std::filesystem::path& path() const noexcept { return path_; }
  sqlite3* handle() const noexcept { return db_; }

  /// Throws the DbError for SQLite result code \p rc; \p during says what was being done.
  [[noreturn]] void fail(int rc, std::string_view during) const;

  struct BusyState;  // the busy handler's state (defined in connection.cpp)

 private:
  Connection(sqlite3* db, std::filesystem::path path, OpenMode mode);

  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  OpenMode mode_ = OpenMode::read_only;
  std::unique_ptr<BusyState> busy_;
};

/// Maps an SQLite result code to a Problem.
Problem problem_for_sqlite(int rc) noexcept;

/// "file:" URI for \p path with every byte outside [A-Za-z0-9/._~-] percent-encoded.
std::string sqlite_uri(const std::filesystem::path& path, std::string_view query);

}  // namespace tunedreduce::db
