#include "tuner/driver.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/error.hpp"
#include "tuner/search_space.hpp"

namespace tunedreduce::tuner {

namespace {

class Progress {
 public:
  Progress(const DriverOptions& o, const TuneConfig& c, const std::vector<KeySpace>& keys)
      : o_(o), start_(now()) {
    for (const KeySpace& k : keys) {
      sizes_total_ += k.sizes.size();
      for (std::uint64_t n : k.sizes) total_weight_ += o.model.search_s(k.dtype, n, k.count_at(n), c);
    }
    keys_total_ = keys.size();
  }

  double now() const {
    if (o_.clock) return o_.clock();
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
  }
  double elapsed() const { return now() - start_; }

  ProgressEvent event(ProgressEvent::Kind kind, const KeySpace& k, std::uint64_t n) const {
    ProgressEvent e;
    e.kind = kind;
    e.device = o_.device_label;
    e.dtype = k.dtype;
    e.op = k.op;
    e.n = n;
    e.keys_done = keys_done_;
    e.keys_total = keys_total_;
    e.sizes_done = sizes_done_;
    e.sizes_total = sizes_total_;
    e.candidates = n ? k.count_at(n) : k.candidates.size();
    e.requests = requests_;
    e.elapsed_s = elapsed();
    e.fraction = total_weight_ > 0 ? std::min(1.0, done_weight_ / total_weight_) : 0;
    if (done_weight_ > 0 && e.elapsed_s > 0)
      e.eta_s = e.elapsed_s * std::max(0.0, total_weight_ - done_weight_) / done_weight_;
    return e;
  }

  void emit(const ProgressEvent& e) const {
    if (o_.progress) o_.progress(e);
  }

  std::size_t requests_ = 0, keys_done_ = 0, sizes_done_ = 0;
  double done_weight_ = 0;

 private:
  const DriverOptions& o_;
  double start_;
  std::size_t keys_total_ = 0, sizes_total_ = 0;
  double total_weight_ = 0;
};

}  // namespace

TuneOutcome run_tuning(const TuneConfig& config, Runner& runner, const DriverOptions& o) {
  const StrategyInfo* strategy = find_strategy(config.strategy.name);
  if (!strategy) throw Error("unknown strategy '" + config.strategy.name + "'", exit_code::usage);
  const std::vector<KeySpace> keys = enumerate_space(config.space);
  Progress progress(o, config, keys);
  TuneOutcome out;
  auto cancelled = [&] { return o.cancel && o.cancel->load(std::memory_order_relaxed); };

  for (const KeySpace& k : keys) {
    KeyOutcome key;
    key.dtype = k.dtype;
    key.op = k.op;
    key.l2_mode = config.measure.l2;
    key.candidates = k.candidates.size();
    spdlog::debug("tune {} {}: {} candidates at {} sizes", dtype_name(k.dtype), op_name(k.op),
                  k.candidates.size(), k.sizes.size());
    std::vector<SizeWinner> grid;
    for (std::uint64_t n : k.sizes) {
      if (cancelled()) break;
      SearchContext ctx{runner, config.measure, config.strategy, k.dtype, k.op, n, o.cancel,
                        o.clock, o.chunk, {}};
      ctx.on_measured = [&](std::size_t got) {
        progress.requests_ += got;
        progress.emit(progress.event(ProgressEvent::Kind::measured, k, n));
      };
      // Only the candidates that take n: a single_tile entry is not measured past its tile.
      const std::vector<std::string> candidates = k.candidates_at(n);
      if (candidates.empty())
        spdlog::warn("{} {} n={}: none of the {} selected candidates takes this many elements "
                     "(single_tile entries take one tile)",
                     dtype_name(k.dtype), op_name(k.op), n, k.candidates.size());
      SearchOutcome s = strategy->run(candidates, ctx);
      out.requests += s.requests;
      if (s.cancelled) break;
      SizeOutcome size;
      size.n = n;
      size.candidates = candidates.size();
      size.requests = s.requests;
      size.rounds = s.rounds;
      size.final_results = std::move(s.final_results);
      for (const Result& r : size.final_results) size.failed += !r.ok();
      const Selection sel = select_winner(size.final_results, o.tie);
      size.tied = sel.tied;
      if (sel.winner) {
        SizeWinner w;
        w.n = n;
        w.winner = size.final_results[*sel.winner];
        if (sel.runner_up) w.runner_up = size.final_results[*sel.runner_up];
        w.margin = sel.margin;
        size.winner = w;
        grid.push_back(std::move(w));
        spdlog::debug("  n={}: {} ({:.2f} us), {} tied, {} failed", n, size.winner->winner.kernel_id,
                      *size.winner->winner.median_us, size.tied, size.failed);
      } else {
        spdlog::warn("{} {} n={}: no candidate was ok ({} measured); this size has no winner",
                     dtype_name(k.dtype), op_name(k.op), n, size.final_results.size());
      }
      key.sizes.push_back(std::move(size));
      ++progress.sizes_done_;
      progress.done_weight_ += o.model.search_s(k.dtype, n, candidates.size(), config);
      ProgressEvent e = progress.event(ProgressEvent::Kind::size_done, k, n);
      e.size = &key.sizes.back();
      progress.emit(e);
    }
    const bool grid_done = key.sizes.size() == k.sizes.size();
    if (grid_done && !cancelled()) {
      auto on_measured = [&](std::size_t got) {
        progress.requests_ += got;
        progress.emit(progress.event(ProgressEvent::Kind::measured, k, 0));
      };
      key.bisect = bisect_intervals(grid, runner, config.bisect, o.cancel, o.tie, on_measured);
      out.requests += key.bisect.requests;
      key.complete = !key.bisect.cancelled;
    }
    out.keys.push_back(std::move(key));
    if (!out.keys.back().complete) {
      out.cancelled = true;
      break;
    }
    ++progress.keys_done_;
    ProgressEvent e = progress.event(ProgressEvent::Kind::key_done, k, 0);
    e.key = &out.keys.back();
    progress.emit(e);
  }
  if (cancelled()) out.cancelled = true;
  out.elapsed_s = progress.elapsed();
  return out;
}

}  // namespace tunedreduce::tuner
