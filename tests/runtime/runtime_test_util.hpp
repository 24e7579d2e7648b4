#pragma once
// Helpers of the runtime tests: synthetic tuning databases, the sample database's device, a
// Runtime on the fake platform whose log is captured.

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "common/device_fingerprint.hpp"
#include "runtime/fake_platform.hpp"
#include "runtime/runtime.hpp"

namespace tunedreduce::runtime::test {

/// tests/data/h100-sample.db and the fingerprint of its one device row.
std::filesystem::path sample_db();
DeviceFingerprint sample_device();
/// Same compute capability and SM count as the sample device, another key (other memory size).
DeviceFingerprint same_model_device();
/// An A100: another model.
DeviceFingerprint other_model_device();

/// One winner row of a synthetic database.
struct Row {
  DType dtype;
  Op op;
  std::uint64_t n_lo, n_hi;
  std::string kernel_id;
  double median_us = 10;
};
/// Writes a database at \p path (created) with \p rows as the winners of device \p fp, measured
/// in L2 mode \p l2 (the winners of the other mode are kept).
void add_device_rows(const std::filesystem::path& path, const DeviceFingerprint& fp,
                     const std::vector<Row>& rows, db::L2Mode l2 = db::L2Mode::cold);

/// One segmented winner row of a synthetic database: (dtype, op) of its kernel id, segments of
/// size_lo..size_hi elements in counts of count_lo..count_hi.
struct SegRow {
  std::string kernel_id;  // "seg.FAMILY....LAYOUT.DTYPE.OP"
  std::uint64_t size_lo, size_hi, count_lo, count_hi;
  double median_us = 10;
};
/// Writes a database at \p path (created) with \p rows as the segmented winners of device \p fp,
/// measured in L2 mode \p l2; each row's evidence is a measurement at (size_lo, count_lo).
void add_segmented_rows(const std::filesystem::path& path, const DeviceFingerprint& fp,
                        const std::vector<SegRow>& rows, db::L2Mode l2 = db::L2Mode::cold);

/// Lines logged, as "LEVEL message".
class CapturedLog {
 public:
  CapturedLog();
  std::shared_ptr<spdlog::logger> logger() const { return logger_; }
  std::vector<std::string> lines(const std::string& level) const;  // "warning", "debug", ...
  std::string all() const;

 private:
  std::shared_ptr<std::ostringstream> out_;
  std::shared_ptr<spdlog::logger> logger_;
};

/// A Runtime on a fake platform with the given devices and database (nullopt: default rules).
struct TestRuntime {
  explicit TestRuntime(std::vector<DeviceFingerprint> devices, std::optional<std::string> database,
                       int busy_timeout_ms = 2000);
  FakePlatform* fake;  // owned by rt
  CapturedLog log;
  std::unique_ptr<Runtime> rt;
};

DeviceInfo info_of(const DeviceFingerprint& fp);

}  // namespace tunedreduce::runtime::test
