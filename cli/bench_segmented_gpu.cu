// The device side of `tunedreduce bench --segments`: CUB's DeviceSegmentedReduce. See
// bench_gpu.hpp.

#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>
#include <type_traits>

#include "cli/bench_gpu.hpp"
#include "cli/bench_types.cuh"

namespace tunedreduce::cli::bench {

namespace {

/// What CUB's ArgMin / ArgMax write per segment: the index within the segment as an int (CUB's
/// ArgIndexInputIterator's offset type), then the value.
template <class T>
using Pair = cub::KeyValuePair<int, T>;

}  // namespace

cudaError_t cub_segmented_reduce(DType dtype, Op op, void* temp, std::size_t& temp_bytes,
                                 const void* in, void* out, std::uint64_t num_segments,
                                 const std::int64_t* begin, const std::int64_t* end,
                                 cudaStream_t stream) {
  const auto count = static_cast<std::int64_t>(num_segments);
  if (is_half(dtype)) {
    if (op != Op::wide_sum) return cudaErrorInvalidValue;  // seg_op_applies
    // Into float with a float accumulator, as bench_gpu.cu's whole-array call.
    auto run = [&](auto h) {
      using H = decltype(h);
      return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, static_cast<const H*>(in),
                                                static_cast<float*>(out), count, begin, end,
                                                WidePlus<float>{}, 0.0f, stream);
    };
    return with_half(dtype, run);
  }
  return with_type(dtype, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    const T* d_in = static_cast<const T*>(in);
    T* d_out = static_cast<T*>(out);
    switch (op) {
      case Op::sum:
        return cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, d_in, d_out, count, begin, end,
                                               stream);
      case Op::wide_sum:
        if constexpr (sizeof(T) == 4) {
          using W = wide_t<T>;
          return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, d_in, static_cast<W*>(out),
                                                    count, begin, end, WidePlus<W>{}, W{}, stream);
        } else {
          return cudaErrorInvalidValue;  // op_applies refuses 64-bit elements
        }
      case Op::min:
        return cub::DeviceSegmentedReduce::Min(temp, temp_bytes, d_in, d_out, count, begin, end,
                                               stream);
      case Op::max:
        return cub::DeviceSegmentedReduce::Max(temp, temp_bytes, d_in, d_out, count, begin, end,
                                               stream);
      case Op::argmin:
      case Op::argmax: {
        auto* pairs = static_cast<Pair<T>*>(out);
        if (op == Op::argmin)
          return cub::DeviceSegmentedReduce::ArgMin(temp, temp_bytes, d_in, pairs, count, begin,
                                                    end, stream);
        return cub::DeviceSegmentedReduce::ArgMax(temp, temp_bytes, d_in, pairs, count, begin, end,
                                                  stream);
      }
      case Op::exact_sum:
        break;
    }
    return cudaErrorInvalidValue;  // exact_sum has no segmented kernels
  });
}

std::size_t cub_segmented_result_bytes(DType dtype, Op op) {
  if (op != Op::argmin && op != Op::argmax) return result_bytes(dtype, op);
  static_assert(sizeof(Pair<float>) == 8 && sizeof(Pair<double>) == 16);
  return dtype_size(dtype) == 8 ? 16 : 8;
}

void cub_pairs_to_indexed(DType dtype, const void* pairs, void* indexed, std::uint64_t count) {
  // KeyValuePair<int, T> {key, value} (8 or 16 bytes, the value 4 or 8 bytes on) and
  // IndexedValue<T> {value, int64 index} (16 bytes).
  const std::size_t value_bytes = dtype_size(dtype), pair_bytes = value_bytes == 8 ? 16 : 8;
  const auto* src = static_cast<const unsigned char*>(pairs);
  auto* dst = static_cast<unsigned char*>(indexed);
  for (std::uint64_t i = 0; i < count; ++i, src += pair_bytes, dst += 16) {
    int key;
    std::memcpy(&key, src, sizeof key);
    const std::int64_t index = key;
    std::memset(dst, 0, 16);
    std::memcpy(dst, src + value_bytes, value_bytes);
    std::memcpy(dst + 8, &index, 8);
  }
}

}  // namespace tunedreduce::cli::bench
