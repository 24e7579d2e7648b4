#pragma once
// tune.toml: reading (toml++), command-line overrides and validation against the registry's
// manifest, all before any GPU work. Every key is described in docs/tuning.md and listed once in
// the schema (tuner/config/schema.hpp).
//
//   RawConfig raw = parse_config_file("tune.toml");   // syntax and types, with source positions
//   apply_overrides(raw, overrides);                    // --blocks 128,256 ... (typed as strings)
//   TuneConfig cfg = validate_config(raw);              // values, registry, empty space
//
// Every problem found is reported at once, one line each, as
// "FILE:LINE:COLUMN: KEY.PATH: message" (or "--flag: message" for an override), in one
// tunedreduce::Error with exit_code::usage.
//
// The parts, each in tuner/config/: tune_config.hpp (the validated configuration), schema.hpp
// (every key), raw.hpp (the configuration as read), read_toml.hpp, overrides.hpp, validate.hpp,
// canonical.hpp (the text whose hash runs store), suggest.hpp ("did you mean").

#include <filesystem>

#include "tuner/config/canonical.hpp"
#include "tuner/config/key.hpp"
#include "tuner/config/overrides.hpp"
#include "tuner/config/raw.hpp"
#include "tuner/config/read_toml.hpp"
#include "tuner/config/schema.hpp"
#include "tuner/config/suggest.hpp"
#include "tuner/config/tune_config.hpp"
#include "tuner/config/validate.hpp"

namespace tunedreduce::tuner {

/// parse_config_file + apply_overrides + validate_config.
TuneConfig load_config(const std::filesystem::path& path, const ConfigOverrides& overrides = {},
                       const ValidationLimits& limits = {});

}  // namespace tunedreduce::tuner
