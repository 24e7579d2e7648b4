#!/usr/bin/env bash
# Here (no GPU needed): a deployment library for the winners of tuning databases, built for the
# architectures of a fleet, and packed with what scripts/deploy-check.sh needs on the device
# machine into .carry-deploy/ (ignored by git): the deployment and the full library (the full
# one from BUILD_DIR, as scripts/device-pack.sh builds it), examples/sum linked with the
# deployment library, and compare_libraries.
#   scripts/deploy-pack.sh DB [DB ...]
# DEPLOY_ARCHS: the deployment library's architectures (default: 80-real;90-real;100-real;120,
# i.e. machine code for sm_80, sm_90, sm_100 and sm_120 and PTX of sm_120).
# DEPLOY_VIRTUAL_ARCH: compile the kernels once, for this virtual architecture (e.g. 80), and
# give every architecture of DEPLOY_ARCHS machine code from it (TUNEDREDUCE_DEPLOY_VIRTUAL_ARCH,
# docs/library.md); DEPLOY_ARCHS must then be real architectures and this one's PTX
# (default with it: 80-real;90-real;100-real;120-real;80-virtual).
# DEPLOY_TOLERANCE: a kernel budget (`tunedreduce deploy --tolerance`, e.g. 1%): the databases
# merged into DEPLOY_BUILD_DIR/deploy.db with the budget's kernels in their winner rows, which is
# the database the library serves (packed too, for deploy-check.sh).
# DEPLOY_DROP: a registry id; a second deployment library is built without it (in
# DEPLOY_BUILD_DIR-missing), to show on the device how a row whose kernel is missing falls back.
# DEPLOY_PACK=0: build, measure and check only; pack nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/deploy-pack.sh DB [DB ...]" >&2; exit 2; }
build=${BUILD_DIR:-build}
deploy=${DEPLOY_BUILD_DIR:-build-deploy}
virtual=${DEPLOY_VIRTUAL_ARCH:-}
if [ -n "$virtual" ]; then
  archs=${DEPLOY_ARCHS:-80-real;90-real;100-real;120-real;$virtual-virtual}
else
  archs=${DEPLOY_ARCHS:-80-real;90-real;100-real;120}
fi
cmake --build "$build" --target tunedreduce_cli tunedreduce compare_libraries
args=()
for db in "$@"; do args+=(--db "$db"); done
mkdir -p "$deploy"
list=$(cd "$deploy" && pwd)/kernels.list
if [ -n "${DEPLOY_TOLERANCE:-}" ]; then
  rm -f "$deploy/deploy.db"
  "$build/bin/tunedreduce" deploy "${args[@]}" --tolerance "$DEPLOY_TOLERANCE" \
    --deploy-db "$deploy/deploy.db" -o "$deploy/kernels.list"
  args=(--db "$deploy/deploy.db")  # the rows the library serves
else
  "$build/bin/tunedreduce" deploy "${args[@]}" -o "$deploy/kernels.list"
fi
echo "load before the build: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min; $(nproc) cores)"
t0=$(date +%s)
read -r cpu0 < <(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)  # this shell's children
cmake -S . -B "$deploy" -G Ninja -DTUNEDREDUCE_KERNELS="$list" \
  -DTUNEDREDUCE_CUDA_ARCHS="$archs" -DTUNEDREDUCE_DEPLOY_VIRTUAL_ARCH="$virtual" |
  grep -E "Deployment build|Error" || true
cmake --build "$deploy"
read -r cpu1 < <(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
echo "deployment build: $(( $(date +%s) - t0 )) s (configure and build, $(nproc) cores;" \
  "$(( (cpu1 - cpu0) / $(getconf CLK_TCK) )) s of CPU; load after: $(cut -d' ' -f1-3 /proc/loadavg))"
lean=$(readlink -f "$deploy/lib/libtunedreduce.so")
full=$(readlink -f "$build/lib/libtunedreduce.so")
ls -la "$lean" "$full" "$deploy/lib/libtunedreduce.a"
strip -o "$deploy/libtunedreduce-stripped.so" "$lean"
size -A "$lean" | awk '$1 == ".nv_fatbin" || $1 == ".text" { printf "%s %.2f MB\n", $1, $2 / 1e6 }'
echo "stripped: $(stat -c %s "$deploy/libtunedreduce-stripped.so") bytes"
"$build/bin/tunedreduce" deploy "${args[@]}" --check "$lean"
[ "${DEPLOY_PACK:-1}" != 0 ] || exit 0
rm -rf .carry-deploy && mkdir -p .carry-deploy
if [ -n "${DEPLOY_DROP:-}" ]; then
  grep -vxF "$DEPLOY_DROP" "$list" > "$deploy-missing.list"
  cmake -S . -B "$deploy-missing" -G Ninja -DTUNEDREDUCE_KERNELS="$(readlink -f "$deploy-missing.list")" \
    -DTUNEDREDUCE_CUDA_ARCHS="$archs" -DTUNEDREDUCE_DEPLOY_VIRTUAL_ARCH="$virtual" > /dev/null
  cmake --build "$deploy-missing" --target tunedreduce
  "$build/bin/tunedreduce" deploy "${args[@]}" --check "$deploy-missing/lib/libtunedreduce.so" || true
  cp "$(readlink -f "$deploy-missing/lib/libtunedreduce.so")" .carry-deploy/libtunedreduce-missing.so
fi
cp "$lean" .carry-deploy/libtunedreduce-lean.so
cp "$full" .carry-deploy/libtunedreduce-full.so
cp "$deploy/bin/example_sum" "$build/bin/compare_libraries" .carry-deploy/
[ -z "${DEPLOY_TOLERANCE:-}" ] || cp "$deploy/deploy.db" .carry-deploy/deploy.db
objdump -p "$lean" | sed -n 's/^ *SONAME *//p' > .carry-deploy/soname
ls .carry-deploy/*.so .carry-deploy/*.db .carry-deploy/example_sum .carry-deploy/compare_libraries 2>/dev/null |
  xargs -P "$(nproc)" -n 1 xz -9e
du -sh .carry-deploy
