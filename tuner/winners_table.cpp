#include "tuner/winners_table.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>
#include <vector>

namespace tunedreduce::tuner {

namespace {

std::string fixed(double v, int decimals) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(decimals) << v;
  return s.str();
}

void print_table(std::ostream& os, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<bool>& right_aligned) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const std::size_t pad = width[i] - r[i].size();
      if (i) line += "  ";
      if (right_aligned[i]) line += std::string(pad, ' ');
      line += r[i];
      if (!right_aligned[i] && i + 1 < r.size()) line += std::string(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
}

std::string format_margin(double m) {
  std::string s = fixed(m * 100, 1);
  s += "%";
  if (m >= 0) s.insert(s.begin(), '+');
  return s;
}

}  // namespace

std::string format_size(std::uint64_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) {
    int e = 0;
    while ((std::uint64_t{1} << e) != n) ++e;
    return "2^" + std::to_string(e);
  }
  return std::to_string(n);
}

std::optional<double> result_gbps(const Result& r) {
  if (r.gbps) return r.gbps;
  if (!r.ok()) return std::nullopt;
  return gbps_of(r.n * dtype_size(r.dtype), r.median_us);
}

void print_winners(std::ostream& os, const TuneOutcome& outcome, const std::string& device) {
  std::vector<std::vector<std::string>> rows = {
      {"dtype", "op", "n from", "n to", "winner", "us", "at n", "GB/s", "runner-up", "margin"}};
  std::size_t keys = 0;
  std::optional<L2Mode> mode;  // every key of a run has the run's
  for (const KeyOutcome& k : outcome.keys) {
    if (!k.complete) continue;
    ++keys;
    mode = k.l2_mode;
    if (k.bisect.intervals.empty())
      rows.push_back({dtype_name(k.dtype), op_name(k.op), "-", "-", "(no candidate was ok)", "", "",
                      "", "", ""});
    for (const IntervalWinner& w : k.bisect.intervals) {
      const auto gbps = result_gbps(w.winner);
      rows.push_back({dtype_name(k.dtype), op_name(k.op), std::to_string(w.n_lo),
                      std::to_string(w.n_hi), w.winner.kernel_id, fixed(*w.winner.median_us, 2),
                      format_size(w.winner.n), gbps ? fixed(*gbps, 1) : "-",
                      w.runner_up ? w.runner_up->kernel_id : "-",
                      w.margin ? format_margin(*w.margin) : "-"});
    }
  }
  if (!device.empty())
    os << "winners on " << device
       << (mode ? std::string(", ") + db::l2_mode_name(*mode) + " L2" : std::string()) << ":\n";
  if (keys == 0) {
    os << "no key finished: no winners\n";
    return;
  }
  print_table(os, rows, {false, false, true, true, false, true, true, true, false, true});
}

}  // namespace tunedreduce::tuner
