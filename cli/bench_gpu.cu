// The device side of `tunedreduce bench`: CUB and Thrust. See bench_gpu.hpp.

#include "cli/bench_gpu.hpp"
#include "cli/bench_types.cuh"

#include <cub/device/device_reduce.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/extrema.h>
#include <thrust/reduce.h>
#include <thrust/transform_reduce.h>

#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace tunedreduce::cli::bench {

namespace {

template <class T>
T identity(Op op) {
  if (op == Op::sum || op == Op::exact_sum) return T{};
  if constexpr (std::is_floating_point_v<T>)
    return op == Op::min ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  else return op == Op::min ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

}  // namespace

cudaError_t cub_reduce(DType dtype, Op op, void* temp, std::size_t& temp_bytes, const void* in,
                       void* out, std::uint64_t n, cudaStream_t stream) {
  if (op == Op::absmax) {
    // DeviceReduce::TransformReduce of |x| by the larger, from +0, into the element type: how
    // amax code calls CUB.
    return with_float(dtype, [&](auto t) {
      using T = decltype(t);
      return cub::DeviceReduce::TransformReduce(temp, temp_bytes, static_cast<const T*>(in),
                                                static_cast<T*>(out), static_cast<std::int64_t>(n),
                                                MaxOf<T>{}, AbsOf<T>{}, T(0.0f), stream);
    });
  }
  if (is_half(dtype)) {
    if (op != Op::wide_sum && op != Op::exact_sum) return cudaErrorInvalidValue;  // op_applies
    // DeviceReduce::Reduce with a float accumulator and result, as mixed-precision code calls it
    // (for exact_sum the comparison docs/kernels.md, "Exact sums", makes: CUB's ordinary, inexact,
    // sum into float).
    return with_half(dtype, [&](auto h) {
      using H = decltype(h);
      return cub::DeviceReduce::Reduce(temp, temp_bytes, static_cast<const H*>(in),
                                       static_cast<float*>(out), static_cast<std::int64_t>(n),
                                       WidePlus<float>{}, 0.0f, stream);
    });
  }
  return with_type(dtype, [&](auto t) {
    using T = decltype(t);
    const T* d_in = static_cast<const T*>(in);
    T* d_out = static_cast<T*>(out);
    const auto items = static_cast<std::int64_t>(n);
    switch (op) {
      case Op::sum:
      case Op::exact_sum:  // docs/kernels.md, "Exact sums": CUB's ordinary (inexact) sum
        return cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, items, stream);
      case Op::wide_sum:
        // CUB's sum into the wide output: its initial value and accumulator take the output's
        // type (DeviceReduce::Sum's InitT is the output value type), so it adds in 64 bits.
        if constexpr (sizeof(T) == 4)
          return cub::DeviceReduce::Sum(temp, temp_bytes, d_in, static_cast<wide_t<T>*>(out), items,
                                        stream);
        else return cudaErrorInvalidValue;  // op_applies refuses 64-bit elements
      case Op::min:
        return cub::DeviceReduce::Min(temp, temp_bytes, d_in, d_out, items, stream);
      case Op::argmin:
      case Op::argmax: {
        // CUB's ArgMin / ArgMax with separate outputs, writing into the IndexedValue at out: the
        // value at its start, the 64-bit index 8 bytes on.
        auto* result = static_cast<IndexedValue<T>*>(out);
        if (op == Op::argmin)
          return cub::DeviceReduce::ArgMin(temp, temp_bytes, d_in, &result->value, &result->index,
                                           items, stream);
        return cub::DeviceReduce::ArgMax(temp, temp_bytes, d_in, &result->value, &result->index,
                                         items, stream);
      }
      case Op::max:
        break;
    }
    return cub::DeviceReduce::Max(temp, temp_bytes, d_in, d_out, items, stream);
  });
}

void thrust_reduce(DType dtype, Op op, const void* in, std::uint64_t n, cudaStream_t stream,
                   void* result) {
  if (op == Op::absmax) {  // transform_reduce of |x| by the larger, from +0
    with_float(dtype, [&](auto t) {
      using T = decltype(t);
      const T* first = static_cast<const T*>(in);
      const T r = thrust::transform_reduce(thrust::cuda::par.on(stream), first, first + n,
                                           AbsOf<T>{}, T(0.0f), MaxOf<T>{});
      std::memcpy(result, &r, sizeof r);
      return 0;
    });
    return;
  }
  if (is_half(dtype)) {  // wide_sum and exact_sum: a float accumulator and result
    with_half(dtype, [&](auto h) {
      using H = decltype(h);
      const H* first = static_cast<const H*>(in);
      const float r =
          thrust::reduce(thrust::cuda::par.on(stream), first, first + n, 0.0f, WidePlus<float>{});
      std::memcpy(result, &r, sizeof r);
      return 0;
    });
    return;
  }
  with_type(dtype, [&](auto t) {
    using T = decltype(t);
    const T* first = static_cast<const T*>(in);
    const auto policy = thrust::cuda::par.on(stream);
    const T init = identity<T>(op);
    T r{};
    switch (op) {
      case Op::sum:
      case Op::exact_sum:  // Thrust's ordinary sum, as for CUB
        r = thrust::reduce(policy, first, first + n, init, thrust::plus<T>());
        break;
      case Op::min:
        r = thrust::reduce(policy, first, first + n, init, thrust::minimum<T>());
        break;
      case Op::max:
        r = thrust::reduce(policy, first, first + n, init, thrust::maximum<T>());
        break;
      case Op::wide_sum:
        if constexpr (sizeof(T) == 4) {
          using W = wide_t<T>;
          const W w = thrust::reduce(policy, first, first + n, W{}, thrust::plus<W>());
          std::memcpy(result, &w, sizeof(W));
          return 0;
        }
        break;
      case Op::argmin:
      case Op::argmax: {
        // Thrust's first smallest (largest) element, then its value copied back.
        const T* it = op == Op::argmin ? thrust::min_element(policy, first, first + n)
                                       : thrust::max_element(policy, first, first + n);
        IndexedValue<T> iv{identity<T>(op == Op::argmin ? Op::min : Op::max), -1};
        if (n > 0) {
          iv.index = it - first;
          if (cudaMemcpyAsync(&iv.value, it, sizeof(T), cudaMemcpyDeviceToHost, stream) !=
                  cudaSuccess ||
              cudaStreamSynchronize(stream) != cudaSuccess)
            throw std::runtime_error("thrust argmin/argmax: copying the value back failed");
        }
        std::memcpy(result, &iv, sizeof iv);
        return 0;
      }
    }
    std::memcpy(result, &r, sizeof(T));
    return 0;
  });
}

}  // namespace tunedreduce::cli::bench
