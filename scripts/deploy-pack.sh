#!/usr/bin/env bash
# Here (no GPU needed): a deployment library for the winners of tuning databases, built for the
# architectures of a fleet, and packed with what scripts/deploy-check.sh needs on the device
# machine into .carry-deploy/ (ignored by git): the deployment and the full library (the full
# one from BUILD_DIR, as scripts/device-pack.sh builds it), examples/sum linked with the
# deployment library, and compare_libraries.
#   scripts/deploy-pack.sh DB [DB ...]
# DEPLOY_ARCHS: the deployment library's architectures (default: 80-real;90-real;100-real;120,
# i.e. machine code for sm_80, sm_90, sm_100 and sm_120 and PTX of sm_120).
# DEPLOY_DROP: a registry id; a second deployment library is built without it (in
# DEPLOY_BUILD_DIR-missing), to show on the device how a row whose kernel is missing falls back.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/deploy-pack.sh DB [DB ...]" >&2; exit 2; }
build=${BUILD_DIR:-build}
deploy=${DEPLOY_BUILD_DIR:-build-deploy}
archs=${DEPLOY_ARCHS:-80-real;90-real;100-real;120}
cmake --build "$build" --target tunedreduce_cli tunedreduce compare_libraries
args=()
for db in "$@"; do args+=(--db "$db"); done
mkdir -p "$deploy"
"$build/bin/tunedreduce" deploy "${args[@]}" -o "$deploy/kernels.list"
t0=$(date +%s)
cmake -S . -B "$deploy" -G Ninja -DTUNEDREDUCE_KERNELS="$PWD/$deploy/kernels.list" \
  -DTUNEDREDUCE_CUDA_ARCHS="$archs" | grep -E "Deployment build|Error" || true
cmake --build "$deploy"
echo "deployment build: $(( $(date +%s) - t0 )) s (configure and build, $(nproc) cores)"
lean=$(readlink -f "$deploy/lib/libtunedreduce.so")
full=$(readlink -f "$build/lib/libtunedreduce.so")
ls -la "$lean" "$full" "$deploy/lib/libtunedreduce.a"
"$build/bin/tunedreduce" deploy "${args[@]}" --check "$lean"
rm -rf .carry-deploy && mkdir -p .carry-deploy
if [ -n "${DEPLOY_DROP:-}" ]; then
  grep -vxF "$DEPLOY_DROP" "$deploy/kernels.list" > "$deploy-missing.list"
  cmake -S . -B "$deploy-missing" -G Ninja -DTUNEDREDUCE_KERNELS="$PWD/$deploy-missing.list" \
    -DTUNEDREDUCE_CUDA_ARCHS="$archs" > /dev/null
  cmake --build "$deploy-missing" --target tunedreduce
  "$build/bin/tunedreduce" deploy "${args[@]}" --check "$deploy-missing/lib/libtunedreduce.so" || true
  cp "$(readlink -f "$deploy-missing/lib/libtunedreduce.so")" .carry-deploy/libtunedreduce-missing.so
fi
cp "$lean" .carry-deploy/libtunedreduce-lean.so
cp "$full" .carry-deploy/libtunedreduce-full.so
cp "$deploy/bin/example_sum" "$build/bin/compare_libraries" .carry-deploy/
objdump -p "$lean" | sed -n 's/^ *SONAME *//p' > .carry-deploy/soname
ls .carry-deploy/*.so .carry-deploy/example_sum .carry-deploy/compare_libraries | xargs -P "$(nproc)" -n 1 xz -9e
du -sh .carry-deploy
