#pragma once
// The supervisor <-> worker protocol: one JSON object a line on the worker's stdin and stdout.
//
// supervisor -> worker
//   {"cmd":"init","device":0,"seed":123}
//   {"cmd":"bandwidth"}
//   {"cmd":"measure","kernel_id":"...","n":1024,"policy":{...}}
//   {"cmd":"quit"}
// worker -> supervisor
//   {"event":"ready","fingerprint":{...}}
//   {"event":"busy"}                       heartbeat while preparing or between timed batches
//   {"event":"bandwidth","gbps":3100.5}
//   {"event":"result","result":{...}}      after a sticky CUDA error the outcome is "crashed"
//                                          and the worker exits
//   {"event":"fatal","error":"...","exit_code":6}   the worker cannot go on (no GPU, ...)
// `tunedreduce _worker --probe` prints {"devices":[{"ordinal":0,"fingerprint":{...}},...]}.

#include <string>

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

}  // namespace tunedreduce::tuner::protocol
