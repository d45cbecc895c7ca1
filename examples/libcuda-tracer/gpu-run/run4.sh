#!/bin/bash
# The stand-in under real processes on the GPU machine (docs/standing-in-for-libcuda.md):
# 1. run3.sh (the five ports, five of NVIDIA's driver-API samples, newer.c, PyTorch, CuPy and
#    JAX, each plain, through the stand-in, the tracer and the tracer writing requests only),
#    the stand-in and the tracer finding the real driver by their own search (NAMED=0);
# 2. a PyTorch DataLoader with num_workers=4 (forked workers), plain, stand-in, tracer: it must end;
# 3. timer.c: SIGALRM every millisecond, the handler calling the driver, while the main thread
#    allocates and copies for 3 s: plain, stand-in, tracer;
# 4. processes.c (tests/standin-libcuda): fork, signal, first-call, malloc, reload, negative
#    versions, through the stand-in and the tracer on this driver; negative.c on the bare driver;
# 5. first_call.c, 20 processes each way: the first call through the stand-in found by its own
#    search, and the real driver alone.
# Run from the repository root with .device-bin/h53 carried: bash .device-bin/h53/run4.sh.
# Everything goes into $OUT.
H=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/run4-out}; mkdir -p "$OUT"
R=/tmp/run4; rm -rf $R; mkdir -p $R/tr $R/si
cp $H/libcuda_tracer.so $R/tr/libcuda.so.1; cp $H/libcuda_standin.so $R/si/libcuda.so.1
exec > >(tee "$OUT/run4.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
REAL=${REAL:-$(ldconfig -p | awk '/libcuda.so.1 .*x86-64/{print $NF; exit}')}
REALDIR=$(dirname "$(readlink -f "$REAL")")
CUDA=$(dirname "$(dirname "$(command -v nvcc)")")
echo "real driver: $REAL ($REALDIR)"
unset CUDA_SYS_GEN_REAL_LIBCUDA CUDA_SYS_GEN_TRACE CUDA_SYS_GEN_TRACE_CALLS
# ways: plain | standin | traced, each a command prefix.
way() { case $1 in
  plain) env "${@:2}" ;;
  standin) env LD_LIBRARY_PATH=$R/si${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "${@:2}" ;;
  traced) env LD_LIBRARY_PATH=$R/tr${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CUDA_SYS_GEN_TRACE=$R/trace-$N.log "${@:2}" ;;
esac; }

echo "== 1. run3.sh, the real driver found by the stand-in's own search"
start=$(date +%s)
if [ "${SKIP_RUN3:-0}" != 1 ]; then
  NAMED=0 OUT=$OUT timeout 1200 bash $H/run3.sh; echo "run3 rc=$? in $(( $(date +%s) - start )) s"
  tar xzf "$OUT/run3.tar.gz" -O run3.txt | grep -E '^(==|real driver|BUILD)'
fi

echo "== 2. DataLoader(num_workers=4)"
for w in plain standin traced; do
  N=dataloader-$w; s=$EPOCHREALTIME
  way $w timeout 300 python3 $H/dataloader.py > $R/$N.txt 2>&1; rc=$?
  echo "$w: rc=$rc ($(awk "BEGIN{print $EPOCHREALTIME - $s}") s): $(tail -1 $R/$N.txt)"
done
[ -f $R/trace-dataloader-traced.log ] && echo "traced lines: $(wc -l < $R/trace-dataloader-traced.log); processes: $(awk '$1=="call"{print $2}' $R/trace-dataloader-traced.log | sort -u | wc -l) thread ids; start lines: $(grep -c '^start' $R/trace-dataloader-traced.log)"

echo "== 3. a timer signal every millisecond"
gcc -O2 -o $R/timer $H/timer.c -I$CUDA/include -L$CUDA/lib64/stubs -lcuda || echo "BUILD FAILED timer"
for w in plain standin traced; do
  N=timer-$w; way $w timeout 120 $R/timer > $R/$N.txt 2>&1; echo "$w: rc=$? $(tail -1 $R/$N.txt)"
done
[ -f $R/trace-timer-traced.log ] && echo "traced: $(grep -c 'cuDriverGetVersion_v2020' $R/trace-timer-traced.log) cuDriverGetVersion lines, $(grep -c 'cuMemcpyHtoD' $R/trace-timer-traced.log) cuMemcpyHtoD lines"

echo "== 4. processes.c and negative versions"
gcc -O1 -pthread -o $R/processes $H/processes.c -ldl || echo "BUILD FAILED processes"
for lib in si tr; do
  for m in "fork 200" signals "first-call 200" "first-call-in-malloc 300" reload version negative; do
    rm -f $R/p.log
    echo "$lib $m: $(LD_LIBRARY_PATH=$R/$lib:$REALDIR CUDA_SYS_GEN_TRACE=$R/p.log timeout 600 $R/processes $m | grep -v '^child' | tail -1) (rc ${PIPESTATUS[0]})"
    [ "$lib $m" = "tr negative" ] && { grep -c ' rule ok' $R/p.log; grep 'rule DIFFERENT' $R/p.log | head -5; }
  done
done
gcc -O1 -o $R/negative $H/negative.c -ldl && $R/negative "$REAL" > $OUT/negative-bare.txt; grep -E 'cuCtxCreate|cuMemcpy ' $OUT/negative-bare.txt | head -24

echo "== 5. first call, 20 processes each way (ms)"
gcc -O2 -o $R/first_call $H/first_call.c -ldl
for i in $(seq 20); do
  a=$(LD_LIBRARY_PATH=$R/si:$REALDIR $R/first_call | cut -f2); b=$(LD_LIBRARY_PATH=$REALDIR $R/first_call | cut -f2)
  echo "standin $a direct $b"
done | tee $R/first.txt
python3 -c "
import statistics as s; r=[l.split() for l in open('$R/first.txt')]; a=[float(x[1]) for x in r]; b=[float(x[3]) for x in r]
print(f'median standin {s.median(a):.3f} ms, direct {s.median(b):.3f} ms, difference {s.median([x-y for x,y in zip(a,b)]):.3f} ms')"
cd $R && gzip -q trace-*.log 2>/dev/null; tar czf "$OUT/run4.tar.gz" *.txt trace-*.log.gz 2>/dev/null; echo done
