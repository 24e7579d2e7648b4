// Experiment (docs/performance-log.md, 2026-11-22): where the time of a one-launch int32 sum goes,
// and which way of finishing (combining the blocks' results) costs least on this GPU. Built with
// -DTUNEDREDUCE_EXPERIMENTS=ON (bench/experiments/README.md):
//   cmake --build build --target experiment_finish_micro
//   [FLUSH=memset,read,...] [ONLY=packed_atomic.h1,...] [CUB=1] [ALL=1] [BATCH=1]
//     build/bin/experiments/finish_micro [log2 sizes...]     (the variables, then the program)
// Timing: the method of the figures in docs/performance-log.md (2026-11-22, sessions 2 and 3) —
// a cudaMemsetAsync of twice the L2 size keeps the GPU busy before the start event (launch
// latency not inside), CUDA events, median of 31; FLUSH picks other flush methods (see main),
// CUB=1 times cub::DeviceReduce::Sum alongside. Every launch's result is checked against the host
// sum (uint32 wrap-around).

#include <cooperative_groups.h>
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda/atomic>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/experiments/experiment.hpp"
#include "measure/gpu.hpp"

namespace cg = cooperative_groups;

__global__ void empty_kernel() {}

/// Memory-free wait of \p ns nanoseconds (one warp, globaltimer).
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (t - t0 < ns);
}

template <int B>
__device__ __forceinline__ int block_sum(int v) {
  __shared__ int w[B / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if constexpr (B == 32) return v;
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < B / 32 ? w[threadIdx.x] : 0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

// H: 0 ld.global.nc (__ldg), 1 ld.global.nc.L1::no_allocate, 2 ld.global.nc.L2::256B,
//    3 ld.global.cs (__ldcs, evict-first), 4 ld.global.nc.L1::no_allocate with an L2 evict_first
//    cache policy
template <int H>
__device__ __forceinline__ int4 load4(const int4* p) {
  if constexpr (H == 0) return __ldg(p);
  if constexpr (H == 3) return __ldcs(p);
  int4 r;
  if constexpr (H == 4) {
    std::uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.s32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p), "l"(pol));
    return r;
  }
  if constexpr (H == 1)
    asm volatile("ld.global.nc.L1::no_allocate.v4.s32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  else
    asm volatile("ld.global.nc.L2::256B.v4.s32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  return r;
}

/// Tiles of B*U vectors; block b takes tiles b, b + grid, ... (grid-stride), or with \p chunked
/// one contiguous run of tiles (CUB's even share); all U loads issued before use.
template <int B, int U, int H>
__device__ __forceinline__ int fold(const int4* __restrict__ in, long long nvec, int chunked) {
  int v = 0;
  const long long tiles = (nvec + B * U - 1) / (B * U);
  long long t0 = blockIdx.x, t1 = tiles, step = gridDim.x;
  if (chunked) {
    t0 = tiles * blockIdx.x / gridDim.x;
    t1 = tiles * (blockIdx.x + 1) / gridDim.x;
    step = 1;
  }
  for (long long t = t0; t < t1; t += step) {
    const long long base = t * (B * U) + threadIdx.x;
    int4 x[U];
    if (base + (U - 1) * B < nvec) {
#pragma unroll
      for (int k = 0; k < U; ++k) x[k] = load4<H>(in + base + k * B);
    } else {
#pragma unroll
      for (int k = 0; k < U; ++k)
        x[k] = base + k * B < nvec ? load4<H>(in + base + k * B) : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int k = 0; k < U; ++k) v += (x[k].x + x[k].y) + (x[k].z + x[k].w);
  }
  return v;
}

struct Args {
  const int4* in;
  long long nvec;
  int* partials;
  unsigned* counter;
  int* out;
  int chunked;
};

template <int B>
__device__ __forceinline__ int sum_partials(const int* p, unsigned count) {
  int v = 0;
  for (unsigned i = threadIdx.x; i < count; i += B) v += __ldcg(p + i);
  return block_sum<B>(v);
}

/// Adds slots first, first + B, ... below count to v, waiting for each one's flag (the high
/// half), and clears them for the next launch.
template <int B>
__device__ __forceinline__ int collect_slots(unsigned long long* slots, unsigned first,
                                             unsigned count, int v) {
  for (unsigned i = first; i < count; i += B) {
    unsigned long long w;
    do {
      asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(slots + i) : "memory");
    } while ((w >> 32) == 0);
    v += int(unsigned(w));
    slots[i] = 0;
  }
  return v;
}

// MODE 0: every block writes its partial, no finish (a lower bound; the result is not the sum)
// MODE 1: partial; __threadfence; atomicAdd ticket; the last block sums the partials
// MODE 2: partial; one fetch_add(acq_rel) ticket; the last block sums the partials
// MODE 3: (32-bit integer sum only) one relaxed 64-bit atomicAdd per block carries both the value
//         (bits 0..31, mod 2^32), its carries (32..47) and the ticket (48..63); no fence, no
//         partials: the last block's returned word holds the sum.
template <int B, int U, int H, int MODE>
__global__ void __launch_bounds__(B) k_lastblock(Args a) {
  const int r = block_sum<B>(fold<B, U, H>(a.in, a.nvec, a.chunked));
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *a.out = r;
    return;
  }
  if constexpr (MODE == 3) {
    if (threadIdx.x == 0) {
      auto* word = reinterpret_cast<unsigned long long*>(a.counter);
      const unsigned long long inc = (1ull << 48) | unsigned(r);
      const unsigned long long old = atomicAdd(word, inc);
      if ((old >> 48) == gridDim.x - 1) {
        *a.out = int(unsigned(old + inc));
        *word = 0;
      }
    }
    return;
  } else if constexpr (MODE == 4) {
    // Flagged slots: each block stores {value, 1} into its 64-bit slot (one single-copy-atomic
    // store, no fence), then takes a relaxed ticket. The last block reads every slot until its
    // flag is set (a relaxed store becomes visible eventually), then clears it for the next launch.
    __shared__ bool last;
    auto* slots = reinterpret_cast<unsigned long long*>(a.partials);
    if (threadIdx.x == 0) {
      const unsigned long long word = (1ull << 32) | unsigned(r);
      asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slots + blockIdx.x), "l"(word)
                   : "memory");
      last = atomicAdd(a.counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    const int v = block_sum<B>(collect_slots<B>(slots, threadIdx.x, gridDim.x, 0));
    if (threadIdx.x == 0) {
      *a.out = v;
      *a.counter = 0;
    }
  } else if constexpr (MODE == 5) {
    // Flagged slots with speculation: every block reads all slots while its ticket is in
    // flight; the last one only re-reads the slots whose flags were not yet set. Needs
    // gridDim.x <= 4 * B (else: the plain flagged path).
    __shared__ bool last;
    auto* slots = reinterpret_cast<unsigned long long*>(a.partials);
    unsigned ticket = 0;
    if (threadIdx.x == 0) {
      const unsigned long long word = (1ull << 32) | unsigned(r);
      asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slots + blockIdx.x), "l"(word)
                   : "memory");
      ticket = atomicAdd(a.counter, 1u);
    }
    unsigned long long w[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const unsigned i = threadIdx.x + k * B;
      w[k] = 0;
      if (i < gridDim.x)
        asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];"
                     : "=l"(w[k])
                     : "l"(slots + i)
                     : "memory");
    }
    if (threadIdx.x == 0) last = ticket == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    int v = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const unsigned i = threadIdx.x + k * B;
      if (i < gridDim.x) {
        while ((w[k] >> 32) == 0)
          asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];"
                       : "=l"(w[k])
                       : "l"(slots + i)
                       : "memory");
        v += int(unsigned(w[k]));
        slots[i] = 0;
      }
    }
    v = block_sum<B>(v);
    if (threadIdx.x == 0) {
      *a.out = v;
      *a.counter = 0;
    }
  } else if constexpr (MODE == 6) {
    // Collector: no ticket. Every block but block 0 stores {value, 1} into its slot and leaves;
    // block 0, after its own tile, waits on the other slots' flags in a fixed order, sums them
    // and clears them for the next launch.
    auto* slots = reinterpret_cast<unsigned long long*>(a.partials);
    if (blockIdx.x != 0) {
      if (threadIdx.x == 0) {
        const unsigned long long word = (1ull << 32) | unsigned(r);
        asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slots + blockIdx.x), "l"(word)
                     : "memory");
      }
      return;
    }
    __syncthreads();  // block_sum's shared words are reused below
    const int v =
        block_sum<B>(collect_slots<B>(slots, 1 + threadIdx.x, gridDim.x, threadIdx.x == 0 ? r : 0));
    if (threadIdx.x == 0) *a.out = v;
  } else if constexpr (MODE == 0) {
    if (threadIdx.x == 0) a.partials[blockIdx.x] = r;
    return;
  } else {
    __shared__ bool last;
    if (threadIdx.x == 0) {
      a.partials[blockIdx.x] = r;
      unsigned ticket;
      if constexpr (MODE == 1) {
        __threadfence();
        ticket = atomicAdd(a.counter, 1u);
      } else {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(*a.counter);
        ticket = c.fetch_add(1u, cuda::memory_order_acq_rel);
      }
      last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    if constexpr (MODE == 1) __threadfence();
    const int v = sum_partials<B>(a.partials, gridDim.x);
    if (threadIdx.x == 0) {
      *a.out = v;
      *a.counter = 0;
    }
  }
}

// Two kernels, the second launched with programmatic dependent launch (PDL, sm_90): the first
// lets its dependent be scheduled at once (griddepcontrol.launch_dependents) and stores one
// partial per block; the second, one block, waits for the first grid to complete and its
// memory to be visible (griddepcontrol.wait), then sums the partials in a fixed order. P = 1
// launches the second kernel plainly (a two-pass reduction as revision 1's two_pass), P = 2 with
// the PDL attribute.
template <int B, int U, int H>
__global__ void __launch_bounds__(B) k_pdl_first(Args a) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int r = block_sum<B>(fold<B, U, H>(a.in, a.nvec, a.chunked));
  if (threadIdx.x == 0) {
    if (gridDim.x == 1) *a.out = r;
    else a.partials[blockIdx.x] = r;
  }
}
template <int B>
__global__ void __launch_bounds__(B) k_pdl_finish(const int* partials, unsigned count, int* out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int v = sum_partials<B>(partials, count);
  if (threadIdx.x == 0) *out = v;
}

// One block, one tile: the shortest code for n <= B * U * 4 (a test of how much a single-block
// launch's time depends on the code it runs: the flush evicts the kernel's instructions too).
template <int B, int U, int H>
__global__ void __launch_bounds__(B) k_single(Args a) {
  int4 x[U];
#pragma unroll
  for (int k = 0; k < U; ++k) {
    const long long i = threadIdx.x + k * B;
    x[k] = i < a.nvec ? load4<H>(a.in + i) : make_int4(0, 0, 0, 0);
  }
  int v = 0;
#pragma unroll
  for (int k = 0; k < U; ++k) v += (x[k].x + x[k].y) + (x[k].z + x[k].w);
  v = block_sum<B>(v);
  if (threadIdx.x == 0) *a.out = v;
}

// Clusters of C blocks: each block's result goes into the rank-0 block's shared memory (DSMEM),
// one cluster barrier, rank 0 sums C values; one cluster → done, else the clusters' leaders
// finish with a ticket (MODE 2 style).
template <int B, int U, int H, int C>
__global__ void __launch_bounds__(B) k_cluster(Args a) {
  __shared__ int slot[C];
  cg::cluster_group cl = cg::this_cluster();
  cl.barrier_arrive();  // rank 0 must have started before anyone writes its shared memory
  const int r = block_sum<B>(fold<B, U, H>(a.in, a.nvec, a.chunked));
  const unsigned rank = cl.block_rank();
  cl.barrier_wait();
  if (threadIdx.x == 0) *cl.map_shared_rank(&slot[rank], 0) = r;
  cl.sync();
  if (rank != 0) return;
  int v = 0;
  if (threadIdx.x < 32) {
    v = threadIdx.x < C ? slot[threadIdx.x] : 0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  const unsigned nclusters = gridDim.x / C, cid = blockIdx.x / C;
  if (nclusters == 1) {
    if (threadIdx.x == 0) *a.out = v;
    return;
  }
  __shared__ bool last;
  if (threadIdx.x == 0) {
    a.partials[cid] = v;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(*a.counter);
    last = c.fetch_add(1u, cuda::memory_order_acq_rel) == nclusters - 1;
  }
  __syncthreads();
  if (!last) return;
  v = sum_partials<B>(a.partials, nclusters);
  if (threadIdx.x == 0) {
    *a.out = v;
    *a.counter = 0;
  }
}

struct Config {
  std::string name;
  int block, unroll, cluster;  // cluster 0 = plain launch
  const void* fn;
  bool checks;                   // MODE 0 computes no sum
  bool single = false;           // one block only: for n <= block * unroll * 4
  const void* finish = nullptr;  // two kernels: the second (one block of 256), after fn
  bool pdl = false;              // ... launched with programmatic stream serialization
};

std::vector<Config> g_configs;

/// A launch configuration of `grid` blocks in clusters of c.cluster; `at` must outlive it.
cudaLaunchConfig_t cluster_launch(const Config& c, unsigned grid, cudaStream_t s,
                                  cudaLaunchAttribute& at) {
  at.id = cudaLaunchAttributeClusterDimension;
  at.val.clusterDim.x = c.cluster;
  at.val.clusterDim.y = at.val.clusterDim.z = 1;
  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(grid);
  lc.blockDim = dim3(c.block);
  lc.stream = s;
  lc.attrs = &at;
  lc.numAttrs = 1;
  return lc;
}

template <int B, int U, int H, int MODE>
void add_lastblock() {
  const char* modes[] = {"partials_only", "fence_atomic", "acqrel_atomic", "packed_atomic",
                         "flagged_slots", "flagged_spec", "collector"};
  g_configs.push_back({std::string(modes[MODE]) + ".h" + std::to_string(H) + ".b" +
                           std::to_string(B) + ".u" + std::to_string(U),
                       B, U, 0, reinterpret_cast<const void*>(&k_lastblock<B, U, H, MODE>),
                       MODE != 0});
}
template <int B, int U, int H, int C>
void add_cluster() {
  g_configs.push_back({"cluster" + std::to_string(C) + ".h" + std::to_string(H) + ".b" +
                           std::to_string(B) + ".u" + std::to_string(U),
                       B, U, C, reinterpret_cast<const void*>(&k_cluster<B, U, H, C>), true});
}
template <int B, int U, int H>
void add_single() {
  g_configs.push_back(
      {"single.h" + std::to_string(H) + ".b" + std::to_string(B) + ".u" + std::to_string(U), B, U,
       0, reinterpret_cast<const void*>(&k_single<B, U, H>), true, true});
}
template <int B, int U, int H>
void add_two(bool pdl) {
  Config c{std::string(pdl ? "pdl" : "two_launch") + ".h" + std::to_string(H) + ".b" +
               std::to_string(B) + ".u" + std::to_string(U),
           B,
           U,
           0,
           reinterpret_cast<const void*>(&k_pdl_first<B, U, H>),
           true};
  c.finish = reinterpret_cast<const void*>(&k_pdl_finish<256>);
  c.pdl = pdl;
  g_configs.push_back(c);
}
template <int B, int U, int H>
void add_buh() {
  add_single<B, U, H>();
  add_two<B, U, H>(false);
  add_two<B, U, H>(true);
  add_lastblock<B, U, H, 0>();
  add_lastblock<B, U, H, 1>();
  add_lastblock<B, U, H, 2>();
  add_lastblock<B, U, H, 3>();
  add_lastblock<B, U, H, 4>();
  add_lastblock<B, U, H, 5>();
  add_lastblock<B, U, H, 6>();
#ifdef CLUSTERS
  if constexpr (U <= 8) {
    add_cluster<B, U, H, 8>();
    add_cluster<B, U, H, 16>();
  }
#endif
}

template <int B, int U>
void add_bu() {
  add_buh<B, U, 0>();
  add_buh<B, U, 1>();
#ifdef ALL_HINTS
  add_buh<B, U, 3>();
  add_buh<B, U, 4>();
#endif
}
template <int B>
void add_b() {
  add_bu<B, 1>();
  add_bu<B, 2>();
  add_bu<B, 4>();
  add_bu<B, 8>();
  add_bu<B, 16>();
}

#ifndef FINISH_MICRO_NO_MAIN  // kernel_overhead.cu includes this file for its kernels
int main(int argc, char** argv) {
  add_b<128>();
  add_b<256>();
  add_b<512>();
  add_b<1024>();
  std::vector<int> logs;
  for (int i = 1; i < argc; ++i) logs.push_back(std::atoi(argv[i]));
  if (logs.empty()) logs = {10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};

  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d bytes\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize);
  // FLUSH_MULT (env): the flush covers this many times the L2 (default 2).
  const int flush_mult = std::getenv("FLUSH_MULT") ? std::atoi(std::getenv("FLUSH_MULT")) : 2;
  const std::size_t flush_bytes = std::size_t(flush_mult) * std::size_t(prop.l2CacheSize);
  const long long max_n = 1LL << *std::max_element(logs.begin(), logs.end());
  int *in, *ws, *out;
  unsigned* counter;
  void* flush;
  CK(cudaMalloc(&in, max_n * 4));
  CK(cudaMalloc(&ws, 8 << 20));
  CK(cudaMemset(ws, 0, 8 << 20));
  CK(cudaMalloc(&counter, 256));
  CK(cudaMalloc(&out, 256));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemset(counter, 0, 256));
  std::vector<int> host(max_n);
  std::mt19937 rng(12345);
  for (auto& x : host) x = int(rng() % 2001) - 1000;
  CK(cudaMemcpy(in, host.data(), max_n * 4, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (auto& c : g_configs) {
    CK(cudaFuncSetAttribute(c.fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }

  // FLUSH (env): comma-separated flush methods run before every start event, each over
  // FLUSH_MULT x L2. memset: a cudaMemsetAsync (leaves L2 full of dirty lines; the tuner's method
  // when these figures were taken); read: measure::enqueue_read, the streaming read that is the
  // cold flush of the tuner and of `tunedreduce bench` now (leaves L2 clean; they read
  // measure::cold_flush_bytes, 4 x L2 and at least 256 MiB); memset_read: both; *_spin: then a
  // 5 us memory-free spin.
  std::vector<std::string> flushes;
  {
    std::string f = std::getenv("FLUSH") ? std::getenv("FLUSH") : "memset";
    for (std::size_t p = 0; p <= f.size();) {
      std::size_t q = f.find(',', p);
      if (q == std::string::npos) q = f.size();
      flushes.push_back(f.substr(p, q - p));
      p = q + 1;
    }
  }
  std::string flush_mode = flushes[0];
  auto do_flush = [&](int r) {
    const bool spin = flush_mode.size() > 5 && flush_mode.substr(flush_mode.size() - 5) == "_spin";
    const std::string base = spin ? flush_mode.substr(0, flush_mode.size() - 5) : flush_mode;
    if (base == "memset" || base == "memset_read")
      CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, s));
    if (base == "read" || base == "memset_read") {
      CK(tunedreduce::measure::enqueue_read(flush, flush_bytes, prop.multiProcessorCount,
                                            reinterpret_cast<unsigned*>(out + 32), s));
    }
    if (base != "memset" && base != "read" && base != "memset_read") {
      std::fprintf(stderr, "unknown FLUSH method '%s'\n", flush_mode.c_str());
      std::exit(2);
    }
    if (spin) spin_kernel<<<1, 32, 0, s>>>(5000);
  };
  CK(cudaMemset(flush, 1, flush_bytes));
  // BATCH=1 (env): enqueue all 31 timed runs, then synchronize once (as the bench and the tuner
  // do); else wait for each run before enqueueing the next.
  const bool batched = std::getenv("BATCH") != nullptr;
  std::vector<cudaEvent_t> ev(62);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  auto time_one = [&](const std::function<void()>& launch) {
    std::vector<float> t;
    for (int r = 0; r < 31; ++r) {
      do_flush(r);
      CK(cudaEventRecord(ev[2 * r], s));
      launch();
      CK(cudaEventRecord(ev[2 * r + 1], s));
      if (!batched) CK(cudaEventSynchronize(ev[2 * r + 1]));
    }
    CK(cudaStreamSynchronize(s));
    for (int r = 0; r < 31; ++r) {
      float ms;
      CK(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
      t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  // ONLY (env): comma-separated name prefixes of the configurations to time; CUB=1: time
  // cub::DeviceReduce::Sum too (row "cub").
  const char* only = std::getenv("ONLY");
  auto selected = [&](const std::string& name) {
    if (!only) return true;
    std::string o = only;
    for (std::size_t p = 0; p <= o.size();) {
      std::size_t q = o.find(',', p);
      if (q == std::string::npos) q = o.size();
      if (name.rfind(o.substr(p, q - p), 0) == 0) return true;
      p = q + 1;
    }
    return false;
  };
  const bool with_cub = std::getenv("CUB") != nullptr;
  std::size_t cub_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, out, max_n, s));
  void* cub_temp = nullptr;
  CK(cudaMalloc(&cub_temp, cub_bytes + 256));

  for (const std::string& fm : flushes) {
    flush_mode = fm;
    std::printf("flush: %s\n", fm.c_str());
    std::printf("empty kernel <<<1,32>>>: %.2f us\n",
                time_one([&] { empty_kernel<<<1, 32, 0, s>>>(); }));
    std::printf("empty kernel <<<264,1024>>>: %.2f us\n",
                time_one([&] { empty_kernel<<<264, 1024, 0, s>>>(); }));
    std::printf("empty kernel <<<2048,256>>>: %.2f us\n",
                time_one([&] { empty_kernel<<<2048, 256, 0, s>>>(); }));
    std::printf("two empty kernels <<<1,32>>>: %.2f us\n", time_one([&] {
                  empty_kernel<<<1, 32, 0, s>>>();
                  empty_kernel<<<1, 32, 0, s>>>();
                }));

    std::printf("%-6s %-12s %-34s %8s %6s %8s %9s\n", "log2n", "flush", "config", "grid", "cap",
                "us", "GB/s");
    for (int lg : logs) {
      const long long n = 1LL << lg, nvec = n / 4;
      std::uint32_t expect = 0;
      for (long long i = 0; i < n; ++i) expect += std::uint32_t(host[i]);
      struct Row {
        std::string name;
        long long grid;
        int persistent;
        float us;
      };
      std::vector<Row> rows;
      if (with_cub) {
        auto launch = [&] {
          std::size_t b = cub_bytes;
          CK(cub::DeviceReduce::Sum(cub_temp, b, in, out, n, s));
        };
        CK(cudaMemsetAsync(out, 0x5a, 4, s));
        launch();
        std::uint32_t got = 0;
        CK(cudaMemcpyAsync(&got, out, 4, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        if (got != expect) {
          std::printf("WRONG cub n=2^%d: got %u want %u\n", lg, got, expect);
          return 1;
        }
        rows.push_back({"cub", 0, false, time_one(launch)});
      }
      for (auto& c : g_configs) {
        if (!selected(c.name)) continue;
        if (c.single && nvec > (long long)c.block * c.unroll) continue;
        const long long tile = (long long)c.block * c.unroll;
        long long tiles = (nvec + tile - 1) / tile;
        int occ = 0;
        if (c.cluster == 0) {
          CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c.fn, c.block, 0));
          occ *= prop.multiProcessorCount;
        } else {
          cudaLaunchAttribute at{};
          cudaLaunchConfig_t lc = cluster_launch(c, c.cluster, nullptr, at);
          int clusters = 0;
          CK(cudaOccupancyMaxActiveClusters(&clusters, c.fn, &lc));
          occ = clusters * c.cluster;
          if (occ == 0) continue;
        }
        // 0: one block per tile; 1: a resident grid, grid-stride; 2: a resident grid, each block
        // one contiguous run of tiles
        for (int persistent = 0; persistent < 3; ++persistent) {
          long long grid = persistent ? std::min<long long>(tiles, occ) : tiles;
          if (persistent && grid == tiles) continue;  // same as the full grid
          if (persistent == 2 && c.cluster) continue;
          if (grid > (1LL << 20)) continue;  // partials buffer bound
          if (c.name.rfind("packed", 0) == 0 && grid >= (1LL << 16)) continue;  // 16 ticket bits
          if (c.name.rfind("flagged_spec", 0) == 0 && grid > 4LL * c.block) continue;
          if (c.cluster) grid = (grid + c.cluster - 1) / c.cluster * c.cluster;
          Args a{reinterpret_cast<const int4*>(in), nvec, ws, counter, out, persistent == 2};
          void* params[] = {&a};
          auto launch = [&] {
            if (c.finish) {
              CK(cudaLaunchKernel(c.fn, dim3(unsigned(grid)), dim3(c.block), params, 0, s));
              if (grid == 1) return;
              const int* partials = ws;
              unsigned count = unsigned(grid);
              int* o = out;
              void* fparams[] = {&partials, &count, &o};
              cudaLaunchAttribute at{};
              at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
              at.val.programmaticStreamSerializationAllowed = 1;
              cudaLaunchConfig_t lc{};
              lc.gridDim = dim3(1);
              lc.blockDim = dim3(256);
              lc.stream = s;
              lc.attrs = &at;
              lc.numAttrs = c.pdl ? 1 : 0;
              CK(cudaLaunchKernelExC(&lc, c.finish, fparams));
            } else if (c.cluster == 0) {
              CK(cudaLaunchKernel(c.fn, dim3(unsigned(grid)), dim3(c.block), params, 0, s));
            } else {
              cudaLaunchAttribute at{};
              cudaLaunchConfig_t lc = cluster_launch(c, unsigned(grid), s, at);
              CK(cudaLaunchKernelExC(&lc, c.fn, params));
            }
          };
          if (std::getenv("TRACE")) std::fprintf(stderr, "%s grid %lld\n", c.name.c_str(), grid);
          CK(cudaMemsetAsync(out, 0x5a, 4, s));
          launch();
          std::uint32_t got = 0;
          CK(cudaMemcpyAsync(&got, out, 4, cudaMemcpyDeviceToHost, s));
          CK(cudaStreamSynchronize(s));
          if (c.checks && got != expect) {
            std::printf("WRONG %s n=2^%d grid=%lld: got %u want %u\n", c.name.c_str(), lg, grid,
                        got, expect);
            return 1;
          }
          rows.push_back({c.name, grid, persistent, time_one(launch)});
        }
      }
      std::sort(rows.begin(), rows.end(), [](auto& x, auto& y) { return x.us < y.us; });
      // The best row of every design (name up to ".b"; ALL=1: every row).
      std::vector<std::string> seen;
      const bool all_rows = std::getenv("ALL") != nullptr;
      for (auto& r : rows) {
        std::string design = r.name.substr(0, r.name.find(".b"));
        if (!all_rows && std::find(seen.begin(), seen.end(), design) != seen.end()) continue;
        seen.push_back(design);
        std::printf("2^%-4d %-12s %-34s %8lld %6s %8.2f %9.1f\n", lg, fm.c_str(), r.name.c_str(),
                    r.grid,
                    r.persistent == 2 ? "chunk"
                    : r.persistent    ? "occ"
                                      : "full",
                    r.us, n * 4 / (r.us * 1e3));
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
#endif  // FINISH_MICRO_NO_MAIN
