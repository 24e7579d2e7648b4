#include "hash.hpp"

namespace tunedreduce {

std::string hex64(std::uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = digits[v & 0xf];
  return out;
}

}  // namespace tunedreduce
