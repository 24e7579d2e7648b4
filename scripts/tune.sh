#!/usr/bin/env bash
# The main job: installs the dependencies, builds, tunes this machine's GPU with tune.toml into
# the default database and prints the winners. Extra arguments go to `tunedreduce tune`.
set -euo pipefail
cd "$(dirname "$0")/.."
# First, before anything is installed or built (a build takes about 15 minutes): is there a GPU?
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "tune.sh: no NVIDIA GPU is visible on this machine (nvidia-smi -L failed): nothing to tune." >&2
  echo "tune.sh: to build without tuning, run scripts/test.sh (build and tests), or" >&2
  echo "tune.sh:   scripts/install-deps.sh && cmake -S . -B build -G Ninja && cmake --build build --target tunedreduce_cli" >&2
  exit 6
fi
scripts/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
build=${BUILD_DIR:-build}
archs=${TUNEDREDUCE_CUDA_ARCHS:-$(scripts/detect-arch.sh)}
cmake -S . -B "$build" -G Ninja -DTUNEDREDUCE_CUDA_ARCHS="$archs"
cmake --build "$build" --target tunedreduce_cli
exec "$build/bin/tunedreduce" tune --config tune.toml "$@"
