#pragma once
// The library's logger: spdlog's "tunedreduce" logger (the CLI's, when the CLI set it up),
// else one on stderr at the level of $TUNEDREDUCE_LOG_LEVEL (default: warn).

#include <spdlog/logger.h>

#include <memory>

namespace tunedreduce::runtime {

std::shared_ptr<spdlog::logger> default_logger();

}  // namespace tunedreduce::runtime
