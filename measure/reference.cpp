#include "measure/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/names.hpp"
#include "exact/reference.hpp"
#include "measure/datagen.hpp"

namespace tunedreduce::measure {

namespace {

/// Threads a reference is computed on: one a core, at most 32.
unsigned reference_threads() {
  return std::max(1u, std::min<unsigned>(32, std::thread::hardware_concurrency()));
}

template <class T>
struct Partial {
  T value{};
  std::int64_t index = -1;  // argmin / argmax: the index of value (-1: no element yet)
  std::uint64_t isum = 0;
  long double fsum = 0, abs_sum = 0;
  bool nan = false;
};

/// The identities of min and max over T (types.hpp's op_table).
template <class T>
T min_identity() {
  return identity_value<T>(op_info(Op::min).identity);
}
template <class T>
T max_identity() {
  return identity_value<T>(op_info(Op::max).identity);
}

/// argmin / argmax: whether x is strictly better than y (more extreme, or a NaN against a number;
/// the kernels' ArgOp::better, written again here so that the reference does not share the
/// kernels' code).
template <class T>
bool arg_better(Op op, T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && !std::isnan(y);
  }
  return op == Op::argmin ? x < y : x > y;
}

/// Folds (x, i) into p, every index p has seen being smaller than i: the first extreme element.
template <class T>
void arg_fold(Op op, Partial<T>& p, T x, std::int64_t i) {
  if (p.index < 0 || arg_better(op, x, p.value)) {
    p.value = x;
    p.index = i;
  }
}

/// absmax: x's bits less the sign bit, which order the magnitudes of the IEEE formats with every
/// NaN above the infinities (types.hpp's Op::absmax).
template <class T>
std::uint64_t magnitude_bits(T x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof(T));  // little-endian: the low bytes
  return b & ((std::uint64_t{1} << (8 * sizeof(T) - 1)) - 1);
}

template <class T>
Partial<T> fold_range(Op op, std::uint64_t seed, std::uint64_t begin, std::uint64_t end) {
  Partial<T> p;
  if constexpr (!is_half_v<T>)
    p.value = op == Op::min || op == Op::argmin ? min_identity<T>() : max_identity<T>();
  for (std::uint64_t i = begin; i < end; ++i) {
    const T x = data_value<T>(seed, i);
    if (op == Op::absmax) {  // the largest magnitude's bits, in isum
      p.isum = std::max(p.isum, magnitude_bits(x));
      continue;
    }
    if constexpr (is_half_v<T>) {  // wide_sum (exact_sum returned above; op_applies)
      const long double v = to_float(x);
      p.fsum += v;
      p.abs_sum += std::fabs(v);
      continue;
    } else if (op_info(op).combine == Combine::add) {
      if constexpr (std::is_integral_v<T>) {
        p.isum += static_cast<std::uint64_t>(x);
      } else {
        p.fsum += x;
        p.abs_sum += std::fabs(static_cast<long double>(x));
      }
    } else if (is_arg_op(op)) {
      arg_fold(op, p, x, static_cast<std::int64_t>(i));
    } else if (op == Op::min) {
      p.value = x < p.value ? x : p.value;
    } else {
      p.value = x > p.value ? x : p.value;
    }
  }
  return p;
}

/// exact_sum's result type for elements of T: T itself, float for the half types (types.hpp,
/// result_dtype), whose values are floats exactly (datagen.hpp's to_float).
template <class T>
using exact_t = std::conditional_t<is_half_v<T>, float, T>;

/// exact_sum: the host's exact reference (exact/reference.hpp) over the regenerated values (a
/// half type's decoded to floats), one accumulator per thread, merged (exactly) at the end.
template <class T>
Reference exact_reference_of(DType dtype, std::uint64_t seed, std::uint64_t lo, std::uint64_t hi) {
  using R = exact_t<T>;
  const std::uint64_t n = hi - lo;
  const unsigned parts = n < (1u << 16) ? 1 : reference_threads();
  std::vector<exact::ReferenceSum<R>> partial(parts);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < parts; ++t)
    pool.emplace_back([&, t] {
      std::vector<R> block;
      block.reserve(4096);
      const std::uint64_t end = lo + n * (t + 1) / parts;
      for (std::uint64_t i = lo + n * t / parts; i < end;) {
        block.clear();
        for (; i < end && block.size() < 4096; ++i) {
          if constexpr (is_half_v<T>) block.push_back(to_float(data_value<T>(seed, i)));
          else block.push_back(data_value<T>(seed, i));
        }
        partial[t].add(block);
      }
    });
  for (auto& th : pool) th.join();
  for (unsigned t = 1; t < parts; ++t) partial[0].merge(partial[t]);
  Reference r;
  r.dtype = dtype;
  r.op = Op::exact_sum;
  r.n = n;
  // No values give +0, the library's n = 0 (exact/reference.hpp). The result type's bytes:
  // a float's 4 for the half types (result_bytes), which verify compares bit for bit.
  const R value = partial[0].result();
  std::memcpy(r.bits, &value, sizeof(R));
  return r;
}

/// wide_sum's result type for elements of T (types.hpp's dtype_table): int64_t, uint64_t,
/// double for the 32-bit types; T itself for the others, which wide_sum refuses. (The half
/// types' float is written apart.)
template <class T>
using wide_t = dtype_t<dtype_info(dtype_of<T>).wide>;

/// The reference of the elements [lo, hi) from the partial folds of consecutive parts of them,
/// in order (argmin and argmax: the index counted from lo). Allocates nothing: what a segment's
/// reference is made with, once per segment.
template <class T>
Reference assemble(DType dtype, Op op, std::uint64_t lo, std::uint64_t hi,
                   std::span<const Partial<T>> partial) {
  Reference r;
  r.dtype = dtype;
  r.op = op;
  r.n = hi - lo;
  if (op == Op::absmax) {  // the largest of the partials' magnitude bits; +0 for no element
    std::uint64_t m = 0;
    for (auto& p : partial) m = std::max(m, p.isum);
    std::memcpy(r.bits, &m, sizeof(T));  // little-endian: the low bytes, the element type's
    return r;
  }
  // Floating-point sums: the partials' long-double sums (zero for min and max).
  if constexpr (!std::is_integral_v<T>) {
    for (auto& p : partial) {
      r.fp_sum += p.fsum;
      r.abs_sum += p.abs_sum;
    }
  }
  if constexpr (is_half_v<T>) {
    // wide_sum into float (exact_sum returned above): the long-double sum, rounded once to float.
    const auto wide = static_cast<float>(r.fp_sum);
    std::memcpy(r.bits, &wide, sizeof wide);
    return r;
  } else {
    T value{};
    if (op_info(op).combine == Combine::add) {
      // Integers: the sum modulo 2^64 of the values sign- or zero-extended, whose low 32 bits are
      // the 32-bit sum's and all 64 the wide sum's. Floats: the long-double sum, rounded once to
      // the result's type.
      wide_t<T> wide{};
      if constexpr (std::is_integral_v<T>) {
        std::uint64_t s = 0;
        for (auto& p : partial) s += p.isum;
        value = static_cast<T>(s);
        wide = static_cast<wide_t<T>>(s);
      } else {
        value = static_cast<T>(r.fp_sum);
        wide = static_cast<wide_t<T>>(r.fp_sum);
      }
      if (op == Op::wide_sum) {
        std::memcpy(r.bits, &wide, sizeof wide);
        return r;
      }
    } else if (is_arg_op(op)) {
      // The partials in index order: the first extreme element of the whole input.
      Partial<T> best;
      best.value = op == Op::argmin ? min_identity<T>() : max_identity<T>();
      for (auto& p : partial)
        if (p.index >= 0) arg_fold(op, best, p.value, p.index);
      // The index counted from lo (a segment's result: the position within it); -1: no element.
      const std::int64_t index = best.index < 0 ? -1 : best.index - static_cast<std::int64_t>(lo);
      const IndexedValue<T> result{best.value, index};
      std::memcpy(r.bits, &result, sizeof result);
      return r;
    } else {
      value = op == Op::min ? min_identity<T>() : max_identity<T>();
      for (auto& p : partial)
        value = op == Op::min ? std::min(value, p.value) : std::max(value, p.value);
    }
    std::memcpy(r.bits, &value, sizeof(T));
    return r;
  }
}

void check_applies(DType dtype, Op op) {
  if (!op_applies(dtype, op))
    throw std::invalid_argument(std::string(op_name(op)) + " is defined for " + op_dtypes(op) +
                                " only, not " + dtype_name(dtype));
}

/// The reference of the elements [lo, hi), on several threads when there are many.
template <class T>
Reference reference_of(DType dtype, Op op, std::uint64_t seed, std::uint64_t lo, std::uint64_t hi) {
  check_applies(dtype, op);
  if constexpr (std::is_floating_point_v<T> || is_half_v<T>)
    if (op == Op::exact_sum) return exact_reference_of<T>(dtype, seed, lo, hi);
  const std::uint64_t n = hi - lo;
  if (n < (1u << 16)) {
    const Partial<T> p = fold_range<T>(op, seed, lo, hi);
    return assemble<T>(dtype, op, lo, hi, std::span(&p, 1));
  }
  const unsigned parts = reference_threads();
  std::vector<Partial<T>> partial(parts);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < parts; ++t)
    pool.emplace_back([&, t] {
      partial[t] = fold_range<T>(op, seed, lo + n * t / parts, lo + n * (t + 1) / parts);
    });
  for (auto& th : pool) th.join();
  return assemble<T>(dtype, op, lo, hi, std::span<const Partial<T>>(partial));
}

/// argmin / argmax: the value's bits and the index, exactly.
template <class T>
std::string verify_indexed(const Reference& ref, const void* got_bytes) {
  IndexedValue<T> got, want;
  std::memcpy(&got, got_bytes, sizeof got);
  std::memcpy(&want, ref.bits, sizeof want);
  if (std::memcmp(&got.value, &want.value, sizeof(T)) == 0 && got.index == want.index) return {};
  std::ostringstream msg;
  msg.precision(std::is_same_v<T, float> ? 9 : 17);
  msg << "result {value ";
  if constexpr (std::is_integral_v<T>)
    msg << +got.value << ", index " << got.index << "}, expected {value " << +want.value;
  else msg << got.value << ", index " << got.index << "}, expected {value " << want.value;
  msg << ", index " << want.index << "} (" << op_name(ref.op)
      << ": the first index of the extreme value)";
  return msg.str();
}

template <class T>
std::string verify_as(const Reference& ref, const void* got_bytes) {
  T got, want;
  std::memcpy(&got, got_bytes, sizeof(T));
  std::memcpy(&want, ref.bits, sizeof(T));
  // The message is made for a failure only: a segmented result is verified segment by segment,
  // up to 2^30 of them, each without an allocation (verify_segments).
  if constexpr (std::is_floating_point_v<T>) {
    // T is the result's (and the accumulator's) type: the bound is in its epsilon.
    if (op_info(ref.op).combine == Combine::add) {
      const long double bound =
          static_cast<long double>(ref.n) * std::numeric_limits<T>::epsilon() * ref.abs_sum;
      const long double diff = std::fabs(static_cast<long double>(got) - ref.fp_sum);
      if (std::isfinite(got) && diff <= bound) return {};
      std::ostringstream msg;
      msg.precision(std::is_same_v<T, float> ? 9 : 17);
      msg << "result " << got << " differs from the reference " << static_cast<double>(ref.fp_sum)
          << " by " << static_cast<double>(diff)
          << ", more than n*eps*sum|x| = " << static_cast<double>(bound);
      return msg.str();
    }
  }
  if (std::memcmp(&got, &want, sizeof(T)) == 0) return {};
  std::ostringstream msg;
  msg.precision(std::is_same_v<T, float> ? 9 : 17);
  if constexpr (std::is_integral_v<T>) msg << "result " << +got << ", expected " << +want;
  else msg << "result " << got << ", expected " << want;
  if (ref.op == Op::exact_sum) {
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    Bits gb, wb;
    std::memcpy(&gb, &got, sizeof(T));
    std::memcpy(&wb, &want, sizeof(T));
    msg << std::hex << " (bits 0x" << gb << ", the exact reference's 0x" << wb
        << ": exact_sum must match them bit for bit)";
  }
  return msg.str();
}

/// A result of a half type (absmax of f16 or bf16): its bits exactly.
template <class H>
std::string verify_half(const Reference& ref, const void* got_bytes) {
  H got, want;
  std::memcpy(&got, got_bytes, sizeof got);
  std::memcpy(&want, ref.bits, sizeof want);
  if (got.bits == want.bits) return {};
  std::ostringstream msg;
  msg.precision(9);
  msg << "result " << to_float(got) << ", expected " << to_float(want) << std::hex << " (bits 0x"
      << got.bits << ", expected 0x" << want.bits << ")";
  return msg.str();
}

/// verify_segments over elements of T: the segments [first, first + count), each against its
/// own reference; a thread for each run of consecutive segments when there are many, else one
/// segment after the other, each on several threads (a few long segments). The first segment
/// that fails, and why.
template <class T>
std::string verify_segments_of(DType dtype, Op op, std::uint64_t seed, std::uint64_t size,
                               std::uint64_t first, std::uint64_t count, const unsigned char* got) {
  check_applies(dtype, op);
  if (op == Op::exact_sum)
    throw std::invalid_argument("exact_sum has no segmented reduction to verify");
  const std::size_t bytes = result_bytes(dtype, op);
  auto explain = [&](std::uint64_t i, const std::string& why) {
    const std::uint64_t s = first + i;
    return "segment " + std::to_string(s) + " (elements " + std::to_string(s * size) + " to " +
           std::to_string((s + 1) * size - 1) + "): " + why;
  };
  // One segment's check: a Reference on the stack, verify's rules, no allocation unless it fails.
  auto check = [&](std::uint64_t i) {
    const std::uint64_t lo = (first + i) * size;
    const Partial<T> p = fold_range<T>(op, seed, lo, lo + size);
    return verify(assemble<T>(dtype, op, lo, lo + size, std::span(&p, 1)), got + i * bytes);
  };
  const unsigned threads = reference_threads();
  if (count < threads || count * size < (1u << 16)) {
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t lo = (first + i) * size;
      // reference_of: on several threads where the segment is long, as check(i) where not.
      std::string why = verify(reference_of<T>(dtype, op, seed, lo, lo + size), got + i * bytes);
      if (!why.empty()) return explain(i, why);
    }
    return {};
  }
  // Each thread its run of segments, stopping at its first failure; the lowest one is reported.
  std::vector<std::string> failure(threads);
  std::vector<std::uint64_t> where(threads, count);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const std::uint64_t end = count * (t + 1) / threads;
      for (std::uint64_t i = count * t / threads; i < end; ++i) {
        if (std::string why = check(i); !why.empty()) {
          failure[t] = std::move(why);
          where[t] = i;
          return;
        }
      }
    });
  for (auto& th : pool) th.join();
  for (unsigned t = 0; t < threads; ++t)
    if (where[t] < count) return explain(where[t], failure[t]);
  return {};
}

}  // namespace

std::uint64_t data_seed(std::uint64_t run_seed, DType dtype) {
  return mix64(run_seed + 0x100 * (static_cast<std::uint64_t>(dtype) + 1));
}

Reference compute_reference(DType dtype, Op op, std::uint64_t seed, std::uint64_t n) {
  return visit_dtype(dtype,
                     [&](auto t) { return reference_of<data_t<t.value>>(dtype, op, seed, 0, n); });
}

std::string verify_segments(DType dtype, Op op, std::uint64_t seed, std::uint64_t segment_size,
                            std::uint64_t first, std::uint64_t count, const void* results) {
  if (count == 0) return {};
  if (segment_size == 0) throw std::invalid_argument("verify_segments: a segment size of 0");
  return visit_dtype(dtype, [&](auto t) {
    return verify_segments_of<data_t<t.value>>(dtype, op, seed, segment_size, first, count,
                                               static_cast<const unsigned char*>(results));
  });
}

std::string verify(const Reference& ref, const void* got) {
  if (!is_valid(ref.dtype) || !is_valid(ref.op)) return "unknown element type";
  if (is_arg_op(ref.op)) {
    return visit_dtype(ref.dtype, [&](auto t) -> std::string {
      if constexpr (is_half(t.value)) return "unknown element type";  // op_applies refuses them
      else return verify_indexed<dtype_t<t.value>>(ref, got);
    });
  }
  return visit_dtype(result_dtype(ref.dtype, ref.op), [&](auto t) -> std::string {
    if constexpr (is_half(t.value)) return verify_half<data_t<t.value>>(ref, got);  // absmax
    else return verify_as<dtype_t<t.value>>(ref, got);
  });
}

}  // namespace tunedreduce::measure
