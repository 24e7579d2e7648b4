#pragma once
// Reading what the registry needs to know about a device (host only).

#include <string>

#include "common/device_fingerprint.hpp"
#include "kernels/registry.hpp"

namespace tunedreduce::kernels {

/// Number of usable CUDA devices; 0 when there is none or no driver. \p why receives the
/// runtime's explanation when it is 0.
int device_count(std::string* why = nullptr);

/// Throws tunedreduce::Error naming the device and the CUDA error on failure.
DeviceLimits query_device_limits(int ordinal);
DeviceFingerprint query_fingerprint(int ordinal);

}  // namespace tunedreduce::kernels
