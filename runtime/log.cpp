#include "runtime/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

#include "common/log.hpp"

namespace tunedreduce::runtime {

std::shared_ptr<spdlog::logger> default_logger() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("tunedreduce")) return existing;
    auto l = std::make_shared<spdlog::logger>(
        "tunedreduce", std::make_shared<spdlog::sinks::stderr_color_sink_mt>(stderr_color_mode()));
    l->set_pattern("[%H:%M:%S.%e] [tunedreduce] [%^%l%$] %v");
    l->set_level(spdlog::level::warn);
    if (const char* env = std::getenv("TUNEDREDUCE_LOG_LEVEL"); env && *env) {
      // Once per process (this initialiser runs once), at warn, which is the level kept.
      if (const auto lvl = parse_log_level(env))
        l->set_level(*lvl);
      else
        l->warn("TUNEDREDUCE_LOG_LEVEL='{}' is not a log level (trace, debug, info, warn, error, "
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
