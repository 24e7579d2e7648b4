#!/usr/bin/env bash
# Installs the Debian packages tunedreduce builds against. Nothing is fetched from anywhere else.
# The CUDA toolkit (nvcc, CUB, Thrust) is expected at /usr/local/cuda or on PATH; it is not a
# Debian package here, so this script only checks for it.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libsqlite3-dev sqlite3
  libspdlog-dev libfmt-dev
  libboost-program-options-dev
  libtomlplusplus-dev
  libgtest-dev
  clang libclang-rt-14-dev
  clang-format  # scripts/check-format.sh: the format check CI runs first
  dpkg-dev file
  groff-base  # the man page test renders tunedreduce.1 (usually installed already: man-db needs it)
)
if [ "${TUNEDREDUCE_WITH_CHROMIUM:-0}" = 1 ]; then
  packages+=(chromium)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" > /dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: the CUDA toolkit (nvcc) was not found on PATH or at /usr/local/cuda;" >&2
  echo "install-deps: install CUDA 13 from NVIDIA, then run this again." >&2
  exit 1
fi
