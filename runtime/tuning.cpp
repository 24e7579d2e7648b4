#include "runtime/tuning.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/defaults.hpp"

namespace tunedreduce::runtime {

TuningTable::TuningTable(const kernels::DeviceLimits& dev) { init_defaults(dev); }

TuningTable::TuningTable(const db::Snapshot& snapshot, const kernels::DeviceLimits& dev) {
  init_defaults(dev);
  for (const db::L2Mode m : {db::L2Mode::cold, db::L2Mode::warm}) {
    exact_[static_cast<int>(m)] = check(snapshot.exact[m], dev, "this device");
    similar_[static_cast<int>(m)] = check(snapshot.similar[m], dev, "a device of the same model");
    seg_exact_[static_cast<int>(m)] = check(snapshot.seg_exact[m], "this device");
    seg_similar_[static_cast<int>(m)] =
        check(snapshot.seg_similar[m], "a device of the same model");
  }
}

void TuningTable::init_defaults(const kernels::DeviceLimits& dev) {
  for (const DefaultRule& r : builtin_default_rules()) {
    const kernels::Entry* e = kernels::find(r.kernel_id);
    if (!e || e->can_implement(1, 256, dev)) {
      // Never expected (a unit test checks the defaults): any entry that can run here.
      e = nullptr;
      for (const kernels::Entry& cand : kernels::registry())
        if (cand.params.dtype == r.dtype && cand.params.op == r.op &&
            !cand.can_implement(1, 256, dev)) {
          e = &cand;
          break;
        }
    }
    defaults_[static_cast<int>(r.dtype)][static_cast<int>(r.op)].push_back({r.n_hi, e});
  }
}

TuningTable::Checked TuningTable::check(const db::WinnerTable& rows,
                                        const kernels::DeviceLimits& dev, const char* what) {
  std::vector<db::SnapshotEntry> kept;
  for (const db::SnapshotEntry& r : rows.entries()) {
    const std::string where = fmt::format("{} {} [{}, {}] (L2 {}) of {} ({})", dtype_name(r.dtype),
                                          op_name(r.op), r.n_lo, r.n_hi,
                                          db::l2_mode_name(r.l2_mode), what, r.device_key);
    const kernels::Entry* e = kernels::find(r.kernel_id);
    if (!e) {
      rejected_.push_back("the winner for " + where + " names kernel '" + r.kernel_id +
                          "', which this binary does not have");
      continue;
    }
    if (e->params.dtype != r.dtype || e->params.op != r.op) {
      rejected_.push_back("the winner for " + where + " names kernel '" + r.kernel_id +
                          "', which reduces another type or operator");
      continue;
    }
    if (auto why = e->can_implement(std::max<std::uint64_t>(r.n_lo, 1), 256, dev)) {
      rejected_.push_back("the winner for " + where + ", kernel '" + r.kernel_id +
                          "', cannot run on this device: " + *why);
      continue;
    }
    kept.push_back(r);
  }
  Checked c;
  c.table = db::WinnerTable(std::move(kept));
  c.entries.reserve(c.table.size());
  for (const db::SnapshotEntry& r : c.table.entries())
    c.entries.push_back(kernels::find(r.kernel_id));
  return c;
}

TuningTable::SegChecked TuningTable::check(const db::SegWinnerTable& rows, const char* what) {
  namespace seg = kernels::segmented;
  std::vector<db::SegSnapshotEntry> kept;
  for (const db::SegSnapshotEntry& r : rows.entries()) {
    const std::string where =
        fmt::format("{} {} {} segments of [{}, {}] elements x [{}, {}] (L2 {}) of {} ({})",
                    dtype_name(r.dtype), op_name(r.op), r.layout, r.size_lo, r.size_hi, r.count_lo,
                    r.count_hi, db::l2_mode_name(r.l2_mode), what, r.device_key);
    const seg::SegEntry* e = seg::find_seg(r.kernel_id);
    if (!e) {
      rejected_.push_back("the segmented winner for " + where + " names kernel '" + r.kernel_id +
                          "', which this binary does not have");
      continue;
    }
    if (e->params.dtype != r.dtype || e->params.op != r.op ||
        seg::seg_layout_name(e->params.layout) != r.layout) {
      rejected_.push_back("the segmented winner for " + where + " names kernel '" + r.kernel_id +
                          "', which reduces another type, operator or layout");
      continue;
    }
    kept.push_back(r);
  }
  SegChecked c;
  c.table = db::SegWinnerTable(std::move(kept));
  c.entries.reserve(c.table.size());
  for (const db::SegSnapshotEntry& r : c.table.entries())
    c.entries.push_back(seg::find_seg(r.kernel_id));
  return c;
}

SegChoice TuningTable::choose_segmented(DType dtype, Op op, kernels::segmented::SegLayout layout,
                                        std::uint64_t size, std::uint64_t count,
                                        db::L2Mode prefer) const noexcept {
  const char* layout_name = kernels::segmented::seg_layout_name(layout);
  const int first = static_cast<int>(prefer), second = 1 - first;
  for (const auto& [tables, level] :
       {std::pair{&seg_exact_, Level::exact}, std::pair{&seg_similar_, Level::same_model}})
    for (const int m : {first, second}) {
      const SegChecked& c = (*tables)[m];
      if (const db::SegSnapshotEntry* r = c.table.find(dtype, op, layout_name, size, count))
        return {c.entries[static_cast<std::size_t>(r - c.table.entries().data())], level, r};
    }
  return {};
}

Choice TuningTable::pick(const Checked& c, const db::SnapshotEntry* row, Level level) noexcept {
  return {c.entries[static_cast<std::size_t>(row - c.table.entries().data())], level, row};
}

namespace {

/// A row tuned for sizes [n_lo, n_hi] stands in for n only within a factor of nearest_reach of
/// that interval; further away the built-in default (chosen per size from measurements on
/// several GPUs) is the better guess.
bool within_reach(const db::SnapshotEntry& r, std::uint64_t n) {
  const std::uint64_t lo = std::max<std::uint64_t>(r.n_lo, 1),
                      hi = std::max<std::uint64_t>(r.n_hi, 1);
  if (n < lo) return n >= lo / TuningTable::nearest_reach;
  if (n > hi) return n / TuningTable::nearest_reach <= hi;
  return true;
}

}  // namespace

const db::SnapshotEntry* TuningTable::taking(const Checked& c, const db::SnapshotEntry* r,
                                             std::uint64_t n) noexcept {
  if (!r) return nullptr;
  const auto rows = c.table.entries();
  const auto i = static_cast<std::size_t>(r - rows.data());
  if (takes(*c.entries[i], n)) return r;
  // A single_tile winner below n: the next interval of the key (tuned for larger sizes).
  if (i + 1 < rows.size() && rows[i + 1].dtype == r->dtype && rows[i + 1].op == r->op &&
      n < rows[i + 1].n_lo && within_reach(rows[i + 1], n) && takes(*c.entries[i + 1], n))
    return &rows[i + 1];
  return nullptr;
}

Choice TuningTable::choose(DType dtype, Op op, std::uint64_t n, db::L2Mode prefer) const noexcept {
  const int first = static_cast<int>(prefer), second = 1 - first;
  for (const int m : {first, second}) {
    const Checked& c = exact_[m];
    if (const db::SnapshotEntry* r = c.table.find(dtype, op, n)) {
      if (const db::SnapshotEntry* t = taking(c, r, n))
        return pick(c, t, t == r ? Level::exact : Level::nearest);
    } else if (const db::SnapshotEntry* t = taking(c, c.table.nearest(dtype, op, n), n);
               t && within_reach(*t, n)) {
      return pick(c, t, Level::nearest);
    }
  }
  for (const int m : {first, second}) {
    const Checked& c = similar_[m];
    if (const db::SnapshotEntry* t = taking(c, c.table.nearest(dtype, op, n), n);
        t && within_reach(*t, n))
      return pick(c, t, Level::same_model);
  }
  return {default_entry(dtype, op, n), Level::builtin_default, nullptr};
}

}  // namespace tunedreduce::runtime
