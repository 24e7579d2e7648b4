#pragma once
// The search space: for each (dtype, op) of the configuration, the registry ids to measure,
// taken from the manifest (kernels/manifest.hpp) and filtered by the configuration's axes. An
// axis a family does not have (the unroll factor of `interleaved`, the shared-memory mode of
// every family but `smem`) is ignored for that family.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/registry.hpp"
#include "tuner/config.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce::tuner {

/// One (dtype, op) of the space: its candidates (registry ids, in manifest order) and the grid
/// of sizes they are measured at.
struct KeySpace {
  DType dtype = DType::i32;
  Op op = Op::sum;
  std::vector<std::string> candidates;
  std::vector<std::uint64_t> sizes;

  /// The candidates that take \p n elements (kernels::max_elements_of: a `single_tile` entry
  /// takes one tile), in the same order. Only these are measured at n.
  std::vector<std::string> candidates_at(std::uint64_t n) const;
  /// candidates_at(n).size().
  std::size_t count_at(std::uint64_t n) const;
};

/// Does the entry with id \p id take \p n elements? False for an id the manifest lacks.
bool takes(std::string_view id, std::uint64_t n);

/// Does the configuration's space select \p p (dtype and op included)?
bool selects(const SpaceConfig& s, const kernels::KernelParams& p);

/// The candidates of one (dtype, op), in manifest (id) order.
std::vector<std::string> candidates_for(const SpaceConfig& s, DType dtype, Op op);

/// Every (dtype, op) of the space, dtypes outer, in the configuration's order; the pairs
/// op_applies refuses (exact_sum of an integer type, argmin of f16) and those no selected family
/// implements are left out.
std::vector<KeySpace> enumerate_space(const SpaceConfig& s);

/// Candidates times sizes over every key, counting at each size the candidates that take it.
std::size_t total_measurements(const std::vector<KeySpace>& keys);

}  // namespace tunedreduce::tuner
