#!/usr/bin/env bash
# Builds the GPU test and benchmark binaries for sm_90 here and packs them, xz-compressed, into
# .carry/ (ignored by git), for the device machine. Then, with the device tool:
#   run(command="scripts/gpu-suite.sh", carry=[".carry"])
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
archs=${TUNEDREDUCE_CUDA_ARCHS:-90}
# The experiments (bench/experiments/) are built too, not packed: CI leaves them out, so that
# this build is where they keep compiling.
cmake -S . -B "$build" -G Ninja -DTUNEDREDUCE_CUDA_ARCHS="$archs" -DTUNEDREDUCE_EXPERIMENTS=ON \
  >/dev/null
targets=(tunedreduce_cli tr_test_worker experiments)
while IFS= read -r t; do targets+=("$t"); done < <(sed -n 's/^tr_add_gpu_test(\([a-z0-9_]*\).*/\1/p' tests/gpu/CMakeLists.txt)
cmake --build "$build" --target "${targets[@]}"
rm -rf .carry && mkdir -p .carry/bin
cp "$build/bin/tunedreduce" .carry/bin/
for t in "${targets[@]}"; do
  [ "$t" = tunedreduce_cli ] || [ "$t" = experiments ] && continue
  [ "$t" = tr_test_worker ] && { cp "$build/tests/gpu/tr_test_worker" .carry/bin/; continue; }
  f=$(find "$build/tests/gpu" -maxdepth 1 -name "$t" -type f)
  cp "$f" .carry/bin/
done
# -9e: the smallest files (about 12 MB for each registry binary, 17% less than -3), so that the
# binaries, a tuning database or two and the working tree stay under the 64 MiB a call carries.
ls .carry/bin/* | xargs -P "$(nproc)" -n 1 xz -9e
git rev-parse HEAD > .carry/commit
git status --porcelain --untracked-files=no | grep . > /dev/null && echo "(with uncommitted changes)" >> .carry/commit
du -sh .carry
