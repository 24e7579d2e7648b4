// Kernels that exist only in the test build: one traps (a sticky CUDA error), one never returns.
// The test worker (test_worker_main.cpp) adds them to the registry it serves, so the tuner's
// isolation is proven on a real GPU.

#include <cuda_runtime.h>

#include <span>

#include "kernels/registry.hpp"

namespace tunedreduce::test {

namespace {

__global__ void trap_kernel(int* out) {
  if (threadIdx.x == 0) *out = 1;
  asm volatile("trap;");
}

__global__ void hang_kernel(volatile int* flag) {
  // flag is never set: spins until the process is killed.
  while (*flag == 0) __nanosleep(100000);
}

std::size_t workspace_bytes(std::uint64_t, const kernels::DeviceLimits&) { return 256; }
kernels::Refusal can_implement(std::uint64_t, std::size_t, const kernels::DeviceLimits&) { return std::nullopt; }
std::uint64_t grid_size(std::uint64_t n, const kernels::DeviceLimits&) { return n ? 1 : 0; }

cudaError_t launch_trap(const kernels::LaunchArgs& a, const kernels::DeviceLimits&) {
  trap_kernel<<<1, 32, 0, a.stream>>>(static_cast<int*>(a.workspace));
  return cudaGetLastError();
}

cudaError_t launch_hang(const kernels::LaunchArgs& a, const kernels::DeviceLimits&) {
  cudaMemsetAsync(a.workspace, 0, sizeof(int), a.stream);
  hang_kernel<<<1, 32, 0, a.stream>>>(static_cast<volatile int*>(a.workspace));
  return cudaGetLastError();
}

const kernels::Entry entries[] = {
    {kernels::KernelParams{kernels::Family::warp_shuffle, 32, 1, kernels::SmemMode::none,
                           kernels::Finish::two_pass, DType::i32, Op::sum},
     "test.trap.i32.sum", &workspace_bytes, &can_implement, &launch_trap, &grid_size},
    {kernels::KernelParams{kernels::Family::warp_shuffle, 32, 1, kernels::SmemMode::none,
                           kernels::Finish::two_pass, DType::i32, Op::sum},
     "test.hang.i32.sum", &workspace_bytes, &can_implement, &launch_hang, &grid_size},
};

}  // namespace

std::span<const kernels::Entry> test_only_entries() { return entries; }

}  // namespace tunedreduce::test
