#!/usr/bin/env bash
# The install, proven by its users: `cmake --install` into a fresh prefix, the files checked,
# then a CMake project (find_package(TunedReduce): shared and static targets) and a C program
# (pkg-config: shared, and static with --static) built against it and run.
#   run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
cmake=${CMAKE_COMMAND:-cmake}
work=$(mktemp -d "${TMPDIR:-/tmp}/tr_consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log" ||
  { cat "$work/install.log"; echo "install failed (was everything built?)" >&2; exit 1; }
libdir=$(cd "$prefix" && dirname "$(find . -name 'libtunedreduce.so' | sed -n 1p)")
libdir=${libdir#./}
# A deployment build (TUNEDREDUCE_KERNELS set) installs the library and its kernel list, and no
# CLI or tune.toml.
deployment=$(sed -n 's/^TUNEDREDUCE_KERNELS:FILEPATH=\(..*\)$/\1/p' "$build/CMakeCache.txt")
if [ -n "$deployment" ]; then
  extra=(share/tunedreduce/kernels.list)
else
  extra=(bin/tunedreduce share/tunedreduce/tune.toml share/bash-completion/completions/tunedreduce
         share/man/man1/tunedreduce.1)
fi
for f in "$libdir/libtunedreduce.so" "$libdir/libtunedreduce.a" \
         include/tunedreduce/tunedreduce.hpp include/tunedreduce/tunedreduce.h \
         include/tunedreduce/types.hpp \
         "$libdir/cmake/TunedReduce/TunedReduceConfig.cmake" \
         "$libdir/cmake/TunedReduce/TunedReduceConfigVersion.cmake" \
         "$libdir/pkgconfig/tunedreduce.pc" "${extra[@]}"; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f" >&2; exit 1; }
done
echo "installed into $prefix:"
(cd "$prefix" && find . -type f -o -type l | sort | sed 's/^/  /')
if grep -rq sqlite3.h "$prefix/include"; then echo "a public header includes SQLite" >&2; exit 1; fi

# The installed CLI finds the installed tune.toml from a folder that has none.
if [ -z "$deployment" ]; then
  mkdir -p "$work/elsewhere"
  (cd "$work/elsewhere" && "$prefix/bin/tunedreduce" tune --dry-run > "$work/dry-run.log" 2>&1) ||
    { cat "$work/dry-run.log"; echo "tune --dry-run without --config failed" >&2; exit 1; }
  grep -q "configuration: $prefix/share/tunedreduce/tune.toml" "$work/dry-run.log" ||
    { cat "$work/dry-run.log"; echo "tune --dry-run did not read the installed tune.toml" >&2; exit 1; }
  echo "--- the installed tune.toml is found: $(grep -m1 'configuration:' "$work/dry-run.log")"
  # The completion script and the man page installed are the installed CLI's own.
  cmp -s <("$prefix/bin/tunedreduce" completion bash) \
      "$prefix/share/bash-completion/completions/tunedreduce" ||
    { echo "the installed completion script is not the installed CLI's" >&2; exit 1; }
  cmp -s <("$prefix/bin/tunedreduce" man) "$prefix/share/man/man1/tunedreduce.1" ||
    { echo "the installed man page is not the installed CLI's" >&2; exit 1; }
fi

# CMake consumer.
"$cmake" -S "$src/tests/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCUDAToolkit_ROOT=/usr/local/cuda > "$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/build" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
echo "--- consumer (shared)"
"$work/build/consumer"
echo "--- consumer (static)"
"$work/build/consumer_static"
if ldd "$work/build/consumer_static" | grep libtunedreduce > /dev/null; then
  echo "the static consumer depends on libtunedreduce.so" >&2; exit 1
fi

# C consumer through pkg-config.
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
cc=${CC:-cc}
echo "--- C consumer (pkg-config: $(pkg-config --cflags --libs tunedreduce))"
# shellcheck disable=SC2046
"$cc" -std=c99 -Wall -Werror "$src/tests/consumer/c_consumer.c" -o "$work/c_consumer" \
  $(pkg-config --cflags --libs tunedreduce) -Wl,-rpath,"$prefix/$libdir"
"$work/c_consumer"
echo "--- C consumer, static (pkg-config --static)"
static_libs=$(pkg-config --static --libs tunedreduce | sed 's/-ltunedreduce/-l:libtunedreduce.a/')
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Werror "$src/tests/consumer/c_consumer.c" -o "$work/c_consumer_static" \
  $(pkg-config --cflags tunedreduce) $static_libs
"$work/c_consumer_static"
# examples/sum.cpp with the pkg-config line its header gives: the example calls the CUDA runtime
# itself (cudaMalloc), so it names libcudart next to the package (CUDA ships no .pc file).
# (grep reads all of ldd's output: `grep -q` would exit at the first match, and ldd, killed by
# SIGPIPE, would fail the pipeline under pipefail; that made this check flaky under load.)
cxx=${CXX:-c++}
echo "--- examples/sum.cpp through pkg-config"
# Strict warnings: the C++ header (and the CUDA headers it includes, which pkg-config gives as
# system ones) must compile without one.
# shellcheck disable=SC2046
"$cxx" -std=c++17 -Wall -Wextra -Wpedantic -Werror "$src/examples/sum.cpp" \
  -o "$work/example_sum_pc" \
  $(pkg-config --cflags --libs tunedreduce) -L"$(pkg-config --variable=cudalibdir tunedreduce)" \
  -lcudart -Wl,-rpath,"$(pkg-config --variable=libdir tunedreduce)"
# clang++ too where there is one (CI has it, for the fuzz targets): it warns inside CUDA's half
# headers (-Wgnu-zero-variadic-macro-arguments) unless they come as system headers.
if command -v clang++ > /dev/null; then
  echo "--- examples/sum.cpp through pkg-config, clang++ -Wpedantic"
  # shellcheck disable=SC2046
  clang++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only "$src/examples/sum.cpp" \
    $(pkg-config --cflags tunedreduce)
fi
for lib in libtunedreduce libcudart; do
  ldd "$work/example_sum_pc" | grep "$lib" > /dev/null || { echo "example_sum_pc does not link $lib" >&2; exit 1; }
done
echo "OK: install and consumers"
