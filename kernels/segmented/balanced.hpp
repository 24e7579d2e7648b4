#pragma once
// The balanced family's geometry on the host and the device (kernels/segmented/balanced.cuh):
// its block, the scan's chunk, and the workspace's layout.

#include <cstddef>
#include <cstdint>

namespace tunedreduce::kernels::segmented::balanced {

inline constexpr int block = 256;                 // threads of every balanced kernel
inline constexpr int per_thread = 8;              // segments a thread of the scan takes
inline constexpr int chunk = block * per_thread;  // segments a block of the scan takes

/// The workspace, carved from the front: a header (W, T, the scan's ticket), the segments'
/// starts within their chunk, the chunks' starts, the first segment of each tile, and the
/// tiles' head and tail partials. Byte offsets, each 256-byte aligned.
struct Layout {
  std::size_t header = 0, local = 0, chunks = 0, first = 0, head = 0, tail = 0, bytes = 0;
};

constexpr std::size_t round256(std::size_t b) { return (b + 255) / 256 * 256; }

/// The workspace of \p S segments over \p tiles tiles, partials of \p result_bytes each.
constexpr Layout layout(std::uint64_t S, std::uint64_t tiles, std::size_t result_bytes) {
  Layout l;
  const std::uint64_t nch = (S + chunk - 1) / chunk;
  l.local = 256;
  l.chunks = l.local + round256(8 * (S + 1));
  l.first = l.chunks + round256(8 * nch);
  l.head = l.first + round256(8 * (tiles + 1));
  l.tail = l.head + round256(result_bytes * tiles);
  l.bytes = l.tail + round256(result_bytes * tiles);
  return l;
}

}  // namespace tunedreduce::kernels::segmented::balanced
