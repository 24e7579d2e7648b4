#include "db/db_error.hpp"

namespace tunedreduce::db {

const char* problem_name(Problem p) noexcept {
  switch (p) {
    case Problem::missing: return "missing";
    case Problem::missing_folder: return "missing_folder";
    case Problem::not_a_file: return "not_a_file";
    case Problem::empty: return "empty";
    case Problem::not_sqlite: return "not_sqlite";
    case Problem::foreign: return "foreign";
    case Problem::corrupt: return "corrupt";
    case Problem::too_new: return "too_new";
    case Problem::too_old: return "too_old";
    case Problem::readonly: return "readonly";
    case Problem::busy: return "busy";
    case Problem::exists: return "exists";
    case Problem::invalid_data: return "invalid_data";
    case Problem::io: return "io";
  }
  return "?";
}

int exit_code_for(Problem p) noexcept {
  switch (p) {
    case Problem::missing:
    case Problem::missing_folder:
    case Problem::not_a_file:
    case Problem::empty:
    case Problem::not_sqlite:
    case Problem::foreign:
    case Problem::corrupt:
      return exit_code::db_unusable;
    case Problem::too_new: return exit_code::db_too_new;
    case Problem::too_old: return exit_code::db_needs_migration;
    case Problem::readonly: return exit_code::db_readonly;
    case Problem::busy: return exit_code::db_busy;
    case Problem::exists: return exit_code::usage;
    case Problem::invalid_data:
    case Problem::io:
      return exit_code::failure;
  }
  return exit_code::failure;
}

std::string quoted(const std::filesystem::path& p) {
  std::string s = p.string();
  s.insert(s.begin(), '\'');
  s.push_back('\'');
  return s;
}

}  // namespace tunedreduce::db
