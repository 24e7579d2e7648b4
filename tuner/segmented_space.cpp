#include "tuner/segmented_space.hpp"

namespace tunedreduce::tuner {

std::vector<SegKeySpace> enumerate_segmented(const SegmentedConfig& g,
                                             const kernels::DeviceLimits& dev) {
  std::vector<SegKeySpace> out;
  if (g.keys.empty()) return out;
  const auto grid = seg_grid(g);
  for (const SegKey& key : g.keys)
    for (kseg::SegLayout layout : g.layouts) {
      SegKeySpace k;
      k.dtype = key.dtype;
      k.op = key.op;
      k.layout = layout;
      const std::vector<kseg::SegParams> configs = seg_configs(g, key.dtype, key.op, layout);
      if (configs.empty()) continue;  // validation refuses this where the key was asked for
      for (const kseg::SegParams& p : configs) k.candidates.push_back(kseg::make_seg_id(p));
      for (const auto& [l, s] : grid) {
        SegPoint pt;
        pt.segment_size = l;
        pt.count = s;
        for (std::size_t i = 0; i < configs.size(); ++i)
          if (seg_takes(configs[i], l, s, dev)) pt.candidates.push_back(k.candidates[i]);
        if (!pt.candidates.empty()) k.points.push_back(std::move(pt));
      }
      out.push_back(std::move(k));
    }
  return out;
}

std::string seg_key_label(const SegKeySpace& k) {
  return std::string(dtype_name(k.dtype)) + " " + op_name(k.op) + " " +
         kseg::seg_layout_name(k.layout);
}

}  // namespace tunedreduce::tuner
