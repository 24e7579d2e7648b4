#pragma once
// The GPU side of measuring, shared by the tuner's workers (tuner/worker/measurer.cu) and
// `tunedreduce bench` (cli/cmd_bench.cpp): the input data, the cold-L2 flush, the busy gate
// before a warm start event, the attainable read bandwidth, and the error that ends a context.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tunedreduce/types.hpp"

namespace tunedreduce::measure {

/// A CUDA error that leaves the context unusable (illegal address, trap, ...): the worker must
/// report it and exit.
class StickyCudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "cudaErrorX (its description)".
std::string cuda_error_text(cudaError_t e);

/// Median GB/s of a plain streaming read of min(4 GiB, free memory / 4) with 16-byte loads: each
/// read timed with CUDA events right after an L2 flush (a cudaMemsetAsync of \p flush_bytes at
/// \p flush, so the GPU is busy when the start event is recorded), 2 warm-ups, 10 timed reads.
/// The attainable bandwidth of the tuner's workers and of `tunedreduce bench`. Throws
/// StickyCudaError.
double measure_attainable_read_gbps(int sm_count, void* flush, std::size_t flush_bytes,
                                    cudaStream_t stream);

/// Writes data_value<T>(seed, i) to p[i] for i < n (measure/datagen.hpp), so
/// compute_reference gives the host reference of every prefix: the input of the tuner's workers
/// and of `tunedreduce bench`. Returns the launch's error.
cudaError_t fill_input(DType dtype, void* p, std::uint64_t n, std::uint64_t seed, int sm_count,
                       cudaStream_t stream);

/// Writes the offsets of \p count segments of \p segment_size elements each, one after the
/// other from element 0: begin[s] = s * segment_size, end[s] = (s + 1) * segment_size, as int64
/// (\p wide) or int32 (the caller makes sure count * segment_size fits). The tuner's workers
/// measure segmented entries of the offsets layouts on them. Returns the launch's error.
cudaError_t fill_uniform_offsets(bool wide, void* begin, void* end, std::uint64_t count,
                                 std::uint64_t segment_size, int sm_count, cudaStream_t stream);

/// Enqueues a kernel that keeps the GPU busy for about \p ns without touching memory: what
/// precedes a warm-L2 timed launch, so its start event is not recorded on an idle GPU.
void enqueue_busy_wait(std::uint64_t ns, cudaStream_t stream);

/// Bytes of the read that precedes every cold timed run, in the tuner and in `tunedreduce
/// bench`: 4 times the L2, at least 256 MiB, so that no line of the input survives it.
std::size_t cold_flush_bytes(std::int64_t l2_bytes);

/// Enqueues the streaming read of measure_attainable_read_gbps over the \p bytes at \p p (16-byte
/// aligned, initialised; 4 blocks per multiprocessor; \p sink is written practically never):
/// the cold L2 flush of the tuner and of `tunedreduce bench`, which leaves L2 holding clean
/// lines of \p p only. Returns the launch's error.
cudaError_t enqueue_read(const void* p, std::size_t bytes, int sm_count, unsigned* sink,
                         cudaStream_t stream);

/// The floor of `tunedreduce bench --segments`: the streaming read of enqueue_read over the
/// \p in_bytes at \p in, then \p out_bytes (rounded up to 16; \p out 16-byte aligned and that
/// large) of zeros written at \p out, by the same 4 blocks per multiprocessor. Returns the
/// launch's error.
cudaError_t enqueue_read_write(const void* in, std::size_t in_bytes, void* out,
                               std::size_t out_bytes, int sm_count, unsigned* sink,
                               cudaStream_t stream);

}  // namespace tunedreduce::measure
