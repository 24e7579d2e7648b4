/* The C API from C (C99, no CUDA header), linked against the shared library. Without a GPU:
 * lookup reports the built-in default and every reduction fails with a message; with one, the
 * lookup names device 0. Argument errors are the same on both. Exit 0 when every check passes. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <tunedreduce/tunedreduce.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static int contains(const char* s, const char* part) { return s && strstr(s, part) != NULL; }

/* What the log callback received. */
static int logged = 0;
static int logged_level = -1;
static char logged_text[512];
static void on_log(int level, const char* message, void* user) {
  ++logged;
  logged_level = level;
  snprintf(logged_text, sizeof logged_text, "%s", message);
  CHECK(user == (void*)&logged);
}

int main(void) {
  tr_config cfg;
  size_t bytes = 0;
  char buf[64];
  tr_status s;

  CHECK(strcmp(tr_version(), TR_EXPECTED_VERSION) == 0);
  CHECK(strcmp(tr_cuda_architectures(), TR_EXPECTED_ARCHS) == 0);
  CHECK(strcmp(tr_status_name(TR_ERROR_TEMP_TOO_SMALL), "temp_too_small") == 0);
  CHECK(strcmp(tr_level_name(TR_LEVEL_SAME_MODEL), "same_model") == 0);
  CHECK(strcmp(tr_level_name(99), "unknown") == 0);

  /* The kernels the library has: the whole registry here, sorted, each id once. */
  {
    size_t i, n = tr_kernel_count();
    CHECK(n == TR_EXPECTED_KERNELS);
    for (i = 0; i + 1 < n; ++i) CHECK(strcmp(tr_kernel_id(i), tr_kernel_id(i + 1)) < 0);
    CHECK(n > 0 && contains(tr_kernel_id(0), ".b"));
    CHECK(tr_kernel_id(n) == NULL);
    CHECK(tr_kernel_id((size_t)-1) == NULL);
  }

  /* A database that does not exist: defaults, one warning, no failure. The warning reaches the
     application's callback instead of stderr. */
  CHECK(tr_set_log_level(7) == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "log level 7 is not a LogLevel"));
  CHECK(tr_set_log_callback(on_log, &logged) == TR_SUCCESS);
  CHECK(tr_set_database("/nonexistent/tunedreduce-c-test.db") == TR_SUCCESS);
  CHECK(strcmp(tr_last_error(), "") == 0);

  s = tr_lookup(TR_F32, TR_SUM, (uint64_t)1 << 20, -1, &cfg);
  CHECK(s == TR_SUCCESS);
  CHECK(logged >= 1);
  CHECK(logged_level == TR_LOG_WARN);
  CHECK(contains(logged_text, "tunedreduce-c-test.db") || contains(logged_text, "CUDA"));
  /* Silenced, then back to stderr. */
  CHECK(tr_set_log_level(TR_LOG_OFF) == TR_SUCCESS);
  {
    const int before = logged;
    CHECK(tr_set_database("/nonexistent/tunedreduce-c-test-2.db") == TR_SUCCESS);
    CHECK(tr_lookup(TR_F32, TR_SUM, 4096, -1, &cfg) == TR_SUCCESS);
    CHECK(logged == before);
  }
  CHECK(tr_set_log_level(TR_LOG_WARN) == TR_SUCCESS);
  CHECK(tr_set_log_callback(NULL, NULL) == TR_SUCCESS);
  CHECK(tr_set_database("/nonexistent/tunedreduce-c-test.db") == TR_SUCCESS);
  CHECK(cfg.level == TR_LEVEL_DEFAULT);
  /* The built-in rule for f32 sum at 2^20 (runtime/defaults.cpp): whichever it is, the
     config's fields spell its id. */
  {
    char prefix[64];
    const size_t len = strlen(cfg.kernel_id);
    snprintf(prefix, sizeof prefix, "%s.b%d.", cfg.family, cfg.block);
    CHECK(strncmp(cfg.kernel_id, prefix, strlen(prefix)) == 0);
    CHECK(len > 8 && strcmp(cfg.kernel_id + len - 8, ".f32.sum") == 0);
    CHECK(contains(cfg.kernel_id, cfg.finish));
    CHECK(cfg.unroll >= 1 && cfg.unroll <= 16);
  }
  CHECK(cfg.dtype == TR_F32 && cfg.op == TR_SUM);
  CHECK(cfg.cache_state == TR_CACHE_COLD);
  CHECK(contains(cfg.source, "built-in"));

  /* The cache state: cold unless set (this test runs without $TUNEDREDUCE_CACHE_STATE). */
  CHECK(tr_get_cache_state() == TR_CACHE_COLD);
  CHECK(strcmp(tr_cache_state_name(TR_CACHE_WARM), "warm") == 0);
  CHECK(strcmp(tr_cache_state_name(2), "unknown") == 0);
  CHECK(tr_set_cache_state(TR_CACHE_WARM) == TR_SUCCESS);
  CHECK(tr_get_cache_state() == TR_CACHE_WARM);
  s = tr_set_cache_state(5);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "cache state 5 is not a tr_cache_state"));
  CHECK(tr_get_cache_state() == TR_CACHE_WARM);
  /* No warm row anywhere: still the built-in default, which says cold. */
  CHECK(tr_lookup(TR_F32, TR_SUM, (uint64_t)1 << 20, -1, &cfg) == TR_SUCCESS);
  CHECK(cfg.cache_state == TR_CACHE_COLD && cfg.level == TR_LEVEL_DEFAULT);
  CHECK(tr_set_cache_state(TR_CACHE_COLD) == TR_SUCCESS);
  printf("lookup: %s (%s) on device %d, from %s\n", cfg.kernel_id, tr_level_name(cfg.level),
         cfg.device, cfg.source);

  /* Argument errors: a status and a message naming the argument; nothing runs. */
  s = tr_sum(buf, NULL, 16, TR_I32, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "d_out is a null pointer"));
  s = tr_max(NULL, buf, 16, TR_F64, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "d_in is a null pointer"));
  s = tr_reduce_cached(buf, buf, 16, 17, TR_SUM, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "dtype 17"));
  s = tr_reduce_cached(buf, buf, 16, TR_I32, -1, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "op -1"));
  s = tr_reduce(NULL, NULL, buf, buf, 16, TR_I32, TR_SUM, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "temp_bytes is a null pointer"));
  s = tr_lookup(TR_I32, TR_SUM, 16, -1, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  /* Segmented offsets, with and without the longest length: the offsets' width and a null
     d_out named, before any device is asked for. */
  s = tr_segmented_reduce_offsets(NULL, NULL, buf, buf, 4, buf, buf, 3, 16, TR_F32, TR_SUM, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "offset_bytes = 3 is neither 4"));
  s = tr_segmented_reduce_offsets_bounded(NULL, NULL, buf, buf, 4, buf, buf, 2, 16, 64, TR_F32,
                                          TR_SUM, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "offset_bytes = 2 is neither 4"));
  s = tr_segmented_reduce_offsets_bounded(NULL, NULL, buf, NULL, 4, buf, buf, 8, 16, 64, TR_F32,
                                          TR_SUM, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "d_out is a null pointer"));
  s = tr_segmented_reduce_offsets_checked(NULL, NULL, buf, buf, 4, buf, buf, 5, 16, 64, TR_F32,
                                          TR_SUM, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "offset_bytes = 5 is neither 4"));
  /* The exact sum: float and double only, by name; op 4 is no operator. */
  s = tr_exact_sum(buf, buf, 16, TR_I32, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(),
                 "op exact_sum is defined for f32, f64, f16 and bf16 only, not dtype i32"));
  s = tr_reduce(NULL, &bytes, NULL, NULL, 16, TR_U32, TR_EXACT_SUM, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "not dtype u32"));
  s = tr_reduce_cached(buf, buf, 16, TR_F32, 8, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(),
                 "op 8 is not a tr_op (0..7: TR_SUM, TR_MIN, TR_MAX, "
                 "TR_EXACT_SUM, TR_WIDE_SUM, TR_ARGMIN, TR_ARGMAX, TR_ABSMAX)"));
  /* argmin and argmax: the 4- and 8-byte types, into a 16-byte tr_indexed_* struct. */
  CHECK(TR_ARGMIN == 5 && TR_ARGMAX == 6);
  CHECK(sizeof(tr_indexed_i32) == 16 && sizeof(tr_indexed_f32) == 16 &&
        sizeof(tr_indexed_f64) == 16 && sizeof(tr_indexed_u64) == 16);
  CHECK(offsetof(tr_indexed_f32, index) == 8 && offsetof(tr_indexed_i64, index) == 8);
  s = tr_argmin(buf, buf, 16, TR_F16, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(),
                 "op argmin is defined for i32, u32, i64, u64, f32 and f64 only, not dtype f16"));
  s = tr_reduce(NULL, &bytes, NULL, NULL, 16, TR_BF16, TR_ARGMAX, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "not dtype bf16"));
  CHECK(tr_lookup(TR_F32, TR_ARGMAX, (uint64_t)1 << 20, -1, &cfg) == TR_SUCCESS);
  CHECK(cfg.op == TR_ARGMAX && cfg.dtype == TR_F32 && contains(cfg.kernel_id, ".f32.argmax"));
  /* The wide sum: i32, u32, f32, f16 and bf16 only, by name. */
  CHECK(TR_WIDE_SUM == 4);
  s = tr_wide_sum(buf, buf, 16, TR_I64, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(),
                 "op wide_sum is defined for i32, u32, f32, f16 and bf16 only, not dtype i64"));
  /* The half types: wide_sum alone (into a float), numbered after TR_F64. */
  CHECK(TR_F16 == 6 && TR_BF16 == 7);
  s = tr_sum(buf, buf, 16, TR_F16, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(),
                 "op sum is defined for i32, u32, i64, u64, f32 and f64 only, not dtype f16"));
  s = tr_reduce(NULL, &bytes, NULL, NULL, 16, TR_BF16, TR_MAX, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "not dtype bf16"));
  CHECK(tr_lookup(TR_BF16, TR_WIDE_SUM, (uint64_t)1 << 20, -1, &cfg) == TR_SUCCESS);
  CHECK(cfg.op == TR_WIDE_SUM && cfg.dtype == TR_BF16 && contains(cfg.kernel_id, ".bf16.wide_sum"));
  s = tr_reduce(NULL, &bytes, NULL, NULL, 16, TR_F64, TR_WIDE_SUM, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "not dtype f64"));
  CHECK(tr_lookup(TR_I32, TR_WIDE_SUM, (uint64_t)1 << 20, -1, &cfg) == TR_SUCCESS);
  CHECK(cfg.op == TR_WIDE_SUM && cfg.dtype == TR_I32 && contains(cfg.kernel_id, ".i32.wide_sum"));
  s = tr_exact_sum(buf, NULL, 16, TR_F64, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "d_out is a null pointer"));
  CHECK(tr_lookup(TR_F64, TR_EXACT_SUM, (uint64_t)1 << 20, -1, &cfg) == TR_SUCCESS);
  CHECK(strcmp(cfg.family, "exact") == 0 && cfg.op == TR_EXACT_SUM);
  /* The half types' exact sums (into a float) have kernels; their result is 4 bytes. */
  CHECK(tr_lookup(TR_F16, TR_EXACT_SUM, (uint64_t)1 << 20, -1, &cfg) == TR_SUCCESS);
  CHECK(cfg.op == TR_EXACT_SUM && cfg.dtype == TR_F16 && contains(cfg.kernel_id, ".f16.exact_sum"));
  CHECK(tr_lookup(TR_BF16, TR_EXACT_SUM, (uint64_t)1 << 20, -1, &cfg) == TR_SUCCESS);
  CHECK(contains(cfg.kernel_id, ".bf16.exact_sum"));
  s = tr_exact_sum(buf, NULL, 16, TR_BF16, NULL);
  CHECK(s == TR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(tr_last_error(), "d_out is a null pointer"));
  /* A successful call clears the message. */
  CHECK(tr_lookup(TR_I32, TR_MIN, 16, -1, &cfg) == TR_SUCCESS);
  CHECK(strcmp(tr_last_error(), "") == 0);

  if (cfg.device < 0) {
    /* No GPU: the size query and the reductions need one. */
    s = tr_reduce(NULL, &bytes, NULL, NULL, 1000, TR_U64, TR_MAX, NULL);
    CHECK(s == TR_ERROR_CUDA);
    CHECK(contains(tr_last_error(), "no usable CUDA device"));
    s = tr_sum(buf, buf, 16, TR_I32, NULL);
    CHECK(s == TR_ERROR_CUDA);
    printf("without a GPU: %s\n", tr_last_error());
  } else {
    /* A GPU: the size query works and a host buffer is refused. */
    CHECK(tr_reduce(NULL, &bytes, NULL, NULL, 1000, TR_U64, TR_MAX, NULL) == TR_SUCCESS);
    CHECK(bytes > 0);
    s = tr_sum(buf, buf, 16, TR_I32, NULL);
    CHECK(s == TR_ERROR_INVALID_ARGUMENT);
    CHECK(contains(tr_last_error(), "host memory"));
  }
  CHECK(tr_set_database(NULL) == TR_SUCCESS);
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
