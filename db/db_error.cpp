#include "db/db_error.hpp"

#include "common/enum_names.hpp"

namespace tunedreduce::db {

namespace {

constexpr auto problem_names = enum_names<Problem>({
    {Problem::missing, "missing"},
    {Problem::missing_folder, "missing_folder"},
    {Problem::not_a_file, "not_a_file"},
    {Problem::empty, "empty"},
    {Problem::not_sqlite, "not_sqlite"},
    {Problem::foreign, "foreign"},
    {Problem::corrupt, "corrupt"},
    {Problem::too_new, "too_new"},
    {Problem::too_old, "too_old"},
    {Problem::readonly, "readonly"},
    {Problem::busy, "busy"},
    {Problem::exists, "exists"},
    {Problem::invalid_data, "invalid_data"},
    {Problem::io, "io"},
    {Problem::invalid_rows, "invalid_rows"},
});
static_assert(problem_names.lists_all_through(Problem::invalid_rows));

}  // namespace

const char* problem_name(Problem p) noexcept { return problem_names.to_name(p); }

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
    case Problem::too_new:
      return exit_code::db_too_new;
    case Problem::too_old:
      return exit_code::db_needs_migration;
    case Problem::readonly:
      return exit_code::db_readonly;
    case Problem::busy:
      return exit_code::db_busy;
    case Problem::exists:
      return exit_code::usage;
    case Problem::invalid_data:
    case Problem::io:
      return exit_code::failure;
    case Problem::invalid_rows:
      return exit_code::db_check_failed;
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
