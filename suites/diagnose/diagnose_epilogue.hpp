// suites/diagnose/diagnose_epilogue.hpp — the diagnosis of a fused GEMM epilogue (docs/diagnose.md, "Epilogues"; issue 47
// for issue 37): from the exact Z = alpha' A'B' + beta C (+ bias), each hypothesis of what a kernel did after the
// accumulation — GELU's erf, tanh or sigmoid form, tanh through exp or with tanh.approx's 11 bits, SiLU through a
// sigmoid or a coarse exp, Z rounded into the output format before the activation, the activation computed in the
// output format, the bias after the activation, per row instead of per column, rounded into the output format first,
// scale_d twice or not at all — emulated operation by operation on the f32 accumulator's value, compared with the
// kernel's D bit for bit and by the hypothesis's own envelope, ranked and said in the diagnosis record. A case with
// alpha, beta and C (an ab_* case, or an epilogue case with C) also gets the hypotheses of how alpha' t + beta C is formed
// from the f32 accumulator t (docs/diagnose.md, "alpha, beta and C"): fewer roundings (fma), the scales folded otherwise,
// beta C or alpha' t rounded into the output format first, beta ignored, alpha applied twice or not at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/diagnosis.hpp"
#include "suites/diagnose/diagnose.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {

/// One matrix of an epilogue case (a batch of a strided case: each has its own), as the diagnosis needs it.
struct EpilogueMatrix {
  std::int64_t m = 0, n = 0;
  std::vector<double> z_hi, z_lo;   ///< the exact Z0 = alpha' A'B' + beta C (no bias) as hi + lo, row-major m x n
  std::vector<double> x0;           ///< the declared accumulation's envelope of Z0: |acc^ - Z0| <= x0 in any order
  std::vector<float> acc;           ///< the f32 value the hypotheses start from: Z0 in the declared order, or RN_f32(Z0)
  std::vector<std::uint64_t> got;   ///< the kernel's D, codes of the output format
  /// The alpha/beta hypotheses' start (empty: none): the f32 accumulator of A'B' alone (the declared order's, or
  /// RN_f32(A'B') when the order is unknown), the exact A'B' (hi + lo), the accumulation's envelope of A'B' in any
  /// order (|t_kernel - A'B'| <= e_ab) and C's values (empty when beta = 0).
  std::vector<float> t;
  std::vector<double> ab_hi, ab_lo, e_ab, c;
};

/// An epilogue case as the kernel got it and what it wrote.
struct EpilogueDiagnoseCase {
  std::string label;
  EpilogueCase ec;                  ///< bias kind, activation, scaling, amax
  std::vector<double> bias;         ///< the bias values (epilogue_bias, in the bias format); empty without a bias
  double scale_d = 1;               ///< as the kernel got it
  bool order_known = false;         ///< acc is the declared order's value (else RN_f32(Z0): the order is unknown)
  bool with_c = false;              ///< beta != 0: Z0 holds beta C (round_before_bias applies)
  std::vector<EpilogueMatrix> mats;
  std::optional<double> amax;       ///< the kernel's amax, when the case asks it and the runner read it
  /// The case's scalars as the kernel got them (alpha_beta_scalar, epilogue_scalar); `alpha_beta`: the case passes
  /// alpha, beta and C (AlphaBetaCase::active), so the alpha/beta hypotheses apply (EpilogueMatrix::t and its kin set).
  bool alpha_beta = false;
  double alpha = 1, beta = 0, scale_a = 1, scale_b = 1;
};

/// Diagnose an epilogue case against the declaration (KernelTraits::epilogue; the epilogue's arithmetic in fp32).
DiagnosisRecord diagnose_epilogue(const std::string& kernel, const KernelTraits& declared, const EpilogueDiagnoseCase& c,
                                  const DiagnoseOptions& opt = {});

/// Run kernel `k` on the suite case `cs` (whose epilogue or alpha/beta is active: an ab_* case is an epilogue of its
/// own, D = RN_out(alpha' t + beta C) with no bias nor activation) through the runner's own case run (guarded buffers,
/// the bias and amax checks), and diagnose its D; `status` receives the case's result. Throws InputError when the kernel
/// does not run on the case or its epilogue is not an fp32 one.
DiagnosisRecord diagnose_epilogue_kernel(GemmKernel& k, const std::string& suite, const CaseSpec& cs, const DiagnoseOptions& opt = {},
                                         CaseResult* status = nullptr);

}  // namespace fpcert
