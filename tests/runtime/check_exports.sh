#!/usr/bin/env bash
# Lists the dynamic symbols libtunedreduce.so defines and fails on any that is not the public
# API: the C functions (tr_*) and the tunedreduce:: functions of tunedreduce.hpp.
set -euo pipefail
lib=$1
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | c++filt)
echo "$exported"
public='^(tr_[a-z_]+|tunedreduce::(ReduceError::.*|status_name|level_name|cache_state_name|set_cache_state|cache_state|cuda_architectures|kernel_count|kernel_id|set_log_callback|set_log_level|lookup|lookup_segmented|segmented_reduce|set_database|database_path(\[abi:cxx11\])?|reduce|release_workspace|version)\(.*|(typeinfo|typeinfo name|vtable) for tunedreduce::ReduceError)$'
unexpected=$(echo "$exported" | grep -Ev "$public" | grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' || true)
if [ -n "$unexpected" ]; then
  echo "libtunedreduce exports symbols outside the public API:" >&2
  echo "$unexpected" >&2
  exit 1
fi
for want in tr_sum tr_lookup tr_last_error tr_version 'tunedreduce::lookup(' 'tunedreduce::reduce(' \
            'tunedreduce::set_database(' 'tunedreduce::set_cache_state(' 'tunedreduce::cache_state(' tr_set_cache_state 'vtable for tunedreduce::ReduceError' \
            tr_kernel_count tr_kernel_id 'tunedreduce::kernel_count(' 'tunedreduce::kernel_id(' \
            tr_segmented_reduce_rows tr_segmented_reduce_offsets tr_segmented_reduce_offsets_bounded \
            tr_segmented_reduce_offsets_checked \
            'tunedreduce::segmented_reduce(' \
            'tunedreduce::lookup_segmented('; do
  echo "$exported" | grep -F "$want" > /dev/null || { echo "missing export: $want" >&2; exit 1; }
done
echo "OK: $(echo "$exported" | wc -l) symbols, all public"
