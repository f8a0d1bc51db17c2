// suites/ops/gemm/alpha_beta.hpp — D = alpha (A B) + beta C as BLAS calls a GEMM (docs/suites.md,
// "epilogue.alpha_beta"): the case's C, the scalars as the kernel gets them, the exact D and its per-element bound.
//
// The exact D: alpha, beta values of the accumulator format, A', B' the inputs as the kernel receives them and c
// values of the output format (all of at most 24 significant bits for the kernels that declare alpha/beta), so
// alpha a'_ik and beta c_ij are exact doubles, and D_ij = sum_k (alpha a'_ik) b'_kj + beta c_ij is the product of
// A'' = [alpha A' | beta C] (m x (k + n)) and B'' = [B' ; I_n]: the oracle's exact GEMM reference (gemm_reference)
// gives it correctly rounded, no error of its own (each product exact; docs/oracle.md). beta = 0: A'' = alpha A'.
//
// The bound (declared epilogue: acc the accumulated product, RN in the accumulator format with unit u, eta its
// smallest subnormal; D = RN_out(RN(RN(alpha acc) + RN(beta c))), or any fma form with fewer roundings):
// acc = ref' + d with |d| <= E (the envelope of the accumulation, suites/verdict/envelope.hpp, without output term);
// t1 = alpha acc (1 + e1) + n1, t2 = beta c (1 + e2) + n2, s = (t1 + t2)(1 + e3) + n3, |e| <= u, |n| <= eta / 2.
// s - D = alpha d + alpha acc e1 + beta c e2 + (t1 + t2) e3 + n1 (1 + e3) + n2 (1 + e3) + n3, so with
// P = |alpha| (|ref'| + E) + |beta c| (>= |alpha acc| + |beta c|; |t1 + t2| <= (1 + u) P):
//   |s - D| <= X = |alpha| E + (2u + u^2) P + 2 eta          (3 (1 + u) eta / 2 <= 2 eta)
//   |D^ - D| <= X + u_out (|D| + X) + eta_out / 2            (u_out = 0 when the output is the accumulator format)
// An accumulator declared to round otherwise than to nearest (toward zero: cuBLAS's tensor-core kernels): the same
// with 2u and 2 eta, a directed rounding's bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "kernels/kernel.hpp"
#include "results/results.hpp"
#include "suites/verdict/bound.hpp"  // alpha_beta_unsupported

namespace fpcert {

/// `count` values uniform in [lo, hi) from `seed` (splitmix64, 53 random bits each: lo + (hi - lo) u), each rounded to
/// nearest into `f`: the draw of alpha_beta_c and of the epilogue's bias (suites/ops/gemm/epilogue.hpp).
std::vector<double> uniform_rounded(std::uint64_t seed, std::size_t count, double lo, double hi, const Format& f);

/// Each value of `v` rounded into `f` under `r`: the case's inputs as a kernel of input format `f` receives them.
std::vector<double> rounded_into(const std::vector<double>& v, const Format& f, Rounding r);

/// The case's C: m x n values (row-major) uniform in [-1, 1) from ab.c_seed (splitmix64), rounded to nearest into
/// `out`. beta = 0: all NaN (a kernel that reads C gets NaN; BLAS says it must not read it).
std::vector<double> alpha_beta_c(const AlphaBetaCase& ab, const Format& out, std::int64_t m, std::int64_t n);

/// alpha or beta as the kernel gets it: rounded to nearest into the scalar format (the accumulator's).
double alpha_beta_scalar(double v, const KernelTraits& t);


struct AlphaBetaGrade {
  const Problem* problem = nullptr;
  const KernelTraits* traits = nullptr;
  double alpha = 1, beta = 0;                        ///< as the kernel got them (alpha_beta_scalar)
  const std::vector<double>* c = nullptr;            ///< C's values, row-major m x n (alpha_beta_c)
  const std::vector<std::uint64_t>* codes = nullptr; ///< the kernel's D, codes of the output format, row-major m x n
  std::int64_t unwritten = 0, first_unwritten = -1;  ///< the runner's pre-fill check (out of place only)
};

/// Per-element allowance of |D^ - D| (the header's X + u_out (|D| + X) + eta_out / 2), rounded upward enough to
/// cover the double arithmetic. E: the accumulation's envelope of the element; ref_abs = |ref'|, c_abs = |c|,
/// d_abs = |D|; u, eta: the accumulator format's; u_out, eta_out: the output rounding's (0 when none).
double alpha_beta_allowed(double alpha, double beta, double E, double ref_abs, double c_abs, double d_abs, double u, double eta,
                          double u_out, double eta_out);

/// Grade D against the exact alpha (A'B') + beta C: the envelope check (every finite element within its allowance),
/// the nonfinite check (NaN or Inf where D is finite in the output format), the unwritten check; tier envelope. The
/// epilogue's grader does it (grade_epilogue, suites/ops/gemm/epilogue.hpp: the case without bias, activation or
/// scales), so its allowance is epilogue_allowed's, which is alpha_beta_allowed's to first order in u.
void grade_alpha_beta(const AlphaBetaGrade& in, CaseResult& out);

}  // namespace fpcert
