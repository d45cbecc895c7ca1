#!/bin/bash
# A CUDA C++ program (nvcc, libcudart) and a driver-API C program (-lcuda) built here, run
# without anything in front and with the tracer first on LD_LIBRARY_PATH.
H=$(cd "$(dirname "$0")" && pwd)
R=/tmp/tracer2; rm -rf $R; mkdir -p $R/tr; cp $H/libcuda_tracer.so $R/tr/libcuda.so.1
exec > $R/run2.txt 2>&1
set -x
REAL=$(ldconfig -p | awk '/libcuda.so.1 .*x86-64/{print $NF; exit}')
CUDA=$(dirname $(dirname $(command -v nvcc)))
nvcc --version | tail -2
nvcc -O2 -o $R/vec $H/vec.cu && gcc -O2 -o $R/drv $H/drv.c -I$CUDA/include -L$CUDA/lib64/stubs -L$CUDA/lib64 -lcuda
for p in vec drv; do
  $R/$p > $R/$p-plain.txt 2>&1; echo "$p plain rc=$?"
  LD_LIBRARY_PATH=$R/tr${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CUDA_SYS_GEN_REAL_LIBCUDA=$REAL CUDA_SYS_GEN_TRACE=$R/trace-$p.log $R/$p > $R/$p-traced.txt 2>&1; echo "$p traced rc=$?"
  cat $R/$p-plain.txt; if cmp -s $R/$p-plain.txt $R/$p-traced.txt; then echo "$p: SAME OUTPUT"; else echo "$p: OUTPUT DIFFERS"; cat $R/$p-traced.txt; fi
  T=$R/trace-$p.log
  echo "$p trace: $(grep -c '^call' $T) calls, $(grep -c '^request' $T) requests, $(grep -c 'rule DIFFERENT' $T) rule DIFFERENT, $(grep -c 'not in the real driver' $T) not in the real driver"
  grep '^call' $T | grep -v GetProcAddress | awk '{print $4}' | sort | uniq -c | sort -rn | head -30
done
grep -E 'cuCtxCreate|cuNoSuch|cuMemAlloc_v2|cuMemcpyHtoD|cuGetProcAddress_v2\) symbol' $R/trace-drv.log | head -8
set +x
cd $R && tar czf $OUT/tracer2.tar.gz run2.txt *-plain.txt *-traced.txt trace-*.log
