#pragma once
// Helpers shared by the GPU tests: CUDA error checks, device buffers, random data, host
// references in higher precision, and the "skipped" exit code when there is no GPU.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "tunedreduce/types.hpp"

namespace tunedreduce::test {

/// ctest's SKIP_RETURN_CODE for the gpu label.
inline constexpr int skip_exit_code = 77;

#define TR_CUDA_CHECK(expr)                                                                    \
  do {                                                                                         \
    cudaError_t tr_err_ = (expr);                                                              \
    if (tr_err_ != cudaSuccess)                                                                \
      throw std::runtime_error(std::string(#expr) + " failed: " + cudaGetErrorName(tr_err_) +  \
                               " (" + cudaGetErrorString(tr_err_) + ") at " + __FILE__ + ":" + \
                               std::to_string(__LINE__));                                      \
  } while (0)

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) TR_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Copies \p bytes from the host to the device and waits until they are there: a cudaMemcpy
/// from pageable memory may return before its DMA lands, and a kernel on a cudaStreamNonBlocking
/// stream does not wait for the legacy stream's copy (the tuner's adversarial check read zeros
/// so: docs/performance.md 3.21). Every GPU test uploads through this.
inline void upload(void* dst, const void* src, std::size_t bytes) {
  TR_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  TR_CUDA_CHECK(cudaDeviceSynchronize());
}

/// The seed of this process's random data: $TR_TEST_SEED, or fresh from std::random_device.
inline std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    if (const char* s = std::getenv("TR_TEST_SEED"))
      return std::uint64_t(std::strtoull(s, nullptr, 0));
    std::random_device rd;
    return (std::uint64_t(rd()) << 32) ^ rd();
  }();
  return seed;
}

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Random values: integers over their whole range (so sums wrap), floats in [-1000, 1000) (the half
/// types: the float rounded to them).
template <class T>
T random_value(std::uint64_t stream, std::uint64_t i) {
  std::uint64_t r = splitmix64(stream * 0x632be59bd9b4e019ull + i);
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(r);
  } else if constexpr (std::is_floating_point_v<T>) {
    double u = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
    return static_cast<T>(u * 2000.0 - 1000.0);
  } else {  // __half, __nv_bfloat16: through float, rounded to the type
    double u = static_cast<double>(r >> 11) * 0x1.0p-53;
    return static_cast<T>(static_cast<float>(u * 2000.0 - 1000.0));
  }
}

/// Fills v in parallel with random_value<T>(stream, i).
template <class T>
void fill_random(std::vector<T>& v, std::uint64_t stream) {
  unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  const std::size_t n = v.size();
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i)
        v[i] = random_value<T>(stream, i);
    });
  for (auto& th : pool) th.join();
}

/// Reference result over x[0..n), computed independently of the kernels' operator code.
/// Integer sums are exact modulo 2^bits; floating-point sums are carried in long double with
/// sum|x|, so a result can be checked against the bound n * eps * sum|x| that holds for any
/// summation order; min and max are exact, and NaN anywhere gives NaN.
template <class T>
struct Reference {
  T value{};
  long double abs_sum = 0;
};

template <class T>
Reference<T> host_reference(Op op, const T* x, std::size_t n) {
  Reference<T> r;
  if (op == Op::sum) {
    if constexpr (std::is_integral_v<T>) {
      std::uint64_t acc = 0;  // wraps modulo 2^64; truncation gives the sum modulo 2^bits
      for (std::size_t i = 0; i < n; ++i) acc += static_cast<std::uint64_t>(x[i]);
      r.value = static_cast<T>(acc);
    } else {
      // -0.0 is the identity of IEEE 754 addition; the sum of nothing is +0.0.
      long double acc = n == 0 ? 0.0L : -0.0L;
      for (std::size_t i = 0; i < n; ++i) {
        acc += static_cast<long double>(x[i]);
        r.abs_sum += std::fabs(static_cast<long double>(x[i]));
      }
      r.value = static_cast<T>(acc);
    }
    return r;
  }
  const bool is_min = op == Op::min;
  T best;
  if constexpr (std::is_floating_point_v<T>)
    best = is_min ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  else best = is_min ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x[i])) {
        best = x[i];
        break;
      }
    }
    if (is_min ? x[i] < best : x[i] > best) best = x[i];
  }
  r.value = best;
  return r;
}

/// The worst value of argmin (Op::argmin: the type's maximum, +inf) or argmax (lowest, -inf).
template <class T>
T arg_worst(Op op) {
  if constexpr (std::is_floating_point_v<T>)
    return op == Op::argmin ? std::numeric_limits<T>::infinity()
                            : -std::numeric_limits<T>::infinity();
  else return op == Op::argmin ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

/// argmin / argmax over x[0, n), computed independently of the kernels' operator code: the
/// element at the first index of the extreme value, -0.0 equal to +0.0, the first NaN where there
/// is one; {arg_worst, -1} for n == 0.
template <class T>
IndexedValue<T> arg_reference(Op op, const T* x, std::size_t n) {
  IndexedValue<T> best{arg_worst<T>(op), -1};
  for (std::size_t i = 0; i < n; ++i) {
    bool take = best.index < 0;
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x[i])) {  // the first NaN wins over everything before and after it
        best = {x[i], static_cast<std::int64_t>(i)};
        break;
      }
    }
    take = take || (op == Op::argmin ? x[i] < best.value : x[i] > best.value);
    if (take) best = {x[i], static_cast<std::int64_t>(i)};
  }
  return best;
}

/// NaN, +Inf, -Inf or finite.
template <class T>
const char* fp_class(T v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  return "finite";
}

}  // namespace tunedreduce::test
