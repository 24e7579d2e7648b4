#!/usr/bin/env bash
# The whole GPU suite in one call on the device machine; prints a summary table last.
# Expects the binaries packed by scripts/device-pack.sh in .carry/ (carried with the call).
# Logs go to $OUT (the device tool returns them) or ./gpu-suite-out.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-suite-out}
mkdir -p "$out"
bin=/tmp/tr-bin
rm -rf "$bin" && mkdir -p "$bin"
for f in .carry/bin/*.xz; do xz -dc "$f" > "$bin/$(basename "$f" .xz)"; done
chmod +x "$bin"/*
echo "binaries from commit: $(cat .carry/commit 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
declare -a rows=()
run_step() {  # name, command...
  local name=$1; shift
  local t0=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  local dt="$((ms / 1000)).$(( (ms % 1000) / 100 ))"
  local verdict=PASS
  [ $rc -eq 77 ] && verdict=SKIP
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && verdict="FAIL(rc=$rc)"
  rows+=("$(printf '%-34s %-12s %8ss' "$name" "$verdict" "$dt")")
  tail -n 25 "$out/$name.log"
}
export TR_TEST_WORKER="$bin/tr_test_worker" TUNEDREDUCE_BIN="$bin/tunedreduce"
filter=${GPU_SUITE_FILTER:-*}
for t in "$bin"/test_*; do
  run_step "$(basename "$t")" "$t" --gtest_filter="$filter"
done
if command -v compute-sanitizer >/dev/null && [ -x "$bin/test_registry_gpu" ]; then
  run_step memcheck compute-sanitizer --tool memcheck --error-exitcode 99 \
    "$bin/test_registry_gpu" --gtest_filter='SanitizerSubset.*'
  run_step racecheck compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 99 \
    "$bin/test_registry_gpu" --gtest_filter='SanitizerSubset.*'
  run_step synccheck compute-sanitizer --tool synccheck --error-exitcode 99 \
    "$bin/test_registry_gpu" --gtest_filter='SanitizerSubset.*'
fi
# The benchmark: the tuned reduction (through the library, with the tuning database carried as
# .carry/tune.db.xz when there is one, else the built-in defaults) against CUB and Thrust.
if [ "${GPU_SUITE_BENCH:-1}" = 1 ] && [ -x "$bin/tunedreduce" ]; then
  bench_db=/tmp/tr-bench-none.db
  if [ -f .carry/tune.db.xz ]; then bench_db=/tmp/tr-tune.db; xz -dc .carry/tune.db.xz > "$bench_db"; fi
  run_step bench "$bin/tunedreduce" bench --db "$bench_db" --json "$out/bench.json" ${BENCH_ARGS:-}
  # The same for int32 sum at the large sizes with a read flush (--l2 clean): what the memset
  # flush's dirty lines cost every kernel there (docs/performance.md, "Two cold flushes").
  run_step bench_clean "$bin/tunedreduce" bench --db "$bench_db" --l2 clean --dtypes i32 \
    --ops sum --sizes 24-30 --json "$out/bench-clean.json"
fi
echo
echo "==== GPU suite summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) ===="
grep -h -A40 "^GPU registry suite" "$out/test_registry_gpu.log" 2>/dev/null | grep -v "^\[" | head -20
if [ -f "$out/bench.log" ]; then
  echo "benchmark: speed-up of the tuned reduction over cub::DeviceReduce (CUB us / tuned us,"
  echo "cold L2, medians; full table in bench.log / bench.json)"
  awk '
    /^(i32|u32|i64|u64|f32|f64) (sum|min|max)$/ { key = $1 "." $2; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key } next }
    key != "" && $1 ~ /^2\^[0-9]+$/ {
      if (!($1 in sz)) { sz[$1] = 1; sizes[++ns] = $1 }
      v[key, $1] = $9; ++rows; if ($9 + 0 < 1) ++below
    }
    END {
      want = "i32.sum i64.sum f32.sum f64.sum i32.min i32.max f32.min f32.max"
      nw = split(want, w, " ")
      printf "%-6s", "n"; for (i = 1; i <= nw; ++i) if (w[i] in seen) printf " %8s", w[i]; printf "\n"
      for (j = 1; j <= ns; ++j) {
        printf "%-6s", sizes[j]
        for (i = 1; i <= nw; ++i) if (w[i] in seen) printf " %8s", v[w[i], sizes[j]]
        printf "\n"
      }
      printf "rows (every type and operator) slower than CUB: %d of %d\n", below, rows
    }' "$out/bench.log"
  if [ -f "$out/bench_clean.log" ]; then
    echo "i32 sum, large sizes: tuned and CUB GB/s with each flush (cold: memset, clean: read)"
    printf '%-6s %12s %12s %12s %12s\n' n tuned-cold CUB-cold tuned-clean CUB-clean
    awk 'FNR == 1 { f++ } /^i32 sum$/ { on = 1; next } /^(i32|u32|i64|u64|f32|f64) (sum|min|max)$/ { on = 0 }
      on && $1 ~ /^2\^(2[4-9]|30)$/ { t[f, $1] = $3; c[f, $1] = $6; if (f == 1) n[++k] = $1 }
      END { for (i = 1; i <= k; ++i) printf "%-6s %12s %12s %12s %12s\n", n[i], t[1, n[i]], c[1, n[i]], t[2, n[i]], c[2, n[i]] }' \
      "$out/bench.log" "$out/bench_clean.log"
  fi
fi
printf '%-34s %-12s %9s\n' step result time
for r in "${rows[@]}"; do echo "$r"; done
