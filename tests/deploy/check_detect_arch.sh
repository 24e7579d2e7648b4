#!/usr/bin/env bash
# scripts/detect-arch.sh: the first GPU's compute capability as nvidia-smi gives it (e.g. 90);
# where nvidia-smi is missing or fails, 90, or 90-virtual with --ptx-without-gpu (what
# scripts/test.sh compiles where no kernel can run: compute_90 PTX alone).
#   check_detect_arch.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Three PATHs with the tools the script uses: no nvidia-smi; one that lists two GPUs; one that
# fails as it does where the driver is not loaded.
for dir in none gpu broken; do
  mkdir -p "$work/$dir"
  for tool in bash head tr; do ln -s "$(command -v "$tool")" "$work/$dir/$tool"; done
done
printf '#!/bin/sh\nprintf "9.0\\n8.6\\n"\n' > "$work/gpu/nvidia-smi"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n' > "$work/broken/nvidia-smi"
chmod +x "$work/gpu/nvidia-smi" "$work/broken/nvidia-smi"

check() {  # PATH-DIR EXPECTED [OPTION]
  local got
  got=$(PATH="$work/$1" "$work/$1/bash" "$src/scripts/detect-arch.sh" "${@:3}") ||
    fail "detect-arch.sh ${*:3} with PATH $1 exited $?"
  [ "$got" = "$2" ] || fail "detect-arch.sh ${*:3} with PATH $1 printed '$got', expected '$2'"
}
check none 90
check none 90-virtual --ptx-without-gpu
check broken 90
check broken 90-virtual --ptx-without-gpu
check gpu 90
check gpu 90 --ptx-without-gpu
echo "OK: detect-arch.sh"
