#!/bin/bash
# The five ported samples (generated/examples, release builds), NVIDIA's driver-API samples
# (cuda-samples, built here with nvcc), a program that asks for entries newer than the driver,
# and the PyTorch/CuPy/JAX workloads: each run without anything in front, through the
# stand-in (every hook only forwarding), through the tracer, and through the tracer logging
# requests only (CUDA_SYS_GEN_TRACE_CALLS=0: every call only forwards). Run from the
# repository root with .device-bin/h41b carried; everything goes into $OUT/run3.tar.gz.
# The folder holds this directory's files, libcuda_tracer.so and libcuda_standin.so, the five
# ported samples (release builds of generated/examples) and cuda-samples/: NVIDIA/cuda-samples'
# Common/*.h and the sources of vectorAddDrv, matrixMulDrv, simpleDrvRuntime, vectorAddMMAP and
# deviceQueryDrv, each in a folder of its name (docs/gpu-machine-runs.md, run 18).
H=$(cd "$(dirname "$0")" && pwd)
R=/tmp/run3; rm -rf $R; mkdir -p $R/tr $R/si $R/out $R/build
cp $H/libcuda_tracer.so $R/tr/libcuda.so.1; cp $H/libcuda_standin.so $R/si/libcuda.so.1
exec > $R/run3.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
REAL=$(ldconfig -p | awk '/libcuda.so.1 .*x86-64/{print $NF; exit}')
# NAMED=0: the stand-in and the tracer find the real driver by their own search.
NAMEDREAL=$REAL; [ "${NAMED:-1}" = 0 ] && NAMEDREAL=
CUDA=$(dirname $(dirname $(command -v nvcc)))
echo "real driver: $REAL (named: ${NAMEDREAL:-no, found by the stand-in}); $(nvcc --version | tail -1)"
# NVIDIA's samples: each kernel as a fatbin for sm_90 next to its program (they look for it
# in the working folder), the host code by nvcc against libcuda (-lcuda: the toolkit's stub).
S=$H/cuda-samples
build() { # name folder kernel.cu fatbin sources...
  local n=$1 d=$2 k=$3 fb=$4; shift 4; mkdir -p $R/build/$n
  ( cd $R/build/$n && { [ -z "$k" ] || nvcc -fatbin -arch=sm_90 -I$S/Common -o $fb $S/$d/$k; } && nvcc -O2 -std=c++17 -I$S/Common -I$S/$d -o $n "$@" -lcuda ) || echo "BUILD FAILED $n"
}
build vectorAddDrv vectorAddDrv vectorAdd_kernel.cu vectorAdd_kernel64.fatbin $S/vectorAddDrv/vectorAddDrv.cpp
build matrixMulDrv matrixMulDrv matrixMul_kernel.cu matrixMul_kernel64.fatbin $S/matrixMulDrv/matrixMulDrv.cpp
build simpleDrvRuntime simpleDrvRuntime vectorAdd_kernel.cu vectorAdd_kernel64.fatbin $S/simpleDrvRuntime/simpleDrvRuntime.cpp
build vectorAddMMAP vectorAddMMAP vectorAdd_kernel.cu vectorAdd_kernel64.fatbin $S/vectorAddMMAP/vectorAddMMAP.cpp $S/vectorAddMMAP/multidevicealloc_memmap.cpp
build deviceQueryDrv deviceQueryDrv "" "" $S/deviceQueryDrv/deviceQueryDrv.cpp
mkdir -p $R/build/newer && gcc -O2 -o $R/build/newer/newer $H/newer.c -I$CUDA/include -L$CUDA/lib64/stubs -lcuda || echo "BUILD FAILED newer"
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_deterministic_ops=true
# What may differ from run to run and is no result: times, throughput, addresses.
norm() { grep -vE '^libcuda mapped|[Tt]ime|GFlop|[Pp]erformance|msec|[0-9] ms\b|elapsed' "$1" | sed -E 's/0x[0-9a-fA-F]+/0xADDR/g'; }
run() { # name dir command...
  local n=$1 d=$2; shift 2
  (cd $d && timeout 300 "$@") > $R/out/$n-plain.txt 2>&1; local a=$?
  (cd $d && LD_LIBRARY_PATH=$R/si${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CUDA_SYS_GEN_REAL_LIBCUDA=$NAMEDREAL timeout 300 "$@") > $R/out/$n-standin.txt 2>&1; local b=$?
  (cd $d && LD_LIBRARY_PATH=$R/tr${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CUDA_SYS_GEN_REAL_LIBCUDA=$NAMEDREAL CUDA_SYS_GEN_TRACE=$R/out/trace-$n.log timeout 300 "$@") > $R/out/$n-traced.txt 2>&1; local c=$?
  (cd $d && LD_LIBRARY_PATH=$R/tr${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CUDA_SYS_GEN_REAL_LIBCUDA=$NAMEDREAL CUDA_SYS_GEN_TRACE=$R/out/requests-$n.log CUDA_SYS_GEN_TRACE_CALLS=0 timeout 300 "$@") > $R/out/$n-requests.txt 2>&1; local e=$?
  local same=SAME
  for m in standin traced requests; do cmp -s <(norm $R/out/$n-plain.txt) <(norm $R/out/$n-$m.txt) || same="DIFFERENT($m)"; done
  echo "== $n: rc plain $a standin $b traced $c requests-only $e; output $same; last line: $(norm $R/out/$n-plain.txt | tail -1)"
  [ "$same" = SAME ] || diff <(norm $R/out/$n-plain.txt) <(norm $R/out/$n-traced.txt) | head -10
  python3 $H/analyze.py $n $R/out/trace-$n.log $R/out/requests-$n.log
}
for p in vector_add_drv device_query_drv graphs_drv vector_add_mmap_drv launch_ex_drv; do run $p $R $H/$p; done
for p in vectorAddDrv matrixMulDrv simpleDrvRuntime vectorAddMMAP deviceQueryDrv; do run $p $R/build/$p ./$p; done
run newer $R/build/newer ./newer
cat $R/out/newer-plain.txt; grep -E 'GetProcAddress|^request' $R/out/trace-newer.log
for w in torch_mm cupy_sum jax_sum; do run $w $R python3 $H/$w.py; done
echo "== output parameters, first lines:"; grep -h ' {\*' $R/out/trace-*.log | grep -E 'cuMemAlloc|cuCtxCreate|cuModuleLoadData|cuDeviceGet_|cuStreamCreate|cuGraphCreate|cuMemCreate|cuDeviceGetCount' | awk '!seen[$3]++' | head -12
cd $R/out && gzip -q trace-*.log requests-*.log; cd $R && tar czf $OUT/run3.tar.gz run3.txt out
