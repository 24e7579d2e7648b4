#!/usr/bin/env bash
# Checks that every tracked C, C++ and CUDA source is formatted as .clang-format says (CI runs
# it through scripts/test.sh). Exit 0: all formatted; 1: the files that are not, listed, with
# the first lines clang-format would change; 2: no clang-format. `--fix` rewrites them instead.
#   scripts/check-format.sh [--fix]
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  *) echo "check-format.sh: unknown argument '$1' (the only one is --fix)" >&2; exit 2 ;;
esac
clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" > /dev/null; then
  echo "check-format.sh: $clang_format not found (scripts/install-deps.sh installs clang-format)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh')
[ "${#files[@]}" -gt 0 ] || { echo "check-format.sh: no source files found" >&2; exit 2; }
if [ "$fix" = 1 ]; then
  "$clang_format" -i --style=file "${files[@]}"
  echo "formatted ${#files[@]} files with $("$clang_format" --version)"
  exit 0
fi
# One clang-format for every file (one a file took 35 s of CI); only where it finds something
# are the files checked one by one, to list them.
if "$clang_format" --style=file --dry-run --Werror "${files[@]}" > /dev/null 2>&1; then
  echo "format: ${#files[@]} files formatted as .clang-format says ($("$clang_format" --version))"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! "$clang_format" --style=file --dry-run --Werror "$f" > /dev/null 2>&1; then bad+=("$f"); fi
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "check-format.sh: ${#bad[@]} of ${#files[@]} files are not formatted as .clang-format says:" >&2
  for f in "${bad[@]}"; do
    echo "  $f" >&2
    "$clang_format" --style=file "$f" | diff -u "$f" - | sed -n '3,12p' | sed 's/^/      /' >&2 || true
  done
  echo "run scripts/check-format.sh --fix to rewrite them ($("$clang_format" --version))" >&2
  exit 1
fi
echo "format: ${#files[@]} files formatted as .clang-format says ($("$clang_format" --version))"
