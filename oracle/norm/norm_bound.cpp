// oracle/norm/norm_bound.cpp — the LayerNorm / RMSNorm bound (oracle/norm/norm_bound.hpp; docs/normalization.md,
// "Bound", derives every line). Quantities are evaluated in double and inflated by (1 + 2^-40) where they are summed:
// the double evaluation's own rounding (below n 2^-53 relative) is far below that margin for n <= 2^20.
#include "oracle/norm/norm_bound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fpcert {

std::string_view to_string(NormVariance v) {
  switch (v) {
    case NormVariance::TwoPass: return "two_pass";
    case NormVariance::Welford: return "welford";
    case NormVariance::OnePass: return "one_pass";
  }
  return "?";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSlack = 1 + 0x1p-40;

double gamma(double k, double u) { return k * u < 0.5 ? k * u / (1 - k * u) : kInf; }

}  // namespace

NormRowBound norm_row_bound(const NormArith& a, const double* x, const double* pert, std::size_t n, double eps, const NormRowStats& st) {
  NormRowBound rb;
  if (!st.finite || n == 0) return rb;
  const double u = a.compute->unit_roundoff(), ua = a.acc->unit_roundoff();
  const double eta = a.compute->min_subnormal();  // an underflowing product or square loses at most eta / 2
  const auto nd = static_cast<double>(n);
  const double mean = st.mean, var = std::max(st.var, 0.0);
  double sumabs = 0, sumsq = 0, maxabs = 0, lo = kInf, hi = -kInf, pertsum = 0, xpert = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double p = pert ? pert[j] : 0.0;
    sumabs += std::fabs(x[j]);
    sumsq += x[j] * x[j];
    maxabs = std::max(maxabs, std::fabs(x[j]));
    lo = std::min(lo, x[j]);
    hi = std::max(hi, x[j]);
    pertsum += p;
    xpert += 2 * std::fabs(x[j]) * p + p * p;
  }
  sumabs *= kSlack, sumsq *= kSlack, pertsum *= kSlack, xpert *= kSlack;
  double em = 0, dv = 0;
  if (a.kind == NormKind::RmsNorm) {
    // Q/n: n squares (u each, eta/2 absolute), a sum in any order (gamma_{n-1}), the division (u): Higham §4.2.
    dv = (gamma(nd + 1, std::max(u, ua)) * sumsq + xpert + nd * eta) / nd;
  } else if (a.variance == NormVariance::Welford) {
    // Running means m_k = m_{k-1} + (x_k - m_{k-1}) / k: |d_k| = |x_k - m_{k-1}| <= R + E (m_{k-1} lies in [min, max]),
    // local error <= 2.01 u |d_k| / k + u |m_k|, earlier errors damped by (1 - 1/k): E <= u (2.01 (R + E) H_n + n (max + E)).
    const double range = (hi - lo) * kSlack + 2 * pertsum;
    const double hn = std::log(nd) + 1;
    const double e0 = u * (2.01 * range * hn + nd * maxabs);
    em = (e0 + pertsum / nd) * (1 + 4 * nd * u) * kSlack;
    // M2_k = M2_{k-1} + d1 d2 (exact for exact means): d1, d2 perturbed by the mean errors and rounded (u each); the
    // product (u) and the addition (u |M2_k| <= u M2_n (1 + ...)): Chan, Golub and LeVeque 1983 (updating algorithm).
    const double d = range + em, e = em + u * d;
    const double dm2 = nd * (2 * d * 2 * e + 2 * e * e + u * (d + e) * (d + e) + eta) + gamma(nd, ua) * nd * var * (1 + 0x1p-20);
    dv = (dm2 / nd + u * (var + dm2 / nd)) * kSlack;
  } else {
    // Mean: S in any order (gamma_{n-1} sum |x|), divided by n (or times fl(1/n): two roundings).
    em = ((gamma(nd - 1, ua) * sumabs + pertsum) / nd * (1 + 2 * u) + 2 * u * std::fabs(mean)) * kSlack;
    if (a.variance == NormVariance::TwoPass) {
      // sum (c_j - dm + e_j)^2 with sum c_j = 0: sum c^2 + n dm^2 + sum (2 (|c_j| + E) e_j + e_j^2), e_j = u(|c_j| + E) + p_j;
      // then n squares and the sum (gamma_n of the sum of squares) and the division (u): Higham §1.9.
      double cross = 0, sq = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const double c = std::fabs(x[j] - mean) * (1 + 0x1p-50);
        const double ej = u * (c + em) + (pert ? pert[j] : 0.0);
        cross += 2 * (c + em) * ej + ej * ej;
        sq += c * c;
      }
      const double dsq = nd * em * em + cross * kSlack;
      const double a2 = nd * var + dsq;
      const double dsum = dsq + gamma(nd, std::max(u, ua)) * a2 + nd * eta;
      dv = (dsum / nd + u * (var + dsum / nd)) * kSlack;
    } else {
      // fl(fl(Q / n) - m^2): Q/n within gamma_{n+1} Q/n; m^2 within 2|m| E + E^2 + u (|m| + E)^2; the subtraction u |result|.
      const double dq = (gamma(nd + 1, std::max(u, ua)) * sumsq + xpert + nd * eta) / nd;
      const double dm2 = 2 * std::fabs(mean) * em + em * em + u * (std::fabs(mean) + em) * (std::fabs(mean) + em);
      dv = (dq + dm2 + u * (var + dq + dm2)) * kSlack;
    }
  }
  rb.e_mean = em;
  rb.d_var = dv;
  rb.t = var + eps;
  rb.d_t = (dv + u * (rb.t + dv) + eta) * kSlack;  // fl(v + eps)
  if (!(rb.t - rb.d_t > 0) || !std::isfinite(rb.d_t)) return rb;
  rb.rho = a.rsqrt_ulps * 2 * u;  // an ulp of v is at most 2u |v| (normal range)
  rb.r = 1 / std::sqrt(rb.t);
  const double rmax = (1 + rb.rho) / std::sqrt(rb.t - rb.d_t) * kSlack;
  const double rmin = (1 - rb.rho) / std::sqrt(rb.t + rb.d_t) / kSlack;
  rb.d_r = std::max(rmax - rb.r, rb.r - rmin);
  rb.covered = std::isfinite(rb.d_r);
  return rb;
}

namespace {

struct Parts {
  double ec = 0, ac = 0, c = 0, errp = 0, p = 0, err0 = 0, p0 = 0, err = 0, total = 0;
};

Parts parts(const NormArith& a, const NormRowBound& rb, const double* x, const double* pert, const NormRowStats& st, std::size_t i,
            double g, double b, bool has_beta, double y) {
  const double u = a.compute->unit_roundoff(), eta = a.compute->min_subnormal();
  Parts q;
  q.c = std::fabs(x[i] - st.mean) * (1 + 0x1p-50);
  const double pi = pert ? pert[i] : 0.0;
  q.ec = a.kind == NormKind::RmsNorm ? pi : (rb.e_mean + pi) * (1 + u) + u * q.c;  // fl(x_i - m)
  q.ac = q.c + q.ec;
  q.errp = q.ec * rb.r + q.ac * rb.d_r + u * q.ac * (rb.r + rb.d_r) + eta;  // fl(c r)
  q.p = q.ac * (rb.r + rb.d_r) * (1 + u);
  q.err0 = std::fabs(g) * q.errp + u * std::fabs(g) * q.p + eta;  // fl(p g)
  q.p0 = std::fabs(g) * q.p * (1 + u);
  q.err = q.err0 + (has_beta ? u * (q.p0 + std::fabs(b)) + eta : 0.0);  // fl(. + b)
  const double uo = a.out->unit_roundoff();
  const bool narrower = a.out->precision() < a.compute->precision();
  q.total = (q.err + (narrower ? uo * (std::fabs(y) + q.err) + a.out->min_subnormal() : 0.0)) * kSlack;
  return q;
}

}  // namespace

double norm_element_bound(const NormArith& a, const NormRowBound& rb, const double* x, const double* pert, std::size_t n,
                          const NormRowStats& st, std::size_t i, double g, double b, bool has_beta, double y) {
  (void)n;
  if (!rb.covered) return kInf;
  return parts(a, rb, x, pert, st, i, g, b, has_beta, y).total;
}

std::vector<NormBoundTerm> norm_bound_terms(const NormArith& a, const NormRowBound& rb, const double* x, const double* pert,
                                            std::size_t n, const NormRowStats& st, std::size_t i, double g, double b, bool has_beta,
                                            double y) {
  std::vector<NormBoundTerm> t;
  if (!rb.covered) {
    t.push_back({"not covered", kInf, "var + eps - (its error bound) <= 0: the computed rsqrt may be of a non-positive value"});
    return t;
  }
  const Parts q = parts(a, rb, x, pert, st, i, g, b, has_beta, y);
  const double u = a.compute->unit_roundoff(), ag = std::fabs(g);
  const auto nd = static_cast<double>(n);
  if (a.kind == NormKind::LayerNorm)
    t.push_back({"mean", ag * rb.r * rb.e_mean, fmt::format("|g| r E_mean; E_mean = {:.3g} ({} row sum, gamma_{{n-1}} sum|x| / n, n = {})",
                                                            rb.e_mean, a.variance == NormVariance::Welford ? "running" : "any-order", nd)});
  t.push_back({"centered value", ag * rb.r * (q.ec - (a.kind == NormKind::LayerNorm ? rb.e_mean : 0.0)),
               "|g| r (u |x_i - mean| + storage): the subtraction x_i - mean"});
  t.push_back({"variance", ag * q.ac * rb.r * rb.d_var / (2 * rb.t),
               fmt::format("|g| |c| r dv / 2t; dv = {:.3g} ({} of var = {:.6g})", rb.d_var,
                           a.kind == NormKind::RmsNorm ? std::string_view("mean of squares") : to_string(a.variance), st.var)});
  t.push_back({"eps addition", ag * q.ac * rb.r * u * rb.t / (2 * rb.t), "|g| |c| r u / 2: fl(var + eps)"});
  t.push_back({"rsqrt", ag * q.ac * rb.r * rb.rho, fmt::format("|g| |c| r rho; rho = {} ulp = {:.3g} ({})", a.rsqrt_ulps, rb.rho, a.rsqrt_source)});
  t.push_back({"products", u * 2 * ag * q.ac * rb.r, "2 u |g c r|: fl(c r), fl(. g)"});
  if (has_beta) t.push_back({"beta addition", u * (q.p0 + std::fabs(b)), "u (|g c r| + |b|)"});
  if (a.out->precision() < a.compute->precision())
    t.push_back({"output rounding", a.out->unit_roundoff() * std::fabs(y), fmt::format("u_out |y| ({})", a.out->tag)});
  t.push_back({"total", q.total, "the exact product of the factors above (not their first-order sum)"});
  return t;
}

std::string to_text(const std::vector<NormBoundTerm>& terms) {
  std::string s;
  for (const auto& t : terms) s += fmt::format("  {:<16} {:.4g}   {}\n", t.name, t.value, t.law);
  return s;
}

}  // namespace fpcert
