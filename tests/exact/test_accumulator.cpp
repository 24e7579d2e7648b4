// The device-ready accumulator (exact/accumulator.hpp), run on the host, against the cpp_int
// oracle and the host reference, bit for bit; its states under every split and merge order.

#include "exact/accumulator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exact/reference.hpp"
#include "tests/exact/cases.hpp"
#include "tests/exact/oracle.hpp"

namespace tunedreduce::exact::testing {
namespace {

template <class T>
class ExactAccumulatorTest : public ::testing::Test {};

struct TypeNames {
  template <class T>
  static std::string GetName(int) {
    return sizeof(T) == 4 ? "float" : "double";
  }
};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ExactAccumulatorTest, Types, TypeNames);

template <class Acc, class T>
Acc accumulate(std::span<const T> values) {
  Acc a;
  for (const T x : values) a.add(x);
  return a;
}

/// What the accumulator rounds to: the oracle's sum, but no input at all is the identity -0.
template <class T>
T expected_result(std::span<const T> values) {
  return values.empty() ? -T(0) : oracle_sum<T>(values);
}

/// The default accumulator and the other expansion sizes and residences: one expansion double
/// spills most often, so the chunks do most of the work.
template <class T>
void expect_every_configuration(std::span<const T> values, T expected) {
  const auto reference = accumulate<ExactAccumulator<T>>(values);
  EXPECT_TRUE(same_bits(expected, reference.result())) << "default";
  const auto check = [&](const auto& acc, const char* what) {
    EXPECT_TRUE(same_bits(expected, acc.result())) << what;
    EXPECT_TRUE(acc.state() == reference.state()) << what;
  };
  check(accumulate<ExactAccumulator<T, 1, Residence::memory>>(values), "K=1 memory");
  check(accumulate<ExactAccumulator<T, 1, Residence::registers>>(values), "K=1 registers");
  check(accumulate<ExactAccumulator<T, 2, Residence::memory>>(values), "K=2 memory");
  check(accumulate<ExactAccumulator<T, 4, Residence::registers>>(values), "K=4 registers");
}

TYPED_TEST(ExactAccumulatorTest, AdversarialCasesMatchTheOracleInEveryConfiguration) {
  using T = TypeParam;
  for (const Case<T>& c : adversarial_cases<T>()) {
    SCOPED_TRACE(c.name);
    const std::span<const T> v(c.values);
    expect_every_configuration<T>(v, expected_result<T>(v));
  }
}

TYPED_TEST(ExactAccumulatorTest, RandomDataMatchesTheOracleInEveryConfiguration) {
  using T = TypeParam;
  std::mt19937_64 rng(1603);
  for (const Distribution d : kDistributions) {
    SCOPED_TRACE(distribution_name(d));
    const std::vector<T> v = generate<T>(d, 2000, rng);
    expect_every_configuration<T>(std::span<const T>(v), oracle_sum<T>(std::span<const T>(v)));
  }
}

/// Cuts v into `parts` pieces at random, accumulates each, merges them in a random order.
template <class Acc, class T>
Acc split_and_merge(const std::vector<T>& v, std::size_t parts, std::mt19937_64& rng) {
  std::vector<std::size_t> cuts = {0, v.size()};
  while (cuts.size() < parts + 1) cuts.push_back(rng() % (v.size() + 1));  // empty parts too
  std::sort(cuts.begin(), cuts.end());
  std::vector<Acc> pool;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    pool.push_back(accumulate<Acc>(std::span<const T>(v.data() + cuts[i], cuts[i + 1] - cuts[i])));
  }
  while (pool.size() > 1) {
    const std::size_t a = rng() % pool.size();
    std::size_t b = rng() % (pool.size() - 1);
    if (b >= a) ++b;
    if (rng() % 2 == 0) pool[a].normalise();  // merges of normalised and pending states alike
    pool[a].merge(pool[b]);
    pool[b] = pool.back();
    pool.pop_back();
  }
  return pool.front();
}

TYPED_TEST(ExactAccumulatorTest, RandomSplitsMergedInRandomOrdersGiveTheSameStateAndBits) {
  using T = TypeParam;
  using Acc = ExactAccumulator<T>;
  std::mt19937_64 rng(1604);
  for (const Distribution d : kDistributions) {
    for (int trial = 0; trial < 3; ++trial) {
      const std::size_t n = 1 + rng() % 8192;
      const std::vector<T> v = generate<T>(d, n, rng);
      const std::span<const T> all(v);
      const T expected = oracle_sum<T>(all);
      const Acc whole = accumulate<Acc>(all);
      ASSERT_TRUE(same_bits(expected, whole.result())) << distribution_name(d) << " n=" << n;
      ASSERT_TRUE(same_bits(expected, exact_sum(all))) << distribution_name(d) << " n=" << n;
      for (int split = 0; split < 2; ++split) {
        const std::size_t parts = 1 + rng() % 4096;
        SCOPED_TRACE(std::string(distribution_name(d)) + " n=" + std::to_string(n) +
                     " parts=" + std::to_string(parts));
        const Acc merged = split_and_merge<Acc>(v, parts, rng);
        EXPECT_TRUE(merged.state() == whole.state());
        EXPECT_TRUE(same_bits(expected, merged.result()));
      }
    }
  }
}

TYPED_TEST(ExactAccumulatorTest, AdversarialCasesSplitAndMergedGiveTheSameStateAndBits) {
  using T = TypeParam;
  using Acc = ExactAccumulator<T>;
  std::mt19937_64 rng(1607);
  for (const Case<T>& c : adversarial_cases<T>()) {
    if (c.values.empty()) continue;
    SCOPED_TRACE(c.name);
    const Acc whole = accumulate<Acc>(std::span<const T>(c.values));
    for (int split = 0; split < 4; ++split) {
      const std::size_t parts = 1 + rng() % std::min<std::size_t>(c.values.size() + 1, 4096);
      const Acc merged = split_and_merge<Acc>(c.values, parts, rng);
      EXPECT_TRUE(merged.state() == whole.state()) << parts << " parts";
      EXPECT_TRUE(same_bits(whole.result(), merged.result())) << parts << " parts";
    }
  }
}

// What the exact kernels do with the states of their threads and blocks: normalise, store the
// chunks and flags, add the stored chunks of many states word by word (plain integer sums, no
// carry) and OR their flags, read the sums back with from_chunks and round.
TYPED_TEST(ExactAccumulatorTest, SumsOfStoredChunksReadBackAsTheMergedState) {
  using T = TypeParam;
  using Acc = ExactAccumulator<T>;
  using Store = typename Acc::Store;
  std::mt19937_64 rng(1611);
  const auto check = [&](const std::vector<T>& v, std::size_t parts) {
    const Acc whole = accumulate<Acc>(std::span<const T>(v));
    std::vector<std::int64_t> sums(Store::kChunks, 0);
    std::uint32_t flags = 0;
    for (std::size_t p = 0; p < parts; ++p) {
      Acc part;
      for (std::size_t i = v.size() * p / parts; i < v.size() * (p + 1) / parts; ++i)
        part.add(v[i]);
      part.normalise();
      for (int j = 0; j < Store::kChunks; ++j)
        sums[static_cast<std::size_t>(j)] += part.store().chunk(j);
      flags |= part.store().flags();
    }
    Store read = Store::from_chunks(sums.data(), flags);
    EXPECT_TRUE(read == whole.state()) << parts << " parts";
    EXPECT_TRUE(same_bits(whole.result(), read.round())) << parts << " parts";
    read.normalise();
    EXPECT_EQ(read.pending(), 0u);
    EXPECT_TRUE(same_bits(whole.result(), read.round())) << parts << " parts";
  };
  for (const Case<T>& c : adversarial_cases<T>()) {
    SCOPED_TRACE(c.name);
    for (const std::size_t parts : {std::size_t{1}, std::size_t{3}, std::size_t{64}})
      check(c.values, parts);
  }
  for (const Distribution d : kDistributions) {
    SCOPED_TRACE(distribution_name(d));
    check(generate<T>(d, 5000, rng), 1 + rng() % 1024);
  }
}

// The exact kernels' block merge after its word sums: two carry steps in parallel, each word
// keeping its low 32 bits and taking its lower neighbour's carry (computed from the words before
// the step, as the block's threads read them from shared memory); the top chunk keeps its high
// bits. After it every chunk word but the top is in [-1, 2^32].
template <class Store>
void carry_twice_in_parallel(std::vector<std::int64_t>& words) {
  for (int step = 0; step < 2; ++step) {
    const std::vector<std::int64_t> before = words;
    for (int j = 0; j < Store::kChunks; ++j) {
      const auto u = static_cast<std::size_t>(j);
      const std::int64_t carry = j > 0 ? before[u - 1] >> 32 : 0;
      words[u] = (j < Store::kChunks - 1 ? (before[u] & 0xFFFFFFFF) : before[u]) + carry;
    }
  }
  for (int j = 0; j + 1 < Store::kChunks; ++j) {
    EXPECT_GE(words[static_cast<std::size_t>(j)], -1) << "word " << j;
    EXPECT_LE(words[static_cast<std::size_t>(j)], std::int64_t{1} << 32) << "word " << j;
  }
}

// What the exact kernels' first pass does instead of normalising each thread's accumulator:
// each thread keeps an Expansion and, apart, the Kulisch its spills go to; each block adds, word
// by word, the normalised chunks of its threads that spilled and the parts (double_parts) of
// every thread's expansion terms, ORs the flags with the terms' sign flags, and carries the sums
// twice in parallel (carry_twice_in_parallel); the finish adds the blocks' words and reads the
// sums back with from_chunks: the same state as the whole input's, for every expansion size the
// kernels instantiate.
template <class T, int K>
void expect_parts_give_the_state(const std::vector<T>& v, std::size_t threads,
                                 std::size_t block_threads) {
  using Store = Kulisch<T>;
  const ExactAccumulator<T> whole = accumulate<ExactAccumulator<T>>(std::span<const T>(v));
  std::vector<std::int64_t> total(Store::kChunks, 0);
  std::vector<std::int64_t> sums(Store::kChunks, 0);
  std::uint32_t flags = 0;
  std::size_t spilled = 0;
  for (std::size_t t = 0; t < threads; ++t) {
    Expansion<T, K, Residence::memory> front;
    Store back;
    for (std::size_t i = t; i < v.size(); i += threads) front.add(v[i], back);  // grid-stride
    if (back.pending() != 0) {
      ++spilled;
      back.normalise();
      for (int j = 0; j < Store::kChunks; ++j) sums[static_cast<std::size_t>(j)] += back.chunk(j);
    }
    for (int i = 0; i < K; ++i) {
      const typename Store::Parts a = Store::double_parts(front.term(i));
      if (a.k == Store::kNoChunk) continue;
      sums[static_cast<std::size_t>(a.k)] += a.a0;
      sums[static_cast<std::size_t>(a.k + 1)] += a.a1;
      sums[static_cast<std::size_t>(a.k + 2)] += a.a2;
    }
    flags |= back.flags() | front.sign_flags();
    if ((t + 1) % block_threads == 0 || t + 1 == threads) {  // the block's end
      carry_twice_in_parallel<Store>(sums);
      for (int j = 0; j < Store::kChunks; ++j) {
        total[static_cast<std::size_t>(j)] += sums[static_cast<std::size_t>(j)];
      }
      std::fill(sums.begin(), sums.end(), 0);
    }
  }
  const Store read = Store::from_chunks(total.data(), flags);
  EXPECT_TRUE(read == whole.state()) << "K=" << K << ", " << threads << " threads in blocks of "
                                     << block_threads << ", " << spilled << " spilled";
  EXPECT_TRUE(same_bits(whole.result(), read.round()))
      << "K=" << K << ", " << threads << " threads in blocks of " << block_threads << ", "
      << spilled << " spilled";
}

TYPED_TEST(ExactAccumulatorTest, ExpansionTermsAsChunkPartsPlusSpilledChunksGiveTheState) {
  using T = TypeParam;
  constexpr int kSmall = sizeof(T) == 4 ? 1 : 2;  // the kernels' two expansion sizes
  std::mt19937_64 rng(1612);
  const auto check = [&](const std::vector<T>& v, std::size_t threads) {
    for (const std::size_t block : {std::size_t{1}, std::size_t{7}, threads}) {
      expect_parts_give_the_state<T, kSmall>(v, threads, block);
      expect_parts_give_the_state<T, kSmall + 1>(v, threads, block);
    }
  };
  for (const Case<T>& c : adversarial_cases<T>()) {
    SCOPED_TRACE(c.name);
    for (const std::size_t threads : {std::size_t{1}, std::size_t{3}, std::size_t{64}})
      check(c.values, threads);
  }
  for (const Distribution d : kDistributions) {
    SCOPED_TRACE(distribution_name(d));
    check(generate<T>(d, 5000, rng), 1 + rng() % 512);
  }
}

/// Adds v in rounds of M doubles through Expansion::add_doubles (one by one where it declines, and
/// for the rest of v), as the first pass does; counts the rounds it took and those that spilled.
template <int K, Residence R, int M>
Kulisch<double> add_in_rounds(const std::vector<double>& v, int& taken, int& spilled) {
  Expansion<double, K, R> front;
  Kulisch<double> back;
  std::size_t i = 0;
  for (; i + M <= v.size(); i += M) {
    double x[M];
    std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(i), M, x);
    const std::uint32_t before = back.pending();
    if (front.add_doubles(x, back)) {
      ++taken;
      spilled += back.pending() != before ? 1 : 0;
    } else {
      for (const double d : x) front.add(d, back);
    }
  }
  for (; i < v.size(); ++i) front.add(v[i], back);
  front.flush(back);
  back.normalise();
  return back;
}

template <int K, Residence R, int M>
void expect_rounds_give_the_state(const std::vector<double>& v, const Kulisch<double>& expected,
                                  const std::string& what, int& taken, int& spilled) {
  const Kulisch<double> got = add_in_rounds<K, R, M>(v, taken, spilled);
  EXPECT_TRUE(got == expected) << what << ": K=" << K << ", rounds of " << M;
  EXPECT_TRUE(same_bits(expected.round(), got.round()))
      << what << ": K=" << K << ", rounds of " << M;
}

template <int K, Residence R>
void expect_every_round_size(const std::vector<double>& v, const Kulisch<double>& expected,
                             const std::string& what, int& taken, int& spilled) {
  expect_rounds_give_the_state<K, R, 1>(v, expected, what, taken, spilled);
  expect_rounds_give_the_state<K, R, 2>(v, expected, what, taken, spilled);
  expect_rounds_give_the_state<K, R, 3>(v, expected, what, taken, spilled);
  expect_rounds_give_the_state<K, R, 8>(v, expected, what, taken, spilled);
}

// The first pass adds a round of doubles level by level, one spill test at the end
// (Expansion::add_doubles): the state of adding them one by one, for every expansion size the
// kernels use, where rounds spill, and where a round holds an input of the direct path (NaN,
// infinity, |x| >= 2^982) and is declined whole.
TEST(ExactAccumulatorRounds, RoundsOfDoublesGiveTheStateOfAddsOneByOne) {
  std::mt19937_64 rng(1617);
  int taken = 0;
  int spilled = 0;
  const auto check = [&](const std::vector<double>& v, const std::string& what) {
    // The state of the adds one by one, once for every configuration below.
    const Kulisch<double> expected =
        accumulate<ExactAccumulator<double>>(std::span<const double>(v)).state();
    expect_every_round_size<1, Residence::memory>(v, expected, what, taken, spilled);
    expect_every_round_size<2, Residence::memory>(v, expected, what, taken, spilled);
    expect_every_round_size<3, Residence::memory>(v, expected, what, taken, spilled);
    expect_every_round_size<2, Residence::registers>(v, expected, what, taken, spilled);
  };
  for (const Case<double>& c : adversarial_cases<double>()) check(c.values, c.name);
  for (const Distribution d : kDistributions) {
    check(generate<double>(d, 3000, rng), distribution_name(d));
  }
  // Every exponent the expansion takes, random signs: spills in most rounds, none declined.
  std::vector<double> spread(3000);
  for (double& x : spread) {
    const double m = static_cast<double>(rng() >> 11) * 0x1p-53 + 0.5;  // [0.5, 1.5)
    x = std::ldexp((rng() & 1) != 0 ? -m : m, static_cast<int>(rng() % 2050) - 1070);
  }
  check(spread, "spread over 2^-1070..2^980");
  EXPECT_GT(taken, 1000);
  EXPECT_GT(spilled, 100);
  // A round with one input of the direct path is declined whole, nothing added.
  for (const double odd : {std::numeric_limits<double>::quiet_NaN(),
                           -std::numeric_limits<double>::infinity(), 0x1p982, -0x1.8p1000}) {
    Expansion<double, 2, Residence::memory> front;
    Kulisch<double> back;
    const double x[3] = {1.0, odd, 0x1p-60};
    EXPECT_FALSE(front.add_doubles(x, back)) << odd;
    EXPECT_TRUE(same_bits(-0.0, front.term(0)) && same_bits(0.0, front.term(1))) << odd;
    EXPECT_EQ(back.pending(), 0u) << odd;
    EXPECT_EQ(back.flags(), 0u) << odd;
  }
  // Just below the direct path: taken.
  Expansion<double, 2, Residence::memory> front;
  Kulisch<double> back;
  const double x[2] = {0x1.fffffffffffffp981, -0x1.fffffffffffffp981};
  EXPECT_TRUE(front.add_doubles(x, back));
}

TYPED_TEST(ExactAccumulatorTest, TheEmptyAccumulatorIsTheIdentityNegativeZero) {
  using T = TypeParam;
  using Acc = ExactAccumulator<T>;
  const Acc empty;
  EXPECT_TRUE(same_bits(-T(0), empty.result()));
  const std::vector<T> v = {T(3), -T(0), T(0.25)};
  Acc a = accumulate<Acc>(std::span<const T>(v));
  const auto before = a.state();
  a.merge(empty);
  EXPECT_TRUE(a.state() == before);
  Acc b;
  b.merge(a);
  EXPECT_TRUE(b.state() == before);
  EXPECT_TRUE(same_bits(T(3.25), b.result()));
  // -0 merged with -0 stays -0; with +0 it is +0.
  Acc negative_zero;
  negative_zero.add(-T(0));
  Acc also_negative_zero;
  also_negative_zero.add(-T(0));
  also_negative_zero.merge(negative_zero);
  EXPECT_TRUE(same_bits(-T(0), also_negative_zero.result()));
  Acc positive_zero;
  positive_zero.add(T(0));
  positive_zero.merge(negative_zero);
  EXPECT_TRUE(same_bits(T(0), positive_zero.result()));
}

TYPED_TEST(ExactAccumulatorTest, NormaliseLeavesChunksInRangeAndIsIdempotent) {
  using T = TypeParam;
  using Acc = ExactAccumulator<T, 1, Residence::memory>;
  std::mt19937_64 rng(1605);
  const std::vector<T> v = generate<T>(Distribution::full_range, 3000, rng);
  Acc a = accumulate<Acc>(std::span<const T>(v));
  a.normalise();
  const auto once = a.state();
  a.normalise();
  EXPECT_TRUE(a.state() == once);
  for (int j = 0; j + 1 < Kulisch<T>::kChunks; ++j) {
    EXPECT_GE(once.chunk(j), 0) << "chunk " << j;
    EXPECT_LT(once.chunk(j), std::int64_t{1} << 32) << "chunk " << j;
  }
  EXPECT_EQ(once.pending(), 0u);
  EXPECT_EQ(a.expansion(0), 0.0);
}

/// The chunks alone, with carry passes every 3 adds: random wide integers, ties made on purpose
/// at random positions (q·2^s + 2^(s-1), q of P bits, odd and even), a unit more or less.
TYPED_TEST(ExactAccumulatorTest, TheChunksRoundWideIntegersToNearestEven) {
  using T = TypeParam;
  constexpr int P = std::numeric_limits<T>::digits;
  using Small = Kulisch<T, 3>;
  // The largest position an add may have (three chunks from the top), and the last finite one.
  constexpr int kMaxP = 32 * (Small::kChunks - 3) + 31;
  constexpr int kFiniteTop = std::numeric_limits<T>::max_exponent - unit_exponent<T>();
  std::mt19937_64 rng(1606);
  for (int trial = 0; trial < 400; ++trial) {
    Small memory;
    Small registers;
    OracleSum<T> oracle;
    oracle.any = true;
    oracle.all_negative_zero = false;
    const auto add = [&](std::uint64_t m, int p, bool negative) {
      memory.template add_scaled<Residence::memory>(m, p, negative);
      registers.template add_scaled<Residence::registers>(m, p, negative);
      // The carry pass comes in time: never more pending adds than the chunks can absorb.
      EXPECT_LE(memory.pending(), Small::kMaxPending);
      EXPECT_LE(registers.pending(), Small::kMaxPending);
      const BigInt term = BigInt(m) << p;
      oracle.units += negative ? BigInt(-term) : term;
    };
    const bool negative = rng() % 2 == 0;
    if (trial % 2 == 0) {
      // A tie: q·2^s + 2^(s-1), then maybe ±1 unit.
      const int s = 1 + static_cast<int>(rng() % std::min(kFiniteTop - P + 8, kMaxP));
      const std::uint64_t q = (std::uint64_t{1} << (P - 1)) |
                              (rng() & ((std::uint64_t{1} << (P - 1)) - 1));
      add(q, s, negative);
      add(1, s - 1, negative);
      if (trial % 6 == 2) add(1, 0, false);
      if (trial % 6 == 4) add(1, 0, true);
    } else {
      // Random terms around a random position, either sign: cancellation and carries.
      const int base = static_cast<int>(rng() % (kMaxP - 64));
      const int terms = 1 + static_cast<int>(rng() % 40);
      for (int i = 0; i < terms; ++i) {
        add(rng() >> 11, base + static_cast<int>(rng() % 64), rng() % 3 == 0);
      }
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_TRUE(memory == registers);
    EXPECT_TRUE(same_bits(oracle_round(oracle), memory.round()));
    // A merge of the two (whose pending adds overflow the small limit) doubles the value.
    Small doubled = memory;
    doubled.merge(registers);
    EXPECT_LE(doubled.pending(), Small::kMaxPending);
    OracleSum<T> twice = oracle;
    twice.units *= 2;
    EXPECT_TRUE(same_bits(oracle_round(twice), doubled.round()));
  }
}

/// round_narrow, the kernels' finish for a few words, against rounding every chunk: random
/// words (either sign, up to 2^62) over every narrow range, sums that cancel to zero or to a few
/// units, ties at every position in the range, the specials, and the ranges it must refuse.
TYPED_TEST(ExactAccumulatorTest, NarrowRangesRoundAsEveryChunkWould) {
  using T = TypeParam;
  using Store = Kulisch<T>;
  constexpr int kChunks = Store::kChunks;
  constexpr int kTopLo = kChunks - 4;  // the highest word round_narrow takes
  std::mt19937_64 rng(1807);
  const auto check = [&](const std::vector<std::int64_t>& words, int lo, int hi,
                         std::uint32_t flags, const std::string& what) {
    T narrow{};
    ASSERT_TRUE(Store::round_narrow(words.data(), lo, hi, flags, narrow)) << what;
    const T whole = Store::from_chunks(words.data(), flags).round();
    EXPECT_TRUE(same_bits(whole, narrow)) << what << ": " << whole << " against " << narrow;
  };
  const auto random_word = [&]() -> std::int64_t {
    const std::int64_t sign = rng() % 2 == 0 ? 1 : -1;
    switch (rng() % 5) {
      case 0:
        return sign * static_cast<std::int64_t>(rng() >> 2);  // to 2^62
      case 1:
        return sign * static_cast<std::int64_t>(rng() >> 32);  // to 2^32
      case 2:
        return sign * static_cast<std::int64_t>(rng() % 4);  // a few units
      case 3:
        return 0;
      default:
        return sign * static_cast<std::int64_t>((rng() >> 34) << 32);  // carries only
    }
  };
  const auto range = [&](int& lo, int& hi) {
    lo = static_cast<int>(rng() % (kTopLo + 1));
    hi = lo + static_cast<int>(rng() % std::min(Store::kNarrowWords, kTopLo - lo + 1));
  };
  const std::uint32_t kPlain = Store::kNotNegativeZero;
  for (int trial = 0; trial < 20000; ++trial) {
    int lo = 0, hi = 0;
    range(lo, hi);
    std::vector<std::int64_t> words(kChunks, 0);
    for (int j = lo; j <= hi; ++j) words[static_cast<std::size_t>(j)] = random_word();
    check(words, lo, hi, trial % 50 == 0 ? 0u : kPlain, "random, trial " + std::to_string(trial));
  }
  // Sums that cancel: x·2^32 in a word and -x in the next (zero), then a few units more or less.
  for (int trial = 0; trial < 2000; ++trial) {
    int lo = 0, hi = 0;
    range(lo, hi);
    std::vector<std::int64_t> words(kChunks, 0);
    for (int j = lo; j < hi; ++j) {
      const auto x = static_cast<std::int64_t>(rng() >> 34) * (rng() % 2 == 0 ? 1 : -1);
      words[static_cast<std::size_t>(j)] += x * (std::int64_t{1} << 32);
      words[static_cast<std::size_t>(j) + 1] -= x;
    }
    words[static_cast<std::size_t>(lo)] += static_cast<std::int64_t>(rng() % 5) - 2;
    check(words, lo, hi, trial % 2 == 0 ? 0u : kPlain,
          "cancelling, trial " + std::to_string(trial));
  }
  // Ties q·2^s + 2^(s-1), one unit more or less or none, either sign: the normalised chunks of
  // the positive value (a few words below 2^32), negated word by word for the negative one.
  constexpr int P = std::numeric_limits<T>::digits;
  for (int trial = 0; trial < 4000; ++trial) {
    Store k;
    const int s = 1 + static_cast<int>(rng() % (32 * (kTopLo - 2)));
    const std::uint64_t q = (std::uint64_t{1} << (P - 1)) |
                            (rng() & ((std::uint64_t{1} << (P - 1)) - 1));
    k.template add_scaled<Residence::memory>(q, s, false);
    k.template add_scaled<Residence::memory>(1, s - 1, false);
    if (trial % 3 == 1) k.template add_scaled<Residence::memory>(1, 0, false);
    k.normalise();
    int lo = kChunks, hi = -1;
    for (int j = 0; j < kChunks; ++j) {
      if (k.chunk(j) != 0) {
        lo = std::min(lo, j);
        hi = j;
      }
    }
    std::vector<std::int64_t> words(kChunks, 0);
    const std::int64_t sign = trial % 2 == 0 ? 1 : -1;
    for (int j = 0; j < kChunks; ++j) words[static_cast<std::size_t>(j)] = sign * k.chunk(j);
    if (trial % 3 == 2) words[static_cast<std::size_t>(lo)] -= sign;  // one unit less
    if (hi - lo + 1 > Store::kNarrowWords || hi > kTopLo) continue;   // the +1's far from the tie
    check(words, lo, hi, kPlain, "tie, trial " + std::to_string(trial));
  }
  // The specials decide alone; an empty range is a sum of zeros.
  std::vector<std::int64_t> words(kChunks, 0);
  words[3] = 12345;
  for (const std::uint32_t flags :
       {Store::kNaN | kPlain, Store::kPositiveInfinity | kPlain, Store::kNegativeInfinity | kPlain,
        Store::kPositiveInfinity | Store::kNegativeInfinity}) {
    check(words, 3, 3, flags, "specials " + std::to_string(flags));
  }
  const std::vector<std::int64_t> zeros(kChunks, 0);
  check(zeros, 5, 4, 0u, "empty, every input -0");
  check(zeros, 5, 4, kPlain, "empty");
  // What it refuses: too wide, too close to the top chunk, a negative start.
  T out{};
  words.assign(kChunks, 1);
  EXPECT_FALSE(Store::round_narrow(words.data(), 0, Store::kNarrowWords, kPlain, out));
  EXPECT_FALSE(Store::round_narrow(words.data(), kTopLo, kTopLo + 1, kPlain, out));
  EXPECT_FALSE(Store::round_narrow(words.data(), -1, 2, kPlain, out));
  EXPECT_TRUE(
      Store::round_narrow(words.data(), kTopLo - Store::kNarrowWords + 1, kTopLo, kPlain, out));
}

}  // namespace
}  // namespace tunedreduce::exact::testing
