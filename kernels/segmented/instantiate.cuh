#pragma once
// Turns one (dtype, op)'s segmented configurations (kernels/segmented/space.hpp) into registry
// entries. Included by the generated files seg_instances_*.cu only.

#include <span>
#include <utility>

#include "kernels/segmented/kernels.cuh"
#include "kernels/segmented/space.hpp"

namespace tunedreduce::kernels::segmented::detail {

template <DType D, Op O>
inline constexpr auto configs_v = space::configs<D, O>();

template <DType D, Op O, std::size_t... I>
std::span<const SegEntry> make_entries(std::index_sequence<I...>) {
  static const SegEntry table[] = {
      SegEntry{configs_v<D, O>[I], nullptr, &SegDispatch<configs_v<D, O>[I]>::launch}...};
  return table;
}

template <DType D, Op O>
std::span<const SegEntry> instantiate() {
  return make_entries<D, O>(std::make_index_sequence<configs_v<D, O>.size()>{});
}

}  // namespace tunedreduce::kernels::segmented::detail
