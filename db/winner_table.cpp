#include "db/winner_table.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "common/names.hpp"
#include "common/printable.hpp"

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

namespace {

auto seg_key(const SegSnapshotEntry& e) {
  return std::tuple<DType, Op, std::string_view>(e.dtype, e.op, e.layout);
}

/// "'seg.group.b256.g8.v4.fixed.f32.sum' of device 75ee52f54f3ef9f9 (f32 sum fixed cold, sizes
/// 1..64, counts 1..4096)"
std::string seg_entry_name(const SegSnapshotEntry& e) {
  return fmt::format("'{}' of device {} ({} {} {} {}, sizes {}..{}, counts {}..{})",
                     printable(e.kernel_id, 80), printable(e.device_key, 40), dtype_name(e.dtype),
                     op_name(e.op), printable(e.layout, 40), l2_mode_name(e.l2_mode), e.size_lo,
                     e.size_hi, e.count_lo, e.count_hi);
}

}  // namespace

SegWinnerTable::SegWinnerTable(std::vector<SegSnapshotEntry> rows) : rows_(std::move(rows)) {
  for (const SegSnapshotEntry& e : rows_) {
    if (e.l2_mode != rows_.front().l2_mode)
      throw std::invalid_argument("SegWinnerTable: rows of both L2 modes (split them by mode)");
    if (e.size_lo < 1 || e.size_lo > e.size_hi || e.count_lo < 1 || e.count_lo > e.count_hi)
      throw std::invalid_argument("SegWinnerTable: " + seg_entry_name(e) + " is no rectangle");
  }
  std::sort(rows_.begin(), rows_.end(), [](const SegSnapshotEntry& a, const SegSnapshotEntry& b) {
    return std::make_tuple(seg_key(a), a.size_lo, a.count_lo) <
           std::make_tuple(seg_key(b), b.size_lo, b.count_lo);
  });
  // Within one (dtype, op, layout), sorted by size_lo: a row can overlap only earlier rows whose
  // sizes reach its size_lo.
  for (std::size_t i = 0; i < rows_.size(); ++i)
    for (std::size_t k = i; k-- > 0 && seg_key(rows_[k]) == seg_key(rows_[i]);) {
      const SegSnapshotEntry &a = rows_[k], &b = rows_[i];
      if (a.size_lo <= b.size_hi && b.size_lo <= a.size_hi && a.count_lo <= b.count_hi &&
          b.count_lo <= a.count_hi)
        throw std::invalid_argument("SegWinnerTable: " + seg_entry_name(a) + " and " +
                                    seg_entry_name(b) + " overlap");
    }
}

const SegSnapshotEntry* SegWinnerTable::find(DType dtype, Op op, std::string_view layout,
                                             std::uint64_t size, std::uint64_t count) const {
  const auto key = std::tuple<DType, Op, std::string_view>(dtype, op, layout);
  auto it =
      std::lower_bound(rows_.begin(), rows_.end(), key,
                       [](const SegSnapshotEntry& e, const auto& k) { return seg_key(e) < k; });
  // A linear scan of the (dtype, op, layout)'s rows, by size_lo: a tuned grid has tens of them.
  for (; it != rows_.end() && seg_key(*it) == key && it->size_lo <= size; ++it)
    if (size <= it->size_hi && it->count_lo <= count && count <= it->count_hi) return &*it;
  return nullptr;
}

SegWinnerTables SegWinnerTables::split(std::vector<SegSnapshotEntry> rows) {
  std::array<std::vector<SegSnapshotEntry>, 2> parts;
  for (SegSnapshotEntry& e : rows) parts[static_cast<int>(e.l2_mode)].push_back(std::move(e));
  SegWinnerTables t;
  for (int m = 0; m < 2; ++m) t.by_mode[m] = SegWinnerTable(std::move(parts[m]));
  return t;
}

}  // namespace tunedreduce::db
