#!/usr/bin/env bash
# Runs on the device machine after bench/device/scale.sh has unpacked Node and the dependencies (same call, or a
# call on a machine still warm): bench `scale`'s sends at N = $PROFILE_PROCESSES (default 8) with a V8 CPU profile
# of every gateway process, each main thread's profile summarised there (bench/profile-summary.ts) into
# $OUT/profiles.txt: the profiles themselves are too many and too large to bring back.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export PATH=/tmp/node-bin:$PATH
n=${PROFILE_PROCESSES:-8}
dir=/tmp/profiles-$n
rm -rf "$dir" && mkdir -p "$dir"
BENCH_CPU_PROF=$dir BENCH_SCALE_ONLY=sends BENCH_SCALE_PROCESSES=$n node --import tsx bench/run.ts scale 2>&1 | grep -E 'N=|FAILED'
# A process's main thread writes <...>.0.001.cpuprofile; its worker threads (checkpoints) the others.
for profile in "$dir"/*.0.001.cpuprofile; do
  echo "=== N=$n $(basename "$profile")"
  node --import tsx bench/profile-summary.ts "$profile" 25
done > "$OUT/profiles.txt" 2>&1
