// The GPU side of measuring. See gpu.hpp.

#include "measure/gpu.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "common/percentile.hpp"
#include "measure/datagen.hpp"

namespace tunedreduce::measure {

namespace {

template <class T>
__global__ void fill_kernel(T* p, std::uint64_t n, std::uint64_t seed) {
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = data_value<T>(seed, i);
}

/// begin[s] = s * size, end[s] = (s + 1) * size for s < count: uniform segments.
template <class I>
__global__ void offsets_kernel(I* begin, I* end, std::uint64_t count, std::uint64_t size) {
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t s = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < count;
       s += stride) {
    begin[s] = static_cast<I>(s * size);
    end[s] = static_cast<I>((s + 1) * size);
  }
}

/// Keeps the GPU busy for about \p ns nanoseconds without touching memory, so that a warm-L2
/// measurement's start event is not recorded on an idle GPU (launch latency stays out of it).
__global__ void spin_kernel(std::uint64_t ns) {
  std::uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

/// A plain streaming read of the grid's share of nvec vectors: 16-byte loads, four in flight per
/// thread, folded so that nothing is elided.
__device__ __forceinline__ unsigned streaming_fold(const uint4* __restrict__ p,
                                                   std::uint64_t nvec) {
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * stride < nvec; i += 4 * stride) {
    const uint4 a = __ldg(p + i), b = __ldg(p + i + stride), c = __ldg(p + i + 2 * stride),
                d = __ldg(p + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^
           d.w;
  }
  for (; i < nvec; i += stride) {
    const uint4 a = __ldg(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  return acc;
}

/// The streaming read alone: the cold flush and the attainable bandwidth.
__global__ void read_kernel(const uint4* __restrict__ p, std::uint64_t nvec, unsigned* sink) {
  const unsigned acc = streaming_fold(p, nvec);
  if (acc == 0x9e3779b9u) *sink = acc;  // practically never; keeps the loads alive
}

/// The floor of a reduction with many results: the same streaming read, then \p nout 16-byte
/// stores (zeros) at \p out.
__global__ void read_write_kernel(const uint4* __restrict__ p, std::uint64_t nvec, uint4* out,
                                  std::uint64_t nout, unsigned* sink) {
  const unsigned acc = streaming_fold(p, nvec);
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t j = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < nout;
       j += stride)
    out[j] = make_uint4(0, 0, 0, 0);
  if (acc == 0x9e3779b9u) *sink = acc;
}

template <class T>
void launch_fill(void* p, std::uint64_t n, std::uint64_t seed, int sms, cudaStream_t s) {
  fill_kernel<T><<<sms * 8, 256, 0, s>>>(static_cast<T*>(p), n, seed);
}

}  // namespace

cudaError_t fill_input(DType d, void* p, std::uint64_t n, std::uint64_t seed, int sm_count,
                       cudaStream_t stream) {
  visit_dtype(d, [&](auto t) { launch_fill<data_t<t.value>>(p, n, seed, sm_count, stream); });
  return cudaGetLastError();
}

cudaError_t fill_uniform_offsets(bool wide, void* begin, void* end, std::uint64_t count,
                                 std::uint64_t segment_size, int sm_count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned grid = static_cast<unsigned>(std::max(sm_count, 1) * 8);
  if (wide)
    offsets_kernel<<<grid, 256, 0, stream>>>(static_cast<std::int64_t*>(begin),
                                             static_cast<std::int64_t*>(end), count, segment_size);
  else
    offsets_kernel<<<grid, 256, 0, stream>>>(static_cast<std::int32_t*>(begin),
                                             static_cast<std::int32_t*>(end), count, segment_size);
  return cudaGetLastError();
}

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

double measure_attainable_read_gbps(int sm_count, void* flush, std::size_t flush_bytes,
                                    cudaStream_t stream) {
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw StickyCudaError(std::string(what) + ": " + cuda_error_text(e));
  };
  std::size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  std::size_t bytes = std::min<std::size_t>(std::size_t{4} << 30, free_bytes / 4);
  bytes = bytes / 16 * 16;
  void* buf = nullptr;
  unsigned* sink = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaMalloc(&buf, bytes), "cudaMalloc(bandwidth buffer)");
  check(cudaMalloc(&sink, sizeof(unsigned)), "cudaMalloc(sink)");
  check(cudaMemsetAsync(buf, 0x5b, bytes, stream), "cudaMemset(bandwidth buffer)");
  int blocks_per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, read_kernel, 512, 0),
        "occupancy");
  const unsigned grid = static_cast<unsigned>(std::max(1, blocks_per_sm) * sm_count);
  std::vector<double> gbps;
  for (int rep = 0; rep < 12; ++rep) {
    check(cudaMemsetAsync(flush, rep, flush_bytes, stream), "L2 flush");
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    read_kernel<<<grid, 512, 0, stream>>>(static_cast<const uint4*>(buf), bytes / 16, sink);
    check(cudaGetLastError(), "read kernel launch");
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "read kernel");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (rep >= 2) gbps.push_back(static_cast<double>(bytes) / (ms * 1e-3) / 1e9);  // 2 warm-ups
  }
  cudaFree(buf);
  cudaFree(sink);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(gbps.begin(), gbps.end());
  return percentile(gbps, 0.5);
}

void enqueue_busy_wait(std::uint64_t ns, cudaStream_t stream) {
  spin_kernel<<<1, 32, 0, stream>>>(ns);
}

std::size_t cold_flush_bytes(std::int64_t l2_bytes) {
  return std::max<std::size_t>(4 * static_cast<std::size_t>(std::max<std::int64_t>(l2_bytes, 0)),
                               std::size_t{256} << 20);
}

cudaError_t enqueue_read(const void* p, std::size_t bytes, int sm_count, unsigned* sink,
                         cudaStream_t stream) {
  read_kernel<<<static_cast<unsigned>(4 * std::max(sm_count, 1)), 512, 0, stream>>>(
      static_cast<const uint4*>(p), bytes / 16, sink);
  return cudaGetLastError();
}

cudaError_t enqueue_read_write(const void* in, std::size_t in_bytes, void* out,
                               std::size_t out_bytes, int sm_count, unsigned* sink,
                               cudaStream_t stream) {
  read_write_kernel<<<static_cast<unsigned>(4 * std::max(sm_count, 1)), 512, 0, stream>>>(
      static_cast<const uint4*>(in), in_bytes / 16, static_cast<uint4*>(out), (out_bytes + 15) / 16,
      sink);
  return cudaGetLastError();
}

}  // namespace tunedreduce::measure
