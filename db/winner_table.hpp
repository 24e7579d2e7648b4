#pragma once
// An in-memory, read-only table of winners, as the runtime library keeps it: one table per L2
// mode, since a device may have a cold and a warm winner for the same sizes.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce::db {

struct SnapshotEntry {
  std::string device_key;  // the device the winner was tuned on
  DType dtype = DType::i32;
  Op op = Op::sum;
  L2Mode l2_mode = L2Mode::cold;  // the L2 state the winner was tuned for (its evidence's)
  std::uint64_t n_lo = 0, n_hi = 0;
  std::string kernel_id;
  int driver_version = 0;  // at tuning time
  int runtime_version = 0;
  double median_us = 0;  // the winning measurement

  /// Tuned under another driver or CUDA runtime: still valid, but worth retuning.
  bool stale(int driver, int runtime) const {
    return driver_version != driver || runtime_version != runtime;
  }
};

/// The winners of one L2 mode.
class WinnerTable {
 public:
  WinnerTable() = default;
  /// \p rows must all be of one L2 mode (else std::invalid_argument: the lookups below would mix
  /// modes) and must not overlap within one (dtype, op); they are sorted here.
  explicit WinnerTable(std::vector<SnapshotEntry> rows);

  /// The entry whose interval contains n (lookup level 1 or 3), or nullptr.
  const SnapshotEntry* find(DType dtype, Op op, std::uint64_t n) const;
  /// The entry nearest to n for (dtype, op) (lookup level 2): the containing one, else the
  /// interval with the smallest distance to n; on equal distance the smaller sizes win.
  const SnapshotEntry* nearest(DType dtype, Op op, std::uint64_t n) const;

  std::span<const SnapshotEntry> entries() const { return rows_; }
  bool empty() const { return rows_.empty(); }
  std::size_t size() const { return rows_.size(); }

 private:
  std::span<const SnapshotEntry> range(DType dtype, Op op) const;
  std::vector<SnapshotEntry> rows_;  // sorted by dtype, op, n_lo
};

/// A WinnerTable per L2 mode: `tables[L2Mode::warm]` (a plain index, no allocation).
struct WinnerTables {
  std::array<WinnerTable, 2> by_mode;  // indexed by static_cast<int>(L2Mode)

  WinnerTable& operator[](L2Mode m) { return by_mode[static_cast<int>(m)]; }
  const WinnerTable& operator[](L2Mode m) const { return by_mode[static_cast<int>(m)]; }
  /// Rows of both modes.
  std::size_t size() const { return by_mode[0].size() + by_mode[1].size(); }
  bool empty() const { return by_mode[0].empty() && by_mode[1].empty(); }

  /// Splits \p rows by their L2 mode; within a mode they must not overlap (see WinnerTable).
  static WinnerTables split(std::vector<SnapshotEntry> rows);
};

/// A segmented winner as the runtime library keeps it (db/records.hpp's SegmentedWinner).
struct SegSnapshotEntry {
  std::string device_key;
  DType dtype = DType::i32;
  Op op = Op::sum;
  L2Mode l2_mode = L2Mode::cold;
  std::string layout;  // "fixed", "offsets32", "offsets64"
  std::uint64_t size_lo = 1, size_hi = 1, count_lo = 1, count_hi = 1;
  std::string kernel_id;
  int driver_version = 0;
  int runtime_version = 0;
  double median_us = 0;
  bool stale(int driver, int runtime) const {
    return driver_version != driver || runtime_version != runtime;
  }
};

/// The segmented winners of one L2 mode: rectangles in (segment size, segment count) per
/// (dtype, op, layout).
class SegWinnerTable {
 public:
  SegWinnerTable() = default;
  /// \p rows must all be of one L2 mode and must not overlap within one (dtype, op, layout),
  /// else std::invalid_argument naming the two rows (a row that is no rectangle, lo > hi or a
  /// bound of 0, is refused the same way, naming it); they are sorted here.
  explicit SegWinnerTable(std::vector<SegSnapshotEntry> rows);
  /// The entry whose rectangle contains (size, count), bounds included, or nullptr: a scan of
  /// the (dtype, op, layout)'s rows from a binary search, stopping at the first size_lo above
  /// \p size.
  const SegSnapshotEntry* find(DType dtype, Op op, std::string_view layout, std::uint64_t size,
                               std::uint64_t count) const;
  std::span<const SegSnapshotEntry> entries() const { return rows_; }
  bool empty() const { return rows_.empty(); }
  std::size_t size() const { return rows_.size(); }

 private:
  std::vector<SegSnapshotEntry> rows_;  // sorted by dtype, op, layout, size_lo, count_lo
};

struct SegWinnerTables {
  std::array<SegWinnerTable, 2> by_mode;  // indexed by static_cast<int>(L2Mode)
  SegWinnerTable& operator[](L2Mode m) { return by_mode[static_cast<int>(m)]; }
  const SegWinnerTable& operator[](L2Mode m) const { return by_mode[static_cast<int>(m)]; }
  std::size_t size() const { return by_mode[0].size() + by_mode[1].size(); }
  bool empty() const { return by_mode[0].empty() && by_mode[1].empty(); }
  static SegWinnerTables split(std::vector<SegSnapshotEntry> rows);
};

}  // namespace tunedreduce::db
