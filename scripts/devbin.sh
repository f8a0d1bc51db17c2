#!/usr/bin/env bash
# scripts/devbin.sh — build the binaries that travel to a GPU machine and stage them in devbin/
# (ignored by git), for scripts/device_run.sh there. Static MPFR, GMP, libstdc++ and libgcc; CUDA for
# sm_90a plus compute_80 PTX; host code for x86-64-v3 (never -march=native: the GPU machine's CPU is
# another). Usage: scripts/devbin.sh [BUILD_DIR]   (default build-dev; ccache used when present)
# FPCERT_DEVBIN_DYNAMIC=1: a plain dynamic build instead (default dir build-devdyn) whose objects are those of
# test.sh's build (same flags: ccache hits), with libmpfr, libgmp, libfmt and libhwy travelling beside the
# binaries (the GPU machine's glibc and libstdc++ are newer than Debian 12's).
set -euo pipefail
cd "$(dirname "$0")/.."
dynamic=${FPCERT_DEVBIN_DYNAMIC:-0}
build=${1:-$([ "$dynamic" = 1 ] && echo build-devdyn || echo build-dev)}
launch=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  launch=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
static=ON
[ "$dynamic" = 1 ] && static=OFF
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFPCERT_STATIC_DEPS=$static -DFPCERT_TESTS=ON -DFPCERT_BENCH=ON \
  -DFPCERT_WERROR=ON -DFPCERT_HOST_ARCH=x86-64-v3 -DFPCERT_CUDA=ON -DFPCERT_MPI=OFF "${launch[@]}" >/dev/null
# Only what travels: the CLI, the device tests, the benches and the test plugins (not the CPU tests).
# Makefiles list a target as '... NAME', Ninja as 'NAME: phony'.
targets=$(cmake --build "$build" --target help | sed -E 's/^\.\.\. //; s/: phony$//' |
  grep -E '^(fpcert|fpcert_test_plugins|_fpcert|test_[a-z_]*_gpu|bench_[a-z_0-9]*)$')
cmake --build "$build" -j "$(nproc)" --target $targets
# The plugin tests' staged install (the installed package and the example plugins built against it).
(cd "$build" && ctest -R 'plugin/install_stage' --output-on-failure >/dev/null)

mkdir -p devbin
find devbin -mindepth 1 -maxdepth 1 ! -name before -exec rm -rf {} +
cp "$build/cli/fpcert" devbin/
find "$build/tests" -maxdepth 1 -type f -executable -name 'test_*_gpu' -exec cp {} devbin/ \;
find "$build/bench" -maxdepth 1 -type f -executable -name 'bench_*' -exec cp {} devbin/ \;
mkdir -p devbin/plugins
cp "$build"/tests/plugins/*.so devbin/plugins/
[ -d "$build/tests/plugin/stage" ] && cp -r "$build/tests/plugin/stage" devbin/stage
# Libraries Debian ships only as shared objects travel beside the binaries (device_run.sh puts
# devbin/ on LD_LIBRARY_PATH).
libs='libhwy'
[ "$dynamic" = 1 ] && libs='libhwy|libmpfr|libgmp|libfmt'
for lib in $(ldd devbin/fpcert | awk -v re="$libs" '$0 ~ re {print $3}'); do cp -L "$lib" devbin/; done
find devbin -maxdepth 1 -type f -executable ! -name '*.so*' -exec strip {} \;
du -sh devbin
echo "devbin: $(ls devbin | wc -l) entries; carry it with the device tool (carry: [\"devbin\"])"
