#include "test_util.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/timing.hpp"
#include "db/row_rules.hpp"
#include "tests/support/fixtures.hpp"

extern char** environ;

namespace tunedreduce::db::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "tr_db_test.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->is_directory(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

DeviceFingerprint h100() { return tunedreduce::test::h100_fingerprint(85045395456); }

DeviceFingerprint h200() {
  DeviceFingerprint f = h100();
  f.name = "NVIDIA H200";
  f.total_mem_bytes = 150754820096;
  f.bus_width_bits = 6144;
  f.mem_clock_khz = 3201000;
  return f;
}

RunInfo run_info() {
  RunInfo r;
  r.tool_version = "0.1.0";
  r.manifest_hash = "0123456789abcdef";
  r.config_hash = "fedcba9876543210";
  r.host = "test-host";
  return r;
}

Measurement measurement(std::int64_t run, std::int64_t device, const std::string& kernel_id,
                        std::uint64_t n, double median_us, DType dtype, Op op) {
  Measurement m;
  m.run_id = run;
  m.device_id = device;
  m.kernel_id = kernel_id;
  m.params.family = kernel_id.substr(0, kernel_id.find('.'));
  m.params.block = 256;
  m.params.unroll = 4;
  m.dtype = dtype;
  m.op = op;
  m.n = n;
  m.median_us = median_us;
  m.p10_us = median_us * 0.98;
  m.p90_us = median_us * 1.03;
  m.repeats = 20;
  m.gbps = gbps_of(n * dtype_size(dtype), median_us);
  m.sm_clock_mhz = 1980;
  m.mem_clock_mhz = 2619;
  return m;
}

Measurement segmented_measurement(std::int64_t run, std::int64_t device,
                                  const std::string& kernel_id, std::uint64_t n,
                                  std::uint64_t segment_size, double median_us, L2Mode mode) {
  const auto id = parse_segmented_id(kernel_id);
  if (!id) throw std::invalid_argument("not a segmented kernel id: " + kernel_id);
  Measurement m = measurement(run, device, kernel_id, n, median_us, id->dtype, id->op);
  m.segment_size = segment_size;
  m.l2_mode = mode;
  // "seg.group.b256.g8.v4...": the block after 'b', the group after 'g' (1 without one; the
  // block for the block and split families, as kernels::segmented::parse_seg_id has it).
  auto number_after = [&](char letter) {
    for (std::size_t at = kernel_id.find(std::string(".") + letter); at != std::string::npos;
         at = kernel_id.find(std::string(".") + letter, at + 1))
      if (at + 2 < kernel_id.size() && std::isdigit(static_cast<unsigned char>(kernel_id[at + 2])))
        return std::stoi(kernel_id.substr(at + 2));
    return 0;
  };
  m.params.family = "seg." + id->family;
  m.params.block = number_after('b');
  m.params.unroll = id->family == "group"                            ? number_after('g')
                    : id->family == "block" || id->family == "split" ? m.params.block
                                                                     : 1;
  m.params.smem = "none";
  m.params.finish = id->family == "split" ? "two_pass" : "single_pass";
  return m;
}

SegmentedWinner segmented_winner(const std::string& kernel_id, std::int64_t measurement_id,
                                 std::uint64_t size_lo, std::uint64_t size_hi,
                                 std::uint64_t count_lo, std::uint64_t count_hi, L2Mode mode) {
  const auto id = parse_segmented_id(kernel_id);
  if (!id) throw std::invalid_argument("not a segmented kernel id: " + kernel_id);
  SegmentedWinner w;
  w.dtype = id->dtype;
  w.op = id->op;
  w.l2_mode = mode;
  w.layout = id->layout;
  w.size_lo = size_lo;
  w.size_hi = size_hi;
  w.count_lo = count_lo;
  w.count_hi = count_hi;
  w.kernel_id = kernel_id;
  w.measurement_id = measurement_id;
  w.driver_version = 13000;
  w.runtime_version = 13000;
  return w;
}

SegmentedSample write_segmented_sample(Database& db) {
  SegmentedSample s;
  s.device = db.upsert_device(h100());
  RunInfo info = run_info();
  info.driver_version = 13000;
  info.runtime_version = 13000;
  s.run = db.begin_run(info);
  const auto gpu = db.upsert_gpu("GPU-00000000-0000-0000-0000-000000000012", s.device);
  auto add = [&](Measurement m) {
    m.gpu_id = gpu;
    m.measured_at = "2026-11-28T12:00:00.000Z";
    return db.insert_measurement(m);
  };
  const std::uint64_t mi = std::uint64_t{1} << 20, gi = std::uint64_t{1} << 30;
  const std::uint64_t all = std::uint64_t{1} << 40;  // kernels::segmented::max_segments
  const std::string shuffle = "warp_shuffle.b256.u1.two_pass.f32.sum";
  Winner whole;
  whole.dtype = DType::f32;
  whole.op = Op::sum;
  whole.n_lo = 1;
  whole.n_hi = gi;
  whole.kernel_id = shuffle;
  whole.measurement_id = add(measurement(s.run, s.device, shuffle, 4096, 5.0));
  whole.driver_version = whole.runtime_version = 13000;
  whole.run_id = s.run;
  db.replace_winners(s.device, DType::f32, Op::sum, std::vector<Winner>{whole});

  const std::string thread = "seg.thread.b256.v4.fixed.f32.sum",
                    group = "seg.group.b256.g8.v4.fixed.f32.sum",
                    block = "seg.block.b256.v4.fixed.f32.sum",
                    offsets = "seg.block.b256.v2.offsets32.f64.max",
                    warm = "seg.group.b256.g32.v4.fixed.f32.sum";
  s.thread4 = add(segmented_measurement(s.run, s.device, thread, mi, 4, 9.0));
  s.group64 = add(segmented_measurement(s.run, s.device, group, mi, 64, 8.0));
  s.block4096 = add(segmented_measurement(s.run, s.device, block, mi, 4096, 7.0));
  s.group4096 = add(segmented_measurement(s.run, s.device, group, mi, 4096, 7.5));
  s.offsets = add(segmented_measurement(s.run, s.device, offsets, 4 * mi, 1024, 20.0));
  s.warm = add(segmented_measurement(s.run, s.device, warm, mi, 1024, 4.0, L2Mode::warm));

  std::vector<SegmentedWinner> fixed = {segmented_winner(thread, s.thread4, 1, 8, 1, all),
                                        segmented_winner(group, s.group64, 9, 512, 1, all),
                                        segmented_winner(block, s.block4096, 513, gi, 1, gi)};
  fixed[2].runner_up_kernel_id = group;
  fixed[2].runner_up_measurement_id = s.group4096;
  for (SegmentedWinner& w : fixed) w.run_id = s.run;
  db.replace_segmented_winners(s.device, DType::f32, Op::sum, "fixed", fixed);
  db.replace_segmented_winners(s.device, DType::f64, Op::max, "offsets32",
                               std::vector{segmented_winner(offsets, s.offsets, 1, gi, 1, gi)});
  db.replace_segmented_winners(s.device, DType::f32, Op::sum, "fixed",
                               std::vector{
                                   segmented_winner(warm, s.warm, 1, gi, 1, gi, L2Mode::warm)},
                               L2Mode::warm);
  db.end_run(s.run, RunStatus::finished);
  return s;
}

BenchRunInfo lab_bench_info() {
  BenchRunInfo info;
  info.tool_version = "0.3.0";
  info.manifest_hash = "0123456789abcdef";
  info.library_database = "/lab/tune.db";
  info.repeats = 5;
  return info;
}

BenchResult cub_bench_result(DType dtype, Op op, double median_us) {
  BenchResult b;
  b.dtype = dtype;
  b.op = op;
  b.n = 1 << 20;
  b.method = BenchMethod::cub;
  b.verified = true;
  b.median_us = median_us;
  b.repeats = 5;
  return b;
}

BenchResult wide_sum_bench_result(DType dtype, double median_us) {
  return cub_bench_result(dtype, Op::wide_sum, median_us);
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path fixture(const std::string& name) { return fs::path(TR_DB_FIXTURES) / name; }

fs::path copy_fixture(const std::string& name, const TempDir& dir) {
  const fs::path to = dir / name;
  fs::copy_file(fixture(name), to, fs::copy_options::overwrite_existing);
  fs::permissions(to, fs::perms::owner_read | fs::perms::owner_write);
  return to;
}

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (const auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env) {
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> env_storage;
  // extra_env replaces variables of the same name (getenv would find the first one).
  auto name_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  for (char** e = environ; *e; ++e) {
    bool replaced = false;
    for (const auto& x : extra_env) replaced |= name_of(x) == name_of(*e);
    if (!replaced) env_storage.emplace_back(*e);
  }
  for (const auto& e : extra_env) env_storage.push_back(e);
  auto args = c_argv(argv);
  auto envp = c_argv(env_storage);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  ProcessResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t k = read(fds[i].fd, buf, sizeof buf);
      if (k <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(k));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = decode_status(status);
  return r;
}

Child::Child(const std::vector<std::string>& argv) {
  int out_pipe[2];
  if (pipe(out_pipe) != 0) throw std::runtime_error("pipe failed");
  auto args = c_argv(argv);
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out_pipe[1], 1);
    close(out_pipe[0]);
    close(out_pipe[1]);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  out_fd_ = out_pipe[0];
}

Child::~Child() {
  if (!waited_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  if (out_fd_ >= 0) close(out_fd_);
}

std::optional<std::string> Child::read_line(int timeout_ms) {
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    pollfd fd{out_fd_, POLLIN, 0};
    if (poll(&fd, 1, timeout_ms) <= 0) return std::nullopt;
    char buf[1024];
    ssize_t k = read(out_fd_, buf, sizeof buf);
    if (k <= 0) return std::nullopt;
    buffer_.append(buf, static_cast<std::size_t>(k));
  }
}

void Child::kill(int sig) { ::kill(pid_, sig); }

int Child::wait() {
  int status = 0;
  waitpid(pid_, &status, 0);
  waited_ = true;
  return decode_status(status);
}

std::string writer_helper() { return TR_DB_TEST_WRITER; }

bool running_as_root() { return geteuid() == 0; }

int run_as_nobody(int (*fn)(const fs::path&), const fs::path& arg) {
  const pid_t pid = fork();
  if (pid == 0) {
    // Dropping to an unprivileged user is the only way to make permission bits bind for a
    // process that runs as root (CAP_DAC_OVERRIDE ignores them).
    if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0 || geteuid() == 0)
      _exit(200);
    _exit(fn(arg));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const int code = decode_status(status);
  return code == 200 ? -1 : code;
}

}  // namespace tunedreduce::db::test
