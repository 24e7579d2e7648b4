#include "names.hpp"

namespace tunedreduce {

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : all_dtypes)
    if (s == dtype_name(t)) return t;
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias aliases[] = {
      {"int32", DType::i32},   {"uint32", DType::u32},  {"int64", DType::i64},
      {"uint64", DType::u64},  {"float", DType::f32},   {"float32", DType::f32},
      {"double", DType::f64},  {"float64", DType::f64},
  };
  for (const Alias& a : aliases)
    if (s == a.name) return a.type;
  return std::nullopt;
}

std::optional<Op> parse_op(std::string_view s) {
  for (Op o : all_ops)
    if (s == op_name(o)) return o;
  return std::nullopt;
}

std::string dtype_choices() {
  std::string out;
  for (DType t : all_dtypes) {
    if (!out.empty()) out += ", ";
    out += dtype_name(t);
  }
  return out;
}

std::string op_choices() {
  std::string out;
  for (Op o : all_ops) {
    if (!out.empty()) out += ", ";
    out += op_name(o);
  }
  return out;
}

}  // namespace tunedreduce
