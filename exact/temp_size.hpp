#pragma once
// exact_sum's grid and temporary storage (exact/sum.hpp) computed from its arguments alone, as
// its size query computes them in exact/sum_kernels.cu: the registry without kernels
// (kernels/host_registry.cpp) answers an exact entry's workspace_bytes and grid_size with it,
// where the compiled entries ask exact_sum itself. tests/gpu/test_exact_registry_gpu checks the
// two agree for every exact entry; change this with exact/sum_kernels.cu's layout.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "exact/accumulator.hpp"

namespace tunedreduce::exact::temp_size {

/// 8-byte words of one block's slot: the chunks, then the flags.
template <class T>
inline constexpr int slot_words = Format<T>::kChunks + 1;

/// single_pass's ticket and accumulator (exact/sum_kernels.cuh's accumulator_of): the ticket in
/// 8 bytes, then a slot's words, into which the blocks add theirs; zero on entry, and every
/// launch leaves them zero. (float and the half types: 104 bytes; double: 544.)
template <class T>
inline constexpr std::size_t finish_bytes = 8 + slot_words<T> * sizeof(std::int64_t);

/// The area of the ticket and accumulator at the start of the temporary storage (the slots,
/// two_pass's, after it).
inline constexpr std::size_t ticket_bytes = 1024;
static_assert(finish_bytes<double> <= ticket_bytes);

/// Blocks of a call for n elements of \p element_bytes at an input aligned to \p vector_bytes
/// (the case with the most loads), \p vector_elements per load, \p block_threads threads and
/// \p unroll loads a thread a round, at most \p max_grid blocks: no block without a whole round
/// of block_threads × unroll loads to make, at least one.
constexpr std::uint64_t grid_blocks(std::uint64_t n, int vector_elements, int block_threads,
                                    int unroll, std::uint64_t max_grid) {
  const std::uint64_t vectors = n / static_cast<std::uint64_t>(vector_elements);
  const auto per_round =
      static_cast<std::uint64_t>(block_threads) * static_cast<std::uint64_t>(unroll);
  return std::max<std::uint64_t>(1, std::min(max_grid, (vectors + per_round - 1) / per_round));
}

/// Bytes of temporary storage for \p grid blocks: the ticket's area, then for two_pass (\p slots)
/// with more than one block a slot of T's words a block (single_pass adds the blocks' words into
/// the accumulator, and one block rounds its own).
template <class T>
constexpr std::size_t bytes(std::uint64_t grid, bool slots) {
  return ticket_bytes + (slots && grid > 1
                             ? static_cast<std::size_t>(grid) * slot_words<T> * sizeof(std::int64_t)
                             : 0);
}

}  // namespace tunedreduce::exact::temp_size
