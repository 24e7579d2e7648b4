#include "tuner/devices.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "common/exit_codes.hpp"

namespace tunedreduce::tuner {

std::vector<ProbedDevice> select_devices(const std::string& text,
                                         const std::vector<ProbedDevice>& probed) {
  if (text == "all") return probed;
  std::vector<ProbedDevice> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    int ordinal = -1;
    try {
      std::size_t used = 0;
      ordinal = std::stoi(item, &used);
      if (used != item.size()) ordinal = -1;
    } catch (const std::exception&) {
    }
    if (ordinal < 0)
      throw Error(fmt::format("--devices: '{}' is not a device ordinal or 'all'", item),
                  exit_code::usage);
    const auto it = std::find_if(probed.begin(), probed.end(),
                                 [&](const ProbedDevice& d) { return d.first == ordinal; });
    if (it == probed.end()) {
      std::vector<int> have;
      for (const auto& d : probed) have.push_back(d.first);
      throw Error(fmt::format("--devices: there is no device {} (devices: {})", item,
                              fmt::join(have, ", ")),
                  exit_code::usage);
    }
    if (std::none_of(out.begin(), out.end(), [&](const auto& x) { return x.first == ordinal; }))
      out.push_back(*it);
  }
  if (out.empty()) throw Error("--devices: no device given", exit_code::usage);
  return out;
}

DeviceChoice one_per_model(const std::vector<ProbedDevice>& selected) {
  DeviceChoice c;
  for (const ProbedDevice& d : selected) {
    const std::string key = d.second.key();
    const auto first = std::find_if(c.tuned.begin(), c.tuned.end(),
                                    [&](const ProbedDevice& t) { return t.second.key() == key; });
    if (first == c.tuned.end()) c.tuned.push_back(d);
    else c.same_model.emplace_back(d.first, first->first);
  }
  return c;
}

}  // namespace tunedreduce::tuner
