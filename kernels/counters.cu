#include "kernels/counters.hpp"

namespace tunedreduce::kernels {

namespace detail {
// Zero-initialised at module load (static storage); kernels leave every counter zero. External
// linkage, so that no compiler pass drops it (no kernel of this file refers to it).
__device__ unsigned long long counter_words[counter_table_entries * counter_stride_words];
}  // namespace detail

cudaError_t counter_table(unsigned long long** table) {
  return cudaGetSymbolAddress(reinterpret_cast<void**>(table), detail::counter_words);
}

}  // namespace tunedreduce::kernels
