#pragma once
/// \file
/// Element types and reduction operators understood by tunedreduce, and the facts of a lookup
/// (Level, CacheState) that tunedreduce.hpp's Config and segmented.hpp's SegmentedConfig share.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

// CUDA's two-byte floating-point types, declared as cuda_fp16.h and cuda_bf16.h declare them:
// the type mapping below names them without including either header.
struct __half;
struct __nv_bfloat16;

namespace tunedreduce {

/// Element type of a reduction; its facts are dtype_table's row. The accumulator and the result
/// have the element type (as in CUB), so integer sums wrap modulo 2^bits identically in every
/// kernel variant, except for Op::wide_sum, whose accumulator and result are wider
/// (result_dtype). f16 and bf16 are CUDA's __half and __nv_bfloat16 (IEEE binary16 and bfloat16,
/// two bytes each); so far they are reduced by wide_sum and exact_sum alone (op_applies), both
/// into a float.
enum class DType : std::uint8_t { i32, u32, i64, u64, f32, f64, f16, bf16 };

/// Reduction operator; its facts are op_table's row.
/// For floating-point min and max a NaN anywhere in the input gives NaN.
/// exact_sum, for f32, f64, f16 and bf16 only (op_applies): the true sum of the inputs rounded
/// once to nearest even to result_dtype (the element type; float for f16 and bf16), so the same
/// bits from every kernel, launch configuration and GPU; NaN if any input is NaN or both
/// infinities occur, ±Inf if one does or the rounded sum overflows.
/// wide_sum, for i32, u32, f32, f16 and bf16 only (op_applies): the sum accumulated in, and
/// returned as, a wider type (result_dtype: i64, u64, f64, and f32 for both half types), so a sum
/// of many 32-bit integers does not wrap at 2^32 (it wraps modulo 2^64), a float sum keeps
/// double's precision and a half-precision sum float's.
/// argmin and argmax, for the 4- and 8-byte types (op_applies): the smallest (largest) element
/// and its index, as an IndexedValue of the element type (result_bytes: 16 bytes); the first
/// index where several elements are equal (-0.0 equals +0.0); a NaN wins over every number, as
/// for min and max, so any NaN gives the first NaN and its index. n == 0 gives index -1 and the
/// value min (max) returns for n == 0.
/// absmax, for f32, f64, f16 and bf16 (op_applies): the largest magnitude |x|, in the element
/// type (the "amax" that FP8 and INT8 scaling take): -0.0 and +0.0 are equal, the result is never
/// negative, and a NaN anywhere gives a NaN (positive: a NaN of the input without its sign);
/// n == 0 gives +0.0.
enum class Op : std::uint8_t { sum, min, max, exact_sum, wide_sum, argmin, argmax, absmax };

/// What an element type's values are.
enum class NumberKind : std::uint8_t { signed_int, unsigned_int, floating };

/// One element type's facts. Its C++ type is dtype_traits<dtype>::type (below).
struct DTypeInfo {
  DType dtype;
  /// Short name used in registry ids, the database and the CLI.
  const char* name;
  /// The C++ type's name, for messages.
  const char* cpp_name;
  /// Bytes of one element.
  unsigned size;
  NumberKind kind;
  /// wide_sum's accumulator and result type: twice as wide for the 32-bit types, float for the
  /// two-byte ones; the type itself where there is none (wide_sum does not apply to it).
  DType wide;
};

/// THE element types, in DType order: what every layer (kernels, exact sums, references, runtime,
/// tuner, reports, the C and C++ API) knows of a type beyond its device code. A new element type
/// is a row here, an enumerator of DType and a dtype_traits specialization.
inline constexpr DTypeInfo dtype_table[] = {
    {DType::i32, "i32", "int32_t", 4, NumberKind::signed_int, DType::i64},
    {DType::u32, "u32", "uint32_t", 4, NumberKind::unsigned_int, DType::u64},
    {DType::i64, "i64", "int64_t", 8, NumberKind::signed_int, DType::i64},
    {DType::u64, "u64", "uint64_t", 8, NumberKind::unsigned_int, DType::u64},
    {DType::f32, "f32", "float", 4, NumberKind::floating, DType::f64},
    {DType::f64, "f64", "double", 8, NumberKind::floating, DType::f64},
    {DType::f16, "f16", "__half", 2, NumberKind::floating, DType::f32},
    {DType::bf16, "bf16", "__nv_bfloat16", 2, NumberKind::floating, DType::f32},
};

/// Which element types an operator is defined for (op_applies).
enum class OpDomain : std::uint8_t {
  full_width,  ///< the 4- and 8-byte types: every type but the two-byte floating-point ones
  floating,    ///< every floating-point type
  widenable,   ///< every type with a wider one (DTypeInfo::wide differs from it)
};

/// The type of an operator's result and accumulator (result_dtype), from the element type.
enum class OpResult : std::uint8_t {
  element,           ///< the element type (argmin, argmax: an IndexedValue of it)
  wide,              ///< DTypeInfo::wide
  wide_if_two_byte,  ///< the element type, DTypeInfo::wide (float) for the two-byte types
};

/// How an operator combines two values: what its device functor and its host reference compute.
enum class Combine : std::uint8_t {
  add,            ///< the sum, rounded as the accumulator's type rounds (integers wrap)
  exact_add,      ///< the true sum, rounded once (exact/)
  min,            ///< the smaller; a NaN wins
  max,            ///< the larger; a NaN wins
  max_magnitude,  ///< the larger magnitude, its sign dropped; a NaN wins
};

/// The identity of an operator's combination over a type T (identity_value).
enum class Identity : std::uint8_t {
  zero,       ///< 0; -0.0 for floating-point T (x + -0.0 == x for every x, -0.0 included)
  highest,    ///< T's largest value, +inf for floating-point T
  lowest,     ///< T's smallest value, -inf for floating-point T
  none,       ///< no value of T: the accumulator is not a T (exact_sum)
  plus_zero,  ///< +0.0: the smallest magnitude (absmax)
};

/// One operator's facts.
struct OpInfo {
  Op op;
  /// Its name in registry ids, the database and the CLI.
  const char* name;
  Combine combine;
  /// argmin, argmax: the result is the extreme element and its index (an IndexedValue).
  bool is_arg;
  OpDomain domain;
  OpResult result;
  Identity identity;
};

/// THE operators, in Op order (each one's semantics: Op's comment). A new operator is a row
/// here, an enumerator of Op, its device functor (kernels/thread/ops.cuh's op_traits) and its
/// host reference (measure/reference.cpp).
inline constexpr OpInfo op_table[] = {
    {Op::sum, "sum", Combine::add, false, OpDomain::full_width, OpResult::element, Identity::zero},
    {Op::min, "min", Combine::min, false, OpDomain::full_width, OpResult::element,
     Identity::highest},
    {Op::max, "max", Combine::max, false, OpDomain::full_width, OpResult::element,
     Identity::lowest},
    {Op::exact_sum, "exact_sum", Combine::exact_add, false, OpDomain::floating,
     OpResult::wide_if_two_byte, Identity::none},
    {Op::wide_sum, "wide_sum", Combine::add, false, OpDomain::widenable, OpResult::wide,
     Identity::zero},
    {Op::argmin, "argmin", Combine::min, true, OpDomain::full_width, OpResult::element,
     Identity::highest},
    {Op::argmax, "argmax", Combine::max, true, OpDomain::full_width, OpResult::element,
     Identity::lowest},
    {Op::absmax, "absmax", Combine::max_magnitude, false, OpDomain::floating, OpResult::element,
     Identity::plus_zero},
};

namespace detail {
template <class Row, std::size_t N>
constexpr bool rows_in_enum_order(const Row (&table)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if constexpr (std::is_same_v<Row, DTypeInfo>) {
      if (static_cast<std::size_t>(table[i].dtype) != i) return false;
    } else {
      if (static_cast<std::size_t>(table[i].op) != i) return false;
    }
  }
  return true;
}
}  // namespace detail
static_assert(detail::rows_in_enum_order(dtype_table), "dtype_table: one row per DType, in order");
static_assert(detail::rows_in_enum_order(op_table), "op_table: one row per Op, in order");

/// Number of element types and of operators.
inline constexpr std::size_t dtype_count = std::size(dtype_table);
inline constexpr std::size_t op_count = std::size(op_table);

/// Whether \p t (\p o) is one of the enumerators (a value from outside, e.g. the C API, may not
/// be).
constexpr bool is_valid(DType t) noexcept { return static_cast<std::size_t>(t) < dtype_count; }
constexpr bool is_valid(Op o) noexcept { return static_cast<std::size_t>(o) < op_count; }

/// The row of \p t (\p o), which must be valid.
constexpr const DTypeInfo& dtype_info(DType t) noexcept {
  return dtype_table[static_cast<std::size_t>(t)];
}
constexpr const OpInfo& op_info(Op o) noexcept { return op_table[static_cast<std::size_t>(o)]; }

namespace detail {
template <class Seq>
struct enum_lists;
template <std::size_t... I>
struct enum_lists<std::index_sequence<I...>> {
  static constexpr DType dtypes[] = {dtype_table[I].dtype...};
};
template <class Seq>
struct op_lists;
template <std::size_t... I>
struct op_lists<std::index_sequence<I...>> {
  static constexpr Op ops[] = {op_table[I].op...};
};
}  // namespace detail

/// Every element type and every operator, in enum order (the tables' first column).
inline constexpr const DType (&all_dtypes)[dtype_count] =
    detail::enum_lists<std::make_index_sequence<dtype_count>>::dtypes;
inline constexpr const Op (&all_ops)[op_count] =
    detail::op_lists<std::make_index_sequence<op_count>>::ops;

/// The result of argmin and argmax: the element and its index in the input (index -1 for an
/// empty input). 16 bytes for every element type (8-byte aligned), the same layout as the C
/// API's tr_indexed_* structs.
template <class T>
struct IndexedValue {
  T value;
  std::int64_t index;
};

/// Whether \p o is argmin or argmax (its result is an IndexedValue).
constexpr bool is_arg_op(Op o) noexcept { return op_info(o).is_arg; }

/// Whether element type \p t is one of the two-byte floating-point types (f16, bf16).
constexpr bool is_half(DType t) noexcept {
  return dtype_info(t).size == 2 && dtype_info(t).kind == NumberKind::floating;
}

/// Whether operator \p o is defined for element type \p t (op_table's domain): sum, min, max,
/// argmin and argmax for the 4- and 8-byte types, exact_sum and absmax for f32, f64, f16 and bf16
/// only, wide_sum for i32, u32, f32, f16 and bf16 only.
/// Whatever iterates all_dtypes x all_ops skips the pairs this refuses.
constexpr bool op_applies(DType t, Op o) noexcept {
  switch (op_info(o).domain) {
    case OpDomain::full_width:
      return !is_half(t);
    case OpDomain::floating:
      return dtype_info(t).kind == NumberKind::floating;
    case OpDomain::widenable:
      return dtype_info(t).wide != t;
  }
  return false;
}

/// The type of the result (and of the accumulator) of \p o over elements of \p t (op_table's
/// result rule): the element type, except for wide_sum: i32 -> i64, u32 -> u64, f32 -> f64, f16
/// and bf16 -> f32, and exact_sum of f16 and bf16: f32 (the true sum rounded once to float). For
/// argmin and argmax, the type of the result's value (the element type; the result is an
/// IndexedValue of it, result_bytes). Meaningful where op_applies.
constexpr DType result_dtype(DType t, Op o) noexcept {
  switch (op_info(o).result) {
    case OpResult::element:
      return t;
    case OpResult::wide:
      return dtype_info(t).wide;
    case OpResult::wide_if_two_byte:
      return is_half(t) ? dtype_info(t).wide : t;
  }
  return t;
}

/// Size of one element of \p t in bytes.
constexpr unsigned dtype_size(DType t) noexcept { return dtype_info(t).size; }

/// Short name used in registry ids, the database and the CLI: "i32", "u32", "i64", "u64",
/// "f32", "f64", "f16", "bf16"; "?" for a value outside the enum.
constexpr const char* dtype_name(DType t) noexcept {
  return is_valid(t) ? dtype_info(t).name : "?";
}

/// Bytes of the result of \p o over elements of \p t: 16 for argmin and argmax (an IndexedValue),
/// else the size of result_dtype.
constexpr unsigned result_bytes(DType t, Op o) noexcept {
  return is_arg_op(o) ? 16 : dtype_size(result_dtype(t, o));
}

/// "sum", "min", "max", "exact_sum", "wide_sum", "argmin", "argmax" or "absmax"; "?" for a value
/// outside the enum.
constexpr const char* op_name(Op o) noexcept { return is_valid(o) ? op_info(o).name : "?"; }

/// The element type (operator) whose short name is \p s, as dtype_name (op_name) writes it.
constexpr std::optional<DType> dtype_from_name(std::string_view s) noexcept {
  for (const DTypeInfo& d : dtype_table)
    if (s == d.name) return d.dtype;
  return std::nullopt;
}
constexpr std::optional<Op> op_from_name(std::string_view s) noexcept {
  for (const OpInfo& o : op_table)
    if (s == o.name) return o.op;
  return std::nullopt;
}

/// The value of \p id for an arithmetic type T (Identity).
template <class T>
constexpr T identity_value(Identity id) noexcept {
  constexpr bool fp = std::is_floating_point_v<T>;
  switch (id) {
    case Identity::highest:
      if constexpr (fp) return std::numeric_limits<T>::infinity();
      else return std::numeric_limits<T>::max();
    case Identity::lowest:
      if constexpr (fp) return -std::numeric_limits<T>::infinity();
      else return std::numeric_limits<T>::lowest();
    case Identity::plus_zero:
      return T(0);
    default:
      if constexpr (fp) return -T(0);
      else return T(0);
  }
}

/// THE mapping of element types to C++ types: dtype_traits<D>::type (dtype_t<D>) is D's type,
/// and dtype_of<T> is T's element type. The two-byte types are CUDA's __half and __nv_bfloat16
/// (complete where cuda_fp16.h and cuda_bf16.h are included).
template <DType D>
struct dtype_traits;
template <>
struct dtype_traits<DType::i32> {
  using type = std::int32_t;
};
template <>
struct dtype_traits<DType::u32> {
  using type = std::uint32_t;
};
template <>
struct dtype_traits<DType::i64> {
  using type = std::int64_t;
};
template <>
struct dtype_traits<DType::u64> {
  using type = std::uint64_t;
};
template <>
struct dtype_traits<DType::f32> {
  using type = float;
};
template <>
struct dtype_traits<DType::f64> {
  using type = double;
};
template <>
struct dtype_traits<DType::f16> {
  using type = ::__half;
};
template <>
struct dtype_traits<DType::bf16> {
  using type = ::__nv_bfloat16;
};
template <DType D>
using dtype_t = typename dtype_traits<D>::type;

namespace detail {
/// The row whose C++ type is T, or else the integer row of T's size and signedness (an integer
/// type such as long long where int64_t is long), or -1.
template <class T, std::size_t... I>
constexpr int dtype_row_of(std::index_sequence<I...>) {
  int row = -1;
  ((row = row < 0 && std::is_same_v<T, dtype_t<dtype_table[I].dtype>> ? int(I) : row), ...);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>) {
    const NumberKind kind = std::is_signed_v<T> ? NumberKind::signed_int : NumberKind::unsigned_int;
    for (std::size_t i = 0; row < 0 && i < dtype_count; ++i)
      if (dtype_table[i].kind == kind && dtype_table[i].size == sizeof(T)) row = int(i);
  }
  return row;
}
template <class T>
constexpr DType dtype_of() {
  constexpr int row = dtype_row_of<T>(std::make_index_sequence<dtype_count>{});
  static_assert(row >= 0,
                "tunedreduce reduces 32- and 64-bit integers, float and double, and __half and "
                "__nv_bfloat16 into a float (sum<__half, float>)");
  return row >= 0 ? dtype_table[row].dtype : DType{};
}
}  // namespace detail

/// The DType of T (int32_t, uint32_t, int64_t, uint64_t, float, double, or an integer type of
/// the same size and signedness; __half and __nv_bfloat16).
template <class T>
inline constexpr DType dtype_of = detail::dtype_of<std::remove_cv_t<T>>();

namespace detail {
template <class F, std::size_t... I>
constexpr decltype(auto) visit_dtype(DType t, F&& f, std::index_sequence<I...>) {
  using R = decltype(f(std::integral_constant<DType, dtype_table[0].dtype>{}));
  if constexpr (std::is_void_v<R>) {
    ((static_cast<std::size_t>(t) == I
          ? (void)f(std::integral_constant<DType, dtype_table[I].dtype>{})
          : (void)0),
     ...);
  } else {
    R r{};
    ((static_cast<std::size_t>(t) == I
          ? (void)(r = f(std::integral_constant<DType, dtype_table[I].dtype>{}))
          : (void)0),
     ...);
    return r;
  }
}

template <class F, std::size_t... I>
constexpr void for_each_dtype(F&& f, std::index_sequence<I...>) {
  (f(std::integral_constant<DType, dtype_table[I].dtype>{}), ...);
}
}  // namespace detail

/// Calls f(std::integral_constant<DType, D>{}) for the D equal to \p t and returns its result:
/// a switch over every element type, written once. Every call of f must return the same type.
/// (C++17, as the whole API: no template lambdas.)
template <class F>
constexpr decltype(auto) visit_dtype(DType t, F&& f) {
  return detail::visit_dtype(t, std::forward<F>(f), std::make_index_sequence<dtype_count>{});
}

/// Calls f(std::integral_constant<DType, D>{}) for every element type D, in enum order.
template <class F>
constexpr void for_each_dtype(F&& f) {
  detail::for_each_dtype(std::forward<F>(f), std::make_index_sequence<dtype_count>{});
}

/// How a configuration was found (docs/library.md, "Lookup order and levels").
enum class Level : int {
  exact = 1,            ///< this device, a tuned size interval containing n
  nearest = 2,          ///< this device, the nearest tuned interval, within a factor of 4 of n
  same_model = 3,       ///< another device with the same compute capability, SM count and
                        ///< memory system (bus width, memory clock, L2 size)
  builtin_default = 4,  ///< no usable tuning data: the built-in default for (dtype, op, n)
};

/// "exact", "nearest", "same_model", "default".
const char* level_name(Level l) noexcept;

/// Where the input is expected to be when a reduction starts: the L2 state the tuner measured
/// a winner in (`tune.toml`'s `[measure] l2`). A database may hold winners of both states for
/// the same sizes; the library prefers those of the state set here and falls back to the other
/// state's before it leaves the device (docs/library.md, "Cache state").
enum class CacheState : int {
  cold = 0,  ///< the input is in device memory, not in L2 (the default: data read once)
  warm = 1,  ///< the input was just written or read and is still in L2
};

/// "cold", "warm".
const char* cache_state_name(CacheState s) noexcept;

}  // namespace tunedreduce
