#include "tuner/gpu_runner.hpp"

#include <unistd.h>

#include <chrono>
#include <random>
#include <spdlog/spdlog.h>

#include "common/error.hpp"
#include "common/paths.hpp"
#include "db/database.hpp"
#include "kernels/manifest.hpp"
#include "kernels/segmented/segmented.hpp"
#include "tunedreduce/version.hpp"
#include "tuner/protocol.hpp"
#include "tuner/resume.hpp"
#include "tuner/supervisor/child_process.hpp"

namespace tunedreduce::tuner {

namespace {

std::vector<std::string> default_worker_command() {
  const std::filesystem::path exe = this_executable();
  if (exe.empty()) throw Error("cannot find this executable (/proc/self/exe) to start a worker");
  return {exe.string(), "_worker"};
}

Json command(protocol::Command::Kind kind) {
  protocol::Command c;
  c.kind = kind;
  return protocol::to_json(c);
}

std::uint64_t fresh_seed() {
  return (std::uint64_t(std::random_device{}()) << 32 ^ std::random_device{}()) &
         0x7fffffffffffffffull;
}

db::CandidateParams candidate_params(const std::string& id) {
  if (const kernels::ManifestEntry* m = kernels::manifest_find(id))
    return kernels::stored_params(m->params);
  if (const auto p = kernels::segmented::parse_seg_id(id))
    return kernels::segmented::stored_params(*p);
  db::CandidateParams c;
  c.family = id.substr(0, id.find('.'));  // test-only kernels
  return c;
}

/// One worker process bound to one device.
class Worker {
 public:
  Worker(const std::vector<std::string>& argv, int device, double timeout_s)
      : proc_(argv), timeout_ms_(static_cast<int>(timeout_s * 1000)) {
    protocol::Command init;
    init.kind = protocol::Command::Kind::init;
    init.device = device;
    init.seed = fresh_seed();
    // Creating the context can be slow.
    const protocol::Reply reply = request(protocol::to_json(init), std::max(timeout_ms_, 120000));
    if (reply.event == protocol::Reply::Event::fatal)
      throw Error("worker on device " + std::to_string(device) + ": " + reply.error,
                  reply.exit_code);
    if (reply.event != protocol::Reply::Event::ready)
      lose(db::Outcome::crashed, "the worker did not answer 'ready' to init");
    fingerprint_ = reply.fingerprint;
  }
  ~Worker() {
    if (alive_) proc_.write_line(command(protocol::Command::Kind::quit).dump());
  }

  const DeviceFingerprint& fingerprint() const { return fingerprint_; }

  /// Sends one message and returns the first answer that is not a heartbeat. A worker that says
  /// nothing for timeout_ms is killed; one that exits is reaped. Both throw WorkerLost.
  struct Lost {
    db::Outcome outcome;
    std::string why;
  };
  protocol::Reply request(const Json& msg, int timeout_ms) {
    send(msg);
    return receive(timeout_ms);
  }
  void send(const Json& msg) {
    if (!proc_.write_line(msg.dump())) lose(db::Outcome::crashed, "the worker stopped reading");
  }
  /// The next reply that is not a heartbeat. A line that is not a well-formed reply (not JSON,
  /// an unknown event, a missing or mistyped member) kills the worker: `crashed`.
  protocol::Reply receive(int timeout_ms) {
    std::string line;
    for (;;) {
      switch (proc_.read_line(line, timeout_ms)) {
        case ChildProcess::ReadStatus::timeout:
          proc_.kill_now();
          proc_.wait();
          lose(db::Outcome::timeout, "no answer from the worker for " +
                                         std::to_string(timeout_ms / 1000.0).substr(0, 5) +
                                         " s: killed");
          break;
        case ChildProcess::ReadStatus::eof:
          lose(db::Outcome::crashed, "the worker died (" + describe_exit(proc_.wait()) + ")");
          break;
        case ChildProcess::ReadStatus::too_long:
          proc_.kill_now();
          proc_.wait();
          lose(db::Outcome::crashed, "unreadable worker output: a line longer than " +
                                         std::to_string(ChildProcess::max_line_bytes) +
                                         " bytes: killed");
          break;
        case ChildProcess::ReadStatus::line: {
          protocol::Reply reply;
          try {
            reply = protocol::parse_reply(line);
          } catch (const std::exception& e) {
            proc_.kill_now();
            proc_.wait();
            lose(db::Outcome::crashed, "unreadable worker output: " + std::string(e.what()));
          }
          if (reply.event == protocol::Reply::Event::busy) continue;
          return reply;
        }
      }
    }
  }
  int timeout_ms() const { return timeout_ms_; }
  /// After a `crashed` result the worker exits by itself.
  void retire() {
    alive_ = false;
    proc_.wait();
  }

 private:
  [[noreturn]] void lose(db::Outcome o, std::string why) {
    alive_ = false;
    throw Lost{o, std::move(why)};
  }
  ChildProcess proc_;
  int timeout_ms_;
  bool alive_ = true;
  DeviceFingerprint fingerprint_;
};

class GpuRunner final : public Runner {
 public:
  explicit GpuRunner(GpuRunnerOptions opt)
      : opt_(std::move(opt)),
        argv_(opt_.worker_command.empty() ? default_worker_command() : opt_.worker_command),
        db_(db::Database::open_writer(opt_.db_path)) {
    try {
      start_worker();
    } catch (const Worker::Lost& lost) {
      throw Error("cannot start a worker (" + argv_[0] + "): " + lost.why);
    }
    const DeviceFingerprint& fp = worker_->fingerprint();
    if (opt_.join) {
      if (fp.key() != opt_.join->device_key)
        throw Error("GPU " + std::to_string(opt_.device) + " (" + fp.name + ", fingerprint " +
                    fp.key() + ") cannot measure a share of the run of fingerprint " +
                    opt_.join->device_key + ": another model");
      rec_ = opt_.join->recording;
      bandwidth_ = opt_.join->bandwidth_gbps;
      record_gpu(fp);
      spdlog::info("device {}: {} (fingerprint {}), measuring a share of run {}", opt_.device,
                   fp.name, fp.key(), rec_.run_id);
      return;
    }
    rec_.device_id = db_.upsert_device(fp);
    rec_.driver_version = fp.driver_version;
    rec_.runtime_version = fp.runtime_version;
    db::RunInfo info;
    info.tool_version = TUNEDREDUCE_VERSION_STRING;
    info.manifest_hash = kernels::manifest_hash();
    info.config_hash = opt_.config_hash;
    if (!opt_.config_text.empty()) info.config_text = opt_.config_text;
    info.l2_mode = opt_.policy.l2;
    info.driver_version = fp.driver_version;
    info.runtime_version = fp.runtime_version;
    rec_.run_id = db_.begin_run(info);
    record_gpu(fp);
    spdlog::info("device {}: {} (fingerprint {}), run {}", opt_.device, fp.name, fp.key(),
                 rec_.run_id);
    if (opt_.measure_bandwidth) {
      try {
        const protocol::Reply reply = worker_->request(command(protocol::Command::Kind::bandwidth),
                                                       std::max(worker_->timeout_ms(), 60000));
        if (reply.event != protocol::Reply::Event::bandwidth)
          throw Worker::Lost{db::Outcome::crashed, "the worker did not answer 'bandwidth'"};
        bandwidth_ = reply.gbps;
        db_.record_attainable_bandwidth(rec_.run_id, rec_.device_id, *bandwidth_);
        spdlog::info("attainable read bandwidth: {:.0f} GB/s", *bandwidth_);
      } catch (const Worker::Lost& lost) {
        spdlog::warn("measuring the attainable bandwidth failed: {}", lost.why);
        worker_.reset();
      }
    }
  }

  std::optional<double> attainable_gbps() const override { return bandwidth_; }
  std::optional<Recording> recording() const override { return rec_; }

  // Every request is measured (what the database already has was answered before it came
  // here: tuner/resume.hpp). One request is kept in flight ahead of the one being recorded: while
  // the supervisor writes result i to the database, the worker already measures request i + 1.
  // Results are committed in groups (every record_group results or record_interval_s, and before
  // returning): one commit, one sync per group, so that several GPUs writing into one database
  // do not wait for each other's syncs; a tuner killed mid-batch loses at most the group not yet
  // committed.
  std::vector<Result> measure(std::span<const Request> requests) override {
    std::vector<Result> out;
    out.reserve(requests.size());
    bool sent = false;  // the worker is working on request i already
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (opt_.cancel && opt_.cancel->load() && !sent) break;
      Result r = sent ? await(requests[i]) : send_and_await(requests[i]);
      // Send the next request before recording this one.
      sent = worker_ && i + 1 < requests.size() && !(opt_.cancel && opt_.cancel->load()) &&
             send(requests[i + 1]);
      finish(r, requests[i]);
      out.push_back(std::move(r));
      record(out, out.size() - 1);
    }
    commit(out);
    return out;
  }

 private:
  /// The gpus row of this runner's card, which every measurement it records names (schema
  /// version 5): a run shared by several GPUs of one model names each measurement's own GPU.
  void record_gpu(const DeviceFingerprint& fp) {
    if (!fp.uuid.empty()) gpu_id_ = db_.upsert_gpu(fp.uuid, rec_.device_id);
  }

  void start_worker() {
    worker_ = std::make_unique<Worker>(argv_, opt_.device, opt_.policy.timeout_s);
  }

  /// Sends a measure request; false (and no worker) when the worker is gone.
  bool send(const Request& req) {
    try {
      if (!worker_) start_worker();
      protocol::Command msg;
      msg.kind = protocol::Command::Kind::measure;
      msg.kernel_id = req.kernel_id;
      msg.n = req.n;
      msg.segment_size = req.segment_size;
      msg.policy = policy_for(opt_.policy, req);
      worker_->send(protocol::to_json(msg));
      return true;
    } catch (const Worker::Lost& lost) {
      lost_on_send_ = lost;
      worker_.reset();
      return false;
    }
  }

  Result send_and_await(const Request& req) {
    if (!send(req)) {
      Result r;
      r.outcome = lost_on_send_.outcome;
      r.error = lost_on_send_.why;
      return r;
    }
    return await(req);
  }

  /// The answer to the request in flight; a lost worker becomes a `crashed` or `timeout` result.
  Result await(const Request& req) {
    Result r;
    try {
      protocol::Reply reply = worker_->receive(worker_->timeout_ms());
      if (reply.event == protocol::Reply::Event::result) {
        r = std::move(reply.result);
        if (r.outcome == db::Outcome::crashed) {
          worker_->retire();
          worker_.reset();
        }
      } else {
        r.outcome = db::Outcome::crashed;
        r.error = reply.event == protocol::Reply::Event::fatal
                      ? reply.error
                      : "unexpected worker answer (not a result) to a measure request";
        worker_.reset();
      }
    } catch (const Worker::Lost& lost) {
      r.outcome = lost.outcome;
      r.error = lost.why;
      worker_.reset();
    }
    (void)req;
    return r;
  }

  /// Names the result after its request (a segmented one's segment size too, and its type and
  /// operator where the worker died before saying them) and logs what went wrong.
  void finish(Result& r, const Request& req) {
    r.kernel_id = req.kernel_id;
    r.n = req.n;
    r.segment_size = req.segment_size;
    if (const kernels::ManifestEntry* m = kernels::manifest_find(req.kernel_id)) {
      r.dtype = m->params.dtype;
      r.op = m->params.op;
    } else if (const auto seg = kernels::segmented::parse_seg_id(req.kernel_id)) {
      r.dtype = seg->dtype;
      r.op = seg->op;
    }
    if (r.outcome != db::Outcome::ok)
      spdlog::warn("{} n={}{}: {}: {}", req.kernel_id, req.n,
                   req.segment_size ? " segment_size=" + std::to_string(*req.segment_size) : "",
                   db::outcome_name(r.outcome), r.error);
  }

  static constexpr std::size_t record_group = 64;
  static constexpr double record_interval_s = 0.5;

  /// Completes out[i] with where it is recorded (stamped now) and queues its measurement for the
  /// database; commits the group once it is full or old.
  void record(std::vector<Result>& out, std::size_t i) {
    Result& r = out[i];
    r.run_id = rec_.run_id;
    r.device_id = rec_.device_id;
    r.gpu_id = gpu_id_;
    r.params = candidate_params(r.kernel_id);
    r.l2_mode = opt_.policy.l2;
    r.measured_at = db::utc_timestamp();
    if (queued_.empty()) first_queued_ = std::chrono::steady_clock::now();
    queued_.push_back(r);
    queued_index_.push_back(i);
    if (queued_.size() >= record_group ||
        std::chrono::duration<double>(std::chrono::steady_clock::now() - first_queued_).count() >=
            record_interval_s)
      commit(out);
  }

  /// Writes the queued results in one transaction and gives each its id.
  void commit(std::vector<Result>& out) {
    if (queued_.empty()) return;
    const std::vector<std::int64_t> ids = db_.insert_measurements(queued_);
    for (std::size_t k = 0; k < queued_.size(); ++k) out[queued_index_[k]].measurement_id = ids[k];
    queued_.clear();
    queued_index_.clear();
  }

  std::vector<db::Measurement> queued_;    // recorded, not yet committed
  std::vector<std::size_t> queued_index_;  // each one's index in the measure() call's results
  std::chrono::steady_clock::time_point first_queued_;

  GpuRunnerOptions opt_;
  std::vector<std::string> argv_;
  db::Database db_;
  std::unique_ptr<Worker> worker_;
  Recording rec_;
  std::optional<std::int64_t> gpu_id_;  // this runner's card, where its worker knows the UUID
  std::optional<double> bandwidth_;
  Worker::Lost lost_on_send_{db::Outcome::crashed, ""};
};

}  // namespace

std::unique_ptr<Runner> make_gpu_runner(const GpuRunnerOptions& opt) {
  ResumeOptions resume;
  resume.policy = opt.policy;
  resume.retune = opt.retune;
  resume.db_path = opt.db_path;
  return std::make_unique<ResumeRunner>(std::make_unique<GpuRunner>(opt), std::move(resume));
}

std::vector<std::pair<int, DeviceFingerprint>> probe_devices(
    const std::vector<std::string>& worker_command) {
  std::vector<std::string> argv = worker_command.empty() ? default_worker_command()
                                                         : worker_command;
  argv.push_back("--probe");
  ChildProcess proc(argv);
  std::string line;
  if (const auto st = proc.read_line(line, 120000); st != ChildProcess::ReadStatus::line) {
    if (st != ChildProcess::ReadStatus::eof) proc.kill_now();
    throw Error("the device probe (" + argv[0] + " --probe) gave no answer (" +
                (st == ChildProcess::ReadStatus::too_long ? std::string("a line without an end")
                                                          : describe_exit(proc.wait())) +
                ")");
  }
  protocol::Probe probe;
  try {
    probe = protocol::parse_probe(line);
  } catch (const std::exception& e) {
    throw Error("the device probe (" + argv[0] +
                " --probe) answered something unreadable: " + e.what());
  }
  std::vector<std::pair<int, DeviceFingerprint>> out = std::move(probe.devices);
  if (out.empty()) {
    throw Error(std::string("no CUDA device is available") +
                    (probe.error ? " (" + *probe.error + ")" : std::string()),
                exit_code::no_gpu);
  }
  return out;
}

}  // namespace tunedreduce::tuner
