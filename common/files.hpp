#pragma once
// Whole-file input and output for the CLI, checked to the end: inputs are read up to a limit (an
// input without an end, such as /dev/zero, is an error, not a hang), and outputs are written
// completely or not at all (every write, the sync and the close checked; a failure names the path
// and the OS's reason and exits with exit_code::io).

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace tunedreduce {

/// Largest tune.toml the tuner reads (a complete one is a few kilobytes).
inline constexpr std::size_t max_config_bytes = std::size_t{1} << 20;
/// Largest JSON export `db import` reads (an export of 250,000 measurements is ~150 MB).
inline constexpr std::size_t max_import_bytes = std::size_t{1} << 30;

/// How long an input or output that is not a regular file (a FIFO, a device) may keep the CLI
/// waiting: for its writer's next bytes, or for a reader to open it.
inline constexpr std::chrono::milliseconds non_regular_timeout{10000};

/// The whole of \p path, at most \p limit bytes. \p what names the input in messages ("the
/// configuration"). Throws Error(\p exit_code) when the path is missing, a folder, unreadable,
/// or longer than \p limit (then after reading limit + 1 bytes, whatever the file is). A FIFO or
/// a device is read without ever blocking for more than \p timeout: a FIFO nobody writes to is
/// an error after it, not a hang.
std::string read_file_limited(const std::filesystem::path& path, std::size_t limit,
                              const char* what, int exit_code,
                              std::chrono::milliseconds timeout = non_regular_timeout);

/// Writes \p text to \p path completely or not at all. A regular file (or a path that does not
/// exist yet) gets a temporary file beside it, written, flushed to disk and renamed over it, so a
/// reader never sees half a file and a failure leaves the old file as it was; anything else at
/// the path (a device such as /dev/stdout or /dev/full, a FIFO) is written in place; a FIFO that
/// no reader opens within \p timeout is an error, not a hang. Throws Error(exit_code::io) naming
/// the path and the OS error; the temporary file is removed.
void write_file(const std::filesystem::path& path, std::string_view text,
                std::chrono::milliseconds timeout = non_regular_timeout);

/// Makes std::cout write through the C stream (stdout) and remember the OS's reason for the first
/// write that failed, for finish_stdout(). Called once, at the start of main().
void install_checked_stdout();

/// Writes \p text to standard output (the C stream, which std::cout shares) and flushes it.
/// Throws Error(exit_code::io) when the write or the flush fails (a full disk, a closed pipe).
void write_stdout(std::string_view text);

/// Flushes std::cout and stdout at the end of a command and reports whether everything written
/// to them reached the OS: an empty string, or the reason ("No space left on device").
std::string finish_stdout();

}  // namespace tunedreduce
