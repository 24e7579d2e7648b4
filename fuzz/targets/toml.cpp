// Fuzz target: tune.toml as `tunedreduce tune --config` reads it (tuner/config/: the TOML
// parse with toml++, the validation, the canonical text and hash of what it accepts), and the
// same bytes as the command line's counts and lists (common/grammar.hpp). The
// expected answer to bad input is tunedreduce::Error with a message; anything else (another
// exception, a sanitizer report, a crash, a hang) is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/grammar.hpp"
#include "tuner/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tunedreduce;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const tuner::RawConfig raw = tuner::parse_config_text(text, "fuzz.toml");
    const tuner::TuneConfig c = tuner::validate_config(raw);
    (void)tuner::canonical_text(c);
    (void)tuner::config_hash(c);
  } catch (const Error&) {
  }
  // The same bytes as a command line's element counts and list (common/grammar.hpp: tune and
  // bench --sizes, report --n, every list option).
  const std::string arg(text);
  try {
    (void)grammar::parse_counts("--sizes", {arg});
  } catch (const Error&) {
  }
  try {
    (void)grammar::parse_count("--n", arg);
  } catch (const Error&) {
  }
  try {
    (void)grammar::split_list("--dtypes", {arg, arg});
  } catch (const Error&) {
  }
  return 0;
}
