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
echo
echo "==== GPU suite summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) ===="
grep -h -A40 "^GPU registry suite" "$out/test_registry_gpu.log" 2>/dev/null | grep -v "^\[" | head -20
printf '%-34s %-12s %9s\n' step result time
for r in "${rows[@]}"; do echo "$r"; done
