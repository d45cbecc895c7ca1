#!/bin/bash
# The lookup bench of the tree before this stop's shim split (df5857e) and after it, built the
# same way here, taking turns three times on one machine: `conformance bench` each time.
OUT=${OUT:-device-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/pair.txt"
for round in 1 2 3; do
  for which in before after; do
    echo "== round $round $which" >> "$OUT/pair.txt"
    .device-bin/conformance-$which bench >> "$OUT/pair.txt" 2>&1
  done
done
