#pragma once
// What `tunedreduce tune` prints: progress (a bar on a terminal, plain lines otherwise) and the
// winners table at the end.

#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>

#include "tuner/driver.hpp"

namespace tunedreduce::tuner {

/// "2^20" for powers of two, else the decimal number.
std::string format_size(std::uint64_t n);

/// GB/s of a result: its own when recorded, else n * sizeof(T) / median.
std::optional<double> result_gbps(const Result& r);

/// The winners of every complete key: dtype, op, interval, winner id, us and GB/s at the
/// evidence size, runner-up, margin. \p device titles the table when not empty.
void print_winners(std::ostream& os, const TuneOutcome& outcome, const std::string& device = {});

/// Draws ProgressEvents. On a terminal: one line redrawn in place (at most 10 times a second)
/// with a bar, the key and size in progress, and the ETA. Otherwise: a line per finished size
/// and key. Safe to call from several threads (one driver per device).
class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream& os, bool terminal) : os_(os), terminal_(terminal) {}
  void operator()(const ProgressEvent& e);
  /// Ends the redrawn line (terminal mode).
  void finish();

 private:
  std::ostream& os_;
  bool terminal_;
  std::mutex mutex_;
  double last_draw_ = -1;
  std::size_t drawn_width_ = 0;
};

}  // namespace tunedreduce::tuner
