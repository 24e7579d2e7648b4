#!/usr/bin/env bash
# A deployment build's one virtual architecture (cmake/KernelList.cmake, tr_virtual_arch_option):
# the nvcc option for the architecture lists it can honour, and a stop that names the entry for
# those it cannot.
#   check_virtual_arch.sh CMAKE SOURCE_DIR
set -uo pipefail
cmake=$1 src=$2
fail=0
run() { "$cmake" -DSRC="$src" -DARCHS="$1" -DVIRTUAL="$2" -P "$src/tests/deploy/virtual_arch.cmake" 2>&1; }
gives() {
  local out
  out=$(run "$1" "$2") || { echo "FAIL: '$1' with $2 stopped: $out"; fail=1; return; }
  [ "$out" = "$3" ] || { echo "FAIL: '$1' with $2 gave '$out', expected '$3'"; fail=1; return; }
  echo "ok: '$1' with $2: $out"
}
stops() {
  local out
  if out=$(run "$1" "$2"); then echo "FAIL: '$1' with $2 was taken: $out"; fail=1; return; fi
  # (CMake wraps the message: newlines and indents become one space.)
  echo "$out" | tr -s ' \n' ' ' | grep -qF -- "$3" ||
    { echo "FAIL: '$1' with $2 did not say '$3': $out"; fail=1; return; }
  echo "ok: '$1' with $2 stops: $3"
}
gives "80-real;90-real;100-real;120-real;80-virtual" 80 \
  "--generate-code=arch=compute_80,code=[sm_80,sm_90,sm_100,sm_120,compute_80]"
gives "80;90-real" 80 "--generate-code=arch=compute_80,code=[sm_80,sm_90,compute_80]"
gives "90-real;100-real" 90 "--generate-code=arch=compute_90,code=[sm_90,sm_100]"
stops "80-real;90-real;100-real;120" 80 "'120' of TUNEDREDUCE_CUDA_ARCHS asks for PTX of compute_120"
stops "75-real;80-real" 80 "'75-real' of TUNEDREDUCE_CUDA_ARCHS is older than compute_80"
stops "80-real;90-virtual" 80 "'90-virtual' of TUNEDREDUCE_CUDA_ARCHS is neither N-real nor 80-virtual"
stops "80-real" sm80 "'sm80' is not an architecture number"
exit $fail
