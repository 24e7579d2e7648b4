#include "runtime/runtime.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/names.hpp"
#include "common/paths.hpp"
#include "kernels/workspace_facts.hpp"
#include "runtime/log.hpp"
#include "tunedreduce/version.hpp"

namespace tunedreduce::runtime {

namespace {

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

}  // namespace

void check_enums(DType dtype, Op op) {
  if (!is_valid(dtype))
    throw ReduceError(Status::invalid_argument,
                      fmt::format("dtype {} is not an element type (0..{}: {})",
                                  static_cast<int>(dtype), dtype_names.size() - 1,
                                  dtype_choices()));
  if (!is_valid(op))
    throw ReduceError(Status::invalid_argument,
                      fmt::format("op {} is not an operator (0..{}: {})", static_cast<int>(op),
                                  op_names.size() - 1, op_choices()));
  if (!op_applies(dtype, op))
    throw ReduceError(Status::invalid_argument,
                      fmt::format("op {} is defined for {} only, not dtype {}", op_name(op),
                                  op_dtypes(op), dtype_name(dtype)));
}

std::size_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (a == 0) return 256;
  return std::min<std::size_t>(a & (~a + 1), 256);
}

namespace {

std::atomic<std::uint64_t> next_runtime_id{1};

std::string key_text(DType dtype, Op op, std::uint64_t n) {
  return fmt::format("{} {} n={}", dtype_name(dtype), op_name(op), n);
}

static_assert(static_cast<int>(CacheState::cold) == static_cast<int>(db::L2Mode::cold) &&
              static_cast<int>(CacheState::warm) == static_cast<int>(db::L2Mode::warm));

bool valid(CacheState s) { return s == CacheState::cold || s == CacheState::warm; }

/// $TUNEDREDUCE_CACHE_STATE: "cold" or "warm"; unset or empty is cold. \p bad gets a value that
/// is neither.
CacheState cache_state_from_env(std::string& bad) {
  const char* env = std::getenv("TUNEDREDUCE_CACHE_STATE");
  if (!env || !*env) return CacheState::cold;
  // The names of the public cache_state_name, not written again.
  static const auto names = enum_names_of({CacheState::cold, CacheState::warm}, cache_state_name);
  if (const auto s = names.from_name(env)) return *s;
  bad = env;
  return CacheState::cold;
}

}  // namespace

Runtime::Runtime(Options opt)
    : platform_(opt.platform ? std::move(opt.platform) : make_cuda_platform()),
      logger_(opt.logger ? std::move(opt.logger) : default_logger()),
      reader_(opt.reader),
      workspaces_(*platform_),
      temp_counters_(*platform_),
      id_(next_runtime_id++),
      database_(std::move(opt.database)) {
  std::string bad;
  CacheState cs = opt.cache_state ? *opt.cache_state : cache_state_from_env(bad);
  if (!valid(cs)) cs = CacheState::cold;
  cache_state_.store(static_cast<int>(cs), std::memory_order_relaxed);
  if (!bad.empty())
    logger_->warn(
        "TUNEDREDUCE_CACHE_STATE='{}' is not a cache state (cold or warm): lookups "
        "prefer cold-L2 winners",
        bad);
}

Runtime::~Runtime() = default;

Runtime& Runtime::global() {
  // Leaked on purpose: no destructor runs after the CUDA runtime has been torn down at exit, and
  // every Config handed out stays valid.
  static Runtime* r = new Runtime();
  return *r;
}

void Runtime::set_database(std::optional<std::string> path) {
  if (path && path->empty()) path.reset();
  std::lock_guard lk(config_mutex_);
  database_ = std::move(path);
  ++generation_;
  for (auto& s : states_) s.store(nullptr, std::memory_order_release);
  no_device_.store(nullptr, std::memory_order_release);
}

void Runtime::set_cache_state(CacheState s) {
  if (!valid(s))
    throw ReduceError(Status::invalid_argument,
                      fmt::format("cache state {} is not a CacheState (0: cold, 1: warm)",
                                  static_cast<int>(s)));
  cache_state_.store(static_cast<int>(s), std::memory_order_relaxed);
}

std::string Runtime::database_path() {
  {
    std::lock_guard lk(config_mutex_);
    if (database_) return *database_;
  }
  try {
    return resolve_db_path_for_reading(std::nullopt).path.string();
  } catch (const Error&) {
    return {};
  }
}

void Runtime::warn_once(const std::string& key, const std::string& message) {
  {
    std::lock_guard lk(config_mutex_);
    if (!warned_.insert(key).second) return;
  }
  load_warned_.store(true);
  logger_->warn("{}", message);
}

std::unique_ptr<DeviceState> Runtime::load(int device, DeviceInfo info) {
  std::optional<std::string> explicit_path;
  {
    std::lock_guard lk(config_mutex_);
    explicit_path = database_;
  }
  DbLocation where;
  if (explicit_path) {
    where = {*explicit_path, "set_database"};
  } else {
    try {
      where = resolve_db_path_for_reading(std::nullopt);
    } catch (const Error& e) {
      const std::string msg = std::string("no tuning database: ") + e.what();
      warn_once(msg, msg + "; reductions use the built-in defaults");
      TuningTable defaults(info.limits);
      return std::make_unique<DeviceState>(device, std::move(info), "", "built-in (" + msg + ")",
                                           std::move(defaults));
    }
  }
  // A database installed system-wide is a shipped file nobody writes (replaced, if at all, by a
  // rename): read it immutable, without locks or -wal/-shm files, so that it works in read-only
  // folders and on network file systems.
  db::ReaderOptions ro = reader_;
  if (where.system_wide) ro.immutable = true;
  db::Snapshot snap = db::load_snapshot(where.path, info.fingerprint, ro);
  if (snap.problem) {
    const std::string msg = snap.message + " (location from " + where.source + ")";
    warn_once("db:" + msg,
              "tuning database unusable: " + msg + "; reductions use the built-in defaults");
    TuningTable defaults(info.limits);
    return std::make_unique<DeviceState>(device, std::move(info), "", "built-in (" + msg + ")",
                                         std::move(defaults));
  }
  TuningTable table(snap, info.limits);
  const std::string path = where.path.string();
  // Winner rows left out, one warning a file naming the first, the others at debug level:
  // rows that break the row rules (db check names them too), then rows this binary cannot use.
  const auto warn_rows = [&](const std::vector<std::string>& rows, std::string_view key,
                             std::string_view what, std::string_view note, std::string_view label) {
    if (rows.empty()) return;
    std::string msg = fmt::format(
        "{}: {} winner row(s) {} (lower lookup levels or the built-in "
        "defaults apply{}): {}",
        db::quoted(where.path), rows.size(), what, note, rows.front());
    if (rows.size() > 1) msg += "; the debug log lists the others";
    warn_once(fmt::format("{}:{}:{}", key, path, rows.front()), msg);
    for (const std::string& r : rows) logger_->debug("{}: {}", label, r);
  };
  warn_rows(snap.skipped, "skipped", "break the database's row rules and are skipped",
            "; `tunedreduce db check` lists them", "skipped");
  warn_rows(table.rejected(), "rows", "cannot be used and are ignored", "", "ignored");
  logger_->debug("device {} ({}, key {}): {} tuned row(s) of its own, {} of its model, from {}",
                 device, info.fingerprint.name, info.fingerprint.key(), table.exact_rows(),
                 table.similar_rows(), db::quoted(where.path));
  return std::make_unique<DeviceState>(device, std::move(info), path, "built-in", std::move(table));
}

const DeviceState& Runtime::device_state(int device) {
  if (device < 0 || device >= max_devices)
    throw ReduceError(Status::invalid_argument,
                      fmt::format("device {} is not a CUDA device ordinal", device));
  if (const DeviceState* s = states_[device].load(std::memory_order_acquire)) return *s;
  std::lock_guard init(init_mutex_[device]);
  for (;;) {
    if (const DeviceState* s = states_[device].load(std::memory_order_acquire)) return *s;
    std::uint64_t gen;
    {
      std::lock_guard lk(config_mutex_);
      gen = generation_;
    }
    std::unique_ptr<DeviceState> st = load(device, platform_->describe(device));
    std::lock_guard lk(config_mutex_);
    if (gen != generation_) continue;  // set_database ran meanwhile: load the new one
    const DeviceState* p = st.get();
    owned_.push_back(std::move(st));
    states_[device].store(p, std::memory_order_release);
    return *p;
  }
}

const DeviceState& Runtime::install(std::unique_ptr<DeviceState> state) {
  if (!state || state->device < 0 || state->device >= max_devices)
    throw ReduceError(Status::invalid_argument, "install: no state or a bad device ordinal");
  std::lock_guard lk(config_mutex_);
  const DeviceState* p = state.get();
  owned_.push_back(std::move(state));
  states_[p->device].store(p, std::memory_order_release);
  return *p;
}

const DeviceState& Runtime::no_device_state(const std::string& why) {
  if (const DeviceState* s = no_device_.load(std::memory_order_acquire)) return *s;
  warn_once("no-device", "no CUDA device (" + why +
                             "): lookup reports the built-in defaults, and reductions fail");
  DeviceInfo info;  // DeviceLimits' defaults: an sm_90 device
  TuningTable defaults(info.limits);
  auto st = std::make_unique<DeviceState>(-1, info, "", "built-in (no CUDA device: " + why + ")",
                                          std::move(defaults));
  std::lock_guard lk(config_mutex_);
  if (const DeviceState* s = no_device_.load(std::memory_order_acquire)) return *s;
  const DeviceState* p = st.get();
  owned_.push_back(std::move(st));
  no_device_.store(p, std::memory_order_release);
  return *p;
}

Choice Runtime::choose(const DeviceState& s, DType dtype, Op op, std::uint64_t n) {
  const db::L2Mode prefer = preferred_mode();
  const Choice c = s.table.choose(dtype, op, n, prefer);
  const bool other_mode = c.row && c.row->l2_mode != prefer;
  if ((c.level != Level::exact || other_mode) && n > 0 &&
      !fallback_warned_.load(std::memory_order_relaxed) &&
      !load_warned_.load(std::memory_order_relaxed) && !fallback_warned_.exchange(true)) {
    logger_->warn(
        "device {} ({}): no tuned {}-L2 winner for {} in {}: using {} ({}){}; later fallbacks "
        "are logged at debug level (run `tunedreduce tune` to tune this device)",
        s.device, s.info.fingerprint.name, db::l2_mode_name(prefer), key_text(dtype, op, n),
        s.source, c.entry->id, level_name(c.level),
        other_mode ? std::string(", tuned with ") + db::l2_mode_name(c.row->l2_mode) + " L2" : "");
  } else if (logger_->should_log(spdlog::level::debug)) {
    logger_->debug("device {} {}: {} ({}){}", s.device, key_text(dtype, op, n), c.entry->id,
                   level_name(c.level),
                   c.row ? std::string(", tuned with ") + db::l2_mode_name(c.row->l2_mode) + " L2"
                         : "");
  }
  return c;
}

Config Runtime::describe(const DeviceState& s, const Choice& c, DType dtype, Op op) {
  Config cfg;
  const kernels::KernelParams& p = c.entry->params;
  cfg.kernel_id = c.entry->id;
  cfg.family = kernels::family_name(p.family);
  cfg.block = p.block;
  cfg.unroll = p.unroll;
  cfg.smem = kernels::smem_mode_name(p.smem);
  cfg.finish = kernels::finish_name(p.finish);
  cfg.dtype = dtype;
  cfg.op = op;
  cfg.level = c.level;
  cfg.device = s.device;
  cfg.cache_state = c.row ? static_cast<CacheState>(c.row->l2_mode) : CacheState::cold;
  if (c.row) {
    cfg.n_lo = c.row->n_lo;
    cfg.n_hi = c.row->n_hi;
    cfg.source = s.source.c_str();
    cfg.tuned_on = c.row->device_key.c_str();
    cfg.tuned_median_us = c.row->median_us;
    cfg.stale = c.row->stale(s.info.fingerprint.driver_version, s.info.fingerprint.runtime_version);
  } else {
    cfg.source = s.builtin_source.c_str();
  }
  return cfg;
}

}  // namespace tunedreduce::runtime

namespace tunedreduce::runtime {

const DeviceState& Runtime::lookup_state(int device) {
  if (device < -1 || device >= max_devices)
    throw ReduceError(Status::invalid_argument,
                      fmt::format("device {} is not a CUDA device ordinal (-1 means the current "
                                  "device)",
                                  device));
  if (device == -1) {
    try {
      device = platform_->current_device();
    } catch (const ReduceError&) {
      std::string why;
      if (platform_->device_count(why) > 0) throw;
      return no_device_state(why);
    }
  } else if (!states_[device].load(std::memory_order_acquire)) {
    std::string why;
    const int count = platform_->device_count(why);
    if (device >= count)
      throw ReduceError(Status::invalid_argument,
                        fmt::format("device {} does not exist ({})", device,
                                    count ? fmt::format("{} CUDA device(s) visible", count) : why));
  }
  return device_state(device);
}

Config Runtime::lookup(DType dtype, Op op, std::uint64_t n, int device) {
  check_enums(dtype, op);
  const DeviceState& s = lookup_state(device);
  if (s.device < 0) return describe(s, s.table.choose(dtype, op, n, preferred_mode()), dtype, op);
  return describe(s, choose(s, dtype, op, n), dtype, op);
}

PointerInfo Runtime::pointer_info(const void* p) {
  // A few entries: the input, output and temporary buffers of a loop or two. Only answers that
  // pass a check are kept (device and managed memory), so a bad pointer is asked about and
  // refused every time. What is not seen: memory freed after its first check (as with CUB, the
  // launch then fails).
  struct Remembered {
    std::uint64_t owner = 0;
    const void* p = nullptr;
    PointerInfo info;
  };
  constexpr std::size_t slots = 8;
  thread_local std::array<Remembered, slots> seen{};
  thread_local std::size_t next = 0;
  for (const Remembered& r : seen)
    if (r.owner == id_ && r.p == p) return r.info;
  const PointerInfo info = platform_->pointer(p);
  if (info.kind == MemoryKind::device || info.kind == MemoryKind::managed)
    seen[next++ % slots] = {id_, p, info};
  return info;
}

void Runtime::check_pointer(const char* name, const void* p, int device, std::size_t alignment) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0)
    throw ReduceError(Status::invalid_argument,
                      fmt::format("{} ({}) is not aligned to {} bytes", name, hex(p), alignment));
  const PointerInfo info = pointer_info(p);
  switch (info.kind) {
    case MemoryKind::managed:
      return;
    case MemoryKind::device:
      if (info.device == device) return;
      throw ReduceError(Status::invalid_argument,
                        fmt::format("{} ({}) is memory of device {}, but the current device is {} "
                                    "(call cudaSetDevice({}) first, or pass memory of device {})",
                                    name, hex(p), info.device, device, info.device, device));
    case MemoryKind::host:
      throw ReduceError(Status::invalid_argument,
                        fmt::format("{} ({}) is page-locked host memory; pass device memory of "
                                    "device {}",
                                    name, hex(p), device));
    case MemoryKind::unregistered:
      break;
  }
  throw ReduceError(Status::invalid_argument,
                    fmt::format("{} ({}) is host memory (CUDA does not know it); pass device "
                                "memory of device {}",
                                name, hex(p), device));
}

void Runtime::check_implementable(const DeviceState& s, const Choice& c, std::uint64_t n,
                                  std::size_t in_alignment) {
  if (auto why = c.entry->can_implement(n, in_alignment, s.info.limits))
    throw ReduceError(Status::unsupported,
                      fmt::format("n = {}: kernel '{}' (lookup level {}) cannot run this "
                                  "reduction: {}",
                                  n, c.entry->id, level_name(c.level), *why));
}

Runtime::Resolved Runtime::prepare(const void* d_in, const void* d_out, std::uint64_t n,
                                   DType dtype, Op op, bool two_phase) {
  check_enums(dtype, op);
  // Null pointers first: no CUDA call is made for them.
  if (!d_out) throw ReduceError(Status::invalid_argument, "d_out is a null pointer");
  if (!d_in && n > 0)
    throw ReduceError(Status::invalid_argument, fmt::format("d_in is a null pointer (n = {})", n));
  const int device = platform_->current_device();
  const DeviceState& s = device_state(device);
  if (n > 0) check_pointer("d_in", d_in, device, dtype_size(dtype));
  // The result has the accumulator's type: 8 bytes for wide_sum's 32-bit elements, an
  // IndexedValue (16 bytes, aligned to 8) for argmin and argmax.
  check_pointer("d_out", d_out, device, is_arg_op(op) ? 8 : dtype_size(result_dtype(dtype, op)));
  const std::size_t alignment = n > 0 ? alignment_of(d_in) : 256;
  Choice c = choose(s, dtype, op, n);
  if (two_phase) c = two_phase_choice(s, c, dtype, op, n, alignment);
  check_implementable(s, c, n, alignment);
  return {device, &s, c};
}

Choice Runtime::two_phase_choice(const DeviceState& s, const Choice& c, DType dtype, Op op,
                                 std::uint64_t n, std::size_t in_alignment) {
  const kernels::Entry& e = *c.entry;
  if (n < two_phase_large_n || e.params.finish != kernels::Finish::single_pass ||
      e.grid_size(n, s.info.limits) <= two_phase_max_single_pass_blocks)
    return c;
  const kernels::Entry* d = s.table.default_entry(dtype, op, n);
  if (!d || d == &e || d->can_implement(n, in_alignment, s.info.limits)) return c;
  return {d, Level::builtin_default, nullptr};
}

void Runtime::launch_failed(const DeviceState& s, const Choice& c, cudaError_t e) {
  std::string why = platform_->error_text(e);
  if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction ||
      e == cudaErrorUnsupportedPtxVersion) {
    const DeviceFingerprint& fp = s.info.fingerprint;
    why = fmt::format(
        "this library has no code for device {} ({}, compute capability {}.{}): its kernels were "
        "compiled for CUDA architectures {}; rebuild it with -DTUNEDREDUCE_CUDA_ARCHS including "
        "{}{} ({})",
        s.device, fp.name, fp.cc_major, fp.cc_minor, TUNEDREDUCE_CUDA_ARCHITECTURES, fp.cc_major,
        fp.cc_minor, why);
  }
  throw ReduceError(Status::cuda_error, fmt::format("launching kernel '{}' on device {} failed: {}",
                                                    c.entry->id, s.device, why));
}

void Runtime::reduce(void* d_temp, std::size_t& temp_bytes, const void* d_in, void* d_out,
                     std::uint64_t n, DType dtype, Op op, cudaStream_t stream) {
  if (!d_temp) {
    // Size query: nothing is checked but the problem itself, nothing is enqueued.
    check_enums(dtype, op);
    const DeviceState& s = device_state(platform_->current_device());
    const Choice c = two_phase_choice(s, choose(s, dtype, op, n), dtype, op, n, 256);
    check_implementable(s, c, n, 256);
    temp_bytes = std::max<std::size_t>(c.entry->workspace_bytes(n, s.info.limits), 1);
    return;
  }
  const Resolved r = prepare(d_in, d_out, n, dtype, op, /*two_phase=*/true);
  const DeviceState& s = *r.state;
  const std::size_t need =
      std::max<std::size_t>(r.choice.entry->workspace_bytes(n, s.info.limits), 1);
  check_pointer("d_temp", d_temp, r.device, 256);
  if (temp_bytes < need)
    throw ReduceError(Status::temp_too_small,
                      fmt::format("temp_bytes = {} is smaller than the {} bytes kernel '{}' needs "
                                  "for n = {} (ask with d_temp == nullptr first)",
                                  temp_bytes, need, r.choice.entry->id, n));
  kernels::LaunchArgs a;
  a.in = d_in;
  a.out = d_out;
  a.n = n;
  a.workspace = d_temp;
  a.workspace_bytes = temp_bytes;
  a.stream = stream;
  // The caller's memory may hold anything: the completion counter is the library's, one per
  // caller buffer, and nothing is zeroed before the kernel. Without one (a full table) the
  // launch zeroes a counter inside the buffer first.
  a.workspace_clean = false;
  std::string why;
  a.counter = temp_counters_.counter(r.device, d_temp, why);
  if (!why.empty()) logger_->warn("{}", why);  // once per device (TempCounters says it once)
  if (cudaError_t e = platform_->launch(*r.choice.entry, a, s.info.limits); e != cudaSuccess)
    launch_failed(s, r.choice, e);
}

void Runtime::reduce(const void* d_in, void* d_out, std::uint64_t n, DType dtype, Op op,
                     cudaStream_t stream) {
  const Resolved r = prepare(d_in, d_out, n, dtype, op);
  const DeviceState& s = *r.state;
  const kernels::Entry& entry = *r.choice.entry;
  kernels::LaunchArgs a;
  a.in = d_in;
  a.out = d_out;
  a.n = n;
  a.stream = stream;
  cudaError_t e;
  if (n == 0) {
    e = platform_->launch(entry, a, s.info.limits);  // writes the empty result, no workspace
  } else {
    const std::size_t need =
        std::max(entry.workspace_bytes(n, s.info.limits), WorkspaceCache::counter_bytes);
    e = workspaces_.run(
        r.device, stream, need,
        [&](void* ws, std::size_t bytes, bool clean) {
          a.workspace = ws;
          a.workspace_bytes = bytes;
          a.workspace_clean = clean;
          if (kernels::takes_library_counter(entry.params)) {
            // The library's counter for this workspace (as the two-phase call's for a caller
            // buffer) spares a launch that seldom finds the workspace clean the ticket's memset
            // (exact sums on the H100, f64 2^21: 0.825x CUB cached against 0.861x two-phase
            // before, commit c4dbc35).
            std::string why;
            a.counter = temp_counters_.counter(r.device, ws, why);
            if (!why.empty()) logger_->warn("{}", why);
          }
          return platform_->launch(entry, a, s.info.limits);
        },
        /*leaves_clean=*/kernels::leaves_workspace_clean(entry.params));
  }
  if (e != cudaSuccess) launch_failed(s, r.choice, e);
}

void Runtime::release_workspace(cudaStream_t stream) {
  workspaces_.release(platform_->current_device(), stream);
}

}  // namespace tunedreduce::runtime
