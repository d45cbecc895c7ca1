#!/bin/bash
# min-driver --run and --as-driver on the GPU machine (branch w47c; CUDA 13.0 driver): PyTorch, CuPy
# and JAX (in parallel), NVIDIA's driver-API samples and this repository's ports, each at its run
# floor and one release below (PyTorch also as 12.8), and images an older driver refuses
# (ptxload.c: PTX, fatbins and a cubin built here, from memory and from a file). Run from anywhere
# with .device-bin/w47c carried; everything goes into $OUT/w47c.tar.gz (run.txt is the summary).
H=$(cd "$(dirname "$0")" && pwd)
R=/tmp/w47c; rm -rf $R; mkdir -p $R/fw $R/samples $R/img
exec > $R/run.txt 2>&1
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1
python3 -c "import torch, cupy, jax; print('torch', torch.__version__, 'cupy', cupy.__version__, 'jax', jax.__version__)"
export CUDA_SYS_GEN_OBSERVER=$H/libcuda_tracer.so XLA_PYTHON_CLIENT_PREALLOCATE=false
MD="$H/cuda-sys-gen min-driver --registry $H/registry.json"
LIBDIR=$(dirname $(ldconfig -p | awk '/libcuda.so.1 .*x86-64/{print $NF; exit}'))
# The CUDA release before a floor (12050 -> 12.4), among NVIDIA's releases.
below() { python3 -c "
import sys
rel=[11000,11010,11020,11030,11040,11050,11060,11070,11080,12000,12010,12020,12030,12040,12050,12060,12080,12090,13000]
f=int(sys.argv[1]); b=[r for r in rel if r<f]; print('%d.%d'%(b[-1]//1000,b[-1]%1000//10) if b else '')" $1; }
floor_of() { grep -m1 '^oldest driver' $1 | grep -oE '\([0-9]{4,5}\)' | head -1 | tr -d '()'; }
same() { cmp -s <(grep -v '^libcuda mapped' $1) <(grep -v '^libcuda mapped' $2) && echo SAME || echo DIFFER; }
# run_one DIR NAME CMD...: the program alone, under --run, and --as-driver at its floor, one release
# below, and each of $EXTRA.
run_one() {
  local d=$1 w=$2; shift 2
  timeout 200 "$@" > $d/$w-plain.out 2> $d/$w-plain.err; echo "$w plain rc=$?"
  timeout 200 $MD --run -- "$@" > $d/$w-run.out 2> $d/$w-run.txt; echo "$w run rc=$?"
  local F=$(floor_of $d/$w-run.txt); local B=$(below ${F:-0})
  echo "$w floor ${F:-none}, below: $B; output with the observer: $(same $d/$w-plain.out $d/$w-run.out)"
  sed -n '/^run of/,$p' $d/$w-run.txt | head -30 | cut -c1-260; grep -E '^(refused by|drivers above|HAZARD|kernels|not observed)' $d/$w-run.txt | head -8 | cut -c1-260
  local FT=; [ -n "$F" ] && FT=$(python3 -c "print('%d.%d'%($F//1000,$F%1000//10))")
  for a in $(echo $FT $B $EXTRA | tr ' ' '\n' | awk 'NF && !s[$0]++'); do
    timeout 200 $MD --run --as-driver $a -- "$@" > $d/$w-as-$a.out 2> $d/$w-as-$a.txt; echo "$w as $a rc=$?"
    echo "$w output as $a: $(same $d/$w-plain.out $d/$w-as-$a.out)"
    sed -n '/^as CUDA/,/^the program exited/p' $d/$w-as-$a.txt | head -8 | cut -c1-300
    grep -m4 -i "error\|insufficient\|too old" $d/$w-as-$a.out $d/$w-as-$a.txt | head -4 | cut -c1-300
  done
  tail -2 $d/$w-plain.out | cut -c1-200
}
# The frameworks, in parallel (each its own log, printed after).
EXTRA=12.8 run_one $R/fw torch_mm python3 $H/torch_mm.py > $R/fw/torch.log 2>&1 &
EXTRA= run_one $R/fw cupy_sum python3 $H/cupy_sum.py > $R/fw/cupy.log 2>&1 &
EXTRA= run_one $R/fw jax_sum python3 $H/jax_sum.py > $R/fw/jax.log 2>&1 &
# Images an older driver cannot load, on this GPU: PTX ISA 9.0 (13.0's), a fatbin of an sm_90
# cubin and its PTX (nvcc 13.0), a fatbin of the cubin alone, an sm_90 cubin. As 12.9: 222, 222,
# 209, 209; at 13.0 every one loads.
( cd $R/img && nvcc -ptx -arch=sm_90 -o k.ptx $H/k.cu && nvcc -fatbin -arch=sm_90 -o k_both.fatbin $H/k.cu \
  && nvcc -fatbin -gencode arch=compute_90,code=sm_90 -o k_sass.fatbin $H/k.cu && nvcc -cubin -arch=sm_90 -o k.cubin $H/k.cu \
  && gcc -O1 -o ptxload $H/ptxload.c -L$LIBDIR -l:libcuda.so.1 ) || echo "BUILD FAILED ptxload"
head -3 $R/img/k.ptx | grep -m1 version
for a in "" 13.0 12.9; do
  echo "== ptxload ${a:-plain run}"
  $MD --run ${a:+--as-driver $a} -- $R/img/ptxload $R/img/k.ptx $R/img/k_both.fatbin $R/img/k_sass.fatbin $R/img/k.cubin > $R/img/as-${a:-none}.out 2> $R/img/as-${a:-none}.txt
  echo "rc=$?"; cat $R/img/as-${a:-none}.out
  grep -E "^oldest driver|a load by|^as CUDA" $R/img/as-${a:-none}.txt | head -12 | cut -c1-300
done
# NVIDIA's driver-API samples, built here, and this repository's ports (built for 12.0 and older).
S=$H/cuda-samples
build() { local n=$1 k=$2 fb=$3; shift 3; mkdir -p $R/samples/$n
  ( cd $R/samples/$n && { [ -z "$k" ] || nvcc -fatbin -arch=sm_90 -I$S/Common -o $fb $S/$n/$k; } && nvcc -O2 -std=c++17 -I$S/Common -I$S/$n -o $n "$@" -lcuda ) || echo "BUILD FAILED $n"; }
build vectorAddDrv vectorAdd_kernel.cu vectorAdd_kernel64.fatbin $S/vectorAddDrv/vectorAddDrv.cpp
build matrixMulDrv matrixMul_kernel.cu matrixMul_kernel64.fatbin $S/matrixMulDrv/matrixMulDrv.cpp
build simpleDrvRuntime vectorAdd_kernel.cu vectorAdd_kernel64.fatbin $S/simpleDrvRuntime/simpleDrvRuntime.cpp
build deviceQueryDrv "" "" $S/deviceQueryDrv/deviceQueryDrv.cpp
for n in vectorAddDrv matrixMulDrv simpleDrvRuntime deviceQueryDrv; do
  echo "=== $n"; cd $R/samples/$n || continue
  $MD ./$n $(ls *.fatbin 2>/dev/null) > static.txt 2>&1; echo "$n static rc=$?: $(grep -m1 '^oldest driver' static.txt | cut -c1-220)"
  EXTRA= run_one $R/samples/$n $n ./$n
done
cd $R
for p in vector_add_drv device_query_drv; do
  echo "=== $p"; $MD $H/$p > $R/samples/$p-static.txt 2>&1; echo "$p static: $(grep -m1 '^oldest driver' $R/samples/$p-static.txt | cut -c1-220)"
  EXTRA=12.0 run_one $R/samples $p $H/$p
done
wait
for f in torch cupy jax; do echo "=== $f"; cat $R/fw/$f.log; done
echo "total $(( $(date +%s) - T0 )) s"
cd $R && find . -type f \( -name '*.txt' -o -name '*.out' -o -name '*.err' -o -name '*.log' -o -name '*.ptx' \) > files.list && tar czf $OUT/w47c.tar.gz -T files.list
ls -la $OUT
