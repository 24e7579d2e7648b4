#include "paths.hpp"

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

std::filesystem::path this_executable() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : p;
}

}  // namespace tunedreduce
