// The kernel budget of a deployment library (deploy/budget.hpp): which kernels serve which winner
// rows, on made-up measurements where the answer is known, and on the two recorded samples.

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/error.hpp"
#include "db/check.hpp"
#include "db/database.hpp"
#include "db/db_error.hpp"
#include "deploy/budget.hpp"
#include "kernels/manifest.hpp"
#include "runtime/defaults.hpp"
#include "tests/db/test_util.hpp"

namespace tunedreduce::deploy {
namespace {

namespace fs = std::filesystem;
using db::test::TempDir;

constexpr std::uint64_t no_limit = std::uint64_t{1} << 40;

// --- made-up measurements ------------------------------------------------------------------

/// One device, one run, f32 sum, cold: measurements and winners written by hand.
struct Fake {
  db::Dataset d;
  std::int64_t seq = 0;
  std::map<std::string, std::uint64_t> limits;  // the registry: kernel -> largest n

  Fake() {
    for (const char* key : {"devA", "devB"}) {
      db::DeviceRow dev;
      dev.key = key;
      dev.fingerprint.name = std::string("GPU ") + key;
      d.devices[key] = dev;
    }
    db::RunRow run;
    run.uuid = "run1";
    run.started_at = "2026-11-25T00:00:00.000Z";
    d.runs[run.uuid] = run;
  }

  db::MeasurementRef measure(const std::string& kernel, std::uint64_t n, double median_us,
                             int repeats = 10, const std::string& device = "devA",
                             db::Outcome outcome = db::Outcome::ok) {
    db::MeasurementRow row;
    row.ref = {"run1", ++seq};
    row.device_key = device;
    row.m.kernel_id = kernel;
    row.m.dtype = DType::f32;
    row.m.op = Op::sum;
    row.m.n = n;
    row.m.l2_mode = db::L2Mode::cold;
    row.m.outcome = outcome;
    if (outcome == db::Outcome::ok) row.m.median_us = median_us;
    row.m.repeats = repeats;
    d.measurements[row.ref] = row;
    if (!limits.count(kernel)) limits[kernel] = no_limit;
    return row.ref;
  }

  /// A winner of \p kernel for [lo, hi] whose evidence is its latest measurement at \p at.
  void winner(const std::string& kernel, std::uint64_t lo, std::uint64_t hi, std::uint64_t at,
              const std::string& device = "devA") {
    db::WinnerRow w;
    w.device_key = device;
    w.w.dtype = DType::f32;
    w.w.op = Op::sum;
    w.w.l2_mode = db::L2Mode::cold;
    w.w.n_lo = lo;
    w.w.n_hi = hi;
    w.w.kernel_id = kernel;
    for (const auto& [ref, row] : d.measurements)
      if (row.m.kernel_id == kernel && row.m.n == at && row.device_key == device) w.evidence = ref;
    w.source = "fake.db";
    d.winners.push_back(w);
  }

  BudgetOptions options(double tolerance, std::set<std::string> free = {}) const {
    BudgetOptions o;
    o.tolerance = tolerance;
    o.free_kernels = std::move(free);
    o.max_elements = [lim = limits](const std::string& id) -> std::optional<std::uint64_t> {
      const auto it = lim.find(id);
      if (it == lim.end()) return std::nullopt;
      return it->second;
    };
    return o;
  }
};

std::vector<std::string> chosen_of(const Budget& b) {
  std::vector<std::string> out;
  for (const RowChoice& r : b.rows) out.push_back(r.chosen.value_or("(none)"));
  return out;
}

/// Three rows with winners a, b, c at the sizes 1000, 2000 and 3000, where every one of a..e is
/// measured; d is 0.5 % slower than the winner at every size, e 3 % slower.
Fake three_rows() {
  Fake f;
  const std::map<std::string, std::vector<double>> medians = {{"k.a", {10.0, 30.0, 50.0}},
                                                              {"k.b", {12.0, 20.0, 60.0}},
                                                              {"k.c", {15.0, 25.0, 40.0}},
                                                              {"k.d", {10.05, 20.1, 40.2}},
                                                              {"k.e", {10.3, 20.6, 41.2}}};
  const std::uint64_t sizes[] = {1000, 2000, 3000};
  for (const auto& [k, ms] : medians)
    for (int i = 0; i < 3; ++i) f.measure(k, sizes[i], ms[i]);
  f.winner("k.a", 1, 1500, 1000);
  f.winner("k.b", 1501, 2500, 2000);
  f.winner("k.c", 2501, no_limit, 3000);
  return f;
}

TEST(Budget, ParsesATolerance) {
  EXPECT_DOUBLE_EQ(parse_tolerance("1%"), 0.01);
  EXPECT_DOUBLE_EQ(parse_tolerance("0.5 %"), 0.005);
  EXPECT_DOUBLE_EQ(parse_tolerance("2"), 0.02);
  EXPECT_DOUBLE_EQ(parse_tolerance("0"), 0.0);
  EXPECT_DOUBLE_EQ(parse_tolerance("100%"), 1.0);
  for (const auto& [text, why] :
       std::vector<std::pair<std::string, std::string>>{{"-1%", "negative"},
                                                        {"-0", "negative"},
                                                        {"1%%", "not a number"},
                                                        {"one", "not a number"},
                                                        {"", "no number"},
                                                        {"%", "no number"},
                                                        {"inf", "not a finite number"},
                                                        {"nan%", "not a finite number"},
                                                        {"150%", "more than 100 %"}}) {
    try {
      parse_tolerance(text);
      ADD_FAILURE() << "'" << text << "' was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), exit_code::usage);
      const std::string msg = e.what();
      EXPECT_NE(msg.find("--tolerance '" + text + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(why), std::string::npos) << msg;
    }
  }
}

TEST(Budget, ANegativeToleranceIsRefused) {
  const Fake f = three_rows();
  for (double t : {-0.01, std::nan(""), HUGE_VAL}) {
    try {
      choose_kernels(f.d, f.options(t));
      ADD_FAILURE() << t << " was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tolerance must be a finite fraction of at least 0"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Budget, OneKernelCloseToEveryWinnerServesEveryRow) {
  const Fake f = three_rows();
  const Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.d", "k.d", "k.d"}));
  EXPECT_EQ(b.kernels, std::set<std::string>{"k.d"});
  EXPECT_EQ(b.original_kernels, (std::set<std::string>{"k.a", "k.b", "k.c"}));
  EXPECT_EQ(b.changed, 3u);
  ASSERT_EQ(b.devices.size(), 1u);
  const DeviceSummary& dev = b.devices.at("devA");
  EXPECT_EQ(dev.name, "GPU devA (devA)");
  EXPECT_EQ(dev.rows, 3u);
  EXPECT_EQ(dev.changed, 3u);
  ASSERT_TRUE(dev.worst_slowdown);
  EXPECT_NEAR(*dev.worst_slowdown, 0.005, 1e-9);
  EXPECT_EQ(dev.worst_row.rfind("f32 sum [", 0), 0u) << dev.worst_row;
  EXPECT_NE(dev.worst_row.find("], L2 cold: k."), std::string::npos) << dev.worst_row;
  EXPECT_NE(dev.worst_row.find(" -> k.d"), std::string::npos) << dev.worst_row;
  for (const RowChoice& r : b.rows) {
    EXPECT_TRUE(r.compared);
    EXPECT_EQ(r.points.size(), 1u);
    ASSERT_TRUE(r.slowdown);
    EXPECT_NEAR(*r.slowdown, 0.005, 1e-9);
  }
  // Below d's distance every winner keeps its own kernel.
  for (double t : {0.0, 0.004}) {
    const Budget keep = choose_kernels(f.d, f.options(t));
    EXPECT_EQ(chosen_of(keep), (std::vector<std::string>{"k.a", "k.b", "k.c"})) << t;
    EXPECT_EQ(keep.changed, 0u);
    EXPECT_FALSE(keep.devices.at("devA").worst_slowdown);
  }
}

TEST(Budget, TheDeploymentDatabaseNamesTheChosenKernelsWithTheirOwnEvidence) {
  const Fake f = three_rows();
  const Budget b = choose_kernels(f.d, f.options(0.01));
  const db::Dataset out = apply_budget(f.d, b);
  ASSERT_EQ(out.winners.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const db::WinnerRow& w = out.winners[i];
    EXPECT_EQ(w.w.kernel_id, "k.d");
    const db::MeasurementRow& ev = out.measurements.at(w.evidence);
    EXPECT_EQ(ev.m.kernel_id, "k.d");
    EXPECT_EQ(ev.m.n, f.d.measurements.at(f.d.winners[i].evidence).m.n);
    // The runner-up is the winner it replaced.
    EXPECT_EQ(w.w.runner_up_kernel_id, f.d.winners[i].w.kernel_id);
    ASSERT_TRUE(w.runner_up);
    EXPECT_EQ(*w.runner_up, f.d.winners[i].evidence);
    EXPECT_EQ(w.w.n_lo, f.d.winners[i].w.n_lo);
    EXPECT_EQ(w.w.n_hi, f.d.winners[i].w.n_hi);
  }
}

TEST(Budget, KernelsTheLibraryHasAnywayServeFirst) {
  Fake f = three_rows();
  // f: 0.8 % from the best everywhere, slower than d.
  f.measure("k.f", 1000, 10.08);
  f.measure("k.f", 2000, 20.16);
  f.measure("k.f", 3000, 40.32);
  EXPECT_EQ(choose_kernels(f.d, f.options(0.01)).kernels, std::set<std::string>{"k.d"});
  const Budget b = choose_kernels(f.d, f.options(0.01, {"k.f"}));
  EXPECT_EQ(b.kernels, std::set<std::string>{"k.f"});
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.f", "k.f", "k.f"}));
  // A free kernel that serves no row is not one of the winners' kernels.
  EXPECT_EQ(choose_kernels(f.d, f.options(0.001, {"k.f"})).kernels,
            (std::set<std::string>{"k.a", "k.b", "k.c"}));
}

TEST(Budget, TheKernelThatServesMostPointsIsTakenFirstTiesToTheCloserThenTheSmallerId) {
  Fake f;
  // Row 1 has two points (1000, 1100), rows 2 and 3 one each. x serves rows 1 and 2 (3 points),
  // y rows 2 and 3 (2 points): x first. Row 3 is left: its own c (measured 0.75 % slower than
  // y and z there, a winner's noise), y and z serve one point each; y and z are closer, and
  // equally close: the smaller id, y.
  const std::map<std::string, std::vector<double>> medians = {
      {"k.a", {10, 11, 30, 50}},         {"k.b", {20, 22, 20, 60}},   {"k.c", {30, 33, 40, 40.3}},
      {"k.x", {10.05, 11.05, 20.1, 90}}, {"k.y", {90, 90, 20.1, 40}}, {"k.z", {90, 90, 90, 40}}};
  const std::uint64_t sizes[] = {1000, 1100, 2000, 3000};
  for (const auto& [k, ms] : medians)
    for (int i = 0; i < 4; ++i) f.measure(k, sizes[i], ms[i]);
  f.winner("k.a", 1, 1500, 1000);
  f.winner("k.b", 1501, 2500, 2000);
  f.winner("k.c", 2501, no_limit, 3000);
  const Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(b.rows[0].points, (std::vector<std::uint64_t>{1000, 1100}));
  // Row 2: x and y are equally fast at its size, and b is not in the library: the smaller id.
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.x", "k.x", "k.y"}));
  EXPECT_EQ(b.kernels, (std::set<std::string>{"k.x", "k.y"}));
}

TEST(Budget, AKernelMadeRedundantByLaterOnesIsDroppedAgain) {
  Fake f;
  // Six rows of one point each. s0 serves rows 2..5 and is taken first; rows 1 and 6 are left,
  // which s1 (rows 1..3) and s2 (rows 4..6) serve, measured faster there than the rows' own
  // kernels: s1 and s2 are taken, and s0, whose rows they serve, is dropped.
  std::map<std::string, std::vector<double>> medians;
  for (const char* k : {"k.o1", "k.o2", "k.o3", "k.o4", "k.o5", "k.o6", "k.s0", "k.s1", "k.s2"})
    medians[k] = std::vector<double>(6, 90.0);
  for (int i = 0; i < 6; ++i) medians["k.o" + std::to_string(i + 1)][i] = 10.0;
  medians["k.o1"][0] = medians["k.o6"][5] = 10.03;
  for (int i = 1; i <= 4; ++i) medians["k.s0"][i] = 10.05;
  medians["k.s1"] = {10.0, 10.05, 10.05, 90, 90, 90};
  medians["k.s2"] = {90, 90, 90, 10.05, 10.05, 10.0};
  for (const auto& [k, ms] : medians)
    for (int i = 0; i < 6; ++i) f.measure(k, 1000 * (i + 1), ms[i]);
  for (std::uint64_t i = 1; i <= 6; ++i)
    f.winner("k.o" + std::to_string(i), 1000 * i - 500, i == 6 ? no_limit : 1000 * i + 499,
             1000 * i);
  const Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(b.kernels, (std::set<std::string>{"k.s1", "k.s2"}));
  EXPECT_EQ(chosen_of(b),
            (std::vector<std::string>{"k.s1", "k.s1", "k.s1", "k.s2", "k.s2", "k.s2"}));
}

TEST(Budget, AKernelMustRunTheRowsLargestSizeAndBeInTheRegistry) {
  Fake f = three_rows();
  // d runs sizes up to 2500 only: it serves rows 1 and 2, not row 3; u, faster than every
  // winner, is not in the registry.
  f.limits["k.d"] = 2500;
  for (std::uint64_t n : {1000, 2000, 3000}) f.measure("k.u", n, 1.0);
  f.limits.erase("k.u");
  const Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.d", "k.d", "k.c"}));
  for (const RowChoice& r : b.rows) EXPECT_TRUE(r.compared);
}

TEST(Budget, AWinnerWhoseKernelTheRegistryLacksGoesToAServerOrIsLeftOut) {
  Fake f = three_rows();
  f.limits.erase("k.a");  // the winner of row 1 is a kernel of another registry
  Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.d", "k.d", "k.d"}));
  EXPECT_FALSE(b.original_kernels.count("k.a"));
  b = choose_kernels(f.d, f.options(0.0));
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"(none)", "k.b", "k.c"}));
  EXPECT_EQ(b.dropped, 1u);
  EXPECT_EQ(b.devices.at("devA").dropped, 1u);
  EXPECT_EQ(apply_budget(f.d, b).winners.size(), 2u);
}

TEST(Budget, TheMostRepeatedMeasurementOfAKernelStandsTheLatestOfEquals) {
  Fake f = three_rows();
  // d again at 1000 with more repeats and 2 % slower: that measurement stands, d no longer
  // serves row 1.
  f.measure("k.d", 1000, 10.2, 20);
  Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.a", "k.d", "k.d"}));
  // An even later one with as many repeats, fast again: the latest of equals stands.
  f.measure("k.d", 1000, 10.01, 20);
  b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.d", "k.d", "k.d"}));
  // A failed measurement is no measurement.
  f.measure("k.d", 1000, 0, 40, "devA", db::Outcome::incorrect);
  EXPECT_EQ(chosen_of(choose_kernels(f.d, f.options(0.01))),
            (std::vector<std::string>{"k.d", "k.d", "k.d"}));
}

TEST(Budget, SizesWhereOnlyTwoKernelsWereMeasuredAreNoPoints) {
  Fake f = three_rows();
  // A bisection between rows 1 and 2 measured a and b at 1400 and 1600: d was not measured
  // there, and still serves both rows.
  f.measure("k.a", 1400, 14);
  f.measure("k.b", 1400, 14.5);
  f.measure("k.a", 1600, 16.5);
  f.measure("k.b", 1600, 16);
  const Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(b.rows[0].points, std::vector<std::uint64_t>{1000});
  EXPECT_EQ(b.rows[1].points, std::vector<std::uint64_t>{2000});
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.d", "k.d", "k.d"}));
  // A third kernel measured there makes it a point, where d has no measurement: then it
  // cannot serve row 1.
  f.measure("k.e", 1400, 14.2);
  EXPECT_EQ(choose_kernels(f.d, f.options(0.01)).rows[0].points,
            (std::vector<std::uint64_t>{1000, 1400}));
  EXPECT_EQ(chosen_of(choose_kernels(f.d, f.options(0.01))),
            (std::vector<std::string>{"k.a", "k.d", "k.d"}));
}

/// \p f with a second device, devB, whose winners are \p winners at 1000, 2000, 3000 (10, 20,
/// 40 us), where a..c are 20 % and d and e 3 % slower.
void add_device_b(Fake& f, const std::vector<std::string>& winners) {
  std::map<std::string, std::vector<double>> medians = {{"k.a", {12, 24, 48}},
                                                        {"k.b", {12, 24, 48}},
                                                        {"k.c", {12, 24, 48}},
                                                        {"k.d", {10.3, 20.6, 41.2}},
                                                        {"k.e", {10.3, 20.6, 41.2}}};
  for (std::size_t i = 0; i < 3; ++i) {
    medians[winners[i]] = {90, 90, 90};
    medians[winners[i]][i] = 10.0 * (i == 2 ? 4 : i + 1);
  }
  const std::uint64_t sizes[] = {1000, 2000, 3000};
  for (const auto& [k, ms] : medians)
    for (int i = 0; i < 3; ++i) f.measure(k, sizes[i], ms[i], 10, "devB");
  f.winner(winners[0], 1, 1500, 1000, "devB");
  f.winner(winners[1], 1501, 2500, 2000, "devB");
  f.winner(winners[2], 2501, no_limit, 3000, "devB");
}

TEST(Budget, EachDeviceIsComparedWithItsOwnMeasurements) {
  // devB's winners are x, y, z; d is 3 % slower there: it serves devA's rows, not devB's.
  Fake f = three_rows();
  add_device_b(f, {"k.x", "k.y", "k.z"});
  const Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.d", "k.d", "k.d", "k.x", "k.y", "k.z"}));
  EXPECT_EQ(b.devices.at("devA").changed, 3u);
  EXPECT_EQ(b.devices.at("devB").changed, 0u);
  EXPECT_FALSE(b.devices.at("devB").worst_slowdown);
  EXPECT_EQ(b.devices.at("devB").name, "GPU devB (devB)");
  EXPECT_EQ(b.kernels, (std::set<std::string>{"k.d", "k.x", "k.y", "k.z"}));
}

TEST(Budget, KernelsAnotherDeviceNeedsServeTheOthersToo) {
  // devB needs a, b and c itself: then they serve devA's rows as well, and d is not needed.
  Fake f = three_rows();
  add_device_b(f, {"k.a", "k.b", "k.c"});
  const Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.a", "k.b", "k.c", "k.a", "k.b", "k.c"}));
  EXPECT_EQ(b.kernels, (std::set<std::string>{"k.a", "k.b", "k.c"}));
  EXPECT_EQ(b.changed, 0u);
}

TEST(Budget, AWinnerWithoutMeasurementsIsAnErrorThatNamesIt) {
  Fake f = three_rows();
  // Row 2's evidence failed.
  f.d.measurements.at(f.d.winners[1].evidence).m.outcome = db::Outcome::timeout;
  f.d.measurements.at(f.d.winners[1].evidence).m.median_us.reset();
  try {
    choose_kernels(f.d, f.options(0.01));
    ADD_FAILURE() << "taken";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.exit_code(), exit_code::db_check_failed);
    EXPECT_NE(msg.find("GPU devA (devA): f32 sum [1501, 2500], L2 cold, kernel k.b"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("'fake.db'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no ok measurement of its kernel"), std::string::npos) << msg;
  }
  // No evidence at all.
  f = three_rows();
  f.d.measurements.erase(f.d.winners[2].evidence);
  EXPECT_THROW(choose_kernels(f.d, f.options(0.01)), Error);
}

TEST(Budget, ADatabaseOfWinnersOnlyKeepsItsWinners) {
  Fake f;
  f.measure("k.a", 1000, 10);
  f.measure("k.b", 1000, 10.02);  // the runner-up
  f.measure("k.b", 2000, 20);
  f.winner("k.a", 1, 1500, 1000);
  f.winner("k.b", 1501, no_limit, 2000);
  const Budget b = choose_kernels(f.d, f.options(0.01));
  EXPECT_EQ(chosen_of(b), (std::vector<std::string>{"k.b", "k.b"}));
  EXPECT_TRUE(b.rows[0].compared);
  EXPECT_FALSE(b.rows[1].compared);
  EXPECT_EQ(b.devices.at("devA").uncompared, 1u);
}

// --- the recorded samples -----------------------------------------------------------------------

const fs::path h100_db = TR_TEST_DATA "/h100-sample.db";
const fs::path h200_db = TR_TEST_DATA "/h200-sample.db";

BudgetOptions registry_options(double tolerance) {
  BudgetOptions o;
  o.tolerance = tolerance;
  for (const runtime::DefaultRule& r : runtime::builtin_default_rules())
    o.free_kernels.insert(r.kernel_id);
  o.max_elements = [](const std::string& id) -> std::optional<std::uint64_t> {
    const kernels::ManifestEntry* e = kernels::manifest_find(id);
    if (!e) return std::nullopt;
    return kernels::max_elements_of(e->params);
  };
  return o;
}

/// Per (device, dtype, op, L2 mode, n, kernel): the median of the most repeated ok measurement,
/// the latest (greater seq: the samples have one run each) of equals. Computed here apart from
/// the budget's own tables.
using Key = std::tuple<std::string, DType, Op, db::L2Mode, std::uint64_t>;
std::map<Key, std::map<std::string, std::pair<int, double>>> medians_of(const db::Dataset& d) {
  std::map<Key, std::map<std::string, std::pair<int, double>>> out;
  for (const auto& [ref, row] : d.measurements) {  // by (run, seq): later ones come later
    if (row.m.outcome != db::Outcome::ok) continue;
    auto& slot = out[{row.device_key, row.m.dtype, row.m.op, row.m.l2_mode, row.m.n}];
    auto it = slot.find(row.m.kernel_id);
    if (it == slot.end() || row.m.repeats >= it->second.first)
      slot[row.m.kernel_id] = {row.m.repeats, *row.m.median_us};
  }
  return out;
}

class Samples : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    TempDir dir;
    merged_ = new db::Dataset(merge_inputs({h100_db, h200_db}, dir.path()));
  }
  static void TearDownTestSuite() {
    delete merged_;
    merged_ = nullptr;
  }
  static db::Dataset* merged_;
};
db::Dataset* Samples::merged_ = nullptr;

TEST_F(Samples, EveryPointIsServedWithinTheTolerance) {
  const db::Dataset& d = *merged_;
  ASSERT_EQ(d.winners.size(), 51u);
  const auto medians = medians_of(d);
  std::map<double, std::size_t> kernels;
  for (double t : {0.0, 0.01, 0.02, 0.05}) {
    const Budget b = choose_kernels(d, registry_options(t));
    ASSERT_EQ(b.rows.size(), d.winners.size());
    EXPECT_EQ(b.dropped, 0u);
    std::size_t changed = 0;
    for (const RowChoice& r : b.rows) {
      ASSERT_TRUE(r.chosen) << r.description;
      EXPECT_TRUE(b.kernels.count(*r.chosen));
      ASSERT_FALSE(r.points.empty());
      if (!r.changed()) continue;
      ++changed;
      for (std::uint64_t n : r.points) {
        const auto& at =
            medians.at({r.row.device_key, r.row.w.dtype, r.row.w.op, r.row.w.l2_mode, n});
        double best = HUGE_VAL;
        for (const auto& [k, rm] : at)
          if (kernels::manifest_find(k) || k == r.row.w.kernel_id) best = std::min(best, rm.second);
        ASSERT_TRUE(at.count(*r.chosen)) << r.description << " at " << n;
        const double mine = at.at(*r.chosen).second;
        EXPECT_LE(mine, best * (1 + t)) << r.description << " -> " << *r.chosen << " at " << n;
        // At tolerance 0 a row changes only to a kernel at least as fast as its own.
        if (t == 0 && at.count(r.row.w.kernel_id)) {
          EXPECT_LE(mine, at.at(r.row.w.kernel_id).second) << r.description;
        }
      }
      ASSERT_TRUE(r.slowdown);
      EXPECT_LE(*r.slowdown, t + 1e-12) << r.description;
    }
    EXPECT_EQ(changed, b.changed);
    kernels[t] = b.kernels.size();
    // Every device's worst slowdown is one of its rows'.
    for (const auto& [key, dev] : b.devices)
      if (dev.changed) {
        ASSERT_TRUE(dev.worst_slowdown) << key;
        EXPECT_LE(*dev.worst_slowdown, t + 1e-12);
      }
  }
  // A budget of 2 % takes fewer kernels than none.
  EXPECT_LT(kernels[0.02], kernels[0.0]);
}

TEST_F(Samples, TheSameInputGivesTheSameChoice) {
  const Budget a = choose_kernels(*merged_, registry_options(0.01));
  const Budget b = choose_kernels(*merged_, registry_options(0.01));
  EXPECT_EQ(chosen_of(a), chosen_of(b));
  EXPECT_EQ(a.kernels, b.kernels);
}

std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, std::string>>
winners_of(const fs::path& p) {
  db::Database d = db::Database::open_reader(p);
  std::map<std::int64_t, std::string> keys;
  for (const db::DeviceRecord& dev : d.devices()) keys[dev.id] = dev.key;
  std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, std::string>> out;
  for (const db::WinnerRecord& w : d.winners())
    out.emplace_back(keys.at(w.device_id),
                     std::string(dtype_name(w.dtype)) + " " + op_name(w.op) + " " +
                         db::l2_mode_name(w.l2_mode),
                     w.n_lo, w.n_hi, w.kernel_id);
  return out;
}

TEST(BudgetFiles, TheOrderOfTheDatabasesDoesNotMatter) {
  TempDir dir;
  const Budget a = deploy_database({h100_db, h200_db}, dir / "a.db", registry_options(0.02));
  const Budget b = deploy_database({h200_db, h100_db}, dir / "b.db", registry_options(0.02));
  EXPECT_EQ(chosen_of(a), chosen_of(b));
  EXPECT_EQ(a.kernels, b.kernels);
  const auto wa = winners_of(dir / "a.db");
  EXPECT_EQ(wa, winners_of(dir / "b.db"));
  EXPECT_EQ(wa.size(), 51u);
  EXPECT_GT(a.changed, 0u);
}

TEST(BudgetFiles, TheDeploymentDatabaseNamesOnlyTheBudgetsKernelsAndChecksClean) {
  TempDir dir;
  const fs::path out = dir / "deploy.db";
  const Budget b = deploy_database({h100_db, h200_db}, out, registry_options(0.02));
  std::set<std::string> named;
  for (const auto& w : winners_of(out)) named.insert(std::get<4>(w));
  EXPECT_EQ(named, b.kernels);
  std::set<std::string> known;
  for (const kernels::ManifestEntry& e : kernels::manifest()) known.insert(e.id);
  db::Database d = db::Database::open_reader(out);
  const db::CheckReport report = db::check_database(d, known, true);
  EXPECT_TRUE(report.ok()) << report.winners_without_ok_evidence << " "
                           << report.overlapping_winners;
  // The measurements are all there: the deployment database is the merge, rows rewritten.
  EXPECT_EQ(d.counts().measurements, 2 * 12180);
  // Journal mode DELETE, as a merge: it ships as one file.
  EXPECT_EQ(d.connection().query_text("PRAGMA journal_mode"), "delete");
  // It is never overwritten.
  try {
    deploy_database({h100_db}, out, registry_options(0.02));
    ADD_FAILURE() << "overwrote";
  } catch (const db::DbError& e) {
    EXPECT_EQ(e.problem(), db::Problem::exists);
  }
  EXPECT_THROW(deploy_database({h100_db}, dir / "no" / "such.db", registry_options(0.02)),
               db::DbError);
}

TEST(BudgetFiles, AnInputWhoseWinnerLacksItsMeasurementIsNamed) {
  TempDir dir;
  const fs::path bad = dir / "bad.db";
  fs::copy_file(h100_db, bad);
  {
    db::Database d = db::Database::open_writer(bad);
    d.connection().exec(
        "UPDATE measurements SET outcome = 'timeout', median_us = NULL, error = 'test'"
        " WHERE id = (SELECT measurement_id FROM winners ORDER BY id LIMIT 1)");
  }
  try {
    deploy_database({h200_db, bad}, dir / "out.db", registry_options(0.01));
    ADD_FAILURE() << "taken";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.exit_code(), exit_code::db_check_failed);
    EXPECT_NE(msg.find(db::quoted(bad) + ": the winner for NVIDIA H100 80GB HBM3"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("is 'timeout', not ok"), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(dir / "out.db"));
  // Deleted.
  {
    db::Database d = db::Database::open_writer(bad);
    d.connection().exec(
        "PRAGMA foreign_keys = OFF; DELETE FROM measurements"
        " WHERE id = (SELECT measurement_id FROM winners ORDER BY id LIMIT 1)");
  }
  try {
    deploy_database({bad}, dir / "out.db", registry_options(0.01));
    ADD_FAILURE() << "taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not in the database"), std::string::npos) << e.what();
  }
  // Nothing left beside the output: no scratch merge.
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().rfind("bad.db", 0), 0u) << entry.path();
}

}  // namespace
}  // namespace tunedreduce::deploy
