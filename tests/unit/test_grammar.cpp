// The command line's one grammar of element counts and lists (common/grammar.hpp): every form,
// every limit, every error message names the option and quotes the bad text.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/grammar.hpp"

namespace tunedreduce::grammar {
namespace {

using V = std::vector<std::uint64_t>;
constexpr std::uint64_t Ki = 1024, Mi = Ki * Ki, Gi = Mi * Ki;

/// The message of the usage error \p f throws ("accepted" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), exit_code::usage) << e.what();
    return e.what();
  }
  return "accepted";
}

TEST(Grammar, EveryFormOfOneCount) {
  EXPECT_EQ(count_value("1000"), 1000u);
  EXPECT_EQ(count_value(" 1000\t"), 1000u);
  EXPECT_EQ(count_value("2^20"), Mi);
  EXPECT_EQ(count_value("10^6"), 1000000u);
  EXPECT_EQ(count_value("2^0"), 1u);
  EXPECT_EQ(count_value("16Ki"), 16 * Ki);
  EXPECT_EQ(count_value("16Mi"), 16 * Mi);
  EXPECT_EQ(count_value("3Gi"), 3 * Gi);
  EXPECT_EQ(count_value("1Ti"), Gi * Ki);
  EXPECT_EQ(count_value("0"), 0u);
  // Saturates rather than wrapping: the limit check then says "above".
  EXPECT_EQ(count_value("2^64"), UINT64_MAX);
  EXPECT_EQ(count_value("99999999999999999999999"), UINT64_MAX);
  EXPECT_EQ(count_value("20000000Ti"), UINT64_MAX);
  for (const char* bad : {"", "x", "-5", "+5", "1.5", "2^", "^2", "1^5", "2^-1", "2^x", "16M",
                          "16mi", "Mi", "16 Mi", "1e6", "0x10", "2^20Mi", "2^99999"})
    EXPECT_FALSE(count_value(bad)) << bad;
}

TEST(Grammar, OneCountWithinLimits) {
  EXPECT_EQ(parse_count("--n", "16Mi"), 16 * Mi);
  EXPECT_EQ(parse_count("--n", "2^40"), max_count);
  EXPECT_EQ(error_of([] { parse_count("--n", "2^50"); }),
            "--n: invalid size '2^50': 1125899906842624 is above 2^40 = 1099511627776, the "
            "largest element count here");
  EXPECT_EQ(error_of([] { parse_count("--n", "0"); }),
            "--n: invalid size '0': 0 is below 1, the smallest element count here");
  EXPECT_EQ(error_of([] { parse_count("--n", "2^70"); }),
            "--n: invalid size '2^70': more than 2^64 is above 2^40 = 1099511627776, the "
            "largest element count here");
  EXPECT_EQ(error_of([] { parse_count("--n", "16M"); }),
            "--n: invalid size '16M' (an element count: N, B^E or N with Ki, Mi, Gi or Ti "
            "(1000, 2^20, 16Mi)); did you mean 16Mi?");
  EXPECT_EQ(error_of([] { parse_count("--n", "4k"); }).ends_with("did you mean 4Ki?"), true);
  EXPECT_EQ(error_of([] { parse_count("--n", "2^10,2^12"); }),
            "--n: takes one element count, not a list or range: '2^10,2^12'");
  EXPECT_EQ(error_of([] { parse_count("--n", "1..4+1"); }),
            "--n: takes one element count, not a list or range: '1..4+1'");
  EXPECT_EQ(error_of([] {
              parse_count("--n", "1", {2, 10});
            }),
            "--n: invalid size '1': 1 is below 2, the smallest element count here");
  // Control characters are shown, not sent to the terminal.
  EXPECT_TRUE(error_of([] {
                parse_count("--n", "\x1b[31m");
              }).starts_with("--n: invalid size '\\x1b[31m' ("));
}

TEST(Grammar, ACountGivenAsANumberHasTheSameLimitsAndMessages) {
  EXPECT_EQ(error_of([] { check_count("--n", 16 * Mi); }), "accepted");
  EXPECT_EQ(error_of([] { check_count("--n", 0); }),
            "--n: invalid size '0': 0 is below 1, the smallest element count here");
  EXPECT_EQ(error_of([] { check_count("--n", max_count + 1); }),
            "--n: invalid size '1099511627777': 1099511627777 is above 2^40 = 1099511627776, "
            "the largest element count here");
  EXPECT_EQ(error_of([] {
              check_count("--n", 64, {1, 32});
            }),
            "--n: invalid size '64': 64 is above 32, the largest element count here");
}

TEST(Grammar, ListsRangesAndTheirMix) {
  auto counts = [](const std::string& text) { return parse_counts("--sizes", {text}); };
  EXPECT_EQ(counts("1000"), V({1000}));
  EXPECT_EQ(counts("2^20,16Mi, 1000"), V({1000, Mi, 16 * Mi}));
  EXPECT_EQ(counts("4Ki,2^12,4096"), V({4096}));  // duplicates go
  EXPECT_EQ(counts("2^10..2^14*2"), V({Ki, 2 * Ki, 4 * Ki, 8 * Ki, 16 * Ki}));
  EXPECT_EQ(counts("2^10..2^14*4"), V({Ki, 4 * Ki, 16 * Ki}));
  EXPECT_EQ(counts("1000..1300+100"), V({1000, 1100, 1200, 1300}));
  EXPECT_EQ(counts("1000..1250+100"), V({1000, 1100, 1200}));
  EXPECT_EQ(counts("1Ki..4Ki+1Ki"), V({Ki, 2 * Ki, 3 * Ki, 4 * Ki}));
  EXPECT_EQ(counts("100..200*1.5"), V({100, 150}));
  EXPECT_EQ(counts("64..256*2^1"), V({64, 128, 256}));
  EXPECT_EQ(counts("5..5+1"), V({5}));
  EXPECT_EQ(counts("10, 2^10..2^11*2 ,3Mi"), V({10, Ki, 2 * Ki, 3 * Mi}));
  // An option given twice: the union.
  EXPECT_EQ(parse_counts("--sizes", {"2^20", "2^10..2^11*2"}), V({Ki, 2 * Ki, Mi}));
  // The default of tune and bench.
  EXPECT_EQ(counts("2^10..2^30*2").size(), 21u);
}

TEST(Grammar, ItemsKeepHowTheyWereWritten) {
  const auto items = parse_count_items("--sizes", "12, 2^12,4Ki,1..8*2");
  ASSERT_EQ(items.size(), 4u);
  EXPECT_TRUE(items[0].bare);
  EXPECT_EQ(items[0].text, "12");
  EXPECT_FALSE(items[1].bare);
  EXPECT_FALSE(items[2].bare);
  EXPECT_TRUE(items[3].is_range);
  EXPECT_EQ(items[3].value, 1u);
  EXPECT_EQ(items[3].to, 8u);
  EXPECT_EQ(items[3].factor, 2.0);
  EXPECT_FALSE(items[3].step);
}

TEST(Grammar, BadCountsNameTheOptionAndTheText) {
  auto err = [](const std::string& text) {
    return error_of([&] { parse_counts("--sizes", {text}); });
  };
  EXPECT_EQ(err("1024..4096"),
            "--sizes: a range is FROM..TO*FACTOR or FROM..TO+STEP, got '1024..4096'");
  EXPECT_EQ(err("12x"),
            "--sizes: invalid size '12x' (an element count: N, B^E or N with Ki, Mi, "
            "Gi or Ti (1000, 2^20, 16Mi))");
  EXPECT_EQ(err("10-30"),
            "--sizes: invalid size '10-30' (an element count: N, B^E or N with Ki, "
            "Mi, Gi or Ti (1000, 2^20, 16Mi))");
  EXPECT_EQ(err("2^10,,2^12"), "--sizes: empty item in '2^10,,2^12'");
  EXPECT_EQ(err("2^10,"), "--sizes: empty item in '2^10,'");
  EXPECT_EQ(err(""), "--sizes: no element count given");
  EXPECT_EQ(err("x..2^20*2"),
            "--sizes: invalid size 'x' (an element count: N, B^E or N with Ki, "
            "Mi, Gi or Ti (1000, 2^20, 16Mi))");
  EXPECT_EQ(err("1..2^20*y"),
            "--sizes: invalid factor 'y' in '1..2^20*y' (a number greater than "
            "1: 2, 1.5, 2^2)");
  EXPECT_EQ(err("1..2^20+y"),
            "--sizes: invalid step 'y' in '1..2^20+y' (an element count: N, B^E "
            "or N with Ki, Mi, Gi or Ti (1000, 2^20, 16Mi))");
  EXPECT_EQ(err("2^20..2^10*2"), "--sizes: '2^20..2^10*2': from is greater than to");
  EXPECT_EQ(err("1..10*1"), "--sizes: '1..10*1': a factor of at most 1 does not advance");
  EXPECT_EQ(err("1..10+0"), "--sizes: '1..10+0': a step below 1 does not advance");
  EXPECT_EQ(err("1..100000+1"),
            "--sizes: '1..100000+1': the range gives more than 4096 sizes; use a larger step or "
            "factor");
  EXPECT_EQ(err("0..8+1"),
            "--sizes: invalid size '0': 0 is below 1, the smallest element count here");
  EXPECT_EQ(err("1..2^41*2"),
            "--sizes: invalid size '2^41': 2199023255552 is above 2^40 = "
            "1099511627776, the largest element count here");
  EXPECT_EQ(err("2^50"),
            "--sizes: invalid size '2^50': 1125899906842624 is above 2^40 = "
            "1099511627776, the largest element count here");
  EXPECT_EQ(error_of([] {
              parse_counts("--sizes", {"1..3000+1", "5000..8000+1"});
            }),
            "--sizes: gives 6001 sizes; at most 4096 are allowed");
  std::string many;  // a thousand ranges: refused before all of them are expanded
  for (int i = 0; i < 1000; ++i) {
    if (i) many += ',';
    many.append(std::to_string(i * 5000 + 1)).append("..").append(std::to_string(i * 5000 + 4000));
    many.append("+1");
  }
  EXPECT_EQ(error_of([&] { parse_counts("--sizes", {many}); }),
            "--sizes: gives more than 4096 sizes; at most 4096 are allowed");
  EXPECT_EQ(parse_counts("--sizes", {"1..4096+1,1..4096+1,1..4096+1"}).size(), 4096u);
  EXPECT_EQ(error_of([] {
              parse_counts("--sizes", {"2^35"}, {1, std::uint64_t{1} << 34});
            }),
            "--sizes: invalid size '2^35': 34359738368 is above 2^34 = 17179869184, the largest "
            "element count here");
}

TEST(Grammar, CountText) {
  EXPECT_EQ(count_text(Mi), "2^20");
  EXPECT_EQ(count_text(64), "2^6");
  EXPECT_EQ(count_text(32), "32");
  EXPECT_EQ(count_text(1000), "1000");
  EXPECT_EQ(count_text(std::uint64_t{1} << 40), "2^40");
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{64}, 3 * Mi, Gi})
    EXPECT_EQ(count_value(count_text(n)), n);
}

TEST(Grammar, ListsSplitAtCommasAndJoinRepeats) {
  using S = std::vector<std::string>;
  EXPECT_EQ(split_list("--dtypes", {"i32"}), S({"i32"}));
  EXPECT_EQ(split_list("--dtypes", {"i32,f32", "f64"}), S({"i32", "f32", "f64"}));
  EXPECT_EQ(split_list("--dtypes", {" i32 , f32 "}), S({"i32", "f32"}));
  EXPECT_EQ(error_of([] { split_list("--dtypes", {"i32,,f32"}); }),
            "--dtypes: empty item in 'i32,,f32'");
  EXPECT_EQ(error_of([] { split_list("--ops", {"sum,"}); }), "--ops: empty item in 'sum,'");
  EXPECT_EQ(error_of([] { split_list("--ops", {""}); }), "--ops: empty value");
  EXPECT_EQ(error_of([] { split_list("--ops", {}); }), "--ops: no value given");
}

}  // namespace
}  // namespace tunedreduce::grammar
