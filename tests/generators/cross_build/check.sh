#!/bin/bash
# tests/generators/cross_build/check.sh — build the generators (and the oracle they use) with
# several compilers and flag sets, print the hashes of a fixed list of specs with each, and fail
# if any build disagrees: the bits of a generated problem must depend on its spec only.
#
#   tests/generators/cross_build/check.sh [WORKDIR]     (from the repository root; ~10 min on 2 cores)
#
# Builds: GCC -O0 -march=x86-64 (SSE2 only, no vectorisation), GCC -O3 -march=x86-64-v3 (the
# project's flags: AVX2 and FMA available, contraction off), Clang -O2 -march=x86-64-v3 (another
# compiler, another vectoriser). Not part of ctest: it compiles the sources three times.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=${1:-$(mktemp -d)}
srcs=("$root"/generators/*.cpp)
for f in oracle/exact_sum oracle/format oracle/gemm_fast oracle/gemm_ref oracle/mpfr_ref oracle/refvalue oracle/round \
         oracle/representable oracle/reduce/reduce_ref base/parallel base/error; do
  [ -f "$root/$f.cpp" ] && srcs+=("$root/$f.cpp")
done
srcs+=("$root/tests/generators/cross_build/hashes.cpp")
build() {  # name compiler flags...
  local name=$1 cxx=$2
  shift 2
  command -v "$cxx" > /dev/null || { echo "skip $name: no $cxx"; return; }
  mkdir -p "$work/$name"
  for f in "${srcs[@]}"; do  # object names keep the folder (oracle/reduce/x.cpp -> oracle_reduce_x.o)
    local rel=${f#"$root"/}
    "$cxx" -std=c++20 -I"$root" -I/usr/include/eigen3 -ffp-contract=off "$@" -c "$f" -o "$work/$name/${rel//\//_}.o"
  done
  "$cxx" "$work/$name"/*.o -lmpfr -lgmp -pthread -o "$work/$name/hashes"
  "$work/$name/hashes" > "$work/$name.txt"
  echo "$name: $(md5sum < "$work/$name.txt" | cut -c1-32)"
}
build gcc_O0_sse2 g++ -O0 -march=x86-64
build gcc_O3_v3 g++ -O3 -march=x86-64-v3
build clang_O2_v3 clang++ -O2 -march=x86-64-v3
ref=""
for f in "$work"/*.txt; do
  if [ -z "$ref" ]; then ref=$f; continue; fi
  diff -u "$ref" "$f" || { echo "FAIL: $(basename "$f") differs from $(basename "$ref")"; exit 1; }
done
echo "all builds agree:"
cat "$ref"
