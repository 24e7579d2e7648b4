#pragma once
// The device side of `tunedreduce bench` (bench_gpu.cu and bench_segmented_gpu.cu, compiled by
// nvcc): the CUB and Thrust reductions it compares against, over type-erased buffers. Its data come
// from tuner::fill_input, as the tuner's.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "tunedreduce/types.hpp"

namespace tunedreduce::cli::bench {

/// cub::DeviceReduce::Sum / Min / Max / ArgMin / ArgMax (an IndexedValue at \p out, the index
/// 64-bit), two-phase: with temp == nullptr sets temp_bytes.
cudaError_t cub_reduce(DType dtype, Op op, void* temp, std::size_t& temp_bytes, const void* in,
                       void* out, std::uint64_t n, cudaStream_t stream);

/// cub::DeviceSegmentedReduce::Sum / Min / Max / ArgMin / ArgMax (Reduce into the wide type
/// for wide_sum, into float for the half types) of \p num_segments segments given by int64
/// begin / end offsets (bench_segmented_gpu.cu), two-phase: with temp == nullptr sets temp_bytes.
/// ArgMin / ArgMax write a cub::KeyValuePair<int, T> (the index within the segment, then the
/// value) per segment: cub_pairs_to_indexed turns them into the library's IndexedValue<T>.
cudaError_t cub_segmented_reduce(DType dtype, Op op, void* temp, std::size_t& temp_bytes,
                                 const void* in, void* out, std::uint64_t num_segments,
                                 const std::int64_t* begin, const std::int64_t* end,
                                 cudaStream_t stream);
/// The bytes cub_segmented_reduce writes per segment: result_bytes; for argmin and argmax 8
/// (4-byte elements) or 16.
std::size_t cub_segmented_result_bytes(DType dtype, Op op);
/// CUB's \p count argmin / argmax pairs at \p pairs (host memory) as IndexedValue<T> at
/// \p indexed (16 bytes each, as result_bytes says).
void cub_pairs_to_indexed(DType dtype, const void* pairs, void* indexed, std::uint64_t count);

/// thrust::reduce(thrust::cuda::par.on(stream), in, in + n, identity, plus/minimum/maximum), or
/// thrust::min_element / max_element for argmin / argmax: the result is returned to the host
/// (result_bytes at \p result). Throws on CUDA errors.
void thrust_reduce(DType dtype, Op op, const void* in, std::uint64_t n, cudaStream_t stream,
                   void* result);

}  // namespace tunedreduce::cli::bench
