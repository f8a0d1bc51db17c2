// suites/diagnose/diagnose_alpha_beta.hpp — the alpha/beta hypotheses of the epilogue diagnosis (docs/diagnose.md, "alpha,
// beta and C"; issue 47): how a kernel forms Z0 = alpha' t + beta C from its fp32 accumulator t — the declared
// RN(RN(alpha' t) + RN(beta c)), or with fewer roundings (fma), the scales folded otherwise, C or beta C or alpha' t
// rounded into the output format first, beta ignored, alpha applied twice or not at all — each emulated with IEEE fp32
// operations (correct roundings of exact results) with a bound on how far a kernel computing the same from an accumulator
// dt away may lie. suites/diagnose/diagnose_epilogue.cpp composes them with the epilogue's steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "suites/diagnose/diagnose_epilogue.hpp"

namespace fpcert {

/// How Z0 = alpha' t + beta c is formed from the f32 accumulator t (docs/diagnose.md, "alpha, beta and C"). The declared
/// form is kernels/kernel.hpp's (and the fp32 epilogue models'): alpha' = RN(RN(alpha scale_a) scale_b), Z0 =
/// RN(RN(alpha' t) + RN(beta c)), every RN an fp32 rounding to nearest; each other form changes one thing.
enum class AbForm : std::uint8_t {
  Declared,
  FmaBetaC,         ///< RN(RN(alpha' t) + beta c): fma(beta, c, RN(alpha' t)), two fp32 operations
  FmaAlphaT,        ///< RN(alpha' t + RN(beta c)): fma(alpha', t, RN(beta c))
  F32Once,          ///< RN(alpha' t + beta c): one fp32 rounding of the exact sum
  OneRounding,      ///< D = RN_out(alpha' t + beta c): no fp32 rounding, one rounding into the output format
  ScalesFolded,     ///< alpha' = RN(alpha scale_a scale_b): the scalars folded with one rounding
  ScalesOnAcc,      ///< RN(alpha RN(RN(scale_a scale_b) t)): the scales applied to the accumulator, alpha after
  CToF32,           ///< C rounded into fp32 before it is used
  CToOut,           ///< C rounded into the output format before it is used
  BetaCInOut,       ///< beta c computed in the output format: RN_out(beta c)
  DRoundedBeforeC,  ///< RN_out(RN(alpha' t)): D written in the output format, beta c added to it after
  BetaIgnored,      ///< Z0 = RN(alpha' t)
  AlphaTwice,       ///< RN(RN(alpha RN(alpha' t)) + RN(beta c))
  AlphaDropped,     ///< alpha not applied (the scales are): alpha' = RN(scale_a scale_b)
};

/// Z0 under form f, from the accumulator t, and how far the kernel's Z0 may lie from it when its accumulator lies
/// within dt of t, computed the same way: K dt + e on the hypothesis's side (K the largest coefficient of t along the
/// chain, e its tracked roundings), and the same roundings on the kernel's side at values that far apart — to first
/// order e again plus their units su times (K dt + e), taken twice for the margin. OneRounding leaves Z0 exact
/// (z0 + z0_lo): the output rounding is the only one. t: the accumulator's value; cv: C's value (0 without C); dt: how far
/// the kernel's accumulator may lie from t.
struct AbEval {
  double z0 = 0, z0_lo = 0, spread = 0;
};
AbEval ab_evaluate(AbForm f, const EpilogueDiagnoseCase& c, double t, double cv, double dt, const Format& out);

/// One alpha/beta hypothesis: its form, id and words.
struct AbHypothesis {
  AbForm form = AbForm::Declared;
  std::string id, what;
};
/// The forms of Z0 from t that differ from the declared one on this case's scalars (docs/diagnose.md, "alpha, beta and
/// C": a form equal to it for every t is left out), for a case that passes alpha, beta and C.
std::vector<AbHypothesis> alpha_beta_forms(const EpilogueDiagnoseCase& c, const Format& out);

}  // namespace fpcert
