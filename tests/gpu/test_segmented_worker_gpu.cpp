// The tuner's worker on segmented entries: the measurer on entries of every family and layout at
// segment sizes 1, 3, 64 and 4096 and 1, 7 and 1000 segments (and a few large totals), each
// verified segment by segment against the host's references and timed; shapes an entry cannot
// run, and a wrong kernel, are launch_failed and incorrect with their reason; then the worker
// process itself answers segmented measure commands over the protocol.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tests/gpu/gpu_main.hpp"
#include "tuner/protocol.hpp"
#include "tuner/supervisor/child_process.hpp"
#include "tuner/worker/measurer.hpp"

namespace tunedreduce::tuner {
namespace {

namespace seg = kernels::segmented;
using db::Outcome;

MeasurePolicy quick_policy() {
  MeasurePolicy p;
  p.min_repeats = 2;
  p.max_repeats = 3;
  p.budget_ms = 20;
  p.l2 = L2Mode::cold;
  return p;
}

/// Whether the entry takes the uniform shape of \p segments segments of \p size elements (the
/// offsets layouts' refusals do not depend on the offsets; the measurer's own refusal of int32
/// offsets past 2^31 - 1 is not met at these sizes).
std::optional<std::string> refusal(const seg::SegEntry& e, std::uint64_t segments,
                                   std::uint64_t size, const kernels::DeviceLimits& dev) {
  seg::SegProblem p;
  p.num_segments = segments;
  if (e.params.layout == seg::SegLayout::fixed) {
    p.segment_size = size;
    p.stride = size;
  } else {
    // Its refusals of offsets do not read them; it only asks that they be given.
    static const std::int64_t dummy[2] = {0, 0};
    p.begin = dummy;
    p.end = dummy + 1;
    p.mean_length = size;
  }
  return e.can_implement(p, 256, dev);
}

/// Per (family, layout) and key, the first entry of the registry: every family and layout for
/// five keys (a float sum, a wide sum of halves, an integer argmin, a 64-bit argmax, a double max).
std::vector<const seg::SegEntry*> chosen_entries() {
  const std::vector<std::pair<DType, Op>> keys = {{DType::f32, Op::sum},
                                                  {DType::f16, Op::wide_sum},
                                                  {DType::i32, Op::argmin},
                                                  {DType::u64, Op::argmax},
                                                  {DType::f64, Op::max}};
  std::map<std::tuple<seg::SegFamily, seg::SegLayout, DType, Op>, const seg::SegEntry*> first;
  for (const seg::SegEntry& e : seg::seg_registry())
    for (const auto& [d, o] : keys)
      if (e.params.dtype == d && e.params.op == o)
        first.emplace(std::make_tuple(e.params.family, e.params.layout, d, o), &e);
  std::vector<const seg::SegEntry*> out;
  for (const auto& [key, e] : first) out.push_back(e);
  return out;
}

TEST(SegmentedWorkerGpu, EveryFamilyAndLayoutIsMeasuredAndVerified) {
  Measurer m(0, test::test_seed());
  const kernels::DeviceLimits& dev = m.limits();
  const MeasurePolicy policy = quick_policy();
  const std::vector<const seg::SegEntry*> entries = chosen_entries();
  // 15 (family, layout) pairs (the tile family's rows are fixed only, the balanced family's
  // offsets only), 5 keys each.
  ASSERT_EQ(entries.size(), 15u * 5u);
  std::map<std::pair<seg::SegFamily, seg::SegLayout>, int> measured;
  int ok = 0, refused = 0;
  for (const seg::SegEntry* e : entries) {
    for (std::uint64_t size : {1u, 3u, 64u, 4096u}) {
      for (std::uint64_t segments : {1u, 7u, 1000u}) {
        const std::uint64_t n = size * segments;
        SCOPED_TRACE(std::string(e->id) + " segment_size=" + std::to_string(size) +
                     " segments=" + std::to_string(segments));
        const Result r = m.measure(*e, n, size, policy, [] {});
        EXPECT_EQ(r.kernel_id, e->id);
        EXPECT_EQ(r.n, n);
        EXPECT_EQ(r.segment_size, std::optional<std::uint64_t>(size));
        EXPECT_EQ(r.dtype, e->params.dtype);
        EXPECT_EQ(r.op, e->params.op);
        if (const auto why = refusal(*e, segments, size, dev)) {
          // Only the tile family refuses these shapes (rows that do not divide its vector).
          EXPECT_EQ(e->params.family, seg::SegFamily::tile);
          EXPECT_EQ(r.outcome, Outcome::launch_failed);
          EXPECT_EQ(r.error, "cannot implement: " + *why);
          EXPECT_FALSE(r.median_us);
          ++refused;
          continue;
        }
        EXPECT_EQ(r.outcome, Outcome::ok) << r.error;
        ASSERT_TRUE(r.median_us);
        EXPECT_GT(*r.median_us, 0);
        EXPECT_LE(*r.p10_us, *r.median_us);
        EXPECT_LE(*r.median_us, *r.p90_us);
        EXPECT_GE(r.repeats, 2);
        EXPECT_LE(r.repeats, 3);
        ASSERT_TRUE(r.gbps);
        // The input read and the results written, in the time measured.
        const double bytes = double(n * dtype_size(e->params.dtype)) +
                             double(segments * result_bytes(e->params.dtype, e->params.op));
        EXPECT_NEAR(*r.gbps, bytes / (*r.median_us * 1e3), 1e-6 * *r.gbps);
        ++measured[{e->params.family, e->params.layout}];
        ++ok;
      }
    }
  }
  EXPECT_EQ(measured.size(), 15u);
  std::printf("%d segmented measurements verified, %d shapes refused by the tile family\n", ok,
              refused);
}

TEST(SegmentedWorkerGpu, LargeTotalsAreVerifiedSegmentBySegment) {
  Measurer m(0, test::test_seed() + 1);
  const MeasurePolicy policy = quick_policy();
  // 2^23 segments of one element: results checked in chunks (16-byte argmin results, 64 MiB a
  // chunk); three segments of 2^22: each segment's reference on several threads.
  struct Case {
    const char* id;
    std::uint64_t n, size;
  };
  const Case cases[] = {
      {"seg.thread.b256.v2.fixed.f64.argmin", std::uint64_t{1} << 23, 1},
      {"seg.thread.b256.v2.offsets64.f64.argmin", std::uint64_t{1} << 23, 1},
      {"seg.split.b512.v4.fixed.f32.sum", 3 * (std::uint64_t{1} << 22), std::uint64_t{1} << 22},
      {"seg.split.b512.v4.offsets32.f32.sum", 3 * (std::uint64_t{1} << 22), std::uint64_t{1} << 22},
      {"seg.block.b256.v4.offsets64.i32.wide_sum", std::uint64_t{1} << 24, 4096},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.id) + " n=" + std::to_string(c.n) +
                 " segment_size=" + std::to_string(c.size));
    const seg::SegEntry* e = seg::find_seg(c.id);
    if (!e) {
      // The registry's configurations change with the rules (kernels/segmented/space.hpp): take
      // the first entry of the same family, layout and key instead.
      const auto want = seg::parse_seg_id(c.id);
      ASSERT_TRUE(want) << c.id;
      for (const seg::SegEntry& x : seg::seg_registry())
        if (x.params.family == want->family && x.params.layout == want->layout &&
            x.params.dtype == want->dtype && x.params.op == want->op) {
          e = &x;
          break;
        }
    }
    ASSERT_NE(e, nullptr) << c.id;
    const Result r = m.measure(*e, c.n, c.size, policy, [] {});
    EXPECT_EQ(r.outcome, Outcome::ok) << e->id << ": " << r.error;
    ASSERT_TRUE(r.median_us);
    EXPECT_GT(*r.median_us, 0);
  }
}

/// \p e with the launch of the entry of the same family, layout and type whose operator is \p op.
seg::SegEntry with_launch_of(const seg::SegEntry& e, Op op) {
  seg::SegEntry wrong = e;
  for (const seg::SegEntry& x : seg::seg_registry())
    if (x.params.family == e.params.family && x.params.layout == e.params.layout &&
        x.params.block == e.params.block && x.params.group == e.params.group &&
        x.params.vec == e.params.vec && x.params.dtype == e.params.dtype && x.params.op == op) {
      wrong.launch = x.launch;
      return wrong;
    }
  ADD_FAILURE() << "no entry like " << e.id << " for " << op_name(op);
  return wrong;
}

const seg::SegEntry& first_entry(seg::SegFamily f, seg::SegLayout l, DType d, Op o) {
  for (const seg::SegEntry& e : seg::seg_registry())
    if (e.params.family == f && e.params.layout == l && e.params.dtype == d && e.params.op == o)
      return e;
  throw std::runtime_error(std::string("no segmented entry of family ") + seg_family_name(f) +
                           ", layout " + seg_layout_name(l) + ", " + dtype_name(d) + " " +
                           op_name(o));
}

TEST(SegmentedWorkerGpu, AShapeAnEntryCannotRunIsLaunchFailedWithItsReason) {
  Measurer m(0, test::test_seed() + 2);
  const MeasurePolicy policy = quick_policy();
  auto expect_refused = [&](const seg::SegEntry& e, std::uint64_t n, std::uint64_t size,
                            const std::string& part) {
    const Result r = m.measure(e, n, size, policy, [] {});
    EXPECT_EQ(r.outcome, Outcome::launch_failed) << e.id << " n=" << n << " size=" << size;
    EXPECT_NE(r.error.find("cannot implement: "), std::string::npos) << r.error;
    EXPECT_NE(r.error.find(part), std::string::npos) << r.error;
    EXPECT_FALSE(r.median_us);
    EXPECT_EQ(r.segment_size, std::optional<std::uint64_t>(size));
  };
  // The tile family: rows of 3 elements do not divide a 16-byte vector.
  const seg::SegEntry& tile =
      first_entry(seg::SegFamily::tile, seg::SegLayout::fixed, DType::f32, Op::sum);
  expect_refused(tile, 3000, 3, "tile family");
  // A segment size that does not divide n, and none at all.
  const seg::SegEntry& group =
      first_entry(seg::SegFamily::group, seg::SegLayout::fixed, DType::i32, Op::sum);
  expect_refused(group, 1000, 7, "the segment size 7 does not divide n = 1000");
  expect_refused(group, 1000, 0, "the segment size 0 does not divide n = 1000");
  // int32 offsets cannot end a segment at 2^31 (refused before anything is allocated).
  const seg::SegEntry& off32 =
      first_entry(seg::SegFamily::block, seg::SegLayout::offsets32, DType::f32, Op::max);
  expect_refused(off32, std::uint64_t{1} << 31, std::uint64_t{1} << 20, "int32 offsets");
  // The same entry measures fine at a shape it takes afterwards.
  const Result fine = m.measure(off32, 1 << 20, 1 << 10, policy, [] {});
  EXPECT_EQ(fine.outcome, Outcome::ok) << fine.error;
}

TEST(SegmentedWorkerGpu, AWrongKernelIsIncorrectNamingTheSegment) {
  Measurer m(0, test::test_seed() + 3);
  const MeasurePolicy policy = quick_policy();
  for (seg::SegLayout l : {seg::SegLayout::fixed, seg::SegLayout::offsets64}) {
    // A "max" entry that runs the sum, an "argmin" one that runs the argmax.
    const seg::SegEntry& max = first_entry(seg::SegFamily::group, l, DType::i32, Op::max);
    const seg::SegEntry sum_as_max = with_launch_of(max, Op::sum);
    const Result bad = m.measure(sum_as_max, 64 * 100, 64, policy, [] {});
    EXPECT_EQ(bad.outcome, Outcome::incorrect) << max.id;
    EXPECT_NE(bad.error.find("segment "), std::string::npos) << bad.error;
    EXPECT_FALSE(bad.median_us);
    const seg::SegEntry& argmin = first_entry(seg::SegFamily::block, l, DType::f32, Op::argmin);
    const Result bad_arg =
        m.measure(with_launch_of(argmin, Op::argmax), 4096 * 7, 4096, policy, [] {});
    EXPECT_EQ(bad_arg.outcome, Outcome::incorrect) << argmin.id;
    EXPECT_NE(bad_arg.error.find("segment 0 (elements 0 to 4095)"), std::string::npos)
        << bad_arg.error;
    EXPECT_NE(bad_arg.error.find("first index of the extreme value"), std::string::npos)
        << bad_arg.error;
  }
}

/// The worker process: the test build's worker ($TR_TEST_WORKER on a device machine that runs
/// unpacked copies), spoken to as the supervisor does.
class WorkerProcess {
 public:
  WorkerProcess() : proc_({worker_path()}) {
    protocol::Command init;
    init.kind = protocol::Command::Kind::init;
    init.device = 0;
    init.seed = test::test_seed() & 0x7fffffffffffffffull;
    EXPECT_EQ(request(protocol::to_json(init)).event, protocol::Reply::Event::ready);
  }
  ~WorkerProcess() {
    protocol::Command quit;
    quit.kind = protocol::Command::Kind::quit;
    proc_.write_line(protocol::to_json(quit).dump());
    proc_.wait();
  }
  /// Sends \p msg and returns the first reply that is not a heartbeat.
  protocol::Reply request(const Json& msg) {
    EXPECT_TRUE(proc_.write_line(msg.dump()));
    std::string line;
    for (;;) {
      const ChildProcess::ReadStatus st = proc_.read_line(line, 120000);
      if (st != ChildProcess::ReadStatus::line)
        throw std::runtime_error("the worker did not answer " + msg.dump());
      protocol::Reply reply = protocol::parse_reply(line);
      if (reply.event != protocol::Reply::Event::busy) return reply;
    }
  }
  Result measure(const std::string& id, std::uint64_t n, std::optional<std::uint64_t> size) {
    protocol::Command c;
    c.kind = protocol::Command::Kind::measure;
    c.kernel_id = id;
    c.n = n;
    c.segment_size = size;
    c.policy = quick_policy();
    const protocol::Reply reply = request(protocol::to_json(c));
    EXPECT_EQ(reply.event, protocol::Reply::Event::result) << reply.error;
    return reply.result;
  }

 private:
  static std::string worker_path() {
    const char* worker = std::getenv("TR_TEST_WORKER");
    return worker && *worker ? worker : TR_TEST_WORKER;
  }
  ChildProcess proc_;
};

TEST(SegmentedWorkerGpu, TheWorkerProcessAnswersSegmentedCommands) {
  WorkerProcess w;
  const seg::SegEntry& rows =
      first_entry(seg::SegFamily::group, seg::SegLayout::fixed, DType::f32, Op::sum);
  const Result r = w.measure(rows.id, 64 * 1000, 64);
  EXPECT_EQ(r.outcome, Outcome::ok) << r.error;
  EXPECT_EQ(r.kernel_id, rows.id);
  EXPECT_EQ(r.segment_size, std::optional<std::uint64_t>(64));
  EXPECT_EQ(r.dtype, DType::f32);
  ASSERT_TRUE(r.median_us);
  EXPECT_GT(*r.median_us, 0);
  const seg::SegEntry& csr =
      first_entry(seg::SegFamily::thread, seg::SegLayout::offsets64, DType::u64, Op::argmax);
  const Result c = w.measure(csr.id, 3 * 7, 3);
  EXPECT_EQ(c.outcome, Outcome::ok) << c.error;
  EXPECT_EQ(c.segment_size, std::optional<std::uint64_t>(3));
  // A shape it cannot run, and an id this binary does not have: results, named, and the worker
  // goes on.
  const seg::SegEntry& tile =
      first_entry(seg::SegFamily::tile, seg::SegLayout::fixed, DType::f32, Op::sum);
  const Result refused = w.measure(tile.id, 3 * 1000, 3);
  EXPECT_EQ(refused.outcome, Outcome::launch_failed);
  EXPECT_NE(refused.error.find("cannot implement: the tile family"), std::string::npos)
      << refused.error;
  const Result unknown = w.measure("seg.group.b8.g3.v1.fixed.f32.sum", 30, 3);
  EXPECT_EQ(unknown.outcome, Outcome::launch_failed);
  EXPECT_NE(unknown.error.find("this binary has no kernel"), std::string::npos) << unknown.error;
  EXPECT_EQ(unknown.segment_size, std::optional<std::uint64_t>(3));
  // A whole-array entry on the same worker, as before.
  const Result whole = w.measure("vectorized.b256.u4.single_pass.i32.sum", 1 << 20, std::nullopt);
  EXPECT_EQ(whole.outcome, Outcome::ok) << whole.error;
  EXPECT_FALSE(whole.segment_size);
}

}  // namespace
}  // namespace tunedreduce::tuner

int main(int argc, char** argv) { return tunedreduce::test::gpu_test_main(argc, argv); }
