#pragma once
// The balanced family's geometry on the host and the device (kernels/segmented/balanced.cuh):
// its block, what a short and a long segment are, the scan's chunk, and the workspace's layout.

#include <cstddef>
#include <cstdint>

namespace tunedreduce::kernels::segmented::balanced {

inline constexpr int block = 256;                 // threads of every balanced kernel
inline constexpr int per_thread = 8;              // segments a thread of the scan takes
inline constexpr int chunk = block * per_thread;  // segments a block of the scan takes
/// Tiles a multiprocessor holds at once (the tile kernel's launch bounds): the tiles of a launch
/// are at most a wave of them (SegEntry::tiles).
inline constexpr int tiles_per_sm = 4;
/// A tile has at least this many vectors' worth of items a thread where there are enough: the
/// host's tile count where it knows the mean length (SegEntry::tiles), and the CSR tiles' own
/// count on the device (balanced.cuh, C1), which knows the total.
inline constexpr int min_tile_vectors = 4;
/// A segment of at most this many 16-byte vectors' worth of elements is folded by 4 lanes (8
/// vectors a lane), of at most long_vectors by a warp (8 a lane), both in a grid over every
/// segment; longer ones are long: the tiles take them.
inline constexpr std::uint64_t short_vectors = 32;
inline constexpr std::uint64_t long_vectors = 256;

/// The workspace, carved from the front: a header (W, T, the count of long segments, the
/// scan's ticket), the chunks' counts and sums of long segments (then their starts), the long
/// segments' indices and starts in the concatenation of the long segments, the long segment
/// that holds each tile's first element, and the tiles' head and tail partials. Byte offsets,
/// each 256-byte aligned.
struct Layout {
  std::size_t header = 0, chunk_count = 0, chunk_sum = 0, list = 0, start = 0, tile_first = 0,
              head = 0, tail = 0, bytes = 0;
};

constexpr std::size_t round256(std::size_t b) { return (b + 255) / 256 * 256; }

/// Whether offsets \p begin and \p end of \p offset_bytes each are CSR (end == begin + 1: the
/// segments lie one after another), which the tiles take straight, without the scan.
inline bool is_csr(const void* begin, const void* end, std::size_t offset_bytes) {
  return begin && static_cast<const char*>(end) == static_cast<const char*>(begin) + offset_bytes;
}

/// The workspace of \p S segments over \p tiles tiles, partials of \p result_bytes each. Over
/// CSR offsets (\p csr) the tiles need the header, the tiles' records and partials alone: the
/// scan's arrays have no bytes, and the workspace does not grow with S.
constexpr Layout layout(std::uint64_t S, std::uint64_t tiles, std::size_t result_bytes, bool csr) {
  Layout l;
  const std::uint64_t nch = csr ? 0 : (S + chunk - 1) / chunk;
  const std::uint64_t listed = csr ? 0 : S, starts = csr ? 0 : S + 1;
  l.chunk_count = 256;
  l.chunk_sum = l.chunk_count + round256(8 * nch);
  l.list = l.chunk_sum + round256(8 * nch);
  l.start = l.list + round256(8 * listed);
  l.tile_first = l.start + round256(8 * starts);
  l.head = l.tile_first + round256(8 * tiles);
  l.tail = l.head + round256(result_bytes * tiles);
  l.bytes = l.tail + round256(result_bytes * tiles);
  return l;
}

}  // namespace tunedreduce::kernels::segmented::balanced
