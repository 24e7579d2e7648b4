#pragma once
// The command line's grammar, one parser for every command (docs/cli.md, "Element counts" and
// "Lists"):
//
//   count   N | B^E | N followed by Ki, Mi, Gi or Ti     1000, 2^20, 10^6, 16Mi
//   item    count | count..count*FACTOR | count..count+STEP
//   counts  item[,item]...                                2^10..2^30*2, 1000,2^20,16Mi
//   list    value[,value]...                              i32,f32 (and the option repeated)
//
// A FACTOR is a number (1.5) or B^E; a STEP is a count. Every failure is an
// Error(exit_code::usage) whose message starts with the option ("--sizes: ...") and quotes the
// bad text.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunedreduce::grammar {

/// The largest n a kernel accepts (kernels::max_elements): the default upper limit of counts.
inline constexpr std::uint64_t max_count = std::uint64_t{1} << 40;
/// The most sizes a list or range may give (the tuner's max_grid_sizes).
inline constexpr std::size_t max_sizes = 4096;

/// One line each, for --help texts and the man page.
inline constexpr const char* count_syntax = "N, B^E or N with Ki, Mi, Gi or Ti (1000, 2^20, 16Mi)";
inline constexpr const char* counts_syntax =
    "element counts: N, B^E or N with Ki/Mi/Gi/Ti (1000, 2^20, 16Mi), comma-separated, and "
    "ranges FROM..TO*FACTOR or FROM..TO+STEP (2^10..2^30*2)";

struct CountLimits {
  std::uint64_t min = 1;
  std::uint64_t max = max_count;
};

/// One item of a counts text, as written; nothing checked but the syntax.
struct CountItem {
  std::string text;   // the item, trimmed
  bool bare = false;  // a plain decimal number ("12"; not "2^12", "4Ki" or a range)
  bool is_range = false;
  std::uint64_t value = 0;  // the count, or the range's FROM
  std::uint64_t to = 0;     // a range's TO
  std::optional<std::uint64_t> step;
  std::optional<double> factor;
};

/// The value of one count, or nullopt when \p text is not one (syntax only: no limits). Values
/// beyond 2^64 - 1 saturate there.
std::optional<std::uint64_t> count_value(std::string_view text);

/// One count within \p limits. \p option names it in messages ("--n").
std::uint64_t parse_count(std::string_view option, std::string_view text,
                          const CountLimits& limits = {});

/// Checks a count given as a number (not text) against \p limits, with parse_count's message for
/// one outside them ("--n: invalid size '0': 0 is below 1, ...").
void check_count(std::string_view option, std::uint64_t n, const CountLimits& limits = {});

/// The items of a counts text (syntax only). Throws for an empty item, a count that does not
/// parse and a range without *FACTOR or +STEP.
std::vector<CountItem> parse_count_items(std::string_view option, std::string_view text);

/// Every count of \p items, ascending and without duplicates: limits checked, ranges expanded.
/// Throws for a count outside \p limits, a range whose FROM is greater than its TO or that does
/// not advance, and more than \p most sizes.
std::vector<std::uint64_t> expand_counts(std::string_view option,
                                         const std::vector<CountItem>& items,
                                         const CountLimits& limits = {},
                                         std::size_t most = max_sizes);

/// parse_count_items of every value (an option given more than once), then expand_counts.
std::vector<std::uint64_t> parse_counts(std::string_view option,
                                        const std::vector<std::string>& values,
                                        const CountLimits& limits = {},
                                        std::size_t most = max_sizes);

/// The sizes of a range: from, from+step, ... or from, from*factor, ... (rounded, strictly
/// increasing) up to and including to. Throws Error(usage) prefixed with \p where for from > to,
/// a range that does not advance or one of more than \p most sizes.
std::vector<std::uint64_t> expand_range(std::uint64_t from, std::uint64_t to,
                                        std::optional<std::uint64_t> step,
                                        std::optional<double> factor, const std::string& where,
                                        std::size_t most = max_sizes);

/// A count as a person writes it: "2^20" for powers of two from 2^6 = 64 up, else the decimal.
std::string count_text(std::uint64_t n);

/// Every value of a list option (given once or more), split at commas, each item trimmed.
/// Throws for an empty item ("i32,,f32", a trailing comma) or no item at all.
std::vector<std::string> split_list(std::string_view option,
                                    const std::vector<std::string>& values);

}  // namespace tunedreduce::grammar
