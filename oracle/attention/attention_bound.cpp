// oracle/attention/attention_bound.cpp — the per-element bound of oracle/attention/attention_bound.hpp
// (docs/attention.md, "Bound", derives each factor).
#include "oracle/attention/attention_bound.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.6931471805599453;

__attribute__((format(printf, 1, 2))) std::string strf(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

/// (ulps + floor(per_x x)) ulp <= that many times 2u of the result.
double fn_rel(const ElemFnError& e, double x, double u) { return (e.ulps + std::floor(e.ulps_per_x * x)) * 2 * u; }

double gamma(double n, double u) { return n * u >= 1 ? kInf : n * u / (1 - n * u); }

/// Row quantities, element independent.
struct Row {
  bool ok = false, special = false;
  std::size_t n = 0;
  double u = 0, m = 0, s = 0, a0max = 0, amax = 0, span = 0, gam = 0, resc = 0, up = 0, down = 0, abs_l = 0;
  double d_hi = 1, d_lo = 1, wa = 0, we = 0, alpha_max = 0, u_p = 0, eta_p = 0, scale_abs = 1;
  double ex = 0;  ///< (1 + u)^r - 1: the descale factors' r roundings folded into the scale (and the LSE's)
  int nb = 0;
  std::vector<double> p, alpha;  ///< exact probabilities P_j; alpha_j the numerator's relative perturbation bound
  /// Far keys (docs/attention.md, "Bound", "Far keys"): a score so far below the row's max (a large finite mask: -1e9,
  /// finfo.min) that the kernel's exp of it is below exp(-kFar) even with every rounding of its argument; each adds at
  /// most far_weight (in the kernel's units) to l and far_weight |v_jc| to O~_c, and is left out of a0max, the span and
  /// alpha. nfar: how many.
  std::vector<char> far;
  std::int64_t nfar = 0;
  double far_weight = 0;
};

/// A far key's exp argument is below -kFar: e^-110 < 2^-158, below half the least subnormal of fp32 and every narrower
/// compute format (the bound's absolute terms carry what the exp's claim allows there).
constexpr double kFar = 110;

double zval(const AttentionScores& s, std::size_t j) { return s.z_hi[j] + s.z_lo[j]; }

Row row_of(const AttentionArith& a, const AttentionRowData& d) {
  Row r;
  const AttentionScores& sc = *d.scores;
  r.n = sc.z_hi.size();
  if (sc.nan || sc.visible == 0) {
    r.special = true;
    return r;
  }
  r.u = a.compute->unit_roundoff();
  const double u = r.u, s = d.scale;
  r.m = -kInf;
  double lo = kInf;
  for (std::size_t j = 0; j < r.n; ++j)
    if (sc.z_hi[j] != -kInf) r.m = std::max(r.m, zval(sc, j)), lo = std::min(lo, zval(sc, j));
  // a0_j: |(the kernel's argument before the shift) - z_j| (docs/attention.md, "Bound", steps 1-2).
  std::vector<double> a0(r.n, 0.0);
  r.ex = std::pow(1 + u, a.descale_roundings) - 1;
  const double koff = a.p_offset_log2 * kLn2;  // P = 2^k e^(z - M): the exp's argument reaches k ln 2 above the shift
  for (std::size_t j = 0; j < r.n; ++j) {
    if (sc.z_hi[j] == -kInf) continue;
    const double e = a.qk_coef * sc.qk_abs[j] + a.qk_abs;
    const double mk = d.mask ? std::fabs(d.mask[j]) : 0.0;
    const double sx = s * (std::fabs(sc.x[j]) + e);
    if (a.scaled)  // ln2 RN(fma(S^, s, mask) RN(log2 e)), or ln2 RN(S^ RN(s log2 e)): at most three relative roundings
      a0[j] = s * e + ((1 + u) * (1 + u) * (1 + u) - 1) * (sx + mk);
    else if (a.base2)  // ln2 RN(S^ + RN(mask / s)) RN(s log2 e): three relative roundings on s S^ + mask
      a0[j] = s * e + (2 * u + u * u) * (sx + mk * (1 + u)) + (mk != 0 ? u * mk : 0.0);
    else  // RN(RN(s S^) + mask)
      a0[j] = s * e + u * sx + (mk != 0 ? u * (std::fabs(zval(sc, j)) + s * e + u * sx) : 0.0);
    a0[j] += r.ex * (1 + u) * (1 + u) * (1 + u) * sx;  // the descale factors folded into the scale: (1 + u)^r - 1 more
    r.a0max = std::max(r.a0max, a0[j]);
  }
  // Far keys. The kernel's argument of key j, relative to its shift m^ >= M - a0[argmax], is at most
  // g_j = z_j - M + a0[j] + a0n (a0n >= a0[argmax]: the max over keys within 2 kFar of M), rounded by at most 4u
  // relative (the subtraction, and the base-2 form's products). Where g_j (1 - 4u) <= -kFar the key is far.
  double a0n = 0;
  for (std::size_t j = 0; j < r.n; ++j)
    if (sc.z_hi[j] != -kInf && zval(sc, j) - r.m > -2 * kFar) a0n = std::max(a0n, a0[j]);
  r.far.assign(r.n, 0);
  for (std::size_t j = 0; j < r.n; ++j)
    if (sc.z_hi[j] != -kInf && (zval(sc, j) - r.m + a0[j] + a0n) * (1 - 4 * u) <= -kFar) r.far[j] = 1, ++r.nfar;
  if (r.nfar > 0) {  // a0max and the span over the near keys only
    r.a0max = 0;
    lo = kInf;
    for (std::size_t j = 0; j < r.n; ++j)
      if (sc.z_hi[j] != -kInf && !r.far[j]) r.a0max = std::max(r.a0max, a0[j]), lo = std::min(lo, zval(sc, j));
    // The largest |argument| of a far key's exp, or of the rescaling that takes a block of far keys (an online prefix whose
    // running max a far key set) to the near max: |x^_j - m^| <= M - z_j + a0[j] + a0max. In log2 units for exp2.
    double x = 0;
    for (std::size_t j = 0; j < r.n; ++j)
      if (r.far[j]) x = std::max(x, (r.m - zval(sc, j) + a0[j] + r.a0max) * (1 + 4 * u));
    if (a.base2) x /= kLn2;
    // The computed exp of an argument below -kFar: within the claim's ulps of the correctly rounded 0 (ulps of the least
    // subnormal), plus its absolute part. A far key reaches l directly (at most F) or through a block of far keys rescaled
    // later (each weight there at most 1 + the claim, under 2, times the rescaling's exp, at most F, rounded: 2 (1 + u) F);
    // its exact weight is below e^-kFar <= F: |computed - exact| <= 3.01 F.
    const double f = std::exp(-kFar) + a.exp.abs + (a.exp.ulps + a.exp.ulps_per_x * x) * a.compute->min_subnormal();
    r.far_weight = 3.01 * f;
  }
  r.s = 0;
  for (std::size_t j = 0; j < r.n; ++j)
    if (sc.z_hi[j] != -kInf) r.s += std::exp(zval(sc, j) - r.m);
  r.s *= 1 + 0x1p-40;
  r.p.assign(r.n, 0.0);
  r.alpha.assign(r.n, 0.0);
  const bool narrow_p = a.p_format->precision() < a.compute->precision() || a.p_format->emin() > a.compute->emin();
  r.u_p = narrow_p ? a.p_format->unit_roundoff() : 0;
  r.eta_p = narrow_p ? a.p_format->min_subnormal() / 2 : 0;
  if (a.p_normalized) {  // RN(e_j / l) (or e_j RN(1 / l): two roundings) in the compute format, then RN into p_format
    const double uc = a.compute->unit_roundoff();
    r.u_p = (1 + r.u_p) * (1 + uc) * (1 + uc) - 1;
    r.eta_p += a.compute->min_subnormal() / 2;
  }
  // Online: a rescaling per key block after the first (the running max grows at most once a block), their arguments
  // summing to at most span (natural units), each rounded, each exp within its ulps, each product rounded.
  r.nb = a.online ? static_cast<int>((r.n + static_cast<std::size_t>(std::max(a.key_block, 1)) - 1) / static_cast<std::size_t>(std::max(a.key_block, 1))) : 1;
  r.span = r.m - lo + 2 * r.a0max;
  const double cnt = r.nb - 1, xs = a.base2 ? r.span / kLn2 : r.span;
  // FlashAttention-2's factor exp2(RN(RN(m_old - m_new) c)), p_j formed against its block's own RN(m_b c): against the
  // final shift the exponent of term j is off by the two shifts' roundings, u (|m_b c| + |m_B c|), and by each factor's
  // difference and product roundings, (2u + u^2) |(m_k - m_k+1) c|, summed over the factors: in natural units at most
  // 2u (1 + u)(|M| + span + a0max) + (2u + u^2) span (|m_b| <= |M| + span), per term and not common to all: not cancelling.
  const double fa2 = a.online && a.rescale_by_difference && r.nb > 1
                         ? 1.01 * (2 * u * (1 + u) * (std::fabs(r.m) + r.span + r.a0max) + (2 * u + u * u) * r.span)
                         : 0.0;
  r.resc = a.online ? std::exp(u * r.span * (1 + u) * 1.01 + fa2 + 2 * u * (a.exp.ulps * cnt + a.exp.ulps_per_x * xs)) * std::pow(1 + u, cnt) - 1 : 0;
  r.gam = gamma(static_cast<double>(r.n > 1 ? r.n - 1 : 1), a.sum_acc->unit_roundoff());
  // An absolute term of the kernel's units over the exact S (its probabilities 2^k times the exact ones).
  r.scale_abs = std::exp(r.a0max) * 1.01 / r.s / std::ldexp(1.0, a.p_offset_log2);
  for (std::size_t j = 0; j < r.n; ++j) {
    if (sc.z_hi[j] == -kInf) continue;
    if (r.far[j]) {  // its exact weight, for the output's scale; its error is far_weight's
      r.p[j] = std::exp(zval(sc, j) - r.m) / (r.s / (1 + 0x1p-40)) * (1 + 0x1p-40);
      continue;
    }
    const double t = r.m - zval(sc, j);
    // The shift's rounding: u |argument - shift|, the shift within a0max of M (common to every j: cancels).
    const double extra = a.base2 ? 1.01 * u * (r.a0max + 1.01 * u * (std::fabs(r.m) + r.a0max)) : 0.0;
    const double aj = a0[j] + u * (1 + u) * (t + a0[j] + r.a0max + koff) + extra;
    const double ej = fn_rel(a.exp, (t + aj + r.a0max + koff) / (a.base2 ? kLn2 : 1.0), u);
    const double pj = std::exp(zval(sc, j) - r.m) / (r.s / (1 + 0x1p-40)) * (1 + 0x1p-40);
    r.p[j] = pj;
    r.up += pj * (std::exp(aj) * (1 + ej) - 1);
    r.down += pj * (1 - std::exp(-aj) * (1 - ej));
    r.wa += pj * aj;
    r.we += pj * ej;
    r.amax = std::max(r.amax, aj);
    r.alpha[j] = std::exp(aj) * (1 + ej) * (1 + r.resc) * (1 + r.u_p) - 1;
    r.alpha_max = std::max(r.alpha_max, r.alpha[j]);
  }
  r.abs_l = (static_cast<double>(sc.visible) * a.exp.abs + static_cast<double>(r.nfar) * r.far_weight) * r.scale_abs;
  if (!std::isfinite(r.gam)) return r;
  r.d_hi = (1 + r.gam) * (1 + r.resc) * (1 + r.up + r.abs_l);
  r.d_lo = (1 - r.gam) * (1 - r.resc) * (1 - r.down - r.abs_l);
  r.ok = r.d_lo > 0;
  return r;
}

struct Element {
  double total = kInf;
  std::vector<AttentionBoundTerm> terms;
};

Element element(const AttentionArith& a, const Row& r, const AttentionRowData& d, std::int64_t c, bool explain) {
  Element e;
  auto term = [&](std::string name, double v, std::string law) {
    if (explain) e.terms.push_back({std::move(name), v, std::move(law)});
  };
  if (r.special) {
    e.total = 0;
    term("a fully masked or NaN row", 0, "the declared special values, exactly");
    return e;
  }
  if (!r.ok) {
    term("not applicable", kInf, "the row sum's lower bound is not positive");
    return e;
  }
  const double u = r.u;
  const AttentionScores& sc = *d.scores;
  const double dev = std::max(r.d_hi - 1, 1 - r.d_lo);
  if (c < d.head_dim) {
    double nerr = 0, acol = 0, vabs = 0, sa = 0, vfar = 0;
    for (std::size_t j = 0; j < r.n; ++j) {
      if (sc.z_hi[j] == -kInf) continue;
      const double v = std::fabs(d.v[static_cast<std::int64_t>(j) * d.ldv + c]);
      if (r.far[j]) vfar += v;
      nerr += r.p[j] * r.alpha[j] * v;
      sa += r.p[j] * std::max(0.0, r.alpha[j] - r.resc - r.u_p) * v;
      acol += r.p[j] * v;
      vabs += v;
    }
    const double o = std::fabs(d.o[c]);
    const double gemm = a.pv_coef * (1 + r.alpha_max) * acol;
    const double absn = ((r.eta_p + a.exp.abs) * vabs + r.far_weight * vfar) * r.scale_abs + a.pv_abs * r.scale_abs;
    const double t1 = (nerr + gemm + absn + o * dev) / r.d_lo;
    const int nd = a.reciprocal ? 2 : 1;
    // The normalisation's relative error: RN(O~ / l), or RN(O~ r) with r within recip_ulps ulps of 1 / l (2u per ulp).
    // A V descale factor folded into the normalisation (RN(RN(1 / l) dv), or RN(RN(O~ / l) dv)) rounds once more.
    const double rel_n = ((a.reciprocal ? (1 + 2 * u * a.recip_ulps) * (1 + u) : 1 + u) * (a.descale_v ? 1 + u : 1.0)) - 1;
    const double t2 = t1 + rel_n * (o + t1) + nd * a.compute->min_subnormal() / 2;
    const bool narrow_out = a.out->precision() < a.compute->precision() || a.out->emin() > a.compute->emin();
    const double u_out = narrow_out ? a.out->unit_roundoff() : 0, eta_out = narrow_out ? a.out->min_subnormal() / 2 : 0;
    e.total = (t2 + u_out * (o + t2) + eta_out) * (1 + 0x1p-40) + 0x1p-44 * acol;
    if (!explain) return e;  // the terms' texts are formatted only when asked for
    term("scores, exp and their shift (Q K^T, scale, exp)", sa, strf("sum_j p_j (e^A_j (1 + E_j) - 1) |v_jc|: max A_j = %.3g, sum p E = %.3g", r.amax, r.we));
    term("QK^T GEMM (within the above)", 0, strf("|S^_j - x_j| <= %.3g sum_c |q_c k_jc| + %.3g, times s", a.qk_coef, a.qk_abs));
    if (a.online)
      term(strf("online rescalings (%d key blocks)", r.nb), r.resc * acol,
           strf("(e^(u span + 2u (c0 (nb - 1) + c1 span)) (1 + u)^(nb - 1) - 1) sum p|v|, span = %.3g", r.span));
    if (r.u_p > 0)
      term(strf("P rounded to %s", std::string(a.p_format->tag).c_str()), r.u_p * acol + r.eta_p * vabs * r.scale_abs,
           "u_p sum_j p_j |v_jc| + eta_p sum_j |v_jc| / S");
    if (r.nfar > 0)
      term(strf("far keys (%lld: a large finite mask)", static_cast<long long>(r.nfar)), r.far_weight * vfar * r.scale_abs,
           strf("each exp below e^-110: at most %.3g in the kernel's units (3.01 F) times |v_jc|, over S", r.far_weight));
    term("PV GEMM", gemm + a.pv_abs * r.scale_abs, strf("%.3g (1 + max alpha) sum_j p_j |v_jc| + %.3g / S", a.pv_coef, a.pv_abs));
    term(strf("row sum l (%s, gamma_{n-1}) and its perturbations", std::string(a.sum_acc->tag).c_str()), o * dev,
         strf("|O| max(d_hi - 1, 1 - d_lo): gamma = %.3g, sum p A = %.3g", r.gam, r.wa));
    term(strf("%s%s", a.reciprocal ? strf("reciprocal (%g ulp) and product", a.recip_ulps).c_str() : "division (1 rounding)",
              a.descale_v ? ", times dv (1 rounding)" : ""),
         rel_n * o, strf("(%s%s - 1) |O|", a.reciprocal ? "(1 + 2u ulps)(1 + u)" : "(1 + u)", a.descale_v ? "(1 + u)" : ""));
    if (narrow_out) term(strf("output rounding (%s)", std::string(a.out->tag).c_str()), u_out * o + eta_out, "u_out |O| + eta_out");
    term("sum_j p_j |v_jc| (the scale of every term)", acol, "the bound is vacuous at 2^-4 of it or more (docs/attention.md)");
  } else {
    const double logdiff = std::max(std::log(r.d_hi), -std::log(r.d_lo));
    const double ls = std::log(r.s);
    // The max added back, RN(m_x s') against the shift RN(m_x c) ln 2: their roundings, and the descale factors' in s'
    // and c (each within (1 + u)^r - 1); a P offset's shift RN(m2 - k) once more.
    double maxadd = a.base2 ? (3 * u + u * u + 2.02 * r.ex) * (std::fabs(r.m) + r.a0max) : 0.0;
    if (a.base2 && a.p_offset_log2 != 0) maxadd += 1.01 * u * (std::fabs(r.m) + r.a0max + a.p_offset_log2 * kLn2);
    const double lmax = ls + logdiff + 2 * r.a0max + maxadd;
    const double elog = fn_rel(a.log, lmax, u) * lmax + a.log.abs;
    double err = logdiff + maxadd + elog;
    const double add = u * (std::fabs(r.m) + r.a0max) * (a.base2 ? 1 : 0) + u * (std::fabs(d.lse) + err);
    err += add;
    e.total = err * (1 + 0x1p-40) + 0x1p-60 * (std::fabs(d.lse) + 1);
    if (!explain) return e;
    term("log of the row sum (scores, exp, rescalings, gamma_h)", logdiff, strf("max(log d_hi, -log d_lo): sum p A = %.3g, gamma = %.3g", r.wa, r.gam));
    if (a.base2) term("the max added back (RN(m s) against RN(m c) ln 2)", maxadd, "(3u + u^2) (|M| + a0)");
    term(strf("log (%g ulp)", a.log.ulps), elog, a.log.source);
    term("additions (1 or 2 roundings)", add, "u (|LSE| + the above) (+ u |M| folded)");
  }
  term("total (the exact product of the factors)", e.total, "docs/attention.md, \"Bound\"");
  return e;
}

}  // namespace

void attention_row_bound(const AttentionArith& a, const AttentionRowData& row, double* bound, double& lse_bound) {
  const Row r = row_of(a, row);
  for (std::int64_t c = 0; c < row.head_dim; ++c) bound[c] = element(a, r, row, c, false).total;
  lse_bound = element(a, r, row, row.head_dim, false).total;
}

std::vector<AttentionBoundTerm> attention_bound_terms(const AttentionArith& a, const AttentionRowData& row, std::int64_t c) {
  return element(a, row_of(a, row), row, c, true).terms;
}

double attention_abs_weight(const AttentionRowData& row, std::int64_t c) {
  const AttentionScores& sc = *row.scores;
  double m = -kInf, s = 0, acc = 0;
  for (std::size_t j = 0; j < sc.z_hi.size(); ++j)
    if (sc.z_hi[j] != -kInf) m = std::max(m, zval(sc, j));
  for (std::size_t j = 0; j < sc.z_hi.size(); ++j) {
    if (sc.z_hi[j] == -kInf) continue;
    const double w = std::exp(zval(sc, j) - m);
    s += w;
    acc += w * std::fabs(row.v[static_cast<std::int64_t>(j) * row.ldv + c]);
  }
  return s > 0 ? acc / s : 0;
}

std::string to_text(const std::vector<AttentionBoundTerm>& terms) {
  std::string s;
  for (const auto& t : terms) s += strf("  %-52s %.4g   %s\n", t.name.c_str(), t.value, t.law.c_str());
  return s;
}

}  // namespace fpcert
