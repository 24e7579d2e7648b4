#include "tuner/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>

#include "tuner/estimate.hpp"
#include "tuner/winners_table.hpp"

namespace tunedreduce::tuner {

void ProgressPrinter::operator()(const ProgressEvent& e) {
  std::lock_guard lock(mutex_);
  const std::string prefix = e.device.empty() ? std::string() : "[" + e.device + "] ";
  const std::string key = std::string(dtype_name(e.dtype)) + " " + op_name(e.op);
  const std::string eta = e.eta_s ? "ETA " + format_duration(*e.eta_s) : "ETA ?";
  if (!terminal_) {
    if (e.kind == ProgressEvent::Kind::size_done && e.size) {
      os_ << "tune: " << prefix << key << " n=" << format_size(e.n) << ": ";
      if (e.size->winner)
        os_ << e.size->winner->winner.kernel_id << " "
            << fmt::format("{:.2f}", *e.size->winner->winner.median_us) << " us (" << e.size->tied
            << " tied, " << e.size->failed << " not ok, " << e.size->requests << " measured)";
      else os_ << "no candidate was ok (" << e.size->failed << " not ok)";
      os_ << "  [size " << e.sizes_done << "/" << e.sizes_total << ", " << eta << "]\n";
    } else if (e.kind == ProgressEvent::Kind::key_done && e.key) {
      os_ << "tune: " << prefix << key << " done: " << e.key->bisect.intervals.size()
          << " intervals, " << e.key->bisect.crossovers.size() << " crossovers  [key "
          << e.keys_done << "/" << e.keys_total << "]\n";
    }
    os_.flush();
    return;
  }
  const bool final_event = e.kind == ProgressEvent::Kind::key_done;
  if (!final_event && last_draw_ >= 0 && e.elapsed_s - last_draw_ < 0.1) return;
  last_draw_ = e.elapsed_s;
  constexpr int bar_width = 24;
  const int filled = static_cast<int>(std::lround(e.fraction * bar_width));
  std::string line = "\r" + prefix + "[" + std::string(filled, '#') +
                     std::string(bar_width - filled, '.') + "] " +
                     fmt::format("{:.0f}", e.fraction * 100) + "%  " + key +
                     (e.n ? " n=" + format_size(e.n) : std::string(" bisecting")) + "  size " +
                     std::to_string(e.sizes_done) + "/" + std::to_string(e.sizes_total) + "  key " +
                     std::to_string(e.keys_done) + "/" + std::to_string(e.keys_total) + "  " +
                     std::to_string(e.requests) + " measured  " + eta;
  const std::size_t visible = line.size() - 1;
  if (visible < drawn_width_) line += std::string(drawn_width_ - visible, ' ');
  drawn_width_ = std::max(drawn_width_, visible);
  os_ << line << std::flush;
}

void ProgressPrinter::finish() {
  std::lock_guard lock(mutex_);
  if (terminal_ && drawn_width_ > 0) os_ << "\n" << std::flush;
  drawn_width_ = 0;
}

}  // namespace tunedreduce::tuner
