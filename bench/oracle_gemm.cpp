// bench/oracle_gemm.cpp — the exact GEMM reference next to Eigen's double GEMM and MPFR, in one run on
// the same cores: Eigen (not exact: the speed anchor), the fast oracle, MPFR on a sample of rows
// with its cost extrapolated to the whole matrix; then the ratios.
//
// Usage: bench_oracle_gemm [N ...]           square problems (default: 512 1024)
//        bench_oracle_gemm --mnk M N K [...]  one problem of that shape (no MPFR sample above 2^33 products)
// Inputs: fp32 values uniform in [-1, 1), row-major. Threads: $FPCERT_THREADS or all cores.
#include <Eigen/Core>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "base/parallel.hpp"
#include "bench/machine.hpp"
#include "bench/uniform_inputs.hpp"
#include "oracle/gemm_ref.hpp"

using namespace fpcert;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

using bench::cpu_model;
using bench::load_average;

long peak_rss_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10) / 1024;
  return -1;
}

using bench::uniform_f32;

template <class F>
double median_time(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void run(std::int64_t M, std::int64_t N, std::int64_t K, unsigned threads) {
  const std::vector<double> a = uniform_f32(M * K, 1), b = uniform_f32(K * N, 2);
  const MatrixView A = MatrixView::row_major(a.data(), M, K), B = MatrixView::row_major(b.data(), K, N);
  const double big = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const int reps = big > 4e10 ? 1 : 3;

  // Eigen's double GEMM, the same threading as the oracle: parallel_for over column blocks of C,
  // Eigen single-threaded inside each (no OpenMP in this build).
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMat> EA(a.data(), M, K), EB(b.data(), K, N);
  RowMat EC(M, N);
  const std::int64_t cb = 128;
  const double t_eigen = median_time(reps, [&] {
    parallel_for(
        static_cast<std::uint64_t>((N + cb - 1) / cb), 1,
        [&](std::uint64_t b0, std::uint64_t b1, unsigned) {
          for (std::uint64_t blk = b0; blk < b1; ++blk) {
            const std::int64_t j0 = static_cast<std::int64_t>(blk) * cb, w = std::min(cb, N - j0);
            EC.middleCols(j0, w).noalias() = EA * EB.middleCols(j0, w);
          }
        },
        threads);
  });

  GemmRef ref;
  const double t_fast = median_time(reps, [&] { ref = gemm_reference(A, B, {threads}); });

  // MPFR on a sample of rows (all N columns), the same threads; cost per element extrapolated.
  const std::int64_t rows = std::max<std::int64_t>(threads, std::min<std::int64_t>(M, static_cast<std::int64_t>(4e6 / static_cast<double>(N * K)) + 1));
  const MatrixView As = MatrixView::row_major(a.data(), std::min(rows, M), K);
  const double t_sample = median_time(1, [&] { (void)gemm_reference_mpfr(As, B, {threads}); });
  const double elems_sample = static_cast<double>(std::min(rows, M) * N);
  const double t_mpfr = t_sample / elems_sample * static_cast<double>(M * N);

  // The sample agrees with the fast reference (a sanity check, not the test suite).
  const GemmRef chk = gemm_reference_mpfr(MatrixView::row_major(a.data(), 1, K), B, {threads});
  std::int64_t mismatches = 0;
  for (std::int64_t j = 0; j < N; ++j) mismatches += !(chk.c[static_cast<std::size_t>(j)] == ref.c[static_cast<std::size_t>(j)]);

  fmt::print("M=N={} K={}  (M={} N={}; load average {} at the end)\n", M == N ? std::to_string(M) : "-", K, M, N,
             load_average());
  fmt::print("  eigen double GEMM (not exact)     {:9.4f} s\n", t_eigen);
  fmt::print("  fast exact oracle                 {:9.4f} s   slices {} x {} bits, K block {}, {} GEMMs, fallbacks {}, "
             "fast elements {}/{}\n",
             t_fast, ref.info.slices, ref.info.beta, ref.info.kblock, ref.info.gemms, ref.fallbacks, ref.info.fast_elements,
             M * N);
  fmt::print("  MPFR, measured on {} rows         {:9.4f} s   ({:.1f} ns per product)\n", std::min(rows, M), t_sample,
             t_sample * threads / (elems_sample * static_cast<double>(K)) * 1e9);
  fmt::print("  MPFR, EXTRAPOLATED to {}x{}   {:9.2f} s\n", M, N, t_mpfr);
  fmt::print("  ratio oracle / eigen              {:9.2f}x   (goal <= 8x)\n", t_fast / t_eigen);
  fmt::print("  ratio MPFR / oracle per element   {:9.0f}x   (goal >= 100x)\n", t_mpfr / t_fast);
  fmt::print("  row 0 vs MPFR: {} mismatches; peak RSS so far {} MiB\n", mismatches, peak_rss_mib());
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned threads = thread_count();
  fmt::print("bench_oracle_gemm: {} | {} threads | fp32 inputs uniform in [-1, 1), row-major | Eigen {}.{}.{}\n",
             cpu_model(), threads, EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
  std::vector<std::array<std::int64_t, 3>> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--mnk" && i + 3 < argc) {
      shapes.push_back({std::atoll(argv[i + 1]), std::atoll(argv[i + 2]), std::atoll(argv[i + 3])});
      i += 3;
    } else {
      const std::int64_t n = std::atoll(argv[i]);
      shapes.push_back({n, n, n});
    }
  }
  if (shapes.empty()) shapes = {{512, 512, 512}, {1024, 1024, 1024}};
  for (const auto& s : shapes) run(s[0], s[1], s[2], threads);
  return 0;
}
