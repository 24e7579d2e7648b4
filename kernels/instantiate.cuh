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

/// The entries of Configs[Begin + I]... (Configs: a constexpr array of KernelParams).
template <const auto& Configs, std::size_t Begin, std::size_t... I>
std::span<const Entry> make_entries(std::index_sequence<I...>) {
  static const Entry table[] = {Entry{Configs[Begin + I],
                                      nullptr,  // the registry names entries
                                      &Dispatch<Configs[Begin + I]>::launch,
                                      &Dispatch<Configs[Begin + I]>::resident_blocks_per_sm}...};
  return table;
}

/// Entries [part * size / parts, (part + 1) * size / parts) of one (dtype, op): the whole
/// registry, in kernels/CMakeLists.txt's slices.
template <DType D, Op O, std::size_t Part, std::size_t Parts>
std::span<const Entry> instantiate_part() {
  constexpr std::size_t size = configs_v<D, O>.size();
  constexpr std::size_t begin = Part * size / Parts;
  constexpr std::size_t end = (Part + 1) * size / Parts;
  return make_entries<configs_v<D, O>, begin>(std::make_index_sequence<end - begin>{});
}

/// Every entry of a list of configurations: a deployment build's (cmake/KernelList.cmake).
template <const auto& Configs>
std::span<const Entry> instantiate_list() {
  constexpr std::size_t size = sizeof(Configs) / sizeof(Configs[0]);
  return make_entries<Configs, 0>(std::make_index_sequence<size>{});
}

}  // namespace tunedreduce::kernels::detail
