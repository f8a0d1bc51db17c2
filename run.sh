#!/usr/bin/env bash
# run.sh — install what is missing, build fpcert, run the main job: certify the built-in kernels on
# the `certify` suite — the CUDA kernels when a GPU is present, the CPU models otherwise — and write
# out/results.json, out/results.xml (JUnit) and out/report.html. Exit code: fpcert certify's.
set -uo pipefail
cd "$(dirname "$0")"
scripts/deps.sh || exit 2
build=${FPCERT_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 2
cmake --build "$build" -j "$(nproc)" --target fpcert || exit 2
mkdir -p out
fpcert="$build/cli/fpcert"
kernels=cpu
if "$fpcert" formats | head -2 | tail -1 | grep -vq "no device"; then kernels=cuda; fi  # a usable CUDA device
# Worker processes side by side (docs/scale.md, "Several workers on one GPU"): the run's host work (references,
# grading, mutation campaigns) in parallel: one worker per core, sharing the GPU (--devices all:N, at most 16: on a
# 16-core H100 host 16 workers took 170 s, 8 took 208 s) or on the CPU (--devices host:N, at most 8), and at most one
# per 4 GiB of memory (a 4096 x 4096 case's grading holds about 3 GB). FPCERT_WORKERS overrides; 1: one process.
scale=()
if [ "$kernels" = cuda ]; then per=$(nproc); cap=16; where=all; else per=$(nproc); cap=8; where=host; fi
mem_gib=$(awk '/^MemTotal:/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null || echo 0)
[ "$mem_gib" -ge 4 ] && [ "$cap" -gt $(( mem_gib / 4 )) ] && cap=$(( mem_gib / 4 ))
[ "$per" -gt "$cap" ] && per=$cap
workers=${FPCERT_WORKERS:-$per}
[ "$workers" -gt 1 ] && scale=(--devices "$where:$workers")
echo "fpcert: certifying the built-in ${kernels} kernels (suite certify${scale[*]:+, ${scale[*]}})"
"$fpcert" certify --kernel "$kernels" --suite certify "${scale[@]}" --json out/results.json --junit out/results.xml --html out/report.html
rc=$?
echo "fpcert: exit code $rc; results in out/results.json, out/results.xml, out/report.html"
exit $rc
