#pragma once
// SM and memory clocks of a CUDA device, read through NVML when the driver has it (clocks.cpp):
// recorded with every measurement of the tuner and of `tunedreduce bench`.

#include <optional>

namespace tunedreduce::measure {

/// SM and memory clocks (MHz) of a CUDA device; empty where NVML is not there.
struct Clocks {
  std::optional<int> sm_mhz, mem_mhz;
};
Clocks read_clocks(int cuda_device);

}  // namespace tunedreduce::measure
