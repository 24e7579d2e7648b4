#pragma once
// How many blocks of one exact_sum first pass (exact/sum.hpp) are resident on a multiprocessor
// of the current device: the occupancy calculator on the instance that exact_sum would launch
// for the configuration. The registry's exact entries size their persistent grid with it.
// Defined in exact/sum_kernels.cu, through the same dispatch as the launch: one instantiation
// of each kernel.

#include <cuda_runtime_api.h>

#include "exact/sum.hpp"

namespace tunedreduce::exact {

/// Sets \p blocks to the resident blocks per multiprocessor of the first pass that
/// exact_sum(T = float when \p is_double is false, else double) launches for \p cfg
/// (block_threads, vector, unroll, expansion, chunks; 0 and automatic as exact_sum reads them).
/// Returns cudaErrorInvalidValue for a configuration exact_sum refuses, else the occupancy
/// calculator's error.
cudaError_t resident_blocks_per_sm(bool is_double, const ExactLaunch& cfg, int& blocks);

}  // namespace tunedreduce::exact
