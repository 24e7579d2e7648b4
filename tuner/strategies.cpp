#include "tuner/strategies.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "tuner/config/tune_config.hpp"
#include "tuner/selection.hpp"

namespace tunedreduce::tuner {

namespace {

std::vector<Request> plain_requests(std::span<const std::string> ids, const SearchContext& ctx) {
  std::vector<Request> out;
  out.reserve(ids.size());
  for (const std::string& id : ids) {
    Request q;
    q.kernel_id = id;
    q.n = ctx.n;
    q.segment_size = ctx.segment_size;
    out.push_back(std::move(q));
  }
  return out;
}

std::string segment_text(const std::optional<std::uint64_t>& segment_size) {
  return segment_size ? fmt::format(" segment_size={}", *segment_size) : std::string();
}

// --- dry-run plans ------------------------------------------------------------------------------

PlannedSearch plan_exhaustive(std::size_t candidates, const StrategyConfig&, const MeasurePolicy&) {
  return {{PlannedRound{static_cast<double>(candidates), std::nullopt}}, std::nullopt};
}

PlannedSearch plan_random(std::size_t candidates, const StrategyConfig& c, const MeasurePolicy&) {
  double n = static_cast<double>(candidates);
  if (c.random.count) n = std::min(n, static_cast<double>(*c.random.count));
  return {{PlannedRound{n, std::nullopt}}, c.random.seconds};
}

// The rounds search_halving makes, as (survivors measured, fixed repeats or the full policy).
std::vector<PlannedRound> halving_rounds(std::size_t candidates, const HalvingOptions& h,
                                         const MeasurePolicy& policy) {
  std::vector<PlannedRound> rounds;
  std::size_t alive = candidates;
  double repeats = h.first_repeats;
  const std::size_t final_size = static_cast<std::size_t>(std::max(1, h.final_size));
  while (alive > final_size) {
    const int r = std::clamp(static_cast<int>(std::lround(repeats)), 1, policy.max_repeats);
    rounds.push_back({static_cast<double>(alive), r});
    const auto keep = static_cast<std::size_t>(std::ceil(static_cast<double>(alive) * h.keep));
    alive = std::clamp(keep, final_size, alive - 1);
    repeats *= h.growth;
  }
  rounds.push_back({static_cast<double>(alive), std::nullopt});
  return rounds;
}

PlannedSearch plan_halving(std::size_t candidates, const StrategyConfig& c,
                           const MeasurePolicy& policy) {
  return {halving_rounds(candidates, c.halving, policy), std::nullopt};
}

// [strategy.random]: RandomOptions. Neither is set by default; the strategy needs one.
constexpr KeySpec random_options[] = {
    {"strategy.random.count", KeyKind::integer, "candidates sampled per size, at most",
     member<&TuneConfig::strategy, &StrategyConfig::random, &RandomOptions::count>(),
     Bounds{1, std::numeric_limits<double>::infinity(), false, false,
            "count {} must be at least 1"}},
    {"strategy.random.seconds", KeyKind::number, "wall time per size, at most",
     member<&TuneConfig::strategy, &StrategyConfig::random, &RandomOptions::seconds>(),
     Bounds{0, std::numeric_limits<double>::infinity(), true, false,
            "{} is out of range: seconds must be above 0"}},
};

std::string check_random(const std::function<bool(std::string_view)>& given) {
  if (given("strategy.random.count") || given("strategy.random.seconds")) return {};
  return "strategy 'random' needs a budget: strategy.random.count and/or strategy.random.seconds";
}

// [strategy.halving]: HalvingOptions, whose initializers are the defaults.
constexpr KeySpec halving_options[] = {
    {"strategy.halving.keep", KeyKind::number, "fraction kept after each round",
     member<&TuneConfig::strategy, &StrategyConfig::halving, &HalvingOptions::keep>(),
     Bounds{0, 1, true, true,
            "{} is out of range: keep is the fraction kept after a round: above 0 and below 1"}},
    {"strategy.halving.first_repeats", KeyKind::integer, "repeats in the first round",
     member<&TuneConfig::strategy, &StrategyConfig::halving, &HalvingOptions::first_repeats>(),
     Bounds{1, 100000, false, false, "{} is out of range: first_repeats must be 1 to 100000"}},
    {"strategy.halving.growth", KeyKind::number, "repeats multiply by this each round",
     member<&TuneConfig::strategy, &StrategyConfig::halving, &HalvingOptions::growth>(),
     Bounds{1, 1000, false, false, "{} is out of range: growth must be 1 to 1000"}},
    {"strategy.halving.final_size", KeyKind::integer, "survivors measured with the full policy",
     member<&TuneConfig::strategy, &StrategyConfig::halving, &HalvingOptions::final_size>(),
     Bounds{1, 1000000, false, false, "{} is out of range: final_size must be at least 1"}},
};

constexpr StrategyInfo strategy_table[] = {
    {"exhaustive",
     "every candidate with the full measurement policy",
     search_exhaustive,
     plan_exhaustive,
     {},
     nullptr},
    {"random", "a seeded uniform sample of the candidates within a budget (count and/or seconds)",
     search_random, plan_random, random_options, check_random},
    {"halving",
     "successive halving: every candidate with few repeats, the best fraction again with more, "
     "until final_size remain, measured with the full policy",
     search_halving, plan_halving, halving_options, nullptr},
};

// SplitMix64: small, fast, and the same sequence on every platform.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) without modulo bias (rejection).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
    std::uint64_t x;
    do x = next();
    while (x >= limit);
    return x % bound;
  }
};

}  // namespace

double SearchContext::now() const {
  if (clock) return clock();
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::span<const StrategyInfo> strategies() { return strategy_table; }

const StrategyInfo* find_strategy(std::string_view name) {
  for (const StrategyInfo& s : strategy_table)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<Result> measure_chunked(std::span<const Request> requests, SearchContext& ctx,
                                    SearchOutcome& outcome) {
  std::vector<Result> out;
  out.reserve(requests.size());
  const std::size_t chunk = std::max<std::size_t>(1, ctx.chunk);
  for (std::size_t i = 0; i < requests.size(); i += chunk) {
    if (ctx.cancelled()) {
      outcome.cancelled = true;
      return out;
    }
    const auto part = requests.subspan(i, std::min(chunk, requests.size() - i));
    std::vector<Result> got = ctx.runner.measure(part);
    outcome.requests += part.size();
    if (got.size() != part.size()) {
      // A runner interrupted by the cancellation flag may return early; anything else is a bug.
      if (ctx.cancelled()) {
        outcome.cancelled = true;
        return out;
      }
      throw Error(fmt::format("the runner answered {} of {} requests", got.size(), part.size()));
    }
    for (std::size_t k = 0; k < got.size(); ++k)
      if (got[k].kernel_id != part[k].kernel_id || got[k].n != part[k].n ||
          got[k].segment_size != part[k].segment_size)
        throw Error(
            fmt::format("the runner answered '{}' at n={}{} for a request of '{}' at n={}{}",
                        got[k].kernel_id, got[k].n, segment_text(got[k].segment_size),
                        part[k].kernel_id, part[k].n, segment_text(part[k].segment_size)));
    if (ctx.on_measured) ctx.on_measured(got.size());
    // Results measured while the flag went up may be cut short: the caller discards the batch.
    if (ctx.cancelled()) outcome.cancelled = true;
    for (Result& r : got) out.push_back(std::move(r));
    if (outcome.cancelled) return out;
  }
  return out;
}

SearchOutcome search_exhaustive(std::span<const std::string> candidates, SearchContext& ctx) {
  SearchOutcome o;
  const auto requests = plain_requests(candidates, ctx);
  o.final_results = measure_chunked(requests, ctx, o);
  o.all = o.final_results;
  o.rounds = 1;
  return o;
}

std::vector<std::string> random_order(std::span<const std::string> candidates, std::uint64_t seed,
                                      DType dtype, Op op, std::uint64_t n) {
  // The stream depends on the seed and the key, so every size draws its own sample, and the
  // same seed draws the same samples again.
  std::uint64_t h =
      fnv1a64(std::string(dtype_name(dtype)) + "." + op_name(op) + "." + std::to_string(n));
  SplitMix64 rng{seed ^ h};
  std::vector<std::string> order(candidates.begin(), candidates.end());
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

SearchOutcome search_random(std::span<const std::string> candidates, SearchContext& ctx) {
  SearchOutcome o;
  o.rounds = 1;
  std::vector<std::string> order =
      random_order(candidates, ctx.config.seed, ctx.dtype, ctx.op, ctx.n);
  if (ctx.config.random.count)
    order.resize(
        std::min<std::size_t>(order.size(), static_cast<std::size_t>(*ctx.config.random.count)));
  const auto requests = plain_requests(order, ctx);
  if (!ctx.config.random.seconds) {
    o.final_results = measure_chunked(requests, ctx, o);
  } else {
    // A time budget: measure in chunks and stop at the first chunk boundary past the budget.
    const double start = ctx.now();
    for (std::size_t i = 0; i < requests.size(); i += std::max<std::size_t>(1, ctx.chunk)) {
      if (i > 0 && ctx.now() - start >= *ctx.config.random.seconds) break;
      const auto part = std::span<const Request>(requests).subspan(
          i, std::min(std::max<std::size_t>(1, ctx.chunk), requests.size() - i));
      auto got = measure_chunked(part, ctx, o);
      for (Result& r : got) o.final_results.push_back(std::move(r));
      if (o.cancelled) break;
    }
  }
  o.all = o.final_results;
  return o;
}

SearchOutcome search_halving(std::span<const std::string> candidates, SearchContext& ctx) {
  SearchOutcome o;
  const HalvingOptions& h = ctx.config.halving;
  const std::size_t final_size = static_cast<std::size_t>(std::max(1, h.final_size));
  std::vector<std::string> alive(candidates.begin(), candidates.end());
  // 1 while alive holds, past the fraction kept, the exact_wide entry carried on (below).
  std::size_t carried = 0;
  double repeats = h.first_repeats;
  while (alive.size() - carried > final_size) {
    const int r = std::clamp(static_cast<int>(std::lround(repeats)), 1, ctx.policy.max_repeats);
    std::vector<Request> requests = plain_requests(alive, ctx);
    for (Request& q : requests) {
      q.min_repeats = r;
      q.max_repeats = r;
    }
    std::vector<Result> got = measure_chunked(requests, ctx, o);
    ++o.rounds;
    o.all.insert(o.all.end(), got.begin(), got.end());
    if (o.cancelled) return o;
    // Keep the fastest fraction of the ok ones; failed candidates drop out at once.
    std::vector<const Result*> ok;
    for (const Result& x : got)
      if (x.ok()) ok.push_back(&x);
    std::sort(ok.begin(), ok.end(),
              [](const Result* a, const Result* b) { return faster(*a, *b); });
    const std::size_t counted = alive.size() - carried;
    const auto want = static_cast<std::size_t>(std::ceil(static_cast<double>(counted) * h.keep));
    const std::size_t keep = std::min(std::clamp(want, final_size, counted - 1), ok.size());
    alive.clear();
    carried = 0;
    for (std::size_t i = 0; i < keep; ++i) alive.push_back(ok[i]->kernel_id);
    // The fastest exact_wide entry of a float key goes on to the final round in any case (one
    // more candidate a round, not counted in the fraction), so that the selection's wide-rounds
    // rule (TieRule::wide_rounds_relative) weighs it with the full policy's repeats: a few
    // repeats do not tell 1 % apart. ok is sorted by speed: the first such entry is the fastest.
    const auto wide = std::find_if(ok.begin(), ok.end(), [](const Result* x) {
      return float_exact_holds_wide_rounds(x->kernel_id) == true;
    });
    if (wide != ok.end() && static_cast<std::size_t>(wide - ok.begin()) >= keep) {
      alive.push_back((*wide)->kernel_id);
      carried = 1;
    }
    if (alive.empty()) {
      o.final_results = std::move(got);  // nothing ok: no winner, but keep the outcomes
      return o;
    }
    repeats *= h.growth;
  }
  // The survivors with the full policy.
  o.final_results = measure_chunked(plain_requests(alive, ctx), ctx, o);
  ++o.rounds;
  o.all.insert(o.all.end(), o.final_results.begin(), o.final_results.end());
  return o;
}

}  // namespace tunedreduce::tuner
