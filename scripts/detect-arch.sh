#!/usr/bin/env bash
# Prints the CUDA architecture of the first GPU (e.g. 90), or 90 when none can be seen. Used to
# compile kernels for this machine only, which keeps a build short; nothing depends on a GPU
# being present.
#   --ptx-without-gpu   print 90-virtual when no GPU can be seen: compute_90's PTX alone, no
#                       machine code (scripts/test.sh: where no kernel can run, ptxas need not)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .')
if [[ "$cc" =~ ^[0-9]+$ ]]; then
  echo "$cc"
elif [ "${1:-}" = --ptx-without-gpu ]; then
  echo 90-virtual
else
  echo 90
fi
