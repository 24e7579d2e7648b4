// --devices and one device per model: what `tunedreduce tune` measures on a machine with several
// GPUs (the probe's answer is given here; no GPU needed).

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/exit_codes.hpp"
#include "tuner/devices.hpp"

namespace tunedreduce::tuner {
namespace {

DeviceFingerprint gpu(const std::string& name, int sms, std::uint64_t mem) {
  DeviceFingerprint f;
  f.name = name;
  f.cc_major = 9;
  f.sm_count = sms;
  f.total_mem_bytes = mem;
  return f;
}

const DeviceFingerprint h100 = gpu("NVIDIA H100 80GB HBM3", 132, 85520809984ull);
const DeviceFingerprint h200 = gpu("NVIDIA H200", 132, 150754820096ull);

std::vector<int> ordinals(const std::vector<ProbedDevice>& d) {
  std::vector<int> out;
  for (const auto& x : d) out.push_back(x.first);
  return out;
}

TEST(Devices, SelectionTakesAllOrAListOnceEach) {
  const std::vector<ProbedDevice> probed = {{0, h100}, {1, h100}, {2, h200}};
  EXPECT_EQ(ordinals(select_devices("all", probed)), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(ordinals(select_devices("2,0,2", probed)), (std::vector<int>{2, 0}));
  EXPECT_EQ(ordinals(select_devices("1", probed)), (std::vector<int>{1}));
}

TEST(Devices, BadSelectionsNameWhatWasWrong) {
  const std::vector<ProbedDevice> probed = {{0, h100}, {1, h100}};
  auto message = [&](const std::string& text) {
    try {
      select_devices(text, probed);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), exit_code::usage);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("3"), "--devices: there is no device 3 (devices: 0, 1)");
  EXPECT_EQ(message("1,x"), "--devices: 'x' is not a device ordinal or 'all'");
  EXPECT_EQ(message("-1"), "--devices: '-1' is not a device ordinal or 'all'");
  EXPECT_EQ(message("0 "), "--devices: '0 ' is not a device ordinal or 'all'");
  EXPECT_EQ(message(""), "--devices: no device given");
}

TEST(Devices, DevicesAreGroupedByModel) {
  // Two H100s and two H200s, the second of each listed last: the first of each model begins the
  // model's run, the other shares its work.
  const DeviceChoice c = one_per_model({{3, h100}, {1, h200}, {0, h100}, {5, h200}});
  EXPECT_EQ(ordinals(c.tuned), (std::vector<int>{3, 1}));
  EXPECT_EQ(c.same_model, (std::vector<std::pair<int, int>>{{0, 3}, {5, 1}}));
  // Devices that differ in a hard attribute (here memory size) are different models.
  DeviceFingerprint h100_94 = h100;
  h100_94.total_mem_bytes = 100000000000ull;
  const DeviceChoice d = one_per_model({{0, h100}, {1, h100_94}});
  EXPECT_EQ(ordinals(d.tuned), (std::vector<int>{0, 1}));
  EXPECT_TRUE(d.same_model.empty());
}

}  // namespace
}  // namespace tunedreduce::tuner
