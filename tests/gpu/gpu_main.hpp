#pragma once
// The main() of every GPU test binary: without a CUDA device it prints why and exits 77, which
// ctest reports as skipped (never passed); with one it names the device and the data seed, runs
// the tests, then an optional summary.

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "kernels/device.hpp"
#include "tests/gpu/gpu_util.hpp"

namespace tunedreduce::test {

inline int gpu_test_main(int argc, char** argv, void (*summary)() = nullptr) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string why;
  if (kernels::device_count(&why) == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n", why.c_str());
    return skip_exit_code;
  }
  const DeviceFingerprint fp = kernels::query_fingerprint(0);
  std::printf("device 0: %s (sm_%d%d, %d SMs, key %s), seed 0x%016" PRIx64
              " (set TR_TEST_SEED to repeat)\n",
              fp.name.c_str(), fp.cc_major, fp.cc_minor, fp.sm_count, fp.key().c_str(),
              test_seed());
  const int rc = RUN_ALL_TESTS();
  if (summary) summary();
  return rc;
}

}  // namespace tunedreduce::test
