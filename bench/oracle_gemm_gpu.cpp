// bench/oracle_gemm_gpu.cpp — the exact GEMM reference on the GPU (docs/oracle.md "On the GPU") next to cuBLAS DGEMM
// itself and the CPU reference, in one run: the whole reference on the device (binary32 inputs) with its parts, the
// same in one row band (its downloads after the device's work instead of beside it), the same with the slice DGEMMs
// only (the host slicing and combining), the ratios, and the references compared bit for bit (hi, lo, tail, status).
//
// Usage: bench_oracle_gemm_gpu [N ...]   square fp32 problems (default: 256 512 1024 4096 8192); --no-cpu skips the CPU
//        reference (its comparison too); --normal: standard normal inputs (entries outside the slice window: the
//        per-element corrections) instead of uniform in [-1, 1). A row-major, B column-major. Exit 77 without a device.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
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

void run(std::int64_t n, CudaExactGemmEngine& engine, bool cpu, bool normal) {
  const std::int64_t M = n, N = n, K = n;
  const std::vector<double> a = normal ? bench::normal_f32(M * K, 1) : uniform_f32(M * K, 1);
  const std::vector<double> b = normal ? bench::normal_f32(K * N, 2) : uniform_f32(K * N, 2);  // B column-major: lines of K
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

  // The GPU reference, whole on the device (binary32 inputs) and with the slice DGEMMs only (per panel): median of 3
  // after a warm-up (buffers, cuBLAS's workspace).
  GemmRefOptions o;
  o.engine = &engine;
  struct Timed {
    double t;
    ExactGemmTimes parts;
    GemmRef ref;
  };
  const auto timed = [&](bool whole) {
    engine.set_whole(whole);
    Timed best{0, {}, gemm_reference(A, B, o)};
    std::vector<std::pair<double, ExactGemmTimes>> runs;
    for (int r = 0; r < 3; ++r) {
      engine.reset_times();
      best.ref = GemmRef{};  // the previous reference's arrays freed before the clock starts (2.2 GB at 8192^2)
      const double t0 = now();
      best.ref = gemm_reference(A, B, o);
      runs.emplace_back(now() - t0, engine.times());
    }
    std::sort(runs.begin(), runs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    best.t = runs[1].first;
    best.parts = runs[1].second;
    return best;
  };
  engine.set_band_elements(std::numeric_limits<std::int64_t>::max());  // one band: no download beside the device's work
  const Timed w1 = timed(true);
  engine.set_band_elements(kWholeBandElements);
  const Timed w = timed(true);
  const Timed p = timed(false);
  engine.set_whole(true);
  const GemmRef& g = w.ref;
  const ExactGemmTimes& wp = w.parts;
  const double on_device = wp.scan_s + wp.slice_s + wp.gemm_s + wp.finish_s;  // device times (the bands' by events)

  fmt::print("M=N=K={}  (load average {} at the end)\n", n, bench::load_average());
  fmt::print("  cuBLAS DGEMM (not exact)           {:9.4f} s\n", dgemm);
  fmt::print("  GPU exact reference, whole on the device {:9.4f} s   ({} whole), slices {} x {} bits, K block {}, {} GEMMs "
             "per block, {} blocks, {} elements sample-checked, {} fallback elements\n",
             w.t, wp.whole, g.info.slices, g.info.beta, g.info.kblock, g.info.gemms, wp.blocks, g.info.sample_checked,
             g.fallbacks);
  fmt::print("    host: binary32 check and packing {:9.4f} s   (each piece's upload issued as it is packed)\n", wp.prep_s);
  fmt::print("    rest of the upload, transposes   {:9.4f} s\n", wp.upload_s);
  fmt::print("    scan, split, uncaptured entries  {:9.4f} s\n", wp.scan_s);
  fmt::print("    {} row bands: device work and downloads, overlapped {:9.4f} s, of which\n", wp.bands, wp.bands_s);
  fmt::print("      slicing (device time)          {:9.4f} s\n", wp.slice_s);
  fmt::print("      DGEMMs (device time)           {:9.4f} s   ({:.2f}x one DGEMM)\n", wp.gemm_s, wp.gemm_s / dgemm);
  fmt::print("      block sums, combination, corrections (device time) {:9.4f} s\n", wp.finish_s);
  fmt::print("      wait for the host's result arrays {:9.4f} s   (allocated, their pages touched, while the device works)\n",
             wp.alloc_wait_s);
  fmt::print("      downloads (hi, lo, tail, abs_sum, status; pinned staging; host wall) {:9.4f} s\n", wp.download_s);
  fmt::print("    host: NaN/Inf elements, sample check, rest {:9.4f} s\n",
             w.t - wp.prep_s - wp.upload_s - wp.scan_s - wp.bands_s);
  fmt::print("  on the device (scan to combination) {:9.4f} s   ratio / DGEMM {:.2f}x\n", on_device, on_device / dgemm);
  fmt::print("  ratio whole reference / DGEMM      {:9.2f}x   (goal <= 10x; 8192: <= 0.2 s)\n", w.t / dgemm);
  fmt::print("  the same in one band (downloads after the device's work) {:9.4f} s   ({} band(s); {:.2f}x DGEMM; bands {:.4f} s, "
             "downloads {:.4f} s)   ratio one band / bands {:.2f}x\n",
             w1.t, w1.parts.bands, w1.t / dgemm, w1.parts.bands_s, w1.parts.download_s, w1.t / w.t);
  std::int64_t w1_diff = 0;
  for (std::size_t e = 0; e < g.c.size(); ++e) w1_diff += !(w1.ref.c[e] == g.c[e]) || w1.ref.status[e] != g.status[e];
  fmt::print("  bands vs one band: {} of {} elements differ (hi, lo, tail, status){}\n", w1_diff, M * N,
             w1_diff ? "  <-- MISMATCH" : "");
  const ExactGemmTimes& pp = p.parts;
  fmt::print("  GPU exact reference, slice DGEMMs only {:9.4f} s   ({} panels; uploads {:.4f}, DGEMMs {:.4f}, downloads "
             "{:.4f}, host {:.4f})   ratio / whole {:.2f}x\n",
             p.t, pp.panels, pp.upload_s, pp.gemm_s, pp.download_s, p.t - pp.upload_s - pp.gemm_s - pp.download_s,
             p.t / w.t);
  std::int64_t wp_diff = 0;
  for (std::size_t e = 0; e < g.c.size(); ++e) wp_diff += !(p.ref.c[e] == g.c[e]) || p.ref.status[e] != g.status[e];
  fmt::print("  whole vs DGEMMs-only reference: {} of {} elements differ (hi, lo, tail, status){}\n", wp_diff, M * N,
             wp_diff ? "  <-- MISMATCH" : "");
  const double t_gpu = w.t;
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
  bool cpu = true, normal = false;
  std::vector<std::int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--no-cpu") cpu = false;
    else if (s == "--normal") normal = true;
    else sizes.push_back(std::atoll(argv[i]));
  }
  if (sizes.empty()) sizes = {256, 512, 1024, 4096, 8192};
  fmt::print("bench_oracle_gemm_gpu: {} | {} host threads | fp32 inputs {} | engine {}\n", bench::cpu_model(),
             thread_count(), normal ? "standard normal" : "uniform in [-1, 1)", engine->name());
  for (const std::int64_t n : sizes) run(n, *engine, cpu, normal);
  return 0;
}
