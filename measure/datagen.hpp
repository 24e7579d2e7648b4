#pragma once
// The tuner's input data: element i of a stream is a pure function of (seed, i), computed the same
// way on the host and on the device, so the host reference never needs a copy of the data.
// Integers cover their whole range (sums wrap); floating-point values are k * 2^-13 (float) or
// k * 2^-42 (double) for a random integer k, i.e. uniform in [-1024, 1024), exact in the element
// type whatever the compiler contracts.

#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define TR_HD __host__ __device__ __forceinline__
#else
#define TR_HD inline
#endif

namespace tunedreduce::measure {

TR_HD std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <class T>
TR_HD T data_value(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t r = mix64(seed ^ mix64(i));
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(r);
  } else if constexpr (sizeof(T) == 4) {
    const std::int32_t k = static_cast<std::int32_t>(r >> 40) - (1 << 23);  // [-2^23, 2^23)
    return static_cast<float>(k) * 0x1p-13f;
  } else {
    const std::int64_t k = static_cast<std::int64_t>(r >> 11) - (std::int64_t{1} << 52);
    return static_cast<double>(k) * 0x1p-42;
  }
}

}  // namespace tunedreduce::measure

#undef TR_HD
