#pragma once
// Fixtures shared by tests and benchmarks that need no GPU.

#include <cstdint>

#include "common/device_fingerprint.hpp"

namespace tunedreduce::test {

/// The H100 of tests/data/h100-sample.db (its device row). Other total-memory figures give
/// other fingerprints of the same model (the 80GB HBM3 part reports slightly different totals
/// across drivers), and other driver/runtime versions make its winners stale.
inline DeviceFingerprint h100_fingerprint(std::int64_t total_mem_bytes = 85017493504,
                                          int driver_version = 13000) {
  DeviceFingerprint f;
  f.name = "NVIDIA H100 80GB HBM3";
  f.cc_major = 9;
  f.cc_minor = 0;
  f.sm_count = 132;
  f.bus_width_bits = 5120;
  f.l2_bytes = 52428800;
  f.ecc = true;
  f.total_mem_bytes = total_mem_bytes;
  f.mem_clock_khz = 2619000;
  f.driver_version = driver_version;
  f.runtime_version = driver_version;
  return f;
}

}  // namespace tunedreduce::test
