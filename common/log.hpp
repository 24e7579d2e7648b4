#pragma once
// spdlog set-up shared by the CLI and the library.

#include <spdlog/common.h>

#include <optional>
#include <string_view>

namespace tunedreduce {

/// A level name as spdlog spells it (trace, debug, info, warn, error, critical, off), or nothing
/// for any other text (spdlog's own from_str reads an unknown name as off).
std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name);

/// The colour mode of a stderr sink: never when NO_COLOR is set and not empty
/// (https://no-color.org), else colour on a terminal only.
spdlog::color_mode stderr_color_mode();

/// Level names as spdlog spells them: trace, debug, info, warn, error, critical, off.
/// Throws Error(usage) on an unknown name.
void init_logging(std::string_view level);

}  // namespace tunedreduce
