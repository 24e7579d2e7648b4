#pragma once
// Turns a slice of the configuration list (kernels/space.hpp) into registry entries. Included by
// the generated files kernels/instances/*.cu only.

#include <span>
#include <utility>

#include "kernels/dispatch.cuh"
#include "kernels/space.hpp"

namespace tunedreduce::kernels::detail {

template <DType D, Op O>
inline constexpr auto configs_v = space::configs<D, O>();

template <DType D, Op O, std::size_t Begin, std::size_t... I>
std::span<const Entry> make_entries(std::index_sequence<I...>) {
  static const Entry table[] = {Entry{configs_v<D, O>[Begin + I],
                                      nullptr,  // the registry names entries
                                      &Dispatch<configs_v<D, O>[Begin + I]>::workspace_bytes,
                                      &Dispatch<configs_v<D, O>[Begin + I]>::can_implement,
                                      &Dispatch<configs_v<D, O>[Begin + I]>::launch,
                                      &Dispatch<configs_v<D, O>[Begin + I]>::grid_size}...};
  return table;
}

/// Entries [part * size / parts, (part + 1) * size / parts) of one (dtype, op).
template <DType D, Op O, std::size_t Part, std::size_t Parts>
std::span<const Entry> instantiate_part() {
  constexpr std::size_t size = configs_v<D, O>.size();
  constexpr std::size_t begin = Part * size / Parts;
  constexpr std::size_t end = (Part + 1) * size / Parts;
  return make_entries<D, O, begin>(std::make_index_sequence<end - begin>{});
}

}  // namespace tunedreduce::kernels::detail
