#pragma once
// From the winners of a segmented key's grid points (segment size L x segment count S, one
// layout) to rectangles of that plane: what db::Database::replace_segmented_winners stores and
// the library looks a shape up in.
//
// The counts with a winner are columns: column j spans the counts from the geometric midpoint
// between S(j-1) and S(j) to the one before the midpoint between S(j) and S(j+1), the first from
// 1, the last up to kernels::segmented::max_segments. Within a column the sizes with a winner
// split the size axis the same way, the first from 1, the last up to 2^40 (kernels::max_elements):
// one rectangle per grid point, containing it. Where two neighbouring sizes of a column have
// different winners A (at lo) and B (at hi), both are measured at the geometric midpoint of the
// size, at that column's count, and the half where the winner changes is kept, as tuner/bisect.hpp
// does for whole-array sizes (bisect.enabled, max_depth, precision). The counts are bisected
// too: where a size measured in two neighbouring columns has different winners A (at the lower
// count) and B, both are measured at that size and the geometric midpoint of the counts, and the
// half where the winner changes is kept (the same depth and precision); the count found is the
// boundary between the two columns' rectangles over the sizes both hold around that size
// (elsewhere it stays the geometric midpoint). No rectangle takes a size its winner cannot run (the
// tile family takes rows whose length divides a 16-byte vector): such sizes go to a neighbour that
// can, else to no rectangle. Then neighbouring rectangles of one kernel merge where the result is
// a rectangle: along the sizes within a column, then whole size ranges across columns.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.hpp"
#include "kernels/registry.hpp"
#include "tuner/config.hpp"
#include "tuner/runner.hpp"
#include "tuner/selection.hpp"

namespace tunedreduce::tuner {

/// The size axis of the rectangles ends here: the largest n of any kernel, 2^40.
inline constexpr std::uint64_t max_segment_size = kernels::max_elements;

/// The winner of one grid point (an ok result) and its runner-up.
struct SegPointWinner {
  std::uint64_t segment_size = 0;  // L
  std::uint64_t count = 0;         // S
  Result winner;
  std::optional<Result> runner_up;
  std::optional<double> margin;  // runner_up / winner - 1
};

/// Run winner.kernel_id for size_lo <= L <= size_hi and count_lo <= S <= count_hi. The evidence
/// is the winner's result at the grid point inside where its lead over the runner-up was
/// smallest, or the last measurement of a bisection on its side of a boundary it was cut at. With
/// no point inside (points 0: a gap between a tile's sizes, or a piece a boundary along the counts
/// cut off the points of its rectangle) it is its kernel's where the sizes came from.
struct SegRectangle {
  std::uint64_t size_lo = 1, size_hi = 1;
  std::uint64_t count_lo = 1, count_hi = 1;
  Result winner;
  std::optional<Result> runner_up;
  std::optional<double> margin;
  std::size_t points = 0;  // grid points (and refinement points) of its kernel inside

  bool contains(std::uint64_t segment_size, std::uint64_t count) const {
    return size_lo <= segment_size && segment_size <= size_hi && count_lo <= count &&
           count <= count_hi;
  }
};

/// Where, in the column of \p count, the winner changes from from_id (at size lo) to to_id (at
/// hi): to_id from size = boundary on. Along the counts (along_counts), where at segment size
/// \p segment_size the winner changes from from_id (at count lo) to to_id (at hi): to_id from
/// count = boundary on.
struct SegCrossover {
  std::uint64_t count = 0;  // along the sizes: the column's count
  bool along_counts = false;
  std::uint64_t segment_size = 0;  // along the counts: the size bisected at
  std::string from_id, to_id;
  std::uint64_t grid_lo = 0, grid_hi = 0;  // the neighbouring grid sizes (counts)
  std::uint64_t lo = 0, hi = 0;            // the final bracket
  std::uint64_t boundary = 0;
  int probes = 0;          // midpoints measured
  bool undecided = false;  // stopped: neither candidate was ok (or could run) at a midpoint
};

struct SegRectangles {
  std::vector<SegRectangle> rectangles;  // by count_lo, then size_lo; never overlapping
  std::vector<SegCrossover> crossovers;
  std::vector<Result> probes;  // every result measured at a midpoint
  /// Points measured with every candidate between two grid points (see seg_rectangles); a
  /// deque, as the columns point into it while they are cut.
  std::deque<SegPointWinner> refinements;
  std::size_t requests = 0;
  bool cancelled = false;  // the rectangles are then empty
};

/// The interval of segment sizes around \p segment_size (which it takes) that the segmented
/// entry \p id takes at \p count: the whole axis but for the tile family; an id that is not a
/// segmented one's takes the whole axis.
std::pair<std::uint64_t, std::uint64_t> seg_size_interval(std::string_view id,
                                                          std::uint64_t segment_size,
                                                          std::uint64_t count);

/// \p grid: the winners of a key's grid points, any order (points without an ok winner left
/// out). With config.enabled false nothing is measured and every boundary is a geometric
/// midpoint. \p on_measured is called after every Runner::measure call.
///
/// \p candidates (the key's entries, as its grid points measured them): where neighbouring
/// sizes of a column have winners of which only one can run their geometric midpoint (a tile
/// winner next to another family: rows of 8 f32 elements, which no tile runs, between a tile at
/// 4 and a group of lanes at 16), every candidate that runs the midpoint is measured there once
/// and the midpoint becomes a point of the column before its crossovers are bisected, so that a
/// third family can win the sizes between (a thread per row, 94-101 % of the floor where the
/// group ran at 57 %: docs/performance.md 3.33). Only with config.enabled; none without
/// candidates.
SegRectangles seg_rectangles(std::span<const SegPointWinner> grid, Runner& runner,
                             const BisectConfig& config, const std::atomic<bool>* cancel = nullptr,
                             const TieRule& rule = {},
                             const std::function<void(std::size_t)>& on_measured = {},
                             bool merge = true, std::span<const std::string> candidates = {});

/// The rectangles as database rows of one (dtype, op, layout), measured in L2 mode \p l2_mode
/// (the run's). A winner without a measurement id (not recorded) cannot be stored: Error.
std::vector<db::SegmentedWinner> to_db_segmented_winners(std::span<const SegRectangle> rectangles,
                                                         DType dtype, Op op,
                                                         std::string_view layout,
                                                         db::L2Mode l2_mode, int driver_version,
                                                         int runtime_version,
                                                         std::optional<std::int64_t> run_id);

}  // namespace tunedreduce::tuner
