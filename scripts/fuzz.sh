#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time, from its seed corpus, and fails with the input
# that broke it. CTest runs it for every target (label fuzz); run it by hand for longer:
#   scripts/fuzz.sh build/fuzz/fuzz_toml tests/fuzz/corpus/toml 600
#
# usage: scripts/fuzz.sh BINARY SEED_DIR SECONDS [SEED]
# New inputs go to a temporary folder (the seed corpus is never written); the seed of libFuzzer's
# random choices is SEED (default 1, so that a CI run is repeatable). On a finding: exit 1, the
# input saved as ./fuzz-findings/<target>-<crash|leak|timeout|oom>-<sha1>, with the command that
# replays it. A finding becomes a regression test once its input is copied into
# tests/fuzz/regressions/<target>/ (tests/fuzz/CMakeLists.txt replays every file there).
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: scripts/fuzz.sh BINARY SEED_DIR SECONDS [SEED]" >&2; exit 2; }
bin=$1 seeds=$2 secs=$3 seed=${4:-1}
[ -x "$bin" ] || { echo "fuzz.sh: '$bin' is not an executable fuzz target" >&2; exit 2; }
[ -d "$seeds" ] || { echo "fuzz.sh: '$seeds' is not a folder of seed inputs" >&2; exit 2; }
case $secs in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$secs'" >&2; exit 2;; esac
target=$(basename "$bin"); target=${target#fuzz_}
work=$(mktemp -d "${TMPDIR:-/tmp}/tr-fuzz-$target.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
# detect_leaks: the targets own nothing past a run; a leak is a finding too.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$bin" -max_total_time="$secs" -seed="$seed" -max_len=131072 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds" \
  > "$work/log" 2>&1
rc=$?
tail -n 25 "$work/log"
found=$(ls "$work/artifacts" 2>/dev/null | sed -n 1p)
if [ $rc -ne 0 ] || [ -n "$found" ]; then
  mkdir -p fuzz-findings
  if [ -n "$found" ]; then
    kept="fuzz-findings/$target-$found"
    cp "$work/artifacts/$found" "$kept"
    echo "fuzz.sh: $target: FINDING (exit $rc): input kept as $kept ($(wc -c < "$kept") bytes)"
    echo "fuzz.sh: replay: $bin $kept ; base64 of the input:"
    base64 -w 0 "$kept"; echo
  else
    echo "fuzz.sh: $target: libFuzzer exited with $rc and saved no input (see the log above)"
  fi
  exit 1
fi
echo "fuzz.sh: $target: no finding in $secs s ($(ls "$work/corpus" | wc -l) new inputs)"
