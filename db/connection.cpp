#include "db/connection.hpp"

#include <sqlite3.h>

#include <random>
#include <thread>

#include "db/statement.hpp"

namespace tunedreduce::db {

struct Connection::BusyState {
  std::chrono::milliseconds timeout{0};
  std::chrono::steady_clock::time_point start;
  std::minstd_rand jitter{std::random_device{}()};
};

namespace {

// SQLite calls this each time a lock is refused; count restarts at 0 for every new wait.
int busy_handler(void* arg, int count) {
  auto* st = static_cast<Connection::BusyState*>(arg);
  const auto now = std::chrono::steady_clock::now();
  if (count == 0) st->start = now;
  const auto waited = now - st->start;
  if (waited >= st->timeout) return 0;  // give up: SQLITE_BUSY reaches the caller
  // Exponential backoff with jitter, so that several waiting writers do not wake in step.
  const int shift = count < 6 ? count : 6;
  auto delay = std::chrono::microseconds(1000 << shift);  // 1, 2, 4 ... 64 ms
  if (delay > std::chrono::milliseconds(50)) delay = std::chrono::milliseconds(50);
  delay = std::chrono::microseconds(
      std::uniform_int_distribution<long>(delay.count() / 2, delay.count())(st->jitter));
  const auto left = st->timeout - std::chrono::duration_cast<std::chrono::microseconds>(waited);
  if (delay > left) delay = std::chrono::duration_cast<std::chrono::microseconds>(left);
  std::this_thread::sleep_for(delay);
  return 1;
}

}  // namespace

Problem problem_for_sqlite(int rc) noexcept {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Problem::busy;
    case SQLITE_READONLY:
      return Problem::readonly;
    case SQLITE_CORRUPT:
      return Problem::corrupt;
    case SQLITE_NOTADB:
      return Problem::not_sqlite;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return Problem::invalid_data;
    default:
      return Problem::io;
  }
}

std::string sqlite_uri(const std::filesystem::path& path, std::string_view query) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : path.string()) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' ||
        c == '.' || c == '_' || c == '~' || c == '-') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 0xf];
    }
  }
  if (!query.empty()) {
    uri += '?';
    uri += query;
  }
  return uri;
}

Connection::Connection(sqlite3* db, std::filesystem::path path, OpenMode mode)
    : db_(db), path_(std::move(path)), mode_(mode), busy_(std::make_unique<BusyState>()) {}

Connection::Connection(Connection&& o) noexcept
    : db_(o.db_), path_(std::move(o.path_)), mode_(o.mode_), busy_(std::move(o.busy_)) {
  o.db_ = nullptr;
}

Connection& Connection::operator=(Connection&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = o.db_;
    o.db_ = nullptr;
    path_ = std::move(o.path_);
    mode_ = o.mode_;
    busy_ = std::move(o.busy_);
  }
  return *this;
}

Connection::~Connection() {
  if (db_) sqlite3_close_v2(db_);
}

Connection Connection::open(const std::filesystem::path& path, OpenMode mode) {
  int flags = SQLITE_OPEN_NOMUTEX;  // one connection per thread; the library serialises nothing
#ifdef SQLITE_OPEN_EXRESCODE
  flags |= SQLITE_OPEN_EXRESCODE;
#endif
  std::string name = path.string();
  // A relative path that begins with "file:" is a file of that name, never an SQLite URI (which
  // could carry options such as mode=rwc or vfs=...): "./" makes it a plain path.
  if (name.rfind("file:", 0) == 0) name = "./" + name;
  switch (mode) {
    case OpenMode::read_only:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case OpenMode::immutable:
      flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
      name = sqlite_uri(path, "immutable=1");
      break;
    case OpenMode::read_write:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
    case OpenMode::memory:
      // Not SQLITE_OPEN_MEMORY: VACUUM INTO would make its target in-memory too.
      flags |= SQLITE_OPEN_READWRITE;
      name = ":memory:";
      break;
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
  Connection conn(db, path, mode);  // owns db even on failure
  if (rc != SQLITE_OK) conn.fail(rc, "opening it");
  sqlite3_extended_result_codes(db, 1);
  return conn;
}

void Connection::set_busy_timeout(std::chrono::milliseconds timeout) {
  busy_->timeout = timeout;
  sqlite3_busy_handler(db_, timeout.count() > 0 ? busy_handler : nullptr, busy_.get());
}

std::chrono::milliseconds Connection::busy_timeout() const { return busy_->timeout; }

Statement Connection::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    fail(rc, "preparing a query");
  }
  return Statement(*this, stmt);
}

void Connection::exec(std::string_view sql) {
  const std::string s(sql);
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) {
    std::string during = "running '" + s.substr(0, 60) + (s.size() > 60 ? "...'" : "'");
    fail(rc, during);
  }
}

std::string Connection::query_text(std::string_view sql) {
  Statement st = prepare(sql);
  return st.step() ? st.column_text(0) : std::string();
}

std::int64_t Connection::query_int(std::string_view sql) {
  Statement st = prepare(sql);
  return st.step() ? st.column_int(0) : 0;
}

std::int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

std::int64_t Connection::changes() const { return sqlite3_changes(db_); }

bool Connection::read_only() const { return sqlite3_db_readonly(db_, "main") == 1; }

void Connection::fail(int rc, std::string_view during) const {
  const Problem problem = problem_for_sqlite(rc);
  const std::string detail = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  std::string what;
  switch (problem) {
    case Problem::busy: {
      const double secs = static_cast<double>(busy_ ? busy_->timeout.count() : 0) / 1000.0;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", secs);
      what = std::string("locked by another connection for longer than the busy timeout (") + buf +
             " s)";
      break;
    }
    case Problem::readonly:
#ifdef SQLITE_READONLY_DIRECTORY
      if (rc == SQLITE_READONLY_DIRECTORY) {
        what =
            "cannot be read in place: its folder is read-only and SQLite must create the -wal "
            "or -shm file there (a file in WAL mode); open it as immutable (--immutable, for "
            "a file nobody writes), or make the folder writable";
        break;
      }
#endif
      what = "cannot be written (read-only file, folder or connection)";
      break;
    case Problem::corrupt:
      what = "is corrupt (the database disk image is malformed)";
      break;
    case Problem::not_sqlite:
      what = "is not an SQLite database";
      break;
    default:
      what = "SQLite error";
      break;
  }
  throw DbError(problem, path_,
                quoted(path_) + ": " + what + " while " + std::string(during) + " [" + detail +
                    ", code " + std::to_string(rc) + "]");
}

}  // namespace tunedreduce::db
