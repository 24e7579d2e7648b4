#include "paths.hpp"

#include <algorithm>
#include <cstdlib>

#include "error.hpp"

namespace tunedreduce {

namespace {
const char* nonempty_env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}
}  // namespace

DbLocation resolve_db_path(const std::optional<std::string>& cli_db) {
  if (cli_db) {
    if (cli_db->empty()) throw Error("--db was given an empty path", exit_code::usage);
    return {*cli_db, "--db"};
  }
  if (const char* env = nonempty_env("TUNEDREDUCE_DB")) return {env, "$TUNEDREDUCE_DB"};
  if (const char* xdg = nonempty_env("XDG_DATA_HOME"))
    return {std::filesystem::path(xdg) / "tunedreduce" / "tune.db", "$XDG_DATA_HOME"};
  if (const char* home = nonempty_env("HOME"))
    return {std::filesystem::path(home) / ".local" / "share" / "tunedreduce" / "tune.db", "$HOME"};
  throw Error(
      "cannot locate the tuning database: pass --db PATH or set TUNEDREDUCE_DB "
      "(neither XDG_DATA_HOME nor HOME is set)",
      exit_code::usage);
}

DbLocation resolve_db_path_for_reading(const std::optional<std::string>& cli_db) {
  if (cli_db || nonempty_env("TUNEDREDUCE_DB")) return resolve_db_path(cli_db);
  std::optional<DbLocation> user;
  std::optional<Error> why;
  try {
    user = resolve_db_path(std::nullopt);
  } catch (const Error& e) {
    why = e;
  }
  std::error_code ec;
  if (user && std::filesystem::exists(user->path, ec)) return *user;
  const char* dirs = nonempty_env("XDG_DATA_DIRS");
  const std::string list = dirs ? dirs : "/usr/local/share:/usr/share";
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    const std::string dir = list.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || dir[0] != '/') continue;  // the XDG spec: relative entries are invalid
    const std::filesystem::path p = std::filesystem::path(dir) / "tunedreduce" / "tune.db";
    if (std::filesystem::is_regular_file(p, ec)) return {p, "$XDG_DATA_DIRS", true};
  }
  if (user) return *user;
  throw Error(std::string(why->what()) + "; and no tunedreduce/tune.db in " +
                  (dirs ? "$XDG_DATA_DIRS (" + list + ")" : list),
              exit_code::usage);
}

void create_data_folder(const DbLocation& loc) {
  if (loc.source == "--db") return;
  std::error_code ec;
  std::filesystem::create_directories(loc.path.parent_path(), ec);
}

std::filesystem::path this_executable() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : p;
}

}  // namespace tunedreduce
