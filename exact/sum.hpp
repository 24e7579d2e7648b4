#pragma once
// The exact sums on the GPU (docs/kernels.md, "Exact sums"): the true sum of n floats, doubles or
// halves (__half, __nv_bfloat16: summed as the floats they are, the result a float) rounded once
// to nearest even, the same bits for every launch configuration. Host API of exact/sum_kernels.cu,
// which the registry's exact entries (kernels/exact_entries.cpp) launch.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tunedreduce::exact {

/// How the blocks' states become the result.
enum class ExactFinish : std::uint8_t {
  /// A second kernel (one block of 512 threads) merges the blocks' states and rounds.
  two_pass,
  /// Every block adds its state into an accumulator beside an atomic ticket, and the last block
  /// to take a ticket rounds it: one kernel, after a memset of the ticket and accumulator (104
  /// bytes for float and the halves, 544 for double: exact/temp_size.hpp's finish_bytes; none
  /// with ExactLaunch::counter).
  single_pass,
};

/// Where each thread's chunks (the exact fallback behind its expansion) live.
enum class ExactChunks : std::uint8_t {
  /// float and the half types: registers; double: local.
  automatic,
  /// float and the half types only: 11 chunks in registers (22 of them), a spill a select over
  /// each chunk.
  registers,
  /// The thread's local memory, made at its first spill: fewer registers (more threads per
  /// multiprocessor), a spill three read-modify-writes there.
  local,
};

/// The knobs of an exact sum. None of them changes the result's bits.
struct ExactLaunch {
  /// Threads per block: 128, 256 or 512.
  int block_threads = 256;
  /// Blocks per multiprocessor of the device; the grid is this times the multiprocessor count
  /// unless grid_blocks is set. Either way no more blocks than there are loads to share.
  int blocks_per_sm = 4;
  /// The grid's blocks, if not 0.
  unsigned grid_blocks = 0;
  /// Elements per load: 1, 2 or 4 for float (float2, float4), 1 or 2 for double (double2), 8
  /// for the half types (16 bytes); 0 (the default): the widest, 4 for float, 2 for double, 8
  /// for the halves. The elements before the first aligned vector and after the last are read
  /// one by one.
  int vector = 0;
  /// Loads each thread issues before adding them: 1, 2 or 4.
  int unroll = 1;
  /// Doubles in each thread's expansion (exact/accumulator.hpp): 1 or 2 for float and the half
  /// types, 2 or 3 for double; 0 (the default): 2 for float and the halves, 3 for double. Fewer
  /// cost fewer fp64 additions per element and spill into the chunks more often (on the host,
  /// uniform [0, 1) floats: none with 2, 5·10^-6 of the adds with 1; doubles: none with 2 or 3).
  int expansion = 0;
  ExactChunks chunks = ExactChunks::automatic;
  ExactFinish finish = ExactFinish::two_pass;
  /// Not a knob: single_pass's ticket and accumulator outside the workspace (finish_bytes of
  /// exact/temp_size.hpp for the result type, 8-byte aligned, zero on entry, not used by another
  /// call in flight; every call leaves them zero), so that the call enqueues no memset; the
  /// workspace may still hold anything on entry (the library's kernels/counters.hpp gives its
  /// single_pass kernels such counters). Null (the default): they are at the start of the
  /// workspace and a memset zeroes them first. two_pass ignores it.
  unsigned* counter = nullptr;
};

/// The sum of d_in[0..n) rounded once to float (nearest, ties to even; NaN if any input is NaN
/// or both infinities occur, ±Inf if one does or the rounded sum overflows; an exact zero is -0
/// only if every input is -0; n = 0 gives +0), written to *d_out, enqueued on \p stream.
/// CUB's two-phase convention: with d_temp == nullptr only \p temp_bytes is set (to what a call
/// with the same n, d_in's alignment, configuration and device needs) and nothing is enqueued.
/// n must be below 2^40. Returns cudaErrorInvalidValue for a bad argument (exact_sum_error_text()
/// says which), else the first error of the CUDA calls it makes.
cudaError_t exact_sum(const float* d_in, float* d_out, std::uint64_t n, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream, ExactLaunch cfg = {});
/// The same for double.
cudaError_t exact_sum(const double* d_in, double* d_out, std::uint64_t n, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream, ExactLaunch cfg = {});
/// The same for IEEE binary16 inputs: their exact sum (each half is exactly a float) rounded
/// once to float.
cudaError_t exact_sum(const __half* d_in, float* d_out, std::uint64_t n, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream, ExactLaunch cfg = {});
/// The same for bfloat16 inputs, rounded once to float (their sum can overflow it: ±Inf).
cudaError_t exact_sum(const __nv_bfloat16* d_in, float* d_out, std::uint64_t n, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream, ExactLaunch cfg = {});

/// What the calling thread's last exact_sum that returned cudaErrorInvalidValue found wrong
/// with its arguments ("" if none did).
const char* exact_sum_error_text();

}  // namespace tunedreduce::exact
