#include "tuner/config.hpp"

namespace tunedreduce::tuner {

TuneConfig load_config(const std::filesystem::path& path, const ConfigOverrides& overrides,
                       const ValidationLimits& limits) {
  RawConfig raw = parse_config_file(path);
  apply_overrides(raw, overrides);
  return validate_config(raw, limits);
}

}  // namespace tunedreduce::tuner
