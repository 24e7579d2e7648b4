// Experiment (docs/performance-log.md, 2026-11-25, "a `single_tile` family; load hints at the
// largest sizes"): the two places where the tuned library and CUB are closest.
//
//  1. `stream`: large sums (2^24..2^30). The product's `streaming` family with one tile per block
//     and two kernels, against variants that are not in the registry: a persistent grid (resident
//     blocks x SMs, each block looping over tiles), a one-launch finish (last block by ticket),
//     and load hints (ld.global.nc.L1::no_allocate, + .L2::256B prefetch, + an L2 evict_first
//     cache policy, __ldg). Every variant and CUB's DeviceReduce::Sum are timed round-robin (run r
//     of every variant, then run r + 1), so drift hits all alike.
//  2. `tile`: CUB's single-tile size (2^12 floats), one block reading 16 KB, in a shuffled order
//     per round: CUB, lean kernels (no loop, no finish), the product's one-block launches of the
//     same shapes, an empty kernel, an instrumented kernel (%smid, %globaltimer), and variants
//     whose flush is followed by a touch of the input's page or a launch on other data (code warm).
//  3. `tilegen`: CUB's single-tile size of f32 and f64, aligned and one element off 16 bytes (and
//     one element shorter): CUB, lean kernels of any n and alignment (what became the
//     `single_tile` family), the product's tiled / vectorized / warp_shuffle one-block launches.
//
// Built with -DTUNEDREDUCE_EXPERIMENTS=ON (bench/experiments/README.md):
//   cmake --build build --target experiment_hopper_probe && cd build/bin/experiments
//   ./hopper_probe stream > stream.csv ; ./hopper_probe tile > tile.csv ; ./hopper_probe tilegen
// Timing: before each start event the cold flush of the tuner and of `tunedreduce bench`
// (measure::enqueue_read over measure::cold_flush_bytes: 256 MiB on an H100 or H200, __ldg, clean
// L2; FLUSH=ldcs: the same read with evict-first loads), the GPU busy at the start event (launch
// latency not inside), each run waited for, CUDA events. Every result is checked.

#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/experiments/experiment.hpp"
#include "kernels/dispatch.cuh"
#include "measure/gpu.hpp"

namespace tk = tunedreduce::kernels;

namespace {

// ---------------------------------------------------------------------------------------------
// The evict-first variant of the read flush (FLUSH=ldcs): every thread reads 16-byte vectors of
// the buffer with __ldcs; a sum no run can hit keeps the loads.
__global__ void k_read_flush_ldcs(const uint4* p, std::size_t nvec, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < nvec;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

__global__ void k_touch(const unsigned* p, unsigned* sink) {
  const unsigned v = *reinterpret_cast<const volatile unsigned*>(p);
  if (v == 0x9e3779b9u) *sink = v;
}

struct ReadFlush {
  uint4* buf = nullptr;
  unsigned* sink = nullptr;
  std::size_t bytes = 0;
  int sm_count = 0;
  bool streaming = false;  // FLUSH=ldcs: evict-first loads (the log's first run); else __ldg
  explicit ReadFlush(const cudaDeviceProp& prop)
      : bytes(tunedreduce::measure::cold_flush_bytes(prop.l2CacheSize)),
        sm_count(prop.multiProcessorCount) {
    const char* f = std::getenv("FLUSH");
    streaming = f && std::string(f) == "ldcs";
    if (f && *f && !streaming) {
      std::fprintf(stderr, "FLUSH='%s' is not a flush of hopper_probe (ldcs, or unset)\n", f);
      std::exit(2);
    }
    CK(cudaMalloc(&buf, bytes));
    CK(cudaMemset(buf, 1, bytes));
    CK(cudaMalloc(&sink, 4));
  }
  void operator()(cudaStream_t s) const {
    if (streaming) {
      k_read_flush_ldcs<<<sm_count * 8, 256, 0, s>>>(buf, bytes / 16, sink);
      CK(cudaGetLastError());
    } else {
      CK(tunedreduce::measure::enqueue_read(buf, bytes, sm_count, sink, s));
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Part 1: streaming variants.
enum Hint { kNoL1 = 0, kNoL1Pf256 = 1, kNoL1EvictFirst = 2, kLdg = 3 };
const char* hint_name(int h) {
  switch (h) {
    case kNoL1:
      return "noL1";
    case kNoL1Pf256:
      return "noL1+L2::256B";
    case kNoL1EvictFirst:
      return "noL1+evict_first";
    default:
      return "ldg";
  }
}

template <int H>
__device__ __forceinline__ uint4 ld16(const uint4* p, std::uint64_t policy) {
  uint4 r;
  if constexpr (H == kNoL1) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else if constexpr (H == kNoL1Pf256) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else if constexpr (H == kNoL1EvictFirst) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p), "l"(policy));
  } else {
    r = __ldg(p);
  }
  return r;
}

template <class T, int Block>
__device__ __forceinline__ T block_sum(T v) {
  __shared__ T warp_part[Block / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < Block / 32 ? warp_part[threadIdx.x] : T(0);
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

// n is a multiple of the vector width here (the experiment's sizes are powers of two) and the
// input 16-byte aligned: the product's head/tail handling is left out of both sides alike.
template <class T, int Block, int U, int H, bool OnePass>
__global__ void __launch_bounds__(Block) k_stream(const uint4* __restrict__ vin, std::uint64_t nvec,
                                                  T* partials, unsigned* ticket, T* out) {
  constexpr int V = 16 / sizeof(T);
  constexpr std::uint64_t tile = std::uint64_t(Block) * U;
  std::uint64_t policy = 0;
  if constexpr (H == kNoL1EvictFirst)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  union Raw {
    uint4 u;
    T e[V];
  };
  T v = T(0);
  const std::uint64_t tiles = (nvec + tile - 1) / tile;
  for (std::uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::uint64_t base = t * tile + threadIdx.x;
    Raw x[U];
    if (base + (U - 1) * Block < nvec) {
#pragma unroll
      for (int k = 0; k < U; ++k) x[k].u = ld16<H>(vin + base + k * Block, policy);
    } else {
#pragma unroll
      for (int k = 0; k < U; ++k) {
        if (base + k * Block < nvec) x[k].u = ld16<H>(vin + base + k * Block, policy);
        else x[k].u = make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int k = 0; k < U; ++k)
#pragma unroll
      for (int e = 0; e < V; ++e) v += x[k].e[e];
  }
  v = block_sum<T, Block>(v);
  if constexpr (!OnePass) {
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
  } else {
    __shared__ bool last;
    if (threadIdx.x == 0) {
      partials[blockIdx.x] = v;
      __threadfence();
      last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    T s = T(0);
    for (unsigned i = threadIdx.x; i < gridDim.x; i += Block)
      s += reinterpret_cast<volatile T*>(partials)[i];
    s = block_sum<T, Block>(s);
    if (threadIdx.x == 0) {
      *out = s;
      *ticket = 0;  // ready for the next launch
    }
  }
}

template <class T>
__global__ void __launch_bounds__(1024) k_finish(const T* partials, unsigned n, T* out) {
  T s = T(0);
  for (unsigned i = threadIdx.x; i < n; i += 1024) s += partials[i];
  s = block_sum<T, 1024>(s);
  if (threadIdx.x == 0) *out = s;
}

struct Variant {
  std::string name;
  std::function<void(cudaStream_t)> launch;
};

template <class T>
struct StreamCase {
  const T* in;
  std::uint64_t n;
  T* partials;
  unsigned* ticket;
  T* out;
  int sms;
};

template <class T, int Block, int U, int H, bool Persistent, bool OnePass>
Variant make_variant(const StreamCase<T>& c) {
  constexpr int V = 16 / sizeof(T);
  const std::uint64_t nvec = c.n / V;
  const std::uint64_t tiles = (nvec + std::uint64_t(Block) * U - 1) / (std::uint64_t(Block) * U);
  int resident = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, k_stream<T, Block, U, H, OnePass>,
                                                   Block, 0));
  const std::uint64_t cap = Persistent ? std::uint64_t(resident) * c.sms : 65535;
  const unsigned grid = unsigned(std::max<std::uint64_t>(1, std::min(tiles, cap)));
  char name[160];
  std::snprintf(name, sizeof name, "b%d.u%d.%s.%s.%s", Block, U, hint_name(H),
                Persistent ? "persistent" : "tile_per_block",
                OnePass ? "one_launch" : "two_kernels");
  StreamCase<T> cc = c;
  return {name, [cc, grid, nvec](cudaStream_t s) {
            k_stream<T, Block, U, H, OnePass>
                <<<grid, Block, 0, s>>>(reinterpret_cast<const uint4*>(cc.in), nvec, cc.partials,
                                        cc.ticket, cc.out);
            if constexpr (!OnePass) k_finish<T><<<1, 1024, 0, s>>>(cc.partials, grid, cc.out);
          }};
}

template <class T, int Block, int U, int H>
void add_hint(std::vector<Variant>& vs, const StreamCase<T>& c) {
  vs.push_back(make_variant<T, Block, U, H, false, false>(c));
  vs.push_back(make_variant<T, Block, U, H, true, false>(c));
  vs.push_back(make_variant<T, Block, U, H, true, true>(c));
  vs.push_back(make_variant<T, Block, U, H, false, true>(c));
}

template <class T, int Block, int U>
void add_shape(std::vector<Variant>& vs, const StreamCase<T>& c) {
  add_hint<T, Block, U, kNoL1>(vs, c);
  add_hint<T, Block, U, kNoL1Pf256>(vs, c);
  add_hint<T, Block, U, kNoL1EvictFirst>(vs, c);
  add_hint<T, Block, U, kLdg>(vs, c);
}

template <class T, tk::Family F, int B, int U, tk::Finish Fin>
Variant product_variant(const StreamCase<T>& c, void* ws, std::size_t ws_bytes, int sms) {
  static constexpr tk::KernelParams P{F,
                                      B,
                                      U,
                                      tk::SmemMode::none,
                                      Fin,
                                      sizeof(T) == 4 ? tunedreduce::DType::f32
                                                     : tunedreduce::DType::f64,
                                      tunedreduce::Op::sum};
  char name[160];
  std::snprintf(name, sizeof name, "product.%s.b%d.u%d.%s",
                F == tk::Family::streaming ? "streaming" : "vectorized", B, U,
                Fin == tk::Finish::two_pass ? "two_pass" : "single_pass");
  StreamCase<T> cc = c;
  return {name, [cc, ws, ws_bytes, sms](cudaStream_t s) {
            tk::DeviceLimits lim;
            lim.sm_count = sms;
            tk::LaunchArgs a;
            a.in = cc.in;
            a.out = cc.out;
            a.n = cc.n;
            a.workspace = ws;
            a.workspace_bytes = ws_bytes;
            a.stream = s;
            a.workspace_clean = true;  // zeroed once; every single_pass launch leaves it zero
            CK(tk::Dispatch<P>::launch(a, lim));
          }};
}

template <class T>
void run_stream(const char* tname, const std::vector<int>& log2s, int reps, const ReadFlush& flush,
                cudaStream_t s, int sms) {
  const std::uint64_t nmax = std::uint64_t(1) << *std::max_element(log2s.begin(), log2s.end());
  T* in;
  CK(cudaMalloc(&in, nmax * sizeof(T)));
  {
    std::vector<T> h(nmax);
    // Integers in [-8, 8]: every partial sum is an integer far below 2^24, so every order of
    // addition gives the same, exact result, in float as in double.
    std::uint64_t z = 42;
    for (auto& x : h) {
      z += 0x9e3779b97f4a7c15ull;
      std::uint64_t y = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      y = (y ^ (y >> 27)) * 0x94d049bb133111ebull;
      x = T(int((y ^ (y >> 31)) % 17) - 8);
    }
    CK(cudaMemcpy(in, h.data(), nmax * sizeof(T), cudaMemcpyHostToDevice));
  }
  T *partials, *out;
  unsigned* ticket;
  CK(cudaMalloc(&partials, 65536 * sizeof(T)));
  CK(cudaMalloc(&out, sizeof(T)));
  CK(cudaMalloc(&ticket, sizeof(unsigned)));
  CK(cudaMemset(ticket, 0, sizeof(unsigned)));
  void* ws;
  const std::size_t ws_bytes = 64 << 20;
  CK(cudaMalloc(&ws, ws_bytes));
  CK(cudaMemset(ws, 0, ws_bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int lg : log2s) {
    const std::uint64_t n = std::uint64_t(1) << lg;
    StreamCase<T> c{in, n, partials, ticket, out, sms};
    std::vector<Variant> vs;
    void* temp = nullptr;
    std::size_t temp_bytes = 0;
    CK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, s));
    CK(cudaMalloc(&temp, temp_bytes));
    vs.push_back({"cub", [=](cudaStream_t st) {
                    std::size_t tb = temp_bytes;
                    CK(cub::DeviceReduce::Sum(temp, tb, in, out, n, st));
                  }});
    constexpr auto two = tk::Finish::two_pass;
    constexpr auto one = tk::Finish::single_pass;
    vs.push_back(product_variant<T, tk::Family::streaming, 1024, 8, two>(c, ws, ws_bytes, sms));
    vs.push_back(product_variant<T, tk::Family::streaming, 512, 8, two>(c, ws, ws_bytes, sms));
    vs.push_back(product_variant<T, tk::Family::streaming, 256, 4, two>(c, ws, ws_bytes, sms));
    vs.push_back(product_variant<T, tk::Family::vectorized, 512, 8, one>(c, ws, ws_bytes, sms));
    vs.push_back(product_variant<T, tk::Family::vectorized, 1024, 4, one>(c, ws, ws_bytes, sms));
    add_shape<T, 256, 4>(vs, c);
    add_shape<T, 256, 8>(vs, c);
    add_shape<T, 512, 4>(vs, c);
    add_shape<T, 512, 8>(vs, c);
    add_shape<T, 1024, 4>(vs, c);
    add_shape<T, 1024, 8>(vs, c);
    // Reference: CUB's result; every variant must give the same (exact) value.
    vs[0].launch(s);
    T ref;
    CK(cudaMemcpyAsync(&ref, out, sizeof(T), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    std::vector<std::vector<float>> t(vs.size());
    for (int r = -2; r < reps; ++r) {
      for (std::size_t v = 0; v < vs.size(); ++v) {
        flush(s);
        CK(cudaEventRecord(e0, s));
        vs[v].launch(s);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        T got;
        CK(cudaMemcpy(&got, out, sizeof(T), cudaMemcpyDeviceToHost));
        if (got != ref) {
          std::fprintf(stderr, "WRONG %s n=2^%d %s: %.17g vs cub %.17g\n", tname, lg,
                       vs[v].name.c_str(), double(got), double(ref));
          std::exit(2);
        }
        if (r >= 0) t[v].push_back(ms * 1000.f);
      }
    }
    for (std::size_t v = 0; v < vs.size(); ++v) {
      auto& x = t[v];
      std::sort(x.begin(), x.end());
      std::printf("stream,%s,%d,%s,%.3f,%.3f,%.3f\n", tname, lg, vs[v].name.c_str(),
                  x[x.size() / 2], x[x.size() / 10], x[x.size() * 9 / 10]);
    }
    std::fflush(stdout);
    CK(cudaFree(temp));
  }
  CK(cudaFree(in));
  CK(cudaFree(partials));
  CK(cudaFree(out));
  CK(cudaFree(ticket));
  CK(cudaFree(ws));
}

// ---------------------------------------------------------------------------------------------
// Part 2: one block, one tile, instrumented.
struct TileRecord {
  unsigned smid;
  unsigned long long t_start, t_loaded, t_end;
};

template <int Block, int U>
__global__ void __launch_bounds__(Block)
    k_tile(const float* __restrict__ in, float* out, TileRecord* rec) {
  unsigned long long t0;
  if (threadIdx.x == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  float x[U];
#pragma unroll
  for (int k = 0; k < U; ++k) x[k] = __ldg(in + threadIdx.x + k * Block);
  float v = 0.f;
#pragma unroll
  for (int k = 0; k < U; ++k) v += x[k];
  unsigned long long t1;
  if (threadIdx.x == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  v = block_sum<float, Block>(v);
  if (threadIdx.x == 0) {
    *out = v;
    unsigned long long t2;
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t2));
    rec->smid = smid;
    rec->t_start = t0;
    rec->t_loaded = t1;
    rec->t_end = t2;
  }
}

template <int Block, int U>
__global__ void __launch_bounds__(Block) k_tile_plain(const float* __restrict__ in, float* out) {
  float x[U];
#pragma unroll
  for (int k = 0; k < U; ++k) x[k] = __ldg(in + threadIdx.x + k * Block);
  float v = 0.f;
#pragma unroll
  for (int k = 0; k < U; ++k) v += x[k];
  v = block_sum<float, Block>(v);
  if (threadIdx.x == 0) *out = v;
}

template <int Block, int U>
__global__ void __launch_bounds__(Block) k_tile_vec(const float* __restrict__ in, float* out) {
  const uint4* vin = reinterpret_cast<const uint4*>(in);
  uint4 x[U];
#pragma unroll
  for (int k = 0; k < U; ++k) x[k] = __ldg(vin + threadIdx.x + k * Block);
  float v = 0.f;
#pragma unroll
  for (int k = 0; k < U; ++k)
    v += __uint_as_float(x[k].x) + __uint_as_float(x[k].y) + __uint_as_float(x[k].z) +
         __uint_as_float(x[k].w);
  v = block_sum<float, Block>(v);
  if (threadIdx.x == 0) *out = v;
}

// One tile, any n up to Block * U * V and any alignment: the 16-byte vectors predicated, the
// head (before the first 16-byte boundary) and the tail (after the last whole vector) one element
// per thread. No loop, no finish: what a single-tile entry of the registry would be.
template <class T, int Block, int U>
__global__ void __launch_bounds__(Block) k_lean(const T* __restrict__ in, unsigned n, T* out) {
  constexpr int V = 16 / sizeof(T);
  const unsigned addr = unsigned(reinterpret_cast<std::uintptr_t>(in) % 16);
  unsigned head = addr ? (16 - addr) / sizeof(T) : 0;
  if (head > n) head = n;
  const unsigned nvec = (n - head) / V;
  const uint4* vin = reinterpret_cast<const uint4*>(in + head);
  union Raw {
    uint4 u;
    T e[V];
  };
  Raw x[U];
#pragma unroll
  for (int k = 0; k < U; ++k) {
    const unsigned i = threadIdx.x + k * Block;
    if (i < nvec) x[k].u = __ldg(vin + i);
    else x[k].u = make_uint4(0, 0, 0, 0);
  }
  const unsigned tail = head + nvec * V;
  T v = threadIdx.x < head ? in[threadIdx.x] : T(0);
  if (tail + threadIdx.x < n) v += in[tail + threadIdx.x];
#pragma unroll
  for (int k = 0; k < U; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e) v += x[k].e[e];
  v = block_sum<T, Block>(v);
  if (threadIdx.x == 0) *out = v;
}

__global__ void k_empty(float* out, float v) {
  if (threadIdx.x == 0) *out = v;
}

template <tk::Family F, int B, int U>
cudaError_t product_tile(const float* in, float* out, void* ws, cudaStream_t s, int sms) {
  static constexpr tk::KernelParams P{F,
                                      B,
                                      U,
                                      tk::SmemMode::none,
                                      tk::Finish::single_pass,
                                      tunedreduce::DType::f32,
                                      tunedreduce::Op::sum};
  tk::DeviceLimits lim;
  lim.sm_count = sms;
  tk::LaunchArgs a;
  a.in = in;
  a.out = out;
  a.n = 4096;
  a.workspace = ws;
  a.workspace_bytes = 1 << 20;
  a.stream = s;
  a.workspace_clean = true;
  return tk::Dispatch<P>::launch(a, lim);
}

// Variants, timed in a shuffled order each round; every timed run records the number of kernels
// enqueued on the stream before it, and variant 0 its multiprocessor and in-kernel times.
void run_tile(int reps, const ReadFlush& flush, cudaStream_t s, int sms) {
  constexpr int n = 4096;
  unsigned char* base;
  CK(cudaMalloc(&base, 8 << 20));
  float* in = reinterpret_cast<float*>(base + (1 << 20));
  float* other = reinterpret_cast<float*>(base + (5 << 20));  // another page: code warm-up input
  {
    std::vector<float> h(n);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> d(-1000, 1000);
    for (auto& x : h) x = float(d(rng)) / 64.f;
    CK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(other, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  float *out, *out2;
  TileRecord* rec;
  void* ws;
  CK(cudaMalloc(&out, sizeof(float)));
  CK(cudaMalloc(&out2, sizeof(float)));
  CK(cudaMalloc(&rec, sizeof(TileRecord)));
  CK(cudaMalloc(&ws, 1 << 20));
  CK(cudaMemset(ws, 0, 1 << 20));
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  CK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, s));
  CK(cudaMalloc(&temp, temp_bytes));
  auto cub_sum = [&](const float* p, float* o) {
    std::size_t tb = temp_bytes;
    CK(cub::DeviceReduce::Sum(temp, tb, p, o, n, s));
  };
  struct V {
    const char* name;
    int kernels;  // kernels it enqueues before the start event, and timed
    std::function<void()> pre, timed;
  };
  std::vector<V> vs = {
      {"ours_instrumented", 1, nullptr, [&] { k_tile<256, 16><<<1, 256, 0, s>>>(in, out, rec); }},
      {"cub", 1, nullptr, [&] { cub_sum(in, out); }},
      {"ours_plain.b256.u16", 1, nullptr,
       [&] { k_tile_plain<256, 16><<<1, 256, 0, s>>>(in, out); }},
      {"ours_vec.b256.u4", 1, nullptr, [&] { k_tile_vec<256, 4><<<1, 256, 0, s>>>(in, out); }},
      {"ours_vec.b128.u8", 1, nullptr, [&] { k_tile_vec<128, 8><<<1, 128, 0, s>>>(in, out); }},
      {"empty", 1, nullptr, [&] { k_empty<<<1, 256, 0, s>>>(out, 1.f); }},
      {"product.warp_shuffle.b256.u16", 1, nullptr,
       [&] { CK((product_tile<tk::Family::warp_shuffle, 256, 16>(in, out, ws, s, sms))); }},
      {"product.tiled.b256.u4", 1, nullptr,
       [&] { CK((product_tile<tk::Family::tiled, 256, 4>(in, out, ws, s, sms))); }},
      {"ours_plain+code_warm", 1, [&] { k_tile_plain<256, 16><<<1, 256, 0, s>>>(other, out2); },
       [&] { k_tile_plain<256, 16><<<1, 256, 0, s>>>(in, out); }},
      {"cub+code_warm", 1, [&] { cub_sum(other, out2); }, [&] { cub_sum(in, out); }},
      {"lean.b256.u4", 1, nullptr, [&] { k_lean<float, 256, 4><<<1, 256, 0, s>>>(in, n, out); }},
      {"lean.b128.u8", 1, nullptr, [&] { k_lean<float, 128, 8><<<1, 128, 0, s>>>(in, n, out); }},
      {"lean.b512.u2", 1, nullptr, [&] { k_lean<float, 512, 2><<<1, 512, 0, s>>>(in, n, out); }},
      {"lean.b1024.u1", 1, nullptr, [&] { k_lean<float, 1024, 1><<<1, 1024, 0, s>>>(in, n, out); }},
      {"ours_plain+touch", 1,
       [&] {
         k_touch<<<1, 1, 0, s>>>(reinterpret_cast<const unsigned*>(base),
                                 reinterpret_cast<unsigned*>(out2));
       },
       [&] { k_tile_plain<256, 16><<<1, 256, 0, s>>>(in, out); }},
  };
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float ref = 0;
  cub_sum(in, out);
  CK(cudaMemcpy(&ref, out, sizeof ref, cudaMemcpyDeviceToHost));
  std::mt19937 shuf(11);
  std::vector<int> order(vs.size());
  long long launched = 0;
  for (int r = -2; r < reps; ++r) {
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::shuffle(order.begin(), order.end(), shuf);
    for (int v : order) {
      flush(s);
      ++launched;
      if (vs[v].pre) {
        vs[v].pre();
        ++launched;
      }
      const long long index = launched;
      CK(cudaEventRecord(e0, s));
      vs[v].timed();
      launched += vs[v].kernels;
      CK(cudaGetLastError());
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      float got;
      TileRecord tr{};
      CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
      if (v == 0) CK(cudaMemcpy(&tr, rec, sizeof tr, cudaMemcpyDeviceToHost));
      if (std::string(vs[v].name) != "empty" && got != ref) {
        std::fprintf(stderr, "WRONG tile %s: %.9g vs %.9g\n", vs[v].name, got, ref);
        std::exit(2);
      }
      if (r >= 0)
        std::printf("tile,%s,%d,%lld,%.3f,%u,%llu,%llu\n", vs[v].name, r, index, ms * 1000.f,
                    tr.smid, tr.t_loaded - tr.t_start, tr.t_end - tr.t_start);
    }
  }
  std::fflush(stdout);
}

template <class T, tk::Family F, int B, int U>
cudaError_t product_any(const T* in, std::uint64_t n, T* out, void* ws, cudaStream_t s, int sms) {
  static constexpr tk::KernelParams P{F,
                                      B,
                                      U,
                                      tk::SmemMode::none,
                                      tk::Finish::single_pass,
                                      sizeof(T) == 4 ? tunedreduce::DType::f32
                                                     : tunedreduce::DType::f64,
                                      tunedreduce::Op::sum};
  tk::DeviceLimits lim;
  lim.sm_count = sms;
  tk::LaunchArgs a;
  a.in = in;
  a.out = out;
  a.n = n;
  a.workspace = ws;
  a.workspace_bytes = 1 << 20;
  a.stream = s;
  a.workspace_clean = true;
  return tk::Dispatch<P>::launch(a, lim);
}

// CUB's single-tile size of T, aligned and with the input one element off 16 bytes and one
// element shorter: CUB, lean kernels and the product's entries of the same shapes, shuffled.
template <class T>
void run_tile_general(const char* tname, int reps, const ReadFlush& flush, cudaStream_t s,
                      int sms) {
  constexpr unsigned tile = 16384 / sizeof(T);  // 2^12 floats, 2^11 doubles
  constexpr int UW = 64 / sizeof(T);            // scalar loads per thread at 256 threads
  unsigned char* base;
  CK(cudaMalloc(&base, 4 << 20));
  T* buf = reinterpret_cast<T*>(base + (1 << 20));
  {
    std::vector<T> h(tile + 8);
    std::mt19937 rng(9);
    std::uniform_int_distribution<int> d(-1000, 1000);
    for (auto& x : h) x = T(d(rng)) / T(64);
    CK(cudaMemcpy(buf, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  T* out;
  void* ws;
  CK(cudaMalloc(&out, sizeof(T)));
  CK(cudaMalloc(&ws, 1 << 20));
  CK(cudaMemset(ws, 0, 1 << 20));
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  CK(cub::DeviceReduce::Sum(temp, temp_bytes, buf, out, tile, s));
  CK(cudaMalloc(&temp, temp_bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int mis = 0; mis < 2; ++mis) {
    const T* in = buf + mis;
    const unsigned n = tile - mis;
    struct V {
      std::string name;
      std::function<void()> run;
    };
    std::vector<V> vs = {
        {"cub",
         [&] {
           std::size_t tb = temp_bytes;
           CK(cub::DeviceReduce::Sum(temp, tb, in, out, n, s));
         }},
        {"lean.b256.u4", [&] { k_lean<T, 256, 4><<<1, 256, 0, s>>>(in, n, out); }},
        {"lean.b128.u8", [&] { k_lean<T, 128, 8><<<1, 128, 0, s>>>(in, n, out); }},
        {"lean.b512.u2", [&] { k_lean<T, 512, 2><<<1, 512, 0, s>>>(in, n, out); }},
        {"product.tiled.b256.u4",
         [&] { CK((product_any<T, tk::Family::tiled, 256, 4>(in, n, out, ws, s, sms))); }},
        {"product.vectorized.b256.u4",
         [&] { CK((product_any<T, tk::Family::vectorized, 256, 4>(in, n, out, ws, s, sms))); }},
        {"product.warp_shuffle.b256",
         [&] { CK((product_any<T, tk::Family::warp_shuffle, 256, UW>(in, n, out, ws, s, sms))); }},
        {"product.single_tile.b256.u4",
         [&] { CK((product_any<T, tk::Family::single_tile, 256, 4>(in, n, out, ws, s, sms))); }},
        {"product.single_tile.b512.u2",
         [&] { CK((product_any<T, tk::Family::single_tile, 512, 2>(in, n, out, ws, s, sms))); }},
        {"product.single_tile.b1024.u1",
         [&] { CK((product_any<T, tk::Family::single_tile, 1024, 1>(in, n, out, ws, s, sms))); }},
    };
    T ref;
    vs[0].run();
    CK(cudaMemcpy(&ref, out, sizeof ref, cudaMemcpyDeviceToHost));
    std::vector<std::vector<float>> t(vs.size());
    std::mt19937 shuf(13);
    std::vector<int> order(vs.size());
    for (int r = -2; r < reps; ++r) {
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
      std::shuffle(order.begin(), order.end(), shuf);
      for (int v : order) {
        flush(s);
        CK(cudaEventRecord(e0, s));
        vs[v].run();
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        T got;
        CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
        if (got != ref) {
          std::fprintf(stderr, "WRONG %s %s n=%u mis=%d: %.17g vs %.17g\n", tname,
                       vs[v].name.c_str(), n, mis, double(got), double(ref));
          std::exit(2);
        }
        if (r >= 0) t[v].push_back(ms * 1000.f);
      }
    }
    for (std::size_t v = 0; v < vs.size(); ++v) {
      auto& x = t[v];
      std::sort(x.begin(), x.end());
      std::printf("tilegen,%s,%u,%d,%s,%.3f,%.3f,%.3f\n", tname, n, mis, vs[v].name.c_str(),
                  x[x.size() / 2], x[x.size() / 10], x[x.size() * 9 / 10]);
    }
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "stream";
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  std::fprintf(stderr, "%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
               prop.l2CacheSize >> 20);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ReadFlush flush(prop);
  if (what == "stream") {
    const int reps = argc > 2 ? std::atoi(argv[2]) : 21;
    std::printf("part,type,log2n,variant,median_us,p10_us,p90_us\n");
    run_stream<float>("f32", {24, 26, 27, 28, 30}, reps, flush, s, prop.multiProcessorCount);
    run_stream<double>("f64", {25, 27, 29}, reps, flush, s, prop.multiProcessorCount);
  } else if (what == "tile") {
    const int reps = argc > 2 ? std::atoi(argv[2]) : 400;
    std::printf("part,variant,run,launch_index,event_us,smid,kernel_load_ns,kernel_ns\n");
    run_tile(reps, flush, s, prop.multiProcessorCount);
  } else if (what == "tilegen") {
    const int reps = argc > 2 ? std::atoi(argv[2]) : 300;
    std::printf("part,type,n,misaligned,variant,median_us,p10_us,p90_us\n");
    run_tile_general<float>("f32", reps, flush, s, prop.multiProcessorCount);
    run_tile_general<double>("f64", reps, flush, s, prop.multiProcessorCount);
  } else {
    std::fprintf(stderr, "usage: hopper_probe stream|tile|tilegen [reps]\n");
    return 64;
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
