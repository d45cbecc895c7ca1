#!/usr/bin/env bash
# `cargo xtask bench --only min-driver --runs 3` on the GPU machine (run 25; carried as .device-bin/xb/ with xtask, `cargo build --release -p xtask`, stripped, and commit.txt) (no Rust there): xtask's
# release binary, whose repository root is compiled in as /work/main, pointed at this copy.
set -u
root=$(pwd)
[ -e /work/main ] || { mkdir -p /work && ln -s "$root" /work/main; }
out=${OUT:-device-out}; mkdir -p "$out"
{ nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .device-bin/xb/commit.txt; uptime; } > "$out/machine.txt" 2>&1
( cd /work/main && .device-bin/xb/xtask bench --only min-driver --runs 3 ) > "$out/bench.md" 2> "$out/bench.err"
echo "exit $?" >> "$out/bench.err"
cat "$out/machine.txt" "$out/bench.md"; tail -5 "$out/bench.err"
