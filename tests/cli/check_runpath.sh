#!/usr/bin/env bash
# No binary the build produces has an RPATH or RUNPATH with an empty or a relative entry: an
# empty entry (CMake's padding, '/usr/local/cuda/lib:') makes the loader search the current
# folder, where a planted libsqlite3.so.0 would run when tunedreduce starts.
# usage: check_runpath.sh BUILD_DIR
set -uo pipefail
dir=$1
command -v readelf >/dev/null || { echo "SKIP: readelf is not installed"; exit 77; }
fail=0 checked=0
while IFS= read -r -d '' f; do
  head -c 4 "$f" 2>/dev/null | grep -q $'\x7fELF' || continue
  checked=$((checked + 1))
  while IFS= read -r path; do
    IFS=':' read -r -a entries <<< "$path"
    # A trailing ':' leaves no element behind in read -a: look for it in the text itself.
    if [[ "$path" == *: || "$path" == :* || "$path" == *::* || -z "$path" ]]; then
      echo "FAIL: $f: RUNPATH '$path' has an empty entry"; fail=1
    fi
    for e in "${entries[@]}"; do
      if [[ -n "$e" && "$e" != /* ]]; then
        echo "FAIL: $f: RUNPATH '$path' has the relative entry '$e'"; fail=1
      fi
    done
  done < <(readelf -d "$f" 2>/dev/null | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]$/\2/p')
done < <(find "$dir" -type f \( -perm -u+x -o -name '*.so' -o -name '*.so.*' \) \
         -not -path '*/CMakeFiles/*' -print0)
[ "$checked" -gt 0 ] || { echo "FAIL: no binaries under $dir"; exit 1; }
[ "$fail" = 0 ] && echo "ok: $checked binaries, no empty or relative RUNPATH entry"
exit $fail
