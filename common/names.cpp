#include "names.hpp"

namespace tunedreduce {

std::optional<DType> parse_dtype(std::string_view s) {
  static constexpr auto long_names = enum_names<DType>({
      {DType::i32, "int32"},
      {DType::u32, "uint32"},
      {DType::i64, "int64"},
      {DType::u64, "uint64"},
      {DType::f32, "float"},
      {DType::f32, "float32"},
      {DType::f64, "double"},
      {DType::f64, "float64"},
      {DType::f16, "half"},
      {DType::f16, "float16"},
      {DType::bf16, "bfloat16"},
  });
  if (auto t = dtype_names.from_name(s)) return t;
  return long_names.from_name(s);
}

std::optional<Op> parse_op(std::string_view s) { return op_names.from_name(s); }

std::string dtype_choices() { return dtype_names.joined(); }

std::string op_choices() { return op_names.joined(); }

std::string op_dtypes(Op o) {
  std::string out;
  std::size_t count = 0, total = 0;
  for (DType t : all_dtypes) total += op_applies(t, o);
  for (DType t : all_dtypes) {
    if (!op_applies(t, o)) continue;
    if (count++) out += count == total ? " and " : ", ";
    out += dtype_name(t);
  }
  return out;
}

}  // namespace tunedreduce
