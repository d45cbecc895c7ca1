#!/bin/bash
# Third run: libtorch_cuda.so with zstd cubins, each inflated in one pass only until its toolkit note.
B=$(cd "$(dirname "$0")" && pwd)
MD="$B/cuda-sys-gen min-driver --registry $B/registry.json"
T=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/lib/libtorch_cuda.so
/usr/bin/time -v $MD $T > /tmp/lt.txt 2> /tmp/lt.time; echo "rc=$?"; grep -v "string  the string" /tmp/lt.txt | head -8; grep -c "kernel" /tmp/lt.txt; grep -E "Elapsed|Maximum resident" /tmp/lt.time
$MD --driver 580.65.06 $T | tail -2
$B/min_driver_bench $T --registry $B/registry.json --runs 5
