#!/usr/bin/env bash
# Runs on the device machine (16 cores, no Node, no network), from the repository root, with `.device` carried
# (bench/device/pack.sh makes it). Unpacks Node and the dependencies, then runs the benches named in $BENCHES
# (default: scale) and copies each JSON report to $OUT. Extra environment (BENCH_SCALE_PROCESSES, ...) passes on.
set -uo pipefail
# Unpacked once per machine: a second run in the same call reuses them.
mkdir -p /tmp/node-bin
[ -x /tmp/node-bin/node ] || { xz -dc .device/node.xz > /tmp/node-bin/node && chmod +x /tmp/node-bin/node; }
export PATH=/tmp/node-bin:$PATH
[ -d node_modules/tsx ] || tar -xJf .device/modules.tar.xz
echo "cores: $(nproc); $(uptime); node $(node --version)"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for bench in ${BENCHES:-scale}; do
  label=${LABEL:-run}
  node --import tsx bench/run.ts "$bench" 2>&1 | tee "$OUT/$bench-$label.txt"
  cp bench/results/latest.json "$OUT/$bench-$label.json" 2>/dev/null || true
done
