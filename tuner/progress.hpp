#pragma once
// The progress `tunedreduce tune` prints while it runs: a bar on a terminal, plain lines
// otherwise.

#include <cstddef>
#include <iosfwd>
#include <mutex>

#include "tuner/driver.hpp"

namespace tunedreduce::tuner {

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
