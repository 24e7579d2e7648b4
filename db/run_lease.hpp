#pragma once
// Which `running` runs still have a live process behind them. The process that begins a run
// holds an exclusive flock(2) on "<database file>.run-<uuid>.lock" until the run ends or the
// process dies: the kernel drops the lock when the process exits, kill -9 included. A later
// writer on the same host that finds a `running` run whose lease nobody holds knows its tuner
// is gone (Database::settle_abandoned_runs).

#include <filesystem>
#include <string>

namespace tunedreduce::db {

class RunLease {
 public:
  /// Creates (or reuses) and locks the lease file of run \p uuid next to \p database. Throws
  /// DbError (readonly: the folder is not writable; io: any other failure; busy: another
  /// process holds it).
  static RunLease acquire(const std::filesystem::path& database, const std::string& uuid);
  /// Whether a live process holds the lease of run \p uuid. False when there is no lease file
  /// or nobody holds its lock; true, to be safe, when the file exists but cannot be examined.
  static bool held(const std::filesystem::path& database, const std::string& uuid);
  /// The lease file of run \p uuid of \p database.
  static std::filesystem::path file(const std::filesystem::path& database, const std::string& uuid);

  RunLease(RunLease&& other) noexcept;
  RunLease& operator=(RunLease&& other) noexcept;
  RunLease(const RunLease&) = delete;
  RunLease& operator=(const RunLease&) = delete;
  /// Removes the lease file, then releases the lock.
  ~RunLease();

  const std::string& uuid() const { return uuid_; }

 private:
  RunLease(int fd, std::filesystem::path file, std::string uuid)
      : fd_(fd), file_(std::move(file)), uuid_(std::move(uuid)) {}
  void release() noexcept;

  int fd_ = -1;
  std::filesystem::path file_;
  std::string uuid_;
};

}  // namespace tunedreduce::db
