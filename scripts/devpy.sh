#!/usr/bin/env bash
# scripts/devpy.sh — build the Python entry for a GPU machine's interpreter and stage it in devpy/
# (ignored by git), for scripts/device_run.sh's part `python`. The extension must match the device's
# CPython (Ubuntu 24.04: 3.12; this machine's Debian 12 has 3.11), so it is built here against the
# headers of a second interpreter of that version (PYTHON, default pyenv's 3.12), with pybind11's
# headers (Debian's pybind11-dev), and linked against MPFR and GMP, which travel beside it
# ($ORIGIN rpath). Usage: scripts/devpy.sh [BUILD_DIR]   (default build-py312)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-py312}
PYTHON=${PYTHON:-/root/.pyenv/versions/3.12.1/bin/python3.12}
launch=()
if command -v ccache >/dev/null; then launch=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFPCERT_CUDA=OFF -DFPCERT_TESTS=ON -DFPCERT_BENCH=OFF \
  -DFPCERT_PYTHON=ON -DPython_EXECUTABLE="$PYTHON" -DFPCERT_HOST_ARCH=x86-64-v3 \
  -DCMAKE_BUILD_RPATH='$ORIGIN' "${launch[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target _fpcert fpcert
rm -rf devpy && mkdir -p devpy
cp -r "$build/python/fpcert" devpy/fpcert
find devpy -name __pycache__ -prune -exec rm -rf {} +
for lib in $(ldd devpy/fpcert/_fpcert*.so | awk '/libmpfr|libgmp|libhwy|libfmt/ {print $3}'); do cp -L "$lib" devpy/fpcert/; done
cp "$build/cli/fpcert" devpy/fpcert-cli
for lib in $(ldd devpy/fpcert-cli | awk '/libmpfr|libgmp|libhwy|libfmt/ {print $3}'); do cp -nL "$lib" devpy/; done
# pytest and what it imports (Debian's, pure Python) for a device whose python3 has none: device_run.sh
# puts devpy/site on PYTHONPATH only when `import pytest` fails there.
mkdir -p devpy/site
for m in pytest _pytest pluggy iniconfig packaging attr attrs py py.py; do
  cp -r "/usr/lib/python3/dist-packages/$m" devpy/site/ 2>/dev/null || true
done
find devpy/site -name __pycache__ -prune -exec rm -rf {} +
strip devpy/fpcert/_fpcert*.so devpy/fpcert-cli
du -sh devpy
echo "devpy: carry it with the device tool (carry: [\"devpy\"]), then: scripts/device_run.sh devbin python"
