#!/usr/bin/env bash
# Installs the dependencies, checks the format, builds everything and runs the tests. GPU tests
# (label gpu) report themselves skipped where there is no GPU. Then builds the host code again,
# without a kernel, under AddressSanitizer (LeakSanitizer included) and UndefinedBehaviorSanitizer
# with warnings as errors, and runs the host tests of that build. This is what .ci/run calls.
#
# TUNEDREDUCE_CUDA_ARCHS picks the architectures to compile kernels for (default: the GPU's own
# when nvidia-smi can tell; else 90-virtual, compute_90's PTX alone: where no GPU can run a kernel
# the kernels are still compiled, every one, to PTX, but ptxas does not turn them into machine
# code, about a sixth of a kernel unit's compile time). BUILD_DIR picks the build folder
# (default: build); the sanitizer build goes to BUILD_DIR-asan.
set -euo pipefail
cd "$(dirname "$0")/.."
# Chromium renders the HTML report in its test (about 25 s to install; 0 skips that test).
export TUNEDREDUCE_WITH_CHROMIUM=${TUNEDREDUCE_WITH_CHROMIUM:-1}
scripts/install-deps.sh
# Every C, C++ and CUDA source formatted as .clang-format says (seconds; first, so that a
# formatting slip fails before the build).
scripts/check-format.sh
export PATH="/usr/local/cuda/bin:$PATH"
build=${BUILD_DIR:-build}
archs=${TUNEDREDUCE_CUDA_ARCHS:-$(scripts/detect-arch.sh --ptx-without-gpu)}
jobs=${JOBS:-$(nproc)}
# Warnings are errors in the main build too (the C++ sources only: nvcc's flags are unchanged,
# so no kernel is compiled differently); the sanitizer build below has them at -O0, this one at
# the release optimisation, where other warnings appear.
# With a GPU the experiments (bench/experiments/) are compiled too, not run, so that they keep
# building against the kernels' headers and measure/; where the kernels are compiled to PTX alone
# (no GPU: CI) they are left out (190 s of a 2-core machine's CPU time; scripts/device-pack.sh
# builds them), and every (dtype, op)'s kernels go into one unit instead of two (TR_PARTS: a
# unit's fixed cost, its headers through cudafe++, cicc and gcc, about 4 s, is paid 35 times
# less), and the segmented and the exact sums' small units are one per element type
# (TR_UNIT_PER_TYPE: 12 units instead of 53).
# The host side of the CUDA units (kernel launch code, their generated stubs) unoptimised:
# nothing here runs a kernel, and gcc's optimisation was 40 % of a kernel unit's compile time
# (9.0 -> 5.4 s of about 21; nvcc's -O3 is the host compiler's). Where the kernels are compiled to
# PTX alone (no GPU here), the device code unoptimised too (-Xcicc -O0: cicc 10.5 -> 6.0 s of a
# kernel unit): no kernel of this build can run, and what CI checks of the device code, that
# every kernel compiles, does not depend on it; with a GPU the kernels are compiled as in every
# build. The test programs' C++ sources at -O0 (TUNEDREDUCE_UNOPTIMISED_TESTS: half their compile
# time); the project's C++ sources keep the release optimisation. The host test programs, those
# that need neither the kernels nor the CLI, are left out here (TUNEDREDUCE_HOST_TESTS=OFF): the
# sanitizer build below builds and runs every one of them, so they are compiled and run once.
cuda_release=-DNDEBUG experiments=ON parts=2 unit_per_type=OFF
case "$archs" in
  *-virtual) cuda_release="-DNDEBUG -Xcicc -O0" experiments=OFF parts=1 unit_per_type=ON ;;
esac
cmake -S . -B "$build" -G Ninja -DTUNEDREDUCE_CUDA_ARCHS="$archs" -DTUNEDREDUCE_WERROR=ON \
  -DTUNEDREDUCE_EXPERIMENTS=$experiments -DTR_PARTS=$parts -DTR_UNIT_PER_TYPE=$unit_per_type \
  -DCMAKE_CUDA_FLAGS_RELEASE="$cuda_release" \
  -DTUNEDREDUCE_UNOPTIMISED_TESTS=ON -DTUNEDREDUCE_HOST_TESTS=OFF
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900

# The sanitizer build (TUNEDREDUCE_SANITIZE implies TUNEDREDUCE_HOST_ONLY: no .cu file). -O0
# (Debug): the sanitizers double the compile time of a translation unit, -O1 nearly triples it
# again; -g1: the line tables the reports need, not the whole debug information. A sanitizer finding ends the program with exit code 86, which none of ours returns, so a
# test that runs a program and expects it to fail (exit 1, 2, ...) does not take a finding for
# that failure. The browser tests are not built there: under the sanitizers they would only time
# Chromium again (the main build runs them). Each test program runs as a few shards of its tests
# (tests/CMakeLists.txt), not a process a test.
asan_build="${build%/}-asan"
cmake -S . -B "$asan_build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
  -DTUNEDREDUCE_SANITIZE=address,undefined -DTUNEDREDUCE_WERROR=ON
cmake --build "$asan_build" -j "$jobs"
ASAN_OPTIONS=exitcode=86:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1 \
UBSAN_OPTIONS=exitcode=86:print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$asan_build" --output-on-failure -j "$jobs" --timeout 900
