#include "tuner/selection.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "kernels/registry.hpp"

namespace tunedreduce::tuner {

double relative_spread(const Result& r) {
  if (!r.ok() || !r.p10_us || !r.p90_us || *r.median_us <= 0) return 0;
  return std::max(0.0, (*r.p90_us - *r.p10_us) / *r.median_us);
}

double relative_median_error(const Result& r) {
  return r.ok() ? tunedreduce::relative_median_error(r) : 0;
}

bool within_noise(const Result& a, const Result& b, const TieRule& rule) {
  if (!a.ok() || !b.ok()) return false;
  const double ma = *a.median_us, mb = *b.median_us;
  const double lo = std::min(ma, mb), hi = std::max(ma, mb);
  if (lo <= 0) return hi <= 0;
  return (hi - lo) / lo < noise_band(a, b, rule.min_relative, rule.max_relative);
}

bool preferred_in_tie(std::string_view a, std::string_view b, bool one_launch_counts) {
  // Two segmented entries (kernels/segmented/): one kernel before the split family's two, by the
  // rule of two_pass above, then the id.
  if (a.starts_with("seg.") && b.starts_with("seg.")) {
    const bool two_a = a.starts_with("seg.split."), two_b = b.starts_with("seg.split.");
    if (one_launch_counts && two_a != two_b) return two_b;
    return a < b;
  }
  const auto pa = kernels::parse_id(a), pb = kernels::parse_id(b);
  if (pa && pb) {
    // One launch (single_pass, packed) before two.
    const bool sa = pa->finish != kernels::Finish::two_pass;
    const bool sb = pb->finish != kernels::Finish::two_pass;
    if (one_launch_counts && sa != sb) return sa;
    // Where a second launch is inside the noise: one tile per block before a persistent grid.
    const bool ga = kernels::has_persistent_grid(pa->family);
    const bool gb = kernels::has_persistent_grid(pb->family);
    if (!one_launch_counts && ga != gb) return gb;
    // Between two exact entries the rule has no preference left: the smaller block × unroll
    // (fewer loads in flight) is no proxy for their speed (docs/performance.md 3.19: b512 u2 chosen
    // over u4 0.6 % faster in a tie at f64 2^24 ran 1.5-2 % slower in the bench), so select_winner
    // takes the faster median.
    if (pa->op == Op::exact_sum && pb->op == Op::exact_sum) return false;
    const long wa = static_cast<long>(pa->block) * pa->unroll;
    const long wb = static_cast<long>(pb->block) * pb->unroll;
    if (wa != wb) return wa < wb;
  } else if (pa.has_value() != pb.has_value()) {
    return pa.has_value();
  }
  return a < b;
}

std::optional<bool> float_exact_holds_wide_rounds(std::string_view id) {
  const auto p = kernels::parse_id(id);
  if (!p || p->dtype != DType::f32 || p->op != Op::exact_sum) return std::nullopt;
  return p->family == kernels::Family::exact_wide;
}

bool faster(const Result& a, const Result& b) {
  if (a.ok() != b.ok()) return a.ok();
  if (!a.ok()) return false;
  if (*a.median_us != *b.median_us) return *a.median_us < *b.median_us;
  return a.kernel_id < b.kernel_id;
}

Selection select_winner(std::span<const Result> results, const TieRule& rule) {
  Selection s;
  std::optional<std::size_t> fastest;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok()) continue;
    ++s.ok;
    if (!fastest || faster(results[i], results[*fastest])) fastest = i;
  }
  if (!fastest) return s;
  std::size_t winner = *fastest;
  const bool one_launch_counts = *results[*fastest].median_us * rule.max_relative <
                                 second_launch_us;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok() || !within_noise(results[i], results[*fastest], rule)) continue;
    ++s.tied;
    if (i == winner) continue;
    const bool i_first =
        preferred_in_tie(results[i].kernel_id, results[winner].kernel_id, one_launch_counts);
    // Neither preferred (two exact entries of one class): the faster median.
    const bool neither = !i_first && !preferred_in_tie(results[winner].kernel_id,
                                                       results[i].kernel_id, one_launch_counts);
    if (i_first || (neither && faster(results[i], results[winner]))) winner = i;
  }
  if (s.tied == 0) s.tied = 1;  // the fastest itself (a zero median is tied with nothing)
  // Floats whose rounds span more binades than one double holds (TieRule::wide_rounds_relative).
  if (float_exact_holds_wide_rounds(results[winner].kernel_id) == false) {
    std::optional<std::size_t> wide;
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (results[i].ok() && float_exact_holds_wide_rounds(results[i].kernel_id) == true &&
          (!wide || faster(results[i], results[*wide])))
        wide = i;
    }
    if (wide &&
        *results[*wide].median_us <= *results[*fastest].median_us * (1 + rule.wide_rounds_relative))
      winner = *wide;
  }
  s.winner = winner;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i == winner || !results[i].ok()) continue;
    if (!s.runner_up || faster(results[i], results[*s.runner_up])) s.runner_up = i;
  }
  if (s.runner_up && *results[winner].median_us > 0)
    s.margin = *results[*s.runner_up].median_us / *results[winner].median_us - 1;
  return s;
}

std::vector<std::size_t> rank_results(std::span<const Result> results, const TieRule& rule) {
  const Selection s = select_winner(results, rule);
  std::vector<std::size_t> out;
  if (s.winner) out.push_back(*s.winner);
  if (s.runner_up) out.push_back(*s.runner_up);
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].ok() && i != s.winner && i != s.runner_up) rest.push_back(i);
  std::stable_sort(rest.begin(), rest.end(),
                   [&](std::size_t a, std::size_t b) { return faster(results[a], results[b]); });
  out.insert(out.end(), rest.begin(), rest.end());
  for (std::size_t i = 0; i < results.size(); ++i)
    if (!results[i].ok()) out.push_back(i);
  return out;
}

}  // namespace tunedreduce::tuner
