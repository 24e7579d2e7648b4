#!/usr/bin/env bash
# Installs the dependencies, builds everything and runs the tests. GPU tests (label gpu) report
# themselves skipped where there is no GPU. This is what .ci/run calls.
#
# TUNEDREDUCE_CUDA_ARCHS picks the architectures to compile kernels for (default: the GPU's own
# when nvidia-smi can tell, else 90). BUILD_DIR picks the build folder (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
# Chromium renders the HTML report in its test (about 25 s to install; 0 skips that test).
export TUNEDREDUCE_WITH_CHROMIUM=${TUNEDREDUCE_WITH_CHROMIUM:-1}
scripts/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
build=${BUILD_DIR:-build}
archs=${TUNEDREDUCE_CUDA_ARCHS:-$(scripts/detect-arch.sh)}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DTUNEDREDUCE_CUDA_ARCHS="$archs"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900
