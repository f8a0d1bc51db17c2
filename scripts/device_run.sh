#!/usr/bin/env bash
# scripts/device_run.sh — the GPU machine's batch: GPU tests, benchmarks, the three-pipeline table,
# suites on CUDA kernels and cuBLAS, conversion sweeps. Usage: scripts/device_run.sh BIN_DIR PART
# (PART: tests | suites | conversions | emulation | plugin | proof | probe | scale | all, or several separated by commas). Logs go to $OUT (the device tool's folder) or out/.
# proof: the main job and `convert --all` with their JSON, run with BIN/fpcert and BEFORE_BIN/fpcert (default
# BIN/before) and compared (scripts/compare_results.py); BEFORE=DIR: earlier outputs already made.
set -uo pipefail
BIN=${1:-devbin}
PART=${2:-all}
OUT=${OUT:-out}
mkdir -p "$OUT"
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib $(python3 -c 'import nvidia.cublas, os; print(os.path.join(nvidia.cublas.__path__[0], "lib"))' 2>/dev/null); do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
run() { echo "=== $* ($(date +%T))"; /usr/bin/time -f "=== %e s wall" "$@"; }
section_tests() {
  nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  run "$BIN/fpcert" formats
  run "$BIN/fpcert" kernels | grep -E "^(gemm|cublas)"
  # Every module's device tests (test_<module>_gpu; the plugin's need the staged plugins: part plugin).
  for t in "$BIN"/test_*_gpu; do
    [ "$(basename "$t")" = test_plugin_gpu ] && continue
    run "$t" --duration=true 2>&1 | tee "$OUT/$(basename "$t").log" | grep -vE "^\s*$" | tail -120
  done
}
section_suites() {
  run "$BIN/bench_gpu_gemm" 2>&1 | tee "$OUT/bench_gpu_gemm.log"
  run "$BIN/fpcert" experiment three-pipeline --device cuda --json "$OUT/three_pipeline.json"
  run "$BIN/fpcert" certify --kernel gemm_f16_f32acc_mma_sm80 --suite quick --json "$OUT/quick.json" --html "$OUT/quick.html"
  run "$BIN/fpcert" run-suite accuracy-vs-k --kernels gemm_f32_tiled,gemm_tf32_f32acc_mma_sm80,gemm_f16_f32acc_mma_sm80,gemm_bf16_f32acc_mma_sm80,cublas_gemm_f32_pedantic,cublas_gemm_f32_fast_tf32,cublas_gemm_f32_fast_16f,cublas_gemm_f32_fast_16bf,cublas_gemm_f16_f16acc,cublas_gemm_f32_emulated_16bfx9 --json "$OUT/accuracy_vs_k.json" | tail -70
  run "$BIN/fpcert" run-suite accuracy-vs-k --case k4096_normal --kernels gemm_e4m3_f32acc_mma_sm89,gemm_e4m3_f32acc_mma_sm89_promote128,gemm_e5m2_f32acc_mma_sm89,gemm_e5m2_f32acc_mma_sm89_promote128,model_gemm_e4m3_f32acc --mn 1024 --json "$OUT/fp8_k4096.json"
}
section_conversions() {
  run "$BIN/bench_gpu_convert" 2>&1 | tee "$OUT/bench_gpu_convert.log"
  # The tf32 rna satfinite entry's mismatches listed in full (the first run saw 32766; NaN sources explain 16382 of them).
  run "$BIN/fpcert" convert --from f32 --to tf32 --rounding rna --saturate satfinite --exhaustive --device cuda --intrinsic f32_to_tf32_rna_satfinite --list 40000 --json "$OUT/tf32_rna_satfinite.json" > "$OUT/tf32_rna_satfinite.txt" 2>&1; tail -5 "$OUT/tf32_rna_satfinite.txt"
  run "$BIN/fpcert" convert --all --device cuda --json "$OUT/conversions.json" --html "$OUT/conversions.html" 2>&1 | tee "$OUT/conversions.txt" | tail -150
  # The same table as the `conversions` suite of certify (one case per entry; JUnit and the results model).
  run "$BIN/fpcert" certify --suite conversions --json "$OUT/conversions_suite.json" --junit "$OUT/conversions_suite.xml" 2>&1 | tail -8
}
SPLIT=gemm_3xtf32_mma_sm80,gemm_3xtf32rz_mma_sm80,gemm_1xbf16_mma_sm80,gemm_3xbf16_mma_sm80,gemm_6xbf16_mma_sm80,gemm_9xbf16_mma_sm80
B16=gemm_bf16_on_f16_cast_mma_sm80,gemm_bf16_on_f16_tensor_mma_sm80,gemm_bf16_on_f16_rowcol_mma_sm80,gemm_bf16_on_f16_kblock64_mma_sm80,gemm_bf16_on_f16_kblock128_mma_sm80,gemm_bf16_on_f16_outlier_mma_sm80,gemm_bf16_on_f16_auto_mma_sm80
section_emulation() {
  run timeout 300 "$BIN/bench_gpu_emulation" 2>&1 | tee "$OUT/bench_gpu_emulation.log"
  run timeout 200 "$BIN/fpcert" experiment split-scalar --device cuda --json "$OUT/split_scalar.json" 2>&1 | tee "$OUT/split_scalar.txt"
  run timeout 300 "$BIN/fpcert" experiment bf16-on-fp16 --device cuda --json "$OUT/bf16_on_fp16.json" 2>&1 | tee "$OUT/bf16_on_fp16.txt"
  run timeout 400 "$BIN/fpcert" run-suite split-emulation --kernels "$SPLIT,cublas_gemm_f32_pedantic" --json "$OUT/split_emulation.json" --html "$OUT/split_emulation.html" 2>&1 | tail -80
}
# The plugin ABI's GPU tests from copied binaries: the plugins and the staged install travel in BIN/plugins and BIN/stage.
section_plugin() {
  export FPCERT_BIN="$BIN/fpcert" FPCERT_TEST_PLUGIN_DIR="$BIN/plugins" FPCERT_STAGE_DIR="$BIN/stage" FPCERT_TEST_SCRATCH="$OUT/plugin_scratch"
  mkdir -p "$FPCERT_TEST_SCRATCH"
  run timeout 300 "$BIN/test_plugin_gpu" --duration=true 2>&1 | tee "$OUT/test_plugin_gpu.log" | tail -40
}
# Behaviour unchanged across a refactoring: the main job (certify on every CUDA kernel) and the
# device conversion table (`convert --all`), run with BIN's fpcert and with the earlier build's
# (BEFORE_BIN, default BIN/before: its fpcert binary), then compared by scripts/compare_results.py
# (verdicts, counts and figures; times masked). With BEFORE=DIR the earlier outputs are read from DIR
# instead of run. Success: every comparison prints SAME (exit 0).
proof_run() {  # proof_run FPCERT DIR
  mkdir -p "$2"
  # Not through run(): its timing lines would land in the compared text.
  echo "=== $1 certify --kernel cuda --suite certify ($(date +%T))"
  "$1" certify --kernel cuda --suite certify --json "$2/main.json" > "$2/main.txt" 2>&1; echo "rc=$?" >> "$2/main.txt"
  tail -3 "$2/main.txt"
  echo "=== $1 convert --all --device cuda ($(date +%T))"
  "$1" convert --all --device cuda --json "$2/conversions.json" > "$2/conversions.txt" 2>&1; echo "rc=$?" >> "$2/conversions.txt"
  tail -3 "$2/conversions.txt"
}
section_proof() {
  proof_run "$BIN/fpcert" "$OUT"
  # The conversions suite (new with the one runner): the same table through certify.
  echo "=== $BIN/fpcert certify --suite conversions ($(date +%T))"
  "$BIN/fpcert" certify --suite conversions --json "$OUT/conversions_suite.json" > "$OUT/conversions_suite.txt" 2>&1; echo "rc=$?" >> "$OUT/conversions_suite.txt"
  tail -3 "$OUT/conversions_suite.txt"
  local before=${BEFORE:-}
  if [ -z "$before" ]; then
    local bb=${BEFORE_BIN:-$BIN/before}
    if [ -x "$bb/fpcert" ]; then before="$OUT/before"; proof_run "$bb/fpcert" "$before"; else echo "proof: no $bb/fpcert and no BEFORE=DIR: nothing to compare with"; return; fi
  fi
  local rc=0
  for f in main.json main.txt conversions.json conversions.txt; do
    if [ -f "$before/$f" ]; then python3 "$(dirname "$0")/compare_results.py" "$before/$f" "$OUT/$f" || rc=1; else echo "proof: $before/$f missing"; rc=1; fi
  done
  echo "=== proof: $([ $rc = 0 ] && echo SAME || echo DIFFERENT)"
}
# The tensor-core behaviour cards: every mma.sync / wgmma instruction probed, fitted and validated on
# 10^7 samples; the cards as JSON and HTML, the raw probe answers as recordings (a few hundred KB) for
# tests/data/tc/, then the recordings replayed through the probe logic (the same cards must come out),
# and the probe's GPU test.
section_probe() {
  run timeout 600 "$BIN/fpcert" probe tensor-cores --samples 10000000 --json "$OUT/tc_cards.json" --html "$OUT/tc_cards.html" \
    --record "$OUT/tc_recordings" --quiet 2>&1 | tee "$OUT/tc_probe.txt" | tail -150
  run timeout 300 "$BIN/fpcert" probe tensor-cores --replay "$OUT/tc_recordings" --json "$OUT/tc_cards_replayed.json" --quiet 2>&1 | tail -25
  du -sh "$OUT/tc_recordings"
  run timeout 600 "$BIN/test_kernels_gpu" --source-file='*tc_probe_gpu_test.cpp' 2>&1 | tee "$OUT/test_gpu_tc_probe.log" | tail -60
}
# Scale-out (docs/scale.md): the same work in one process on GPU 0 and with one worker per GPU
# (--devices all), timed side by side in one run; the merged results must be the one-GPU run's
# (scripts/compare_results.py: every verdict, count and figure; exit 1 and DIFFERENT when not). With one
# GPU, --devices all is one worker: the speed-up is ~1 and the identity check still holds.
scale_pair() {  # scale_pair NAME fpcert-arguments...
  local name=$1; shift
  local one="$OUT/scale_${name}_1gpu" all="$OUT/scale_${name}_all" t0 t1 t2
  t0=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} "$BIN/fpcert" "$@" --json "$one.json" > "$one.txt" 2>&1; echo "rc=$?" >> "$one.txt"
  t1=$(date +%s.%N)
  "$BIN/fpcert" "$@" --devices all --json "$all.json" > "$all.txt" 2>&1; echo "rc=$?" >> "$all.txt"
  t2=$(date +%s.%N)
  tail -4 "$one.txt"; grep -E "^--devices|^rc=" "$all.txt"; tail -4 "$all.txt"
  python3 -c "import sys; a, b = float(sys.argv[2]) - float(sys.argv[1]), float(sys.argv[3]) - float(sys.argv[2]); print(f'scale {sys.argv[4]}: one GPU {a:.1f} s, --devices all ({sys.argv[5]} GPU(s)) {b:.1f} s: speed-up {a / b:.2f}x')" \
    "$t0" "$t1" "$t2" "$name" "$(nvidia-smi -L | wc -l)" | tee -a "$OUT/scale_summary.txt"
  python3 "$(dirname "$0")/compare_results.py" "$one.json" "$all.json" | tee -a "$OUT/scale_summary.txt" | head -30
  diff <(grep '^rc=' "$one.txt") <(grep '^rc=' "$all.txt") > /dev/null && echo "scale $name: same exit code ($(grep '^rc=' "$one.txt"))" | tee -a "$OUT/scale_summary.txt"
}
section_scale() {
  nvidia-smi -L
  rm -f "$OUT/scale_summary.txt"
  # Every built-in CUDA kernel certified on the certify suite (references on the host, kernels on the GPUs).
  scale_pair certify_cuda certify --kernel cuda --suite certify
  # Once convert and mutate run through the one runner they take --devices too; until then they are skipped, saying so.
  if "$BIN/fpcert" convert --help 2>&1 | grep -q -- --devices; then scale_pair convert_all convert --all --device cuda
  else echo "scale: convert has no --devices in this build: skipped"; fi
  if "$BIN/fpcert" mutate --help 2>&1 | grep -q -- --devices; then
    scale_pair mutate_cuda mutate --kernel gemm_f16_f32acc_mma_sm80,gemm_bf16_f32acc_mma_sm80,gemm_tf32_f32acc_mma_sm80 --suite certify
  else echo "scale: mutate has no --devices in this build: skipped"; fi
  cat "$OUT/scale_summary.txt"
}
for part in ${PART//,/ }; do
  case "$part" in
    tests) section_tests ;;
    suites) section_suites ;;
    conversions) section_conversions ;;
    emulation) section_emulation ;;
    plugin) section_plugin ;;
    proof) section_proof ;;
    probe) section_probe ;;
    scale) section_scale ;;
    all) section_tests; section_suites; section_conversions; section_emulation; section_plugin; section_probe ;;
    *) echo "unknown part $part"; exit 2 ;;
  esac
done
