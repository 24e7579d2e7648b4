// Fuzz target: the worker protocol's parsers (tuner/protocol.hpp), each on the same line: the
// supervisor's reading of a worker's reply and of the device probe, the worker's reading of a
// command. The expected answer to a malformed line is std::runtime_error naming the fault (the
// supervisor then kills the worker and records `crashed`); anything else is a finding.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "tuner/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tunedreduce::tuner::protocol;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  try {
    (void)parse_reply(line);
  } catch (const std::runtime_error&) {
  }
  try {
    (void)parse_command(line);
  } catch (const std::runtime_error&) {
  }
  try {
    (void)parse_probe(line);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
