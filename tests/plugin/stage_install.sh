#!/usr/bin/env bash
# tests/plugin/stage_install.sh — what a user of fpcert does: install it to a prefix, then build the
# example plugins as separate CMake projects against that install (find_package(fpcert CONFIG)).
#   stage_install.sh CMAKE SOURCE_DIR BUILD_DIR STAGE_DIR [CUDA_COMPILER CUDA_ARCHS]
# Leaves STAGE_DIR/prefix (bin/fpcert, include/fpcert/plugin.h and the fpcert_plugin_epilogue.h it includes, lib/cmake/fpcert), STAGE_DIR/cpu
# (libexample_cpu_plugin.so), STAGE_DIR/rows (libexample_rows_plugin.so: softmax and norm, ABI minor 6), STAGE_DIR/epilogue
# (libexample_epilogue_plugin.so: a fused epilogue, ABI minor 8, including <fpcert/fpcert_plugin_epilogue.h>), STAGE_DIR/attention
# (libexample_attention_plugin.so: attention forward and backward, ABI minor 10, <fpcert/fpcert_plugin_attention.h>), STAGE_DIR/eltwise
# (libexample_eltwise_plugin.so: elementwise math functions, ABI minor 11, <fpcert/fpcert_plugin_eltwise.h>) and, with a
# CUDA compiler, STAGE_DIR/cuda (libexample_cuda_plugin.so).
set -euo pipefail
cmake=$1 src=$2 build=$3 stage=$4 nvcc=${5:-} archs=${6:-}
rm -rf "$stage"
mkdir -p "$stage"
"$cmake" --build "$build" --target fpcert      # install what the tests will run
"$cmake" --install "$build" --prefix "$stage/prefix"
for f in bin/fpcert include/fpcert/plugin.h include/fpcert/fpcert_plugin_epilogue.h include/fpcert/fpcert_plugin_attention.h include/fpcert/fpcert_plugin_rows.h include/fpcert/fpcert_plugin_eltwise.h lib/cmake/fpcert/fpcertConfig.cmake lib/cmake/fpcert/fpcertConfigVersion.cmake; do
  test -e "$stage/prefix/$f" || { echo "stage_install: $f was not installed" >&2; exit 1; }
done
for ex in cpu rows epilogue attention eltwise; do
  "$cmake" -S "$src/examples/plugin/$ex" -B "$stage/$ex" -DCMAKE_PREFIX_PATH="$stage/prefix" -DCMAKE_BUILD_TYPE=Release
  "$cmake" --build "$stage/$ex"
  test -f "$stage/$ex/libexample_${ex}_plugin.so"
done
if [ -n "$nvcc" ]; then
  "$cmake" -S "$src/examples/plugin/cuda" -B "$stage/cuda" -DCMAKE_PREFIX_PATH="$stage/prefix" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$archs"
  "$cmake" --build "$stage/cuda"
  test -f "$stage/cuda/libexample_cuda_plugin.so"
fi
echo "stage_install: fpcert installed to $stage/prefix; examples built against it"
