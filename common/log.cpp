#include "log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

#include "error.hpp"

namespace tunedreduce {

void init_logging(std::string_view level) {
  const std::string name(level);
  auto lvl = spdlog::level::from_str(name);
  // from_str maps unknown names to "off"; only "off" itself may do that.
  if (lvl == spdlog::level::off && name != "off")
    throw Error("unknown log level '" + name +
                    "' (expected trace, debug, info, warn, error, critical or off)",
                exit_code::usage);
  auto logger = spdlog::get("tunedreduce");
  if (!logger) {
    // NO_COLOR (https://no-color.org): set and not empty, no colour; else colour on a terminal.
    const char* no_color = std::getenv("NO_COLOR");
    logger = spdlog::stderr_color_mt("tunedreduce", no_color && *no_color
                                                        ? spdlog::color_mode::never
                                                        : spdlog::color_mode::automatic);
    logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    spdlog::set_default_logger(logger);
  }
  logger->set_level(lvl);
}

}  // namespace tunedreduce
