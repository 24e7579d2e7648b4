#pragma once
// spdlog set-up shared by the CLI and the library.

#include <string_view>

namespace tunedreduce {

/// Level names as spdlog spells them: trace, debug, info, warn, error, critical, off.
/// Throws Error(usage) on an unknown name.
void init_logging(std::string_view level);

}  // namespace tunedreduce
