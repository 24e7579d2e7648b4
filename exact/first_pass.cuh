#pragma once
// A first pass's table row (exact/first_pass.hpp): the launch and the occupancy query of one
// instance of exact_sum_blocks. Included by the generated translation units alone
// (exact/first_pass.cu.in), so that each instance is compiled in one of them.

#include "exact/first_pass.hpp"
#include "exact/sum_kernels.cuh"

namespace tunedreduce::exact::detail {

template <class In, int kThreads, int kVector, int kUnroll, int kExpansion, Residence kResidence>
struct FirstPassInstance {
  static cudaError_t launch(const FirstPassArgs& a) {
    exact_sum_blocks<In, kThreads, kVector, kUnroll, kExpansion, kResidence>
        <<<a.blocks, kThreads, 0, a.stream>>>(static_cast<const In*>(a.in), a.n, a.head, a.vectors,
                                              a.slots, a.ticket, static_cast<AccumOf<In>*>(a.out));
    return cudaGetLastError();
  }

  static cudaError_t resident_blocks(int& blocks) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, exact_sum_blocks<In, kThreads, kVector, kUnroll, kExpansion, kResidence>, kThreads,
        0);
  }

  static constexpr DType dtype = InputOf<In>::dtype;

  static constexpr FirstPass row() {
    return FirstPass{dtype,   kThreads,        kVector,
                     kUnroll, kExpansion,      kResidence == Residence::registers,
                     &launch, &resident_blocks};
  }
};

}  // namespace tunedreduce::exact::detail
