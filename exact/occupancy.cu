// exact/occupancy.hpp: the occupancy calculator on exact_sum's first-pass instances. The
// instances are those of exact/sum_kernels.cuh that exact/sum_kernels.cu launches, instantiated
// here again for their addresses (a kernel template's instance is per translation unit; the same
// code, so the same registers and occupancy). Only the widest loads, the registry's only vector
// width: 54 instances instead of sum_kernels.cu's 144.

#include "exact/occupancy.hpp"
#include "exact/sum_kernels.cuh"

namespace tunedreduce::exact {

namespace {

template <class T, int kThreads, int kUnroll, int kExpansion, Residence kResidence>
cudaError_t query(int& blocks) {
  constexpr int kVector = sizeof(T) == 4 ? 4 : 2;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, detail::exact_sum_blocks<T, kThreads, kVector, kUnroll, kExpansion, kResidence>,
      kThreads, 0);
}

template <class T, int kThreads, int kUnroll, int kExpansion>
cudaError_t by_chunks(const ExactLaunch& cfg, int& blocks) {
  if constexpr (sizeof(T) == 4) {
    if (cfg.chunks == ExactChunks::registers)
      return query<T, kThreads, kUnroll, kExpansion, Residence::registers>(blocks);
  }
  return query<T, kThreads, kUnroll, kExpansion, Residence::memory>(blocks);
}

template <class T, int kThreads, int kUnroll>
cudaError_t by_expansion(const ExactLaunch& cfg, int& blocks) {
  constexpr int kSmall = sizeof(T) == 4 ? 1 : 2;
  if (cfg.expansion == kSmall) return by_chunks<T, kThreads, kUnroll, kSmall>(cfg, blocks);
  return by_chunks<T, kThreads, kUnroll, kSmall + 1>(cfg, blocks);
}

template <class T, int kThreads>
cudaError_t by_unroll(const ExactLaunch& cfg, int& blocks) {
  if (cfg.unroll == 1) return by_expansion<T, kThreads, 1>(cfg, blocks);
  if (cfg.unroll == 2) return by_expansion<T, kThreads, 2>(cfg, blocks);
  return by_expansion<T, kThreads, 4>(cfg, blocks);
}

template <class T>
cudaError_t by_block(ExactLaunch cfg, int& blocks) {
  const int small = sizeof(T) == 4 ? 1 : 2;
  if (cfg.expansion == 0) cfg.expansion = small + 1;  // exact_sum's default
  if (cfg.chunks == ExactChunks::automatic)
    cfg.chunks = sizeof(T) == 4 ? ExactChunks::registers : ExactChunks::local;
  const int widest = sizeof(T) == 4 ? 4 : 2;
  if ((cfg.vector != 0 && cfg.vector != widest) ||
      (cfg.unroll != 1 && cfg.unroll != 2 && cfg.unroll != 4) ||
      (cfg.expansion != small && cfg.expansion != small + 1) ||
      (sizeof(T) == 8 && cfg.chunks == ExactChunks::registers))
    return cudaErrorInvalidValue;
  switch (cfg.block_threads) {
    case 128:
      return by_unroll<T, 128>(cfg, blocks);
    case 256:
      return by_unroll<T, 256>(cfg, blocks);
    case 512:
      return by_unroll<T, 512>(cfg, blocks);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t resident_blocks_per_sm(bool is_double, const ExactLaunch& cfg, int& blocks) {
  blocks = 0;
  return is_double ? by_block<double>(cfg, blocks) : by_block<float>(cfg, blocks);
}

}  // namespace tunedreduce::exact
