// bench/ozaki2.cpp — fpcert's Ozaki-II FP64 emulation: correct bits against the exact reference vs the number of moduli
// vs time, in one run on the same data (docs/fp64.md, "The built-in Ozaki-II emulation"). Host: the CPU model
// (ozaki2::gemm) for each N next to Eigen's double GEMM (the speed anchor, fp64 arithmetic), with the bound's guaranteed
// bits and the largest error / bound. With --device instead: the INT8 tensor-core kernel for each N next to cublas_gemm_f64
// and cublas_gemm_f64_emulated_fixedpoint, each called directly on the same data (no domain check: every N measured;
// times: CUDA events, median of 5 after a warm-up; correct bits against the exact reference); the host models are
// skipped there (their plain integer loops would take hours at device sizes).
//
// Usage: bench_ozaki2 [--mnk M N K] [--data uniform|wide] [--moduli N1,N2,...] [--device]
//   uniform: [-1, 1) with 53 random bits; wide: exponents 2^-20..2^20 within every line, cancelling rows (host only).
#include <Eigen/Core>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "base/parallel.hpp"
#include "bench/machine.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/gemm/cpu/ozaki2.hpp"
#include "generators/problem.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/refvalue.hpp"
#include "suites/verdict/correct_bits.hpp"
#include "tests/support/ozaki2_data.hpp"

using namespace fpcert;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Args {
  std::int64_t m = 256, n = 256, k = 256;
  std::string data = "uniform";
  std::vector<int> moduli = {8, 10, 12, 14, 16, 18, 20};
  bool device = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--mnk" && i + 3 < argc) {
      a.m = std::atoll(argv[++i]);
      a.n = std::atoll(argv[++i]);
      a.k = std::atoll(argv[++i]);
    } else if (s == "--data" && i + 1 < argc) {
      a.data = argv[++i];
    } else if (s == "--moduli" && i + 1 < argc) {
      a.moduli.clear();
      std::stringstream ss(argv[++i]);
      for (std::string t; std::getline(ss, t, ',');) a.moduli.push_back(std::atoi(t.c_str()));
    } else if (s == "--device") {
      a.device = true;
    } else {
      fmt::print(stderr, "usage: bench_ozaki2 [--mnk M N K] [--data uniform|wide] [--moduli N1,N2,...] [--device]\n");
      std::exit(2);
    }
  }
  if (a.data != "uniform" && a.data != "wide") {
    fmt::print(stderr, "bench_ozaki2: --data is uniform or wide, got '{}'\n", a.data);
    std::exit(2);
  }
  if (a.m < 1 || a.n < 1 || a.k < 1) {
    fmt::print(stderr, "bench_ozaki2: M, N and K must be positive\n");
    std::exit(2);
  }
  return a;
}

std::vector<std::uint64_t> codes_of(const std::vector<double>& c) {
  std::vector<std::uint64_t> r(c.size());
  for (std::size_t x = 0; x < c.size(); ++x) r[x] = std::bit_cast<std::uint64_t>(c[x]);
  return r;
}

/// One device kernel on p, called directly (no domain check: the sweep measures every N on the same data): median of
/// 5 timed calls after a warm-up (CUDA events), correct bits of the last output against the exact reference.
struct DeviceRow {
  double ms = NAN;
  CorrectBitsStats cb;
  std::string error;
};
DeviceRow device_row(GemmKernel& k, DeviceApi& api, const Problem& p, const GemmRef& ref) {
  DeviceRow row;
  const Support sup = k.can_implement(p.m, p.n, p.k);
  if (!sup.ok) {
    row.error = "not supported: " + sup.reason;
    return row;
  }
  const std::size_t ab = p.a.data.size() * 8, bb = p.b.data.size() * 8, cb = static_cast<std::size_t>(p.m * p.n) * 8;
  void* da = api.alloc(ab);
  void* db = api.alloc(bb);
  void* dc = api.alloc(cb);
  api.to_device(da, p.a.data.data(), ab);
  api.to_device(db, p.b.data.data(), bb);
  GemmOperands ops;
  ops.m = p.m, ops.n = p.n, ops.k = p.k;
  ops.a = da, ops.lda = p.k, ops.b = db, ops.ldb = p.n, ops.c = dc, ops.ldc = p.n;
  ops.stream = api.stream();
  try {
    k.run(ops);  // warm-up
    api.synchronize(600000);
    std::vector<double> t;
    for (int r = 0; r < 5; ++r) {
      api.timer_start();
      k.run(ops);
      t.push_back(api.timer_stop_ms());
    }
    std::sort(t.begin(), t.end());
    row.ms = t[2];
    std::vector<double> c(static_cast<std::size_t>(p.m * p.n));
    api.to_host(c.data(), dc, cb);
    row.cb = correct_bits_stats(f64, codes_of(c), ref);
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  api.free(da);
  api.free(db);
  api.free(dc);
  return row;
}

void device_table(const Args& g, const Problem& p, const GemmRef& ref) {
  std::string why;
  auto cuda = make_cuda_api(&why);
  if (!cuda) {
    fmt::print("device: not available ({})\n", why);
    return;
  }
  fmt::print("\ndevice {}: {}x{}x{} {}\n{:<40} {:>10} {:>10} {:>8} {:>8}\n", cuda->info().name, g.m, g.n, g.k, g.data, "kernel", "ms",
             "vs dgemm", "cb min", "cb med");
  double dgemm_ms = NAN;
  auto print = [&](const std::string& name, const DeviceRow& r) {
    if (!r.error.empty()) fmt::print("{:<40} {}\n", name, r.error);
    else fmt::print("{:<40} {:>10.4f} {:>10.2f} {:>8} {:>8}\n", name, r.ms, r.ms / dgemm_ms, r.cb.min, r.cb.median);
  };
  for (const char* name : {"cublas_gemm_f64", "cublas_gemm_f64_emulated_fixedpoint"}) {
    auto k = make_gemm_kernel(name);
    if (!k) continue;
    const DeviceRow r = device_row(*k, *cuda, p, ref);
    if (std::string(name) == "cublas_gemm_f64") dgemm_ms = r.ms;
    print(name, r);
  }
  for (int n : g.moduli) {
    auto k = make_ozaki2_int8_kernel(n);
    print(k->name(), device_row(*k, *cuda, p, ref));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args g = parse(argc, argv);
  Problem p;
  p.spec = "bench-ozaki2-" + g.data;
  p.source = &f64;
  p.m = g.m, p.n = g.n, p.k = g.k;
  p.a = Matrix(g.m, g.k);
  p.b = Matrix(g.k, g.n);
  if (g.data == "wide") {
    test::wide_cancelling(g.m, g.n, g.k, 40, 20261205, p.a.data, p.b.data);
  } else {
    test::Draw d{20261205};
    for (double& v : p.a.data) v = 2 * d() - 1;
    for (double& v : p.b.data) v = 2 * d() - 1;
  }
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  std::vector<double> exact_abs(ref.c.size());
  for (std::size_t x = 0; x < ref.c.size(); ++x) exact_abs[x] = std::fabs(ref.c[x].hi);
  fmt::print("bench_ozaki2: {}x{}x{}, data {}, {} thread(s), {} (load {})\n", g.m, g.n, g.k, g.data, thread_count(), bench::cpu_model(),
             bench::load_average());
  // The anchor: Eigen's double GEMM on the same data (fp64 arithmetic, its own order).
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> A(p.a.data.data(), g.m, g.k), B(p.b.data.data(), g.k, g.n);
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> C(g.m, g.n);
  double t0 = now();
  C.noalias() = A * B;
  const double eigen_s = now() - t0;
  const std::vector<double> ce(C.data(), C.data() + g.m * g.n);
  const CorrectBitsStats ecb = correct_bits_stats(f64, codes_of(ce), ref);
  // "host s": the host route (host_residues, the CRT sum: the bitwise tier's); "kernel route s": the same scheme through
  // the kernel's symmetric_residue and Garner digits, run next to it (each the faster of two runs, alternating);
  // "differ": elements where the two disagree.
  fmt::print("{:>7} {:>6} {:>10} {:>9} {:>8} {:>8} {:>10} {:>12} {:>15} {:>9} {:>7}\n", "moduli", "alpha", "host s", "vs Eigen", "cb min", "cb med",
             "bound min", "err/bound", "kernel route s", "host x", "differ");
  fmt::print("{:>7} {:>6} {:>10.4f} {:>9.1f} {:>8} {:>8} {:>10} {:>12}\n", "Eigen", "-", eigen_s, 1.0, ecb.min, ecb.median, "-", "-");
  std::string terms;
  for (int n : g.device ? std::vector<int>{} : g.moduli) {
    const ozaki2::Plan pl = ozaki2::make_plan(n);
    ozaki2::Scaling sc;
    // The two routes alternately, twice each, the faster run of each kept (the first call of either pays for the
    // pooled buffers' fresh pages).
    std::vector<double> c, ck;
    double s = 1e300, s_kernel = 1e300;
    for (int rep = 0; rep < 2; ++rep) {
      t0 = now();
      c = ozaki2::gemm(pl, p.a.data.data(), p.b.data.data(), g.m, g.n, g.k, &sc);
      s = std::min(s, now() - t0);
      t0 = now();
      ck = ozaki2::gemm(pl, p.a.data.data(), p.b.data.data(), g.m, g.n, g.k, nullptr, ozaki2::Route::Kernel);
      s_kernel = std::min(s_kernel, now() - t0);
    }
    std::int64_t differ = 0;
    for (std::size_t x = 0; x < c.size(); ++x) differ += std::bit_cast<std::uint64_t>(c[x]) != std::bit_cast<std::uint64_t>(ck[x]);
    const std::vector<double> bnd = ozaki2::bound(sc, p.a.data.data(), p.b.data.data(), exact_abs, g.m, g.n, g.k);
    int bound_min = 53;
    double worst = 0;
    std::size_t worst_at = 0;
    for (std::size_t x = 0; x < c.size(); ++x) {
      bound_min = std::min(bound_min, ozaki2::guaranteed_bits(bnd[x], to_double(f64, round_ref(f64, ref.c[x], Rounder::nearest(f64)).code)));
      const double f = std::fabs((c[x] - ref.c[x].hi) - ref.c[x].lo) / bnd[x];
      if (f > worst) worst = f, worst_at = x;
    }
    if (n == g.moduli.back())
      terms = fmt::format("the bound at the worst element of N = {} ({:.3g} of it used): {}", n, worst,
                          ozaki2::bound_terms(sc, p.a.data.data(), p.b.data.data(), g.m, g.n, g.k, static_cast<std::int64_t>(worst_at) / g.n,
                                              static_cast<std::int64_t>(worst_at) % g.n));
    const CorrectBitsStats cb = correct_bits_stats(f64, codes_of(c), ref);
    fmt::print("{:>7} {:>6} {:>10.4f} {:>9.1f} {:>8} {:>8} {:>10} {:>12.3g} {:>15.4f} {:>9.2f} {:>7}\n", n, sc.alpha, s, s / eigen_s, cb.min, cb.median,
               bound_min, worst, s_kernel, s_kernel / s, differ);
  }
  if (!terms.empty()) fmt::print("{}\n", terms);
  if (g.device) device_table(g, p, ref);
  return 0;
}
