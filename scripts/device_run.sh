#!/usr/bin/env bash
# scripts/device_run.sh — the GPU machine's batch: GPU tests, benchmarks, the three-pipeline table,
# suites on CUDA kernels and cuBLAS, conversion sweeps. Usage: scripts/device_run.sh BIN_DIR PART
# (PART: the section names below, or several separated by commas). Logs go to $OUT (the device tool's folder) or out/.
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
# Libraries that travel beside the binaries (libhwy.so.1: Debian ships Highway as a shared library only).
export LD_LIBRARY_PATH="$BIN:${LD_LIBRARY_PATH:-}"
run() { echo "=== $* ($(date +%T))"; /usr/bin/time -f "=== %e s wall" "$@"; }
# A test piped through tee into a filter ends that filter with tail, never head: head exits early, tee then dies of
# SIGPIPE and so does the test (2026-12-05: the elementwise GPU test was cut at its 80th line, rc 1, no summary).
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
  # The device check (convert and compare on the GPU) against the host check of the same results.
  run "$BIN/test_suites_gpu" --source-file='*convert_check_device_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/test_convert_check_device.log" | tail -40
  run "$BIN/bench_gpu_convert_check" 2>&1 | tee "$OUT/bench_gpu_convert_check.log"
  # The device check's host side alone (no GPU: a host double plays the device), NaN fast path beside MPFR on every NaN input.
  run "$BIN/bench_device_check_finish" "$(nproc)" 2>&1 | tee "$OUT/bench_device_check_finish.log"
  run "$BIN/bench_device_check_finish" 1 2>&1 | tee -a "$OUT/bench_device_check_finish.log"
  run "$BIN/bench_gpu_convert" 2>&1 | tee "$OUT/bench_gpu_convert.log"
  # The tf32 rna satfinite entry's mismatches listed in full (the first run saw 32766; NaN sources explain 16382 of them).
  run "$BIN/fpcert" convert --from f32 --to tf32 --rounding rna --saturate satfinite --exhaustive --device cuda --intrinsic f32_to_tf32_rna_satfinite --list 40000 --json "$OUT/tf32_rna_satfinite.json" > "$OUT/tf32_rna_satfinite.txt" 2>&1; tail -5 "$OUT/tf32_rna_satfinite.txt"
  run "$BIN/fpcert" convert --all --device cuda --json "$OUT/conversions.json" --html "$OUT/conversions.html" 2>&1 | tee "$OUT/conversions.txt" | tail -150
  # The same table with the host check (results copied back), for the time side by side.
  run "$BIN/fpcert" convert --all --device cuda --check host --json "$OUT/conversions_host.json" 2>&1 | tail -3
  # The same table as the `conversions` suite of certify (one case per entry; JUnit and the results model).
  run "$BIN/fpcert" certify --suite conversions --json "$OUT/conversions_suite.json" --junit "$OUT/conversions_suite.xml" 2>&1 | tail -8
}
SPLIT=gemm_3xtf32_mma_sm80,gemm_3xtf32rz_mma_sm80,gemm_1xbf16_mma_sm80,gemm_3xbf16_mma_sm80,gemm_6xbf16_mma_sm80,gemm_9xbf16_mma_sm80,gemm_3xtf32_wgmma_sm90,gemm_3xtf32rz_wgmma_sm90,gemm_1xbf16_wgmma_sm90,gemm_3xbf16_wgmma_sm90,gemm_6xbf16_wgmma_sm90,gemm_9xbf16_wgmma_sm90
B16=gemm_bf16_on_f16_cast_mma_sm80,gemm_bf16_on_f16_tensor_mma_sm80,gemm_bf16_on_f16_rowcol_mma_sm80,gemm_bf16_on_f16_kblock64_mma_sm80,gemm_bf16_on_f16_kblock128_mma_sm80,gemm_bf16_on_f16_outlier_mma_sm80,gemm_bf16_on_f16_auto_mma_sm80
section_emulation() {
  run timeout 300 "$BIN/bench_gpu_emulation" 2>&1 | tee "$OUT/bench_gpu_emulation.log"
  run timeout 200 "$BIN/fpcert" experiment split-scalar --device cuda --json "$OUT/split_scalar.json" 2>&1 | tee "$OUT/split_scalar.txt"
  run timeout 300 "$BIN/fpcert" experiment bf16-on-fp16 --device cuda --json "$OUT/bf16_on_fp16.json" 2>&1 | tee "$OUT/bf16_on_fp16.txt"
  run timeout 400 "$BIN/fpcert" run-suite split-emulation --kernels "$SPLIT,cublas_gemm_f32_pedantic" --json "$OUT/split_emulation.json" --html "$OUT/split_emulation.html" 2>&1 | tail -80
}
# The presets (docs/experiments.md): published tables by their source's method, on the tensor-core kernels.
# Four parts, each under the device tool's 10 minutes: experiments (split-scalar, course, accumulation),
# panorama-a, panorama-b, panorama-c (run-suite accuracy-vs-k, exponent-range, cancellation --preset panorama).
# Each writes JSON and HTML; `fpcert report <all the JSON> -o experiments.html` joins them anywhere.
PANO=gemm_f32_tiled,gemm_tf32_f32acc_mma_sm80,gemm_f16_f32acc_mma_sm80,gemm_bf16_f32acc_mma_sm80,cublas_gemm_f32_pedantic,cublas_gemm_f16_f16acc
section_experiments() {
  run timeout 100 "$BIN/fpcert" experiment split-scalar --preset panorama --json "$OUT/split_scalar_panorama.json" 2>&1 | tee "$OUT/split_scalar_panorama.txt"
  run timeout 200 "$BIN/fpcert" experiment three-pipeline --preset course --device cuda --json "$OUT/three_pipeline_course.json" 2>&1 | tee "$OUT/three_pipeline_course.txt"
  run timeout 270 "$BIN/fpcert" experiment accumulation --preset tf32-article --device cuda --json "$OUT/accumulation_tf32.json" 2>&1 | tee "$OUT/accumulation_tf32.txt"
  "$BIN/fpcert" report "$OUT"/split_scalar_panorama.json "$OUT"/three_pipeline_course.json "$OUT"/accumulation_tf32.json -o "$OUT/experiments.html"
}
section_panorama() {  # $1: the suite
  run timeout 560 "$BIN/fpcert" run-suite "$1" --preset panorama --kernels "$PANO" --json "$OUT/$1_panorama.json" --html "$OUT/$1_panorama.html" > "$OUT/$1_panorama.txt" 2>&1
  head -12 "$OUT/$1_panorama.txt"; sed -n '/^Normwise errors/,$p' "$OUT/$1_panorama.txt" | head -150
}
# The plugin ABI's GPU tests from copied binaries: the plugins and the staged install travel in BIN/plugins and BIN/stage.
section_plugin() {
  export FPCERT_BIN="$BIN/fpcert" FPCERT_TEST_PLUGIN_DIR="$BIN/plugins" FPCERT_STAGE_DIR="$BIN/stage" FPCERT_TEST_SCRATCH="$OUT/plugin_scratch"
  mkdir -p "$FPCERT_TEST_SCRATCH"
  run timeout 300 "$BIN/test_plugin_gpu" --duration=true 2>&1 | tee "$OUT/test_plugin_gpu.log" | tail -40
}
# Softmax and LayerNorm kernels of a CUDA plugin in device memory (ABI minor 6; tests/plugin/rows_plugin_gpu_test.cpp):
# the GPU test alone, then the certificates and the mutation scores as a user sees them.
section_plugin_rows() {
  export FPCERT_BIN="$BIN/fpcert" FPCERT_TEST_PLUGIN_DIR="$BIN/plugins" FPCERT_TEST_SCRATCH="$OUT/plugin_rows_scratch"
  mkdir -p "$FPCERT_TEST_SCRATCH"
  run timeout 300 "$BIN/test_plugin_gpu" --source-file='*rows_plugin_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/test_plugin_rows_gpu.log" | tail -30
  run timeout 200 "$BIN/fpcert" certify --plugin "$BIN/plugins/librows_cuda.so" --kernel rows_softmax_f32_cuda,rows_layernorm_f32_cuda \
    --suite certify --json "$OUT/plugin_rows.json" > "$OUT/plugin_rows.txt" 2>&1; echo "rc=$?" >> "$OUT/plugin_rows.txt"
  tail -12 "$OUT/plugin_rows.txt"
}
# abi41: attention forward and backward of a CUDA plugin in device memory (ABI minor 10; tests/plugin/attention_plugin_gpu_test.cpp):
# the GPU test alone, then the certificate and the mutation score as a user sees them.
section_plugin_attention() {
  export FPCERT_BIN="$BIN/fpcert" FPCERT_TEST_PLUGIN_DIR="$BIN/plugins" FPCERT_TEST_SCRATCH="$OUT/plugin_attention_scratch"
  mkdir -p "$FPCERT_TEST_SCRATCH"
  run timeout 400 "$BIN/test_plugin_gpu" --source-file='*attention_plugin_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/test_plugin_attention_gpu.log" | tail -30
  run timeout 150 "$BIN/fpcert" certify --plugin "$BIN/plugins/libattention_cuda.so" --kernel attention_f16_online_cuda,attention_bwd_f16_cuda \
    --suite certify --json "$OUT/plugin_attention.json" > "$OUT/plugin_attention.txt" 2>&1; echo "rc=$?" >> "$OUT/plugin_attention.txt"
  tail -36 "$OUT/plugin_attention.txt"
}
# The verdict tiers on the device (docs/bound_model.md): every CUDA and cuBLAS kernel certified on the certify
# suite, the tier and the failed checks of each case summarised per kernel; the SIMT kernels again with their
# order withheld (envelope + statistical) to show the weaker tiers pass them too.
section_verdicts() {
  run timeout 550 "$BIN/fpcert" certify --kernel cuda,cublas --suite certify --json "$OUT/verdicts.json" > "$OUT/verdicts.txt" 2>&1; echo "rc=$?" >> "$OUT/verdicts.txt"
  tail -4 "$OUT/verdicts.txt"
  run timeout 300 "$BIN/fpcert" certify --kernel gemm_f32_tiled,gemm_f16_f32acc_tiled,gemm_f16_f16acc_tiled --suite certify --tier envelope+statistical --json "$OUT/verdicts_withheld.json" > "$OUT/verdicts_withheld.txt" 2>&1; echo "rc=$?" >> "$OUT/verdicts_withheld.txt"
  tail -4 "$OUT/verdicts_withheld.txt"
  for f in verdicts verdicts_withheld; do
    python3 - "$OUT/$f.json" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
per = collections.OrderedDict()
for c in r["cases"]:
    k = per.setdefault(c["kernel"], collections.Counter())
    k[(c["status"], c.get("tier", "?"))] += 1
    for x in c.get("checks", []):
        if x["decisive"] and not x["passed"]:
            print(f'  {c["kernel"]:<40} {c["case"]:<20} {x["kind"]:<14} {x["detail"][:120]}')
for k, n in per.items():
    print(f'{k:<44} ' + ", ".join(f"{s}/{t}: {v}" for (s, t), v in sorted(n.items())))
PY
  done
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
# The conversion half of the proof alone (the GEMM half runs on the CPU models, where it is cheap):
# `convert --all --device cuda` with BEFORE_BIN's fpcert and BIN's, compared by compare_results.py.
section_proof_conv() {
  local bb=${BEFORE_BIN:-$BIN/before} rc=0
  for side in before after; do
    local bin=$BIN/fpcert; [ $side = before ] && bin=$bb/fpcert
    [ -x "$bin" ] || { echo "proof_conv: no $bin"; return; }
    mkdir -p "$OUT/proof_$side"
    echo "=== $bin convert --all --device cuda ($(date +%T))"
    "$bin" convert --all --device cuda --json "$OUT/proof_$side/conversions.json" > "$OUT/proof_$side/conversions.txt" 2>&1
    echo "rc=$?" >> "$OUT/proof_$side/conversions.txt"; tail -3 "$OUT/proof_$side/conversions.txt"
  done
  for f in conversions.json conversions.txt; do
    python3 "$(dirname "$0")/compare_results.py" "$OUT/proof_before/$f" "$OUT/proof_after/$f" || rc=1
  done
  echo "=== proof_conv: $([ $rc = 0 ] && echo SAME || echo DIFFERENT)"
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
# Coverage (docs/suites.md, "Coverage classes"): the CUDA bugs of tests/plugin/fixtures/buggy_cuda_plugin.cu
# against their classes (the GPU test), each of them and the correct kernel through the whole certify
# suite with its time, and one built-in kernel's certify time (under 60 s is the target).
section_coverage() {
  export FPCERT_BIN="$BIN/fpcert" FPCERT_TEST_PLUGIN_DIR="$BIN/plugins" FPCERT_TEST_SCRATCH="$OUT/coverage_scratch"
  mkdir -p "$FPCERT_TEST_SCRATCH"
  run timeout 600 "$BIN/test_plugin_gpu" --source-file='*coverage_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/coverage_gpu_test.log" | tail -30
  for k in ok_tiled16_cuda bug_ktail_cuda bug_ignores_ld_cuda bug_racy_cuda; do
    run timeout 300 "$BIN/fpcert" certify --plugin "$BIN/plugins/libbuggy_cuda.so" --kernel "$k" --suite certify \
      --json "$OUT/coverage_$k.json" > "$OUT/coverage_$k.txt" 2>&1; echo "rc=$?"; tail -28 "$OUT/coverage_$k.txt"
  done
  for k in gemm_f16_f32acc_mma_sm80 gemm_f32_tiled cublas_gemm_f32_pedantic; do
    run timeout 300 "$BIN/fpcert" certify --kernel "$k" --suite certify --json "$OUT/coverage_$k.json" 2>&1 | tail -50
  done
}
# cuBLAS is dlopened on first use (kernels/gemm/cublas/cublas_loader.cuh): formats starts under a low
# address-space limit; the cuBLAS kernels load it from LD_LIBRARY_PATH, and without it from the
# CUDA install; the environment stamp names its version (not "not loaded: ...").
section_hardening() {
  run bash -c "ulimit -v 200000; '$BIN/fpcert' formats | tail -2; echo rc=\$?"
  run "$BIN/fpcert" certify --kernel cublas_gemm_f32_pedantic,cublas_gemm_f16_f32acc --suite quick --json "$OUT/hardening_cublas.json" | tail -4
  python3 -c "import json,sys; print('cublas stamp:', json.load(open(sys.argv[1]))['environment']['cublas'])" "$OUT/hardening_cublas.json"
  run env -u LD_LIBRARY_PATH "$BIN/fpcert" certify --kernel cublas_gemm_f32_pedantic --suite quick --mn 64 | tail -2
}
# The mutation score (docs/mutation.md) on the certify suite: fault injectors wrapped around each CUDA kernel, all
# device memory through the DeviceApi. certify of one kernel, its score included, is timed (the budget: 60 s).
# Each part fits one device command (10 minutes): mutation (the GPU test, the timing, the SIMT and mma.sync kernels),
# mutation-cublas (the baselines: unknown order, goal >= 95 %), mutation-emu (split products and BF16 on FP16).
mutate_group() {  # mutate_group NAME REGEX: every kernel whose name matches, one JSON and text per group
  local ks
  ks=$("$BIN/fpcert" kernels | awk '/^(gemm|cublas)_/{print $1}' | grep -E "$2" | paste -sd, -)
  run timeout 560 "$BIN/fpcert" mutate --kernel "$ks" --suite certify --json "$OUT/mutation_$1.json" --html "$OUT/mutation_$1.html" \
    > "$OUT/mutation_$1.txt" 2>&1
  grep -E "^(mutation score|  by class|  survived|  killed by another|kernel |gemm_|cublas_)" "$OUT/mutation_$1.txt" | tail -80
}
section_mutation() {
  run "$BIN/test_suites_gpu" --source-file='*fault_injectors_gpu_test.cpp' 2>&1 | tee "$OUT/fault_injectors_gpu.log" | tail -15
  run "$BIN/fpcert" certify --kernel gemm_f16_f32acc_mma_sm80 --suite certify --json "$OUT/certify_mma_f16.json" > "$OUT/certify_mma_f16.txt" 2>&1
  grep -E "^(CERTIFIED|FAILED|mutation score|  by class|  survived|    )" "$OUT/certify_mma_f16.txt"
  mutate_group simt_mma '^gemm_(f32_tiled|f16_f32acc_tiled|f16_f16acc_tiled|[a-z0-9]+_f32acc_mma_sm[0-9]+(_promote[0-9]+)?)$'
}
section_mutation_cublas() { mutate_group cublas '^cublas_'; }
# Special values (docs/suites.md, "values.special"): every CUDA and cuBLAS kernel on its special_<storage> case
# (Inf, NaN, largest finite, Inf * 0, Inf - Inf, partial sums overflowing fp32/fp16 with a finite exact sum):
# passes, or "not supported" for the finite-only kernels (split products, block-scaled, BF16 on FP16); and the
# two faults it was written for (nan_to_zero, inf_to_max) killed by special_values, or not applicable.
section_specials() {
  local ks
  ks=$("$BIN/fpcert" kernels | awk '/^(gemm|cublas)_/{print $1}' | paste -sd, -)
  run timeout 560 "$BIN/fpcert" mutate --kernel "$ks" --suite certify --fault nan_to_zero,inf_to_max --json "$OUT/specials.json" \
    > "$OUT/specials.txt" 2>&1; echo "rc=$?" >> "$OUT/specials.txt"
  grep -E "^(mutation score|  survived|  killed by another|kernel |gemm_|cublas_|rc=)" "$OUT/specials.txt" | tail -80
  for k in gemm_f32_tiled gemm_f16_f16acc_tiled; do
    run "$BIN/fpcert" certify --kernel "$k" --suite certify --no-mutation --json "$OUT/specials_$k.json" > "$OUT/specials_$k.txt" 2>&1
    grep -E "special_|^(CERTIFIED|FAILED)" "$OUT/specials_$k.txt"
  done
}
section_mutation_emu() { mutate_group emu '^gemm_([0-9]+x(tf32|tf32rz|bf16)|bf16_on_f16_[a-z0-9]+)_mma_sm[0-9]+$'; }
# Block-scaled formats (docs/block_formats.md): the CUDA quantizer exact against the model, the blocksum GEMMs bit
# for bit against their CPU models, every block-scaled CUDA kernel through the block-scaled suite, and the
# quantizer's throughput against a device-to-device copy.
BLK=gemm_mxfp8_e4m3_floor_deqbf16_f32acc_mma_sm80,gemm_mxfp8_e4m3_rceil_deqbf16_f32acc_mma_sm80,gemm_mxfp8_e5m2_floor_deqbf16_f32acc_mma_sm80,gemm_mxfp6_e2m3_floor_deqbf16_f32acc_mma_sm80,gemm_mxfp6_e3m2_floor_deqbf16_f32acc_mma_sm80,gemm_mxfp4_floor_deqbf16_f32acc_mma_sm80,gemm_mxint8_floor_deqbf16_f32acc_mma_sm80,gemm_nvfp4_even_deqbf16_f32acc_mma_sm80,gemm_mxfp6_e2m3_floor_blocksum_f32acc_mma_sm80,gemm_mxfp6_e3m2_floor_blocksum_f32acc_mma_sm80,gemm_mxfp4_floor_blocksum_f32acc_mma_sm80,gemm_mxint8_floor_blocksum_f32acc_mma_sm80,gemm_nvfp4_even_blocksum_f32acc_mma_sm80
section_blocks() {
  run timeout 600 "$BIN/test_kernels_gpu" --source-file='*block_scaled_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/test_gpu_blocks.log" | grep -vE "^\s*$" | tail -80
  run timeout 300 "$BIN/bench_block_quant" --no-check 2>&1 | tee "$OUT/bench_block_quant.log"
  run timeout 400 "$BIN/fpcert" run-suite block-scaled --kernels "$BLK" --json "$OUT/block_scaled.json" --html "$OUT/block_scaled.html" 2>&1 | tail -80
  # The exact-block-sum CUDA kernels declare blocked:inner=exact (NVFP4 with final_scale=tensor): every certify
  # case at the bitwise tier (tier counts per kernel; any failed check printed).
  BSUM=$("$BIN/fpcert" kernels | grep -oE "^gemm_[a-z0-9_]+_blocksum_f32acc_mma_sm80" | paste -sd,)
  run timeout 500 "$BIN/fpcert" certify --kernel "$BSUM" --suite certify --no-mutation --json "$OUT/blocksum_certify.json" > "$OUT/blocksum_certify.txt" 2>&1; echo "rc=$?" >> "$OUT/blocksum_certify.txt"
  tail -4 "$OUT/blocksum_certify.txt"
  python3 - "$OUT/blocksum_certify.json" <<'PY'
import json, sys, collections
per = collections.defaultdict(collections.Counter)
for c in json.load(open(sys.argv[1]))["cases"]:
    per[c["kernel"]][(c["status"], c.get("tier", "?"))] += 1
    for x in c.get("checks", []):
        if x["decisive"] and not x["passed"]:
            print(f'  {c["kernel"]:<44} {c["case"]:<20} {x["kind"]:<10} {x["detail"][:120]}')
for k, n in per.items():
    print(f'{k:<48} ' + ", ".join(f"{s}/{t}: {v}" for (s, t), v in sorted(n.items())))
PY
}
# Order revelation (docs/reveal.md): the time to reveal cuBLAS's trees at K = 2048, 16384, 65536 for four
# compute types (after the device tests of the revelation: test_suites_gpu), then the CLI on the focus element with its trees printed and drawn (JSON + HTML in $OUT/reveal).
# CARD=FILE (a tc_cards.json from part probe) makes fused nodes use the measured cards instead of the published models.
section_reveal() {
  mkdir -p "$OUT/reveal"
  [ -x "$BIN/test_suites_gpu" ] && run timeout 300 "$BIN/test_suites_gpu" --duration=true 2>&1 | tee "$OUT/reveal/test_suites_gpu.log" | tail -40
  run timeout 570 "$BIN/bench_gpu_reveal" --part time --out "$OUT/reveal" --budget-s 500 ${CARD:+--card "$CARD"} 2>&1 | tee "$OUT/reveal/bench_time.txt"
  for kc in cublas_gemm_f32_pedantic:2048 cublas_gemm_f16_f32acc:4096; do
    run timeout 120 "$BIN/fpcert" reveal --kernel "${kc%%:*}" --m 256 --n 256 --k "${kc##*:}" --i 200 --j 7 --replay --replay-samples 65536 --quiet \
      ${CARD:+--card "$CARD"} --json "$OUT/reveal/cli_${kc%%:*}.json" --html "$OUT/reveal/cli_${kc%%:*}.html" 2>&1 | tee "$OUT/reveal/cli_${kc%%:*}.txt" | tail -n 80
  done
  # certify with the revealed order (docs/reveal.md, "Certifying with a revealed order"): every quick case in the bitwise
  # tier with cuBLAS's tree at its shape ("bitwise (revealed order)" per row, the order lines after them), or a stated fall-back.
  run timeout 300 "$BIN/fpcert" certify --kernel cublas_gemm_f32_pedantic --suite quick --order revealed --no-mutation ${CARD:+--card "$CARD"} \
    --json "$OUT/reveal/certify_revealed.json" --html "$OUT/reveal/certify_revealed.html" 2>&1 | tee "$OUT/reveal/certify_revealed.txt" | tail -40
}
# The replay: each compute type revealed at 3 shapes of >= 2^20 elements and emulated bit for bit (every element).
section_reveal_replay() {
  mkdir -p "$OUT/reveal"
  run timeout 590 "$BIN/bench_gpu_reveal" --part replay --out "$OUT/reveal" --budget-s 520 ${CARD:+--card "$CARD"} 2>&1 | tee "$OUT/reveal/bench_replay.txt"
}
# Tensor-core card stage B (docs/tensor_cores.md, "Certifying tensor-core kernels"): the mma.sync GEMMs bit for bit
# through this GPU's cards, cuBLAS's envelope with the measured bits, the FP8 accumulation experiment.
summarise_verdicts() {
  python3 - "$1" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
per = collections.OrderedDict()
for c in r["cases"]:
    k = per.setdefault(c["kernel"], collections.Counter())
    k[(c["status"], c.get("tier", "?"))] += 1
    for x in c.get("checks", []):
        if x["decisive"] and not x["passed"]:
            print(f'  {c["kernel"]:<40} {c["case"]:<20} {x["kind"]:<14} {x["detail"][:120]}')
for k, n in per.items():
    print(f'{k:<44} ' + ", ".join(f"{s}/{t}: {v}" for (s, t), v in sorted(n.items())))
PY
}
MMA=gemm_f16_f32acc_mma_sm80,gemm_bf16_f32acc_mma_sm80,gemm_tf32_f32acc_mma_sm80,gemm_e4m3_f32acc_mma_sm89,gemm_e5m2_f32acc_mma_sm89,gemm_e4m3_f32acc_mma_sm89_promote128,gemm_e5m2_f32acc_mma_sm89_promote128
section_tcb() {
  run timeout 300 "$BIN/fpcert" probe tensor-cores --samples 1000000 --json "$OUT/tcb_cards.json" --quiet 2>&1 | tail -30
  run timeout 550 "$BIN/fpcert" certify --kernel "$MMA" --suite certify --json "$OUT/tcb_mma.json" > "$OUT/tcb_mma.txt" 2>&1; echo "rc=$?" >> "$OUT/tcb_mma.txt"
  grep -E "^tensor-core card" "$OUT/tcb_mma.txt"; tail -4 "$OUT/tcb_mma.txt"
  summarise_verdicts "$OUT/tcb_mma.json"
  run timeout 400 "$BIN/fpcert" certify --kernel cublas --suite certify --card "$OUT/tcb_cards.json" --json "$OUT/tcb_cublas.json" > "$OUT/tcb_cublas.txt" 2>&1; echo "rc=$?" >> "$OUT/tcb_cublas.txt"
  grep -E "^tensor-core card" "$OUT/tcb_cublas.txt"; tail -4 "$OUT/tcb_cublas.txt"
  summarise_verdicts "$OUT/tcb_cublas.json"
  run timeout 300 "$BIN/fpcert" experiment fp8-accumulation --card "$OUT/tcb_cards.json" --json "$OUT/fp8_accumulation.json" 2>&1 | tee "$OUT/fp8_accumulation.txt"
}
# Hopper's FP8 mma.sync (docs/tensor_cores.md, "FP8 mma.sync on Hopper"): the four instructions probed and
# validated on 10^7 samples with the refitted structure (two f16 blocks dealt in runs of 2, C added last;
# VALIDATED expected), recorded for tests/data/tc (the probe now asks its 128 random dots itself), the
# probe's GPU test, then the four FP8 mma.sync GEMMs certified with their cards (bitwise tier expected).
section_fp8mma() {
  local ids=mma_e4m3_f32,mma_e4m3_f16,mma_e5m2_f32,mma_e5m2_f16
  run timeout 300 "$BIN/fpcert" probe tensor-cores --instruction "$ids" --samples 10000000 --json "$OUT/fp8mma_cards.json" \
    --html "$OUT/fp8mma_cards.html" --record "$OUT/fp8mma_rec" --record-tiles 50 --quiet 2>&1 | tee "$OUT/fp8mma_probe.txt" | tail -40
  run timeout 300 "$BIN/fpcert" probe tensor-cores --instruction "$ids" --replay "$OUT/fp8mma_rec" --quiet 2>&1 | tail -10
  run timeout 600 "$BIN/test_kernels_gpu" --source-file='*tc_probe_gpu_test.cpp' 2>&1 | tee "$OUT/fp8mma_gpu_probe.log" | tail -40
  run timeout 550 "$BIN/fpcert" certify --kernel gemm_e4m3_f32acc_mma_sm89,gemm_e5m2_f32acc_mma_sm89,gemm_e4m3_f32acc_mma_sm89_promote128,gemm_e5m2_f32acc_mma_sm89_promote128 \
    --suite certify --json "$OUT/fp8mma_certify.json" > "$OUT/fp8mma_certify.txt" 2>&1; echo "rc=$?" >> "$OUT/fp8mma_certify.txt"
  grep -E "^tensor-core card" "$OUT/fp8mma_certify.txt"; tail -6 "$OUT/fp8mma_certify.txt"
  summarise_verdicts "$OUT/fp8mma_certify.json"
  run timeout 300 "$BIN/fpcert" experiment fp8-accumulation --card "$OUT/fp8mma_cards.json" --json "$OUT/fp8mma_accumulation.json" 2>&1 | tee "$OUT/fp8mma_accumulation.txt"
}
# The Python entry (docs/python.md) on the device's python3 with torch: the package scripts/devpy.sh
# staged for that interpreter (carry devpy; PYDIR overrides), its CPU tests, the torch.matmul
# certification at pinned precisions with the pytest plugin's report, and the tolerance table.
# The report's views on the device (docs/report.md): an mma.sync kernel certified twice, the second run compared
# with the first (certify --compare: nothing may flip; timings of 10 runs are compared) and keeping every error
# map (--error-maps); the JSON cases carry the kernel's 128 x 128 tile; the HTML opens with the kernel x suite matrix.
section_report() {
  local k=gemm_f16_f32acc_mma_sm80
  run "$BIN/fpcert" certify --kernel $k --suite certify --no-mutation --json "$OUT/report_old.json" > "$OUT/report_old.txt" 2>&1; echo "rc=$?" >> "$OUT/report_old.txt"
  run "$BIN/fpcert" certify --kernel $k --suite certify --no-mutation --error-maps --compare "$OUT/report_old.json" \
    --json "$OUT/report_new.json" --html "$OUT/report_compare.html" > "$OUT/report_new.txt" 2>&1; echo "rc=$?" >> "$OUT/report_new.txt"
  grep -E "^compared with|rc=" "$OUT/report_new.txt"
  python3 - "$OUT/report_new.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tiles = {(c.get("tile") or {}).get("m") for c in r["cases"]}
maps = sum("error_map" in c for c in r["cases"])
print(f'tiles declared: {tiles}; error maps: {maps} of {len(r["cases"])} cases; max err/allowed: '
      f'{max(float(c["metrics"]["err_frac_max"]) for c in r["cases"] if c["status"] in ("pass", "fail")):.3g}')
PY
}
section_python() {
  # Absolute: tests start pytest in a subprocess whose cwd is a scratch folder (test_pytest_plugin_writes_one_report
  # failed on the H200 with a relative devpy on PYTHONPATH: fpcert did not import there).
  local PY
  PY=$(cd "${PYDIR:-devpy}" && pwd)
  python3 -c 'import sys, numpy, torch; print("python", sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available())'
  export PYTHONPATH="$PY${PYTHONPATH:+:$PYTHONPATH}" FPCERT_BIN="$PY/fpcert-cli" FPCERT_TEST_OUT="$OUT/python" PYTHONDONTWRITEBYTECODE=1
  export LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}"
  python3 -c 'import pytest' 2>/dev/null || export PYTHONPATH="$PYTHONPATH:$PY/site"
  mkdir -p "$OUT/python"
  python3 -c 'import fpcert; print("fpcert from", fpcert.__file__)' || { echo "fpcert does not import: run scripts/devpy.sh here and carry devpy"; return 1; }
  run timeout 300 python3 -m pytest -q -p no:cacheprovider -p fpcert.pytest_plugin tests/python/test_fpcert.py 2>&1 | tail -15
  run timeout 500 python3 tests/python/gpu_main.py -p no:cacheprovider --fpcert-report="$OUT/python/torch_report.html" 2>&1 | tee "$OUT/python/torch_gpu.log" | tail -80
  run python3 scripts/tolerance_table.py --torch 2>&1 | tee "$OUT/python/tolerance_table.md"
}
# Issue 46's H200 measure (docs/audit.md): torch.matmul in bf16 audited at rtol = atol = 1e-2 through fpcert.audit (the
# Python entry of scripts/devpy.sh, as part python), its power table and the mutants the rule passes.
section_audit() {
  local PY=${PYDIR:-devpy}
  export PYTHONPATH="$PY${PYTHONPATH:+:$PYTHONPATH}" FPCERT_BIN="$PY/fpcert-cli" PYTHONDONTWRITEBYTECODE=1
  export LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}"
  mkdir -p "$OUT/audit"
  python3 -c 'import fpcert; fpcert.audit' || { echo "fpcert.audit does not import: run scripts/devpy.sh here and carry devpy"; return 1; }
  run timeout 540 python3 scripts/audit_torch.py "$OUT/audit" 2>&1 | tee "$OUT/audit/audit_torch.txt"
  # fpcert.audit on torch bf16/f16 tensors as a test holds them, CPU and CUDA (tests/python/test_torch_audit_gpu.py)
  python3 -c 'import pytest' 2>/dev/null || export PYTHONPATH="$PYTHONPATH:$PY/site"
  run timeout 120 python3 -m pytest -q -rA -p no:cacheprovider tests/python/test_torch_audit_gpu.py 2>&1 | tee "$OUT/audit/torch_audit_tensors.log" | tail -20
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
  python3 "$(dirname "$0")/compare_results.py" "$one.json" "$all.json" | tee -a "$OUT/scale_summary.txt" | tail -n 30
  diff <(grep '^rc=' "$one.txt") <(grep '^rc=' "$all.txt") > /dev/null && echo "scale $name: same exit code ($(grep '^rc=' "$one.txt"))" | tee -a "$OUT/scale_summary.txt"
}
# The verdict tiers' cost against the exact reference of the same case (bench/verdict.cpp; docs/bound_model.md,
# "Cost"): on this host's quiet cores, every thread and one, twice each (ratios: emulation <= 2x is the goal).
section_verdict_cost() {
  for th in 0 1; do
    for r in 1 2; do
      if [ "$th" = 0 ]; then run "$BIN/bench_verdict"; else run env FPCERT_THREADS=$th "$BIN/bench_verdict"; fi 2>&1 | tee -a "$OUT/bench_verdict_t$th.log"
    done
  done
}
# Wave 3, issues 35 and 38: the CUDA reduction built-ins (CUB included) on the reduce suite; the poisoned padding's
# false-alarm check over every CUDA kernel and cuBLAS; the edges fixtures; the scale suite on one kernel with its memory.
section_wave3() {
  export FPCERT_BIN="$BIN/fpcert" FPCERT_TEST_PLUGIN_DIR="$BIN/plugins" FPCERT_STAGE_DIR="$BIN/stage" FPCERT_TEST_SCRATCH="$OUT/plugin_scratch"
  mkdir -p "$FPCERT_TEST_SCRATCH"
  run "$BIN/fpcert" kernels | grep -iE "^ *(reduce_|cub_)" | head -20
  # The CUDA reductions and CUB on the reduce suite, mutation included (the injectors copy through the device).
  for k in reduce_sum_f32_warp32 reduce_sum_bf16_warp32 reduce_dot_f32_warp32 reduce_sum_f32_atomic cub_segmented_sum_f32; do
    run timeout 150 "$BIN/fpcert" certify --kernel "$k" --suite reduce --json "$OUT/reduce_$k.json" > "$OUT/reduce_$k.txt" 2>&1; echo "rc=$?"
    grep -E "^(CERTIFIED|FAILED)|mutation score|survived|fail " "$OUT/reduce_$k.txt" | head -8
  done
  run timeout 120 "$BIN/test_plugin_gpu" --source-file='*edges_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/edges_gpu.log" | tail -15
  # Poisoned padding: no false alarm on any CUDA kernel or cuBLAS (quick suite: every kernel, reductions on
  # reduce_quick; then the two new misalignment cases of certify on every GEMM kernel).
  run timeout 300 "$BIN/fpcert" certify --kernel cuda,cublas --suite quick --no-mutation --json "$OUT/poison_quick.json" > "$OUT/poison_quick.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED|== )|fail |crashed|hung" "$OUT/poison_quick.txt" | head -30
  for c in misaligned_vec16 ld_odd; do
    run timeout 150 "$BIN/fpcert" certify --kernel cuda,cublas --suite certify --case "$c" --no-mutation --json "$OUT/poison_$c.json" > "$OUT/poison_$c.txt" 2>&1; echo "rc=$?"
    grep -E "^(CERTIFIED|FAILED)|fail |crashed|hung" "$OUT/poison_$c.txt" | head -20
  done
}
# GEMMs as libraries call them (issue 37, slice 1: layouts): the cuBLAS built-ins on the layout cases of certify with
# the whole certify suite on the pedantic baseline with its mutation score (transposed_ld included; time per kernel
# < 60 s), the GPU test.
section_libgemm() {
  run "$BIN/fpcert" kernels | grep -E "^cublas" | head -12
  run timeout 300 "$BIN/fpcert" certify --kernel cublas --suite certify --case 'layout_*' --no-mutation --json "$OUT/libgemm_layouts.json" > "$OUT/libgemm_layouts.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED|== )|layout_|fail |crashed|hung|not supported" "$OUT/libgemm_layouts.txt" | head -60
  run timeout 300 "$BIN/fpcert" certify --kernel cublas_gemm_f32_pedantic --suite certify --json "$OUT/libgemm_certify_pedantic.json" > "$OUT/libgemm_certify_pedantic.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED)|mutation score|survived|layout_" "$OUT/libgemm_certify_pedantic.txt" | head -20
  run timeout 300 "$BIN/test_suites_gpu" --source-file='*layout_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/libgemm_gpu_test.log" | tail -20
  # Slice 2 (alpha, beta, C): the ab_* cases on every cuBLAS built-in, the pedantic baseline's mutation score, the GPU test.
  run timeout 300 "$BIN/fpcert" certify --kernel cublas --suite certify --case 'ab_*' --no-mutation --json "$OUT/libgemm_ab.json" > "$OUT/libgemm_ab.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED|== )|ab_|fail |crashed|hung|not supported" "$OUT/libgemm_ab.txt" | head -60
  grep -E "beta0_reads_c|beta_ignored" "$OUT/libgemm_certify_pedantic.txt" | head -6
  run timeout 300 "$BIN/test_suites_gpu" --source-file='*alpha_beta_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/libgemm_ab_gpu_test.log" | tail -20
}
# Strided batched GEMM (issue 37): the batch_* cases on every cuBLAS built-in (cublasGemmStridedBatchedEx), the
# pedantic baseline's full certify run with its mutation score (batch_stride_ignored, batch_last_dropped), the GPU test.
section_libgemm_batch() {
  run timeout 300 "$BIN/fpcert" certify --kernel cublas --suite certify --case 'batch_*' --no-mutation --json "$OUT/libgemm_batch.json" > "$OUT/libgemm_batch.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED|== )|batch_|fail |crashed|hung|not supported" "$OUT/libgemm_batch.txt" | head -80
  run timeout 400 "$BIN/fpcert" certify --kernel cublas_gemm_f32_pedantic --suite certify --json "$OUT/libgemm_batch_pedantic.json" > "$OUT/libgemm_batch_pedantic.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED)|mutation score|survived|batch_stride_ignored|batch_last_dropped" "$OUT/libgemm_batch_pedantic.txt" | head -20
  run timeout 300 "$BIN/test_suites_gpu" --source-file='*batch_gemm_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/libgemm_batch_gpu_test.log" | tail -20
}
# The scale suite (issue 38) on one tensor-core kernel, memory and time stated, then the grid and index fixtures.
section_scale3() {
  export FPCERT_BIN="$BIN/fpcert"
  run timeout 400 /usr/bin/time -v "$BIN/fpcert" certify --suite scale --kernel gemm_f16_f32acc_mma_sm80 --json "$OUT/scale_mma.json" > "$OUT/scale_mma.txt" 2>&1; echo "rc=$?"
  grep -vE "^\s*$" "$OUT/scale_mma.txt" | grep -E "tall|wide|_2e31|llm|CERTIFIED|FAILED|Maximum resident|Elapsed" | head -20
  nvidia-smi --query-gpu=memory.used,memory.total --format=csv
  run timeout 180 "$BIN/fpcert" certify --suite scale --plugin "$BIN/plugins/libbuggy_cuda.so" --kernel ok_grid_cuda,bug_grid_cap_cuda,bug_int_index_cuda --no-mutation > "$OUT/scale_fixtures.txt" 2>&1; echo "rc=$?"
  grep -E "tall|wide|_2e31|CERTIFIED|FAILED" "$OUT/scale_fixtures.txt" | head -30
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
# Elementwise math (issue 42): the device sweep against the host check (GPU test), then every CUDA function on all of
# its inputs (2^32 for fp32, 65536 for f16/bf16), the table for docs/elementwise.md, and the CI suite on the same kernels.
section_eltwise() {
  run "$BIN/test_suites_gpu" --source-file='*eltwise_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/eltwise_gpu.log" | grep -E "eltwise_gpu|test cases|assertions|ERROR|CHECK|Status" | tail -n 80
  local ks
  ks=$("$BIN/fpcert" kernels --json | python3 -c 'import json,sys; print(",".join(k["name"] for k in json.load(sys.stdin) if k.get("operation") == "elementwise" and k["backend"] == "cuda"))')
  echo "eltwise kernels: $ks"
  # erf, erfc, the trigonometric functions and the activations have no device reference yet (MPFR only:
  # oracle/math/fn.hpp, has_device_ref): not swept, CI suite only. cbrt's is exact (cbrt_ref_rn): swept.
  local ks_full
  ks_full=$(echo "$ks" | tr , '\n' | grep -vE '^cuda_(erff|erfcf|sigmoid_expf_fast|silu_expf_fast|softplus|gelu_erff|gelu_tanhf|sinf|cosf|tanf|sinpif|cospif|__sinf|__cosf)$' | paste -sd, -)
  # math42: the binary functions and the -use_fast_math twins have their own parts (eltwise-binary, eltwise-fastmath).
  ks_full=$(echo "$ks_full" | tr , '\n' | grep -vE '^cuda_(fastmath_.*|div_f32|fdividef|__fdividef|__fdiv_rn|powf|atan2f|fmaxf|fminf)$' | paste -sd, -)
  eltwise_runs eltwise "$ks_full" "$ks"
}
# fp64 (docs/fp64.md): the FP64 GPU subjects' tests (the DMMA probe prints how one instruction combines its products),
# then cuBLAS DGEMM, cuBLAS's fixed-point emulation and the DMMA kernel certified on the certify suite with mutation.
section_fp64() {
  run "$BIN/test_kernels_gpu" --source-file='*f64_gpu_test.cpp' --duration=true -s 2>&1 | tee "$OUT/f64_gpu.log" | grep -E "DMMA probe|cublas_gemm_f64|gemm_f64_dmma|test cases|assertions|ERROR|CHECK" | tail -n 40
  for k in cublas_gemm_f64 cublas_gemm_f64_emulated_fixedpoint gemm_f64_dmma_sm80; do
    run timeout 280 "$BIN/fpcert" certify --kernel "$k" --suite certify --json "$OUT/fp64_$k.json" > "$OUT/fp64_$k.txt" 2>&1; echo "rc=$?"
    grep -E "^(CERTIFIED|FAILED)|fail |crashed|hung|mutation score|survived|correct bits" "$OUT/fp64_$k.txt" | head -25
  done
}
# Softmax (issue 40): the GPU test (CUDA built-ins against the host reference, their mutants killed), then every CUDA
# softmax kernel certified on the softmax suite with its mutation score.
section_softmax() {
  run timeout 300 "$BIN/test_suites_gpu" --source-file='*softmax_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/softmax_gpu.log" | grep -vE "^\s*$" | tail -60
  local ks
  ks=$("$BIN/fpcert" kernels --json | python3 -c 'import json,sys; print(" ".join(k["name"] for k in json.load(sys.stdin) if k.get("operation") == "softmax" and k["backend"] == "cuda"))')
  for k in $ks; do
    run timeout 120 "$BIN/fpcert" certify --kernel "$k" --suite softmax --json "$OUT/softmax_$k.json" > "$OUT/softmax_$k.txt" 2>&1; echo "rc=$?"
    grep -E "^(CERTIFIED|FAILED)|mutation score|survived|fail |crashed|hung" "$OUT/softmax_$k.txt" | head -10
    grep -cE " bitwise$" "$OUT/softmax_$k.txt" | sed "s/^/$k: cases decided at the bitwise tier: /"
  done
  # expf_ops (the exp the warp_ops kernels declare exactly) over every binary32 input on the host's cores.
  run "$BIN/bench_expf_ops" 2>&1 | tee "$OUT/bench_expf_ops.log"
}
# Softmax / log-softmax backward (issue 45; docs/backward.md): the GPU test (CUDA built-ins against the host reference,
# their mutants killed), every CUDA softmax backward kernel certified on softmax_backward with its mutation score, then
# PyTorch's own backward kernels (aten._softmax_backward_data, _log_softmax_backward_data) through fpcert.certify_softmax_backward
# where devpy (scripts/devpy.sh) imports.
section_softmax_backward() {
  run timeout 240 "$BIN/test_suites_gpu" --source-file='*softmax_bwd_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/softmax_bwd_gpu.log" | grep -vE "^\s*$" | tail -60
  for k in softmax_bwd_f32_cuda softmax_bwd_f16_cuda softmax_bwd_bf16_cuda log_softmax_bwd_f16_cuda log_softmax_bwd_bf16_cuda; do
    run timeout 120 "$BIN/fpcert" certify --kernel "$k" --suite softmax_backward --json "$OUT/softmax_bwd_$k.json" > "$OUT/softmax_bwd_$k.txt" 2>&1; echo "rc=$?"
    grep -E "^(CERTIFIED|FAILED)|mutation score|survived|fail |crashed|hung" "$OUT/softmax_bwd_$k.txt" | head -10
  done
  local PY=${PYDIR:-devpy}
  if PYTHONPATH="$PY" LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}" python3 -c 'import torch, fpcert; fpcert.certify_softmax_backward' 2>/dev/null; then
    run timeout 200 env PYTHONPATH="$PY" PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}" \
      python3 -m pytest -q -s tests/python/test_torch_softmax_bwd_gpu.py 2>&1 | tee "$OUT/softmax_bwd_torch.log" | tail -40
  else
    echo "torch or fpcert.certify_softmax_backward does not import: run scripts/devpy.sh here and carry devpy (the torch subjects skipped)"
  fi
}
# LayerNorm / RMSNorm (issue 40): the GPU test (CUDA built-ins against the host reference, their mutants killed), then
# every CUDA norm kernel certified on the norm suite with its mutation score.
section_norm() {
  run timeout 300 "$BIN/test_suites_gpu" --source-file='*norm_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/norm_gpu.log" | grep -vE "^\s*$" | tail -60
  for k in layernorm_f32_warp_cuda layernorm_f16_warp_cuda layernorm_bf16_warp_cuda layernorm_f32_welford_cuda layernorm_f16_welford_cuda layernorm_bf16_welford_cuda rmsnorm_f32_warp_cuda rmsnorm_f16_warp_cuda rmsnorm_bf16_warp_cuda; do
    run timeout 120 "$BIN/fpcert" certify --kernel "$k" --suite norm --json "$OUT/norm_$k.json" > "$OUT/norm_$k.txt" 2>&1; echo "rc=$?"
    grep -E "^(CERTIFIED|FAILED)|mutation score|survived|fail |crashed|hung" "$OUT/norm_$k.txt" | head -10
  done
}
# LayerNorm / RMSNorm backward (issue 45, docs/backward.md "LayerNorm and RMSNorm backward"): the GPU test (every CUDA
# built-in passes norm_backward, the atomic kernels' run-to-run spread of dgamma/dbeta, mutation 100 %), then each
# built-in certified on norm_backward.
section_norm_backward() {
  run timeout 400 "$BIN/test_suites_gpu" --source-file='*norm_bwd_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/norm_bwd_gpu.log" | grep -vE "^\s*$" | tail -80
  for k in layernorm_bwd_f16_cuda layernorm_bwd_bf16_cuda layernorm_bwd_f16_det_cuda layernorm_bwd_bf16_det_cuda rmsnorm_bwd_bf16_cuda; do
    run timeout 60 "$BIN/fpcert" certify --kernel "$k" --suite norm_backward --json "$OUT/norm_bwd_$k.json" > "$OUT/norm_bwd_$k.txt" 2>&1; echo "rc=$?"
    grep -E "^(CERTIFIED|FAILED)|mutation score|survived|fail |crashed|hung|spread" "$OUT/norm_bwd_$k.txt" | head -10
  done
  # The torch subjects (native_layer_norm_backward; _fused_rms_norm_backward or rms_norm autograd) through the Python
  # entry of scripts/devpy.sh (carry devpy, as part python).
  local PY
  PY=$(cd "${PYDIR:-devpy}" 2>/dev/null && pwd) || { echo "no devpy: the torch subjects are skipped (run scripts/devpy.sh, carry devpy)"; return 0; }
  PYTHONPATH="$PY${PYTHONPATH:+:$PYTHONPATH}" LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}" PYTHONDONTWRITEBYTECODE=1 \
    run timeout 300 python3 -m pytest -q -rA -s -p no:cacheprovider tests/python/test_torch_norm_bwd_gpu.py 2>&1 | tee "$OUT/norm_bwd_torch.log" | tail -60
}
# Attention (issue 41, docs/attention.md "CUDA built-ins"), in two parts that each fit the device tool's 10 minutes.
# attention: the GPU test case by case (the long-double property check of the f16 flash and f32 naive kernels; the
# `attention` suite with evidence per CUDA attention kernel; their mutation score 100 %).
section_attention() {
  local tc limit
  for tc in "attention CUDA flash f16 and naive f32*:40" "attention CUDA built-ins: every case*:250" "attention CUDA built-ins: mutation*:290"; do
    limit=${tc##*:}
    run timeout "$limit" "$BIN/test_suites_gpu" --source-file='*attention_gpu_test.cpp' --test-case="${tc%:*}" --duration=true 2>&1 | tee -a "$OUT/attention_gpu.log" | grep -vE "^\s*$" | tail -60
  done
}
# certify_each OPERATION SUITE LIMIT DEFAULT: every CUDA kernel of OPERATION (fpcert kernels --json; DEFAULT, a list of
# names, when that cannot be read) certified on SUITE within LIMIT seconds each, its verdict lines printed.
certify_each() {
  local ks k
  ks=$("$BIN/fpcert" kernels --json | python3 -c 'import json,sys; print(" ".join(k["name"] for k in json.load(sys.stdin) if k.get("operation") == sys.argv[1] and k["backend"] == "cuda"))' "$1")
  [ -n "$ks" ] || ks="$4"
  for k in $ks; do
    run timeout "$3" "$BIN/fpcert" certify --kernel "$k" --suite "$2" --json "$OUT/$2_$k.json" > "$OUT/$2_$k.txt" 2>&1; echo "rc=$?"
    grep -E "^(CERTIFIED|FAILED)|mutation score|survived|fail |crashed|hung|not supported" "$OUT/$2_$k.txt" | head -12
  done
}
# attention-certify: every CUDA attention kernel certified on the attention suite, the flash kernels' speed beside
# cuBLAS's two GEMMs (bench_gpu_attention), and PyTorch SDPA's outputs per pinned backend when torch is there.
section_attention_certify() {
  certify_each attention attention 130 "attention_f16_flash_cuda attention_bf16_flash_cuda attention_f32_naive_cuda"
  run timeout 90 "$BIN/bench_gpu_attention" 2>&1 | tee "$OUT/bench_gpu_attention.log"
  run timeout 100 python3 "$(dirname "$0")/sdpa_certify.py" "$OUT/sdpa" 2>&1 | tail -40
}
# torch-rows (issue 47, docs/python.md "Diagnosing a kernel"; issue 41): fpcert.diagnose_softmax / diagnose_norm on torch's
# softmax and layer_norm on the device (tests/python/test_torch_diagnose_rows_gpu.py), and PyTorch's SDPA backends on the
# attention suite with its additive_mask_min case (tests/python/test_torch_attention_gpu.py).
section_torch_rows() {
  local PY
  PY=$(cd "${PYDIR:-devpy}" && pwd)  # the package as section_python finds it (scripts/devpy.sh)
  export PYTHONPATH="$PY${PYTHONPATH:+:$PYTHONPATH}" FPCERT_TEST_OUT="$OUT" PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}"
  python3 -c 'import pytest' 2>/dev/null || export PYTHONPATH="$PYTHONPATH:$PY/site"
  run timeout 240 python3 -m pytest -q -rA -s -p no:cacheprovider tests/python/test_torch_diagnose_rows_gpu.py 2>&1 | tee "$OUT/torch_diagnose_rows.log" | tail -40
  run timeout 300 python3 -m pytest -q -rA -s -p no:cacheprovider tests/python/test_torch_attention_gpu.py 2>&1 | tee "$OUT/torch_attention.log" | tail -40
}
# cudnn-probe (issues 41, 45): PyTorch's cuDNN SDPA backend, its ops' schemas, its forward and backward against float64
# autograd, and fpcert's verdicts under candidate declarations (scripts/sdpa_cudnn_probe.py).
section_cudnn_probe() {
  local PY
  PY=$(cd "${PYDIR:-devpy}" && pwd)
  export PYTHONPATH="$PY${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}"
  run timeout 400 python3 "$(dirname "$0")/sdpa_cudnn_probe.py" 2>&1 | tee "$OUT/sdpa_cudnn_probe.log" | tail -150
}
# attention-backward-torch (issue 45, docs/backward.md): PyTorch's SDPA backward per pinned backend (flash, efficient:
# the aten backward ops on the runner's O and LSE; math: autograd) certified on attention_backward in f16 and bf16, and
# the flash backward with a wrong dQ refused; the CPU models as the control.
section_attention_backward_torch() {
  local PY
  PY=$(cd "${PYDIR:-devpy}" && pwd)  # the package as section_python finds it (scripts/devpy.sh)
  export PYTHONPATH="$PY${PYTHONPATH:+:$PYTHONPATH}" FPCERT_TEST_OUT="$OUT" PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}"
  python3 -c 'import pytest' 2>/dev/null || export PYTHONPATH="$PYTHONPATH:$PY/site"
  run timeout 500 python3 -m pytest -q -rA -s -p no:cacheprovider -p fpcert.pytest_plugin tests/python/test_torch_attention_bwd_gpu.py 2>&1 |
    tee "$OUT/attention_backward_torch.log" | grep -E "sdpa backward|passed|failed|skipped|Error" | tail -80
  run timeout 90 "$BIN/fpcert" certify --kernel cpu --suite attention_backward_quick > "$OUT/attention_backward_cpu.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED)" "$OUT/attention_backward_cpu.txt" | head -10
  # The reference's cost on the 16-core host (target < 20 s for 1 x 8 x 2048 x 2048 x 128 on sampled rows), and
  # FlashAttention's 2x rule beside fpcert for every CUDA attention backward kernel (docs/backward.md's H200 table).
  run timeout 200 "$BIN/bench_attention_bwd_ref" 2>&1 | tee "$OUT/bench_attention_bwd_ref.log"
  local k
  for k in $("$BIN/fpcert" kernels --json | python3 -c 'import json,sys; print(" ".join(k["name"] for k in json.load(sys.stdin) if k.get("operation") == "attention_backward" and k["backend"] == "cuda" and not k["mutant"]))'); do
    run timeout 400 "$BIN/bench_attention_bwd_fa_rule" "$k" 2>&1 | tee "$OUT/bench_attention_bwd_fa_rule_$k.log"
  done
}
# Attention through the runner (issue 41, docs/attention.md): every CUDA attention kernel (the group `cuda` of the
# attention operation) certified on the attention suite (O and LSE per element against the exact reference, by the
# bound of its declared arithmetic), and its mutation score; the CPU models as the control (expect CERTIFIED, 100 %).
section_attention_runner() {
  run timeout 400 "$BIN/fpcert" certify --kernel cuda --suite attention --json "$OUT/attention_cuda.json" > "$OUT/attention_cuda.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED)|fail |crashed|hung|not supported" "$OUT/attention_cuda.txt" | head -40
  run timeout 200 "$BIN/fpcert" certify --kernel cpu --suite attention_quick > "$OUT/attention_cpu.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED)" "$OUT/attention_cpu.txt" | head -10
}
# Diagnosis (issue 47, docs/diagnose.md): cuBLAS fp32 with TF32 allowed judged against the pedantic fp32 declaration
# (expect operands=tf32 named, by the envelope: cuBLAS's order is unknown; the fp16 look-alike separated by the derived
# range case, fp32 by the short-K case: the "separation of" lines); a tensor-core built-in with its probed
# card (expect "declared"), then with a wrong card (align_bits of every card lowered by 2: expect card:align_bits=<the
# probed value> on top); a tensor-core kernel with an injected fault; certify --diagnose on a failing mutant.
section_diagnose() {
  run timeout 300 "$BIN/fpcert" diagnose --kernel cublas_gemm_f32_fast_tf32 --declared-as cublas_gemm_f32_pedantic --case uniform --json "$OUT/diag_cublas_tf32.json" 2>&1 | tail -25
  run timeout 300 "$BIN/fpcert" probe tensor-cores --samples 100000 --json "$OUT/diag_cards.json" --quiet 2>&1 | tail -5
  python3 - "$OUT/diag_cards.json" "$OUT/diag_cards_wrong.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def lower(x):
    if isinstance(x, dict):
        return {k: (v - 2 if k == "align_bits" and isinstance(v, int) else lower(v)) for k, v in x.items()}
    return [lower(v) for v in x] if isinstance(x, list) else x
json.dump(lower(d), open(sys.argv[2], "w"), indent=1)
PY
  for k in gemm_f16_f32acc_mma_sm80 gemm_bf16_f32acc_mma_sm80; do
    run timeout 300 "$BIN/fpcert" diagnose --kernel "$k" --case uniform --card "$OUT/diag_cards.json" --json "$OUT/diag_${k}_right.json" 2>&1 | tail -16
    run timeout 300 "$BIN/fpcert" diagnose --kernel "$k" --case uniform --card "$OUT/diag_cards_wrong.json" --json "$OUT/diag_${k}_wrong.json" 2>&1 | tail -16
  done
  run timeout 300 "$BIN/fpcert" diagnose --kernel 'gemm_f16_f32acc_mma_sm80~acc_bf16' --case uniform --card "$OUT/diag_cards.json" 2>&1 | tail -16
  run timeout 600 "$BIN/fpcert" certify --kernel 'gemm_f16_f32acc_mma_sm80~acc_rz' --suite quick --no-mutation --card "$OUT/diag_cards.json" \
    --diagnose "$OUT/diag_certify.json" > "$OUT/diag_certify.txt" 2>&1; echo "rc=$?"
  grep -E "^diagnosis of|^  [a-z_]+: " "$OUT/diag_certify.txt" | head -20
  # The Python entry on torch.matmul (scripts/diagnose_torch.py; needs scripts/devpy.sh's devpy, as part audit).
  local PY=${PYDIR:-devpy}
  if PYTHONPATH="$PY" LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}" python3 -c 'import fpcert; fpcert.diagnose' 2>/dev/null; then
    mkdir -p "$OUT/diagnose_torch"
    run timeout 540 env PYTHONPATH="$PY" FPCERT_BIN="$PY/fpcert-cli" PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}" \
      python3 scripts/diagnose_torch.py "$OUT/diagnose_torch" 2>&1 | tee "$OUT/diagnose_torch/diagnose_torch.txt" | grep -E "^#####|^EXPECT|^separation|^  [a-z_]+: |all as expected|SOME NOT"
  else
    echo "fpcert.diagnose does not import: run scripts/devpy.sh here and carry devpy (the torch diagnoses skipped)"
  fi
}
# Attention backward, CUDA kernels (issue 45, docs/backward.md "Attention backward", "CUDA kernels"). Two parts that each
# fit the device tool's 10 minutes; attention-backward runs both. attention-backward-certify: every CUDA attention
# backward kernel certified on the attention_backward suite (mutation score included), then bench_gpu_attention_bwd
# (1 x 8 x 4096 x 4096 x 128 beside cuBLAS's five GEMMs). attention-backward-test: the GPU test case by case (the
# property check against the exact formulas first: it needs no suite).
section_attention_backward_certify() {
  certify_each attention_backward attention_backward 90 "attention_bwd_f16_flash_cuda attention_bwd_bf16_flash_cuda attention_bwd_f16_flash_det_cuda attention_bwd_bf16_flash_det_cuda attention_bwd_f32_naive_cuda"
  run timeout 100 "$BIN/bench_gpu_attention_bwd" 2>&1 | tee "$OUT/bench_gpu_attention_bwd.log"
}
section_attention_backward_test() {
  local tc limit
  for tc in "attention backward CUDA built-ins: within the derived*:100" "attention backward CUDA built-ins: every case*:240" "attention backward CUDA built-ins: mutation*:240"; do
    limit=${tc##*:}
    run timeout "$limit" "$BIN/test_kernels_gpu" --source-file='*attention_bwd_gpu_test.cpp' --test-case="${tc%:*}" --duration=true 2>&1 | tee -a "$OUT/attention_backward_gpu.log" | grep -vE "^\s*$" | tail -60
  done
}
# GEMM fused epilogues (issue 37; docs/epilogue.md, "CUDA subjects"): the GPU test of the cuBLASLt and SIMT subjects
# (each declared epilogue against the exact result; the certify suite's epilogue cases), each subject certified on the
# certify suite with its time, the mutation score of the group, and bench_gpu_epilogue (cuBLASLt GELU_BIAS fused against
# cuBLASLt plain + a separate bias/GELU pass, and the SIMT built-in).
EPI=cublaslt_bf16_epilogue,cublaslt_f16_epilogue,cublaslt_e4m3_scaled_bf16out,cublaslt_e4m3_scaled_e4m3out,simt_f32_epilogue_cuda,simt_bf16_epilogue_cuda
section_epilogue() {
  nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  run "$BIN/fpcert" kernels | grep -E "^(cublaslt|simt_)"
  run timeout 300 "$BIN/test_kernels_gpu" --source-file='*epilogue_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/epilogue_gpu_test.log" | grep -vE "^\s*$" | tail -120
  local k t0
  for k in ${EPI//,/ }; do
    t0=$(date +%s%N)
    run timeout 300 "$BIN/fpcert" certify --kernel "$k" --suite certify --no-mutation --json "$OUT/epilogue_certify_$k.json" > "$OUT/epilogue_certify_$k.txt" 2>&1; echo "rc=$?"
    echo "certify $k: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    grep -E "^(CERTIFIED|FAILED)|epi|fail |crashed|hung" "$OUT/epilogue_certify_$k.txt" | head -40
  done
  run timeout 560 "$BIN/fpcert" mutate --kernel "$EPI" --suite certify --json "$OUT/epilogue_mutation.json" > "$OUT/epilogue_mutation.txt" 2>&1; echo "rc=$?"
  grep -E "^(mutation score|  by class|  survived|  killed by another|kernel |cublaslt_|simt_)" "$OUT/epilogue_mutation.txt" | tail -60
  run timeout 200 "$BIN/bench_gpu_epilogue" 2>&1 | tee "$OUT/bench_gpu_epilogue.log"
}
# PyTorch's fused GEMM epilogues through the Python entry (issue 37; docs/python.md, "Fused epilogues"): torch's
# _addmm_activation (cuBLASLt's bias + ReLU/GELU epilogue) and F.linear then the activation in f16 and bf16,
# torch._scaled_mm (e4m3, bf16 out), each on the certify suite's epilogue_* cases, and the GELU forms swapped refused.
# Needs the package of scripts/devpy.sh (carry devpy, as part python).
section_epilogue_torch() {
  local PY
  PY=$(cd "${PYDIR:-devpy}" && pwd)
  export PYTHONPATH="$PY${PYTHONPATH:+:$PYTHONPATH}" FPCERT_TEST_OUT="$OUT/epilogue_torch" PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH="$PY:${LD_LIBRARY_PATH:-}"
  python3 -c 'import pytest' 2>/dev/null || export PYTHONPATH="$PYTHONPATH:$PY/site"
  mkdir -p "$OUT/epilogue_torch"
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda); print(torch._addmm_activation.__doc__ or "(no doc)"); print(getattr(torch.ops.aten._addmm_activation.default, "_schema", "")); print(getattr(torch.ops.aten._scaled_mm.default, "_schema", ""))' 2>&1 | head -12
  run timeout 300 python3 -m pytest -q -rA -s -p no:cacheprovider -p fpcert.pytest_plugin tests/python/test_epilogue.py 2>&1 | tail -8
  run timeout 500 python3 -m pytest -q -rA -s -p no:cacheprovider -p fpcert.pytest_plugin tests/python/test_torch_epilogue_gpu.py 2>&1 |
    tee "$OUT/epilogue_torch/torch_epilogue.log" | grep -E "^torch_|passed|failed|skipped|Error" | tail -80
}
# Epilogue diagnosis (issue 47 for issue 37; docs/diagnose.md, "Epilogues"): the cuBLASLt subjects against their own
# declaration (Z rounded before the GELU, alpha AB + beta C rounded before the bias: both measured) on the GELU, ReLU +
# bias and alpha/beta + bias cases, bf16 and f16 outputs (expect "declared"); certify --diagnose on the bf16 subject.
section_diagnose_epilogue() {
  local k c
  for k in cublaslt_bf16_epilogue cublaslt_f16_epilogue; do
    for c in epilogue_gelu_tanh epilogue_relu_bias epilogue_ab_bias_relu; do
      run timeout 300 "$BIN/fpcert" diagnose --kernel "$k" --case "$c" --top 24 --json "$OUT/diag_epi_${k}_$c.json" > "$OUT/diag_epi_${k}_$c.txt" 2>&1
      echo "rc=$?"; cat "$OUT/diag_epi_${k}_$c.txt" | head -40
    done
  done
  run timeout 500 "$BIN/fpcert" certify --kernel cublaslt_bf16_epilogue --suite certify --no-mutation --diagnose "$OUT/diag_epi_certify.json" \
    > "$OUT/diag_epi_certify.txt" 2>&1; echo "rc=$?"
  grep -E "^diagnosis of|^  [a-z_]+: |^      [0-9]+ " "$OUT/diag_epi_certify.txt" | head -60
}
# html41 (issues 41 and 45, docs/report.md "Attention", "Backward passes", "FlashAttention's 2x rule"): every CUDA attention
# and attention backward kernel certified (JSON), the CPU models beside them, FlashAttention's 2x rule beside fpcert for
# the CUDA kernels named by AR_KERNELS (default the two f16 flash kernels, to fit one 10-minute call; AR_KERNELS=all:
# every one: the backward benches build their exact references on the host, time not yet measured), all in one report, checked strictly against its JSON documents.
section_attention_report() {
  local k i=0 j=0 srcs=() files=() ks=${AR_KERNELS:-attention_f16_flash_cuda attention_bwd_f16_flash_cuda}
  run timeout 300 "$BIN/fpcert" certify --kernel cuda --suite attention --no-mutation --json "$OUT/ar_fwd_cuda.json" > "$OUT/ar_fwd_cuda.txt" 2>&1; echo "rc=$?"
  run timeout 120 "$BIN/fpcert" certify --kernel cpu --suite attention_quick --no-mutation --json "$OUT/ar_fwd_cpu.json" > "$OUT/ar_fwd_cpu.txt" 2>&1; echo "rc=$?"
  run timeout 300 "$BIN/fpcert" certify --kernel cuda --suite attention_backward --no-mutation --json "$OUT/ar_bwd_cuda.json" > "$OUT/ar_bwd_cuda.txt" 2>&1; echo "rc=$?"
  for f in ar_fwd_cuda ar_fwd_cpu ar_bwd_cuda; do
    [ -s "$OUT/$f.json" ] && files+=("$OUT/$f.json") && srcs+=(--src "r$i=$OUT/$f.json") && i=$((i + 1))
  done
  [ "$ks" = all ] && ks=$("$BIN/fpcert" kernels --json | python3 -c 'import json,sys; print(" ".join(k["name"] for k in json.load(sys.stdin) if k.get("operation") in ("attention", "attention_backward") and k["backend"] == "cuda" and not k["mutant"]))')
  for k in $ks; do
    case "$k" in *bwd*) run timeout 400 "$BIN/bench_attention_bwd_fa_rule" "$k" --json "$OUT/ar_fa_$k.json" ;;
                 *) run timeout 300 "$BIN/bench_attention_fa_rule" "$k" --json "$OUT/ar_fa_$k.json" ;; esac 2>&1 | tail -12
    [ -s "$OUT/ar_fa_$k.json" ] && files+=("$OUT/ar_fa_$k.json") && srcs+=(--src "f$j=$OUT/ar_fa_$k.json") && j=$((j + 1))
  done
  run "$BIN/fpcert" report "${files[@]}" -o "$OUT/attention_report.html"
  run python3 tests/reports/check_html.py "$OUT/attention_report.html" "${srcs[@]}" --require-tagged | tail -5
}
# ---- math42 (issue 42): binary functions and -use_fast_math builds (docs/elementwise.md) ----
# eltwise_runs TAG FULL [CI]: suite elementwise_full on the kernels FULL (its table for docs/elementwise.md), then the CI
# suite elementwise on the kernels CI when given; $OUT/TAG_full.{json,txt}, TAG_table.md, TAG_ci.{json,txt}.
eltwise_runs() {
  local tag=$1 full=$2 ci=${3:-}
  run timeout 500 "$BIN/fpcert" certify --kernel "$full" --suite elementwise_full --json "$OUT/${tag}_full.json" > "$OUT/${tag}_full.txt" 2>&1; echo "rc=$?"
  grep -vE "^\s*$" "$OUT/${tag}_full.txt" | head -60
  python3 scripts/eltwise_table.py "$OUT/${tag}_full.json" | tee "$OUT/${tag}_table.md"
  [ -z "$ci" ] && return
  run timeout 200 "$BIN/fpcert" certify --kernel "$ci" --suite elementwise --json "$OUT/${tag}_ci.json" > "$OUT/${tag}_ci.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED)|fail |crashed|hung" "$OUT/${tag}_ci.txt" | head -30
}
# Binary functions: the GPU test (the 8 CUDA subjects and the 6 fast-math twins on the special pairs and 2^18 designed
# pairs), then suite elementwise_full on the 8 (2^24 pairs each; MPFR decides every reference on the host's cores; the
# twins' full run is part eltwise-fastmath).
section_eltwise_binary() {
  run "$BIN/test_suites_gpu" --source-file='*eltwise_gpu_test.cpp' --test-case='binary CUDA functions*' 2>&1 | tee "$OUT/eltwise_binary_gpu.log" | grep -E "eltwise_gpu|test cases|assertions|ERROR|CHECK|Status" | tail -n 40
  local kb=cuda_div_f32,cuda_fdividef,cuda___fdividef,cuda___fdiv_rn,cuda_powf,cuda_atan2f,cuda_fmaxf,cuda_fminf
  eltwise_runs eltwise_binary "$kb"
}
# -use_fast_math twins: the sweep-vs-host GPU test (compiled with fast math), every fp32 input of each twin with a device
# reference (elementwise_full), the CI suite on all twins (erf, erfc, sin, cos, sinpi, cospi sampled: no device reference).
section_eltwise_fastmath() {
  run "$BIN/test_suites_gpu" --source-file='*eltwise_gpu_test.cpp' --test-case='-use_fast_math twins*' 2>&1 | tee "$OUT/eltwise_fastmath_gpu.log" | grep -E "eltwise_gpu|test cases|assertions|ERROR|CHECK|Status" | tail -n 80
  local kf kf_full
  kf=$("$BIN/fpcert" kernels --json | python3 -c 'import json,sys; print(",".join(k["name"] for k in json.load(sys.stdin) if k["name"].startswith("cuda_fastmath_")))')
  kf_full=$(echo "$kf" | tr , '\n' | grep -vE '^cuda_fastmath_(erff|erfcf|sinf|cosf|sinpif|cospif)$' | paste -sd, -)
  eltwise_runs eltwise_fastmath "$kf_full" "$kf"
}
# mut42 (issue 42, docs/mutation.md "Elementwise"): the elementwise faults around CUDA kernels, the GPU test (CUDA's
# correctly rounded square roots) then fpcert mutate over a spread of functions, formats and claims.
ELTMUT=cuda_expf,cuda___expf,cuda_logf,cuda___logf,cuda_sqrtf,cuda_rsqrtf,cuda_tanhf,cuda_expm1f,cuda_log1pf,cuda_hexp_f16,cuda_hlog_bf16,cuda_htanh_f16,cuda_hrsqrt_bf16,cuda_fastmath_expf
section_eltwise_mutate() {
  run timeout 300 "$BIN/test_suites_gpu" --source-file='*eltwise_mutation_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/eltwise_mutation_gpu.log" | tail -40
  run timeout 500 "$BIN/fpcert" mutate --kernel "$ELTMUT" --suite elementwise --json "$OUT/eltwise_mutate.json" > "$OUT/eltwise_mutate.txt" 2>&1
  echo "rc=$?"; grep -vE "^\s*$" "$OUT/eltwise_mutate.txt" | tail -60
}
# diagelt (issue 47, docs/diagnose.md "Elementwise kernels"): CUDA elementwise kernels diagnosed on the H200: a
# -use_fast_math twin (what does expf become?), the two intrinsics the sweep refuses (__log10f, __cosf), and a correct one.
section_diagnose_eltwise() {
  local k
  for k in cuda_fastmath_expf cuda___log10f cuda___cosf cuda_expf cuda_hexp_f16; do
    run timeout 200 "$BIN/fpcert" diagnose --kernel "$k" --top 8 --json "$OUT/diag_elt_$k.json" > "$OUT/diag_elt_$k.txt" 2>&1
    echo "rc=$?"; head -30 "$OUT/diag_elt_$k.txt"
  done
}
# diagrows (issue 47, docs/diagnose.md "Reductions, softmax and normalisation"): CUDA row kernels diagnosed on the H200
# against their CPU twins' hypotheses (faults, accumulator formats, orders, exp by operations).
section_diagnose_rows() {
  local k
  for k in reduce_sum_f32_warp32 cub_segmented_sum_f32 reduce_sum_bf16_warp32 softmax_f32_warp_ops_cuda softmax_f32_online_cuda \
           layernorm_f32_welford_cuda layernorm_f32_warp_cuda rmsnorm_f32_warp_cuda rmsnorm_bf16_warp_cuda; do
    run timeout 120 "$BIN/fpcert" diagnose --kernel "$k" --top 10 --json "$OUT/diag_rows_$k.json" > "$OUT/diag_rows_$k.txt" 2>&1
    echo "rc=$?"; head -20 "$OUT/diag_rows_$k.txt"
  done
}
# fp8acc (issue 37, docs/epilogue.md "FP8 accumulation on the H200"): cuBLASLt's FP8 accumulation measured from outside
# (torch._scaled_mm, fast accumulation off and on): the bits one MMA keeps, the promotion interval.
section_fp8_probe() {
  run timeout 300 python3 scripts/probe_fp8_accum.py --json "$OUT/fp8_probe.json" 2>&1 | tee "$OUT/fp8_probe.txt"
}
# diag47 (issue 47, docs/diagnose.md "alpha, beta and C"): how cuBLASLt forms D = alpha' AB + beta C. Its FP8 GEMM
# (e4m3 in, bf16 D and C) fails ab_general_nt_aligned by 1.027x on 1 of 10,240 elements: diagnosed there, on
# ab_beta0_nt_aligned (no C: the control), and the bf16 subject on ab_general.
section_diagnose_ab() {
  local k c kc
  for kc in cublaslt_e4m3_scaled_bf16out:ab_general_nt_aligned cublaslt_e4m3_scaled_bf16out:ab_beta0_nt_aligned \
            cublaslt_bf16_epilogue:ab_general cublaslt_bf16_epilogue:ab_inplace; do
    k=${kc%%:*}; c=${kc#*:}
    run timeout 300 "$BIN/fpcert" diagnose --kernel "$k" --case "$c" --top 24 --json "$OUT/diag_ab_${k}_$c.json" > "$OUT/diag_ab_${k}_$c.txt" 2>&1
    echo "rc=$?"; head -45 "$OUT/diag_ab_${k}_$c.txt"
  done
}
# conv47: the conversion faults injected into the device table's kernels (docs/mutation.md, "Device conversion
# kernels"): the GPU test (each entry decided as on fpcert's model, with the seconds), then fpcert mutate on a 16-bit and
# two fp32 entries (every code on the device, each mutant's results edited on the host before the check), and certify's
# conversions suite with its mutation lines (device kernels: not measured, with the reason).
section_conv_mutation() {
  run timeout 590 "$BIN/test_suites_gpu" -tc="fpcert mutate on the device table*" --duration=true 2>&1 | tail -30
  run timeout 300 "$BIN/fpcert" mutate --suite conversions --kernel bf16_to_e4m3_satfinite,f32_to_bf16_rn,f32_to_e4m3_satfinite \
    --json "$OUT/conv_mutation.json" 2>&1 | tail -40
  run timeout 300 "$BIN/fpcert" certify --suite conversions --json "$OUT/conv_certify_mutation.json" 2>&1 | grep -E "mutation score|CERTIFIED|FAILED" | head -80
}
# oz2 (issue 39; docs/fp64.md, "The built-in Ozaki-II emulation"): gemm_f64_ozaki2_int8 bit for bit against its CPU model,
# the moduli sweep (correct bits vs N vs time, beside cuBLAS DGEMM and its fixed-point emulation), and certify.
section_ozaki2() {
  run "$BIN/test_kernels_gpu" --source-file='*ozaki2_gpu_test.cpp' --duration=true -s 2>&1 | tee "$OUT/ozaki2_gpu.log" | grep -E "ozaki2|test cases|assertions|ERROR|CHECK" | tail -n 40
  for mnk in "1024 1024 1024" "2048 2048 2048"; do
    run "$BIN/bench_ozaki2" --mnk $mnk --moduli 12,14,16,18,20 --device 2>&1 | tee -a "$OUT/bench_ozaki2.log"
  done
  run timeout 280 "$BIN/fpcert" certify --kernel gemm_f64_ozaki2_int8 --suite certify --json "$OUT/ozaki2_certify.json" > "$OUT/ozaki2_certify.txt" 2>&1; echo "rc=$?"
  grep -E "^(CERTIFIED|FAILED)|fail |crashed|hung|mutation score|survived" "$OUT/ozaki2_certify.txt" | head -25
}
# abi42 (issue 42): elementwise kernels of a CUDA plugin (ABI minor 11) in device memory: the GPU test (expf, __expf with its
# slope, hexp pass the elementwise suite; __expf without its slope refused), then every fp32 input of expf and __expf and
# every f16 input of hexp through eltwise_run and the host check (a plugin offers no device sweep), timed beside the
# built-ins' device sweep of the same functions. torch.exp / torch.sqrt swept from Python: part python (gpu_main.py).
section_plugin_eltwise() {
  export FPCERT_BIN="$BIN/fpcert" FPCERT_TEST_PLUGIN_DIR="$BIN/plugins" FPCERT_TEST_SCRATCH="$OUT/plugin_eltwise_scratch"
  mkdir -p "$FPCERT_TEST_SCRATCH"
  run timeout 200 "$BIN/test_plugin_gpu" --source-file='*eltwise_plugin_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/test_plugin_eltwise_gpu.log" | tail -30
  run timeout 330 "$BIN/fpcert" certify --plugin "$BIN/plugins/libeltwise_cuda.so" --kernel eltwise_expf_f32_cuda,eltwise___expf_f32_cuda,eltwise_hexp_f16_cuda \
    --suite elementwise_full --json "$OUT/plugin_eltwise_full.json" > "$OUT/plugin_eltwise_full.txt" 2>&1; echo "rc=$?" >> "$OUT/plugin_eltwise_full.txt"
  tail -12 "$OUT/plugin_eltwise_full.txt"
  run timeout 60 "$BIN/fpcert" certify --kernel cuda_expf,cuda___expf,cuda_hexp_f16 --suite elementwise_full --json "$OUT/plugin_eltwise_builtin.json" 2>&1 | tail -8
}
# gref (issue 39, first part): the exact reference's slice GEMMs on cuBLAS DGEMM (docs/oracle.md, "On the GPU"): the GPU
# test (bit for bit with the CPU oracle on the certify inputs and random shapes; the sample check on corrupted products),
# the benchmark (DGEMM, GPU and CPU references side by side at 1024^3, 4096^3, 8192^3), and certify with either engine.
section_gref() {
  run "$BIN/test_suites_gpu" --source-file='*exact_gemm_gpu_test.cpp' --duration=true 2>&1 | tee "$OUT/test_exact_gemm_gpu.log" | tail -40
  run "$BIN/bench_oracle_gemm_gpu" 1024 4096 8192 2>&1 | tee "$OUT/bench_oracle_gemm_gpu.log"
  for r in cpu gpu; do
    run "$BIN/fpcert" certify --kernel gemm_f16_f32acc_mma_sm80 --suite certify --no-mutation --reference "$r" --json "$OUT/gref_certify_$r.json" 2>&1 | tail -8
  done
  python3 -c 'import json,sys; a,b=(json.load(open(sys.argv[i])) for i in (1,2)); print("reference_engine:", a["notes"].get("reference_engine"), b["notes"].get("reference_engine")); print("same verdicts:", [c["status"] for c in a["cases"]]==[c["status"] for c in b["cases"]])' "$OUT/gref_certify_cpu.json" "$OUT/gref_certify_gpu.json"
}
for part in ${PART//,/ }; do
  case "$part" in
    conv-mutation) section_conv_mutation ;;  # conv47
    tests) section_tests ;;
    suites) section_suites ;;
    conversions) section_conversions ;;
    emulation) section_emulation ;;
    plugin) section_plugin ;;
    plugin-rows) section_plugin_rows ;;
    plugin-attention) section_plugin_attention ;;
    plugin-eltwise) section_plugin_eltwise ;;  # abi42
    proof) section_proof ;;
    proof_conv) section_proof_conv ;;
    probe) section_probe ;;
    scale) section_scale ;;
    verdict-cost) section_verdict_cost ;;
    verdicts) section_verdicts ;;
    coverage) section_coverage ;;
    blocks) section_blocks ;;
    hardening) section_hardening ;;
    mutation) section_mutation ;;
    mutation-cublas) section_mutation_cublas ;;
    specials) section_specials ;;
    mutation-emu) section_mutation_emu ;;
    experiments) section_experiments ;;
    panorama-a) section_panorama accuracy-vs-k ;;
    panorama-b) section_panorama exponent-range ;;
    panorama-c) section_panorama cancellation ;;
    tc-b) section_tcb ;;
    fp8mma) section_fp8mma ;;
    python) section_python ;;
    audit) section_audit ;;
    wave3) section_wave3 ;;
    libgemm) section_libgemm ;;
    libgemm-batch) section_libgemm_batch ;;
    epilogue) section_epilogue ;;
    epilogue-torch) section_epilogue_torch ;;
    eltwise) section_eltwise ;;
    eltwise-binary) section_eltwise_binary ;;  # math42
    eltwise-fastmath) section_eltwise_fastmath ;;  # math42
    fp64) section_fp64 ;;
    ozaki2) section_ozaki2 ;;  # oz2
    softmax) section_softmax ;;
    softmax-backward) section_softmax_backward ;;
    norm) section_norm ;;
    norm-backward) section_norm_backward ;;
    attention) section_attention ;;
    attention-certify) section_attention_certify ;;
    torch-rows) section_torch_rows ;;
    attention-runner) section_attention_runner ;;
    attention-backward-torch) section_attention_backward_torch ;;
    cudnn-probe) section_cudnn_probe ;;
    attention-backward) section_attention_backward_certify; section_attention_backward_test ;;
    attention-backward-certify) section_attention_backward_certify ;;
    attention-report) section_attention_report ;;
    attention-backward-test) section_attention_backward_test ;;
    diagnose) section_diagnose ;;
    diagnose-epilogue) section_diagnose_epilogue ;;
    diagnose-ab) section_diagnose_ab ;;
    eltwise-mutate) section_eltwise_mutate ;;  # mut42
    fp8-probe) section_fp8_probe ;;  # fp8acc
    diagnose-eltwise) section_diagnose_eltwise ;;  # diagelt
    diagnose-rows) section_diagnose_rows ;;  # diagrows
    scale3) section_scale3 ;;
    report) section_report ;;
    reveal) section_reveal ;;
    reveal_replay) section_reveal_replay ;;
    gref) section_gref ;;  # gref (issue 39)
    all) section_tests; section_suites; section_conversions; section_emulation; section_plugin; section_probe; section_verdicts; section_coverage; section_hardening
         section_experiments; section_panorama accuracy-vs-k; section_panorama exponent-range; section_panorama cancellation
         section_blocks; section_reveal; section_reveal_replay ;;
    *) echo "unknown part $part"; exit 2 ;;
  esac
done
