#include "common/files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <streambuf>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/interrupt.hpp"

namespace tunedreduce {

namespace fs = std::filesystem;

namespace {

std::string os_error(int err) { return std::strerror(err); }

/// Closes a descriptor on every path out of a scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  /// close(2) checked: on NFS and some FUSE filesystems a failed write surfaces only here.
  int release_and_close() {
    const int f = fd;
    fd = -1;
    return ::close(f) == 0 ? 0 : errno;
  }
};

/// write(2) until all of \p text is written; 0 or the errno.
int write_all(int fd, std::string_view text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  return 0;
}

std::atomic<unsigned> temp_counter{0};

}  // namespace

std::string read_file_limited(const fs::path& path, std::size_t limit, const char* what,
                              int exit_code, std::chrono::milliseconds timeout) {
  const std::string name = path.string();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw Error(name + ": " + (err == ENOENT ? std::string("no such file") : os_error(err)) + " (" +
                    what + ")",
                exit_code);
  }
  if (S_ISDIR(st.st_mode))
    throw Error(name + ": is a folder, not a file (" + what + ")", exit_code);
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > limit)
    throw Error(fmt::format("{}: {} bytes is larger than {} may be (at most {} bytes)", name,
                            st.st_size, what, limit),
                exit_code);
  // Anything but a regular file is opened without blocking (open(2) of a FIFO waits for a
  // writer) and read with poll(2): no wait for the next bytes may last longer than \p timeout.
  const bool regular = S_ISREG(st.st_mode);
  Fd in{::open(path.c_str(), O_RDONLY | O_CLOEXEC | (regular ? 0 : O_NONBLOCK))};
  if (in.fd < 0) throw Error(name + ": cannot be read: " + os_error(errno), exit_code);
  std::string text;
  text.reserve(regular ? static_cast<std::size_t>(st.st_size) : 4096);
  char buf[65536];
  bool had_writer = false;
  for (;;) {
    const ssize_t got = ::read(in.fd, buf, sizeof buf);
    if (got < 0 && errno == EAGAIN) {
      pollfd p{in.fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0)
        throw Error(fmt::format("{}: not a regular file, and nothing came from it for {} s ({})",
                                name, timeout.count() / 1000.0, what),
                    exit_code);
      had_writer = true;
      continue;
    }
    // A FIFO with no writer yet reads as its end at once: wait for one, as for its bytes.
    if (got == 0 && S_ISFIFO(st.st_mode) && !had_writer && text.empty()) {
      pollfd p{in.fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
      if (ready == 0)
        throw Error(fmt::format("{}: a FIFO that nobody wrote to for {} s ({})", name,
                                timeout.count() / 1000.0, what),
                    exit_code);
      if (ready > 0 && !(p.revents & POLLIN)) break;  // a writer came and went: the end
      had_writer = true;
      continue;
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(name + ": cannot be read: " + os_error(errno), exit_code);
    }
    if (got == 0) break;
    if (text.size() + static_cast<std::size_t>(got) > limit)
      throw Error(fmt::format("{}: more than {} bytes, larger than {} may be (an input without an "
                              "end, such as a device, is refused)",
                              name, limit, what),
                  exit_code);
    text.append(buf, static_cast<std::size_t>(got));
  }
  return text;
}

void write_file(const fs::path& path, std::string_view text, std::chrono::milliseconds timeout) {
  const std::string name = path.string();
  auto fail = [&](const std::string& why) {
    throw Error("cannot write '" + name + "': " + why, exit_code::io);
  };
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) fail("it is a folder");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or a FIFO: written in place (no rename can replace it). open(2) of a FIFO waits
    // for a reader: it is opened without blocking, again until one comes or \p timeout passes,
    // then written as usual.
    Fd out{::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK)};
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out.fd < 0 && errno == ENXIO && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      out.fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    }
    if (out.fd < 0 && errno == ENXIO)
      fail(fmt::format("a FIFO that nobody opened for reading within {} s",
                       timeout.count() / 1000.0));
    if (out.fd < 0) fail(os_error(errno));
    ::fcntl(out.fd, F_SETFL, ::fcntl(out.fd, F_GETFL) & ~O_NONBLOCK);
    if (int e = write_all(out.fd, text)) fail(os_error(e));
    if (int e = out.release_and_close()) fail(os_error(e));
    return;
  }
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}.{}", ::getpid(), temp_counter++);
  Fd out{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)};
  if (out.fd < 0) fail(os_error(errno));
  const TempFileGuard removed_on_signal(tmp);  // Ctrl-C or SIGTERM leaves no temporary file
  int err = write_all(out.fd, text);
  if (!err && ::fsync(out.fd) != 0 && errno != EINVAL && errno != EROFS) err = errno;
  if (!err && exists) ::fchmod(out.fd, st.st_mode & 07777);  // keep the old file's mode
  const int close_err = out.release_and_close();
  if (!err) err = close_err;
  if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    fail(os_error(err));
  }
}

namespace {

/// The errno of the first write to standard output that failed; 0 while none has.
std::atomic<int> stdout_errno{0};

void note_stdout_failure(int err) {
  int none = 0;
  stdout_errno.compare_exchange_strong(none, err ? err : EIO);
}

/// std::cout's buffer once install_checked_stdout() ran: every write goes to the C stream
/// (so printf and std::cout stay in order) and the first failure's errno is kept, which a later
/// call would otherwise overwrite before the command ends.
class CheckedStdoutBuf : public std::streambuf {
 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    errno = 0;
    if (std::fputc(traits_type::to_char_type(c), stdout) == EOF) {
      note_stdout_failure(errno);
      return traits_type::eof();
    }
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    errno = 0;
    const std::size_t w = std::fwrite(s, 1, static_cast<std::size_t>(n), stdout);
    if (w != static_cast<std::size_t>(n)) note_stdout_failure(errno);
    return static_cast<std::streamsize>(w);
  }
  int sync() override {
    errno = 0;
    if (std::fflush(stdout) != 0) {
      note_stdout_failure(errno);
      return -1;
    }
    return 0;
  }
};

}  // namespace

void install_checked_stdout() {
  static CheckedStdoutBuf buf;
  std::cout.rdbuf(&buf);
}

void write_stdout(std::string_view text) {
  std::cout.flush();
  errno = 0;
  if ((!text.empty() && std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) ||
      std::fflush(stdout) != 0) {
    const int err = errno;
    note_stdout_failure(err);
    throw Error("cannot write to standard output: " + os_error(err ? err : EIO), exit_code::io);
  }
}

std::string finish_stdout() {
  std::cout.flush();
  const bool cout_failed = !std::cout;
  errno = 0;
  if (std::fflush(stdout) != 0) note_stdout_failure(errno);
  if (const int err = stdout_errno.load()) return os_error(err);
  // A failure of printf's (not through std::cout) leaves only the stream's error flag.
  if (cout_failed || std::ferror(stdout)) return "a write failed";
  return {};
}

}  // namespace tunedreduce
