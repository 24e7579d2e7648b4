#!/usr/bin/env bash
# The whole GPU suite in one call on the device machine; prints a summary table last.
# Expects the binaries packed by scripts/device-pack.sh in .carry/ (carried with the call).
# Logs go to $OUT (the device tool returns them; packed into logs.tar.xz) or ./gpu-suite-out.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-suite-out}
mkdir -p "$out"
# TR_BIN: where the binaries are unpacked (another folder lets a tune run beside the suite, on
# another GPU of the machine, from its own copy).
bin=${TR_BIN:-/tmp/tr-bin}
# TR_BIN_READY=1: the binaries are in $bin already (unpacked by earlier calls on the same
# machine, when all of them together exceed what one call carries).
if [ "${TR_BIN_READY:-0}" != 1 ]; then
  rm -rf "$bin" && mkdir -p "$bin"
  for f in .carry/bin/*.xz; do xz -dc "$f" > "$bin/$(basename "$f" .xz)"; done
  chmod +x "$bin"/*
fi
echo "binaries from commit: $(cat .carry/commit "$bin/commit" 2>/dev/null)"
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
  # The two-phase launches of the subset run over temporary storage nothing wrote: initcheck
  # fails if a kernel reads any byte of it before writing it.
  run_step initcheck compute-sanitizer --tool initcheck --error-exitcode 99 \
    "$bin/test_registry_gpu" --gtest_filter='SanitizerSubset.*'
fi
# The benchmark: both of the library's calls (the cached workspace and CUB's two-phase
# convention), through the library, with the tuning database carried as .carry/tune.db.xz when
# there is one (else the built-in defaults), against CUB; cold L2 (a read flush); then the
# host's cost per call; then int32 sum at the large sizes with the memset flush (--l2 dirty);
# then segmented reductions against cub::DeviceSegmentedReduce.
if [ "${GPU_SUITE_BENCH:-1}" = 1 ] && [ -x "$bin/tunedreduce" ]; then
  none_db=/tmp/tr-bench-none.db  # never created: the bench then uses the built-in rules
  bench_db=$none_db
  if [ -f .carry/tune.db.xz ]; then bench_db=/tmp/tr-tune.db; xz -dc .carry/tune.db.xz > "$bench_db"; fi
  # GPU_SUITE_DB: a database file already on the machine instead.
  if [ -n "${GPU_SUITE_DB:-}" ]; then bench_db=$GPU_SUITE_DB; fi
  run_step bench "$bin/tunedreduce" bench --db "$bench_db" --api both --l2 cold \
    --json "$out/bench.json" ${BENCH_ARGS:-}
  # The exact sums (docs/kernels.md, "Exact sums") against CUB's inexact sum: the database's
  # exact_sum winners, or the built-in defaults where it has none.
  run_step bench_exact "$bin/tunedreduce" bench --db "$bench_db" --ops exact_sum \
    --dtypes f32,f64,f16,bf16 \
    --api both --l2 cold --json "$out/bench-exact.json"
  run_step bench_host "$bin/tunedreduce" bench --db "$bench_db" --host-calls 20000 \
    --dtypes f32 --ops sum --sizes 2^12,2^16 --json "$out/bench-host.json"
  run_step bench_dirty "$bin/tunedreduce" bench --db "$bench_db" --l2 dirty --dtypes i32 \
    --ops sum --sizes '2^24..2^30*2' --json "$out/bench-dirty.json"
  # Segmented reductions (bench --segments): rows of every 16th power of two up to each total
  # (SEG_BENCH_ARGS replaces the keys and grid), against cub::DeviceSegmentedReduce.
  run_step bench_segments "$bin/tunedreduce" bench --db "$bench_db" --segments '1..2^28*16' \
    --sizes 2^16,2^20,2^24,2^28 --repeats 15 --json "$out/bench-segments.json" \
    ${SEG_BENCH_ARGS:---dtypes f32,bf16 --ops sum,wide_sum,argmax}
  # GPU_SUITE_BENCH_DEFAULTS=1: the same benchmark once more with no database (the built-in
  # rules, what a GPU without a tuning run of its own gets).
  if [ "${GPU_SUITE_BENCH_DEFAULTS:-0}" = 1 ] && [ "$bench_db" != "$none_db" ]; then
    run_step bench_defaults "$bin/tunedreduce" bench --db "$none_db" --api both \
      --l2 cold --json "$out/bench-defaults.json" ${BENCH_ARGS:-}
  fi
fi
summary() {
echo "==== GPU suite summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | sed -n 1p)) ===="
grep -h -A40 "^GPU registry suite" "$out/test_registry_gpu.log" 2>/dev/null | grep -v "^\[" | sed -n 1,20p
if [ -f "$out/bench.json" ]; then
  host=""; [ -f "$out/bench-host.json" ] && host="$out/bench-host.json"
  python3 scripts/bench-summary.py "$out/bench.json" $host
  if [ -f "$out/bench-exact.json" ]; then
    echo "---- exact_sum (CUB: the inexact cub::DeviceReduce::Sum; halves: Reduce into float) ----"
    python3 scripts/bench-summary.py "$out/bench-exact.json"
  fi
  if [ -f "$out/bench-defaults.json" ]; then
    echo "---- the same with no database (built-in rules) ----"
    python3 scripts/bench-summary.py "$out/bench-defaults.json"
  fi
  if [ -f "$out/bench-segments.json" ]; then
    echo "---- segmented (bench --segments; CUB: cub::DeviceSegmentedReduce) ----"
    python3 scripts/bench-summary.py "$out/bench-segments.json"
  fi
  if [ -f "$out/bench-dirty.json" ]; then
    echo "i32 sum, large sizes, GB/s of the cached call and CUB with each flush (cold: read, dirty: memset)"
    python3 - "$out/bench.json" "$out/bench-dirty.json" <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:]]
def rows(d):
    return {r["n"]: r for r in d["results"] if r["dtype"] == "i32" and r["op"] == "sum"}
cold, dirty = rows(docs[0]), rows(docs[1])
print("%-6s %12s %12s %12s %12s" % ("n", "tuned-cold", "CUB-cold", "tuned-dirty", "CUB-dirty"))
for n in sorted(dirty):
    g = lambda r, m: "%.0f" % r[m]["gbps"] if r and m in r and r[m].get("verified") else "-"
    c = cold.get(n)
    print("%-6s %12s %12s %12s %12s" % ("2^%d" % (n.bit_length() - 1), g(c, "cached"), g(c, "cub"),
                                        g(dirty[n], "cached"), g(dirty[n], "cub")))
PY
  fi
fi
printf '%-34s %-12s %9s\n' step result time
for r in "${rows[@]}"; do echo "$r"; done
}
echo
# The summary also goes to summary.txt; on the device machine ($OUT set) the step logs are packed
# into one logs.tar.xz, so that what comes back (at most 8 files) is summary.txt, logs.tar.xz and
# the bench JSON files.
summary | tee "$out/summary.txt"
if [ -n "${OUT:-}" ]; then
  (cd "$out" && tar -cJf logs.tar.xz ./*.log && rm -f ./*.log)
fi
