#!/bin/bash
# The stand-in and the tracer on the GPU machine: run from the repository root, with
# .device-bin/tracer carried. Writes everything into $OUT/tracer.tar.
H=$(cd "$(dirname "$0")" && pwd)
R=/tmp/tracer; rm -rf $R; mkdir -p $R/tr $R/si
cp $H/libcuda_tracer.so $R/tr/libcuda.so.1; cp $H/libcuda_standin.so $R/si/libcuda.so.1
exec > $R/run.txt 2>&1
set -x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
REAL=$(ldconfig -p | awk '/libcuda.so.1 .*x86-64/{print $NF; exit}')
echo "real driver: $REAL LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"; python3 -c "import torch, cupy, jax; print(torch.__version__, cupy.__version__, jax.__version__)"
# 1. The request check on the real driver, then through the stand-in (both found by name).
$H/conformance answers > $R/answers-real.txt 2>&1; echo "rc=$?"; tail -1 $R/answers-real.txt
LD_LIBRARY_PATH=$R/si${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CUDA_SYS_GEN_LIBRARY=$R/si/libcuda.so.1 CUDA_SYS_GEN_CHECK_REAL=$REAL $H/conformance answers > $R/answers-standin.txt 2>&1; echo "rc=$?"; tail -1 $R/answers-standin.txt
# 2. The forwarding cost on the real driver.
CUDA_SYS_GEN_LIBRARY=$R/si/libcuda.so.1 CUDA_SYS_GEN_CHECK_REAL=$REAL CUDA_SYS_GEN_REAL_LIBCUDA=$REAL $H/conformance forward-bench
# 3. The workloads: without, through the forwarding stand-in, through the tracer.
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_deterministic_ops=true
# JAX's float reductions without XLA_FLAGS: twice without anything in front, to see whether
# they vary from run to run.
for i in 1 2; do XLA_FLAGS= timeout 300 python3 -c "import jax.numpy as jnp; x = jnp.arange(1_000_000, dtype=jnp.float32); print('float32 sum of 0..999999, default flags:', float(jnp.sum(x)))"; done
for w in torch_mm cupy_sum jax_sum; do
  timeout 300 python3 $H/$w.py > $R/$w-plain.txt 2>&1; echo "$w plain rc=$?"
  LD_LIBRARY_PATH=$R/si${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CUDA_SYS_GEN_REAL_LIBCUDA=$REAL timeout 300 python3 $H/$w.py > $R/$w-standin.txt 2>&1; echo "$w standin rc=$?"
  LD_LIBRARY_PATH=$R/tr${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CUDA_SYS_GEN_REAL_LIBCUDA=$REAL CUDA_SYS_GEN_TRACE=$R/trace-$w.log timeout 300 python3 $H/$w.py > $R/$w-traced.txt 2>&1; echo "$w traced rc=$?"
  for m in plain standin traced; do echo "$w $m: $(grep -v '^libcuda mapped' $R/$w-$m.txt | tail -1)"; grep '^libcuda mapped' $R/$w-$m.txt; done
  if cmp -s <(grep -v '^libcuda mapped' $R/$w-plain.txt) <(grep -v '^libcuda mapped' $R/$w-traced.txt) && cmp -s <(grep -v '^libcuda mapped' $R/$w-plain.txt) <(grep -v '^libcuda mapped' $R/$w-standin.txt); then echo "$w: SAME RESULTS"; else echo "$w: RESULTS DIFFER"; fi
  T=$R/trace-$w.log
  echo "$w trace: $(grep -c '^call' $T) calls, $(grep -c '^request' $T) requests answered with a function, $(grep '^request' $T | awk '{print $3, $4, $6}' | sort -u | wc -l) distinct, $(grep -c 'rule DIFFERENT' $T) rule DIFFERENT, $(grep -c 'not traced' $T) unknown functions, $(grep -c 'not in the real driver' $T) calls of exports the real driver lacks"
  echo "$w lookup calls: $(grep '^call' $T | grep -c ' (cuGetProcAddress_v2) ') cuGetProcAddress_v2, $(grep '^call' $T | grep -c ' (cuGetProcAddress) ') cuGetProcAddress"
  echo "$w versions asked: $(grep '^request' $T | awk '{print $4}' | sort -n | uniq | tr '\n' ' ')"
  echo "$w flags asked: $(grep '^request' $T | awk '{print $6}' | sort | uniq -c | tr '\n' ' ')"
  echo "$w refused lookups (non-success results): $(grep '^call' $T | grep 'cuGetProcAddress' | grep -vc 'CUDA_SUCCESS')"
  head -3 $T; grep -m3 '^request' $T; grep '^call' $T | grep -v GetProcAddress | head -5
  gzip -kf $T
done
set +x
cd $R && tar czf $OUT/tracer.tar.gz run.txt answers-real.txt answers-standin.txt *-plain.txt *-standin.txt *-traced.txt trace-*.log.gz
