#pragma once
// Completion counters outside the caller's memory, for the two-phase call (CUB's convention:
// the caller's temporary storage may hold anything on entry, and nothing but the reduction is
// enqueued). A table of counters lives in the kernels' module as a __device__ array, zero when
// the module is loaded; every launch that uses one leaves it zero again, so it never needs a
// memset. The runtime gives each caller buffer its own counter (runtime/temp_counters.hpp):
// launches that share a temporary buffer are ordered (CUB's contract), so they never use one
// counter at once.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tunedreduce::kernels {

/// Counters in the table.
inline constexpr std::size_t counter_table_entries = 4096;
/// Distance between two counters, in 8-byte words: a counter is its first word, or for the
/// exact sums' single_pass the ticket and the accumulator beside it (at most 544 bytes, double's
/// exact/temp_size.hpp finish_bytes; exact_entries.cpp checks it), each on its own sectors.
inline constexpr std::size_t counter_stride_words = 72;

/// The current device's table: counter i is at (*table)[i * counter_stride_words]. Loads the
/// module if needed. Returns the CUDA error of cudaGetSymbolAddress.
cudaError_t counter_table(unsigned long long** table);

}  // namespace tunedreduce::kernels
