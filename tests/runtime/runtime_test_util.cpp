#include "runtime_test_util.hpp"

#include <map>
#include <optional>
#include <stdexcept>

#include "db/database.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tests/support/fixtures.hpp"

namespace tunedreduce::runtime::test {

std::filesystem::path sample_db() { return TR_SAMPLE_DB; }

DeviceFingerprint sample_device() { return tunedreduce::test::h100_fingerprint(); }

DeviceFingerprint same_model_device() {
  DeviceFingerprint f = sample_device();
  f.name = "NVIDIA H100 80GB HBM3";
  f.total_mem_bytes = 85045395456;
  return f;
}

DeviceFingerprint other_model_device() {
  DeviceFingerprint f;
  f.name = "NVIDIA A100-SXM4-80GB";
  f.cc_major = 8;
  f.cc_minor = 0;
  f.sm_count = 108;
  f.bus_width_bits = 5120;
  f.l2_bytes = 41943040;
  f.ecc = true;
  f.total_mem_bytes = 85198045184;
  f.mem_clock_khz = 1593000;
  f.driver_version = 13000;
  f.runtime_version = 13000;
  return f;
}

namespace {

/// A run of the synthetic databases: a fixed tool, manifest, configuration and host.
std::int64_t begin_test_run(db::Database& d, db::L2Mode l2) {
  db::RunInfo info;
  info.tool_version = "0.1.0";
  info.manifest_hash = "0123456789abcdef";
  info.config_hash = "fedcba9876543210";
  info.host = "test-host";
  info.l2_mode = l2;
  return d.begin_run(info);
}

/// The measurement of one test row: this run and device, \p median_us with no spread, 10 repeats.
db::Measurement test_measurement(std::int64_t run, std::int64_t dev, const std::string& kernel_id,
                                 DType dtype, Op op, std::uint64_t n, db::L2Mode l2,
                                 double median_us) {
  db::Measurement m;
  m.run_id = run;
  m.device_id = dev;
  m.kernel_id = kernel_id;
  m.dtype = dtype;
  m.op = op;
  m.n = n;
  m.l2_mode = l2;
  m.median_us = median_us;
  m.p10_us = median_us;
  m.p90_us = median_us;
  m.repeats = 10;
  return m;
}

/// A winner's evidence and provenance: \p measurement_id, the device's versions, the run.
template <class W>
void stamp(W& w, std::int64_t measurement_id, const DeviceFingerprint& fp, std::int64_t run) {
  w.measurement_id = measurement_id;
  w.driver_version = fp.driver_version;
  w.runtime_version = fp.runtime_version;
  w.run_id = run;
}

}  // namespace

void add_device_rows(const std::filesystem::path& path, const DeviceFingerprint& fp,
                     const std::vector<Row>& rows, db::L2Mode l2) {
  db::Database d = db::Database::open_writer(path);
  const std::int64_t dev = d.upsert_device(fp);
  const std::int64_t run = begin_test_run(d, l2);
  std::map<std::pair<DType, Op>, std::vector<db::Winner>> winners;
  for (const Row& r : rows) {
    db::Measurement m =
        test_measurement(run, dev, r.kernel_id, r.dtype, r.op, r.n_lo, l2, r.median_us);
    m.params.family = r.kernel_id.substr(0, r.kernel_id.find('.'));
    m.params.block = 256;
    db::Winner w;
    w.dtype = r.dtype;
    w.op = r.op;
    w.n_lo = r.n_lo;
    w.n_hi = r.n_hi;
    w.kernel_id = r.kernel_id;
    stamp(w, d.insert_measurement(m), fp, run);
    w.l2_mode = l2;
    winners[{r.dtype, r.op}].push_back(w);
  }
  for (auto& [key, ws] : winners) d.replace_winners(dev, key.first, key.second, ws, l2);
  d.end_run(run, db::RunStatus::finished);
}

void add_segmented_rows(const std::filesystem::path& path, const DeviceFingerprint& fp,
                        const std::vector<SegRow>& rows, db::L2Mode l2) {
  namespace seg = kernels::segmented;
  db::Database d = db::Database::open_writer(path);
  const std::int64_t dev = d.upsert_device(fp);
  const std::int64_t run = begin_test_run(d, l2);
  struct Key {
    DType dtype;
    Op op;
    std::string layout;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, std::vector<db::SegmentedWinner>> winners;
  for (const SegRow& r : rows) {
    const std::optional<seg::SegParams> p = seg::parse_seg_id(r.kernel_id);
    if (!p) throw std::invalid_argument("not a segmented id: " + r.kernel_id);
    db::Measurement m = test_measurement(run, dev, r.kernel_id, p->dtype, p->op,
                                         r.size_lo * r.count_lo, l2, r.median_us);
    m.params = seg::stored_params(*p);
    m.segment_size = r.size_lo;
    db::SegmentedWinner w;
    w.dtype = p->dtype;
    w.op = p->op;
    w.l2_mode = l2;
    w.layout = seg::seg_layout_name(p->layout);
    w.size_lo = r.size_lo;
    w.size_hi = r.size_hi;
    w.count_lo = r.count_lo;
    w.count_hi = r.count_hi;
    w.kernel_id = r.kernel_id;
    stamp(w, d.insert_measurement(m), fp, run);
    winners[{p->dtype, p->op, w.layout}].push_back(w);
  }
  for (auto& [key, ws] : winners)
    d.replace_segmented_winners(dev, key.dtype, key.op, key.layout, ws, l2);
  d.end_run(run, db::RunStatus::finished);
}

CapturedLog::CapturedLog() : out_(std::make_shared<std::ostringstream>()) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*out_);
  logger_ = std::make_shared<spdlog::logger>("tunedreduce-test", sink);
  logger_->set_pattern("%l %v");
  logger_->set_level(spdlog::level::debug);
  logger_->flush_on(spdlog::level::trace);
}

std::vector<std::string> CapturedLog::lines(const std::string& level) const {
  std::vector<std::string> out;
  std::istringstream in(all());
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(level + " ", 0) == 0) out.push_back(line);
  return out;
}

std::string CapturedLog::all() const {
  logger_->flush();
  return out_->str();
}

DeviceInfo info_of(const DeviceFingerprint& fp) {
  DeviceInfo i;
  i.fingerprint = fp;
  i.limits.cc_major = fp.cc_major;
  i.limits.cc_minor = fp.cc_minor;
  i.limits.sm_count = fp.sm_count;
  return i;
}

TestRuntime::TestRuntime(std::vector<DeviceFingerprint> devices,
                         std::optional<std::string> database, int busy_timeout_ms) {
  auto p = std::make_unique<FakePlatform>();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    DeviceInfo info = info_of(devices[i]);
    info.limits.ordinal = static_cast<int>(i);
    p->devices.push_back(info);
  }
  fake = p.get();
  Options opt;
  opt.platform = std::move(p);
  opt.logger = log.logger();
  opt.database = std::move(database);
  opt.reader.busy_timeout = std::chrono::milliseconds(busy_timeout_ms);
  rt = std::make_unique<Runtime>(std::move(opt));
}

}  // namespace tunedreduce::runtime::test
