// bench/oracle_gemm_gpu.cpp — the exact GEMM reference with its slice GEMMs on the GPU (cuBLAS DGEMM engine,
// docs/oracle.md "On the GPU") next to cuBLAS DGEMM itself and the CPU reference, in one run: times, the GPU
// reference's parts (uploads, DGEMMs, downloads, the host's slicing + combination + sample check), the ratios, and
// the two references compared bit for bit (hi, lo, tail, status).
//
// Usage: bench_oracle_gemm_gpu [N ...]   square fp32 problems (default: 1024 4096 8192); --no-cpu skips the CPU
//        reference (its comparison too). Inputs: fp32 values uniform in [-1, 1), row-major. Exit 77 without a device.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/parallel.hpp"
#include "bench/machine.hpp"
#include "bench/uniform_inputs.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "oracle/gemm_ref.hpp"

using namespace fpcert;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

using bench::uniform_f32;

void run(std::int64_t n, CudaExactGemmEngine& engine, bool cpu) {
  const std::int64_t M = n, N = n, K = n;
  const std::vector<double> a = uniform_f32(M * K, 1), b = uniform_f32(K * N, 2);  // B column-major: lines of K
  const MatrixView A = MatrixView::row_major(a.data(), M, K), B = MatrixView::col_major(b.data(), K, N);

  // cuBLAS DGEMM at this shape: the engine's own call with one operand pair (the median of 3 of its GEMM time).
  std::vector<double> c(static_cast<std::size_t>(M * N));
  const double* ap = a.data();
  const double* bp = b.data();
  const SliceBlock one{1, M, N, K, &ap, &bp};
  std::vector<double> t_dgemm;
  for (int r = 0; r < 4; ++r) {  // the first warms cuBLAS up
    engine.reset_times();
    engine.multiply(one, 0, M, 0, N, c.data());
    if (r) t_dgemm.push_back(engine.times().gemm_s);
  }
  std::sort(t_dgemm.begin(), t_dgemm.end());
  const double dgemm = t_dgemm[1];

  // The GPU reference: median of 3 after a warm-up (pinned buffers, cuBLAS's workspace).
  GemmRefOptions o;
  o.engine = &engine;
  GemmRef g = gemm_reference(A, B, o);
  std::vector<std::pair<double, ExactGemmTimes>> runs;
  for (int r = 0; r < 3; ++r) {
    engine.reset_times();
    const double t0 = now();
    g = gemm_reference(A, B, o);
    runs.emplace_back(now() - t0, engine.times());
  }
  std::sort(runs.begin(), runs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  const auto& [t_gpu, parts] = runs[1];
  const double host = t_gpu - parts.upload_s - parts.gemm_s - parts.download_s;

  fmt::print("M=N=K={}  (load average {} at the end)\n", n, bench::load_average());
  fmt::print("  cuBLAS DGEMM (not exact)           {:9.4f} s\n", dgemm);
  fmt::print("  GPU exact reference                {:9.4f} s   slices {} x {} bits, K block {}, {} GEMMs per block, {} blocks, "
             "{} panels, {} elements sample-checked\n",
             t_gpu, g.info.slices, g.info.beta, g.info.kblock, g.info.gemms, parts.blocks, parts.panels, g.info.sample_checked);
  fmt::print("    uploads (slices to the device)   {:9.4f} s\n", parts.upload_s);
  fmt::print("    DGEMMs                           {:9.4f} s   ({:.2f}x one DGEMM)\n", parts.gemm_s, parts.gemm_s / dgemm);
  fmt::print("    downloads (products to the host) {:9.4f} s\n", parts.download_s);
  fmt::print("    host: scan, slicing, combination, sample check {:9.4f} s\n", host);
  fmt::print("  ratio GPU reference / DGEMM        {:9.2f}x   (goal <= 10x; 8192: <= 0.2 s)\n", t_gpu / dgemm);
  if (!cpu) return;
  const double t0 = now();
  const GemmRef h = gemm_reference(A, B, {});
  const double t_cpu = now() - t0;
  std::int64_t diff = 0;
  for (std::size_t e = 0; e < h.c.size(); ++e) diff += !(h.c[e] == g.c[e]) || h.status[e] != g.status[e];
  fmt::print("  CPU exact reference ({} threads)   {:9.4f} s   ratio CPU / GPU reference {:.2f}x\n", thread_count(), t_cpu,
             t_cpu / t_gpu);
  fmt::print("  GPU vs CPU reference: {} of {} elements differ (hi, lo, tail, status){}\n", diff, M * N,
             diff ? "  <-- MISMATCH" : "");
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  const auto engine = make_cuda_exact_gemm_engine(&why);
  if (!engine) {
    fmt::print(stderr, "bench_oracle_gemm_gpu: skipped: {}\n", why);
    return 77;
  }
  bool cpu = true;
  std::vector<std::int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--no-cpu") cpu = false;
    else sizes.push_back(std::atoll(argv[i]));
  }
  if (sizes.empty()) sizes = {1024, 4096, 8192};
  fmt::print("bench_oracle_gemm_gpu: {} | {} host threads | fp32 inputs uniform in [-1, 1) | engine {}\n", bench::cpu_model(),
             thread_count(), engine->name());
  for (const std::int64_t n : sizes) run(n, *engine, cpu);
  return 0;
}
