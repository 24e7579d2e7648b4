// find_bad_offsets (kernels/segmented/check.hpp): a grid over the segments, the first offending
// index by an atomic minimum.

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/segmented/check.hpp"

namespace tunedreduce::kernels::segmented {

namespace {

template <class Off>
__global__ void __launch_bounds__(256)
    bad_offsets_kernel(const Off* __restrict__ begin, const Off* __restrict__ end,
                       std::uint64_t count, unsigned long long* first) {
  const std::uint64_t all = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t s = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < count;
       s += all) {
    const Off b = __ldg(begin + s), e = __ldg(end + s);
    if (b < 0 || e < b) atomicMin(first, static_cast<unsigned long long>(s));
  }
}

}  // namespace

cudaError_t find_bad_offsets(bool wide, const void* begin, const void* end, std::uint64_t count,
                             unsigned long long* first, cudaStream_t stream,
                             OffsetsVerdict& verdict) {
  verdict = {};
  if (count == 0) return cudaSuccess;
  unsigned long long found = ~0ull;
  cudaError_t e = cudaMemsetAsync(first, 0xff, sizeof *first, stream);
  if (e == cudaSuccess) {
    const std::uint64_t blocks = std::min<std::uint64_t>((count + 255) / 256, 4096);
    if (wide)
      bad_offsets_kernel<<<unsigned(blocks), 256, 0, stream>>>(
          static_cast<const std::int64_t*>(begin), static_cast<const std::int64_t*>(end), count,
          first);
    else
      bad_offsets_kernel<<<unsigned(blocks), 256, 0, stream>>>(
          static_cast<const std::int32_t*>(begin), static_cast<const std::int32_t*>(end), count,
          first);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(&found, first, sizeof found, cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess || found == ~0ull) return e;
  verdict.bad = true;
  verdict.segment = found;
  const std::size_t bytes = wide ? 8 : 4;
  const auto at = [&](const void* p) { return static_cast<const char*>(p) + found * bytes; };
  // Its two offsets, in the stream's order too (an error's path: one more wait).
  std::int64_t b = 0, en = 0;
  std::int32_t b32 = 0, e32 = 0;
  if (e = cudaMemcpyAsync(wide ? static_cast<void*>(&b) : &b32, at(begin), bytes,
                          cudaMemcpyDeviceToHost, stream);
      e != cudaSuccess)
    return e;
  if (e = cudaMemcpyAsync(wide ? static_cast<void*>(&en) : &e32, at(end), bytes,
                          cudaMemcpyDeviceToHost, stream);
      e != cudaSuccess)
    return e;
  if (e = cudaStreamSynchronize(stream); e != cudaSuccess) return e;
  verdict.begin = wide ? b : b32;
  verdict.end = wide ? en : e32;
  return cudaSuccess;
}

}  // namespace tunedreduce::kernels::segmented
