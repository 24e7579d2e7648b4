#pragma once
// Where the tuning database lives: --db PATH, else $TUNEDREDUCE_DB, else
// $XDG_DATA_HOME/tunedreduce/tune.db, else ~/.local/share/tunedreduce/tune.db.

#include <filesystem>
#include <optional>
#include <string>

namespace tunedreduce {

struct DbLocation {
  std::filesystem::path path;
  std::string source;  // "--db", "$TUNEDREDUCE_DB", "$XDG_DATA_HOME" or "$HOME"
};

/// Throws Error(usage) when no location can be derived (no HOME and nothing else set).
DbLocation resolve_db_path(const std::optional<std::string>& cli_db);

/// The running executable (/proc/self/exe); empty when it cannot be read.
std::filesystem::path this_executable();

}  // namespace tunedreduce
