#pragma once
// The winners table `tunedreduce tune` prints at the end, and the two formats of a result it
// shares with the progress lines (tuner/progress.hpp).

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "tuner/driver.hpp"

namespace tunedreduce::tuner {

/// "2^20" for powers of two, else the decimal number.
std::string format_size(std::uint64_t n);

/// GB/s of a result: its own when recorded, else n * sizeof(T) / median.
std::optional<double> result_gbps(const Result& r);

/// The winners of every complete key: dtype, op, interval, winner id, us and GB/s at the
/// evidence size, runner-up, margin. \p device titles the table when not empty. Then the complete
/// segmented keys: a line per key and layout (grid points, points without a winner, rectangles,
/// distinct kernels, crossovers), and each one's plane of the grid points' winners.
void print_winners(std::ostream& os, const TuneOutcome& outcome, const std::string& device = {});

/// The same winners as one JSON object, for scripts: the device, the L2 mode, every complete
/// key's intervals (n_lo, n_hi, kernel, median_us at_n, gbps, runner_up, margin: null where the
/// table says "-") and every complete segmented key's rectangles (the same facts over segment
/// sizes and counts); "complete": false where a run was interrupted.
Json winners_json(const TuneOutcome& outcome, const std::string& device = {});

/// A segmented entry's name in the plane: "thread", "thr.v4", "tile", "g8", "b256", "split".
std::string seg_short_name(std::string_view id);

}  // namespace tunedreduce::tuner
