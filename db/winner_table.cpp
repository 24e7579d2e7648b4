#include "db/winner_table.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace tunedreduce::db {

WinnerTable::WinnerTable(std::vector<SnapshotEntry> rows) : rows_(std::move(rows)) {
  for (const SnapshotEntry& e : rows_)
    if (e.l2_mode != rows_.front().l2_mode)
      throw std::invalid_argument("WinnerTable: rows of both L2 modes (split them by mode)");
  std::sort(rows_.begin(), rows_.end(), [](const SnapshotEntry& a, const SnapshotEntry& b) {
    return std::tie(a.dtype, a.op, a.n_lo) < std::tie(b.dtype, b.op, b.n_lo);
  });
}

std::span<const SnapshotEntry> WinnerTable::range(DType dtype, Op op) const {
  auto key = [](const SnapshotEntry& e) { return std::pair(e.dtype, e.op); };
  auto lo = std::lower_bound(rows_.begin(), rows_.end(), std::pair(dtype, op),
                             [&](const SnapshotEntry& e, auto k) { return key(e) < k; });
  auto hi = std::upper_bound(lo, rows_.end(), std::pair(dtype, op),
                             [&](auto k, const SnapshotEntry& e) { return k < key(e); });
  return {lo, hi};
}

WinnerTables WinnerTables::split(std::vector<SnapshotEntry> rows) {
  std::array<std::vector<SnapshotEntry>, 2> parts;
  for (SnapshotEntry& e : rows) parts[static_cast<int>(e.l2_mode)].push_back(std::move(e));
  WinnerTables t;
  for (int m = 0; m < 2; ++m) t.by_mode[m] = WinnerTable(std::move(parts[m]));
  return t;
}

const SnapshotEntry* WinnerTable::find(DType dtype, Op op, std::uint64_t n) const {
  auto r = range(dtype, op);
  // Last entry with n_lo <= n.
  auto it = std::upper_bound(r.begin(), r.end(), n,
                             [](std::uint64_t v, const SnapshotEntry& e) { return v < e.n_lo; });
  if (it == r.begin()) return nullptr;
  --it;
  return n <= it->n_hi ? &*it : nullptr;
}

const SnapshotEntry* WinnerTable::nearest(DType dtype, Op op, std::uint64_t n) const {
  if (const SnapshotEntry* e = find(dtype, op, n)) return e;
  auto r = range(dtype, op);
  if (r.empty()) return nullptr;
  auto it = std::upper_bound(r.begin(), r.end(), n,
                             [](std::uint64_t v, const SnapshotEntry& e) { return v < e.n_lo; });
  const SnapshotEntry* below = it == r.begin() ? nullptr : &*std::prev(it);  // n_hi < n
  const SnapshotEntry* above = it == r.end() ? nullptr : &*it;               // n_lo > n
  if (!below) return above;
  if (!above) return below;
  return (n - below->n_hi) <= (above->n_lo - n) ? below : above;
}

}  // namespace tunedreduce::db
