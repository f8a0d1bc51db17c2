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
# grading, mutation campaigns) in parallel. On a GPU one worker per 2 cores sharing it, on the CPU one per core
# (--devices host:N), at most 8 either way (FPCERT_WORKERS overrides; 1: one process).
scale=()
if [ "$kernels" = cuda ]; then per=$(( $(nproc) / 2 )); where=all; else per=$(nproc); where=host; fi
[ "$per" -gt 8 ] && per=8
workers=${FPCERT_WORKERS:-$per}
[ "$workers" -gt 1 ] && scale=(--devices "$where:$workers")
echo "fpcert: certifying the built-in ${kernels} kernels (suite certify${scale[*]:+, ${scale[*]}})"
"$fpcert" certify --kernel "$kernels" --suite certify "${scale[@]}" --json out/results.json --junit out/results.xml --html out/report.html
rc=$?
echo "fpcert: exit code $rc; results in out/results.json, out/results.xml, out/report.html"
exit $rc
