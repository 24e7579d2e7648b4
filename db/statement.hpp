#pragma once
// RAII owner of one prepared statement. Values are only ever bound, never spliced into SQL.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3_stmt;

namespace tunedreduce::db {

class Connection;

class Statement {
 public:
  Statement(const Connection& conn, sqlite3_stmt* stmt) noexcept : conn_(&conn), stmt_(stmt) {}
  Statement(Statement&& o) noexcept : conn_(o.conn_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are numbered from 1, as in SQLite.
  Statement& bind(int index, std::nullptr_t);
  Statement& bind(int index, std::int64_t v);
  Statement& bind(int index, int v) { return bind(index, static_cast<std::int64_t>(v)); }
  Statement& bind(int index, bool v) { return bind(index, static_cast<std::int64_t>(v)); }
  Statement& bind(int index, double v);
  Statement& bind(int index, std::string_view v);
  Statement& bind(int index, const std::string& v) { return bind(index, std::string_view(v)); }
  Statement& bind(int index, const char* v) { return bind(index, std::string_view(v)); }
  template <class T>
  Statement& bind(int index, const std::optional<T>& v) {
    return v ? bind(index, *v) : bind(index, nullptr);
  }
  /// Binds \p args to parameters 1, 2, ...
  template <class... Args>
  Statement& bind_all(const Args&... args) {
    int i = 0;
    (bind(++i, args), ...);
    return *this;
  }

  /// Advances: true when a row is available, false when done. Throws DbError.
  bool step();
  /// Steps to completion (for statements that return no rows).
  void run();
  /// Makes the statement runnable again (bindings are kept).
  void reset();

  bool is_null(int col) const;
  /// SQLite's storage class of the column's value: SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT,
  /// SQLITE_BLOB or SQLITE_NULL (1 to 5).
  /// Columns of the result.
  int column_count() const;
  int column_type(int col) const;
  /// The length in bytes of the column's value as text (or blob), without copying it.
  std::size_t column_bytes(int col) const;
  /// The first \p max bytes of the column's value as text.
  std::string column_text_prefix(int col, std::size_t max) const;
  std::int64_t column_int(int col) const;
  double column_double(int col) const;
  std::string column_text(int col) const;
  std::optional<std::int64_t> column_opt_int(int col) const;
  std::optional<double> column_opt_double(int col) const;
  std::optional<std::string> column_opt_text(int col) const;

 private:
  const Connection* conn_;
  sqlite3_stmt* stmt_;
};

}  // namespace tunedreduce::db
