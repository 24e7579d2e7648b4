#include "tuner/driver.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "common/error.hpp"
#include "tuner/search_space.hpp"

namespace tunedreduce::tuner {

namespace {

class Progress {
 public:
  Progress(const DriverOptions& o, const TuneConfig& c, const std::vector<KeySpace>& keys,
           const std::vector<SegKeySpace>& seg_keys)
      : o_(o), start_(now()) {
    for (const KeySpace& k : keys) {
      sizes_total_ += k.sizes.size();
      for (std::uint64_t n : k.sizes)
        total_weight_ += o.model.search_s(k.dtype, n, k.count_at(n), c);
    }
    for (const SegKeySpace& k : seg_keys) {
      sizes_total_ += k.points.size();
      for (const SegPoint& p : k.points)
        total_weight_ += o.model.search_s(k.dtype, p.total(), p.candidates.size(), c);
    }
    keys_total_ = keys.size() + seg_keys.size();
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
    e.candidates = n ? k.count_at(n) : k.candidates.size();
    fill(e);
    return e;
  }

  /// A segmented key's event, at grid point \p point (nullptr while bisecting).
  ProgressEvent event(ProgressEvent::Kind kind, const SegKeySpace& k, const SegPoint* point) const {
    ProgressEvent e;
    e.kind = kind;
    e.device = o_.device_label;
    e.dtype = k.dtype;
    e.op = k.op;
    e.layout = k.layout;
    e.n = point ? point->total() : 0;
    e.segment_size = point ? point->segment_size : 0;
    e.candidates = point ? point->candidates.size() : k.candidates.size();
    fill(e);
    return e;
  }

  void fill(ProgressEvent& e) const {
    e.keys_done = keys_done_;
    e.keys_total = keys_total_;
    e.sizes_done = sizes_done_;
    e.sizes_total = sizes_total_;
    e.requests = requests_;
    e.elapsed_s = elapsed();
    e.fraction = total_weight_ > 0 ? std::min(1.0, done_weight_ / total_weight_) : 0;
    if (done_weight_ > 0 && e.elapsed_s > 0)
      e.eta_s = e.elapsed_s * std::max(0.0, total_weight_ - done_weight_) / done_weight_;
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

/// The units of work and who does them: see run_tuning's comment in driver.hpp.
class Scheduler {
 public:
  Scheduler(const TuneConfig& config, const StrategyInfo& strategy, std::vector<KeySpace> keys,
            std::vector<SegKeySpace> seg_keys, const DriverOptions& o, std::size_t runners)
      : c_(config),
        strategy_(strategy),
        keys_(std::move(keys)),
        seg_keys_(std::move(seg_keys)),
        o_(o),
        progress_(o, c_, keys_, seg_keys_) {
    state_.resize(keys_.size());
    for (std::size_t k = 0; k < keys_.size(); ++k) {
      KeyState& s = state_[k];
      s.key.dtype = keys_[k].dtype;
      s.key.op = keys_[k].op;
      s.key.l2_mode = c_.measure.l2;
      s.key.candidates = keys_[k].candidates.size();
      const std::size_t sizes = keys_[k].sizes.size();
      s.sizes.resize(sizes);
      // pending.back() is handed out next: the grid in ascending order with one runner (the
      // sequence of the one-runner driver), the largest sizes first with several.
      for (std::size_t i = 0; i < sizes; ++i) s.pending.push_back(runners > 1 ? i : sizes - 1 - i);
    }
    seg_state_.resize(seg_keys_.size());
    for (std::size_t k = 0; k < seg_keys_.size(); ++k) {
      const SegKeySpace& space = seg_keys_[k];
      SegKeyState& s = seg_state_[k];
      s.key.dtype = space.dtype;
      s.key.op = space.op;
      s.key.layout = space.layout;
      s.key.l2_mode = c_.measure.l2;
      s.key.candidates = space.candidates.size();
      const std::size_t points = space.points.size();
      s.points.resize(points);
      // As the sizes above: the plan's order with one runner; with several the largest totals
      // first (stable: the plan's order among equals).
      std::vector<std::size_t> order(points);
      for (std::size_t i = 0; i < points; ++i) order[i] = i;
      if (runners > 1)
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
          return space.points[a].total() < space.points[b].total();
        });
      s.pending.assign(order.rbegin(), order.rend());
    }
  }

  /// One runner's thread: units until there are none, a cancellation or an error.
  void work(Runner& runner) {
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      const std::optional<Unit> u = next_unit();
      if (!u) {
        if (in_flight_ == 0) break;
        cv_.wait(lk);  // the units in flight may make a bisection ready, or end the run
        continue;
      }
      ++in_flight_;
      (u->segmented ? seg_state_[u->key].begun : state_[u->key].begun) = true;
      lk.unlock();
      try {
        if (u->segmented && u->size == bisect_unit) seg_rectangles_of(runner, u->key);
        else if (u->segmented) grid_point(runner, u->key, u->size);
        else if (u->size == bisect_unit) bisect(runner, u->key);
        else grid_size(runner, u->key, u->size);
      } catch (...) {
        lk.lock();
        if (!error_) error_ = std::current_exception();
        stop_ = true;
        --in_flight_;
        cv_.notify_all();
        break;
      }
      lk.lock();
      --in_flight_;
      cv_.notify_all();
    }
    cv_.notify_all();
  }

  TuneOutcome outcome() {
    if (error_) std::rethrow_exception(error_);
    TuneOutcome out;
    out.requests = requests_;
    for (std::size_t k = 0; k < keys_.size(); ++k) {
      KeyState& s = state_[k];
      if (!s.begun) continue;
      for (std::optional<SizeOutcome>& size : s.sizes)
        if (size) s.key.sizes.push_back(std::move(*size));
      out.cancelled |= !s.key.complete;
      out.keys.push_back(std::move(s.key));
    }
    for (SegKeyState& s : seg_state_) {
      if (!s.begun) continue;
      for (std::optional<SegPointOutcome>& p : s.points)
        if (p) s.key.points.push_back(std::move(*p));
      out.cancelled |= !s.key.complete;
      out.segmented.push_back(std::move(s.key));
    }
    if (cancelled()) out.cancelled = true;
    out.elapsed_s = progress_.elapsed();
    return out;
  }

 private:
  static constexpr std::size_t bisect_unit = static_cast<std::size_t>(-1);
  struct Unit {
    std::size_t key = 0;
    std::size_t size = 0;    // an index into the key's grid (points), or bisect_unit
    bool segmented = false;  // a segmented key's: a grid point, or its rectangles (bisect_unit)
  };
  struct KeyState {
    KeyOutcome key;
    std::vector<std::optional<SizeOutcome>> sizes;  // by grid index, once finished
    std::vector<std::size_t> pending;               // grid indices not handed out; back() next
    std::size_t finished = 0;                       // sizes finished
    bool begun = false, bisect_taken = false;
  };
  struct SegKeyState {
    SegKeyOutcome key;
    std::vector<std::optional<SegPointOutcome>> points;  // by grid index, once finished
    std::vector<std::size_t> pending;                    // back() next
    std::size_t finished = 0;
    bool begun = false, rectangles_taken = false;
  };

  bool cancelled() const { return o_.cancel && o_.cancel->load(std::memory_order_relaxed); }

  /// Under the lock. The first key (in the space's order, the segmented keys after the others)
  /// with work to hand out: its bisection (rectangles) once its grid is done, else its next size
  /// (grid point).
  std::optional<Unit> next_unit() {
    if (stop_ || cancelled()) return std::nullopt;
    for (std::size_t k = 0; k < keys_.size(); ++k) {
      KeyState& s = state_[k];
      if (s.bisect_taken) continue;
      if (s.finished == s.sizes.size()) {
        s.bisect_taken = true;
        return Unit{k, bisect_unit, false};
      }
      if (!s.pending.empty()) {
        const std::size_t i = s.pending.back();
        s.pending.pop_back();
        return Unit{k, i, false};
      }
    }
    for (std::size_t k = 0; k < seg_keys_.size(); ++k) {
      SegKeyState& s = seg_state_[k];
      if (s.rectangles_taken) continue;
      if (s.finished == s.points.size()) {
        s.rectangles_taken = true;
        return Unit{k, bisect_unit, true};
      }
      if (!s.pending.empty()) {
        const std::size_t i = s.pending.back();
        s.pending.pop_back();
        return Unit{k, i, true};
      }
    }
    return std::nullopt;
  }

  ProgressEvent event(ProgressEvent::Kind kind, std::size_t key, std::uint64_t n) const {
    return progress_.event(kind, keys_[key], n);
  }

  std::function<void(std::size_t)> on_measured(std::size_t key, std::uint64_t n) {
    return [this, key, n](std::size_t got) {
      std::lock_guard<std::mutex> lk(m_);
      progress_.requests_ += got;
      progress_.emit(event(ProgressEvent::Kind::measured, key, n));
    };
  }

  void grid_size(Runner& runner, std::size_t key, std::size_t index) {
    const KeySpace& k = keys_[key];
    const std::uint64_t n = k.sizes[index];
    SearchContext ctx{runner, c_.measure, c_.strategy, k.dtype,  k.op,
                      n,      o_.cancel,  o_.clock,    o_.chunk, {}};
    ctx.on_measured = on_measured(key, n);
    // Only the candidates that take n: a single_tile entry is not measured past its tile.
    const std::vector<std::string> candidates = k.candidates_at(n);
    if (candidates.empty())
      spdlog::warn(
          "{} {} n={}: none of the {} selected candidates takes this many elements "
          "(single_tile entries take one tile)",
          dtype_name(k.dtype), op_name(k.op), n, k.candidates.size());
    SearchOutcome s = strategy_.run(candidates, ctx);
    std::lock_guard<std::mutex> lk(m_);
    requests_ += s.requests;
    if (s.cancelled) {
      stop_ = true;
      return;
    }
    SizeOutcome size;
    size.n = n;
    size.candidates = candidates.size();
    size.requests = s.requests;
    size.rounds = s.rounds;
    size.final_results = std::move(s.final_results);
    for (const Result& r : size.final_results) size.failed += !r.ok();
    const Selection sel = select_winner(size.final_results, o_.tie);
    size.tied = sel.tied;
    if (sel.winner) {
      SizeWinner w;
      w.n = n;
      w.winner = size.final_results[*sel.winner];
      if (sel.runner_up) w.runner_up = size.final_results[*sel.runner_up];
      w.margin = sel.margin;
      size.winner = std::move(w);
      spdlog::debug("  n={}: {} ({:.2f} us), {} tied, {} failed", n, size.winner->winner.kernel_id,
                    *size.winner->winner.median_us, size.tied, size.failed);
    } else {
      spdlog::warn("{} {} n={}: no candidate was ok ({} measured); this size has no winner",
                   dtype_name(k.dtype), op_name(k.op), n, size.final_results.size());
    }
    KeyState& st = state_[key];
    st.sizes[index] = std::move(size);
    ++st.finished;
    ++progress_.sizes_done_;
    progress_.done_weight_ += o_.model.search_s(k.dtype, n, candidates.size(), c_);
    ProgressEvent e = event(ProgressEvent::Kind::size_done, key, n);
    e.size = &*st.sizes[index];
    progress_.emit(e);
  }

  void bisect(Runner& runner, std::size_t key) {
    KeyState& st = state_[key];
    std::vector<SizeWinner> grid;
    {
      std::lock_guard<std::mutex> lk(m_);
      for (const std::optional<SizeOutcome>& s : st.sizes)
        if (s->winner) grid.push_back(*s->winner);
    }
    BisectOutcome b =
        bisect_intervals(grid, runner, c_.bisect, o_.cancel, o_.tie, on_measured(key, 0));
    std::lock_guard<std::mutex> lk(m_);
    requests_ += b.requests;
    st.key.complete = !b.cancelled;
    st.key.bisect = std::move(b);
    if (!st.key.complete) {
      stop_ = true;
      return;
    }
    ++progress_.keys_done_;
    ProgressEvent e = event(ProgressEvent::Kind::key_done, key, 0);
    e.key = &st.key;
    progress_.emit(e);
  }

  std::function<void(std::size_t)> on_seg_measured(std::size_t key, const SegPoint* point) {
    return [this, key, point](std::size_t got) {
      std::lock_guard<std::mutex> lk(m_);
      progress_.requests_ += got;
      progress_.emit(progress_.event(ProgressEvent::Kind::measured, seg_keys_[key], point));
    };
  }

  // One grid point of a segmented key: the strategy over the candidates that can run it, at
  // n = size x count with the segment size on every request.
  void grid_point(Runner& runner, std::size_t key, std::size_t index) {
    const SegKeySpace& k = seg_keys_[key];
    const SegPoint& pt = k.points[index];
    SearchContext ctx{runner,     c_.measure, c_.strategy, k.dtype,  k.op,
                      pt.total(), o_.cancel,  o_.clock,    o_.chunk, {}};
    ctx.segment_size = pt.segment_size;
    ctx.on_measured = on_seg_measured(key, &pt);
    SearchOutcome s = strategy_.run(pt.candidates, ctx);
    std::lock_guard<std::mutex> lk(m_);
    requests_ += s.requests;
    if (s.cancelled) {
      stop_ = true;
      return;
    }
    SegPointOutcome out;
    out.segment_size = pt.segment_size;
    out.count = pt.count;
    out.candidates = pt.candidates.size();
    out.requests = s.requests;
    out.rounds = s.rounds;
    out.final_results = std::move(s.final_results);
    for (const Result& r : out.final_results) out.failed += !r.ok();
    const Selection sel = select_winner(out.final_results, o_.tie);
    out.tied = sel.tied;
    if (sel.winner) {
      SegPointWinner w;
      w.segment_size = pt.segment_size;
      w.count = pt.count;
      w.winner = out.final_results[*sel.winner];
      if (sel.runner_up) w.runner_up = out.final_results[*sel.runner_up];
      w.margin = sel.margin;
      out.winner = std::move(w);
      spdlog::debug("  {} L={} S={}: {} ({:.2f} us), {} tied, {} failed", seg_key_label(k),
                    pt.segment_size, pt.count, out.winner->winner.kernel_id,
                    *out.winner->winner.median_us, out.tied, out.failed);
    } else {
      spdlog::warn(
          "{} segment size {} x {} segments: no candidate was ok ({} measured); this "
          "point has no winner",
          seg_key_label(k), pt.segment_size, pt.count, out.final_results.size());
    }
    SegKeyState& st = seg_state_[key];
    st.points[index] = std::move(out);
    ++st.finished;
    ++progress_.sizes_done_;
    progress_.done_weight_ += o_.model.search_s(k.dtype, pt.total(), pt.candidates.size(), c_);
    ProgressEvent e = progress_.event(ProgressEvent::Kind::size_done, k, &pt);
    e.seg_point = &*st.points[index];
    progress_.emit(e);
  }

  // A segmented key whose grid is done: its rectangles, bisecting along the sizes.
  void seg_rectangles_of(Runner& runner, std::size_t key) {
    SegKeyState& st = seg_state_[key];
    std::vector<SegPointWinner> grid;
    {
      std::lock_guard<std::mutex> lk(m_);
      for (const std::optional<SegPointOutcome>& p : st.points)
        if (p->winner) grid.push_back(*p->winner);
    }
    SegRectangles r = seg_rectangles(grid, runner, c_.bisect, o_.cancel, o_.tie,
                                     on_seg_measured(key, nullptr), true,
                                     seg_keys_[key].candidates);
    std::lock_guard<std::mutex> lk(m_);
    requests_ += r.requests;
    st.key.complete = !r.cancelled;
    st.key.rectangles = std::move(r);
    if (!st.key.complete) {
      stop_ = true;
      return;
    }
    ++progress_.keys_done_;
    ProgressEvent e = progress_.event(ProgressEvent::Kind::key_done, seg_keys_[key], nullptr);
    e.seg_key = &st.key;
    progress_.emit(e);
  }

  const TuneConfig& c_;
  const StrategyInfo& strategy_;
  const std::vector<KeySpace> keys_;
  const std::vector<SegKeySpace> seg_keys_;
  const DriverOptions& o_;
  Progress progress_;
  std::vector<KeyState> state_;
  std::vector<SegKeyState> seg_state_;
  std::mutex m_;
  std::condition_variable cv_;
  std::size_t in_flight_ = 0;
  std::size_t requests_ = 0;
  bool stop_ = false;  // a unit was cancelled or a runner failed: hand out nothing more
  std::exception_ptr error_;
};

}  // namespace

TuneOutcome run_tuning(const TuneConfig& config, Runner& runner, const DriverOptions& o) {
  Runner* const one[] = {&runner};
  return run_tuning(config, std::span<Runner* const>(one), o);
}

TuneOutcome run_tuning(const TuneConfig& config, std::span<Runner* const> runners,
                       const DriverOptions& o) {
  const StrategyInfo* strategy = find_strategy(config.strategy.name);
  if (!strategy) throw Error("unknown strategy '" + config.strategy.name + "'", exit_code::usage);
  if (runners.empty()) throw Error("run_tuning: no runner");
  std::vector<KeySpace> keys = enumerate_space(config.space);
  for (const KeySpace& k : keys)
    spdlog::debug("tune {} {}: {} candidates at {} sizes", dtype_name(k.dtype), op_name(k.op),
                  k.candidates.size(), k.sizes.size());
  std::vector<SegKeySpace> seg_keys = enumerate_segmented(config.segmented);
  for (const SegKeySpace& k : seg_keys)
    spdlog::debug("tune {}: {} candidates at {} grid points", seg_key_label(k), k.candidates.size(),
                  k.points.size());
  Scheduler scheduler(config, *strategy, std::move(keys), std::move(seg_keys), o, runners.size());
  if (runners.size() == 1) {
    scheduler.work(*runners[0]);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(runners.size());
    for (Runner* r : runners) threads.emplace_back([&scheduler, r] { scheduler.work(*r); });
    for (std::thread& t : threads) t.join();
  }
  return scheduler.outcome();
}

}  // namespace tunedreduce::tuner
