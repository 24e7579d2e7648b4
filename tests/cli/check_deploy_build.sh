#!/usr/bin/env bash
# A deployment library, built and checked as a user does it (docs/library.md): `tunedreduce
# deploy` writes the kernel list of a database, a CMake build with TUNEDREDUCE_KERNELS compiles
# only those kernels (and the built-in rules'), `deploy --check` and `db check --library` say
# which rows the library serves, and the install gives the same package as the full build
# (tests/consumer/run.sh).
#   check_deploy_build.sh CLI FULL_LIBRARY SOURCE_DIR WORK_DIR ARCHS
set -euo pipefail
cli=$1 full=$2 src=$3 work=$4 archs=$5
cmake=${CMAKE_COMMAND:-cmake}
rm -rf "$work"
mkdir -p "$work"
h100=$src/tests/data/h100-sample.db
h200=$src/tests/data/h200-sample.db
fail() { echo "FAIL: $*" >&2; exit 1; }

# The list of the H100 sample, less one winner's kernel that no built-in rule names: the
# library built from it lacks that kernel.
"$cli" deploy --db "$h100" -o "$work/full.list"
grep -o '"[a-z_]*\.b[0-9][^"]*"' "$src/runtime/defaults.cpp" | tr -d '"' | sort -u > "$work/defaults.ids"
grep -v '^#' "$work/full.list" | sort > "$work/listed.ids"
dropped=$(comm -23 "$work/listed.ids" "$work/defaults.ids" | sed -n 1p)
[ -n "$dropped" ] || fail "every winner of the H100 sample is a built-in rule's kernel"
grep -vxF "$dropped" "$work/full.list" > "$work/kernels.list"
echo "kernel list: $(grep -vc '^#' "$work/kernels.list") ids (left out: $dropped)"

# refused NAME LINES EXPECTED: a kernel list of LINES must stop the configuration with a message
# containing EXPECTED (CMake wraps it: newlines and indents become one space).
refused() {
  printf '%s\n' "${@:2:$#-2}" > "$work/$1.list"
  if "$cmake" -S "$src" -B "$work/$1" -DTUNEDREDUCE_KERNELS="$work/$1.list" \
       -DTUNEDREDUCE_CUDA_ARCHS="$archs" > "$work/$1.log" 2>&1; then
    fail "the kernel list $1.list configured"
  fi
  tr -s ' \n' ' ' < "$work/$1.log" | grep -qF "${!#}" ||
    { cat "$work/$1.log"; fail "$1.list: the configuration did not say: ${!#}"; }
}
# A line that is not an id stops the configuration, naming the file and the line; so does an
# exact entry outside the registry's space (the exact families have no f64 registers).
refused bad "# comment" "streaming.b256.u4.two_pass.f32.avg" \
  "bad.list:2: 'streaming.b256.u4.two_pass.f32.avg' is not a registry id"
refused bad-exact "exact.b512.u2.two_pass.f32.exact_sum" \
  "exact_registers.b512.u2.two_pass.f64.exact_sum" \
  "'exact_registers.b512.u2.two_pass.f64.exact_sum' is not in the registry's space"

t0=$(date +%s)
# Without the segmented kernels (TUNEDREDUCE_SEGMENTED=OFF, kernels/segmented/segmented.cmake):
# this test is about the whole-array list, and they would double its compile time. The host code
# unoptimised (no -O3: the Release flags less their -O3): the test checks what is compiled,
# served and installed, never a speed, and the host optimiser was half of its build time (the
# longest test of CI). Where the kernels are compiled to PTX alone (ARCHS N-virtual: CI, no GPU)
# the device code unoptimised too, as scripts/test.sh does; else optimised as ever.
cuda_release=-DNDEBUG
case "$archs" in *-virtual) cuda_release="-DNDEBUG -Xcicc -O0" ;; esac
"$cmake" -S "$src" -B "$work/build" -G Ninja -DTUNEDREDUCE_KERNELS="$work/kernels.list" \
  -DTUNEDREDUCE_CUDA_ARCHS="$archs" -DTUNEDREDUCE_SEGMENTED=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG -DCMAKE_CUDA_FLAGS_RELEASE="$cuda_release" \
  > "$work/configure.log" ||
  { cat "$work/configure.log"; fail "configure"; }
grep "Deployment build:" "$work/configure.log"
"$cmake" --build "$work/build" > "$work/build.log" || { tail -50 "$work/build.log"; fail "build"; }
lib=$work/build/lib/libtunedreduce.so
echo "built in $(( $(date +%s) - t0 )) s: $(stat -c %s "$(readlink -f "$lib")") bytes (the full library: $(stat -c %s "$(readlink -f "$full")") bytes)"
[ ! -e "$work/build/bin/tunedreduce" ] || fail "a deployment build built the CLI"

# What the library has: the list, the built-in rules' kernels and both finishes of each exact
# entry among them (one first pass serves both: exact/CMakeLists.txt), nothing else.
cat "$work/kernels.list" "$work/defaults.ids" | grep -v '^#' | grep '\.exact_sum$' |
  sed -E 's/\.(two_pass|single_pass)\./.two_pass./; p; s/\.two_pass\./.single_pass./' \
  > "$work/exact.ids"
[ "$(sort -u "$work/exact.ids" | wc -l)" -lt "$("$cli" list --ops exact_sum 2> /dev/null | wc -l)" ] ||
  fail "the deployment build's exact entries are all of them"
cat "$work/kernels.list" "$work/defaults.ids" "$work/exact.ids" | grep -v '^#' | sort -u \
  > "$work/expected.ids"
sort "$work/build/compiled-kernels.list" > "$work/compiled.ids"
cmp -s "$work/expected.ids" "$work/compiled.ids" || { diff "$work/expected.ids" "$work/compiled.ids"; fail "compiled kernels"; }

# The check finds the row of the dropped kernel, by name, and nothing else.
set +e
"$cli" deploy --db "$h100" --check "$lib" > "$work/check.out" 2>&1
rc=$?
set -e
cat "$work/check.out"
[ "$rc" = 9 ] || fail "deploy --check: exit $rc, expected 9"
grep -q "kernel $dropped\$" "$work/check.out" || fail "deploy --check did not name $dropped"
grep -q "$(wc -l < "$work/compiled.ids") kernels" "$work/check.out" || fail "kernel count"
set +e
"$cli" db check --db "$h100" --library "$lib" > "$work/dbcheck.out" 2>&1
rc=$?
set -e
[ "$rc" = 9 ] || { cat "$work/dbcheck.out"; fail "db check --library: exit $rc, expected 9"; }
# The full list serves every row.
"$cli" deploy --db "$h100" --check "$full" | grep "all served" > /dev/null || fail "the full library"

# The install: the same package, pkg-config file and C API as the full build's.
CMAKE_COMMAND="$cmake" "$src/tests/consumer/run.sh" "$work/build" "$src"

# The Debian package of the same (cmake/Packaging.cmake).
cpack=$(dirname "$cmake")/cpack
(cd "$work/build" && "$cpack" -G DEB > "$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/build/libtunedreduce_*.deb)
dpkg-deb -f "$deb" Package Version Depends | tee "$work/deb-fields.txt"
grep -q "^Package: libtunedreduce$" "$work/deb-fields.txt" || fail "package name"
grep -q "libsqlite3-0" "$work/deb-fields.txt" || fail "the package does not depend on SQLite"
dpkg-deb -c "$deb" | awk '{print $6}' > "$work/deb-files.txt"
for f in ./usr/include/tunedreduce/tunedreduce.h ./usr/lib/libtunedreduce.so.0.3.0 \
         ./usr/share/tunedreduce/kernels.list ./usr/lib/pkgconfig/tunedreduce.pc \
         ./usr/lib/cmake/TunedReduce/TunedReduceConfig.cmake; do
  grep -qxF "$f" "$work/deb-files.txt" || { cat "$work/deb-files.txt"; fail "not in the package: $f"; }
done
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"
echo "OK: deployment build"
