// A stand-in for `tunedreduce _worker` that needs no GPU: it speaks the worker protocol and
// misbehaves on request, so the supervisor's isolation is tested in CI.
//   n == 13: dies (abort)            n == 17: hangs (never answers)
//   n == 19: reports a sticky CUDA error as `crashed`, then exits
//   n == 23: answers with a line that is not JSON
//   n == 29: answers with a line that never ends (bytes without a newline until killed)
//   n == 31: answers with JSON that is not a reply (a result without its members)
//   n == 37: answers with an event the protocol does not have
//   otherwise: an ok result whose median is a function of the kernel id and n
// Devices 0..99 are one model ("Fake GPU"); an init of device 100 or more answers another. Each
// device has a UUID of its own (fake_uuid: "GPU-fa4e0000-...-<ordinal>"), as each card has; with
// FAKE_WORKER_NO_UUID set, none (a worker that does not know its GPU's UUID).
// With FAKE_WORKER_LOG set, every measure request is appended to that file (one "id n" a line).
// With FAKE_WORKER_NOISY set, the median depends on the repeats asked for too.

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "common/hash.hpp"
#include "common/json.hpp"
#include "common/timing.hpp"
#include "kernels/manifest.hpp"
#include "tuner/protocol.hpp"

using namespace tunedreduce;

namespace {
void send(const Json& j) { std::cout << j.dump() << "\n" << std::flush; }

std::string fake_uuid(int device) {
  if (std::getenv("FAKE_WORKER_NO_UUID")) return {};
  unsigned char bytes[16] = {0xfa, 0x4e};
  for (int i = 0; i < 4; ++i) bytes[15 - i] = static_cast<unsigned char>(device >> (8 * i));
  return gpu_uuid_text(bytes);
}
}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGINT, SIG_IGN);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--probe") {
      Json dev = Json::object();
      dev.set("ordinal", 0);
      DeviceFingerprint fp;
      fp.name = "Fake GPU";
      fp.cc_major = 9;
      fp.sm_count = 4;
      fp.uuid = fake_uuid(0);
      dev.set("fingerprint", tuner::protocol::to_json(fp));
      Json devices = Json::array();
      devices.push_back(dev);
      Json j = Json::object();
      j.set("devices", devices);
      send(j);
      return 0;
    }
  std::string line;
  while (std::getline(std::cin, line)) {
    const tuner::protocol::Command msg = tuner::protocol::parse_command(line);
    using Kind = tuner::protocol::Command::Kind;
    Json reply = Json::object();
    if (msg.kind == Kind::quit) return 0;
    if (msg.kind == Kind::init) {
      DeviceFingerprint fp;
      fp.name = msg.device >= 100 ? "Other Fake GPU" : "Fake GPU";
      fp.cc_major = 9;
      fp.sm_count = 4;
      fp.driver_version = 13000;
      fp.runtime_version = 13000;
      fp.uuid = fake_uuid(msg.device);
      reply.set("event", "ready");
      reply.set("fingerprint", tuner::protocol::to_json(fp));
    } else if (msg.kind == Kind::bandwidth) {
      reply.set("event", "bandwidth");
      reply.set("gbps", 3000.0);
    } else if (msg.kind == Kind::measure) {
      const std::string& id = msg.kernel_id;
      const std::uint64_t n = msg.n;
      if (const char* log = std::getenv("FAKE_WORKER_LOG"))
        std::ofstream(log, std::ios::app) << id << " " << n << "\n";
      Json busy = Json::object();
      busy.set("event", "busy");
      send(busy);
      if (n == 13) std::abort();
      if (n == 17)
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      if (n == 23) {
        std::cout << "this is not json\n" << std::flush;
        continue;
      }
      if (n == 29) {
        const std::string chunk(65536, 'x');
        for (;;) std::cout << chunk << std::flush;
      }
      if (n == 31) {
        std::cout << "{\"event\":\"result\",\"result\":{\"kernel_id\":\"" << id << "\"}}\n"
                  << std::flush;
        continue;
      }
      if (n == 37) {
        std::cout << "{\"event\":\"teleport\"}\n" << std::flush;
        continue;
      }
      tuner::Result r;
      r.kernel_id = id;
      if (const auto* m = kernels::manifest_find(id)) {
        r.dtype = m->params.dtype;
        r.op = m->params.op;
      }
      r.n = n;
      r.segment_size = msg.segment_size;  // a segmented request's result names its segment size
      if (n == 19) {
        r.outcome = db::Outcome::crashed;
        r.error = "cudaErrorIllegalAddress (an illegal memory access was encountered)";
      } else {
        const double base = 5.0 + static_cast<double>(fnv1a64(id) % 1000) / 100.0;
        r.median_us = base + static_cast<double>(n) * 1e-6;
        // FAKE_WORKER_NOISY: the median also depends on the repeats (as a measurement's noise
        // does), by up to +-2 us: a candidate's rank depends on which measurement of it is used.
        if (std::getenv("FAKE_WORKER_NOISY")) {
          const std::string salted =
              id + "/" + std::to_string(n) + "/" + std::to_string(msg.policy.min_repeats);
          *r.median_us += static_cast<double>(fnv1a64(salted) % 4001) / 1000.0 - 2.0;
        }
        r.p10_us = *r.median_us * 0.99;
        r.p90_us = *r.median_us * 1.01;
        r.repeats = msg.policy.min_repeats;
        r.gbps = gbps_of(n * dtype_size(r.dtype), r.median_us);
      }
      reply.set("event", "result");
      reply.set("result", tuner::protocol::to_json(r));
      send(reply);
      if (n == 19) return 1;
      continue;
    }
    send(reply);
  }
  return 0;
}
