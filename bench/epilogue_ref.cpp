// bench/epilogue_ref.cpp — the cost of the fused epilogue's reference (suites/ops/gemm/epilogue.hpp) beside the plain exact
// GEMM reference, measured side by side in one run: m x n x k of bf16 inputs (uniform [-1, 1) rounded), f32 output, bias
// per column, alpha 0.7 and beta -1.3 with C; grade_epilogue with no activation (two exact GEMMs: A'B' and the augmented
// one), with GELU (erf) (the same plus m n activations in MPFR at 200 bits), against gemm_reference(A', B') alone.
// Usage: bench_epilogue_ref [m] [n] [k] [activation]   (default 256 256 256 gelu_erf; FPCERT_THREADS sets the threads)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/parallel.hpp"
#include "bench/machine.hpp"
#include "generators/generate.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/ops/gemm/epilogue.hpp"

using namespace fpcert;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t m = argc > 1 ? std::atoll(argv[1]) : 256, n = argc > 2 ? std::atoll(argv[2]) : 256, k = argc > 3 ? std::atoll(argv[3]) : 256;
  const auto act = parse_activation(argc > 4 ? argv[4] : "gelu_erf");
  if (!act) {
    std::fprintf(stderr, "bench_epilogue_ref: unknown activation '%s' (none, relu, gelu_erf, gelu_tanh, silu)\n", argv[4]);
    return 2;
  }
  std::printf("epilogue reference, %lld x %lld x %lld, bf16 inputs, f32 output, bias per column, alpha/beta with C; %u thread(s); %s; "
              "load %s\n",
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), thread_count(), bench::cpu_model().c_str(),
              bench::load_average().c_str());
  const Problem p = generate("uniform:m=" + std::to_string(m) + ",n=" + std::to_string(n) + ",k=" + std::to_string(k) + ",seed=5");
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &bf16;
  t.alpha_beta = true;
  t.epilogue.bias = bit(BiasKind::PerColumn);
  t.epilogue.activations = bit(*act);
  t.epilogue.func_rel_err = 0x1p-22;
  const std::vector<double> a = rounded_into(p.a.data, bf16, Rounding::NearestEven), b = rounded_into(p.b.data, bf16, Rounding::NearestEven);
  const double alpha = epilogue_scalar(0.7, t), beta = epilogue_scalar(-1.3, t);
  const std::vector<double> c = alpha_beta_c(AlphaBetaCase{true, 0.7, -1.3, false, 3}, f32, m, n);

  // The plain exact GEMM reference of the same inputs.
  auto t0 = std::chrono::steady_clock::now();
  const GemmRef plain = gemm_reference(MatrixView::row_major(a.data(), m, k), MatrixView::row_major(b.data(), k, n));
  const double s_plain = seconds_since(t0);
  // D codes: the exact Z rounded to f32 (what the grader reads; its cost does not depend on them).
  std::vector<std::uint64_t> codes(static_cast<std::size_t>(m * n));
  for (std::size_t x = 0; x < codes.size(); ++x) codes[x] = round_ref(f32, plain.c[x], Rounder::nearest(f32)).code;

  double s_none = 0, s_act = 0;
  for (const Activation which : {Activation::None, *act}) {
    EpilogueCase ec;
    ec.active = true;
    ec.bias = BiasKind::PerColumn;
    ec.activation = which;
    ec.bias_seed = 11;
    const std::vector<double> bias = epilogue_bias(ec, epilogue_bias_format(t), m, n);
    EpilogueGrade g;
    g.problem = &p;
    g.traits = &t;
    g.epilogue = &ec;
    g.alpha = alpha;
    g.beta = beta;
    g.c = &c;
    g.bias = &bias;
    g.codes = &codes;
    CaseResult r;
    t0 = std::chrono::steady_clock::now();
    grade_epilogue(g, r);
    (which == Activation::None ? s_none : s_act) = seconds_since(t0);
  }
  std::printf("  gemm_reference(A', B')                 %8.3f s   1.00 x\n", s_plain);
  std::printf("  grade_epilogue, no activation          %8.3f s   %.2f x\n", s_none, s_none / s_plain);
  std::printf("  grade_epilogue, %-22s %8.3f s   %.2f x", std::string(to_string(*act)).c_str(), s_act, s_act / s_plain);
  if (*act != Activation::None && *act != Activation::Relu)  // the others are exact on the RefValue: no MPFR
    std::printf("   (%.2f us of one thread per element for the activation)", (s_act - s_none) / static_cast<double>(m * n) * 1e6 * thread_count());
  std::printf("\n");
  return 0;
}
