#pragma once
// The device side of `tunedreduce bench` (bench_gpu.cu, compiled by nvcc): the CUB and Thrust
// reductions it compares against, over type-erased buffers. Its data come from
// tuner::fill_input, as the tuner's.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "tunedreduce/types.hpp"

namespace tunedreduce::cli::bench {

/// cub::DeviceReduce::Sum / Min / Max / ArgMin / ArgMax (an IndexedValue at \p out, the index
/// 64-bit), two-phase: with temp == nullptr sets temp_bytes.
cudaError_t cub_reduce(DType dtype, Op op, void* temp, std::size_t& temp_bytes, const void* in,
                       void* out, std::uint64_t n, cudaStream_t stream);

/// thrust::reduce(thrust::cuda::par.on(stream), in, in + n, identity, plus/minimum/maximum), or
/// thrust::min_element / max_element for argmin / argmax: the result is returned to the host
/// (result_bytes at \p result). Throws on CUDA errors.
void thrust_reduce(DType dtype, Op op, const void* in, std::uint64_t n, cudaStream_t stream,
                   void* result);

}  // namespace tunedreduce::cli::bench
