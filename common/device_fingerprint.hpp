#pragma once
// What identifies a GPU model for tuning purposes. Hard attributes decide whether a tuned result
// applies to a device at all; soft attributes (driver, CUDA runtime) only mark a result stale.

#include <cstdint>
#include <string>

namespace tunedreduce {

class Json;  // common/json.hpp

struct DeviceFingerprint {
  // Hard attributes: part of key().
  std::string name;  // cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int bus_width_bits = 0;
  std::int64_t l2_bytes = 0;
  bool ecc = false;
  std::int64_t total_mem_bytes = 0;
  int mem_clock_khz = 0;  // peak memory clock
  // Soft attributes.
  int driver_version = 0;   // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;  // cudaRuntimeGetVersion
  /// Which card of the model this is: cudaDeviceProp::uuid as nvidia-smi prints it
  /// (gpu_uuid_text); empty where unknown. Never part of key(): every card of a model shares
  /// its tuning.
  std::string uuid;

  /// Theoretical DRAM bandwidth in GB/s: memory clock x bus width x 2 (double data rate).
  double theoretical_gbps() const {
    return static_cast<double>(mem_clock_khz) * 1e3 * (bus_width_bits / 8.0) * 2.0 / 1e9;
  }

  /// Stable 16-hex-digit key over the hard attributes.
  std::string key() const;

  /// "sm_90".
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

/// A GPU's 16-byte UUID (cudaUUID_t) as nvidia-smi -L prints it:
/// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lowercase hex.
std::string gpu_uuid_text(const unsigned char (&bytes)[16]);

/// Appends the hard attributes to JSON object \p obj, in a fixed order: name, cc_major, cc_minor,
/// sm_count, bus_width_bits, l2_bytes, ecc, total_mem_bytes, mem_clock_khz.
void append_hard_attributes(Json& obj, const DeviceFingerprint& f);

}  // namespace tunedreduce
