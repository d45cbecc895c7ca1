#!/usr/bin/env bash
# min-driver on NVIDIA's and the frameworks' libraries, on the GPU machine (no Rust there): time
# and peak memory against `cuobjdump --list-elf` (medians of 3, taking turns), and against the
# `object` crate's bare parse in one process (`min_driver_bench` of this commit and of an older
# one, on the same machine); and each file's report by both (`cuda-sys-gen-main` the older),
# side by side. Carried as .device-bin/<name>/ (run 24: w52f, a3de3a6 against fe4cadd; prepared, not run:
# w52h, the tree after w52g against a3de3a6): `cuda-sys-gen`, `cuda-sys-gen-main`,
# `min_driver_bench`, `min_driver_bench_main` (release, stripped), registry.json, commit.txt.
# `bash .device-bin/<name>/run.sh`; everything under $OUT (summary.txt first). ROUNDS=1: one
# timing of each tool per file (3 by default).
set -u
B=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-device-out}; mkdir -p "$out/reports"
REG="$B/registry.json"
{
  echo "min-driver at commit $(cat "$B/commit.txt" 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1
  nproc; uname -r; cuobjdump --version 2>&1 | tail -1
} > "$out/machine.txt"
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1); driver=${driver:-580.65.06}
# Wall time and peak resident memory of one command, by os.wait4's rusage (no /usr/bin/time needed).
cat > "$out/measure.py" <<'PY'
import os, sys, time, subprocess
t = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=open(sys.argv[1], "wb"), stderr=subprocess.STDOUT)
_, status, ru = os.wait4(p.pid, 0)
print("%.3f %d %d" % (time.monotonic() - t, ru.ru_maxrss, os.waitstatus_to_exitcode(status)))
PY
M() { python3 "$out/measure.py" "$@"; }
site=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)
files=()
for name in libtorch_cuda.so libcublasLt.so.13 libcudnn_engines_precompiled.so.9 libnccl.so.2 xla_cuda_plugin.so; do
  f=$(for s in $site /opt/torch/.venv/lib/python3.12/site-packages; do find "$s" -maxdepth 5 -name "$name" -type f 2>/dev/null; done | head -1)
  [ -n "$f" ] && files+=("$f") || echo "not found: $name" >> "$out/machine.txt"
done
# More files by hand (a check of this script elsewhere): W52D_FILES="a.so b.so".
for f in ${W52D_FILES:-}; do files+=("$f"); done
printf '%s\n' "${files[@]}" > "$out/files.txt"
: > "$out/times.tsv"
for f in "${files[@]}"; do
  n=$(basename "$f")
  for round in $(seq 1 "${ROUNDS:-3}"); do
    # Taking turns at going first.
    if [ $round = 2 ]; then order="cuobjdump min-driver"; else order="min-driver cuobjdump"; fi
    for tool in $order; do
      if [ $tool = min-driver ]; then
        r=$(M "$out/reports/$n.txt" "$B/cuda-sys-gen" min-driver --registry "$REG" "$f")
      else
        r=$(M "$out/reports/$n.cuobjdump.txt" cuobjdump --list-elf "$f")
      fi
      printf '%s\t%s\t%s\n' "$n" "$tool" "$r" | tr ' ' '\t' >> "$out/times.tsv"
    done
  done
  "$B/cuda-sys-gen" min-driver --registry "$REG" --driver "$driver" "$f" > "$out/reports/$n.driver.txt" 2>&1; echo "exit $?" >> "$out/reports/$n.driver.txt"
  # Main's report of the same file, and the lines that differ (the floor, what could not be read).
  "$B/cuda-sys-gen-main" min-driver --registry "$REG" "$f" > "$out/reports/$n.main.txt" 2>&1; echo "exit $?" >> "$out/reports/$n.main.txt"
  { echo "== $n: main (<) against this branch (>)"; diff <(grep -v '^  \|^exit ' "$out/reports/$n.main.txt") <(grep -v '^  ' "$out/reports/$n.txt"); } >> "$out/headlines.diff"
  wc -l < "$out/reports/$n.cuobjdump.txt" > "$out/reports/$n.cuobjdump.lines"; rm -f "$out/reports/$n.cuobjdump.txt"
  for bench in min_driver_bench min_driver_bench_main; do
    [ -x "$B/$bench" ] || continue
    M "$out/reports/$n.$bench.txt" "$B/$bench" "$f" --registry "$REG" --runs 3 > /dev/null
    echo "$bench: $(cat "$out/reports/$n.$bench.txt")" >> "$out/bare-parse.txt"
  done
done
# The tool on itself: its own registry compiled in (a table of names, not a runtime).
"$B/cuda-sys-gen" min-driver --registry "$REG" "$B/cuda-sys-gen" > "$out/reports/cuda-sys-gen-itself.txt" 2>&1; echo "exit $?" >> "$out/reports/cuda-sys-gen-itself.txt"
# CuPy's modules (many small files): each one's headline by main and by this branch.
cupy=$(for s in $site; do find "$s" -maxdepth 3 -type d -name cupy 2>/dev/null; done | head -1)
if [ -n "$cupy" ]; then
  find "$cupy" -name '*.so' -type f | sort | head -200 > "$out/cupy-files.txt"
  while read -r f; do
    a=$("$B/cuda-sys-gen-main" min-driver --registry "$REG" "$f" 2>&1 | sed -n 2p)
    b=$("$B/cuda-sys-gen" min-driver --registry "$REG" "$f" 2>&1 | sed -n 2p)
    [ "$a" = "$b" ] || printf '%s\n  main: %s\n  this: %s\n' "${f#$cupy/}" "$a" "$b"
  done < "$out/cupy-files.txt" > "$out/cupy-headlines.diff"
fi
python3 - "$out" > "$out/summary.txt" <<'PY'
import sys, collections, statistics, struct
out = sys.argv[1]
paths = {p.strip().rsplit("/", 1)[-1]: p.strip() for p in open(out + "/files.txt") if p.strip()}
def largest_section(path):
    # The largest allocated section of an ELF64 file (its section headers).
    try:
        with open(path, "rb") as f:
            h = f.read(64)
            shoff, = struct.unpack_from("<Q", h, 40); shentsize, shnum = struct.unpack_from("<HH", h, 58)
            f.seek(shoff); t = f.read(shentsize * shnum)
        return max((struct.unpack_from("<Q", t, i * shentsize + 32)[0] for i in range(shnum)
                    if struct.unpack_from("<Q", t, i * shentsize + 8)[0] & 2
                    and struct.unpack_from("<I", t, i * shentsize + 4)[0] != 8), default=0)
    except Exception:
        return 0
t = collections.defaultdict(list)
for line in open(out + "/times.tsv"):
    n, tool, wall, rss, rc = line.split()
    t[(n, tool)].append((float(wall), int(rss), int(rc)))
print("file\tMB\tlargest section MB\tmin-driver s median (min-max)\tpeak MB\tcuobjdump s median (min-max)\tpeak MB\tratio\texits")
for n in dict.fromkeys(k[0] for k in t):
    a, b = t[(n, "min-driver")], t[(n, "cuobjdump")]
    ma, mb = statistics.median(x[0] for x in a), statistics.median(x[0] for x in b)
    import os
    size = os.path.getsize(paths[n]) // 10**6 if n in paths else 0
    print("%s\t%d\t%d\t%.2f (%.2f-%.2f)\t%d\t%.2f (%.2f-%.2f)\t%d\t%.2fx\t%s" % (
        n, size, largest_section(paths.get(n, "")) // 10**6, ma, min(x[0] for x in a), max(x[0] for x in a), max(x[1] for x in a) * 1024 // 10**6,
        mb, min(x[0] for x in b), max(x[0] for x in b), max(x[1] for x in b) * 1024 // 10**6, ma / mb,
        ",".join(str(x[2]) for x in a + b)))
print()
print(open(out + "/bare-parse.txt").read())
PY
{ echo; echo "headlines, main against this branch:"; cat "$out/headlines.diff"; echo; echo "CuPy modules whose headline changed: $(grep -c '^  main' "$out/cupy-headlines.diff" 2>/dev/null || echo 0)"; } >> "$out/summary.txt"
cat "$out/summary.txt"
