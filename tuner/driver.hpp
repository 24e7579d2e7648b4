#pragma once
// The driver: for each (dtype, op) of the space, the strategy at every grid size, then
// bisection into size intervals; then, for each segmented key and layout ([segmented]), the
// strategy at every grid point (segment size x count) and the winners as rectangles of that
// plane (tuner/seg_rectangles.hpp); reporting progress and stopping cleanly on cancellation.
//
// How it uses the Runner: per grid size, the strategy calls Runner::measure with batches of at
// most DriverOptions::chunk requests (all of one dtype, op and n; halving's early rounds set
// min_repeats = max_repeats and leave budget_ms alone); bisection calls it with two requests
// (both winners at one midpoint, the full policy). A segmented grid point's requests carry its
// segment size, n being the total (size x count), as do the two of its size-axis bisection.
// Between calls the cancellation flag is checked; a batch answered after the flag went up is
// discarded.

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tuner/bisect.hpp"
#include "tuner/config.hpp"
#include "tuner/estimate.hpp"
#include "tuner/runner.hpp"
#include "tuner/seg_rectangles.hpp"
#include "tuner/segmented_space.hpp"
#include "tuner/selection.hpp"

namespace tunedreduce::tuner {

/// One grid size of one key.
struct SizeOutcome {
  std::uint64_t n = 0;
  std::size_t candidates = 0;
  std::vector<Result> final_results;  // the strategy's last round: the winner's competition
  std::size_t requests = 0;           // measurements asked for, every round
  int rounds = 0;
  std::size_t failed = 0;            // final results that are not ok
  std::optional<SizeWinner> winner;  // empty when no candidate was ok
  std::size_t tied = 0;
};

/// One (dtype, op).
struct KeyOutcome {
  DType dtype = DType::i32;
  Op op = Op::sum;
  L2Mode l2_mode = L2Mode::cold;  // of every measurement: the winners are of this mode
  std::size_t candidates = 0;
  std::vector<SizeOutcome> sizes;
  BisectOutcome bisect;   // bisect.intervals: the winners, ready for db::Database::replace_winners
  bool complete = false;  // every grid size and the bisection finished
};

/// One grid point (segment size L, segment count S) of a segmented key and layout.
struct SegPointOutcome {
  std::uint64_t segment_size = 0;
  std::uint64_t count = 0;
  std::size_t candidates = 0;
  std::vector<Result> final_results;  // the strategy's last round, at n = L x S
  std::size_t requests = 0;
  int rounds = 0;
  std::size_t failed = 0;
  std::optional<SegPointWinner> winner;  // empty when no candidate was ok
  std::size_t tied = 0;
};

/// One segmented key (dtype, op) and layout.
struct SegKeyOutcome {
  DType dtype = DType::f32;
  Op op = Op::sum;
  kseg::SegLayout layout = kseg::SegLayout::fixed;
  L2Mode l2_mode = L2Mode::cold;
  std::size_t candidates = 0;
  std::vector<SegPointOutcome> points;  // the finished grid points, in the plan's order
  /// rectangles.rectangles: the winners, ready for db::Database::replace_segmented_winners.
  SegRectangles rectangles;
  bool complete = false;  // every grid point and the rectangles finished
};

struct TuneOutcome {
  std::vector<KeyOutcome> keys;  // finished keys, then at most one incomplete (cancelled)
  /// The segmented keys and layouts begun, in the plan's order (after every key above).
  std::vector<SegKeyOutcome> segmented;
  bool cancelled = false;
  std::size_t requests = 0;
  double elapsed_s = 0;
};

struct ProgressEvent {
  enum class Kind {
    measured,   // a Runner::measure call returned (inside a grid size or a bisection)
    size_done,  // a grid size finished: size is set (a segmented grid point: seg_point)
    key_done,   // a key finished (grid and bisection): key is set (a segmented key: seg_key)
  };
  Kind kind = Kind::measured;
  std::string device;  // DriverOptions::device_label
  DType dtype = DType::i32;
  Op op = Op::sum;
  std::uint64_t n = 0;  // the grid size in progress (0 while bisecting)
  /// A segmented key's event: its layout, and the grid point's segment size (n is its total;
  /// both 0 while bisecting).
  std::optional<kseg::SegLayout> layout;
  std::uint64_t segment_size = 0;
  std::size_t keys_done = 0, keys_total = 0;    // segmented keys and layouts counted too
  std::size_t sizes_done = 0, sizes_total = 0;  // grid sizes over every key, and grid points
  std::size_t candidates = 0;                   // of the current key
  std::size_t requests = 0;                     // answered so far in this run
  double elapsed_s = 0;
  std::optional<double> eta_s;  // from the estimate model's weights and the time so far
  double fraction = 0;          // of the estimated work done, 0..1
  const SizeOutcome* size = nullptr;
  const KeyOutcome* key = nullptr;
  const SegPointOutcome* seg_point = nullptr;
  const SegKeyOutcome* seg_key = nullptr;
};

using ProgressFn = std::function<void(const ProgressEvent&)>;

struct DriverOptions {
  std::string device_label;
  ProgressFn progress;
  const std::atomic<bool>* cancel = nullptr;
  std::function<double()> clock;  // monotonic seconds; empty: steady_clock
  std::size_t chunk = 64;         // requests per Runner::measure call
  TieRule tie;
  EstimateModel model;  // weights for the ETA
};

/// Tunes every key of \p config with \p runner, then every segmented key and layout. Returns when
/// done, or, once the cancellation flag is set, at the next check with what finished (complete
/// keys, and the incomplete key's finished sizes or grid points).
TuneOutcome run_tuning(const TuneConfig& config, Runner& runner, const DriverOptions& options = {});

/// The same with several runners of one device model (the GPUs of one model in a host), one
/// thread each, fed from one queue of units: a grid size of a key (the strategy over all its
/// candidates, on one runner) or the bisection of a key whose grid is done (on one runner). So
/// every winner is chosen among measurements of one GPU, and small differences between the GPUs
/// never decide one. Units are handed out key by key in the order of the space, a key's bisection
/// before the next key's sizes and, with several runners, a key's larger sizes first (they take
/// longest). The segmented keys and layouts follow, as units of a grid point or of a key's
/// rectangles (with its size-axis bisection). The outcome has the keys in the order of the space;
/// after a cancellation (or an
/// error in one runner, rethrown once every runner stopped) the keys begun but not finished are
/// incomplete, with their finished sizes. Progress is reported from the runners' threads, one
/// event at a time. One runner: exactly the sequence of the overload above.
TuneOutcome run_tuning(const TuneConfig& config, std::span<Runner* const> runners,
                       const DriverOptions& options = {});

}  // namespace tunedreduce::tuner
