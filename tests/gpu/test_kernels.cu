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

cudaError_t launch_trap(const kernels::LaunchArgs& a, const kernels::DeviceLimits&) {
  trap_kernel<<<1, 32, 0, a.stream>>>(static_cast<int*>(a.workspace));
  return cudaGetLastError();
}

cudaError_t launch_hang(const kernels::LaunchArgs& a, const kernels::DeviceLimits&) {
  cudaMemsetAsync(a.workspace, 0, sizeof(int), a.stream);
  hang_kernel<<<1, 32, 0, a.stream>>>(static_cast<volatile int*>(a.workspace));
  return cudaGetLastError();
}

// Their geometry (workspace, grid, what they can run) is that of their parameters
// (kernels/geometry.hpp); the kernels use the first 4 bytes of the workspace.
const kernels::Entry entries[] = {
    {kernels::KernelParams{kernels::Family::warp_shuffle, 32, 1, kernels::SmemMode::none,
                           kernels::Finish::two_pass, DType::i32, Op::sum},
     "test.trap.i32.sum", &launch_trap, nullptr},
    {kernels::KernelParams{kernels::Family::warp_shuffle, 32, 1, kernels::SmemMode::none,
                           kernels::Finish::two_pass, DType::i32, Op::sum},
     "test.hang.i32.sum", &launch_hang, nullptr},
};

}  // namespace

std::span<const kernels::Entry> test_only_entries() { return entries; }

}  // namespace tunedreduce::test
