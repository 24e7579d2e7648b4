// Segmented entries on the host: names, ids, the split family's geometry and can_implement, and
// the table of entries. Host-only: tr_kernels gathers the generated instance units
// (kernels/segmented/registry.cpp), tr_kernels_host the same entries without kernels.

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <vector>

#include "common/enum_names.hpp"
#include "common/names.hpp"
#include "kernels/segmented/balanced.hpp"
#include "kernels/segmented/entries.hpp"
#include "kernels/segmented/space.hpp"

namespace tunedreduce::kernels::segmented {

namespace {

constexpr auto family_names = enum_names<SegFamily>({{SegFamily::thread, "thread"},
                                                     {SegFamily::group, "group"},
                                                     {SegFamily::block, "block"},
                                                     {SegFamily::split, "split"},
                                                     {SegFamily::tile, "tile"},
                                                     {SegFamily::balanced, "balanced"}});
static_assert(family_names.lists_all_through(SegFamily::balanced));
constexpr auto layout_names = enum_names<SegLayout>({{SegLayout::fixed, "fixed"},
                                                     {SegLayout::offsets32, "offsets32"},
                                                     {SegLayout::offsets64, "offsets64"}});
static_assert(layout_names.lists_all_through(SegLayout::offsets64));

constexpr std::string_view id_prefix = "seg";

std::optional<int> prefixed_int(std::string_view s, char prefix) {
  if (s.size() < 2 || s[0] != prefix || s[1] < '1' || s[1] > '9') return std::nullopt;
  int v = 0;
  auto [p, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

/// Elements each block of the split family takes at least: one step of its vector loop (four
/// vectors a thread). Four steps left the GPU three quarters idle at 2^20 elements (32 blocks of
/// 512 threads: 60 % of the floor on the H200, docs/performance.md 3.33).
std::uint64_t min_part_elements(const SegParams& p) { return std::uint64_t(p.block) * p.vec * 4; }

}  // namespace

const char* seg_family_name(SegFamily f) noexcept { return family_names.to_name(f); }
const char* seg_layout_name(SegLayout l) noexcept { return layout_names.to_name(l); }
std::optional<SegFamily> parse_seg_family(std::string_view s) { return family_names.from_name(s); }
std::optional<SegLayout> parse_seg_layout(std::string_view s) { return layout_names.from_name(s); }

std::string make_seg_id(const SegParams& p) {
  std::string g = p.family == SegFamily::group ? fmt::format(".g{}", p.group) : std::string();
  return fmt::format("{}.{}.b{}{}.v{}.{}.{}.{}", id_prefix, seg_family_name(p.family), p.block, g,
                     p.vec, seg_layout_name(p.layout), dtype_name(p.dtype), op_name(p.op));
}

CandidateParams stored_params(const SegParams& p) {
  CandidateParams c;
  c.family = std::string("seg.") + seg_family_name(p.family);
  c.block = p.block;
  c.unroll = p.group;
  c.smem = "none";
  c.finish = p.family == SegFamily::split || p.family == SegFamily::balanced ? "two_pass"
                                                                             : "single_pass";
  return c;
}

std::optional<SegParams> parse_seg_id(std::string_view id) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t pos = id.find('.', start);
    parts.push_back(id.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  if (parts.size() < 7 || parts[0] != id_prefix) return std::nullopt;
  SegParams p;
  const auto fam = parse_seg_family(parts[1]);
  if (!fam) return std::nullopt;
  p.family = *fam;
  const bool has_group = p.family == SegFamily::group;
  if (parts.size() != (has_group ? 8u : 7u)) return std::nullopt;
  std::size_t i = 2;
  const auto block = prefixed_int(parts[i++], 'b');
  if (!block) return std::nullopt;
  p.block = *block;
  p.group = p.family == SegFamily::thread || p.family == SegFamily::tile ? 1 : p.block;
  if (has_group) {
    const auto g = prefixed_int(parts[i++], 'g');
    if (!g) return std::nullopt;
    p.group = *g;
  }
  const auto vec = prefixed_int(parts[i++], 'v');
  const auto layout = parse_seg_layout(parts[i++]);
  const auto dt = dtype_names.from_name(parts[i++]);
  const auto op = op_names.from_name(parts[i++]);
  if (!vec || !layout || !dt || !op) return std::nullopt;
  p.vec = *vec;
  p.layout = *layout;
  p.dtype = *dt;
  p.op = *op;
  return p;
}

std::uint64_t SegEntry::blocks_per_segment(const SegProblem& p, const DeviceLimits& dev) const {
  if (params.family != SegFamily::split || p.num_segments == 0) return 1;
  // Blocks for a little less than half a wave of resident blocks over the whole problem; parts
  // of at most 128 vectors a thread (so a large segment is cut into many blocks and the last
  // wave's stragglers are short); and no block with less than min_part_elements of its segment,
  // where the length is known; at most 4096 per segment. H200, f32 sum, 2^24 elements in 2 to
  // 16 rows, cold L2, blocks of 512 threads (528 resident: four a multiprocessor): 256 blocks ran
  // 20.5-20.8 us, 512 20.7-21.3, but 264 (two a multiprocessor, exactly) 21.8-22.0 and 528
  // 22.0-22.6, as if a multiprocessor took one block more than the others whenever the grid
  // fills a whole number of them; hence half a wave less 1/64 of a wave (docs/performance.md
  // 3.46). At 2^28 the 32-step bound below decides. Two waves of half-size blocks ran 8-12 %
  // slower at 2^24.
  const std::uint64_t resident = std::uint64_t(std::max(1, dev.max_threads_per_sm / params.block)) *
                                 std::uint64_t(std::max(1, dev.sm_count));
  const std::uint64_t target = std::max<std::uint64_t>(resident / 2 - resident / 64, 1);
  std::uint64_t parts = std::max<std::uint64_t>(target / p.num_segments, 1);
  const std::uint64_t length = params.layout == SegLayout::fixed ? p.segment_size : p.mean_length;
  if (length > 0) {
    const std::uint64_t step = min_part_elements(params);  // four vectors a thread
    parts = std::max(parts, (length + 32 * step - 1) / (32 * step));
    parts = std::min(parts, (length + step - 1) / step);
  }
  return std::clamp<std::uint64_t>(parts, 1, 4096);
}

std::uint64_t SegEntry::tiles(const SegProblem& p, const DeviceLimits& dev) const {
  if (params.family != SegFamily::balanced || p.num_segments == 0) return 0;
  // A wave of tiles (balanced::tiles_per_sm blocks a multiprocessor, the tile kernel's launch
  // bounds); where the mean length is known, tiles of at least min_tile_vectors a thread.
  const std::uint64_t resident =
      std::uint64_t(balanced::tiles_per_sm) * std::uint64_t(std::max(1, dev.sm_count));
  if (p.mean_length == 0) return resident;
  const std::uint64_t min_tile =
      std::uint64_t(balanced::block) * params.vec * balanced::min_tile_vectors;
  const std::uint64_t total = p.mean_length > (std::uint64_t{1} << 62) / p.num_segments
                                  ? std::uint64_t{1} << 62
                                  : p.mean_length * p.num_segments;
  return std::clamp<std::uint64_t>((total + min_tile - 1) / min_tile, 1, resident);
}

std::size_t SegEntry::workspace_bytes(const SegProblem& p, const DeviceLimits& dev) const {
  if (params.family == SegFamily::balanced && p.num_segments > 0) {
    const bool csr =
        params.layout != SegLayout::fixed &&
        balanced::is_csr(p.begin, p.end, params.layout == SegLayout::offsets32 ? 4 : 8);
    return balanced::layout(p.num_segments, tiles(p, dev), result_bytes(params.dtype, params.op),
                            csr)
        .bytes;
  }
  if (params.family != SegFamily::split || p.num_segments == 0) return 0;
  const std::size_t bytes =
      p.num_segments * blocks_per_segment(p, dev) * result_bytes(params.dtype, params.op);
  return (bytes + 255) / 256 * 256;
}

Refusal SegEntry::can_implement(const SegProblem& p, std::size_t in_alignment,
                                const DeviceLimits&) const {
  if (p.num_segments > max_segments)
    return fmt::format("{} segments is more than the {} a segmented kernel takes", p.num_segments,
                       max_segments);
  if (in_alignment % dtype_size(params.dtype) != 0)
    return fmt::format("the input is aligned to {} bytes, less than one {} element", in_alignment,
                       dtype_name(params.dtype));
  if (params.family == SegFamily::balanced && params.layout == SegLayout::fixed)
    return std::string("the balanced family takes offsets, not rows");
  if (params.family == SegFamily::tile) {
    const std::uint64_t stride = p.stride ? p.stride : p.segment_size;
    if (params.layout != SegLayout::fixed || p.segment_size == 0 ||
        std::uint64_t(params.vec) % p.segment_size != 0 ||
        (p.num_segments > 1 && stride != p.segment_size) || in_alignment < 16)
      return fmt::format(
          "the tile family takes contiguous rows of a length dividing {} at a "
          "16-byte aligned input",
          params.vec);
  }
  if (params.layout == SegLayout::fixed) {
    if (p.num_segments > 1 && p.stride < p.segment_size)
      return fmt::format("the row stride {} is smaller than the segment size {}", p.stride,
                         p.segment_size);
    // The last element's index, (S - 1) * stride + size - 1, must fit 62 bits.
    constexpr std::uint64_t limit = std::uint64_t{1} << 62;
    if (p.num_segments > 0 && p.segment_size > 0 &&
        (p.segment_size > limit ||
         (p.num_segments - 1) > (limit - p.segment_size) / std::max<std::uint64_t>(p.stride, 1)))
      return fmt::format("{} segments of {} elements {} apart span more than 2^62 elements",
                         p.num_segments, p.segment_size, p.stride);
  } else if (p.num_segments > 0 && (!p.begin || !p.end)) {
    return std::string("the begin and end offsets are null pointers");
  }
  return std::nullopt;
}

SegTable make_table(std::vector<SegEntry> raw) {
  SegTable t;
  t.entries = std::move(raw);
  for (SegEntry& e : t.entries) e.id = t.ids.emplace_back(make_seg_id(e.params)).c_str();
  std::sort(t.entries.begin(), t.entries.end(),
            [](const SegEntry& a, const SegEntry& b) { return std::string_view(a.id) < b.id; });
  return t;
}

}  // namespace tunedreduce::kernels::segmented
