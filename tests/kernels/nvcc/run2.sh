#!/bin/bash
# Second run: PyTorch's cuGetProcAddress requests (the audit wrapper now also wraps the
# cuGetProcAddress that cuGetProcAddress hands out), libtorch_cuda.so with zstd fatbin entries
# read, and the generated crate's examples (release builds) run beside their binaries' floors.
B=$(cd "$(dirname "$0")" && pwd)
R=$OUT/nvcc2; mkdir -p $R
W=/tmp/nvcc2; mkdir -p $W; cd $W
MD="$B/cuda-sys-gen min-driver --registry $B/registry.json"
step() { echo; echo "=== $*"; }
{
step machine; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gcc -O2 -shared -fPIC -o audit.so $B/audit.c
step "cuGetProcAddress requests of PyTorch (LD_AUDIT)"
GPA_LOG=$R/gpa.log LD_AUDIT=$W/audit.so timeout 150 python3 -c 'import torch; x=torch.ones(256,256,device="cuda"); y=(x@x).relu().sum(); print(y.item()); torch.cuda.synchronize()'
echo "rc=$?"; wc -l $R/gpa.log
echo "versions asked (count version):"; awk '{print $3}' $R/gpa.log | sort -n | uniq -c
echo "requests at 12090 and above:"; awk '$3>=12090 {print $2, $3}' $R/gpa.log | sort -u | head -40
step libtorch; T=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/lib/libtorch_cuda.so
/usr/bin/time -v $MD $T > $R/libtorch.txt 2> $R/libtorch.time; echo "rc=$?"; grep -v "string  the string" $R/libtorch.txt | head -40; grep -E "Elapsed|Maximum resident" $R/libtorch.time
$MD --json $T > $R/libtorch.json
$B/min_driver_bench $T --registry $B/registry.json --runs 5
step examples
for e in $B/ex/*; do
  n=$(basename $e); echo "--- $n"; $MD $e | head -2 | tail -1
  timeout 60 $e > $R/$n.out 2>&1; echo "$n rc=$?"; tail -3 $R/$n.out
done
} 2>&1 | tee $R/log.txt
cd $OUT && tar czf nvcc2.tgz nvcc2 && rm -rf nvcc2
