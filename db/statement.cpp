#include "db/statement.hpp"

#include <algorithm>

#include <sqlite3.h>

#include "db/connection.hpp"

namespace tunedreduce::db {

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    conn_ = o.conn_;
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

namespace {
void check_bind(const Connection& conn, int rc) {
  if (rc != SQLITE_OK) conn.fail(rc, "binding a value");
}
}  // namespace

Statement& Statement::bind(int index, std::nullptr_t) {
  check_bind(*conn_, sqlite3_bind_null(stmt_, index));
  return *this;
}
Statement& Statement::bind(int index, std::int64_t v) {
  check_bind(*conn_, sqlite3_bind_int64(stmt_, index, v));
  return *this;
}
Statement& Statement::bind(int index, double v) {
  check_bind(*conn_, sqlite3_bind_double(stmt_, index, v));
  return *this;
}
Statement& Statement::bind(int index, std::string_view v) {
  check_bind(*conn_,
             sqlite3_bind_text64(stmt_, index, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // The statement must be reset before the connection is used again; the error stays readable.
  const char* sql = sqlite3_sql(stmt_);
  std::string during = "running '";
  during += std::string(sql ? sql : "").substr(0, 60);
  during += "...'";
  sqlite3_reset(stmt_);
  conn_->fail(rc, during);
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() { sqlite3_reset(stmt_); }

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int Statement::column_count() const { return sqlite3_column_count(stmt_); }

int Statement::column_type(int col) const { return sqlite3_column_type(stmt_, col); }
std::size_t Statement::column_bytes(int col) const {
  // The type is read first: sqlite3_column_bytes converts a number to text, which is wanted.
  return static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col));
}
std::string Statement::column_text_prefix(int col, std::size_t max) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  const auto len = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col));
  return p ? std::string(p, std::min(len, max)) : std::string();
}
std::int64_t Statement::column_int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::column_double(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Statement::column_text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  const int len = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(p, static_cast<std::size_t>(len)) : std::string();
}
std::optional<std::int64_t> Statement::column_opt_int(int col) const {
  if (is_null(col)) return std::nullopt;
  return column_int(col);
}
std::optional<double> Statement::column_opt_double(int col) const {
  if (is_null(col)) return std::nullopt;
  return column_double(col);
}
std::optional<std::string> Statement::column_opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return column_text(col);
}

}  // namespace tunedreduce::db
