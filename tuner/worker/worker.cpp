#include "tuner/worker_main.hpp"

#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "kernels/device.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tuner/protocol.hpp"
#include "tuner/worker/measurer.hpp"

namespace tunedreduce::tuner {

namespace {

void send(const Json& message) {
  const std::string line = message.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

Json event(const char* name) {
  Json j = Json::object();
  j.set("event", name);
  return j;
}

int fatal(const std::string& error, int code) {
  Json j = event("fatal");
  j.set("error", error);
  j.set("exit_code", code);
  send(j);
  return code;
}

int probe() {
  std::string why;
  const int count = kernels::device_count(&why);
  Json devices = Json::array();
  for (int i = 0; i < count; ++i) {
    Json d = Json::object();
    d.set("ordinal", i);
    d.set("fingerprint", protocol::to_json(kernels::query_fingerprint(i)));
    devices.push_back(std::move(d));
  }
  Json j = Json::object();
  j.set("devices", std::move(devices));
  if (count == 0) j.set("error", why);
  send(j);
  return exit_code::ok;
}

const kernels::Entry* find_entry(const std::string& id, std::span<const kernels::Entry> extra) {
  if (const kernels::Entry* e = kernels::find(id)) return e;
  for (const kernels::Entry& e : extra)
    if (id == e.id) return &e;
  return nullptr;
}

}  // namespace

int worker_main(int argc, char** argv, std::span<const kernels::Entry> extra_entries) {
  // Ctrl-C, and a scheduler's SIGTERM, reach the whole process group; the supervisor decides what
  // happens (common/interrupt.hpp). A supervisor that dies takes its workers with it
  // (PR_SET_PDEATHSIG in tuner/supervisor/child_process.cpp).
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--probe") return probe();

  std::unique_ptr<Measurer> measurer;
  std::string line;
  while (std::getline(std::cin, line)) {
    protocol::Command msg;
    try {
      msg = protocol::parse_command(line);
    } catch (const std::exception& e) {
      return fatal(std::string("unreadable request: ") + e.what(), exit_code::failure);
    }
    using Kind = protocol::Command::Kind;
    try {
      if (msg.kind == Kind::quit) return exit_code::ok;
      if (msg.kind == Kind::init) {
        std::string why;
        const int count = kernels::device_count(&why);
        if (count == 0) return fatal("no CUDA device: " + why, exit_code::no_gpu);
        if (msg.device < 0 || msg.device >= count)
          return fatal("no CUDA device " + std::to_string(msg.device) + " (this machine has " +
                           std::to_string(count) + ")",
                       exit_code::usage);
        measurer = std::make_unique<Measurer>(msg.device, msg.seed);
        Json j = event("ready");
        j.set("fingerprint", protocol::to_json(measurer->fingerprint()));
        send(j);
      } else if (!measurer) {
        return fatal(std::string("'") + (msg.kind == Kind::bandwidth ? "bandwidth" : "measure") +
                         "' before 'init'",
                     exit_code::failure);
      } else if (msg.kind == Kind::bandwidth) {
        Json j = event("bandwidth");
        j.set("gbps", measurer->attainable_read_gbps());
        send(j);
      } else {  // measure
        const std::string& id = msg.kernel_id;
        const std::uint64_t n = msg.n;
        const MeasurePolicy& policy = msg.policy;
        const auto busy = [] { send(event("busy")); };
        // A segmented entry ("seg.*": parse_command saw to its segment size) or a whole-array one.
        const kernels::segmented::SegEntry* seg_entry = nullptr;
        const kernels::Entry* entry = nullptr;
        if (protocol::is_segmented_kernel(id)) seg_entry = kernels::segmented::find_seg(id);
        else entry = find_entry(id, extra_entries);
        Result r;
        if (!entry && !seg_entry) {
          r.kernel_id = id;
          r.n = n;
          r.segment_size = msg.segment_size;
          r.outcome = Outcome::launch_failed;
          r.error = "this binary has no kernel '" + id + "'";
        } else {
          try {
            r = seg_entry
                    ? measurer->measure(*seg_entry, n, msg.segment_size.value_or(0), policy, busy)
                    : measurer->measure(*entry, n, policy, busy);
          } catch (const measure::StickyCudaError& e) {
            r.kernel_id = id;
            r.dtype = seg_entry ? seg_entry->params.dtype : entry->params.dtype;
            r.op = seg_entry ? seg_entry->params.op : entry->params.op;
            r.n = n;
            r.segment_size = msg.segment_size;
            r.outcome = Outcome::crashed;
            r.error = e.what();
            Json j = event("result");
            j.set("result", protocol::to_json(r));
            send(j);
            return exit_code::failure;  // the context is gone
          }
        }
        Json j = event("result");
        j.set("result", protocol::to_json(r));
        send(j);
      }
    } catch (const measure::StickyCudaError& e) {
      return fatal(e.what(), exit_code::failure);
    } catch (const std::exception& e) {
      return fatal(e.what(), exit_code::failure);
    }
  }
  return exit_code::ok;  // the supervisor closed our stdin
}

}  // namespace tunedreduce::tuner
