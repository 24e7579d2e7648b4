#include "kernels/device.hpp"

#include <cuda_runtime_api.h>

#include <cstring>

#include "common/error.hpp"

namespace tunedreduce::kernels {

namespace {

void check(cudaError_t e, const char* what, int ordinal) {
  if (e != cudaSuccess)
    throw Error(std::string(what) + " failed for device " + std::to_string(ordinal) + ": " +
                cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

int attribute(cudaDeviceAttr attr, int ordinal) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, attr, ordinal), "cudaDeviceGetAttribute", ordinal);
  return v;
}

}  // namespace

int device_count(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    (void)cudaGetLastError();
    return 0;
  }
  if (n == 0 && why) *why = "the CUDA runtime reports no devices";
  return n;
}

DeviceLimits query_device_limits(int ordinal) {
  DeviceLimits d;
  d.ordinal = ordinal;
  d.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, ordinal);
  d.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, ordinal);
  d.sm_count = attribute(cudaDevAttrMultiProcessorCount, ordinal);
  d.max_threads_per_block = attribute(cudaDevAttrMaxThreadsPerBlock, ordinal);
  d.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, ordinal);
  d.max_blocks_per_sm = attribute(cudaDevAttrMaxBlocksPerMultiprocessor, ordinal);
  d.smem_per_block =
      static_cast<std::size_t>(attribute(cudaDevAttrMaxSharedMemoryPerBlock, ordinal));
  d.smem_per_block_optin =
      static_cast<std::size_t>(attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  return d;
}

DeviceFingerprint query_fingerprint(int ordinal) {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, ordinal), "cudaGetDeviceProperties", ordinal);
  DeviceFingerprint f;
  f.name = p.name;
  f.cc_major = p.major;
  f.cc_minor = p.minor;
  f.sm_count = p.multiProcessorCount;
  f.bus_width_bits = p.memoryBusWidth;
  f.l2_bytes = p.l2CacheSize;
  f.ecc = p.ECCEnabled != 0;
  f.total_mem_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
  f.mem_clock_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  check(cudaDriverGetVersion(&f.driver_version), "cudaDriverGetVersion", ordinal);
  check(cudaRuntimeGetVersion(&f.runtime_version), "cudaRuntimeGetVersion", ordinal);
  unsigned char uuid[16];
  static_assert(sizeof p.uuid.bytes == sizeof uuid);
  std::memcpy(uuid, p.uuid.bytes, sizeof uuid);
  f.uuid = gpu_uuid_text(uuid);
  return f;
}

}  // namespace tunedreduce::kernels
