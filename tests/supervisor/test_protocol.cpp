// The worker protocol's parsers: what each side writes reads back the same, and every line that
// is not a well-formed message is refused with std::runtime_error naming the fault (a broken
// peer is reported, never trusted; tests/fuzz runs the same parsers on arbitrary bytes).

#include <gtest/gtest.h>

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
