#include "db/run_lease.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "db/db_error.hpp"

namespace tunedreduce::db {

std::filesystem::path RunLease::file(const std::filesystem::path& database,
                                     const std::string& uuid) {
  std::filesystem::path f = database;
  f += ".run-" + uuid + ".lock";
  return f;
}

RunLease RunLease::acquire(const std::filesystem::path& database, const std::string& uuid) {
  const std::filesystem::path f = file(database, uuid);
  const int fd = ::open(f.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    throw DbError(e == EACCES || e == EROFS ? Problem::readonly : Problem::io, database,
                  "cannot create the run's lease file '" + f.string() + "': " + std::strerror(e));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);
    throw DbError(e == EWOULDBLOCK ? Problem::busy : Problem::io, database,
                  "cannot lock the run's lease file '" + f.string() + "': " + std::strerror(e));
  }
  return RunLease(fd, f, uuid);
}

bool RunLease::held(const std::filesystem::path& database, const std::string& uuid) {
  const std::filesystem::path f = file(database, uuid);
  const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno != ENOENT;
  // A lock of our own open file description conflicts with the holder's, in this process too.
  // Any failure other than "free" (EWOULDBLOCK: held; anything else: unknown) counts as held.
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);  // drops the probe's lock, if it got one
  return !free;
}

RunLease::RunLease(RunLease&& other) noexcept
    : fd_(other.fd_), file_(std::move(other.file_)), uuid_(std::move(other.uuid_)) {
  other.fd_ = -1;
}

RunLease& RunLease::operator=(RunLease&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    file_ = std::move(other.file_);
    uuid_ = std::move(other.uuid_);
    other.fd_ = -1;
  }
  return *this;
}

RunLease::~RunLease() { release(); }

void RunLease::release() noexcept {
  if (fd_ < 0) return;
  ::unlink(file_.c_str());  // first: nobody may take a file that is about to lose its lock
  ::close(fd_);
  fd_ = -1;
}

}  // namespace tunedreduce::db
