#pragma once
// The library's logger: spdlog's "tunedreduce" logger (the CLI's, when the CLI set it up),
// else one at the level of $TUNEDREDUCE_LOG_LEVEL (default: warn) whose messages go to stderr,
// or to the application's callback (set_log_callback).

#include <spdlog/logger.h>

#include <memory>

#include "tunedreduce/tunedreduce.hpp"

namespace tunedreduce::runtime {

std::shared_ptr<spdlog::logger> default_logger();

/// Routes the messages of the library's own logger (not a logger the CLI set up) to \p callback,
/// or back to stderr (nullptr).
void set_log_callback(LogCallback callback, void* user) noexcept;

}  // namespace tunedreduce::runtime
