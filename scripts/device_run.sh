#!/usr/bin/env bash
# scripts/device_run.sh — the GPU machine's batch: GPU tests, benchmarks, the three-pipeline table,
# suites on CUDA kernels and cuBLAS, conversion sweeps. Usage: scripts/device_run.sh BIN_DIR PART
# (PART: tests | suites | conversions | emulation | all). Logs go to $OUT (the device tool's folder) or out/.
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
  run "$BIN/test_gpu" --duration=true 2>&1 | tee "$OUT/test_gpu.log" | grep -vE "^\s*$" | tail -120
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
  run "$BIN/fpcert" convert --all --device cuda --json "$OUT/conversions.json" --html "$OUT/conversions.html" 2>&1 | tee "$OUT/conversions.txt" | tail -150
}
case "$PART" in
  tests) section_tests ;;
  suites) section_suites ;;
  conversions) section_conversions ;;
  all) section_tests; section_suites; section_conversions ;;
  *) echo "unknown part $PART"; exit 2 ;;
esac
