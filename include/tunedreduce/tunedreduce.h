/* libtunedreduce C API: the same as tunedreduce.hpp, for C and for other languages through a
 * foreign-function interface. Plain C99: no CUDA header is needed (a stream is passed as the
 * cudaStream_t value cast to void*, NULL for the default stream). No function throws; each
 * returns a tr_status, and tr_last_error() gives this thread's message. See docs/library.md. */
#ifndef TUNEDREDUCE_H
#define TUNEDREDUCE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define TR_API __attribute__((visibility("default")))
#else
#define TR_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes (the numbers of tunedreduce::Status). */
typedef enum tr_status {
  TR_SUCCESS = 0,
  TR_ERROR_INVALID_ARGUMENT = 1, /**< null, host or other-device pointer; misaligned; bad enum */
  TR_ERROR_UNSUPPORTED = 2,      /**< the chosen kernel cannot run this problem (n too large) */
  TR_ERROR_TEMP_TOO_SMALL = 3,   /**< temporary storage smaller than the size query said */
  TR_ERROR_CUDA = 4,             /**< no CUDA device, or a CUDA call failed */
  TR_ERROR_INTERNAL = 5          /**< out of host memory, or a bug */
} tr_status;

/** Element types (the numbers of tunedreduce::DType). */
typedef enum tr_dtype {
  TR_I32 = 0,
  TR_U32 = 1,
  TR_I64 = 2,
  TR_U64 = 3,
  TR_F32 = 4,
  TR_F64 = 5,
  TR_F16 = 6, /**< IEEE binary16 (CUDA's __half): TR_WIDE_SUM, TR_EXACT_SUM (into a float) and
                   TR_ABSMAX */
  TR_BF16 = 7 /**< bfloat16 (CUDA's __nv_bfloat16): TR_WIDE_SUM, TR_EXACT_SUM (into a float) and
                   TR_ABSMAX */
} tr_dtype;

/** Operators (the numbers of tunedreduce::Op). TR_SUM, TR_MIN and TR_MAX: for the 4- and 8-byte
 *  types. TR_EXACT_SUM, for TR_F32, TR_F64, TR_F16 and TR_BF16 only: the true sum rounded once
 *  to nearest even (to float for the half types), the same bits from every kernel and GPU.
 *  TR_WIDE_SUM, for TR_I32, TR_U32, TR_F32, TR_F16 and TR_BF16 only: the sum accumulated in and
 *  returned as a wider type (int64_t, uint64_t, double: d_out points to 8 bytes; float for the
 *  half types: 4 bytes). TR_ARGMIN and TR_ARGMAX, for the 4- and 8-byte types: the smallest
 *  (largest) element and its first index, written as one 16-byte tr_indexed_* struct (d_out
 *  aligned to 8 bytes); a NaN wins over every number. TR_ABSMAX, for TR_F32, TR_F64, TR_F16 and
 *  TR_BF16: the largest magnitude |x| in the element type (never negative; a NaN anywhere gives
 *  a NaN; +0 for n == 0). */
typedef enum tr_op {
  TR_SUM = 0,
  TR_MIN = 1,
  TR_MAX = 2,
  TR_EXACT_SUM = 3,
  TR_WIDE_SUM = 4,
  TR_ARGMIN = 5,
  TR_ARGMAX = 6,
  TR_ABSMAX = 7
} tr_op;

/** The result of TR_ARGMIN and TR_ARGMAX over each element type: the element and its index
 *  (index -1 for n == 0, with the value tr_min / tr_max give for n == 0). 16 bytes each, the
 *  layout of tunedreduce::IndexedValue<T>. */
typedef struct tr_indexed_i32 {
  int32_t value;
  int64_t index;
} tr_indexed_i32;
typedef struct tr_indexed_u32 {
  uint32_t value;
  int64_t index;
} tr_indexed_u32;
typedef struct tr_indexed_i64 {
  int64_t value;
  int64_t index;
} tr_indexed_i64;
typedef struct tr_indexed_u64 {
  uint64_t value;
  int64_t index;
} tr_indexed_u64;
typedef struct tr_indexed_f32 {
  float value;
  int64_t index;
} tr_indexed_f32;
typedef struct tr_indexed_f64 {
  double value;
  int64_t index;
} tr_indexed_f64;

/** Lookup levels (the numbers of tunedreduce::Level). */
typedef enum tr_level {
  TR_LEVEL_EXACT = 1,      /**< this device, a tuned size interval containing n */
  TR_LEVEL_NEAREST = 2,    /**< this device, the nearest tuned interval, within 4x of n */
  TR_LEVEL_SAME_MODEL = 3, /**< another device of the same compute capability, SM count and
                                memory system (bus width, memory clock, L2 size) */
  TR_LEVEL_DEFAULT = 4     /**< the built-in default for (dtype, op, n) */
} tr_level;

/** Cache states (the numbers of tunedreduce::CacheState): where the input is when a reduction
 * starts, the L2 state a winner was measured in. */
typedef enum tr_cache_state {
  TR_CACHE_COLD = 0, /**< in device memory, not in L2 (the default) */
  TR_CACHE_WARM = 1  /**< still in L2 from the work before */
} tr_cache_state;

/** What tr_lookup() reports. The strings live until the process ends. */
typedef struct tr_config {
  const char* kernel_id; /**< registry id, e.g. "vectorized.b1024.u4.single_pass.f32.sum" */
  const char* family;
  int block;
  int unroll;
  const char* smem;     /**< "none", "static" or "dynamic" */
  const char* finish;   /**< "two_pass" or "single_pass" */
  int dtype;            /**< a tr_dtype */
  int op;               /**< a tr_op */
  int level;            /**< a tr_level */
  uint64_t n_lo, n_hi;  /**< the tuned size interval used (0, 0 for the default) */
  const char* source;   /**< the database file, or "built-in" (with the reason) */
  const char* tuned_on; /**< fingerprint key of the device the winner was tuned on */
  double tuned_median_us;
  int stale;       /**< 1: tuned under another driver or CUDA runtime version */
  int device;      /**< CUDA device ordinal; -1 when no CUDA device is visible */
  int cache_state; /**< a tr_cache_state: the L2 state the winner was measured in */
} tr_config;

/** The configuration a reduction of n elements would run on device (-1: the current one). */
TR_API tr_status tr_lookup(int dtype, int op, uint64_t n, int device, tr_config* out);

/** Two-phase reduction (CUB's convention): with d_temp == NULL only *temp_bytes is set. */
TR_API tr_status tr_reduce(void* d_temp, size_t* temp_bytes, const void* d_in, void* d_out,
                           uint64_t n, int dtype, int op, void* stream);

/** Reductions with a workspace cached per (device, stream); a call captured into a CUDA graph
 *  gets a workspace the graph owns instead (tunedreduce.hpp: reduce). */
TR_API tr_status tr_reduce_cached(const void* d_in, void* d_out, uint64_t n, int dtype, int op,
                                  void* stream);
TR_API tr_status tr_sum(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream);
TR_API tr_status tr_min(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream);
TR_API tr_status tr_max(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream);
/** The exact sum (TR_EXACT_SUM) of TR_F32, TR_F64, TR_F16 or TR_BF16 elements into one float,
 *  double, float or float at d_out (the true sum rounded once to that type; another dtype is
 *  TR_ERROR_INVALID_ARGUMENT), with the cached workspace; the two-phase form is tr_reduce with
 *  op TR_EXACT_SUM. NaN if any input is NaN or both infinities occur, +0 for n == 0. */
TR_API tr_status tr_exact_sum(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream);

/** The wide sum (TR_WIDE_SUM) of TR_I32, TR_U32, TR_F32, TR_F16 or TR_BF16 elements into one
 *  int64_t, uint64_t, double, float or float at d_out (another dtype is
 *  TR_ERROR_INVALID_ARGUMENT), with the cached workspace;
 *  the two-phase form is tr_reduce with op TR_WIDE_SUM. 0 for n == 0. */
TR_API tr_status tr_wide_sum(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream);

/** argmin (TR_ARGMIN) and argmax (TR_ARGMAX) of TR_I32, TR_U32, TR_I64, TR_U64, TR_F32 or
 *  TR_F64 elements into the tr_indexed_* struct of that type at d_out (another dtype is
 *  TR_ERROR_INVALID_ARGUMENT), with the cached workspace; the two-phase form is tr_reduce with
 *  op TR_ARGMIN or TR_ARGMAX. The first index of the extreme value; any NaN gives the first NaN. */
TR_API tr_status tr_argmin(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream);
TR_API tr_status tr_argmax(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream);
/** The largest magnitude (TR_ABSMAX) of TR_F32, TR_F64, TR_F16 or TR_BF16 elements into one
 *  element of that type at d_out (another dtype is TR_ERROR_INVALID_ARGUMENT), with the cached
 *  workspace; the two-phase form is tr_reduce with op TR_ABSMAX. */
TR_API tr_status tr_absmax(const void* d_in, void* d_out, uint64_t n, int dtype, void* stream);
/** Frees the cached workspace of a stream on the current device (in stream order). */
TR_API tr_status tr_release_workspace(void* stream);

/** Segmented reductions (tunedreduce/segmented.hpp): one result per segment at d_out[s].
 *  Rows: `count` segments of `size` elements, `stride` elements apart (0: size). */
TR_API tr_status tr_segmented_reduce_rows(void* d_temp, size_t* temp_bytes, const void* d_in,
                                          void* d_out, uint64_t count, uint64_t size,
                                          uint64_t stride, int dtype, int op, void* stream);
/** Offsets: segment s is [begin[s], end[s]) (offset_bytes 4: int32 offsets, 8: int64);
 *  mean_length: the expected mean segment length, 0 when unknown (the longest is unknown here,
 *  so the lengths may spread and the balanced family runs; tr_segmented_reduce_offsets_bounded
 *  takes the longest too). With d_temp == NULL and
 *  temp_bytes == NULL both forms run with the cached workspace; with d_temp == NULL and a
 *  temp_bytes pointer they only set *temp_bytes (the two-phase size query). */
TR_API tr_status tr_segmented_reduce_offsets(void* d_temp, size_t* temp_bytes, const void* d_in,
                                             void* d_out, uint64_t count, const void* begin,
                                             const void* end, int offset_bytes,
                                             uint64_t mean_length, int dtype, int op, void* stream);
/** The same with the longest segment the caller expects, max_length (0 when unknown): where it
 *  is known and at most 4 x mean_length, the kernel chosen for the mean length runs (tuned or
 *  the built-in rules); otherwise the balanced family, whose time does not depend on how the
 *  lengths spread (Segments::max_length of the C++ API). */
TR_API tr_status tr_segmented_reduce_offsets_bounded(void* d_temp, size_t* temp_bytes,
                                                     const void* d_in, void* d_out, uint64_t count,
                                                     const void* begin, const void* end,
                                                     int offset_bytes, uint64_t mean_length,
                                                     uint64_t max_length, int dtype, int op,
                                                     void* stream);
/** The same with the offsets checked first (Segments::checked() of the C++ API; the call waits
 *  for the check): a segment with a negative begin, or an end before its begin, is
 *  TR_ERROR_INVALID_ARGUMENT with tr_last_error() naming it and both offsets, and nothing is
 *  reduced; under CUDA graph capture TR_ERROR_UNSUPPORTED. */
TR_API tr_status tr_segmented_reduce_offsets_checked(void* d_temp, size_t* temp_bytes,
                                                     const void* d_in, void* d_out, uint64_t count,
                                                     const void* begin, const void* end,
                                                     int offset_bytes, uint64_t mean_length,
                                                     uint64_t max_length, int dtype, int op,
                                                     void* stream);

/** Uses path as the tuning database from now on; NULL or "" restores the default rules. */
TR_API tr_status tr_set_database(const char* path);

/** The cache state lookups prefer from now on (a tr_cache_state), process-wide; the initial
 * value is $TUNEDREDUCE_CACHE_STATE ("cold" or "warm"), else cold. */
TR_API tr_status tr_set_cache_state(int state);
/** The cache state lookups prefer now (a tr_cache_state). */
TR_API int tr_get_cache_state(void);

/** Severities of library messages (the numbers of tunedreduce::LogLevel). */
typedef enum tr_log_level {
  TR_LOG_TRACE = 0,
  TR_LOG_DEBUG = 1,
  TR_LOG_INFO = 2,
  TR_LOG_WARN = 3,
  TR_LOG_ERROR = 4,
  TR_LOG_CRITICAL = 5,
  TR_LOG_OFF = 6
} tr_log_level;

/** Receives one library message (level: a tr_log_level; message valid during the call only).
 * Called on the thread that logs, possibly on several at once; must not call tr_* functions. */
typedef void (*tr_log_callback)(int level, const char* message, void* user);

/** Sends the library's messages to callback (with user) instead of standard error; NULL sends
 * them to standard error again. */
TR_API tr_status tr_set_log_callback(tr_log_callback callback, void* user);
/** The least severe level the library logs (a tr_log_level; TR_LOG_OFF silences it). */
TR_API tr_status tr_set_log_level(int level);

/** The message of this thread's last tr_* call: "" when it succeeded. Valid until the thread's
 * next tr_* call. */
TR_API const char* tr_last_error(void);

/** "success", "invalid_argument", ... */
TR_API const char* tr_status_name(int status);
/** "exact", "nearest", "same_model", "default". */
TR_API const char* tr_level_name(int level);
/** "cold", "warm". */
TR_API const char* tr_cache_state_name(int state);
/** "MAJOR.MINOR.PATCH". */
TR_API const char* tr_version(void);
/** The CUDA architectures the kernels were compiled for, e.g. "90" or "80;90;100". */
TR_API const char* tr_cuda_architectures(void);
/** How many kernels the library has: the whole registry, or a deployment build's list. */
TR_API size_t tr_kernel_count(void);
/** The registry id of kernel \p index (0 .. tr_kernel_count() - 1, sorted); NULL past the end. */
TR_API const char* tr_kernel_id(size_t index);

#ifdef __cplusplus
}
#endif

#endif /* TUNEDREDUCE_H */
