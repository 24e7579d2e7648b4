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
  std::string key = std::string(dtype_name(e.dtype)) + " " + op_name(e.op);
  if (e.layout) key += std::string(" ") + kseg::seg_layout_name(*e.layout);
  // Where: n of a grid size, L and S of a segmented grid point.
  const std::string at = !e.n ? std::string()
                         : e.segment_size > 0
                             ? fmt::format(" L={} S={}", format_size(e.segment_size),
                                           format_size(e.n / e.segment_size))
                             : " n=" + format_size(e.n);
  const std::string eta = e.eta_s ? "ETA " + format_duration(*e.eta_s) : "ETA ?";
  if (!terminal_) {
    if (e.kind == ProgressEvent::Kind::size_done && e.seg_point) {
      const SegPointOutcome& p = *e.seg_point;
      os_ << "tune: " << prefix << key << at << ": ";
      if (p.winner)
        os_ << p.winner->winner.kernel_id << " "
            << fmt::format("{:.2f}", *p.winner->winner.median_us) << " us (" << p.tied << " tied, "
            << p.failed << " not ok, " << p.requests << " measured)";
      else os_ << "no candidate was ok (" << p.failed << " not ok)";
      os_ << "  [size " << e.sizes_done << "/" << e.sizes_total << ", " << eta << "]\n";
      os_.flush();
      return;
    }
    if (e.kind == ProgressEvent::Kind::key_done && e.seg_key) {
      os_ << "tune: " << prefix << key << " done: " << e.seg_key->rectangles.rectangles.size()
          << " rectangles, " << e.seg_key->rectangles.crossovers.size() << " crossovers  [key "
          << e.keys_done << "/" << e.keys_total << "]\n";
      os_.flush();
      return;
    }
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
  std::string line =
      "\r" + prefix + "[" + std::string(filled, '#') + std::string(bar_width - filled, '.') + "] " +
      fmt::format("{:.0f}", e.fraction * 100) + "%  " + key +
      (e.n ? at : std::string(" bisecting")) + "  size " + std::to_string(e.sizes_done) + "/" +
      std::to_string(e.sizes_total) + "  key " + std::to_string(e.keys_done) + "/" +
      std::to_string(e.keys_total) + "  " + std::to_string(e.requests) + " measured  " + eta;
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
