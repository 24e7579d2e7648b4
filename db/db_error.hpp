#pragma once
// The one exception type of db/: every failure names the database file and the problem, and
// carries the CLI exit code (common/exit_codes.hpp) that the problem maps to.

#include <filesystem>
#include <string>

#include "common/error.hpp"

namespace tunedreduce::db {

/// What went wrong, coarsely: tests and callers (the runtime library's fallback) branch on it.
enum class Problem {
  missing,         // the file does not exist (readers)
  missing_folder,  // the folder for a new file does not exist (writers)
  not_a_file,      // a directory or a device node sits at the path
  empty,           // 0 bytes, or an SQLite file with no tables (readers)
  not_sqlite,      // no SQLite header
  foreign,         // an SQLite database of another application
  corrupt,         // SQLite reports a malformed image, or quick_check fails
  too_new,         // schema newer than this binary can use (or ever write)
  too_old,         // schema older than this binary; a reader cannot migrate it
  readonly,        // a write was needed and the file or its folder is read-only
  busy,            // locked by another connection past the busy timeout
  exists,          // the output of a copy or merge already exists
  invalid_data,    // an API argument or an imported record is invalid
  io,              // any other SQLite or file-system failure
  invalid_rows,    // rows that break the row rules (db/row_rules.hpp): `db check` names them
};

const char* problem_name(Problem p) noexcept;
int exit_code_for(Problem p) noexcept;

class DbError : public Error {
 public:
  DbError(Problem problem, std::filesystem::path path, const std::string& message)
      : Error(message, exit_code_for(problem)), problem_(problem), path_(std::move(path)) {}
  Problem problem() const noexcept { return problem_; }
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  Problem problem_;
  std::filesystem::path path_;
};

/// "'PATH'" as written in every message: the path verbatim between single quotes.
std::string quoted(const std::filesystem::path& p);

}  // namespace tunedreduce::db
