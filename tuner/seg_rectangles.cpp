#include "tuner/seg_rectangles.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/error.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tuner/bisect.hpp"
#include "tuner/segmented_space.hpp"

namespace tunedreduce::tuner {

namespace {

bool cancelled(const std::atomic<bool>* c) { return c && c->load(std::memory_order_relaxed); }

double margin_or_inf(const std::optional<double>& m) {
  return m ? *m : std::numeric_limits<double>::infinity();
}

/// Whether the entry \p id runs (L, S); an id that is not a segmented entry's runs anything.
bool id_takes(std::string_view id, std::uint64_t segment_size, std::uint64_t count) {
  const auto p = kseg::parse_seg_id(id);
  return !p || seg_takes(*p, segment_size, count);
}

/// A rectangle of one grid point, or of several merged: its evidence is the point whose winner's
/// lead was smallest.
SegRectangle rectangle_of(const SegPointWinner& w, std::uint64_t size_lo, std::uint64_t size_hi,
                          std::uint64_t count_lo, std::uint64_t count_hi) {
  SegRectangle r;
  r.size_lo = size_lo;
  r.size_hi = size_hi;
  r.count_lo = count_lo;
  r.count_hi = count_hi;
  r.winner = w.winner;
  r.runner_up = w.runner_up;
  r.margin = w.margin;
  r.points = 1;
  return r;
}

void absorb(SegRectangle& into, const SegRectangle& other) {
  into.points += other.points;
  if (margin_or_inf(other.margin) < margin_or_inf(into.margin)) {
    into.winner = other.winner;
    into.runner_up = other.runner_up;
    into.margin = other.margin;
  }
}

/// Every answer is to its request (kernel, n, segment size \p m), in order; else Error.
void expect_answers(std::span<const Request> req, std::span<const Result> got, std::uint64_t m) {
  for (std::size_t k = 0; k < got.size() && k < req.size(); ++k)
    if (got[k].kernel_id != req[k].kernel_id || got[k].n != req[k].n ||
        got[k].segment_size != req[k].segment_size)
      throw Error(
          fmt::format("the runner answered '{}' at n={} for a request of '{}' at n={} "
                      "segment_size={}",
                      got[k].kernel_id, got[k].n, req[k].kernel_id, req[k].n, m));
}

/// The winner of results \p got measured at (\p size, \p count) that \p s selected (one).
SegPointWinner point_winner(const std::vector<Result>& got, const Selection& s, std::uint64_t size,
                            std::uint64_t count) {
  SegPointWinner w;
  w.segment_size = size;
  w.count = count;
  w.winner = got[*s.winner];
  if (s.runner_up) w.runner_up = got[*s.runner_up];
  w.margin = s.margin;
  return w;
}

/// A bisection between from_id (winning at lo) and to_id (winning at hi) along one axis of the
/// plane: \p at gives the (segment size, count) of a midpoint. The results measured last on
/// each side (the winner there, the other as its runner-up), where a probe moved that side.
struct Bracket {
  std::uint64_t lo = 0, hi = 0;
  int probes = 0;
  bool undecided = false;
  std::optional<SegPointWinner> at_lo, at_hi;
};

std::optional<Bracket> bisect_pair(
    const std::string& from_id, const std::string& to_id, std::uint64_t lo, std::uint64_t hi,
    const std::function<std::pair<std::uint64_t, std::uint64_t>(std::uint64_t)>& at, Runner& runner,
    const BisectConfig& config, const std::atomic<bool>* cancel, const TieRule& rule,
    const std::function<void(std::size_t)>& on_measured, SegRectangles& out) {
  Bracket b;
  b.lo = lo;
  b.hi = hi;
  if (!config.enabled) return b;
  for (int depth = 0; depth < config.max_depth && b.hi - b.lo > 1 &&
                      static_cast<double>(b.hi) / static_cast<double>(b.lo) > 1 + config.precision;
       ++depth) {
    if (cancelled(cancel)) return std::nullopt;
    const std::uint64_t m = geometric_midpoint(b.lo, b.hi);
    const auto [size, count] = at(m);
    const bool a_takes = id_takes(from_id, size, count);
    const bool b_takes = id_takes(to_id, size, count);
    if (!a_takes && !b_takes) {
      b.undecided = true;
      break;
    }
    // A point only one of them runs is that one's, unmeasured.
    if (!a_takes || !b_takes) {
      (a_takes ? b.lo : b.hi) = m;
      continue;
    }
    const std::optional<std::vector<Result>> answers =
        measure_pair(runner, from_id, to_id, size * count, size, cancel, on_measured, out.requests,
                     out.probes);
    if (!answers) return std::nullopt;
    const std::vector<Result>& got = *answers;
    Request req[2];
    req[0].kernel_id = from_id;
    req[1].kernel_id = to_id;
    req[0].n = req[1].n = size * count;
    req[0].segment_size = req[1].segment_size = size;
    expect_answers(req, got, size);
    ++b.probes;
    const Selection sel = select_winner(got, rule);
    if (!sel.winner) {
      b.undecided = true;
      break;
    }
    SegPointWinner w = point_winner(got, sel, size, count);
    if (*sel.winner == 0) {
      b.lo = m;
      b.at_lo = std::move(w);
    } else {
      b.hi = m;
      b.at_hi = std::move(w);
    }
  }
  return b;
}

/// The first size of B's cells, after bisecting between A (at grid size lo) and B (at hi) in the
/// column of \p count. Returns nothing when cancelled.
std::optional<std::uint64_t> crossover(const SegPointWinner& a, const SegPointWinner& b,
                                       Runner& runner, const BisectConfig& config,
                                       const std::atomic<bool>* cancel, const TieRule& rule,
                                       const std::function<void(std::size_t)>& on_measured,
                                       SegRectangles& out) {
  const std::uint64_t count = a.count;
  SegCrossover x;
  x.count = count;
  x.from_id = a.winner.kernel_id;
  x.to_id = b.winner.kernel_id;
  x.grid_lo = a.segment_size;
  x.grid_hi = b.segment_size;
  const std::optional<Bracket> r = bisect_pair(
      x.from_id, x.to_id, a.segment_size, b.segment_size,
      [count](std::uint64_t m) {
        return std::pair{m, count};
      },
      runner, config, cancel, rule, on_measured, out);
  if (!r) return std::nullopt;
  x.lo = r->lo;
  x.hi = r->hi;
  x.probes = r->probes;
  x.undecided = r->undecided;
  x.boundary = geometric_midpoint(x.lo, x.hi);
  out.crossovers.push_back(x);
  return x.boundary;
}

/// The point between neighbouring grid points \p a and \p b of one column (different winners)
/// where only one of their winners runs the geometric midpoint: every candidate that runs it,
/// measured once there, and their winner. Nothing where both or neither run it, where fewer than
/// two candidates do, or where none is ok.
std::optional<SegPointWinner> refinement(const SegPointWinner& a, const SegPointWinner& b,
                                         std::span<const std::string> candidates, Runner& runner,
                                         const TieRule& rule,
                                         const std::function<void(std::size_t)>& on_measured,
                                         SegRectangles& out) {
  const std::uint64_t count = a.count;
  const std::uint64_t m = geometric_midpoint(a.segment_size, b.segment_size);
  if (m <= a.segment_size || m >= b.segment_size) return std::nullopt;
  if (id_takes(a.winner.kernel_id, m, count) == id_takes(b.winner.kernel_id, m, count))
    return std::nullopt;
  std::vector<Request> req;
  for (const std::string& id : candidates) {
    if (!id_takes(id, m, count)) continue;
    Request q;
    q.kernel_id = id;
    q.n = m * count;
    q.segment_size = m;
    req.push_back(std::move(q));
  }
  if (req.size() < 2) return std::nullopt;
  std::vector<Result> got = runner.measure(req);
  out.requests += req.size();
  if (on_measured) on_measured(got.size());
  if (got.size() != req.size()) return std::nullopt;  // cancelled: the caller checks
  expect_answers(req, got, m);
  out.probes.insert(out.probes.end(), got.begin(), got.end());
  const Selection s = select_winner(got, rule);
  if (!s.winner) return std::nullopt;
  return point_winner(got, s, m, count);
}

/// A cell of a column: the sizes lo..hi, run by the winner of point \p point; with \p evidence,
/// by that winner's kernel on the evidence of a result measured inside the cell instead.
struct Cell {
  std::uint64_t lo = 0, hi = 0;
  std::size_t point = 0;
  std::optional<Result> evidence;
  /// Only sizes of gaps: no point of the column and no measurement inside (rows of 5-7 between
  /// two runs of a tile), the evidence the neighbour's it went to.
  bool gap = false;
};

/// Sizes above this are run by every family or by none of them alike (the tile family takes rows
/// of at most 8 elements): a size range past it is decided by its first size.
constexpr std::uint64_t scan_limit = 4096;

/// Whether \p id runs every size of lo..hi at \p count.
bool id_takes_all(std::string_view id, std::uint64_t lo, std::uint64_t hi, std::uint64_t count) {
  for (std::uint64_t z = lo; z <= std::min(hi, scan_limit); ++z)
    if (!id_takes(id, z, count)) return false;
  return hi <= scan_limit || id_takes(id, std::max(lo, scan_limit + 1), count);
}

/// One column's cells, for \p pts ascending in size, point r nominally taking the sizes from
/// starts[r] to the one before starts[r + 1]. Within that range the run of sizes its winner takes
/// around its own size is its cell (the tile family takes rows that divide a 16-byte vector: 1,
/// 2, 4 and 8 elements for 2-byte types, not the sizes between); a run above it is a cell too
/// where \p probes (the crossovers' midpoints) has an ok result of that kernel inside it at the
/// column's count, its evidence (bf16 rows of 8 between a tile at 4 and a thread at 16, where the
/// bisection measured the tile faster); every other size of the range is a gap. A gap goes to
/// the cell below it where that one's winner takes all of it, else to the cell above, else to
/// the next point's winner, else the one before's; else to no cell. Ascending, never overlapping.
std::vector<Cell> column_cells(const std::vector<const SegPointWinner*>& pts,
                               const std::vector<std::uint64_t>& starts,
                               std::span<const Result> probes) {
  struct Piece {
    std::uint64_t lo, hi;
    std::optional<std::size_t> point;  // none: a gap
    std::size_t range;                 // the point whose range it is in
    std::optional<Result> evidence;
    bool gap = false;
  };
  std::vector<Piece> pieces;
  const std::size_t n = pts.size();
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint64_t a = starts[r], b = r + 1 < n ? starts[r + 1] - 1 : max_segment_size;
    if (a > b) continue;
    const std::string& id = pts[r]->winner.kernel_id;
    const std::uint64_t count = pts[r]->count, own = pts[r]->segment_size;
    // The runs of sizes the winner takes and the gaps between, in order.
    std::vector<Piece> runs;
    auto push = [&](std::uint64_t lo, std::uint64_t hi, bool takes) {
      const std::optional<std::size_t> owner = takes ? std::optional<std::size_t>(r) : std::nullopt;
      if (!runs.empty() && runs.back().point == owner && runs.back().hi + 1 == lo)
        runs.back().hi = hi;
      else runs.push_back({lo, hi, owner, r, std::nullopt});
    };
    std::uint64_t z = a;
    for (; z <= b && z <= scan_limit; ++z) push(z, z, id_takes(id, z, count));
    if (z <= b) push(z, b, id_takes(id, z, count));
    for (Piece& q : runs) {
      if (!q.point || (q.lo <= own && own <= q.hi)) continue;
      const Result* found = nullptr;
      if (q.lo > own)
        for (const Result& x : probes)
          if (x.ok() && x.kernel_id == id && x.segment_size && q.lo <= *x.segment_size &&
              *x.segment_size <= q.hi && x.n == *x.segment_size * count)
            found = &x;
      if (found) q.evidence = *found;
      else q.point.reset();
    }
    for (Piece& q : runs) {
      const bool merges = !pieces.empty() && !q.evidence && !pieces.back().evidence &&
                          pieces.back().point == q.point && pieces.back().range == r &&
                          pieces.back().hi + 1 == q.lo;
      if (merges) pieces.back().hi = q.hi;
      else pieces.push_back(std::move(q));
    }
  }
  // The gaps: the cell below grows up into a gap as far as its winner takes, then the cell
  // above down; what is left goes to the next point's winner, else the one before's.
  std::vector<Piece> assigned;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    Piece g = pieces[k];
    if (g.point) {
      assigned.push_back(std::move(g));
      continue;
    }
    g.gap = true;
    auto takes = [&](std::optional<std::size_t> point, std::uint64_t lo, std::uint64_t hi) {
      return point && lo <= hi &&
             id_takes_all(pts[*point]->winner.kernel_id, lo, hi, pts[*point]->count);
    };
    const std::optional<std::size_t> below =
        k > 0 && pieces[k - 1].hi + 1 == g.lo ? pieces[k - 1].point : std::nullopt;
    const std::optional<std::size_t> above =
        k + 1 < pieces.size() && g.hi + 1 == pieces[k + 1].lo ? pieces[k + 1].point : std::nullopt;
    std::uint64_t lo = g.lo, hi = g.hi;
    if (takes(below, lo, hi)) {
      lo = hi + 1;
    } else if (below) {
      while (lo <= std::min(hi, scan_limit) && takes(below, lo, lo)) ++lo;
    }
    if (lo > g.lo) assigned.push_back({g.lo, lo - 1, below, g.range, std::nullopt, true});
    std::uint64_t top = hi;
    if (lo <= hi) {
      if (takes(above, lo, hi)) top = lo - 1;
      else if (above && hi <= scan_limit)
        while (top >= lo && takes(above, top, top)) --top;
    }
    if (lo <= top) {
      Piece rest{lo, top, std::nullopt, g.range, std::nullopt, true};
      const std::optional<std::size_t> next =
          g.range + 1 < n ? std::optional<std::size_t>(g.range + 1) : std::nullopt;
      const std::optional<std::size_t> before =
          g.range > 0 ? std::optional<std::size_t>(g.range - 1) : std::nullopt;
      for (const auto& who : {next, before})
        if (takes(who, lo, top)) {
          rest.point = who;
          break;
        }
      assigned.push_back(std::move(rest));
    }
    if (top < hi) assigned.push_back({top + 1, hi, above, g.range, std::nullopt, true});
  }
  // Adjacent pieces of one winner make one cell: on the evidence of its point where a piece is
  // the point's own run, else of the measurement one of them has.
  std::vector<Cell> cells;
  for (Piece& q : assigned) {
    if (!q.point) continue;
    const bool own = !q.gap && !q.evidence;
    if (!cells.empty() && cells.back().point == *q.point && cells.back().hi + 1 == q.lo &&
        !(cells.back().evidence && q.evidence)) {
      Cell& c = cells.back();
      const bool c_own = !c.gap && !c.evidence;
      c.hi = q.hi;
      if (c_own || own) c.evidence.reset();
      else if (q.evidence) c.evidence = std::move(q.evidence);
      c.gap = c.gap && q.gap;
    } else {
      cells.push_back({q.lo, q.hi, *q.point, std::move(q.evidence), q.gap});
    }
  }
  return cells;
}

/// Whether a result was measured inside \p r.
bool inside(const SegRectangle& r, const Result& x) {
  return x.segment_size && *x.segment_size > 0 &&
         r.contains(*x.segment_size, x.n / *x.segment_size);
}

/// A column's points of \p kernel with a size in lo..hi.
std::vector<const SegPointWinner*> points_of(const std::vector<const SegPointWinner*>& pts,
                                             const std::string& kernel, std::uint64_t lo,
                                             std::uint64_t hi) {
  std::vector<const SegPointWinner*> out;
  for (const SegPointWinner* p : pts)
    if (p->winner.kernel_id == kernel && lo <= p->segment_size && p->segment_size <= hi)
      out.push_back(p);
  return out;
}

/// The sizes lo..hi of a column's rectangle whose count bound moves to \p bound (the first count
/// of the column above), on the evidence of \p evidence.
struct CountCut {
  std::uint64_t lo, hi, bound;
  SegPointWinner evidence;
};

/// Cuts rectangle \p r at the size ranges of \p cuts (within its sizes, ascending, disjoint):
/// each range a piece whose count_hi (\p upper: count_lo) is its bound, the rest pieces as
/// before. A piece's evidence is its cut's, else r's where that lies inside, else the point of
/// \p pts of r's kernel inside with the smallest lead; else r's, and no point inside (0).
void cut_rectangle(const SegRectangle& r, const std::vector<CountCut>& cuts, bool upper,
                   const std::vector<const SegPointWinner*>& pts, std::vector<SegRectangle>& into) {
  auto piece = [&](std::uint64_t lo, std::uint64_t hi, const CountCut* cut) {
    SegRectangle q = r;
    q.size_lo = lo;
    q.size_hi = hi;
    if (cut) (upper ? q.count_lo : q.count_hi) = upper ? cut->bound : cut->bound - 1;
    const std::vector<const SegPointWinner*> in = points_of(pts, r.winner.kernel_id, lo, hi);
    q.points = in.size();
    if (cut) {
      q.winner = cut->evidence.winner;
      q.runner_up = cut->evidence.runner_up;
      q.margin = cut->evidence.margin;
      q.points = std::max<std::size_t>(q.points, 1);
    } else if (!inside(q, q.winner)) {
      const SegPointWinner* best = nullptr;
      for (const SegPointWinner* p : in)
        if (!best || margin_or_inf(p->margin) < margin_or_inf(best->margin)) best = p;
      if (best) {
        q.winner = best->winner;
        q.runner_up = best->runner_up;
        q.margin = best->margin;
      }
    }
    into.push_back(std::move(q));
  };
  std::uint64_t at = r.size_lo;
  for (const CountCut& c : cuts) {
    if (c.lo > at) piece(at, c.lo - 1, nullptr);
    piece(c.lo, c.hi, &c);
    at = c.hi + 1;
  }
  if (at <= r.size_hi) piece(at, r.size_hi, nullptr);
}

/// Along the counts between two neighbouring columns: \p below (count S), whose rectangles that
/// end just under \p above_count_lo are cut, and \p above (count S'). Wherever a rectangle of
/// each meets over a range of sizes with different kernels A and B, and a size of that range was
/// measured in both columns with those winners, the count where A gives way to B is bisected at
/// that size (between S and S'; several such sizes share the range at their geometric
/// midpoints), and the boundary over that range becomes it. Returns false when cancelled.
bool bisect_counts(std::vector<SegRectangle>& below, std::vector<SegRectangle>& above,
                   std::uint64_t above_count_lo,
                   const std::vector<const SegPointWinner*>& below_pts,
                   const std::vector<const SegPointWinner*>& above_pts, Runner& runner,
                   const BisectConfig& config, const std::atomic<bool>* cancel, const TieRule& rule,
                   const std::function<void(std::size_t)>& on_measured, SegRectangles& out) {
  std::map<std::size_t, std::vector<CountCut>> below_cuts, above_cuts;  // by rectangle
  for (std::size_t i = 0; i < below.size(); ++i) {
    const SegRectangle& l = below[i];
    if (l.count_hi + 1 != above_count_lo) continue;
    for (std::size_t k = 0; k < above.size(); ++k) {
      const SegRectangle& u = above[k];
      const std::uint64_t lo = std::max(l.size_lo, u.size_lo), hi = std::min(l.size_hi, u.size_hi);
      if (lo > hi || l.winner.kernel_id == u.winner.kernel_id) continue;
      // The sizes measured in both columns with these winners.
      std::vector<std::pair<const SegPointWinner*, const SegPointWinner*>> both;
      for (const SegPointWinner* a : points_of(below_pts, l.winner.kernel_id, lo, hi))
        for (const SegPointWinner* b : points_of(above_pts, u.winner.kernel_id, lo, hi))
          if (a->segment_size == b->segment_size) both.emplace_back(a, b);
      for (std::size_t t = 0; t < both.size(); ++t) {
        const auto [a, b] = both[t];
        const std::uint64_t size = a->segment_size;
        SegCrossover x;
        x.along_counts = true;
        x.segment_size = size;
        x.from_id = a->winner.kernel_id;
        x.to_id = b->winner.kernel_id;
        x.grid_lo = a->count;
        x.grid_hi = b->count;
        const std::optional<Bracket> r = bisect_pair(
            x.from_id, x.to_id, a->count, b->count,
            [size](std::uint64_t m) {
              return std::pair{size, m};
            },
            runner, config, cancel, rule, on_measured, out);
        if (!r) return false;
        x.lo = r->lo;
        x.hi = r->hi;
        x.probes = r->probes;
        x.undecided = r->undecided;
        x.boundary = geometric_midpoint(x.lo, x.hi);
        x.count = a->count;
        out.crossovers.push_back(x);
        const std::uint64_t from =
            t == 0 ? lo : geometric_midpoint(both[t - 1].first->segment_size, size);
        const std::uint64_t to =
            t + 1 == both.size() ? hi
                                 : geometric_midpoint(size, both[t + 1].first->segment_size) - 1;
        below_cuts[i].push_back({from, to, x.boundary, r->at_lo.value_or(*a)});
        above_cuts[k].push_back({from, to, x.boundary, r->at_hi.value_or(*b)});
      }
    }
  }
  auto apply = [&](std::vector<SegRectangle>& rects,
                   std::map<std::size_t, std::vector<CountCut>>& cuts, bool upper,
                   const std::vector<const SegPointWinner*>& pts) {
    if (cuts.empty()) return;
    std::vector<SegRectangle> next;
    for (std::size_t i = 0; i < rects.size(); ++i) {
      auto it = cuts.find(i);
      if (it == cuts.end()) {
        next.push_back(std::move(rects[i]));
        continue;
      }
      std::sort(it->second.begin(), it->second.end(),
                [](const CountCut& a, const CountCut& b) { return a.lo < b.lo; });
      cut_rectangle(rects[i], it->second, upper, pts, next);
    }
    rects = std::move(next);
  };
  apply(below, below_cuts, false, below_pts);
  apply(above, above_cuts, true, above_pts);
  return true;
}

}  // namespace

std::pair<std::uint64_t, std::uint64_t> seg_size_interval(std::string_view id,
                                                          std::uint64_t segment_size,
                                                          std::uint64_t count) {
  const auto p = kseg::parse_seg_id(id);
  // can_implement refuses sizes of the tile family alone (rows dividing a 16-byte vector: at
  // most 8 elements); every other family takes any size.
  if (!p || p->family != kseg::SegFamily::tile) return {1, max_segment_size};
  std::uint64_t lo = segment_size, hi = segment_size;
  while (lo > 1 && seg_takes(*p, lo - 1, count)) --lo;
  while (hi < max_segment_size && seg_takes(*p, hi + 1, count)) ++hi;
  return {lo, hi};
}

SegRectangles seg_rectangles(std::span<const SegPointWinner> grid, Runner& runner,
                             const BisectConfig& config, const std::atomic<bool>* cancel,
                             const TieRule& rule,
                             const std::function<void(std::size_t)>& on_measured, bool merge,
                             std::span<const std::string> candidates) {
  SegRectangles out;
  // Columns: count -> its points by size.
  std::map<std::uint64_t, std::vector<const SegPointWinner*>> columns;
  for (const SegPointWinner& w : grid) columns[w.count].push_back(&w);
  std::vector<std::uint64_t> counts;
  for (auto& [count, pts] : columns) {
    counts.push_back(count);
    std::sort(pts.begin(), pts.end(), [](const SegPointWinner* a, const SegPointWinner* b) {
      return a->segment_size < b->segment_size;
    });
  }
  std::vector<std::vector<SegRectangle>> by_column(counts.size());
  std::vector<std::vector<const SegPointWinner*>> column_points(counts.size());
  std::vector<std::uint64_t> column_count_lo(counts.size());
  for (std::size_t j = 0; j < counts.size(); ++j) {
    const std::uint64_t count_lo = j == 0 ? 1 : geometric_midpoint(counts[j - 1], counts[j]);
    const std::uint64_t count_hi = j + 1 < counts.size()
                                       ? geometric_midpoint(counts[j], counts[j + 1]) - 1
                                       : kseg::max_segments;
    std::vector<const SegPointWinner*> pts = columns[counts[j]];
    if (config.enabled && !candidates.empty()) {
      std::vector<const SegPointWinner*> with_refinements;
      for (std::size_t r = 0; r < pts.size(); ++r) {
        if (r > 0 && pts[r]->winner.kernel_id != pts[r - 1]->winner.kernel_id) {
          std::optional<SegPointWinner> p =
              refinement(*pts[r - 1], *pts[r], candidates, runner, rule, on_measured, out);
          if (cancelled(cancel)) {
            out.cancelled = true;
            return out;
          }
          if (p) {
            out.refinements.push_back(std::move(*p));
            with_refinements.push_back(&out.refinements.back());
          }
        }
        with_refinements.push_back(pts[r]);
      }
      pts = std::move(with_refinements);
    }
    column_points[j] = pts;
    column_count_lo[j] = count_lo;
    std::vector<std::uint64_t> starts(pts.size(), 1);
    for (std::size_t r = 1; r < pts.size(); ++r) {
      if (pts[r]->winner.kernel_id == pts[r - 1]->winner.kernel_id) {
        starts[r] = geometric_midpoint(pts[r - 1]->segment_size, pts[r]->segment_size);
        continue;
      }
      const auto b =
          crossover(*pts[r - 1], *pts[r], runner, config, cancel, rule, on_measured, out);
      if (!b) {
        out.cancelled = true;
        return out;
      }
      starts[r] = *b;
    }
    std::vector<Cell> cells = column_cells(pts, starts, out.probes);
    // Where this column measured no size as large as the column before did (the grid leaves out
    // points of more than max_total elements, so the columns of more segments end at smaller
    // sizes), its cells stop below the first rectangle of the column before that begins above
    // its largest size, and the rectangles of the column before from there on go on into this
    // column's counts: a winner measured at fewer segments, rather than one never measured at
    // that size. Each keeps its evidence inside it.
    // The rectangles of the columns before that reach up to this column's counts.
    auto touching = [&](const SegRectangle& r) { return r.count_hi + 1 == count_lo; };
    std::uint64_t cut = 0;
    if (j > 0 && !pts.empty()) {
      const std::uint64_t top = pts.back()->segment_size;
      for (std::size_t i = 0; i < j; ++i)
        for (const SegRectangle& below : by_column[i])
          if (touching(below) && below.size_lo > top && (!cut || below.size_lo < cut))
            cut = below.size_lo;
    }
    if (cut) {
      std::erase_if(cells, [&](const Cell& c) { return c.lo >= cut; });
      for (Cell& c : cells) c.hi = std::min(c.hi, cut - 1);
    }
    std::vector<SegRectangle>& column = by_column[j];
    for (const Cell& cell : cells) {
      SegPointWinner measured;
      if (cell.evidence) {  // a run of the winner's sizes measured at a crossover's midpoint
        measured.segment_size = *cell.evidence->segment_size;
        measured.count = counts[j];
        measured.winner = *cell.evidence;
      }
      SegRectangle rect = rectangle_of(cell.evidence ? measured : *pts[cell.point], cell.lo,
                                       cell.hi, count_lo, count_hi);
      if (cell.gap) rect.points = 0;
      // Along the sizes: the cell below, adjacent, of the same kernel.
      if (merge && !column.empty() && column.back().winner.kernel_id == rect.winner.kernel_id &&
          column.back().size_hi + 1 == rect.size_lo) {
        column.back().size_hi = rect.size_hi;
        absorb(column.back(), rect);
        continue;
      }
      column.push_back(std::move(rect));
    }
    if (cut)
      for (std::size_t i = 0; i < j; ++i)
        for (SegRectangle& below : by_column[i])
          if (touching(below) && below.size_lo >= cut) below.count_hi = count_hi;
  }
  // Along the counts, between each pair of neighbouring columns.
  if (config.enabled)
    for (std::size_t j = 0; j + 1 < counts.size(); ++j)
      if (!bisect_counts(by_column[j], by_column[j + 1], column_count_lo[j + 1], column_points[j],
                         column_points[j + 1], runner, config, cancel, rule, on_measured, out)) {
        out.cancelled = true;
        return out;
      }
  std::vector<SegRectangle> rects;
  if (merge) {
    // Across columns (adjacent count ranges): a rectangle with the size range and the kernel of
    // one in the column before extends it.
    using Key = std::tuple<std::uint64_t, std::uint64_t, std::string>;
    std::map<Key, SegRectangle> open;  // the previous column's, extended so far
    for (std::vector<SegRectangle>& column : by_column) {
      std::map<Key, SegRectangle> next;
      for (SegRectangle& r : column) {
        const Key key{r.size_lo, r.size_hi, r.winner.kernel_id};
        auto it = open.find(key);
        if (it == open.end()) {
          next.emplace(key, std::move(r));
          continue;
        }
        SegRectangle m = std::move(it->second);
        open.erase(it);
        m.count_hi = r.count_hi;
        absorb(m, r);
        next.emplace(key, std::move(m));
      }
      for (auto& [key, r] : open) rects.push_back(std::move(r));
      open = std::move(next);
    }
    for (auto& [key, r] : open) rects.push_back(std::move(r));
  } else {
    for (std::vector<SegRectangle>& column : by_column)
      for (SegRectangle& r : column) rects.push_back(std::move(r));
  }
  std::sort(rects.begin(), rects.end(), [](const SegRectangle& a, const SegRectangle& b) {
    return std::tie(a.count_lo, a.size_lo) < std::tie(b.count_lo, b.size_lo);
  });
  out.rectangles = std::move(rects);
  return out;
}

std::vector<db::SegmentedWinner> to_db_segmented_winners(std::span<const SegRectangle> rectangles,
                                                         DType dtype, Op op,
                                                         std::string_view layout,
                                                         db::L2Mode l2_mode, int driver_version,
                                                         int runtime_version,
                                                         std::optional<std::int64_t> run_id) {
  std::vector<db::SegmentedWinner> out;
  for (const SegRectangle& r : rectangles) {
    if (!r.winner.measurement_id)
      throw Error(
          fmt::format("segmented winner '{}' at segment size {} x {} segments has no "
                      "recorded measurement: it cannot be stored as a winner",
                      r.winner.kernel_id, r.winner.segment_size.value_or(0),
                      r.winner.segment_size && *r.winner.segment_size
                          ? r.winner.n / *r.winner.segment_size
                          : 0));
    db::SegmentedWinner w;
    w.dtype = dtype;
    w.op = op;
    w.l2_mode = l2_mode;
    w.layout = std::string(layout);
    w.size_lo = r.size_lo;
    w.size_hi = r.size_hi;
    w.count_lo = r.count_lo;
    w.count_hi = r.count_hi;
    w.kernel_id = r.winner.kernel_id;
    w.measurement_id = *r.winner.measurement_id;
    if (r.runner_up && r.runner_up->measurement_id) {
      w.runner_up_kernel_id = r.runner_up->kernel_id;
      w.runner_up_measurement_id = r.runner_up->measurement_id;
    }
    w.driver_version = driver_version;
    w.runtime_version = runtime_version;
    w.run_id = run_id;
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace tunedreduce::tuner
