#!/bin/bash
# One run on the GPU machine for min-driver over compiled programs.
B=$(cd "$(dirname "$0")" && pwd)
R=$OUT/nvcc; mkdir -p $R
W=/tmp/nvcc; mkdir -p $W; cd $W
cp $B/*.c $B/*.cu .
MD="$B/cuda-sys-gen min-driver --registry $B/registry.json"
step() { echo; echo "=== $*"; }
{
step machine; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2; gcc --version | head -1
CUDA=$(dirname $(dirname $(readlink -f $(which nvcc)))); echo "CUDA=$CUDA"; ls $CUDA/lib64/stubs 2>/dev/null | head -3
G="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]"
step build; set -x
nvcc -O2 $G -o k_static k.cu
nvcc -O2 $G -cudart shared -o k_shared k.cu
nvcc -O2 -gencode arch=compute_75,code=compute_75 -o k_ptx75 k.cu
nvcc -O2 $G -Xfatbin -compress-all -o k_compressed k.cu
nvcc -O2 -gencode arch=compute_90,code=sm_90 -Xfatbin -compress-mode=none -o k_plain90 k.cu
gcc -O2 -I$CUDA/include -o drv drv.c -L$CUDA/lib64/stubs -lcuda || gcc -O2 -I$CUDA/include -o drv drv.c -l:libcuda.so.1
gcc -O2 -shared -fPIC -o audit.so audit.c
set +x
for p in k_static k_shared k_ptx75 k_compressed k_plain90 drv; do
  step "$p"; ls -la $p; ldd $p | grep -E "cuda|cudart"
  timeout 60 ./$p; echo "rc=$?"
  $MD $p; echo "min-driver rc=$?"
  $MD --driver 580.65.06 $p | tail -3; echo "min-driver --driver 580.65.06 rc=$?"
  $MD --json $p > $R/$p.json
  cuobjdump --list-elf --list-ptx $p 2>&1 | head -8
done
step strings of the static runtime; strings -n 6 k_static | grep -iE "cudart|libcuda\.so|release [0-9]+\.[0-9]|CUDA_VERSION|cuGetProcAddress" | sort | uniq -c | sort -rn | head -20
step libtorch; T=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/lib/libtorch_cuda.so; ls -la $T
python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'
readelf -d $T | grep NEEDED
readelf -S -W $T | grep -E "nv_fatbin|rodata"
/usr/bin/time -v $MD $T > $R/libtorch.txt 2> $R/libtorch.time; echo "rc=$?"; head -60 $R/libtorch.txt; grep -E "Elapsed|Maximum resident" $R/libtorch.time
$MD --json $T > $R/libtorch.json
$B/min_driver_bench $T --registry $B/registry.json --runs 3
step "cuGetProcAddress requests of PyTorch (LD_AUDIT)"
GPA_LOG=$R/gpa.log LD_AUDIT=$W/audit.so timeout 120 python3 -c 'import torch; x=torch.ones(64,64,device="cuda"); print((x@x).sum().item()); torch.cuda.synchronize()'
echo "rc=$?"; wc -l $R/gpa.log; awk '{print $3}' $R/gpa.log | sort -n | uniq -c | tail -8
awk '$3>=12090' $R/gpa.log | sort -u -k2,3 | head -30
} 2>&1 | tee $R/log.txt
cp k_static k_shared k_ptx75 k_compressed k_plain90 drv $R/ 2>/dev/null
cd $OUT && tar czf nvcc.tgz nvcc && rm -rf nvcc
