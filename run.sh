#!/usr/bin/env bash
# run.sh — install what is missing, build fpcert, run the main job: the format table and an
# exhaustive conversion check (bf16 -> fp16, every pattern against MPFR). Results in out/.
set -euo pipefail
cd "$(dirname "$0")"
scripts/deps.sh
build=${FPCERT_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target fpcert
mkdir -p out
"$build/cli/fpcert" formats
"$build/cli/fpcert" convert --from bf16 --to f16 --exhaustive --json out/convert_bf16_f16.json
echo "fpcert: results in out/"
