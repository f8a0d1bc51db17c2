#!/usr/bin/env bash
# test.sh — install what is missing, build everything, fuzz every reader of user input for a bounded
# time (scripts/fuzz.sh in its quick mode, the readers instrumented and linked against this build:
# FPCERT_FUZZ_SECONDS per target, 30 by default here, 0 to skip; skipped with a message where clang/libFuzzer
# are missing), then run every test (GPU tests report skipped without
# a device). The same command CI runs (.ci/run). Exit non-zero if a test failed or fuzzing found
# something.
set -euo pipefail
cd "$(dirname "$0")"
scripts/deps.sh --tests
build=${FPCERT_BUILD_DIR:-build}
# ccache with paths relative to this checkout: a fresh clone elsewhere (CI) hits the objects an earlier
# build of the same sources left in the cache.
launch=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
  launch=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFPCERT_TESTS=ON -DFPCERT_WERROR=ON "${launch[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
fuzz_rc=0
if [[ "${FPCERT_FUZZ_SECONDS:-60}" != "0" ]]; then
  FPCERT_FUZZ_LINK_BUILD="$build" FPCERT_FUZZ_SECONDS="${FPCERT_FUZZ_SECONDS:-30}" scripts/fuzz.sh || fuzz_rc=$?
  if (( fuzz_rc == 77 )); then fuzz_rc=0; fi  # no clang here: said so, not a failure
fi
cd "$build"
test_rc=0
ctest --output-on-failure -j "$(nproc)" -LE exhaustive "$@" || test_rc=$?
if (( fuzz_rc == 2 )); then echo "test.sh: the fuzz targets did not build (see above); the tests' result: exit $test_rc" >&2; exit 1; fi
if (( fuzz_rc != 0 )); then echo "test.sh: fuzzing found a crash (see above); the tests' result: exit $test_rc" >&2; exit 1; fi
exit $test_rc
