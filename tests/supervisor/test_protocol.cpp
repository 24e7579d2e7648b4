// The worker protocol's parsers: what each side writes reads back the same, and every line that
// is not a well-formed message is refused with std::runtime_error naming the fault (a broken
// peer is reported, never trusted; tests/fuzz runs the same parsers on arbitrary bytes).

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/timing.hpp"
#include "tests/support/fixtures.hpp"
#include "tuner/protocol.hpp"

namespace tunedreduce::tuner::protocol {
namespace {

#define EXPECT_REFUSED(call, part)                                                \
  do {                                                                            \
    try {                                                                         \
      (void)(call);                                                               \
      ADD_FAILURE() << #call << " was accepted";                                  \
    } catch (const std::runtime_error& e) {                                       \
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what(); \
    }                                                                             \
  } while (0)

DeviceFingerprint h100() { return test::h100_fingerprint(); }

TEST(Protocol, WhatTheWorkerWritesTheSupervisorReadsBack) {
  Result r;
  r.kernel_id = "smem.b256.u4.dynamic.single_pass.f32.sum";
  r.dtype = DType::f32;
  r.n = std::uint64_t{1} << 30;
  r.outcome = Outcome::ok;
  r.median_us = 1350.5;
  r.p10_us = 1349.0;
  r.p90_us = 1352.25;
  r.repeats = 21;
  r.gbps = 3180.2;
  r.sm_clock_mhz = 1980;
  Json line = Json::object();
  line.set("event", "result");
  line.set("result", to_json(r));
  const Reply got = parse_reply(line.dump());
  ASSERT_EQ(got.event, Reply::Event::result);
  EXPECT_EQ(got.result.kernel_id, r.kernel_id);
  EXPECT_EQ(got.result.n, r.n);
  EXPECT_EQ(got.result.median_us, r.median_us);
  EXPECT_EQ(got.result.p90_us, r.p90_us);
  EXPECT_EQ(got.result.repeats, 21);
  EXPECT_EQ(got.result.sm_clock_mhz, 1980);
  EXPECT_FALSE(got.result.mem_clock_mhz);

  Json ready = Json::object();
  ready.set("event", "ready");
  ready.set("fingerprint", to_json(h100()));
  const Reply rd = parse_reply(ready.dump());
  ASSERT_EQ(rd.event, Reply::Event::ready);
  EXPECT_EQ(rd.fingerprint.key(), h100().key());
  EXPECT_EQ(rd.fingerprint.driver_version, 13000);

  EXPECT_TRUE(rd.fingerprint.uuid.empty());

  // The GPU's UUID travels with the fingerprint, as nvidia-smi prints it; it is soft: not part of
  // the key, and a peer that leaves it out is still understood.
  const unsigned char bytes[16] = {0x5e, 0xed, 0x00, 0x01, 0xab, 0xcd, 0x40, 0x00,
                                   0x80, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xef};
  DeviceFingerprint card = h100();
  card.uuid = gpu_uuid_text(bytes);
  EXPECT_EQ(card.uuid, "GPU-5eed0001-abcd-4000-8000-0123456789ef");
  EXPECT_EQ(card.key(), h100().key());
  ready.set("fingerprint", to_json(card));
  EXPECT_EQ(parse_reply(ready.dump()).fingerprint.uuid, card.uuid);
  Json probe = Json::object();
  Json devices = Json::array();
  Json dev = Json::object();
  dev.set("ordinal", 1);
  dev.set("fingerprint", to_json(card));
  devices.push_back(dev);
  probe.set("devices", devices);
  EXPECT_EQ(parse_probe(probe.dump()).devices.at(0).second.uuid, card.uuid);

  EXPECT_EQ(parse_reply(R"({"event":"busy"})").event, Reply::Event::busy);
  EXPECT_EQ(parse_reply(R"({"event":"bandwidth","gbps":3100.5})").gbps, 3100.5);
  const Reply fatal = parse_reply(R"({"event":"fatal","error":"no CUDA device","exit_code":6})");
  EXPECT_EQ(fatal.event, Reply::Event::fatal);
  EXPECT_EQ(fatal.error, "no CUDA device");
  EXPECT_EQ(fatal.exit_code, 6);
}

TEST(Protocol, WhatTheSupervisorWritesTheWorkerReadsBack) {
  MeasurePolicy p;
  p.warmup = 1;
  p.min_repeats = 5;
  p.max_repeats = 100;
  p.budget_ms = 250;
  p.target_spread = 0.02;
  p.l2 = db::L2Mode::warm;
  p.timeout_s = 10;
  Command m;
  m.kind = Command::Kind::measure;
  m.kernel_id = "tiled.b256.u4.single_pass.i32.max";
  m.n = 999983;
  m.policy = p;
  EXPECT_EQ(to_json(m).dump(),
            R"({"cmd":"measure","kernel_id":"tiled.b256.u4.single_pass.i32.max","n":999983,)"
            R"("policy":{"warmup":1,"min_repeats":5,"max_repeats":100,"budget_ms":250.0,)"
            R"("target_spread":0.02,"l2":"warm","timeout_s":10.0}})");
  const Command c = parse_command(to_json(m).dump());
  ASSERT_EQ(c.kind, Command::Kind::measure);
  EXPECT_EQ(c.kernel_id, "tiled.b256.u4.single_pass.i32.max");
  EXPECT_EQ(c.n, 999983u);
  EXPECT_EQ(c.policy.max_repeats, 100);
  EXPECT_EQ(c.policy.l2, db::L2Mode::warm);
  EXPECT_EQ(c.policy.target_spread, 0.02);
  const Command init = parse_command(R"({"cmd":"init","device":1,"seed":123})");
  EXPECT_EQ(init.kind, Command::Kind::init);
  EXPECT_EQ(init.device, 1);
  EXPECT_EQ(init.seed, 123u);
  EXPECT_EQ(to_json(init).dump(), R"({"cmd":"init","device":1,"seed":123})");
  Command other;
  other.kind = Command::Kind::bandwidth;
  EXPECT_EQ(to_json(other).dump(), R"({"cmd":"bandwidth"})");
  EXPECT_EQ(parse_command(to_json(other).dump()).kind, Command::Kind::bandwidth);
  other.kind = Command::Kind::quit;
  EXPECT_EQ(to_json(other).dump(), R"({"cmd":"quit"})");
  EXPECT_EQ(parse_command(to_json(other).dump()).kind, Command::Kind::quit);

  Json dev = Json::object();
  dev.set("ordinal", 0);
  dev.set("fingerprint", to_json(h100()));
  Json devices = Json::array();
  devices.push_back(dev);
  Json probe = Json::object();
  probe.set("devices", devices);
  const Probe got = parse_probe(probe.dump());
  ASSERT_EQ(got.devices.size(), 1u);
  EXPECT_EQ(got.devices[0].second.name, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(got.error);
  const Probe none = parse_probe(R"({"devices":[],"error":"no CUDA-capable device is detected"})");
  EXPECT_TRUE(none.devices.empty());
  EXPECT_EQ(none.error, "no CUDA-capable device is detected");
}

TEST(Protocol, AResultLineIsUnchangedAndItsTimingIsTheRecordsMapping) {
  Result r;
  r.kernel_id = "warp_shuffle.b128.u2.two_pass.f64.min";
  r.dtype = DType::f64;
  r.op = Op::min;
  r.n = 4096;
  r.median_us = 6.5;
  r.p10_us = 6.25;
  r.p90_us = 7.0;
  r.repeats = 40;
  r.gbps = gbps_of(4096 * 8, r.median_us);
  r.mem_clock_mhz = 2619;
  const Json written = to_json(r);
  EXPECT_EQ(written.dump(),
            R"({"kernel_id":"warp_shuffle.b128.u2.two_pass.f64.min","dtype":"f64","op":"min",)"
            R"("n":4096,"outcome":"ok","median_us":6.5,"p10_us":6.25,"p90_us":7.0,"repeats":40,)"
            R"("gbps":5.041230769230769,"sm_clock_mhz":null,"mem_clock_mhz":2619,"error":""})");
  Json timing = Json::object();
  append_timing(timing, r);
  for (const auto& [key, value] : timing.as_object()) EXPECT_EQ(*written.find(key), value) << key;

  // Every member of the timing must be there (null where unknown), of its type.
  for (const auto& [key, value] : timing.as_object()) {
    Json line = Json::object();
    line.set("event", "result");
    Json j = Json::object();
    for (const auto& [k, v] : written.as_object())
      if (k != key) j.set(k, v);
    line.set("result", j);
    EXPECT_REFUSED(parse_reply(line.dump()), "lacks \"" + key + "\"");
    j = written;
    j.set(key, "fast");
    line.set("result", j);
    EXPECT_REFUSED(parse_reply(line.dump()), "\"" + key + "\": expected a");
  }
  Json j = written;
  j.set("sm_clock_mhz", std::int64_t{1} << 40);
  Json line = Json::object();
  line.set("event", "result");
  line.set("result", j);
  EXPECT_REFUSED(parse_reply(line.dump()), "\"sm_clock_mhz\": out of range");
}

TEST(Protocol, ASegmentedMeasurementCarriesItsSegmentSizeBothWays) {
  Command m;
  m.kind = Command::Kind::measure;
  m.kernel_id = "seg.group.b256.g8.v4.fixed.f32.sum";
  m.n = 7 * 4096;
  m.segment_size = 4096;
  m.policy.l2 = db::L2Mode::cold;
  const std::string line = to_json(m).dump();
  EXPECT_EQ(line.substr(0, line.find(",\"policy\"")),
            R"({"cmd":"measure","kernel_id":"seg.group.b256.g8.v4.fixed.f32.sum","n":28672,)"
            R"("segment_size":4096)");
  const Command c = parse_command(line);
  ASSERT_EQ(c.kind, Command::Kind::measure);
  EXPECT_EQ(c.kernel_id, m.kernel_id);
  EXPECT_EQ(c.n, 28672u);
  EXPECT_EQ(c.segment_size, std::optional<std::uint64_t>(4096));
  EXPECT_EQ(c.policy.l2, db::L2Mode::cold);
  // One segment of n elements, and n segments of one.
  for (std::uint64_t size : {std::uint64_t{28672}, std::uint64_t{1}}) {
    m.segment_size = size;
    EXPECT_EQ(parse_command(to_json(m).dump()).segment_size, std::optional<std::uint64_t>(size));
  }
  // A whole-array command has none, and writes none.
  Command whole = m;
  whole.kernel_id = "tiled.b256.u4.single_pass.i32.max";
  whole.segment_size.reset();
  EXPECT_EQ(to_json(whole).dump().find("segment_size"), std::string::npos);
  EXPECT_FALSE(parse_command(to_json(whole).dump()).segment_size);

  Result r;
  r.kernel_id = "seg.split.b512.v2.offsets64.f64.argmax";
  r.dtype = DType::f64;
  r.op = Op::argmax;
  r.n = 3000;
  r.segment_size = 3;
  r.outcome = Outcome::ok;
  r.median_us = 4.25;
  r.p10_us = 4.0;
  r.p90_us = 4.5;
  r.repeats = 10;
  r.gbps = gbps_of(3000 * 8 + 1000 * 16, r.median_us);
  const Json written = to_json(r);
  EXPECT_EQ(written.find("segment_size")->as_int(), 3);
  Json reply = Json::object();
  reply.set("event", "result");
  reply.set("result", written);
  const Reply got = parse_reply(reply.dump());
  ASSERT_EQ(got.event, Reply::Event::result);
  EXPECT_EQ(got.result.kernel_id, r.kernel_id);
  EXPECT_EQ(got.result.n, 3000u);
  EXPECT_EQ(got.result.segment_size, std::optional<std::uint64_t>(3));
  EXPECT_EQ(got.result.op, Op::argmax);
  EXPECT_EQ(got.result.median_us, 4.25);
  EXPECT_EQ(to_json(got.result).dump(), written.dump());
  // A refusal is a result too: it names its segment size as well.
  r.outcome = Outcome::launch_failed;
  r.error = "cannot implement: the tile family takes contiguous rows of a length dividing 4";
  r.median_us.reset();
  r.p10_us.reset();
  r.p90_us.reset();
  r.gbps.reset();
  r.repeats = 0;
  reply.set("result", to_json(r));
  const Reply failed = parse_reply(reply.dump());
  EXPECT_EQ(failed.result.outcome, Outcome::launch_failed);
  EXPECT_EQ(failed.result.segment_size, std::optional<std::uint64_t>(3));
  EXPECT_EQ(failed.result.error, r.error);
  // A whole-array result writes none.
  Result plain;
  plain.kernel_id = "k";
  EXPECT_EQ(to_json(plain).find("segment_size"), nullptr);
}

TEST(Protocol, EveryBadSegmentSizeIsRefusedNamingTheMember) {
  const std::string seg_id = "seg.thread.b256.v4.fixed.i32.sum";
  const std::string policy =
      R"("policy":{"warmup":1,"min_repeats":1,"max_repeats":1,"budget_ms":1,"target_spread":0,)"
      R"("l2":"cold","timeout_s":1})";
  auto command = [&](const std::string& id, const std::string& n, const std::string& size) {
    return R"({"cmd":"measure","kernel_id":")" + id + R"(","n":)" + n +
           (size.empty() ? "" : R"(,"segment_size":)" + size) + "," + policy + "}";
  };
  Result base;
  base.kernel_id = seg_id;
  base.n = 1000;
  base.segment_size = 10;
  auto result = [&](const std::string& id, std::int64_t n, const Json* size) {
    Json j = to_json(base);
    Json out = Json::object();
    for (const auto& [k, v] : j.as_object()) {
      if (k == "segment_size") continue;
      if (k == "kernel_id") out.set(k, id);
      else if (k == "n") out.set(k, n);
      else out.set(k, v);
    }
    if (size) out.set("segment_size", *size);
    Json line = Json::object();
    line.set("event", "result");
    line.set("result", out);
    return line.dump();
  };
  // The well-formed ones first, so that the refusals below are the member's alone.
  EXPECT_EQ(parse_command(command(seg_id, "1000", "10")).segment_size,
            std::optional<std::uint64_t>(10));
  const Json ten(std::int64_t{10});
  EXPECT_EQ(parse_reply(result(seg_id, 1000, &ten)).result.segment_size,
            std::optional<std::uint64_t>(10));
  EXPECT_FALSE(parse_command(command("k", "1000", "")).segment_size);
  EXPECT_FALSE(parse_command(command("k", "1000", "null")).segment_size);

  // A segmented kernel without one (absent or null).
  EXPECT_REFUSED(parse_command(command(seg_id, "1000", "")), "lacks \"segment_size\"");
  EXPECT_REFUSED(parse_command(command(seg_id, "1000", "null")), "lacks \"segment_size\"");
  EXPECT_REFUSED(parse_command(command(seg_id, "1000", "")), "'" + seg_id + "'");
  EXPECT_REFUSED(parse_reply(result(seg_id, 1000, nullptr)), "lacks \"segment_size\"");
  // One for a kernel that is not segmented (a whole-array id, or one that only looks alike).
  for (const std::string id : {"tiled.b256.u4.single_pass.i32.max", "seg", "segx.thread", ""}) {
    EXPECT_REFUSED(parse_command(command(id, "1000", "10")),
                   "\"segment_size\" is for segmented kernels");
    EXPECT_REFUSED(parse_reply(result(id, 1000, &ten)),
                   "\"segment_size\" is for segmented kernels");
  }
  // Not a positive integer.
  for (const char* bad : {"0", "-5", "-9223372036854775808"}) {
    EXPECT_REFUSED(parse_command(command(seg_id, "1000", bad)),
                   std::string("\"segment_size\" = ") + bad + " is out of range");
    const Json b(static_cast<std::int64_t>(std::stoll(bad)));
    EXPECT_REFUSED(parse_reply(result(seg_id, 1000, &b)),
                   std::string("\"segment_size\" = ") + bad + " is out of range");
  }
  for (const char* bad : {"2.5", "10.0", "\"10\"", "true", "[10]", "{}", "1e3"}) {
    EXPECT_REFUSED(parse_command(command(seg_id, "1000", bad)),
                   "\"segment_size\" is not an integer");
  }
  const Json text("10");
  EXPECT_REFUSED(parse_reply(result(seg_id, 1000, &text)), "\"segment_size\" is not an integer");
  const Json real(10.0);
  EXPECT_REFUSED(parse_reply(result(seg_id, 1000, &real)), "\"segment_size\" is not an integer");
  // Not a divisor of n.
  EXPECT_REFUSED(parse_command(command(seg_id, "1000", "3")),
                 "\"segment_size\" = 3 does not divide \"n\" = 1000");
  EXPECT_REFUSED(parse_command(command(seg_id, "1000", "2000")),
                 "\"segment_size\" = 2000 does not divide \"n\" = 1000");
  EXPECT_REFUSED(parse_command(command(seg_id, "9223372036854775807", "9223372036854775806")),
                 "does not divide");
  const Json three(std::int64_t{3});
  EXPECT_REFUSED(parse_reply(result(seg_id, 1000, &three)),
                 "\"segment_size\" = 3 does not divide \"n\" = 1000");
  // n = 0: no segments, which every segment size divides.
  EXPECT_EQ(parse_command(command(seg_id, "0", "7")).segment_size, std::optional<std::uint64_t>(7));
}

TEST(Protocol, EveryMalformedLineIsRefusedWithTheFault) {
  EXPECT_REFUSED(parse_reply("this is not json"), "");
  EXPECT_REFUSED(parse_reply(""), "");
  EXPECT_REFUSED(parse_reply("[1,2]"), "not a JSON object");
  EXPECT_REFUSED(parse_reply("{}"), "lacks \"event\"");
  EXPECT_REFUSED(parse_reply(R"({"event":5})"), "");
  EXPECT_REFUSED(parse_reply(R"({"event":"teleport"})"), "unknown event 'teleport'");
  EXPECT_REFUSED(parse_reply(R"({"event":"result"})"), "lacks \"result\"");
  EXPECT_REFUSED(parse_reply(R"({"event":"result","result":{"kernel_id":"x"}})"),
                 "lacks \"dtype\"");
  EXPECT_REFUSED(parse_reply(R"({"event":"result","result":[]})"), "");
  EXPECT_REFUSED(parse_reply(R"({"event":"bandwidth","gbps":"fast"})"), "");
  EXPECT_REFUSED(parse_reply(R"({"event":"fatal","error":"x","exit_code":4294967296})"),
                 "out of range");
  EXPECT_REFUSED(parse_reply(R"({"event":"ready","fingerprint":{"name":"x"}})"),
                 "lacks \"cc_major\"");
  {
    Json bad = to_json(h100());
    bad.set("uuid", 7);
    Json line = Json::object();
    line.set("event", "ready");
    line.set("fingerprint", bad);
    EXPECT_REFUSED(parse_reply(line.dump()), "\"uuid\" is not a string");
  }
  // A result with a negative size or repeat count, or a bad outcome.
  Result r;
  r.kernel_id = "k";
  r.outcome = Outcome::ok;
  Json j = to_json(r);
  j.set("n", -1);
  Json line = Json::object();
  line.set("event", "result");
  line.set("result", j);
  EXPECT_REFUSED(parse_reply(line.dump()), "\"n\" = -1 is out of range");
  j = to_json(r);
  j.set("repeats", -3);
  line.set("result", j);
  EXPECT_REFUSED(parse_reply(line.dump()), "\"repeats\": must be at least 0");
  j = to_json(r);
  j.set("outcome", "great");
  line.set("result", j);
  EXPECT_REFUSED(parse_reply(line.dump()), "bad dtype, op or outcome");

  EXPECT_REFUSED(parse_command("{\"cmd\":\"measure\"}"), "lacks \"kernel_id\"");
  EXPECT_REFUSED(parse_command(R"({"cmd":"dance"})"), "unknown command 'dance'");
  EXPECT_REFUSED(parse_command(R"({"cmd":"init","device":0})"), "lacks \"seed\"");
  EXPECT_REFUSED(
      parse_command(
          R"({"cmd":"measure","kernel_id":"k","n":1,"policy":{"warmup":1,"min_repeats":0,"max_repeats":1,"budget_ms":1,"target_spread":0,"l2":"cold","timeout_s":1}})"),
      "\"min_repeats\" = 0 is out of range");
  EXPECT_REFUSED(
      parse_command(
          R"({"cmd":"measure","kernel_id":"k","n":1,"policy":{"warmup":1,"min_repeats":1,"max_repeats":1,"budget_ms":1,"target_spread":0,"l2":"lukewarm","timeout_s":1}})"),
      "bad l2 mode");
  EXPECT_REFUSED(parse_probe(R"({"devices":{}})"), "");
  EXPECT_REFUSED(parse_probe(R"({"devices":[{"ordinal":-1,"fingerprint":{}}]})"), "out of range");
  EXPECT_REFUSED(parse_probe(R"({"devices":[7]})"), "");
}

}  // namespace
}  // namespace tunedreduce::tuner::protocol
