#!/usr/bin/env bash
# scripts/fuzz.sh — bounded fuzzing of what fpcert reads from users (tests/fuzz/): builds the
# libFuzzer targets with clang under ASan and UBSan (build dir $FPCERT_FUZZ_BUILD_DIR, default
# build-fuzz) — every file instrumented, or, with FPCERT_FUZZ_LINK_BUILD=<a built test build> (what
# test.sh does), only the readers, linked against that build (scripts/fuzz_link.py) — then runs each for $FPCERT_FUZZ_SECONDS seconds (default 60) on a copy of its seed
# corpus. A crash, leak or sanitizer report fails the run and leaves the input in
# $build/fuzz-findings/<target>/: add it to tests/fuzz/corpus/<target>/ with a regression test.
# Prints, per target, the time and the number of executions. Usage: scripts/fuzz.sh [target...]
# Exit: 0 clean; 1 a finding; 2 the build failed; 77 no clang/libFuzzer here (skipped, said so).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FPCERT_FUZZ_SECONDS:-60}
build=${FPCERT_FUZZ_BUILD_DIR:-build-fuzz}
targets=("$@")
if (( ${#targets[@]} == 0 )); then targets=(spec npy config results plugin options plugin_load); fi
cxx=$(command -v clang++-14 || command -v clang++ || true)
cc=$(command -v clang-14 || command -v clang || true)
if [[ -z "$cxx" ]] || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz: SKIPPED: clang and libFuzzer are not installed (scripts/deps.sh --tests installs clang-14 and libclang-rt-14-dev)"
  exit 77
fi
link_build=${FPCERT_FUZZ_LINK_BUILD:-}
mkdir -p "$build"
: >"$build/fuzz-build.log"
if [[ -n "$link_build" ]]; then
  # Quick mode (test.sh, CI): only the files that read each target's input are compiled with clang under
  # ASan and UBSan, linked ahead of the test build's libraries (scripts/fuzz_link.py): a minute of
  # compiling instead of a second build of all of fpcert.
  mode="quick: the readers instrumented, linked against $link_build"
  bins="$build"
  for t in "${targets[@]}"; do
    python3 scripts/fuzz_link.py "$t" "$link_build" "$build" "$cxx" >>"$build/fuzz-build.log" 2>&1 ||
      { tail -40 "$build/fuzz-build.log"; echo "fuzz: build of fuzz_$t failed (not a finding)"; exit 2; }
  done
else
  # Full mode (long campaigns): every file of fpcert instrumented, in a build of its own.
  mode="full: every file instrumented"
  bins="$build/tests/fuzz"
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
  # -O1 with line tables, as libFuzzer's documentation recommends (and quicker to compile than -O2 -g).
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
    -DFPCERT_FUZZ=ON -DFPCERT_CUDA=OFF -DFPCERT_TESTS=ON -DFPCERT_BENCH=OFF "${launcher[@]}" >/dev/null
  # One target per build command: several top-level targets in one Makefile invocation are built by
  # parallel sub-makes that race on the libraries they share (two links of the same .a at once).
  for t in "${targets[@]}"; do
    cmake --build "$build" -j "$(nproc)" --target "fuzz_$t" >>"$build/fuzz-build.log" 2>&1 ||
      { tail -40 "$build/fuzz-build.log"; echo "fuzz: build of fuzz_$t failed (not a finding)"; exit 2; }
  done
fi
# One target: its run, then one summary line in $build/fuzz-$t.summary and its exit status in
# $build/fuzz-$t.rc. The targets run side by side, as many at a time as there are cores (each libFuzzer
# run is one process on one core: the same seconds per target, less wall time).
run_target() {
  local t=$1 work="$build/fuzz-corpus/$1" findings="$build/fuzz-findings/$1" log="$build/fuzz-$1.log" rc execs corpus
  rm -rf "$work" && mkdir -p "$work" "$findings"
  cp tests/fuzz/corpus/"$t"/* "$work"/
  set +e
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$bins/fuzz_$t" "$work" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1
  rc=$?
  set -e
  # The last stats line is the fuzzer's own: children it forks (fuzz_plugin_load's probes) that call exit()
  # print theirs too.
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo "?")
  corpus=$(ls "$work" | wc -l)
  if (( rc != 0 )); then
    printf 'fuzz_%-8s %4ss %12s execs  FINDING (exit %s): %s\n' "$t" "$secs" "$execs" "$rc" "$(ls "$findings" | head -3 | tr '\n' ' ')" >"$build/fuzz-$t.summary"
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$log" | head -10 >>"$build/fuzz-$t.summary" || true
  else
    printf 'fuzz_%-8s %4ss %12s execs  corpus %5s  clean\n' "$t" "$secs" "$execs" "$corpus" >"$build/fuzz-$t.summary"
  fi
  echo "$rc" >"$build/fuzz-$t.rc"
}
jobs_max=$(nproc)
running=0
for t in "${targets[@]}"; do
  if (( running >= jobs_max )); then wait -n || true; running=$((running - 1)); fi
  run_target "$t" &
  running=$((running + 1))
done
wait || true
status=0
summary=()
for t in "${targets[@]}"; do
  [[ "$(cat "$build/fuzz-$t.rc" 2>/dev/null || echo 1)" == 0 ]] || status=1
  while IFS= read -r line; do summary+=("$line"); done <"$build/fuzz-$t.summary"
done
echo "fuzz: ASan+UBSan ($mode), $secs s per target (logs: $build/fuzz-<target>.log)"
printf '  %s\n' "${summary[@]}"
exit $status
