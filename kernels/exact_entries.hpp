#pragma once
// The exact families' registry entries (kernels/exact_entries.cpp): the configurations that
// kernels/space.hpp lists for Op::exact_sum whose first pass this build compiled (all of them
// but in a deployment build), each launching exact/sum.hpp's exact_sum. Unnamed
// and unsorted, like a generated instance slice; registry.cpp names and sorts them with the rest.

#include <span>

#include "kernels/registry.hpp"

namespace tunedreduce::kernels::detail {

std::span<const Entry> exact_entries();

}  // namespace tunedreduce::kernels::detail
