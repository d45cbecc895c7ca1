#!/bin/bash
# The merged tree on the GPU machine: every check of run-all.sh (conformance, the ports, the
# doctor, the gpu_machine tests, the lookup bench), then the tracer run (run3.sh) with the
# tracer, the stand-in and the ports built from the same tree. Run from the repository root.
set -u
OUT=${OUT:-device-out}; mkdir -p "$OUT/all"
OUT="$OUT/all" bash .device-bin/run-all.sh > "$OUT/all/run-all.txt" 2>&1
echo "run-all rc=$?" >> "$OUT/all/run-all.txt"
bash .device-bin/h41b/run3.sh
echo "run3 rc=$?"
tar czf "$OUT/final.tar.gz" -C "$OUT" all && rm -rf "$OUT/all"
ls -la "$OUT"
