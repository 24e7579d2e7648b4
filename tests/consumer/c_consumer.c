/* Uses the installed C API through pkg-config: built by tests/consumer/run.sh with
 * `cc $(pkg-config --cflags --libs tunedreduce)`. */
#include <stdio.h>
#include <string.h>

#include <tunedreduce/tunedreduce.h>

int main(void) {
  tr_config cfg;
  if (tr_lookup(TR_I64, TR_MAX, 4096, -1, &cfg) != TR_SUCCESS) {
    fprintf(stderr, "FAIL: tr_lookup: %s\n", tr_last_error());
    return 1;
  }
  printf("libtunedreduce %s: i64 max 4096 -> %s (%s)\n", tr_version(), cfg.kernel_id,
         tr_level_name(cfg.level));
  if (tr_sum(NULL, NULL, 1, TR_I32, NULL) != TR_ERROR_INVALID_ARGUMENT ||
      strstr(tr_last_error(), "null pointer") == NULL) {
    fprintf(stderr, "FAIL: a null pointer was not reported\n");
    return 1;
  }
  return strstr(cfg.kernel_id, ".i64.max") ? 0 : 1;
}
