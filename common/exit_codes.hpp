#pragma once
// Exit codes of the tunedreduce CLI. Documented in docs/cli.md; never renumber.

namespace tunedreduce::exit_code {

inline constexpr int ok = 0;
inline constexpr int failure = 1;      // a run-time failure not covered below
inline constexpr int usage = 2;        // bad command line or invalid configuration
inline constexpr int db_unusable = 3;  // missing, not SQLite, not ours, corrupt, unreadable
inline constexpr int db_busy = 4;      // locked by another writer past the busy timeout
inline constexpr int db_too_new = 5;   // schema newer than this binary understands
inline constexpr int no_gpu = 6;       // the command needs a CUDA device and there is none
inline constexpr int db_readonly = 7;  // a write was needed but the file or folder is read-only
inline constexpr int db_needs_migration = 8;  // schema older than this binary; a reader cannot
                                              // upgrade it (`tunedreduce db migrate` does)
inline constexpr int db_check_failed = 9;     // `db check` found rows this binary cannot use
                                              // (unknown registry ids, overlapping winners, ...)
inline constexpr int io = 10;                 // an output could not be written completely (a full
                               // disk, a closed pipe, no permission); nothing partial
                               // is left at the path
inline constexpr int interrupted = 130;  // SIGINT: finished work committed, then stopped

}  // namespace tunedreduce::exit_code
