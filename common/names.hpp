#pragma once
// Parsing of the user-facing names of element types and operators.

#include <optional>
#include <string>
#include <string_view>

#include "tunedreduce/types.hpp"

namespace tunedreduce {

/// Accepts the short names ("i32", "f64") and the long ones ("int32", "uint64", "float",
/// "double", "float32", "float64").
std::optional<DType> parse_dtype(std::string_view s);
std::optional<Op> parse_op(std::string_view s);

/// "i32, u32, i64, u64, f32, f64" — for error messages.
std::string dtype_choices();
std::string op_choices();

}  // namespace tunedreduce
