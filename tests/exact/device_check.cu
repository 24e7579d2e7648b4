// exact/accumulator.hpp as device code: kernels that add floats and doubles into it and round
// it, compiled with the main build (not linked anywhere). Their register counts, from
// `-Xptxas -v`, are in the comment at the top of exact/accumulator.hpp.

#include <cstdint>

#include "exact/accumulator.hpp"

namespace tunedreduce::exact {

template <class Acc, class T>
__device__ void add_grid_stride(Acc& acc, const T* in, std::uint64_t n) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    acc.add(in[i]);
  }
}

/// Each thread's normalised chunks and flags: the add loop's cost alone.
template <class Acc, class T>
__global__ void add_and_store_state(const T* in, std::uint64_t n, std::int64_t* chunks,
                                    std::uint32_t* flags) {
  Acc acc;
  add_grid_stride(acc, in, n);
  acc.normalise();
  const std::uint64_t t = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
#pragma unroll(Acc::Store::kUnrollChunks)
  for (int j = 0; j < Acc::Store::kChunks; ++j) {
    chunks[t * Acc::Store::kChunks + j] = acc.store().chunk(j);
  }
  flags[t] = acc.store().flags();
}

/// Each thread's rounded sum: the add loop and the rounding.
template <class Acc, class T>
__global__ void add_and_round(const T* in, std::uint64_t n, T* out) {
  Acc acc;
  add_grid_stride(acc, in, n);
  acc.normalise();  // in place: result() would round a copy
  out[blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x] = acc.store().round();
}

template __global__ void add_and_store_state<FloatAccumulator, float>(const float*, std::uint64_t,
                                                                      std::int64_t*,
                                                                      std::uint32_t*);
template __global__ void add_and_store_state<DoubleAccumulator, double>(const double*,
                                                                        std::uint64_t,
                                                                        std::int64_t*,
                                                                        std::uint32_t*);
template __global__ void add_and_round<FloatAccumulator, float>(const float*, std::uint64_t,
                                                                float*);
template __global__ void add_and_round<DoubleAccumulator, double>(const double*, std::uint64_t,
                                                                  double*);
// float's other residence, for the comparison in that comment.
template __global__ void add_and_store_state<ExactAccumulator<float, 2, Residence::memory>, float>(
    const float*, std::uint64_t, std::int64_t*, std::uint32_t*);

}  // namespace tunedreduce::exact
