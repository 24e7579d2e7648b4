// Fuzz target: tune.toml as `tunedreduce tune --config` reads it (tuner/config.cpp: the TOML
// parse with toml++, the validation, the canonical text and hash of what it accepts). The
// expected answer to bad input is tunedreduce::Error with a message; anything else (another
// exception, a sanitizer report, a crash, a hang) is a finding.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.hpp"
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
  return 0;
}
