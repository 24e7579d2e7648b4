#!/usr/bin/env bash
# On the device machine: a deployment library against the full one (docs/library.md, "A
# deployment library"), with the files scripts/deploy-pack.sh put into .carry-deploy/:
# examples/sum linked with the deployment library (level and result), then compare_libraries
# (both libraries in one process, timed in turns, cold L2) over a tuning database.
#   scripts/deploy-check.sh DB [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
db=$1 rounds=${2:-30}
out=${OUT:-deploy-check-out}
mkdir -p "$out"
work=/tmp/tr-deploy
rm -rf "$work" && mkdir -p "$work/lean" "$work/full"
for f in .carry-deploy/*.xz; do xz -dc "$f" > "$work/$(basename "$f" .xz)"; done
chmod +x "$work/compare_libraries" "$work/example_sum"
# The example links libtunedreduce.so.MAJOR.MINOR (its SONAME): each folder has one.
soname=$(cat .carry-deploy/soname)
cp "$work/libtunedreduce-lean.so" "$work/lean/$soname"
cp "$work/libtunedreduce-full.so" "$work/full/$soname"
# Optional: a deployment library that lacks a winner's kernel (DEPLOY_DROP in deploy-pack.sh).
libs="lean full"
if [ -f "$work/libtunedreduce-missing.so" ]; then
  mkdir -p "$work/missing" && cp "$work/libtunedreduce-missing.so" "$work/missing/$soname"
  libs="lean missing full"
fi
[ -f "$db" ] || xz -dc "$db.xz" > "$db"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
{
  for lib in $libs; do
    echo "--- examples/sum.cpp with the $lib library"
    TUNEDREDUCE_DB=$db LD_LIBRARY_PATH=$work/$lib "$work/example_sum"
  done
  echo "--- compare_libraries: A = lean, B = full"
  "$work/compare_libraries" "$work/lean/$soname" "$work/full/$soname" "$db" "$rounds"
} 2>&1 | tee "$out/deploy-check.txt"
