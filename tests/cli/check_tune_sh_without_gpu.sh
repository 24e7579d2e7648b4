#!/usr/bin/env bash
# scripts/tune.sh on a machine without a GPU stops at once with exit code 6 and a message, before
# it installs or builds anything. A stand-in nvidia-smi that fails plays the machine without a
# GPU (so the test means the same on a machine that has one).
set -uo pipefail
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n' > "$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"
start=$(date +%s)
BUILD_DIR="$tmp/build" PATH="$tmp/bin:/usr/bin:/bin" "$root/scripts/tune.sh" > "$tmp/out" 2> "$tmp/err"
rc=$?
secs=$(( $(date +%s) - start ))
cat "$tmp/err"
[ $rc -eq 6 ] || { echo "FAIL: exit code $rc, expected 6" >&2; exit 1; }
grep -q "no NVIDIA GPU is visible on this machine" "$tmp/err" || { echo "FAIL: no message" >&2; exit 1; }
grep -q "scripts/test.sh" "$tmp/err" || { echo "FAIL: the message does not say how to build" >&2; exit 1; }
[ ! -e "$tmp/build" ] || { echo "FAIL: it built before it stopped" >&2; exit 1; }
[ $secs -lt 10 ] || { echo "FAIL: took $secs s" >&2; exit 1; }
echo "OK: exit 6 after $secs s, nothing built"
