#pragma once
// The tuning data of one device as the runtime uses it: the snapshot's tables with every row
// checked against this binary's registry and the device, and the lookup order of docs/library.md.
// No CUDA calls: tested on snapshots of synthetic databases and tests/data/h100-sample.db.

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "db/snapshot.hpp"
#include "kernels/registry.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tunedreduce/tunedreduce.hpp"

namespace tunedreduce::runtime {

/// What a lookup found: the entry to run, the level, and the row it came from (nullptr for the
/// built-in default).
/// Whether \p e takes n elements as far as the lookup is concerned: a single_tile entry up to
/// its tile; every other entry always (past kernels::max_elements the call is refused by name
/// after the lookup, whichever entry it found).
inline bool takes(const kernels::Entry& e, std::uint64_t n) noexcept {
  const std::uint64_t cap = kernels::max_elements_of(e.params);
  return cap == kernels::max_elements || n <= cap;
}

struct Choice {
  const kernels::Entry* entry = nullptr;
  Level level = Level::builtin_default;
  const db::SnapshotEntry* row = nullptr;
};

/// What a segmented lookup found: the tuned entry and its row, or nothing (the built-in rules
/// decide then: runtime/segmented_rules.hpp).
struct SegChoice {
  const kernels::segmented::SegEntry* entry = nullptr;
  Level level = Level::builtin_default;
  const db::SegSnapshotEntry* row = nullptr;
};

class TuningTable {
 public:
  /// Built-in defaults only.
  explicit TuningTable(const kernels::DeviceLimits& dev);
  /// Keeps the rows of \p snapshot that this binary can run on \p dev: a row is dropped, with
  /// the reason in rejected(), when its kernel id is not in the registry, names another type or
  /// operator than the row, or can_implement refuses it on this device.
  TuningTable(const db::Snapshot& snapshot, const kernels::DeviceLimits& dev);

  /// Lookup order: (1) this device, interval containing n; (2) this device, nearest interval
  /// within nearest_reach; (3) another device of the same model (compute capability, SM count
  /// and memory system), interval containing n, else the nearest one within nearest_reach;
  /// (4) the built-in default for n. Rows of the L2 mode \p prefer come first at each device
  /// level: this device's rows of \p prefer (1, 2), then its rows of the other mode (1, 2),
  /// then the same model's rows of \p prefer, then of the other mode (3). Lock-free and
  /// allocation-free; \p dtype and \p op must be valid. A row whose kernel does not take n (a
  /// single_tile entry past its tile) is passed over for the next interval of its key, if that
  /// one is within reach, else for the next level.
  Choice choose(DType dtype, Op op, std::uint64_t n,
                db::L2Mode prefer = db::L2Mode::cold) const noexcept;

  /// A row tuned for [n_lo, n_hi] serves sizes down to n_lo / nearest_reach and up to
  /// n_hi * nearest_reach at levels 2 and 3; further away the built-in default is used.
  static constexpr std::uint64_t nearest_reach = 4;

  /// The built-in default's entry for (dtype, op) at n on this device. Where no rule's kernel
  /// takes n (an exact kernel at 2^40, its limit being 2^40 - 1) the last rule covering n, whose
  /// can_implement says why; nullptr only for a pair op_applies refuses (no rules).
  const kernels::Entry* default_entry(DType dtype, Op op, std::uint64_t n) const noexcept {
    const kernels::Entry* covering = nullptr;
    for (const Default& d : defaults_[static_cast<int>(dtype)][static_cast<int>(op)])
      if (n <= d.n_hi) {
        if (!d.entry || takes(*d.entry, n)) return d.entry;
        covering = d.entry;
      }
    return covering;
  }

  /// The tuned segmented entry for (dtype, op, layout) and segments of \p size elements (offsets
  /// layouts: the mean length) in \p count segments: this device's rectangle containing the shape,
  /// rows of \p prefer first, then of the other mode (Level::exact); then the same model's
  /// (Level::same_model). Rectangles tile the tuned plane, so there is no nearest level. Nothing
  /// (entry nullptr) when no row contains the shape. Whether the entry can run the call's
  /// problem (alignment, offsets) is the caller's to ask. Lock-free and allocation-free.
  SegChoice choose_segmented(DType dtype, Op op, kernels::segmented::SegLayout layout,
                             std::uint64_t size, std::uint64_t count,
                             db::L2Mode prefer = db::L2Mode::cold) const noexcept;
  std::size_t segmented_rows() const {
    std::size_t r = 0;
    for (const SegChecked* c : {&seg_exact_[0], &seg_exact_[1], &seg_similar_[0], &seg_similar_[1]})
      r += c->table.size();
    return r;
  }

  /// One sentence per dropped row.
  const std::vector<std::string>& rejected() const { return rejected_; }
  /// Rows kept, this device / same model, both L2 modes.
  std::size_t exact_rows() const { return exact_[0].table.size() + exact_[1].table.size(); }
  std::size_t similar_rows() const { return similar_[0].table.size() + similar_[1].table.size(); }

 private:
  struct Checked {
    db::WinnerTable table;
    std::vector<const kernels::Entry*> entries;  // parallel to table.entries()
  };
  Checked check(const db::WinnerTable& rows, const kernels::DeviceLimits& dev, const char* what);
  static Choice pick(const Checked& c, const db::SnapshotEntry* row, Level level) noexcept;
  /// \p r if its kernel takes n, else the key's next interval if that one's kernel does and n
  /// lies below it within reach, else nullptr (also for a null \p r).
  static const db::SnapshotEntry* taking(const Checked& c, const db::SnapshotEntry* r,
                                         std::uint64_t n) noexcept;
  void init_defaults(const kernels::DeviceLimits& dev);

  struct Default {
    std::uint64_t n_hi;
    const kernels::Entry* entry;
  };
  struct SegChecked {
    db::SegWinnerTable table;
    std::vector<const kernels::segmented::SegEntry*> entries;  // parallel to table.entries()
  };
  SegChecked check(const db::SegWinnerTable& rows, const char* what);

  Checked exact_[2], similar_[2];  // indexed by db::L2Mode
  SegChecked seg_exact_[2], seg_similar_[2];
  std::vector<Default> defaults_[std::size(all_dtypes)][std::size(all_ops)];
  std::vector<std::string> rejected_;
};

}  // namespace tunedreduce::runtime
