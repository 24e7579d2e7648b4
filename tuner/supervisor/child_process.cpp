#include "tuner/supervisor/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/error.hpp"

namespace tunedreduce::tuner {

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0)
    throw Error(std::string("cannot create pipes for a worker: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw Error(std::string("cannot start a worker: ") + std::strerror(errno));
  if (pid_ == 0) {
    // Child: only async-signal-safe calls until exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    execv(args[0], args.data());
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  in_fd_ = to_child[1];
  out_fd_ = from_child[0];
  // A write to a worker that died must not kill the supervisor with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
}

ChildProcess::~ChildProcess() {
  if (in_fd_ >= 0) close(in_fd_);
  if (out_fd_ >= 0) close(out_fd_);
  if (!status_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait();
  }
}

bool ChildProcess::write_line(const std::string& line) {
  std::string data = line + "\n";
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    ssize_t w = ::write(in_fd_, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  return true;
}

ChildProcess::ReadStatus ChildProcess::read_line(std::string& line, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return ReadStatus::line;
    }
    if (buffer_.size() > max_line_bytes) return ReadStatus::too_long;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return ReadStatus::timeout;
    pollfd pfd{out_fd_, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno != EINTR) return ReadStatus::eof;
    if (r <= 0) continue;
    char buf[4096];
    ssize_t got = ::read(out_fd_, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return ReadStatus::eof;
    buffer_.append(buf, static_cast<std::size_t>(got));
  }
}

void ChildProcess::kill_now() {
  if (!status_ && pid_ > 0) ::kill(pid_, SIGKILL);
}

int ChildProcess::wait() {
  if (status_) return *status_;
  int st = 0;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return *status_;
}

std::string describe_exit(int code) {
  if (code > 128) {
    const char* name = strsignal(code - 128);
    return "killed by signal " + std::to_string(code - 128) + " (" + (name ? name : "?") + ")";
  }
  return "exit code " + std::to_string(code);
}

}  // namespace tunedreduce::tuner
