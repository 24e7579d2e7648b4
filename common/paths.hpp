#pragma once
// Where the tuning database lives: --db PATH, else $TUNEDREDUCE_DB, else
// $XDG_DATA_HOME/tunedreduce/tune.db, else ~/.local/share/tunedreduce/tune.db. Readers (the
// library, reports, `db info`) also look in the system's data folders when the user has none.

#include <filesystem>
#include <optional>
#include <string>

namespace tunedreduce {

struct DbLocation {
  std::filesystem::path path;
  std::string source;  // "--db", "$TUNEDREDUCE_DB", "$XDG_DATA_HOME", "$HOME" or "$XDG_DATA_DIRS"
  /// Installed system-wide (found under $XDG_DATA_DIRS): a shipped file nobody writes.
  bool system_wide = false;
};

/// Where a database is written (the tuner, imports): the user's location. Throws Error(usage)
/// when no location can be derived (no HOME and nothing else set).
DbLocation resolve_db_path(const std::optional<std::string>& cli_db);

/// Where a database is read: as resolve_db_path, but when neither --db nor $TUNEDREDUCE_DB is
/// given and the user's file does not exist (or there is no user location: a service without a
/// HOME), the first DIR/tunedreduce/tune.db that exists for DIR in $XDG_DATA_DIRS (default
/// /usr/local/share:/usr/share): a database installed system-wide, for services that run as
/// another user. When none exists, the user's location (so that "missing" names it); throws
/// only when there is neither a user location nor a system file.
DbLocation resolve_db_path_for_reading(const std::optional<std::string>& cli_db);

/// Creates the folder of \p loc where the location was not given with --db: the user's data
/// folder ($XDG_DATA_HOME/tunedreduce, ~/.local/share/tunedreduce), which a fresh account
/// lacks, or the folder $TUNEDREDUCE_DB names. A --db path's folder is the caller's: a missing
/// one stays an error (a typo). A failure is left to the open that follows, which names it.
void create_data_folder(const DbLocation& loc);

/// The running executable (/proc/self/exe); empty when it cannot be read.
std::filesystem::path this_executable();

}  // namespace tunedreduce
