#include "common/interrupt.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "common/error.hpp"
#include "common/exit_codes.hpp"

namespace tunedreduce {

namespace {

// The handler's state: lock-free atomics only (async-signal-safe).
std::atomic<std::atomic<bool>*> g_flag{nullptr};
std::atomic<int> g_signal{0};
std::atomic<std::int64_t> g_first_ns{0};
static_assert(std::atomic<std::atomic<bool>*>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<std::int64_t>::is_always_lock_free);

std::int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

extern "C" void on_stop_signal(int sig) {
  const std::int64_t now = monotonic_ns();
  int none = 0;
  if (g_signal.compare_exchange_strong(none, sig)) {
    g_first_ns.store(now);
    if (std::atomic<bool>* flag = g_flag.load()) flag->store(true);
    return;
  }
  const std::int64_t grace_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(InterruptGuard::repeat_grace).count();
  if (now - g_first_ns.load() <= grace_ns) return;  // the same stop, delivered twice
  // Asked again: end now, as the signal would have without us.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
}

struct sigaction g_old_int {
}, g_old_term{};

}  // namespace

InterruptGuard::InterruptGuard(std::atomic<bool>& flag) {
  std::atomic<bool>* none = nullptr;
  if (!g_flag.compare_exchange_strong(none, &flag))
    throw Error("internal: a second InterruptGuard while one is alive");
  g_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_flag.store(nullptr);
}

int InterruptGuard::received() { return g_signal.load(); }

namespace {

// The temporary files a signal removes: fixed slots of plain bytes, each published by an atomic
// state (0 free, 1 being written, 2 held), so that the handler reads them async-signal-safely.
constexpr int temp_slots = 32;
constexpr std::size_t temp_path_max = 4096;
char g_temp_paths[temp_slots][temp_path_max];
std::atomic<int> g_temp_state[temp_slots];
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_exit_signal(int) {
  for (int i = 0; i < temp_slots; ++i)
    if (g_temp_state[i].load() == 2) ::unlink(g_temp_paths[i]);
  ::_exit(exit_code::interrupted);
}

extern "C" void on_sigpipe(int) {}  // the write that met the closed pipe fails with EPIPE

}  // namespace

void install_exit_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_exit_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  struct sigaction pipe {};
  pipe.sa_handler = on_sigpipe;
  sigemptyset(&pipe.sa_mask);
  sigaction(SIGPIPE, &pipe, nullptr);
}

TempFileGuard::TempFileGuard(const std::filesystem::path& path) {
  const std::string& s = path.native();
  if (s.size() >= temp_path_max) return;
  for (int i = 0; i < temp_slots; ++i) {
    int free = 0;
    if (!g_temp_state[i].compare_exchange_strong(free, 1)) continue;
    std::memcpy(g_temp_paths[i], s.c_str(), s.size() + 1);
    g_temp_state[i].store(2);
    slot_ = i;
    return;
  }
}

TempFileGuard::~TempFileGuard() {
  if (slot_ >= 0) g_temp_state[slot_].store(0);
}

}  // namespace tunedreduce
