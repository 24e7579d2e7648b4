#include "device_fingerprint.hpp"

#include "hash.hpp"
#include "json.hpp"

namespace tunedreduce {

std::string DeviceFingerprint::key() const {
  std::string s = name;
  for (long long v :
       {static_cast<long long>(cc_major), static_cast<long long>(cc_minor),
        static_cast<long long>(sm_count), static_cast<long long>(bus_width_bits),
        static_cast<long long>(l2_bytes), static_cast<long long>(ecc),
        static_cast<long long>(total_mem_bytes), static_cast<long long>(mem_clock_khz)}) {
    s += '|';
    s += std::to_string(v);
  }
  return hex64(fnv1a64(s));
}

std::string gpu_uuid_text(const unsigned char (&bytes)[16]) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 0xf];
  }
  return s;
}

void append_hard_attributes(Json& j, const DeviceFingerprint& f) {
  j.set("name", f.name);
  j.set("cc_major", f.cc_major);
  j.set("cc_minor", f.cc_minor);
  j.set("sm_count", f.sm_count);
  j.set("bus_width_bits", f.bus_width_bits);
  j.set("l2_bytes", f.l2_bytes);
  j.set("ecc", f.ecc);
  j.set("total_mem_bytes", f.total_mem_bytes);
  j.set("mem_clock_khz", f.mem_clock_khz);
}

}  // namespace tunedreduce
