// suites/diagnose/diagnose_alpha_beta.cpp — see diagnose_alpha_beta.hpp.
#include "suites/diagnose/diagnose_alpha_beta.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "oracle/refvalue.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

/// A value of an alpha/beta form and a bound on its distance from the form's exact function of t (the form with its
/// roundings of t-dependent values removed; roundings of alpha', beta c and C are the same whatever t, so exact there).
struct Tracked {
  double v = 0, e = 0;
};

/// One correct rounding to nearest of the exact a + b into f (two_sum: no double rounding).
double rn_sum(const Format& f, double a, double b) { return to_double(f, round_ref(f, ref_from_two_sum(a, b), Rounder::nearest(f)).code); }

}  // namespace

AbEval ab_evaluate(AbForm f, const EpilogueDiagnoseCase& c, double t, double cv, double dt, const Format& out) {
  const double u32 = f32.unit_roundoff(), eta32 = f32.min_subnormal(), uo = out.unit_roundoff(), etao = out.min_subnormal();
  double su = 0, k = 1;
  const auto round_t = [&](const Format& fm, Tracked a, double u, double eta) {  // a t-dependent rounding
    const double r = quantize(fm, a.v);
    su += u;
    return Tracked{r, a.e + u * std::fabs(r) + eta / 2};
  };
  const auto sum_t = [&](const Format& fm, Tracked a, double b, double u, double eta) {  // RN(a + b), b t-independent
    const double r = rn_sum(fm, a.v, b);
    su += u;
    return Tracked{r, a.e + u * std::fabs(r) + eta / 2};
  };
  const auto scale = [&](double s, Tracked a) {  // s a exact in double (two values of at most 24 significant bits)
    k *= std::max(1.0, std::fabs(s));
    return Tracked{s * a.v, std::fabs(s) * a.e};
  };
  const double sab = rn_sum(f32, c.scale_a * c.scale_b, std::fma(c.scale_a, c.scale_b, -(c.scale_a * c.scale_b)));  // RN(scale_a scale_b)
  double ap = quantize(f32, quantize(f32, c.alpha * c.scale_a) * c.scale_b);                                         // the declared alpha'
  if (f == AbForm::ScalesFolded) {
    const double p = c.alpha * c.scale_a;  // exact; p scale_b as hi + lo
    ap = rn_sum(f32, p * c.scale_b, std::fma(p, c.scale_b, -(p * c.scale_b)));
  }
  if (f == AbForm::AlphaDropped) ap = sab;
  double cc = cv;
  if (f == AbForm::CToF32) cc = quantize(f32, cv);
  if (f == AbForm::CToOut) cc = quantize(out, cv);
  const bool with_c = c.beta != 0 && f != AbForm::BetaIgnored;
  const double bc = c.beta * cc;  // exact: beta of fp32, c of at most 24 bits
  const double bc_r = f == AbForm::BetaCInOut ? quantize(out, bc) : quantize(f32, bc);
  AbEval r;
  Tracked z{t, 0};
  if (f == AbForm::OneRounding || f == AbForm::F32Once || f == AbForm::FmaAlphaT) {
    z = scale(ap, z);  // alpha' t exact
    const double add = with_c ? (f == AbForm::FmaAlphaT ? bc_r : bc) : 0.0;
    if (f == AbForm::OneRounding) {
      const RefValue v = ref_from_two_sum(z.v, add);
      r.z0 = v.hi, r.z0_lo = v.lo;
      r.spread = (k * dt) * (1 + 0x1p-40);
      return r;
    }
    z = sum_t(f32, z, add, u32, eta32);
  } else {
    if (f == AbForm::ScalesOnAcc) {
      z = round_t(f32, scale(sab, z), u32, eta32);  // RN(RN(scale_a scale_b) t), then alpha alone
      ap = c.alpha;
    }
    z = round_t(f32, scale(ap, z), u32, eta32);                          // RN(alpha' t)
    if (f == AbForm::AlphaTwice) z = round_t(f32, scale(c.alpha, z), u32, eta32);
    if (f == AbForm::DRoundedBeforeC) z = round_t(out, z, uo, etao);    // D in the output format first
    if (with_c) z = sum_t(f32, z, f == AbForm::FmaBetaC ? bc : bc_r, u32, eta32);
  }
  r.z0 = z.v;
  r.spread = (k * dt + 2 * z.e) * (1 + 2 * su * k) * (1 + 0x1p-40);
  return r;
}

std::vector<AbHypothesis> alpha_beta_forms(const EpilogueDiagnoseCase& c, const Format& out) {
  std::vector<AbHypothesis> r;
  const std::string of = std::string(out.tag);
  const bool with_c = c.beta != 0 && !c.mats.empty() && !c.mats.front().c.empty();
  const bool nothing_after = c.ec.bias == BiasKind::None && c.ec.activation == Activation::None && c.scale_d == 1;
  const double ap = quantize(f32, quantize(f32, c.alpha * c.scale_a) * c.scale_b);
  const int factors = (c.alpha != 1) + (c.scale_a != 1) + (c.scale_b != 1);
  const auto any_c = [&](const Format& f) {
    for (const EpilogueMatrix& mx : c.mats)
      for (double v : mx.c)
        if (quantize(f, v) != v) return true;
    return false;
  };
  const auto form = [&](AbForm f, const char* id, std::string what) { r.push_back({f, id, std::move(what)}); };
  if (with_c) form(AbForm::FmaBetaC, "ab=fma_beta_c", "beta C added unrounded, RN(RN(alpha' t) + beta C): an fma after alpha' t (two fp32 operations)");
  if (with_c && ap != 1) {
    form(AbForm::FmaAlphaT, "ab=fma_alpha_t", "alpha' t added unrounded, RN(alpha' t + RN(beta C)): fma(alpha', t, RN(beta C))");
    form(AbForm::F32Once, "ab=f32_once", "alpha' t + beta C rounded once into fp32 (both products exact), then into the output format");
  }
  if (nothing_after && (with_c || ap != 1))
    form(AbForm::OneRounding, "ab=one_rounding", fmt::format("alpha' t + beta C rounded once, straight into {} (no fp32 rounding)", of));
  if (factors >= 2) {
    form(AbForm::ScalesFolded, "ab=scales_folded", "alpha' = RN(alpha scale_a scale_b) folded with one rounding, then alpha' t");
    form(AbForm::ScalesOnAcc, "ab=scales_on_acc", "the scales applied to the accumulator first, RN(alpha RN(RN(scale_a scale_b) t))");
  }
  if (with_c && any_c(f32)) form(AbForm::CToF32, "c_to_f32", "C rounded into fp32 before it is used");
  if (with_c && any_c(out)) form(AbForm::CToOut, "c_to_out", fmt::format("C rounded into {} before it is used", of));
  if (with_c && !(out == f32)) {
    form(AbForm::BetaCInOut, "beta_c_in_out", fmt::format("beta C computed in {}: RN_{}(beta C)", of, of));
    form(AbForm::DRoundedBeforeC, "d_rounded_before_c", fmt::format("alpha' t rounded into {} (D written) before beta C is added", of));
  }
  if (with_c) form(AbForm::BetaIgnored, "fault=beta_ignored", "beta C not added (beta ignored: the catalogue's fault beta_ignored)");
  if (c.alpha != 1 && c.alpha != 0) form(AbForm::AlphaTwice, "alpha_twice", "alpha applied twice, RN(alpha RN(alpha' t))");
  if (c.alpha != 1) form(AbForm::AlphaDropped, "alpha_dropped", "alpha not applied (alpha' = RN(scale_a scale_b))");
  return r;
}

}  // namespace fpcert
