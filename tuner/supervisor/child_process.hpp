#pragma once
// A child process with a pipe to its stdin and one from its stdout, read line by line with a
// timeout. The child dies with its parent (PR_SET_PDEATHSIG), so `kill -9` of a supervisor never
// leaves a worker holding a GPU.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace tunedreduce::tuner {

class ChildProcess {
 public:
  /// Starts argv[0] (a path) with argv. Throws Error when it cannot.
  explicit ChildProcess(const std::vector<std::string>& argv);
  ~ChildProcess();  // SIGKILL if still running, then reaps it
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Writes one line (a newline is appended). False when the child no longer reads.
  bool write_line(const std::string& line);

  /// The longest line read_line accepts: a worker's reply is a few hundred bytes.
  static constexpr std::size_t max_line_bytes = std::size_t{1} << 20;

  enum class ReadStatus { line, timeout, eof, too_long };
  /// Waits up to timeout_ms for a whole line on the child's stdout. too_long: more than
  /// max_line_bytes arrived without a newline (the child is broken; nothing more is read).
  ReadStatus read_line(std::string& line, int timeout_ms);

  void kill_now();
  /// Reaps the child: its exit code, or 128 + the signal that ended it.
  int wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1;
  std::string buffer_;
  std::optional<int> status_;
};

/// "exit code 3", "killed by signal 9 (Killed)".
std::string describe_exit(int code);

}  // namespace tunedreduce::tuner
