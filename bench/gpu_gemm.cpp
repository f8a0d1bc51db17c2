// bench/gpu_gemm.cpp — GEMM throughput of the CUDA kernels next to cuBLAS at the same compute type,
// measured side by side in one run: M = N = K in {1024, 4096, 8192}, random non-zero inputs, the median
// of 10 timed launches after 3 warm-ups (CUDA events around each launch, no copies), TFLOP/s = 2MNK/t,
// and the speed ratio to the named cuBLAS baseline (> 1: faster than cuBLAS); a row may store B column-major
// ("@nt": tf32 and FP8 wgmma read B K-major only, and cuBLASLt's FP8 GEMM, their baseline, takes only that layout).
// Exits 0 with a message when there is no CUDA device.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "bench/gpu_bench.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"

using namespace fpcert;
using bench::DeviceBuffer;
using bench::random_codes;

namespace {

struct Row {
  const char* kernel;
  const char* baseline;  // cuBLAS at the same data path / compute type ("" for none), as "kernel" or "kernel@nt"
  const char* note;
  bool large;            // also run at 8192
  Layout b = Layout::RowMajor;  // ColMajor: B stored K-major (BLAS "T" in row-major terms), the row's name gets "@nt"
};

// Baselines first: each size measures them before the kernels whose ratio they give.
const Row kRows[] = {
    {"cublas_gemm_f32_pedantic", "", "fp32 in/out, COMPUTE_32F_PEDANTIC", true},
    {"cublas_gemm_f32_fast_tf32", "", "fp32 in/out, COMPUTE_32F_FAST_TF32", true},
    {"cublas_gemm_f32_fast_16f", "", "fp32 in/out, COMPUTE_32F_FAST_16F", true},
    {"cublas_gemm_f32_fast_16bf", "", "fp32 in/out, COMPUTE_32F_FAST_16BF", true},
    {"cublas_gemm_f16_f16acc", "", "fp16 in/out, COMPUTE_16F", true},
    {"cublas_gemm_f16_f32acc", "", "fp16 in, fp32 out, COMPUTE_32F", true},
    {"cublas_gemm_bf16_f32acc", "", "bf16 in, fp32 out, COMPUTE_32F", true},
    {"cublas_gemm_f32_emulated_16bfx9", "", "fp32 in/out, COMPUTE_32F_EMULATED_16BFX9", true},
    {"gemm_f16_f32acc_mma_sm80", "cublas_gemm_f16_f32acc", "vs fp16-in/fp32-out cublasGemmEx, COMPUTE_32F", true},
    {"gemm_bf16_f32acc_mma_sm80", "cublas_gemm_bf16_f32acc", "vs bf16-in/fp32-out cublasGemmEx, COMPUTE_32F", true},
    {"gemm_tf32_f32acc_mma_sm80", "cublas_gemm_f32_fast_tf32", "vs fp32 in/out, COMPUTE_32F_FAST_TF32", true},
    {"gemm_e4m3_f32acc_mma_sm89", "cublas_gemm_f16_f32acc",
     "vs cuBLAS fp16 (cublasGemmEx has no FP8; the wgmma rows below compare with cuBLASLt FP8)", true},
    {"gemm_e4m3_f32acc_mma_sm89_promote128", "gemm_e4m3_f32acc_mma_sm89", "vs the same kernel without promotion", true},
    {"gemm_e5m2_f32acc_mma_sm89", "cublas_gemm_f16_f32acc", "vs cuBLAS fp16 (no FP8 in cublasGemmEx)", true},
    {"gemm_e5m2_f32acc_mma_sm89_promote128", "gemm_e5m2_f32acc_mma_sm89", "vs the same kernel without promotion", true},
    {"gemm_f32_tiled", "cublas_gemm_f32_pedantic", "SIMT pipeline, vs COMPUTE_32F_PEDANTIC", false},
    {"gemm_f16_f32acc_tiled", "cublas_gemm_f16_f32acc", "SIMT pipeline, vs fp16-in/fp32-out COMPUTE_32F", false},
    {"gemm_f16_f16acc_tiled", "cublas_gemm_f16_f16acc", "SIMT pipeline, vs COMPUTE_16F", false},
    // Hopper wgmma + TMA kernels (issue 43). tf32 and FP8 wgmma read B K-major only: their rows give B column-major
    // (and so do their baselines: cuBLASLt's FP8 GEMM takes only that layout); a row-major B is first transposed
    // into a workspace, which the tf32 row-major row times.
    {"gemm_f16_f32acc_wgmma_sm90", "cublas_gemm_f16_f32acc", "vs fp16-in/fp32-out cublasGemmEx, COMPUTE_32F", true},
    {"gemm_bf16_f32acc_wgmma_sm90", "cublas_gemm_bf16_f32acc", "vs bf16-in/fp32-out cublasGemmEx, COMPUTE_32F", true},
    {"cublas_gemm_f32_fast_tf32", "", "fp32 in/out, COMPUTE_32F_FAST_TF32, B column-major", true, Layout::ColMajor},
    {"gemm_tf32_f32acc_wgmma_sm90", "cublas_gemm_f32_fast_tf32@nt", "vs COMPUTE_32F_FAST_TF32, both B column-major", true, Layout::ColMajor},
    {"gemm_tf32_f32acc_wgmma_sm90", "cublas_gemm_f32_fast_tf32", "B row-major: transposed first; vs COMPUTE_32F_FAST_TF32", true},
    {"cublaslt_e4m3_scaled_bf16out", "", "cuBLASLt FP8 e4m3 (its only layout: B column-major), bf16 D", true, Layout::ColMajor},
    {"gemm_e4m3_f32acc_wgmma_sm90", "cublaslt_e4m3_scaled_bf16out@nt", "vs cuBLASLt FP8 e4m3 (fp32 D here, bf16 there)", true, Layout::ColMajor},
    {"gemm_e5m2_f32acc_wgmma_sm90", "cublaslt_e4m3_scaled_bf16out@nt", "vs cuBLASLt FP8 e4m3 (e5m2 same speed class)", true, Layout::ColMajor},
    {"gemm_e4m3_f32acc_wgmma_sm90_promote128", "gemm_e4m3_f32acc_wgmma_sm90@nt", "vs the same without promotion (128 x 128 tiles here)", true, Layout::ColMajor},
    {"gemm_e5m2_f32acc_wgmma_sm90_promote128", "gemm_e5m2_f32acc_wgmma_sm90@nt", "vs the same without promotion (128 x 128 tiles here)", true, Layout::ColMajor},
    {"gemm_f16_f32acc_wgmma_sm90", "gemm_f16_f32acc_mma_sm80", "vs the mma.sync kernel (sm_80 design)", true},
};

}  // namespace

int main() {
  std::string why;
  auto api = make_cuda_api(&why);
  if (!api) {
    std::printf("bench_gpu_gemm: no CUDA device (%s): nothing to measure\n", why.c_str());
    return 0;
  }
  const DeviceInfo d = api->info();
  std::printf("device: %s, sm_%d%d, %d SMs, %d MHz; CUDA runtime %s, cuBLAS %s; binary archs %s\n", d.name.c_str(),
              d.cc_major, d.cc_minor, d.sm_count, d.clock_mhz, d.runtime.c_str(), d.cublas.c_str(), d.arch_flags.c_str());
  std::printf("time: median of 10 launches after 3 warm-ups (CUDA events), TFLOP/s = 2*M*N*K / time; ratio = "
              "baseline time / kernel time (> 1: faster than the baseline)\n");
  constexpr int kWarmups = 3, kTimed = 10;
  for (const std::int64_t N : {std::int64_t{1024}, std::int64_t{4096}, std::int64_t{8192}}) {
    std::printf("\nM = N = K = %lld\n%-41s %10s %9s %8s  %s\n", static_cast<long long>(N), "kernel", "ms", "TFLOP/s",
                "ratio", "baseline");
    const std::size_t elems = static_cast<std::size_t>(N * N);
    std::map<std::string, std::unique_ptr<DeviceBuffer>> inputs;  // by format tag: A and B
    std::map<std::string, double> times;
    for (const Row& row : kRows) {
      if (N > 4096 && !row.large) continue;
      const std::string label = std::string(row.kernel) + (row.b == Layout::ColMajor ? "@nt" : "");
      auto k = make_gemm_kernel(row.kernel);
      if (!k) {
        std::printf("%-41s not registered\n", label.c_str());
        continue;
      }
      Support sup = k->can_implement_layout(GemmLayout{Layout::RowMajor, row.b, Layout::RowMajor});
      if (sup.ok) sup = k->can_implement(N, N, N);
      if (!sup.ok) {
        std::printf("%-41s not supported: %s\n", label.c_str(), sup.reason.c_str());
        continue;
      }
      const KernelTraits& t = k->traits();
      const std::string tag(t.a_input->tag);
      const std::size_t in_bytes = elems * static_cast<std::size_t>(container_bytes(*t.a_input));
      try {
        if (!inputs.count(tag)) {  // A at offset 0, B after it
          auto buf = std::make_unique<DeviceBuffer>(*api, 2 * in_bytes);
          const auto a = random_codes(*t.a_input, elems, 1 + static_cast<std::uint64_t>(N));
          const auto b = random_codes(*t.a_input, elems, 2 + static_cast<std::uint64_t>(N));
          api->to_device(buf->p, a.data(), in_bytes);
          api->to_device(static_cast<std::uint8_t*>(buf->p) + in_bytes, b.data(), in_bytes);
          inputs[tag] = std::move(buf);
        }
        DeviceBuffer c(*api, elems * static_cast<std::size_t>(container_bytes(*t.out)));
        GemmOperands ops;
        ops.m = ops.n = ops.k = N;
        ops.a = inputs[tag]->p;
        ops.lda = N;
        ops.b = static_cast<std::uint8_t*>(inputs[tag]->p) + in_bytes;
        ops.ldb = N;
        ops.b_layout = row.b;
        ops.c = c.p;
        ops.ldc = N;
        ops.stream = api->stream();
        const double med = bench::median_launch_ms(*k, ops, *api, kWarmups, kTimed);
        times[label] = med;
        const double tflops = 2.0 * static_cast<double>(N) * static_cast<double>(N) * static_cast<double>(N) / (med * 1e-3) / 1e12;
        std::string ratio = "", base = row.note;
        if (*row.baseline) {
          const auto it = times.find(row.baseline);
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.3f", it != times.end() ? it->second / med : NAN);
          ratio = buf;
          base = std::string(row.baseline) + " (" + row.note + ")";
        }
        std::printf("%-41s %10.4f %9.2f %8s  %s\n", label.c_str(), med, tflops, ratio.c_str(), base.c_str());
      } catch (const NotSupportedError& e) {
        std::printf("%-41s not supported: %s\n", label.c_str(), e.what());
      } catch (const DeviceError& e) {
        std::printf("%-41s device error: %s\n", label.c_str(), e.what());
        return 3;
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
