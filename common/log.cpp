#include "log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

#include "error.hpp"

namespace tunedreduce {

std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name) {
  const std::string s(name);
  const auto lvl = spdlog::level::from_str(s);
  // from_str maps unknown names to off; only "off" itself may mean off.
  if (lvl == spdlog::level::off && s != "off") return std::nullopt;
  return lvl;
}

spdlog::color_mode stderr_color_mode() {
  const char* no_color = std::getenv("NO_COLOR");
  return no_color && *no_color ? spdlog::color_mode::never : spdlog::color_mode::automatic;
}

void init_logging(std::string_view level) {
  const auto lvl = parse_log_level(level);
  if (!lvl)
    throw Error("unknown log level '" + std::string(level) +
                    "' (expected trace, debug, info, warn, error, critical or off)",
                exit_code::usage);
  auto logger = spdlog::get("tunedreduce");
  if (!logger) {
    logger = spdlog::stderr_color_mt("tunedreduce", stderr_color_mode());
    logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    spdlog::set_default_logger(logger);
  }
  logger->set_level(*lvl);
}

}  // namespace tunedreduce
