#pragma once
// Reading tune.toml (toml++) into a RawConfig: syntax, unknown keys (with the nearest valid key
// suggested) and types, each with its FILE:LINE:COLUMN; the keys are the schema's.

#include <filesystem>
#include <string>
#include <string_view>

#include "tuner/config/raw.hpp"

namespace tunedreduce::tuner {

/// Parses TOML text; \p file names it in messages. Throws Error(usage) listing every syntax,
/// unknown-key and type error.
RawConfig parse_config_text(std::string_view text, const std::string& file);
/// Reads and parses a file. Throws Error(usage) when it cannot be read or is invalid.
RawConfig parse_config_file(const std::filesystem::path& path);

}  // namespace tunedreduce::tuner
