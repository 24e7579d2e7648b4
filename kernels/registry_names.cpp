// Names and ids of registry entries (host only). Headers alone besides the standard library:
// kernels/space_list.cpp, which CMake compiles and runs as it configures, compiles this file too.

#include <charconv>
#include <vector>

#include "kernels/registry_names.hpp"

namespace tunedreduce::kernels {

const char* family_name(Family f) noexcept { return family_names.to_name(f); }
const char* smem_mode_name(SmemMode m) noexcept { return smem_mode_names.to_name(m); }
const char* finish_name(Finish f) noexcept { return finish_names.to_name(f); }

std::optional<Family> parse_family(std::string_view s) { return family_names.from_name(s); }
std::optional<SmemMode> parse_smem_mode(std::string_view s) { return smem_mode_names.from_name(s); }
std::optional<Finish> parse_finish(std::string_view s) { return finish_names.from_name(s); }

namespace {

// Which parts an id has is decided by the family alone, so ids stay unambiguous.
bool family_has_unroll(Family f) {
  return f != Family::neighbored && f != Family::neighbored_less && f != Family::interleaved;
}
bool family_has_smem_mode(Family f) { return f == Family::smem; }

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

std::optional<int> parse_prefixed_int(std::string_view s, char prefix) {
  if (s.size() < 2 || s[0] != prefix) return std::nullopt;
  if (s[1] == '0' || s[1] == '+' || s[1] == '-') return std::nullopt;  // canonical form only
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string make_id(const KernelParams& p) {
  std::string id = std::string(family_name(p.family)) + ".b" + std::to_string(p.block);
  if (family_has_unroll(p.family)) id += ".u" + std::to_string(p.unroll);
  if (family_has_smem_mode(p.family)) id += std::string(".") + smem_mode_name(p.smem);
  id = id + "." + finish_name(p.finish) + "." + dtype_name(p.dtype) + "." + op_name(p.op);
  return id;
}

std::optional<KernelParams> parse_id(std::string_view id) {
  auto parts = split(id, '.');
  if (parts.size() < 5) return std::nullopt;
  KernelParams p;
  auto fam = parse_family(parts[0]);
  if (!fam) return std::nullopt;
  p.family = *fam;
  std::size_t expected =
      5 + (family_has_unroll(p.family) ? 1 : 0) + (family_has_smem_mode(p.family) ? 1 : 0);
  if (parts.size() != expected) return std::nullopt;
  std::size_t i = 1;
  auto block = parse_prefixed_int(parts[i++], 'b');
  if (!block) return std::nullopt;
  p.block = *block;
  if (family_has_unroll(p.family)) {
    auto u = parse_prefixed_int(parts[i++], 'u');
    if (!u) return std::nullopt;
    p.unroll = *u;
  }
  if (family_has_smem_mode(p.family)) {
    auto m = parse_smem_mode(parts[i++]);
    if (!m || *m == SmemMode::none) return std::nullopt;
    p.smem = *m;
  }
  auto fin = parse_finish(parts[i++]);
  auto dt = dtype_from_name(parts[i++]);  // the short names only, no parse_dtype alias
  auto op = op_from_name(parts[i++]);
  if (!fin || !dt || !op) return std::nullopt;
  p.finish = *fin;
  p.dtype = *dt;
  p.op = *op;
  return p;
}

}  // namespace tunedreduce::kernels
