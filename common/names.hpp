#pragma once
// The user-facing names of element types and operators: the public header's dtype_name and
// op_name as tables (common/enum_names.hpp), and their parsing.

#include <optional>
#include <string>
#include <string_view>

#include "common/enum_names.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce {

/// "i32" ... "bf16" and "sum" ... "argmax": the names of tunedreduce/types.hpp, not written again.
inline constexpr auto dtype_names = enum_names_of(all_dtypes, dtype_name);
inline constexpr auto op_names = enum_names_of(all_ops, op_name);

/// Accepts the short names ("i32", "f64") and the long ones ("int32", "uint64", "float",
/// "double", "float32", "float64", "half", "float16", "bfloat16").
std::optional<DType> parse_dtype(std::string_view s);
std::optional<Op> parse_op(std::string_view s);

/// "i32, u32, i64, u64, f32, f64, f16, bf16" and "sum, min, max, exact_sum, wide_sum, argmin,
/// argmax" — for error messages and help texts.
std::string dtype_choices();
std::string op_choices();
/// The element types operator \p o is defined for (op_applies): "i32, u32, f32, f16 and bf16"
/// for wide_sum, "f32, f64, f16 and bf16" for exact_sum, "i32, u32, i64, u64, f32 and f64" (the 4-
/// and 8-byte types) for the others: sum, min, max, argmin and argmax.
std::string op_dtypes(Op o);

}  // namespace tunedreduce
