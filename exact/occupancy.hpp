#pragma once
// Whether this library has the first pass that exact_sum (exact/sum.hpp) launches for a
// configuration, and how many of its blocks are resident on a multiprocessor of the current
// device (the occupancy calculator on that instance). The registry's exact entries are those
// whose first pass is compiled, and size their persistent grid with the second. Defined in
// exact/sum_kernels.cu, through the table the launch uses (exact/first_pass.hpp).

#include <cuda_runtime_api.h>

#include "exact/sum.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce::exact {

/// Sets \p blocks to the resident blocks per multiprocessor of the first pass that
/// exact_sum launches for inputs of \p dtype (f32, f64, f16 or bf16) and \p cfg
/// (block_threads, vector, unroll, expansion, chunks; 0 and automatic as exact_sum reads them).
/// Returns cudaErrorInvalidValue for a configuration exact_sum refuses, else the occupancy
/// calculator's error.
cudaError_t resident_blocks_per_sm(DType dtype, const ExactLaunch& cfg, int& blocks);

/// Whether this library has the first pass that exact_sum launches for \p cfg (a full build has
/// every one; a deployment build those of its kernel list's exact entries and the built-in
/// rules': exact/CMakeLists.txt). False for a configuration exact_sum refuses and for an element
/// type it does not sum.
bool has_first_pass(DType dtype, const ExactLaunch& cfg);

}  // namespace tunedreduce::exact
