#pragma once
// Host references for the measured data (measure/datagen.hpp), computed by regenerating the values
// on several threads: no copy of the input is needed. Integer sums are exact modulo 2^bits,
// floating-point sums are carried in long double together with sum|x|, min and max are exact,
// and exact_sum is the host's exact reference (exact/reference.hpp), matched bit for bit (of f16
// and bf16: their values' exact sum rounded once to float, the result type).

#include <cstdint>
#include <string>

#include "tunedreduce/types.hpp"

namespace tunedreduce::measure {

/// The reference of one (dtype, op, n) for one seed. `bits` holds the exact result's bytes
/// (integers, min, max) or the long-double sum rounded to the result's type (float sums), in the
/// result's type (result_dtype: 8 bytes for wide_sum of the 32-bit types, a float for wide_sum and
/// exact_sum of f16 and bf16; argmin and argmax: the IndexedValue of the first extreme element,
/// 16 bytes, result_bytes).
struct Reference {
  DType dtype = DType::i32;
  Op op = Op::sum;
  std::uint64_t n = 0;
  unsigned char bits[16] = {};
  long double fp_sum = 0;
  long double abs_sum = 0;
};

/// Throws std::invalid_argument for a pair op_applies refuses (exact_sum of an integer type,
/// wide_sum of a 64-bit one).
Reference compute_reference(DType dtype, Op op, std::uint64_t seed, std::uint64_t n);

/// Checks a result (the result type's bytes at \p got) against the reference: exact for integers,
/// min, max and exact_sum (bit for bit), argmin and argmax (the value's bits and the index); within
/// n * eps * sum|x| for floating-point sums, eps the result type's (double's for wide_sum of f32).
/// Empty when it passes, else a sentence saying what was expected.
std::string verify(const Reference& ref, const void* got);

/// Checks the \p count results at \p results (result_bytes(dtype, op) each, back to back) of a
/// segmented reduction of the data of \p seed in segments of \p segment_size elements: result i
/// is segment first + i's, the elements [(first + i) * segment_size, (first + i + 1) *
/// segment_size). Each is compared with verify's rules against the reference of its own elements
/// (n: the segment size; argmin and argmax: the index within the segment, of its first extreme
/// element). Linear in the elements, no allocation a segment, on several threads. Empty when
/// every result passes, else the first segment that fails, its elements, and why. Throws
/// std::invalid_argument for a pair op_applies refuses, for exact_sum (no segmented kernels)
/// and for a segment size of 0.
std::string verify_segments(DType dtype, Op op, std::uint64_t seed, std::uint64_t segment_size,
                            std::uint64_t first, std::uint64_t count, const void* results);

/// The data seed of one element type for a run seed (each type gets its own stream).
std::uint64_t data_seed(std::uint64_t run_seed, DType dtype);

}  // namespace tunedreduce::measure
