#!/usr/bin/env bash
# `tunedreduce bench` where CI runs: usage errors exit 2 before anything else; without a GPU it
# exits 6 with a clear message; with one, a one-size run of both library calls (read flush:
# --l2 clean, the same as cold) verifies and exits 0.
set -uo pipefail
cli=$1
out=$("$cli" bench --dtypes i8 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "unknown element type 'i8'" <<<"$out" || { echo "bad dtype: rc=$rc: $out"; exit 1; }
out=$("$cli" bench --sizes 2^40 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "\-\-sizes: invalid size '2^40'" <<<"$out" || { echo "bad size: rc=$rc: $out"; exit 1; }
# --sizes were exponents of two before: the old forms are refused with the new spelling.
out=$("$cli" bench --sizes 10,20 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "\-\-sizes 10: bench sizes are element counts now; did you mean 2^10?" <<<"$out" ||
  { echo "old exponent list: rc=$rc: $out"; exit 1; }
out=$("$cli" bench --sizes 24-30 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF "write 2^24..2^30*2" <<<"$out" || { echo "old exponent range: rc=$rc: $out"; exit 1; }
out=$("$cli" bench --l2 lukewarm 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "\-\-l2 must be cold (or clean), dirty or warm, not .lukewarm." <<<"$out" ||
  { echo "bad --l2: rc=$rc: $out"; exit 1; }
out=$("$cli" bench --api three-phase 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "\-\-api must be cached, two-phase or both, not .three-phase." <<<"$out" ||
  { echo "bad --api: rc=$rc: $out"; exit 1; }
out=$("$cli" bench --host-calls -5 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "\-\-host-calls must be between" <<<"$out" ||
  { echo "bad --host-calls: rc=$rc: $out"; exit 1; }
out=$("$cli" bench --dtypes i32 --ops sum --sizes 2^10 --repeats 3 --l2 clean --api both 2>&1); rc=$?
echo "$out"
case $rc in
  6) grep -q "tunedreduce bench: error: no CUDA device (.*): the benchmark needs a GPU" <<<"$out" ||
       { echo "exit 6 without the message"; exit 1; } ;;
  0) grep -q "i32 sum" <<<"$out" || { echo "exit 0 without a table"; exit 1; } ;;
  *) echo "unexpected exit code $rc"; exit 1 ;;
esac
echo "OK (exit $rc)"
