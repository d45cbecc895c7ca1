#!/usr/bin/env bash
# min-driver's model of capabilities on NVIDIA's own libraries and the frameworks, on the GPU
# machine (no Rust there): floors, verdicts on its 580 driver, times and peak memory against
# `cuobjdump --list-elf`. Carried as .device-bin/h52/ with `cuda-sys-gen`, `min_driver_bench`
# (release, stripped) and registry.json; `bash .device-bin/h52/run.sh`; results under $OUT.
set -u
B=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-device-out}; mkdir -p "$out"
MD="$B/cuda-sys-gen min-driver --registry $B/registry.json"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1); driver=${driver:-580.65.06}
# The Python packages' folders (site-packages of the python3 on PATH).
site=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)
echo "site-packages: $site" > "$out/where.txt"
files=()
add() { for f in "$@"; do [ -f "$f" ] && files+=("$f"); done; }
torch=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))' 2>/dev/null)
[ -n "$torch" ] && add "$torch/lib/libtorch_cuda.so"
for s in $site; do
  add $(ls "$s"/jax_plugins/*/xla_cuda_plugin.so "$s"/jax_cuda*_plugin/xla_cuda_plugin.so 2>/dev/null)
  add $(ls "$s"/nvidia/cublas/lib/libcublas.so.* "$s"/nvidia/cublas/lib/libcublasLt.so.* 2>/dev/null)
  add $(ls "$s"/nvidia/cu13/lib/libcublas.so.* "$s"/nvidia/cu13/lib/libcublasLt.so.* 2>/dev/null)
  add $(ls "$s"/nvidia/cudnn/lib/libcudnn_engines_precompiled.so.* "$s"/nvidia/cu13/lib/libcudnn_engines_precompiled.so.* 2>/dev/null)
  add $(ls "$s"/nvidia/nccl/lib/libnccl.so.* "$s"/nvidia/cufft/lib/libcufft.so.* 2>/dev/null)
  add $(ls "$s"/cupy/_core/*.so "$s"/cupy/cuda/*.so 2>/dev/null | head -6)
done
add /usr/lib/x86_64-linux-gnu/libcuda.so.1 "$B/cuda-sys-gen"
printf '%s\n' "${files[@]}" > "$out/files.txt"
printf 'file\tbytes\tmin_driver_s\tmin_driver_peak_kb\tcuobjdump_s\tcuobjdump_peak_kb\theadline\tverdict_on_%s\n' "$driver" > "$out/summary.tsv"
i=0
for f in "${files[@]}"; do
  i=$((i+1)); n=$(basename "$f"); log="$out/$i-$n"
  /usr/bin/time -v $MD "$f" > "$log.txt" 2> "$log.time"; echo "rc=$?" >> "$log.time"
  $MD --driver "$driver" "$f" > "$log.driver.txt" 2>&1; echo "rc=$?" >> "$log.driver.txt"
  $MD --json "$f" > "$log.json" 2>/dev/null
  /usr/bin/time -v cuobjdump --list-elf "$f" > "$log.cuobjdump.txt" 2> "$log.cuobjdump.time"
  t() { awk -F': ' '/Elapsed \(wall/ {split($2,a,":"); s=0; for(k=1;k<=length(a);k++) s=s*60+a[k]; print s}' "$1"; }
  m() { awk -F': ' '/Maximum resident/ {print $2}' "$1"; }
  head=$(grep -m1 -E '^oldest driver|any driver|driver library|nothing that sets' "$log.txt" | cut -c1-160)
  verdict=$(grep -m1 -E 'runs|not proven|does not run' "$log.driver.txt" | cut -c1-120)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$f" "$(stat -c %s "$f")" "$(t "$log.time")" "$(m "$log.time")" \
    "$(t "$log.cuobjdump.time")" "$(m "$log.cuobjdump.time")" "$head" "$verdict" >> "$out/summary.tsv"
done
[ -n "$torch" ] && "$B/min_driver_bench" "$torch/lib/libtorch_cuda.so" --registry "$B/registry.json" --runs 3 > "$out/bench-libtorch.txt" 2>&1
cat "$out/summary.tsv"
