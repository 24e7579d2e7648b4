#!/usr/bin/env bash
# Prints the CUDA architecture of the first GPU (e.g. 90), or 90 when none can be seen. Used to
# compile kernels for this machine only, which keeps a build short; nothing depends on a GPU
# being present.
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .')
if [[ "$cc" =~ ^[0-9]+$ ]]; then echo "$cc"; else echo 90; fi
