#include "device_fingerprint.hpp"

#include "hash.hpp"

namespace tunedreduce {

std::string DeviceFingerprint::key() const {
  std::string s = name;
  for (long long v : {static_cast<long long>(cc_major), static_cast<long long>(cc_minor),
                      static_cast<long long>(sm_count), static_cast<long long>(bus_width_bits),
                      static_cast<long long>(l2_bytes), static_cast<long long>(ecc),
                      static_cast<long long>(total_mem_bytes),
                      static_cast<long long>(mem_clock_khz)}) {
    s += '|';
    s += std::to_string(v);
  }
  return hex64(fnv1a64(s));
}

}  // namespace tunedreduce
