#pragma once
// The offsets check the caller may ask of a segmented reduction (Segments::checked()): the first
// segment whose offsets break CUB's contract in a way the caller wants to hear about (a negative
// begin, or an end before its begin, which CUB reads as an empty segment).

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tunedreduce::kernels::segmented {

/// The verdict of find_bad_offsets: \p bad is false, or the first offending segment and its
/// offsets.
struct OffsetsVerdict {
  bool bad = false;
  std::uint64_t segment = 0;
  std::int64_t begin = 0, end = 0;
};

/// Finds the first of \p count segments [begin[s], end[s]) (int64 offsets where \p wide, else
/// int32; device pointers) with begin[s] < 0 or end[s] < begin[s]: a kernel on \p stream over
/// the caller's device word \p first (its scratch, any content), then the stream waits (the
/// verdict is copied back). Without kernels (a host-only build) cudaErrorNoKernelImageForDevice.
cudaError_t find_bad_offsets(bool wide, const void* begin, const void* end, std::uint64_t count,
                             unsigned long long* first, cudaStream_t stream,
                             OffsetsVerdict& verdict);

}  // namespace tunedreduce::kernels::segmented
