#pragma once
// The supervisor <-> worker protocol: one JSON object a line on the worker's stdin and stdout.
//
// supervisor -> worker
//   {"cmd":"init","device":0,"seed":123}
//   {"cmd":"bandwidth"}
//   {"cmd":"measure","kernel_id":"...","n":1024,"policy":{...}}
//   {"cmd":"measure","kernel_id":"seg....","n":1024,"segment_size":64,"policy":{...}}
//                                          a segmented entry ("seg.*") at n / segment_size
//                                          segments of segment_size elements; its result
//                                          carries "segment_size" back
//   {"cmd":"quit"}
// worker -> supervisor
//   {"event":"ready","fingerprint":{...}}
//   {"event":"busy"}                       heartbeat while preparing or between timed batches
//   {"event":"bandwidth","gbps":3100.5}
//   {"event":"result","result":{...}}      after a sticky CUDA error the outcome is "crashed"
//                                          and the worker exits
//   {"event":"fatal","error":"...","exit_code":6}   the worker cannot go on (no GPU, ...)
// `tunedreduce _worker --probe` prints {"devices":[{"ordinal":0,"fingerprint":{...}},...]}.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/device_fingerprint.hpp"
#include "common/json.hpp"
#include "tuner/runner.hpp"

namespace tunedreduce::tuner::protocol {

Json to_json(const MeasurePolicy& p);
MeasurePolicy policy_from_json(const Json& j);

Json to_json(const Result& r);
Result result_from_json(const Json& j);

Json to_json(const DeviceFingerprint& f);
DeviceFingerprint fingerprint_from_json(const Json& j);

/// The member \p key of object \p j, or throws std::runtime_error naming it.
const Json& member(const Json& j, const char* key);

/// Whether \p kernel_id names a segmented entry ("seg.*", kernels/segmented/): its measure
/// commands and results carry "segment_size", and no other's do.
bool is_segmented_kernel(std::string_view kernel_id);

/// One line of the supervisor: to_json(Command) writes it, parse_command reads it.
struct Command {
  enum class Kind { init, bandwidth, measure, quit };
  Kind kind = Kind::quit;
  int device = 0;          // init
  std::uint64_t seed = 0;  // init (at most 2^63 - 1: JSON integers are signed 64-bit here)
  std::string kernel_id;   // measure
  std::uint64_t n = 0;     // measure
  MeasurePolicy policy;    // measure
  /// measure, a segmented entry only: the elements per segment (at least 1, dividing n).
  std::optional<std::uint64_t> segment_size;
};
Json to_json(const Command& c);

/// One line of the worker, as the supervisor reads it.
struct Reply {
  enum class Event { ready, busy, bandwidth, result, fatal };
  Event event = Event::busy;
  DeviceFingerprint fingerprint;  // ready
  double gbps = 0;                // bandwidth
  Result result;                  // result
  std::string error;              // fatal
  int exit_code = 0;              // fatal
};

/// What `_worker --probe` prints: the devices, and why there are none.
struct Probe {
  std::vector<std::pair<int, DeviceFingerprint>> devices;  // ordinal, fingerprint
  std::optional<std::string> error;
};

/// The parsers of the three kinds of line. Each reads a whole line and throws
/// std::runtime_error naming what is wrong (not JSON, not an object, an unknown command or event,
/// a missing member, a member of the wrong type or out of range; a "segment_size" that is not a
/// positive integer dividing "n", one given for a kernel that is not segmented, or none for one
/// that is) for anything else: a broken peer is reported, never trusted (tests/fuzz runs them on
/// arbitrary bytes).
Command parse_command(std::string_view line);
Reply parse_reply(std::string_view line);
Probe parse_probe(std::string_view line);

}  // namespace tunedreduce::tuner::protocol
