// Question: where does an exact sum's time go, phase by phase, and which part of it is the fixed
// cost per call that keeps it behind CUB at 2^24 (docs/performance.md 3.23: fitted on the H100,
// t = 12.3 µs + 43 µs per 2^24 doubles against CUB's 7.7 µs + the same)? exact/sum_kernels.cuh's
// first pass instantiated here twice per configuration: with NoProbe (the library's kernel) and
// with a probe that stamps %globaltimer at the kernel's phase boundaries (exact_sum_blocks'
// Probe::at: the block's start, its warps' loops done, the warps' sums in shared memory, the
// block's words, the ticket, the last block's finish). Launched as the library launches it
// (single_pass, a ticket outside the workspace, kernels/exact_geometry.hpp's grid), cold L2 (the
// read flush; FLUSH=none: a warm L2, experiment.hpp), against cub::DeviceReduce::Sum on the same
// pointer (for the half types DeviceReduce::Reduce into a float with a float accumulator, as
// `tunedreduce bench`; docs/performance.md 3.29).
//
//   exact_phases [SIZES [TYPES]]   (default 2^20,2^22,2^24,2^25,2^26 and f32,f64; TYPES of
//                                   f32, f64, f16, bf16)
//
// Prints, per configuration and size: CUB's and the two kernels' event-timed medians of 31 (launch
// latency inside), then the medians over 15 probed launches of: the span from the first block's
// start to the finish's end; the spread of the blocks' starts; a block's loop (start to its
// slowest warp's loop end: median and the slowest block); from the last loop's end to the last
// ticket; each block's tail phases (medians over blocks); the last block's finish. All in µs,
// but the last four columns: the last block's finish in thousands of its multiprocessor's cycles
// (thread 0's clock64) from the ticket to its shared words zeroed, to the tails' union known, to
// the words summed, to the rounded result stored; then the blocks' loop ends (their slowest
// warps') from the first block's start, 10th, 50th and 90th percentiles, and the median over
// blocks of the slowest warp's loop end less the fastest's.
// Every launch's bits must equal the others' and, up to 2^25 elements, the host reference's.

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/experiments/exact_common.cuh"
#include "bench/experiments/experiment.hpp"
#include "exact/first_pass.hpp"
#include "exact/reference.hpp"
#include "exact/sum_kernels.cuh"
#include "exact/temp_size.hpp"
#include "kernels/exact_geometry.hpp"
#include "kernels/registry.hpp"
#include "measure/gpu.hpp"

namespace {

namespace tr = tunedreduce;
namespace ex = tunedreduce::exact;

constexpr int kMaxGrid = 4096;
constexpr int kStamps = 10;  // 0..8 the phases (1: the block's slowest warp), 9: its fastest warp

__device__ unsigned long long g_stamps[kMaxGrid][kStamps];  // %globaltimer, ns
__device__ long long g_clocks[kMaxGrid][kStamps];           // thread 0's clock64

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

struct StampProbe {
  __device__ static void at(int phase) {
    unsigned long long* row = g_stamps[blockIdx.x];
    if (phase == 1) {
      if ((threadIdx.x & 31) == 0) {
        const unsigned long long t = global_ns();
        atomicMax(row + 1, t);
        atomicMin(row + 9, t);
      }
    } else if (threadIdx.x == 0) {
      row[phase] = global_ns();
      g_clocks[blockIdx.x][phase] = clock64();
    }
  }
};

/// The input's element type In (float, double, __half, __nv_bfloat16); the result's is
/// AccumOf<In> (float for the half types).
template <class In>
using Kernel = void (*)(const In*, std::uint64_t, std::uint64_t, std::uint64_t, std::int64_t*,
                        unsigned*, ex::detail::AccumOf<In>*);

template <class In>
struct Config {
  const char* name;
  Kernel<In> plain;
  Kernel<In> probed;
  int block;
  int unroll;
  tr::kernels::Family family;
};

template <class In, int kThreads, int kUnroll, int kExpansion, ex::Residence R>
Config<In> config(const char* name, tr::kernels::Family family) {
  constexpr int kVector = 16 / sizeof(In);
  return {name,
          &ex::detail::exact_sum_blocks<In, kThreads, kVector, kUnroll, kExpansion, R>,
          &ex::detail::exact_sum_blocks<In, kThreads, kVector, kUnroll, kExpansion, R,
                                        1024 / kThreads, StampProbe>,
          kThreads,
          kUnroll,
          family};
}

/// The inexact sum the exact sums are compared with: DeviceReduce::Sum, or for the half types
/// Reduce into a float with a float accumulator (as `tunedreduce bench` does).
struct FloatPlus {
  __host__ __device__ float operator()(float a, float b) const { return a + b; }
};
template <class In>
cudaError_t cub_sum(void* temp, std::size_t& bytes, const In* in, ex::detail::AccumOf<In>* out,
                    std::uint64_t n, cudaStream_t s) {
  if constexpr (ex::detail::is_half_input_v<In>) {
    return cub::DeviceReduce::Reduce(temp, bytes, in, out, static_cast<std::int64_t>(n),
                                     FloatPlus{}, 0.0f, s);
  } else {
    return cub::DeviceReduce::Sum(temp, bytes, in, out, static_cast<std::int64_t>(n), s);
  }
}

/// Whether \p got is the host reference's exact sum of d_in[0, n).
template <class In>
bool equals_reference(const In* d_in, std::uint64_t n,
                      float got) requires(ex::detail::is_half_input_v<In>) {
  std::vector<std::uint16_t> host(n);
  CK(cudaMemcpy(host.data(), d_in, n * sizeof(In), cudaMemcpyDeviceToHost));
  const float expected =
      ex::exact_sum(std::is_same_v<In, __half> ? ex::HalfFormat::f16 : ex::HalfFormat::bf16,
                    std::span<const std::uint16_t>(host));
  return std::memcmp(&got, &expected, sizeof(float)) == 0;
}
template <class In>
bool equals_reference(const In* d_in, std::uint64_t n,
                      In got) requires(!ex::detail::is_half_input_v<In>) {
  return exact_experiments::equals_reference(d_in, n, got);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Phases {
  double span, start_spread, loop_median, loop_max, last_loop_to_last_ticket, warps, words, ticket,
      finish;
  double zero, tails, rows, round;          // the last block's finish, thousands of its SM's cycles
  double end10, end50, end90, warp_spread;  // the blocks' loop ends from the first start; the
                                            // median block's slowest warp less its fastest
};

Phases phases_of(const std::vector<unsigned long long>& st, const std::vector<long long>& ck,
                 unsigned grid) {
  const auto at = [&](unsigned b, int k) { return static_cast<double>(st[b * kStamps + k]); };
  double first_start = 1e300, last_start = 0, last_loop = 0, last_ticket = 0, end = 0;
  std::vector<double> loops, warps, words, tickets, ends, spreads;
  for (unsigned b = 0; b < grid; ++b) {
    first_start = std::min(first_start, at(b, 0));
    last_start = std::max(last_start, at(b, 0));
    last_loop = std::max(last_loop, at(b, 1));
    last_ticket = std::max(last_ticket, at(b, 4));
    loops.push_back(at(b, 1) - at(b, 0));
    ends.push_back(at(b, 1));
    spreads.push_back(at(b, 1) - at(b, 9));
    warps.push_back(at(b, 2) - at(b, 1));
    words.push_back(at(b, 3) - at(b, 2));
    tickets.push_back(at(b, 4) - at(b, 3));
    if (st[b * kStamps + 5] != 0) end = at(b, 5);
  }
  Phases p{};
  for (unsigned b = 0; b < grid; ++b) {
    if (st[b * kStamps + 5] == 0) continue;
    const auto cyc = [&](int from, int to) {
      return static_cast<double>(ck[b * kStamps + to] - ck[b * kStamps + from]) / 1e3;
    };
    p.zero = cyc(4, 6);
    p.tails = cyc(6, 7);
    p.rows = cyc(7, 8);
    p.round = cyc(8, 5);
  }
  p.span = (end - first_start) / 1e3;
  p.start_spread = (last_start - first_start) / 1e3;
  p.loop_median = median(loops) / 1e3;
  p.loop_max = *std::max_element(loops.begin(), loops.end()) / 1e3;
  p.last_loop_to_last_ticket = (last_ticket - last_loop) / 1e3;
  p.warps = median(warps) / 1e3;
  p.words = median(words) / 1e3;
  p.ticket = median(tickets) / 1e3;
  p.finish = (end - last_ticket) / 1e3;
  std::sort(ends.begin(), ends.end());
  p.end10 = (ends[ends.size() / 10] - first_start) / 1e3;
  p.end50 = (ends[ends.size() / 2] - first_start) / 1e3;
  p.end90 = (ends[ends.size() * 9 / 10] - first_start) / 1e3;
  p.warp_spread = median(spreads) / 1e3;
  return p;
}

template <class In>
bool run(const ColdTimer& timer, const cudaDeviceProp& prop, const Config<In>& c, std::uint64_t n) {
  using T = ex::detail::AccumOf<In>;
  const cudaStream_t s = timer.s;
  In* in = nullptr;
  CK(cudaMalloc(&in, n * sizeof(In)));
  exact_experiments::fill<<<1024, 256, 0, s>>>(in, n, n * 7, 0);
  CK(cudaGetLastError());
  T* out = nullptr;
  CK(cudaMalloc(&out, 3 * sizeof(T)));
  CK(cudaMemsetAsync(out, 0xFF, 3 * sizeof(T), s));  // poison
  int resident = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, c.plain, c.block, 0));
  tr::kernels::DeviceLimits dev;
  dev.sm_count = prop.multiProcessorCount;
  const tr::kernels::KernelParams p{c.family,
                                    c.block,
                                    c.unroll,
                                    tr::kernels::SmemMode::none,
                                    tr::kernels::Finish::single_pass,
                                    ex::detail::InputOf<In>::dtype,
                                    tr::Op::exact_sum};
  constexpr int kVector = 16 / sizeof(In);
  const unsigned grid = static_cast<unsigned>(
      ex::temp_size::grid_blocks(n, kVector, c.block, c.unroll,
                                 tr::kernels::exact_geometry::launch_grid(p, n, dev, resident)));
  if (grid < 2 || grid > kMaxGrid) {
    std::fprintf(stderr, "exact_phases: a grid of %u blocks (2..%d only)\n", grid, kMaxGrid);
    std::exit(2);
  }
  const std::uint64_t vectors = n / kVector;  // cudaMalloc's alignment: no head
  std::int64_t* slots = nullptr;
  CK(cudaMalloc(&slots, ex::temp_size::bytes<T>(grid, true)));
  unsigned* ticket = nullptr;  // and the accumulator after it, as ExactLaunch::counter's
  CK(cudaMalloc(&ticket, ex::temp_size::ticket_bytes));
  CK(cudaMemsetAsync(ticket, 0, ex::temp_size::ticket_bytes, s));
  const auto launch = [&](Kernel<In> k, T* o) {
    k<<<grid, c.block, 0, s>>>(in, n, 0, vectors, slots, ticket, o);
    CK(cudaGetLastError());
  };
  std::size_t cub_bytes = 0;
  CK(cub_sum(nullptr, cub_bytes, in, out + 2, n, s));
  void* cub_temp = nullptr;
  CK(cudaMalloc(&cub_temp, std::max<std::size_t>(cub_bytes, 1)));

  const float cub_us =
      timer.median_us([&] { CK(cub_sum(cub_temp, cub_bytes, in, out + 2, n, s)); });
  const float plain_us = timer.median_us([&] { launch(c.plain, out); });
  const float probed_us = timer.median_us([&] { launch(c.probed, out + 1); });

  void* stamps_addr = nullptr;
  CK(cudaGetSymbolAddress(&stamps_addr, g_stamps));
  void* clocks_addr = nullptr;
  CK(cudaGetSymbolAddress(&clocks_addr, g_clocks));
  std::vector<unsigned long long> st(std::size_t{kMaxGrid} * kStamps);
  std::vector<long long> ck(st.size());
  std::vector<Phases> runs;
  for (int r = 0; r < 15; ++r) {
    CK(cudaMemsetAsync(stamps_addr, 0, st.size() * sizeof(st[0]), s));
    for (unsigned b = 0; b < grid; ++b) {  // the fastest warp's slot starts at the maximum
      CK(cudaMemsetAsync(static_cast<unsigned long long*>(stamps_addr) + b * kStamps + 9, 0xFF,
                         sizeof(st[0]), s));
    }
    timer.before_run(r);
    launch(c.probed, out + 1);
    CK(cudaMemcpyAsync(st.data(), stamps_addr, st.size() * sizeof(st[0]), cudaMemcpyDeviceToHost,
                       s));
    CK(cudaMemcpyAsync(ck.data(), clocks_addr, ck.size() * sizeof(ck[0]), cudaMemcpyDeviceToHost,
                       s));
    CK(cudaStreamSynchronize(s));
    runs.push_back(phases_of(st, ck, grid));
  }
  const auto med = [&](double Phases::*m) {
    std::vector<double> v;
    for (const Phases& ph : runs) v.push_back(ph.*m);
    return median(v);
  };

  T got[3];
  CK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
  bool ok = std::memcmp(&got[0], &got[1], sizeof(T)) == 0;
  const bool with_reference = n <= exact_experiments::kReferenceMax;
  if (with_reference) ok = ok && equals_reference(in, n, got[0]);
  std::printf(
      "%-10s %11llu %5u  %7.2f %7.2f %7.2f  %7.2f %6.2f %7.2f %7.2f %7.2f %6.2f %6.2f %6.2f "
      "%6.2f  %5.2f %5.2f %5.2f %5.2f  %7.2f %7.2f %7.2f %5.2f  %s\n",
      c.name, static_cast<unsigned long long>(n), grid, cub_us, plain_us, probed_us,
      med(&Phases::span), med(&Phases::start_spread), med(&Phases::loop_median),
      med(&Phases::loop_max), med(&Phases::last_loop_to_last_ticket), med(&Phases::warps),
      med(&Phases::words), med(&Phases::ticket), med(&Phases::finish), med(&Phases::zero),
      med(&Phases::tails), med(&Phases::rows), med(&Phases::round), med(&Phases::end10),
      med(&Phases::end50), med(&Phases::end90), med(&Phases::warp_spread),
      ok ? (with_reference ? "ok (reference)" : "ok") : "MISMATCH");
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(slots));
  CK(cudaFree(ticket));
  CK(cudaFree(cub_temp));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 3) {
    std::fprintf(stderr, "usage: exact_phases [SIZES [TYPES]]\n");
    return 2;
  }
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> types;
  try {
    sizes = exact_experiments::parse_list("SIZES", argc > 1 ? argv[1] : "2^20,2^22,2^24,2^25,2^26");
    types = tr::grammar::split_list("TYPES", {argc > 2 ? argv[2] : "f32,f64"});
    for (const std::string& t : types) {
      if (t != "f32" && t != "f64" && t != "f16" && t != "bf16")
        throw std::invalid_argument("TYPES: '" + t + "' is not f32, f64, f16 or bf16");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exact_phases: %s\n", e.what());
    return 2;
  }
  const auto wanted = [&](const char* t) {
    return std::find(types.begin(), types.end(), t) != types.end();
  };
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s; uniform [0, 1) data, µs (L2: the flush below)\n", prop.name);
  const ColdTimer timer(prop);
  using F = tr::kernels::Family;
  using ex::Residence;
  const Config<float> floats[] = {
      config<float, 512, 2, 1, Residence::registers>("f32 r u2", F::exact_registers),
      config<float, 512, 4, 2, Residence::memory>("f32 w u4", F::exact_wide),
  };
  const Config<double> doubles[] = {
      config<double, 512, 4, 2, Residence::memory>("f64 u4", F::exact),
      config<double, 512, 2, 2, Residence::memory>("f64 u2", F::exact),
  };
  const Config<__half> f16s[] = {
      config<__half, 512, 2, 1, Residence::memory>("f16 u2", F::exact),
      config<__half, 512, 4, 1, Residence::memory>("f16 u4", F::exact),
      config<__half, 512, 1, 1, Residence::registers>("f16 r u1", F::exact_registers),
      config<__half, 512, 2, 2, Residence::memory>("f16 w u2", F::exact_wide),
  };
  const Config<__nv_bfloat16> bf16s[] = {
      config<__nv_bfloat16, 512, 2, 1, Residence::memory>("bf16 u2", F::exact),
      config<__nv_bfloat16, 512, 4, 1, Residence::memory>("bf16 u4", F::exact),
      config<__nv_bfloat16, 512, 1, 1, Residence::registers>("bf16 r u1", F::exact_registers),
      config<__nv_bfloat16, 512, 2, 2, Residence::memory>("bf16 w u2", F::exact_wide),
  };
  std::printf(
      "config               n  grid      CUB   plain  probed     span  start  loop50 loopmax "
      "lastlp>tk  warps  words ticket finish  zero tails  rows round    end10   end50   end90 "
      "wspread  bits\n");
  bool ok = true;
  for (const std::uint64_t n : sizes) {
    if (wanted("f32"))
      for (const auto& c : floats) ok = run(timer, prop, c, n) && ok;
    if (wanted("f64"))
      for (const auto& c : doubles) ok = run(timer, prop, c, n) && ok;
    if (wanted("f16"))
      for (const auto& c : f16s) ok = run(timer, prop, c, n) && ok;
    if (wanted("bf16"))
      for (const auto& c : bf16s) ok = run(timer, prop, c, n) && ok;
  }
  std::printf("%s\n", ok ? "every result's bits as expected" : "SOME RESULT DIFFERS");
  return ok ? 0 : 1;
}
