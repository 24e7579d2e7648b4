#pragma once
/// \file
/// libtunedreduce: device-wide reductions that run the kernel tuned for this GPU.
///
/// The typed functions are thin inline wrappers over non-template functions compiled into the
/// library: code that includes this header never instantiates a kernel. Nothing here includes
/// SQLite or kernel templates. See docs/library.md.
///
/// \code
///   float* d_out;                      // one element of device memory
///   tunedreduce::sum(d_in, d_out, n, stream);
///   auto cfg = tunedreduce::lookup<float>(tunedreduce::Op::sum, n);
///   std::printf("%s (%s)\n", cfg.kernel_id, tunedreduce::level_name(cfg.level));
/// \endcode

#include <cuda_runtime_api.h>
#if __has_include(<cuda_fp16.h>) && __has_include(<cuda_bf16.h>)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define TUNEDREDUCE_HAS_HALF 1
#endif

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "tunedreduce/segmented.hpp"
#include "tunedreduce/types.hpp"

namespace tunedreduce {

/// Why a call failed. The C API's `tr_status` uses the same numbers.
enum class Status : int {
  success = 0,
  invalid_argument = 1,  ///< a null, host or other-device pointer, a misaligned buffer, a bad enum
  unsupported = 2,       ///< the chosen kernel cannot run this problem (e.g. n too large)
  temp_too_small = 3,    ///< the caller's temporary storage is smaller than the query said
  cuda_error = 4,        ///< no CUDA device, or a CUDA call (allocation, launch) failed
  internal = 5,          ///< anything else (out of host memory, a bug)
};

/// "success", "invalid_argument", "unsupported", "temp_too_small", "cuda_error", "internal".
const char* status_name(Status s) noexcept;

/// Every failure of the C++ API. The message names the argument or the CUDA call at fault;
/// when one is thrown nothing was launched.
class ReduceError : public std::runtime_error {
 public:
  ReduceError(Status status, const std::string& message);
  ~ReduceError() override;
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

/// The cache state this process's lookups prefer from now on, on every device and thread (the
/// next call uses it; no database is reloaded). The initial value is $TUNEDREDUCE_CACHE_STATE
/// ("cold" or "warm"; anything else is reported once and means cold), else cold. Throws
/// ReduceError for a value that is not a CacheState.
void set_cache_state(CacheState s);

/// The cache state lookups prefer now.
CacheState cache_state() noexcept;

/// The severity of a library message (spdlog's levels, in order).
enum class LogLevel : int {
  trace = 0,
  debug = 1,
  info = 2,
  warn = 3,
  error = 4,
  critical = 5,
  off = 6
};

/// Receives one library message: its level, its text (no time stamp or prefix; valid during the
/// call only) and the \p user pointer given to set_log_callback. Called on the thread that
/// logs, possibly on several at once; it must not call tunedreduce functions.
using LogCallback = void (*)(LogLevel level, const char* message, void* user);

/// Sends the library's messages (warnings such as an unusable database or a missing kernel, and
/// below the warn level what set_log_level lets through) to \p callback instead of standard
/// error, from the next message on; nullptr sends them to standard error again.
void set_log_callback(LogCallback callback, void* user = nullptr) noexcept;

/// The least severe level the library logs from now on (initially $TUNEDREDUCE_LOG_LEVEL, else
/// warn); LogLevel::off silences it. Throws ReduceError for a value that is not a LogLevel.
void set_log_level(LogLevel level);

/// The kernel a reduction would run and where that choice came from. Every string points to
/// storage owned by the library that lives until the process ends.
struct Config {
  const char* kernel_id = "";  ///< registry id, e.g. "vectorized.b1024.u4.single_pass.f32.sum"
  const char* family = "";     ///< "vectorized", "smem", ...
  int block = 0;               ///< threads per block
  int unroll = 1;              ///< elements (16-byte vectors for `vectorized`) per thread and step
  const char* smem = "none";   ///< "none", "static" or "dynamic"
  const char* finish = "";     ///< "two_pass" or "single_pass"
  DType dtype = DType::i32;
  Op op = Op::sum;
  Level level = Level::builtin_default;
  std::uint64_t n_lo = 0;  ///< the tuned size interval used (0, 0 for the built-in default)
  std::uint64_t n_hi = 0;
  const char* source = "";     ///< the database file, or "built-in" (with the reason)
  const char* tuned_on = "";   ///< fingerprint key of the device the winner was tuned on
  double tuned_median_us = 0;  ///< the winner's measured median (0 for the built-in default)
  bool stale = false;          ///< tuned under another driver or CUDA runtime version
  int device = -1;             ///< CUDA device ordinal (-1: no CUDA device is visible)
  /// The L2 state the winner was measured in (cold for the built-in default, which was chosen
  /// from cold measurements); another state than cache_state() when only that one was tuned.
  CacheState cache_state = CacheState::cold;
};

/// The configuration a reduction of n elements would run on \p device (-1: the current device)
/// under the current cache_state(), through the cached call. The two-phase call runs the same,
/// except from 2^24 elements up where this is a single_pass kernel of more than 1056 blocks: it
/// then runs the built-in default (docs/library.md says why).
/// Never fails for database problems (they give the built-in default and one warning); with no
/// CUDA device at all it returns the built-in default with device -1. Throws ReduceError for an
/// invalid dtype/op or device ordinal. After the first call for a device it is lock-free.
Config lookup(DType dtype, Op op, std::uint64_t n, int device = -1);

/// Uses \p path as the tuning database from now on (the next call on each device reloads it);
/// an empty path restores the default location rules ($TUNEDREDUCE_DB, $XDG_DATA_HOME, $HOME:
/// docs/library.md). Calls in flight finish with the configuration they had.
void set_database(const std::string& path);

/// The database that is or will be used: the path set_database gave, else the resolved default
/// location (which need not exist). Empty when no location can be derived.
std::string database_path();

/// Two-phase reduction with caller-owned temporary storage (CUB's convention): with
/// \p d_temp == nullptr only \p temp_bytes is set (no pointer is checked, nothing is enqueued);
/// otherwise reduces d_in[0, n) into *d_out on \p stream using d_temp (256-byte aligned, at
/// least temp_bytes bytes, not used by other work in flight). d_temp may hold anything on entry
/// and nothing is enqueued but the reduction's kernel(s): the completion counter is the
/// library's own, one per temporary buffer (docs/library.md). Inside a CUDA graph capture the
/// kernel(s) are recorded like any launch, and replays may run with the same buffers. Throws
/// ReduceError.
void reduce(void* d_temp, std::size_t& temp_bytes, const void* d_in, void* d_out, std::uint64_t n,
            DType dtype, Op op, cudaStream_t stream);

/// Reduction with a workspace the library caches per (device, stream): allocated and grown in
/// stream order (cudaMallocAsync/cudaFreeAsync), so the call never synchronises. A call on a
/// stream being captured into a CUDA graph (any capture mode, the stream's first call too) does
/// not use that cache: the graph gets a workspace of its own, an allocation node and a free node
/// around the launch, so no memory outlives or is shared with the graph (this needs a device
/// with memory pools; without them the call throws Status::unsupported). Throws ReduceError.
void reduce(const void* d_in, void* d_out, std::uint64_t n, DType dtype, Op op,
            cudaStream_t stream);

/// Frees the cached workspace of \p stream on the current device (in stream order). Call it
/// before destroying a stream that the library ran on, so its handle can be reused safely. Not
/// on a stream being captured (Status::invalid_argument).
void release_workspace(cudaStream_t stream);

/// The library's version, "MAJOR.MINOR.PATCH".
const char* version() noexcept;

/// The CUDA architectures the library's kernels were compiled for, as CMake lists them ("90",
/// "75;80;86;89;90;100;120"): machine code for each and PTX that a newer GPU compiles when the
/// library loads. A GPU older than all of them has no code: its reductions fail with a
/// cuda_error that says so.
const char* cuda_architectures() noexcept;

/// How many kernels the library has: every entry of the registry, or in a deployment build
/// (docs/library.md) those of its list and of the built-in rules. A tuned row naming a kernel
/// the library lacks is passed over (one warning) for the next lookup level.
std::size_t kernel_count() noexcept;

/// The registry id of kernel \p index, in sorted order; nullptr when index >= kernel_count().
const char* kernel_id(std::size_t index) noexcept;

// dtype_of<T>, T's DType: tunedreduce/types.hpp, with every other fact of the element types.

/// lookup() for element type T.
template <class T>
Config lookup(Op op, std::uint64_t n, int device = -1) {
  return lookup(dtype_of<T>, op, n, device);
}

namespace detail {
/// The operator sum<T, R> runs: Op::sum where R is T, Op::wide_sum where R is T's wide type.
template <class T, class R>
constexpr Op sum_op() {
  constexpr DType in = tunedreduce::dtype_of<T>;
  constexpr DType out = tunedreduce::dtype_of<R>;
  static_assert((out == in && op_applies(in, Op::sum)) ||
                    (op_applies(in, Op::wide_sum) && out == result_dtype(in, Op::wide_sum)),
                "sum<T, R>: R is T, or the wide type of T (int32_t -> int64_t, uint32_t -> "
                "uint64_t, float -> double, __half -> float, __nv_bfloat16 -> float; a half type "
                "has no same-type sum: sum<__half, float>)");
  return out == in ? Op::sum : Op::wide_sum;
}

/// Throws ReduceError (invalid_argument) when \p out is not the result type of (in, op), an
/// operator that applies to \p in (the library says why for one that does not); argmin and
/// argmax write an IndexedValue, which a pointer to a plain result cannot hold.
inline void check_result_type(DType in, Op op, DType out) {
  if (is_arg_op(op))
    throw ReduceError(Status::invalid_argument,
                      std::string(op_name(op)) + " writes an IndexedValue<" + dtype_name(in) +
                          "> (16 bytes): call tunedreduce::" + op_name(op) +
                          "(d_in, d_out, n) with d_out an IndexedValue<T>*");
  if (op_applies(in, op) && out != result_dtype(in, op))
    throw ReduceError(Status::invalid_argument,
                      std::string("d_out's type is ") + dtype_name(out) + ", but " + op_name(op) +
                          " of " + dtype_name(in) + " returns " + dtype_name(result_dtype(in, op)));
}

/// Throws ReduceError (invalid_argument) when R is not the result type of (T, \p op): an
/// IndexedValue<T> for argmin and argmax (and no other operator), else check_result_type.
template <class T, class R>
void check_result(Op op) {
  if constexpr (std::is_same_v<std::remove_cv_t<R>, IndexedValue<T>>) {
    // argmin and argmax's result; no other operator writes one.
    if (!is_arg_op(op))
      throw ReduceError(Status::invalid_argument,
                        std::string("d_out is an IndexedValue, which only argmin and argmax "
                                    "write, not ") +
                            op_name(op));
  } else {
    check_result_type(tunedreduce::dtype_of<T>, op, tunedreduce::dtype_of<R>);
  }
}
}  // namespace detail

/// Two-phase reduce() for element type T; the result's type is T, so \p op is not wide_sum (the
/// overload below takes its wider result). Throws ReduceError.
template <class T>
void reduce(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out, std::uint64_t n, Op op,
            cudaStream_t stream = 0) {
  detail::check_result_type(dtype_of<T>, op, dtype_of<T>);
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         dtype_of<T>, op, stream);
}

/// Two-phase reduce() for element type T with a result of type R: the result type of (T, op),
/// T's wide type for Op::wide_sum (result_dtype), IndexedValue<T> for Op::argmin and Op::argmax.
/// Throws ReduceError (invalid_argument where R is another type).
template <class T, class R>
void reduce(void* d_temp, std::size_t& temp_bytes, const T* d_in, R* d_out, std::uint64_t n, Op op,
            cudaStream_t stream = 0) {
  detail::check_result<T, R>(op);
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         dtype_of<T>, op, stream);
}

/// *d_out = d_in[0] + ... + d_in[n-1] (integers wrap modulo 2^bits; 0 for n == 0; a floating-point
/// sum of only -0.0 is -0.0, as IEEE 754 has it). With R the type twice as wide of a 32-bit T
/// (`sum<std::int32_t, std::int64_t>`, uint32_t -> uint64_t, float -> double) the sum is
/// accumulated in R (Op::wide_sum): 32-bit integers then wrap modulo 2^64, not 2^32.
template <class T, class R = T>
void sum(const T* d_in, R* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, dtype_of<T>,
         detail::sum_op<T, R>(), stream);
}

/// Two-phase sum() with caller-owned temporary storage: reduce(d_temp, temp_bytes, ...) with
/// Op::sum, or Op::wide_sum where R is T's wide type (with d_temp == nullptr only \p temp_bytes
/// is set).
template <class T, class R = T>
void sum(void* d_temp, std::size_t& temp_bytes, const T* d_in, R* d_out, std::uint64_t n,
         cudaStream_t stream = 0) {
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         dtype_of<T>, detail::sum_op<T, R>(), stream);
}

/// *d_out = the smallest of d_in[0, n) (NaN if any is NaN; the type's maximum / +inf for n == 0).
template <class T>
void min(const T* d_in, T* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, dtype_of<T>, Op::min,
         stream);
}

/// *d_out = the largest of d_in[0, n) (NaN if any is NaN; the type's lowest / -inf for n == 0).
template <class T>
void max(const T* d_in, T* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, dtype_of<T>, Op::max,
         stream);
}

namespace detail {
/// The DType of an absmax element type: the floating-point types only.
template <class T>
constexpr DType absmax_dtype() {
  static_assert(op_applies(tunedreduce::dtype_of<T>, Op::absmax),
                "absmax takes float, double, __half and __nv_bfloat16");
  return tunedreduce::dtype_of<T>;
}
}  // namespace detail

/// *d_out = the largest magnitude |d_in[i]| of d_in[0, n) (Op::absmax: the "amax" of FP8 and INT8
/// scaling), in T: never negative (-0.0 and +0.0 are equal); a NaN anywhere gives a NaN (a NaN of
/// the input, its sign dropped); +0.0 for n == 0. For float, double, __half and __nv_bfloat16.
/// The workspace is cached as for sum(). Throws ReduceError.
template <class T>
void absmax(const T* d_in, T* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, detail::absmax_dtype<T>(),
         Op::absmax, stream);
}

/// Two-phase absmax() with caller-owned temporary storage: reduce(d_temp, temp_bytes, ...) with
/// Op::absmax (with d_temp == nullptr only \p temp_bytes is set).
template <class T>
void absmax(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out, std::uint64_t n,
            cudaStream_t stream = 0) {
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         detail::absmax_dtype<T>(), Op::absmax, stream);
}

namespace detail {
/// The DType of an argmin / argmax element type: the 4- and 8-byte types only.
template <class T>
constexpr DType arg_dtype() {
  static_assert(!is_half(tunedreduce::dtype_of<T>),
                "argmin and argmax take 32- and 64-bit integers, float and double");
  return tunedreduce::dtype_of<T>;
}
}  // namespace detail

/// *d_out = {the smallest of d_in[0, n), its index}: the first index where several are equal
/// (-0.0 equals +0.0); any NaN wins, so a NaN gives the first NaN and its index; {the type's
/// maximum / +inf, -1} for n == 0. The workspace is cached as for sum(). Throws ReduceError.
/// (CUB's DeviceReduce::ArgMin, with the index and the value in one 16-byte result.)

template <class T>
void argmin(const T* d_in, IndexedValue<T>* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, detail::arg_dtype<T>(),
         Op::argmin, stream);
}

/// *d_out = {the largest of d_in[0, n), its index}, as argmin() has it ({the type's lowest /
/// -inf, -1} for n == 0).
template <class T>
void argmax(const T* d_in, IndexedValue<T>* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, detail::arg_dtype<T>(),
         Op::argmax, stream);
}

/// Two-phase argmin() with caller-owned temporary storage: reduce(d_temp, temp_bytes, ...) with
/// Op::argmin (with d_temp == nullptr only \p temp_bytes is set).
template <class T>
void argmin(void* d_temp, std::size_t& temp_bytes, const T* d_in, IndexedValue<T>* d_out,
            std::uint64_t n, cudaStream_t stream = 0) {
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         detail::arg_dtype<T>(), Op::argmin, stream);
}

/// Two-phase argmax() with caller-owned temporary storage.
template <class T>
void argmax(void* d_temp, std::size_t& temp_bytes, const T* d_in, IndexedValue<T>* d_out,
            std::uint64_t n, cudaStream_t stream = 0) {
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         detail::arg_dtype<T>(), Op::argmax, stream);
}

/// *d_out = the true sum of d_in[0, n) rounded once to nearest, ties to even (Op::exact_sum):
/// the same bits from every kernel, tuning database, GPU and split of the input. NaN if any
/// input is NaN or both infinities occur; ±Inf if one does or the rounded sum overflows; an
/// exact zero is -0 only if every input is -0; +0 for n == 0. The workspace is cached as for
/// sum(); the kernel is the tuned exact kernel of (device, float, n). Throws ReduceError.
inline void exact_sum(const float* d_in, float* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, DType::f32, Op::exact_sum,
         stream);
}

/// exact_sum() for double.
inline void exact_sum(const double* d_in, double* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, DType::f64, Op::exact_sum,
         stream);
}

/// Two-phase exact_sum() with caller-owned temporary storage: reduce(d_temp, temp_bytes, ...)
/// with Op::exact_sum (with d_temp == nullptr only \p temp_bytes is set).
inline void exact_sum(void* d_temp, std::size_t& temp_bytes, const float* d_in, float* d_out,
                      std::uint64_t n, cudaStream_t stream = 0) {
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         DType::f32, Op::exact_sum, stream);
}

/// Two-phase exact_sum() for double.
inline void exact_sum(void* d_temp, std::size_t& temp_bytes, const double* d_in, double* d_out,
                      std::uint64_t n, cudaStream_t stream = 0) {
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         DType::f64, Op::exact_sum, stream);
}

#ifdef TUNEDREDUCE_HAS_HALF
/// exact_sum() of IEEE binary16 elements: their true sum (every __half is exactly a float)
/// rounded once to float, ties to even; the specials and zeros as for float. The result is a
/// float (result_dtype): there is no __half result.
inline void exact_sum(const __half* d_in, float* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, DType::f16, Op::exact_sum,
         stream);
}

/// exact_sum() of bfloat16 elements, rounded once to float (their sum can overflow it: ±Inf).
inline void exact_sum(const __nv_bfloat16* d_in, float* d_out, std::uint64_t n,
                      cudaStream_t stream = 0) {
  reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), n, DType::bf16, Op::exact_sum,
         stream);
}

/// Two-phase exact_sum() of __half elements into a float.
inline void exact_sum(void* d_temp, std::size_t& temp_bytes, const __half* d_in, float* d_out,
                      std::uint64_t n, cudaStream_t stream = 0) {
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         DType::f16, Op::exact_sum, stream);
}

/// Two-phase exact_sum() of __nv_bfloat16 elements into a float.
inline void exact_sum(void* d_temp, std::size_t& temp_bytes, const __nv_bfloat16* d_in,
                      float* d_out, std::uint64_t n, cudaStream_t stream = 0) {
  reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out), n,
         DType::bf16, Op::exact_sum, stream);
}
#endif

// Segmented reductions for element type T (tunedreduce/segmented.hpp): one result per segment.

/// d_out[s] = the sum of segment s of \p seg, in R: T, or T's wide type (Op::wide_sum) as for
/// sum<T, R>. Throws ReduceError.
template <class T, class R = T>
void segmented_sum(const T* d_in, R* d_out, const Segments& seg, cudaStream_t stream = 0) {
  segmented_reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), seg, dtype_of<T>,
                   detail::sum_op<T, R>(), stream);
}

/// segmented_sum() of the rows of a row-major matrix: \p num_segments rows of
/// \p segment_size contiguous elements.
template <class T, class R = T>
void segmented_sum(const T* d_in, R* d_out, std::uint64_t num_segments, std::uint64_t segment_size,
                   cudaStream_t stream = 0) {
  segmented_sum(d_in, d_out, Segments::rows(num_segments, segment_size), stream);
}

/// Two-phase segmented_sum() with caller-owned temporary storage.
template <class T, class R = T>
void segmented_sum(void* d_temp, std::size_t& temp_bytes, const T* d_in, R* d_out,
                   const Segments& seg, cudaStream_t stream = 0) {
  segmented_reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out),
                   seg, dtype_of<T>, detail::sum_op<T, R>(), stream);
}

/// d_out[s] = the smallest element of segment s (NaN if any is NaN; as min() for an empty one).
template <class T>
void segmented_min(const T* d_in, T* d_out, const Segments& seg, cudaStream_t stream = 0) {
  segmented_reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), seg, dtype_of<T>,
                   Op::min, stream);
}

/// d_out[s] = the largest element of segment s (NaN if any is NaN; as max() for an empty one).
template <class T>
void segmented_max(const T* d_in, T* d_out, const Segments& seg, cudaStream_t stream = 0) {
  segmented_reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), seg, dtype_of<T>,
                   Op::max, stream);
}

/// d_out[s] = {the smallest element of segment s, its index within the segment}, as argmin()
/// has it; {the type's maximum / +inf, -1} for an empty segment.
template <class T>
void segmented_argmin(const T* d_in, IndexedValue<T>* d_out, const Segments& seg,
                      cudaStream_t stream = 0) {
  segmented_reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), seg,
                   detail::arg_dtype<T>(), Op::argmin, stream);
}

/// d_out[s] = {the largest element of segment s, its index within the segment}.
template <class T>
void segmented_argmax(const T* d_in, IndexedValue<T>* d_out, const Segments& seg,
                      cudaStream_t stream = 0) {
  segmented_reduce(static_cast<const void*>(d_in), static_cast<void*>(d_out), seg,
                   detail::arg_dtype<T>(), Op::argmax, stream);
}

/// Two-phase segmented reduction of element type T into R (the result type of (T, op):
/// IndexedValue<T> for argmin and argmax). Throws ReduceError where R is another type.
template <class T, class R>
void segmented_reduce(void* d_temp, std::size_t& temp_bytes, const T* d_in, R* d_out,
                      const Segments& seg, Op op, cudaStream_t stream = 0) {
  detail::check_result<T, R>(op);
  segmented_reduce(d_temp, temp_bytes, static_cast<const void*>(d_in), static_cast<void*>(d_out),
                   seg, dtype_of<T>, op, stream);
}

}  // namespace tunedreduce
