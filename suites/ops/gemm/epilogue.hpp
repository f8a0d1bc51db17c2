// suites/ops/gemm/epilogue.hpp — a GEMM's fused epilogue as cuBLASLt defines it (docs/epilogue.md; issue 37):
//   Z = alpha' (A'B') + beta C + bias,   alpha' = alpha scale_a scale_b,
//   D = RN_out(scale_d act(Z)),          amax = max_ij |act(Z_ij)|  (before scale_d),
// the exact D, its per-element bound printed term by term, and the amax check.
//
// The exact Z: alpha, the scales, beta, the bias and C values of at most 26 significant bits, so beta c_ij and the bias
// are exact doubles, and alpha' (up to 78 bits) is cut exactly into pieces p_l of at most 53 - p_A bits each, so that
// every p_l a'_ik is one too; Z_ij is one exact GEMM of augmented operands (suites/ops/gemm/alpha_beta.hpp's
// construction, A'' = [p_1 A' | ... | beta C | ...] and B'' = [B' ; ... ; I_n ; ...], with one more column of A'' and
// row of B'': ones and the bias per column, or the bias per row and ones): gemm_reference gives it as a RefValue (106+
// bits). act(Z) and scale_d act(Z): MPFR at 200 bits from hi + lo; for z > 0 the small part z - act(z) on its own, so
// that hi, lo and the tail of scale_d (z - c) are decided exactly however small c is (docs/epilogue.md, "The reference").
//
// The bound (derivation in docs/epilogue.md, "The bound"; u, eta the accumulator format's unit roundoff and smallest
// subnormal, doubled for a directed accumulator rounding; gamma_j = j u / (1 - j u); E the accumulation's envelope of
// A'B', Q = |A'B'| + E; r the roundings forming alpha' (the factors among alpha, scale_a, scale_b other than 1, less one,
// at least 0: the chain alpha' acc rounds r + 1 times, never when alpha' is 1 with r = 0: the gamma_{r+1} term is then 0);
// a bias format wider than the arithmetic's adds its conversion, u |bias| + eta / 2:
//   |Z^ - Z| <= X = |alpha'| E + gamma_{r+1} |alpha'| Q + u |beta c| + gamma_j (|alpha'| Q (1 + gamma_{r+1})
//                   + |beta c| (1 + u) + |bias|) + 3 eta,        j = the addends of Z beyond the first
//   round_before_bias (beta != 0 and a bias): X += u_out (|alpha'| Q (1 + gamma_{r+1}) + |beta c| (1 + u) + X) + eta_out / 2
//   round_before_act: X' = X + u_out (|Z| + X) + eta_out / 2
//   |act^(Z^) - act(Z)| <= Y = L X' + rel (|act(Z)| + L X') + abs (|Z| + X') + floor     (ActivationEnvelope, L Lipschitz)
//   scale_d: Y' = |scale_d| Y + u |scale_d| (|act(Z)| + Y) + eta / 2   (Y' = Y when scale_d is 1 exactly)
//   |D^ - D| <= Y' + u_out (|D| + Y') + eta_out / 2
// amax: max_ij |act(Z_ij)| - Y_ij <= amax^ <= max_ij |act(Z_ij)| + Y_ij (+ the rounding of amax into its format).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "kernels/kernel.hpp"
#include "oracle/refvalue.hpp"
#include "results/results.hpp"

namespace fpcert {

/// The bias vector's format: EpilogueTraits::bias_format, or the output format when it names none.
const Format& epilogue_bias_format(const KernelTraits& t);

/// The case's bias: n values (PerColumn) or m (PerRow) uniform in [-2, 2) from ec.bias_seed (splitmix64), rounded to
/// nearest into `f`; empty when the case has no bias.
std::vector<double> epilogue_bias(const EpilogueCase& ec, const Format& f, std::int64_t m, std::int64_t n);

/// A scale factor as the kernel gets it: rounded to nearest into the accumulator format.
double epilogue_scalar(double v, const KernelTraits& t);

/// Why the kernel cannot take this epilogue case (empty: it can): a bias kind, activation, FP8 scaling or amax it does
/// not declare; a func_rel_err outside [0, 2^-4) for an activation that calls one; alpha/beta asked (`ab` active) of a
/// kernel that does not declare it; formats too wide for the exact construction; block-scaled kernels. Every reason,
/// joined by "; ".
std::string epilogue_unsupported(const KernelTraits& t, const EpilogueCase& ec, const AlphaBetaCase& ab = {});

/// act(hi + lo) (hi + lo an exact double-double), in MPFR at 200 bits, times `scale` (exact), as a RefValue.
RefValue activation_exact(Activation a, double hi, double lo, double scale = 1);

/// sup_x |act'(x)|, rounded upward: the factor by which an error in Z reaches act(Z). ReLU 1, GELU (erf) 1.12891,
/// GELU (tanh) 1.12900, SiLU 1.09984 (docs/epilogue.md derives each; a test checks them against MPFR derivatives).
double activation_lipschitz(Activation a);

/// How far the kernel's activation may lie from the exact one at the same argument s (the activation's arithmetic in a
/// format of unit u and smallest subnormal eta, calling elementary functions of relative error f):
/// |act^(s) - act(s)| <= rel |act(s)| + abs |s| + floor. ReLU: exact (all 0).
struct ActivationEnvelope {
  double rel = 0, abs = 0, floor = 0;
  std::string derivation;  ///< the terms in words, for the report
};
ActivationEnvelope activation_envelope(Activation a, double u, double eta, double f);

/// One element's allowance (the header's Y' + u_out (|D| + Y') + eta_out / 2), rounded upward enough to cover the
/// double arithmetic, and Y (the pre-scale_d, pre-output allowance the amax check uses).
struct EpilogueAllowance {
  double d = 0;  ///< |D^ - D|
  double y = 0;  ///< |act^(Z^) - act(Z)|
};

/// The per-element terms of the bound (the header's notation): alpha_eff = alpha', alpha_roundings = r, E, ref_abs =
/// |A'B'|, beta_c = |beta c|, bias_abs, z_abs = |Z|, act_abs = |act(Z)|, d_abs = |D|.
struct EpilogueElement {
  double alpha_eff = 1;
  int alpha_roundings = 0;
  double E = 0, ref_abs = 0, beta_c = 0, bias_abs = 0, z_abs = 0, act_abs = 0, d_abs = 0;
};
/// The bound of one element for this kernel and case (scale_d as the kernel got it).
EpilogueAllowance epilogue_allowed(const KernelTraits& t, const EpilogueCase& ec, double scale_d, const EpilogueElement& e);

/// What grade_epilogue needs: the case, as the kernel got it.
struct EpilogueGrade {
  const Problem* problem = nullptr;
  const KernelTraits* traits = nullptr;
  const EpilogueCase* epilogue = nullptr;
  double alpha = 1, beta = 0;                        ///< as the kernel got them (alpha_beta_scalar)
  const std::vector<double>* c = nullptr;            ///< C's values, row-major m x n (alpha_beta_c); null when beta = 0
  const std::vector<double>* bias = nullptr;         ///< epilogue_bias; null or empty when none
  double scale_a = 1, scale_b = 1, scale_d = 1;      ///< as the kernel got them (epilogue_scalar)
  const std::vector<std::uint64_t>* codes = nullptr; ///< the kernel's D, codes of the output format, row-major m x n
  std::int64_t unwritten = 0, first_unwritten = -1;  ///< the runner's pre-fill check
};

/// The bounds the kernel's amax must lie within (max |act(Z)| -+ Y over the graded elements); merged over batches by
/// taking the max of each end.
struct AmaxInterval {
  double lo = 0, hi = 0;
  double exact = 0;          ///< max_ij |act(Z_ij)| (rounded to nearest)
  std::int64_t index = -1;   ///< where it is reached
};

/// Grade D against the exact scale_d act(alpha' A'B' + beta C + bias): the envelope check with its terms printed
/// (CaseResult::envelope.terms), the nonfinite and unwritten checks; tier envelope. Returns the amax interval of
/// this matrix (for check_amax).
AmaxInterval grade_epilogue(const EpilogueGrade& in, CaseResult& out);

/// The amax check (CheckKind::Amax): the kernel's amax (a value of the accumulator format) within `iv`, widened by
/// the rounding of amax into the accumulator format.
void check_amax(double got, const AmaxInterval& iv, const KernelTraits& t, CaseResult& out);

}  // namespace fpcert
