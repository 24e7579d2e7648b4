#pragma once
// The first passes (exact/sum_kernels.cuh's exact_sum_blocks) that this build compiled, as a
// table: exact_sum launches through it, and its occupancy query and the registry's exact entries
// ask it. Host code only. The instances are generated translation units (exact/CMakeLists.txt,
// exact/first_pass.cu.in): every knob combination of exact/sum.hpp in a full build, those of the
// kernel list's exact entries and the built-in rules' in a deployment build (TUNEDREDUCE_KERNELS).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>

#include "tunedreduce/types.hpp"

namespace tunedreduce::exact::detail {

/// An exact sum's input type's facts (tunedreduce/types.hpp's dtype_of and dtype_table): its
/// DType (the first passes' table, exact_sum's checks, the experiments) and its C++ name in
/// exact_sum's messages.
template <class In>
struct InputOf {
  static constexpr DType dtype = dtype_of<In>;
  static constexpr const char* name = dtype_info(dtype).cpp_name;
};

/// One launch of a first pass: exact_sum's arguments, the grid and the split of the input.
struct FirstPassArgs {
  const void* in = nullptr;
  std::uint64_t n = 0;
  /// Elements before the first aligned vector, read one by one.
  std::uint64_t head = 0;
  /// Aligned vectors after the head.
  std::uint64_t vectors = 0;
  std::int64_t* slots = nullptr;
  /// single_pass's ticket; null: two_pass, or one block.
  unsigned* ticket = nullptr;
  void* out = nullptr;
  unsigned blocks = 0;
  cudaStream_t stream = nullptr;
};

/// A compiled first pass: its knobs (as exact_sum normalises them) and its host functions.
struct FirstPass {
  /// The input's element type: f32, f64, f16 or bf16 (the half types summed as floats).
  DType dtype = DType::f32;
  int block_threads = 0;
  int vector = 0;
  int unroll = 0;
  int expansion = 0;
  /// The chunks in registers (float only); else in local memory.
  bool registers = false;
  /// Enqueues the kernel; returns cudaGetLastError().
  cudaError_t (*launch)(const FirstPassArgs&) = nullptr;
  /// The occupancy calculator's resident blocks per multiprocessor of the current device.
  cudaError_t (*resident_blocks)(int& blocks) = nullptr;
};

/// Every first pass this build compiled, each once (the generated index, exact/CMakeLists.txt).
std::span<const FirstPass> compiled_first_passes();

/// The compiled first pass with these knobs (normalised: vector, expansion and chunks named),
/// or null.
const FirstPass* find_first_pass(DType dtype, int block_threads, int vector, int unroll,
                                 int expansion, bool registers);

}  // namespace tunedreduce::exact::detail
