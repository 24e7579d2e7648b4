#include "runtime/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

namespace tunedreduce::runtime {

std::shared_ptr<spdlog::logger> default_logger() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("tunedreduce")) return existing;
    // NO_COLOR (https://no-color.org): set and not empty, no colour; else colour on a terminal.
    const char* no_color = std::getenv("NO_COLOR");
    auto l = std::make_shared<spdlog::logger>(
        "tunedreduce", std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
                           no_color && *no_color ? spdlog::color_mode::never
                                                 : spdlog::color_mode::automatic));
    l->set_pattern("[%H:%M:%S.%e] [tunedreduce] [%^%l%$] %v");
    l->set_level(spdlog::level::warn);
    if (const char* env = std::getenv("TUNEDREDUCE_LOG_LEVEL"); env && *env) {
      const auto lvl = spdlog::level::from_str(env);
      // from_str maps unknown names to off: only "off" itself may mean off. Once per process
      // (this initialiser runs once), at warn, which is the level kept.
      if (lvl != spdlog::level::off || std::string(env) == "off")
        l->set_level(lvl);
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
