#include "common/interrupt.hpp"

#include <signal.h>
#include <time.h>

#include <cstdint>

#include "common/error.hpp"

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

}  // namespace tunedreduce
