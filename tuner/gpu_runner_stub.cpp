// TEMPORARY STAND-IN for the GPU runner (tuner/gpu_runner.hpp), so that the host side of the
// tuner and `tunedreduce tune` build and run (--dry-run, --replay) before the GPU side exists.
// The GPU side replaces this file with the real supervisor; remove it from tuner/CMakeLists.txt
// then.

#include "common/error.hpp"
#include "tuner/gpu_runner.hpp"

namespace tunedreduce::tuner {

std::unique_ptr<Runner> make_gpu_runner(const GpuRunnerOptions&) {
  throw Error("GPU runner not built yet", exit_code::no_gpu);
}

std::vector<std::pair<int, DeviceFingerprint>> probe_devices() {
  throw Error("GPU runner not built yet", exit_code::no_gpu);
}

}  // namespace tunedreduce::tuner
