#pragma once
// FNV-1a, 64 bit: a stable hash for ids, manifests and fingerprints (not for security).

#include <cstdint>
#include <string>
#include <string_view>

namespace tunedreduce {

constexpr std::uint64_t fnv1a64(std::string_view s,
                                std::uint64_t h = 0xcbf29ce484222325ull) noexcept {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// 16 lowercase hex digits.
std::string hex64(std::uint64_t v);

}  // namespace tunedreduce
