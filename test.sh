#!/usr/bin/env bash
# test.sh — install what is missing, build everything, run every test (GPU tests report skipped
# without a device). The same command CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")"
scripts/deps.sh --tests
build=${FPCERT_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFPCERT_TESTS=ON -DFPCERT_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure -j "$(nproc)" -LE exhaustive "$@"
