#include "runtime/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <spdlog/sinks/sink.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "common/log.hpp"

namespace tunedreduce::runtime {

namespace {

/// The library logger's one sink: the application's callback when it set one, else stderr.
/// The callback is read under a lock and called outside it, so a slow callback holds up only
/// its own thread.
class RoutingSink final : public spdlog::sinks::sink {
 public:
  explicit RoutingSink(std::shared_ptr<spdlog::sinks::sink> fallback)
      : fallback_(std::move(fallback)) {}

  void log(const spdlog::details::log_msg& msg) override {
    LogCallback fn;
    void* user;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn = callback_;
      user = user_;
    }
    if (!fn) {
      fallback_->log(msg);
      return;
    }
    const std::string text(msg.payload.data(), msg.payload.size());
    fn(static_cast<LogLevel>(static_cast<int>(msg.level)), text.c_str(), user);
  }
  void flush() override { fallback_->flush(); }
  void set_pattern(const std::string& pattern) override { fallback_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override {
    fallback_->set_formatter(std::move(f));
  }

  void route(LogCallback fn, void* user) {
    std::lock_guard<std::mutex> lock(mutex_);
    callback_ = fn;
    user_ = user;
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> fallback_;
  std::mutex mutex_;
  LogCallback callback_ = nullptr;
  void* user_ = nullptr;
};

const std::shared_ptr<RoutingSink>& routing_sink() {
  static const auto sink = std::make_shared<RoutingSink>(
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>(stderr_color_mode()));
  return sink;
}

}  // namespace

void set_log_callback(LogCallback callback, void* user) noexcept {
  (void)default_logger();  // its level from the environment first, reported on stderr if bad
  routing_sink()->route(callback, user);
}

std::shared_ptr<spdlog::logger> default_logger() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("tunedreduce")) return existing;
    auto l = std::make_shared<spdlog::logger>("tunedreduce", routing_sink());
    l->set_pattern("[%H:%M:%S.%e] [tunedreduce] [%^%l%$] %v");
    l->set_level(spdlog::level::warn);
    if (const char* env = std::getenv("TUNEDREDUCE_LOG_LEVEL"); env && *env) {
      // Once per process (this initialiser runs once), at warn, which is the level kept.
      if (const auto lvl = parse_log_level(env)) l->set_level(*lvl);
      else
        l->warn(
            "TUNEDREDUCE_LOG_LEVEL='{}' is not a log level (trace, debug, info, warn, error, "
            "critical or off): logging at warn",
            env);
    }
    try {
      spdlog::register_logger(l);
    } catch (const spdlog::spdlog_ex&) {  // registered meanwhile by another thread
      if (auto existing = spdlog::get("tunedreduce")) return existing;
    }
    return l;
  }();
  return logger;
}

}  // namespace tunedreduce::runtime
