#!/bin/bash
# NVIDIA's driver-API samples (cuda-samples c94ff366, built by nvcc on the GPU machine) under
# min-driver --run, beside their static reading, and --as-driver at the run floor and below. Carry a
# folder of this script, cuda-sys-gen, libcuda_tracer.so, registry.json and cuda-samples/ (Common/*.h
# and each sample's sources in a folder of its name, as run3.sh); not yet run (the machine was not lent).
H=$(cd "$(dirname "$0")" && pwd)
export CUDA_SYS_GEN_OBSERVER=$H/libcuda_tracer.so
MD="$H/cuda-sys-gen min-driver --registry $H/registry.json"
S=$H/cuda-samples; R=/tmp/run23; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1
build() { local n=$1 k=$2 fb=$3; shift 3; mkdir -p $R/$n
  ( cd $R/$n && { [ -z "$k" ] || nvcc -fatbin -arch=sm_90 -I$S/Common -o $fb $S/$n/$k; } && nvcc -O2 -std=c++17 -I$S/Common -I$S/$n -o $n "$@" -lcuda ) || echo "BUILD FAILED $n"; }
build vectorAddDrv vectorAdd_kernel.cu vectorAdd_kernel64.fatbin $S/vectorAddDrv/vectorAddDrv.cpp
build matrixMulDrv matrixMul_kernel.cu matrixMul_kernel64.fatbin $S/matrixMulDrv/matrixMulDrv.cpp
build simpleDrvRuntime vectorAdd_kernel.cu vectorAdd_kernel64.fatbin $S/simpleDrvRuntime/simpleDrvRuntime.cpp
build deviceQueryDrv "" "" $S/deviceQueryDrv/deviceQueryDrv.cpp
for n in vectorAddDrv matrixMulDrv simpleDrvRuntime deviceQueryDrv; do
  echo "=== $n"
  cd $R/$n || continue
  timeout 120 ./$n > plain.out 2>&1; echo "plain rc=$? last: $(tail -1 plain.out)"
  $MD ./$n $(ls *.fatbin 2>/dev/null) > static.txt 2>&1; echo "static rc=$?: $(sed -n 2p static.txt | cut -c1-220)"
  timeout 120 $MD --run -- ./$n > run.out 2> run.txt; echo "run rc=$? last: $(tail -1 run.out)"
  grep -E "^oldest driver|^  [0-9]+ " run.txt | head -8 | cut -c1-200
  grep -A3 "^could not\|not read" run.txt | head -6 | cut -c1-200
  for a in 12.0 11.8; do
    timeout 120 $MD --run --as-driver $a -- ./$n > as.out 2> as.txt; echo "as $a rc=$? last: $(tail -1 as.out)"
    grep -A3 "^as CUDA" as.txt | head -4 | cut -c1-200
  done
done
