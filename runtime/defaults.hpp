#pragma once
// The built-in configurations: lookup level 4, used when no tuned row applies. Per (dtype, op),
// a few size intervals, each with the registry entry chosen for it from measurements (the
// evidence is in defaults.cpp).

#include <cstdint>
#include <span>

#include "tunedreduce/types.hpp"

namespace tunedreduce::runtime {

/// One built-in rule: for dtype and op, sizes up to n_hi (and above the previous rule's).
struct DefaultRule {
  DType dtype;
  Op op;
  std::uint64_t n_hi;
  const char* kernel_id;
};

/// Every rule, sorted by (dtype, op, n_hi); the last rule of each (dtype, op) ends at
/// UINT64_MAX. Every id is an entry of the registry (a unit test checks every one).
std::span<const DefaultRule> builtin_default_rules() noexcept;

/// Registry id of the built-in default for (dtype, op) at n.
const char* builtin_default_id(DType dtype, Op op, std::uint64_t n) noexcept;

}  // namespace tunedreduce::runtime
