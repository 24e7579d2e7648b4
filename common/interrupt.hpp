#pragma once
// Stopping a long command (tune) cleanly on SIGINT and SIGTERM: the signal sets a flag the
// command polls; it finishes what is in flight, commits, and exits with exit_code::interrupted.
//
// One stop is often delivered twice: `timeout` signals the command and then its process group,
// a batch scheduler (scancel, a job's time limit) signals every process of the job step, and a
// terminal's Ctrl-C reaches the whole foreground group. So a second signal ends the process at
// once (the signal's default action) only when it comes more than `repeat_grace` after the
// first: a user who presses Ctrl-C again means it; a copy of the same stop does not.

#include <atomic>
#include <chrono>
#include <filesystem>

namespace tunedreduce {

class InterruptGuard {
 public:
  static constexpr std::chrono::milliseconds repeat_grace{1000};

  /// Installs the handlers for SIGINT and SIGTERM; \p flag is set by the first signal. One guard
  /// at a time (throws Error if another is alive).
  explicit InterruptGuard(std::atomic<bool>& flag);
  /// Restores the handlers that were there before.
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  /// The first signal received while a guard was alive (SIGINT or SIGTERM), 0 if none.
  static int received();
};

/// For every command, at the start of main(): SIGINT and SIGTERM (outside an InterruptGuard, which
/// installs its own handlers) remove every file a TempFileGuard holds and end the process with
/// exit_code::interrupted (130), and SIGPIPE no longer ends it: a write to a closed pipe fails
/// with EPIPE, and the command exits with exit_code::io and its message. Handlers, never SIG_IGN:
/// a program the command starts with exec gets the default actions back.
void install_exit_signals();

/// A temporary file to remove if a signal ends the process (install_exit_signals) before the
/// guard is destroyed. At most 32 at a time (more are not removed by a signal).
class TempFileGuard {
 public:
  explicit TempFileGuard(const std::filesystem::path& path);
  ~TempFileGuard();
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace tunedreduce
