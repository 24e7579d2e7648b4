#pragma once
// The built-in configuration per (dtype, op): lookup level 4, used when no tuned row applies.

#include "tunedreduce/types.hpp"

namespace tunedreduce::runtime {

/// Registry id of the built-in default for (dtype, op); always an entry of the registry (a unit
/// test checks every one).
const char* builtin_default_id(DType dtype, Op op) noexcept;

}  // namespace tunedreduce::runtime
