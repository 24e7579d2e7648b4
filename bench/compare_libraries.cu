// Two builds of libtunedreduce in one process, on the same buffers, timed in turns: a deployment
// library (docs/library.md, "A deployment library") against the full one. Each library is
// loaded with dlopen (RTLD_LOCAL: each keeps its own registry and CUDA runtime) and called
// through its C API, as a program that links it would call it.
//
//   compare_libraries LIB_A LIB_B DB [ROUNDS]
//
// For i32/f32/f64 sum, i32 min and f32 max at 2^10..2^30 (every 4x): the lookup of each library
// (level and kernel), then ROUNDS (default 30) rounds in which each library runs the cached call
// (tr_reduce_cached) and the two-phase call (tr_reduce, temporary storage allocated once, as a
// caller that owns it does), in turn. Before each timed call a read of 256 MiB evicts the input
// from L2 (cold, clean L2) and keeps the GPU busy while the call is enqueued, so the CUDA events
// time the GPU's work, not the launch. Every result is checked: integers exactly against the
// host's, floats against the host's double sum within n * 2^-23 of the sum of magnitudes (and
// both libraries' results compared: the same kernel gives the same bits). Medians are printed.

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

struct tr_config_v {  // the layout of tr_config (include/tunedreduce/tunedreduce.h)
  const char* kernel_id;
  const char* family;
  int block, unroll;
  const char *smem, *finish;
  int dtype, op, level;
  uint64_t n_lo, n_hi;
  const char *source, *tuned_on;
  double tuned_median_us;
  int stale, device, cache_state;
};

struct Lib {
  std::string path;
  int (*lookup)(int, int, uint64_t, int, tr_config_v*);
  int (*reduce)(void*, size_t*, const void*, void*, uint64_t, int, int, void*);
  int (*reduce_cached)(const void*, void*, uint64_t, int, int, void*);
  int (*set_database)(const char*);
  const char* (*level_name)(int);
  const char* (*last_error)();
  size_t (*kernel_count)();
};

template <class F>
void sym(void* h, const char* name, F& f, const std::string& path) {
  f = reinterpret_cast<F>(dlsym(h, name));
  if (!f) {
    std::fprintf(stderr, "%s: no symbol %s\n", path.c_str(), name);
    std::exit(1);
  }
}

Lib load(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "cannot load %s: %s\n", path.c_str(), dlerror());
    std::exit(1);
  }
  Lib l;
  l.path = path;
  sym(h, "tr_lookup", l.lookup, path);
  sym(h, "tr_reduce", l.reduce, path);
  sym(h, "tr_reduce_cached", l.reduce_cached, path);
  sym(h, "tr_set_database", l.set_database, path);
  sym(h, "tr_level_name", l.level_name, path);
  sym(h, "tr_last_error", l.last_error, path);
  sym(h, "tr_kernel_count", l.kernel_count, path);
  return l;
}

void ok(const Lib& l, int status, const char* what) {
  if (status != 0) {
    std::fprintf(stderr, "%s: %s: %s\n", l.path.c_str(), what, l.last_error());
    std::exit(1);
  }
}

__global__ void read_flush(const int4* p, std::size_t n, int* sink) {
  int acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int4 v = __ldg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;  // practically never: keeps the loads
}

struct Key {
  int dtype, op;  // tr_dtype, tr_op
  const char* name;
};
constexpr Key keys[] = {
    {0, 0, "i32 sum"}, {4, 0, "f32 sum"}, {5, 0, "f64 sum"}, {0, 1, "i32 min"}, {4, 2, "f32 max"}};

std::size_t elem_size(int dtype) { return dtype == 0 || dtype == 1 || dtype == 4 ? 4 : 8; }

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: compare_libraries LIB_A LIB_B DB [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 30;
  Lib libs[2] = {load(argv[1]), load(argv[2])};
  for (const Lib& l : libs) ok(l, l.set_database(argv[3]), "tr_set_database");
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s; A = %s (%zu kernels), B = %s (%zu kernels); database %s\n", prop.name,
              libs[0].path.c_str(), libs[0].kernel_count(), libs[1].path.c_str(),
              libs[1].kernel_count(), argv[3]);
  std::printf(
      "cold L2 (a 256 MiB read before each call), launch latency not inside, medians of "
      "%d, every result checked\n\n",
      rounds);

  const uint64_t max_n = uint64_t{1} << 30;
  std::mt19937_64 rng(12345);
  void* d_in = nullptr;
  void* d_out = nullptr;
  int4* d_flush = nullptr;
  int* d_sink = nullptr;
  const std::size_t flush_bytes = std::size_t{256} << 20;
  CHECK(cudaMalloc(&d_in, max_n * 8));
  CHECK(cudaMalloc(&d_out, 16));
  CHECK(cudaMalloc(&d_flush, flush_bytes));
  CHECK(cudaMalloc(&d_sink, sizeof(int)));
  CHECK(cudaMemset(d_flush, 1, flush_bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  std::printf("%-8s %6s | %-8s %-8s %-5s | %10s %10s %6s | %10s %10s %6s\n", "key", "n", "level A",
              "level B", "same", "cached A", "cached B", "B/A", "2-phase A", "2-phase B", "B/A");
  int failures = 0;
  double worst = 1e9;
  for (const Key& k : keys) {
    const std::size_t es = elem_size(k.dtype);
    std::vector<unsigned char> host(max_n * es);
    // Random values (splitmix64): integers in [-1000, 1000], floats and doubles in [-1, 1).
    uint64_t state = rng();
    auto next = [&state] {
      uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return z ^ (z >> 31);
    };
    if (k.dtype == 0) {
      auto* p = reinterpret_cast<int32_t*>(host.data());
      for (uint64_t i = 0; i < max_n; ++i) p[i] = int32_t(next() % 2001) - 1000;
    } else if (k.dtype == 4) {
      auto* p = reinterpret_cast<float*>(host.data());
      for (uint64_t i = 0; i < max_n; ++i)
        p[i] = float(int64_t(next() >> 40) - (1 << 23)) * 0x1p-23f;
    } else {
      auto* p = reinterpret_cast<double*>(host.data());
      for (uint64_t i = 0; i < max_n; ++i)
        p[i] = double(int64_t(next() >> 11) - (int64_t(1) << 52)) * 0x1p-52;
    }
    CHECK(cudaMemcpy(d_in, host.data(), max_n * es, cudaMemcpyHostToDevice));
    for (int e = 10; e <= 30; e += 2) {
      const uint64_t n = uint64_t{1} << e;
      // The host's answer.
      double ref = 0, mag = 0;
      long long iref = 0;
      for (uint64_t i = 0; i < n; ++i) {
        if (k.dtype == 0) {
          const int32_t v = reinterpret_cast<const int32_t*>(host.data())[i];
          iref = k.op == 0   ? iref + v
                 : i == 0    ? v
                 : k.op == 1 ? std::min<long long>(iref, v)
                             : std::max<long long>(iref, v);
        } else {
          const double v = k.dtype == 4 ? reinterpret_cast<const float*>(host.data())[i]
                                        : reinterpret_cast<const double*>(host.data())[i];
          ref = k.op == 0 ? ref + v : i == 0 ? v : k.op == 1 ? std::min(ref, v) : std::max(ref, v);
          mag += std::fabs(v);
        }
      }
      tr_config_v cfg[2];
      std::vector<void*> temp(2, nullptr);
      for (int l = 0; l < 2; ++l) {
        ok(libs[l], libs[l].lookup(k.dtype, k.op, n, -1, &cfg[l]), "tr_lookup");
        size_t bytes = 0;
        ok(libs[l], libs[l].reduce(nullptr, &bytes, d_in, d_out, n, k.dtype, k.op, stream),
           "tr_reduce (size query)");
        CHECK(cudaMalloc(&temp[l], std::max<size_t>(bytes, 1)));
        CHECK(cudaMemset(temp[l], 0xA5, std::max<size_t>(bytes, 1)));  // garbage on entry
      }
      std::vector<float> t[2][2];
      unsigned char first_bits[2][2][8] = {};
      for (int r = 0; r < rounds; ++r)
        for (int l = 0; l < 2; ++l)
          for (int path = 0; path < 2; ++path) {
            CHECK(cudaMemsetAsync(d_out, 0xFF, 16, stream));  // poison
            read_flush<<<4 * prop.multiProcessorCount, 512, 0, stream>>>(d_flush,
                                                                         flush_bytes / sizeof(int4),
                                                                         d_sink);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(start, stream));
            size_t bytes = 0;
            if (path == 0) {
              ok(libs[l], libs[l].reduce_cached(d_in, d_out, n, k.dtype, k.op, stream),
                 "tr_reduce_cached");
            } else {
              ok(libs[l], libs[l].reduce(nullptr, &bytes, d_in, d_out, n, k.dtype, k.op, stream),
                 "tr_reduce (size query)");
              ok(libs[l], libs[l].reduce(temp[l], &bytes, d_in, d_out, n, k.dtype, k.op, stream),
                 "tr_reduce");
            }
            CHECK(cudaEventRecord(stop, stream));
            CHECK(cudaStreamSynchronize(stream));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, start, stop));
            t[l][path].push_back(ms * 1000);
            unsigned char bits[8] = {};
            CHECK(cudaMemcpy(bits, d_out, es, cudaMemcpyDeviceToHost));
            bool good;
            if (k.dtype == 0) {
              int32_t v;
              std::memcpy(&v, bits, 4);
              good = k.op == 0 ? uint32_t(v) == uint32_t(iref) : v == iref;
            } else {
              double v;
              if (k.dtype == 4) {
                float f;
                std::memcpy(&f, bits, 4);
                v = f;
              } else {
                std::memcpy(&v, bits, 8);
              }
              const double tol = k.op == 0 ? double(n) * 0x1p-23 * mag + 1e-30 : 0;
              good = std::fabs(v - ref) <= tol;
            }
            if (r == 0) std::memcpy(first_bits[l][path], bits, 8);
            else if (std::memcmp(first_bits[l][path], bits, 8) != 0) good = false;
            if (!good) {
              ++failures;
              std::fprintf(stderr, "WRONG: %s n=%llu library %c path %d round %d\n", k.name,
                           (unsigned long long)n, 'A' + l, path, r);
            }
          }
      const bool same = std::strcmp(cfg[0].kernel_id, cfg[1].kernel_id) == 0;
      if (same && std::memcmp(first_bits[0], first_bits[1], sizeof first_bits[0]) != 0) {
        ++failures;
        std::fprintf(stderr, "WRONG: %s n=%llu: the same kernel gave other bits in A and B\n",
                     k.name, (unsigned long long)n);
      }
      double m[2][2];
      for (int l = 0; l < 2; ++l)
        for (int p = 0; p < 2; ++p) m[l][p] = median(t[l][p]);
      worst = std::min({worst, m[0][0] / m[1][0], m[0][1] / m[1][1]});
      std::printf("%-8s 2^%-4d | %-8s %-8s %-5s | %10.2f %10.2f %6.3f | %10.2f %10.2f %6.3f\n",
                  k.name, e, libs[0].level_name(cfg[0].level), libs[1].level_name(cfg[1].level),
                  same ? "yes" : "NO", m[0][0], m[1][0], m[1][0] / m[0][0], m[0][1], m[1][1],
                  m[1][1] / m[0][1]);
      if (!same) std::printf("    A: %s\n    B: %s\n", cfg[0].kernel_id, cfg[1].kernel_id);
      for (void* p : temp) CHECK(cudaFree(p));
    }
  }
  std::printf("\nworst speed of B against A (A's median / B's): %.3f; %d wrong results\n", worst,
              failures);
  return failures ? 1 : 0;
}
