// oracle/norm/norm_bound.cpp — the LayerNorm / RMSNorm bound (oracle/norm/norm_bound.hpp; docs/normalization.md,
// "Bound", derives every line). Quantities are evaluated in double and inflated by (1 + 2^-40) where they are summed:
// the double evaluation's own rounding (below n 2^-53 relative) is far below that margin for n <= 2^20.
#include "oracle/norm/norm_bound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fpcert {

std::string_view to_string(NormVariance v) {
  switch (v) {
    case NormVariance::TwoPass: return "two_pass";
    case NormVariance::Welford: return "welford";
    case NormVariance::OnePass: return "one_pass";
    case NormVariance::WelfordCombined: return "welford_combined";
  }
  return "?";
}

std::int64_t welford_part_length(const std::vector<WelfordShape>& shapes, std::int64_t n) {
  std::int64_t k = 0;
  for (const WelfordShape& s : shapes) {
    const std::int64_t vecs = (n + s.vec - 1) / s.vec;  // vectors of the row
    k = std::max(k, s.vec * ((vecs + s.parts - 1) / s.parts));
  }
  return k;
}

int welford_depth(const std::vector<WelfordShape>& shapes) {
  int l = 0;
  for (const WelfordShape& s : shapes) {
    int d = 0;
    while ((std::int64_t{1} << d) < s.parts) ++d;
    l = std::max(l, d);
  }
  return l;
}

std::string to_string(const std::vector<WelfordShape>& shapes) {
  std::string out;
  for (const WelfordShape& s : shapes) {
    if (!out.empty()) out += " or ";
    out += s.vec == 1 ? fmt::format("{}", s.parts) : fmt::format("{}x{}", s.parts, s.vec);
  }
  return out;
}

std::vector<WelfordShape> parse_welford_shapes(std::string_view s) {
  std::vector<WelfordShape> out;
  auto number = [&](std::string_view t, long lo, long hi, const char* what) {
    long v = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || r.ec != std::errc{} || r.ptr != t.data() + t.size() || v < lo || v > hi)
      throw std::invalid_argument(fmt::format("'{}': {} must be an integer in {} .. {}", t, what, lo, hi));
    return static_cast<int>(v);
  };
  while (!s.empty()) {
    const std::size_t comma = s.find(',');
    const std::string_view item = s.substr(0, comma);
    const std::size_t x = item.find('x');
    WelfordShape w;
    w.parts = number(item.substr(0, x), 1, 1 << 20, "the number of parts");
    if (x != std::string_view::npos) w.vec = number(item.substr(x + 1), 1, 64, "the vector width");
    out.push_back(w);
    s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
  }
  if (out.empty()) throw std::invalid_argument("no parts declared (expected P or PxV, comma-separated: \"32\", \"512,128x4\")");
  return out;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSlack = 1 + 0x1p-40;

double gamma(double k, double u) { return k * u < 0.5 ? k * u / (1 - k * u) : kInf; }

/// Welford per part, then the parts' (n, mean, M2) combined pairwise (docs/normalization.md, "Welford per part, combined"):
/// the bound on the computed mean's error (em) and on the computed M2's error, from the stored row's range R, largest
/// magnitude M and variance var (the stored values'), n, the longest part k and the tree's depth L.
void welford_combined_bound(double u, double eta, double nd, double k, int levels, double R, double M, double var, double& em,
                            double& dm2) {
  const double g2 = gamma(2, u), g3 = gamma(3, u), g4 = gamma(4, u), g7 = gamma(7, u), nvar = nd * var;
  // Part: e_k = (1 - 1/k) e_{k-1} + l_k, |l_k| <= g3 |x_k - m^_{k-1}| / k + u |m^_k| + eta, so e = sum_k l_k k / K and
  // E <= g3 (R + E) + (u (M + E) + eta) (K + 1) / 2 (Welford 1962; m_{k-1} lies in [min, max]: |x_k - m_{k-1}| <= R).
  const double c = g3 + u * (k + 1) / 2;
  double e = c < 1 ? (g3 * R + (u * M + eta) * (k + 1) / 2) / (1 - c) * kSlack : kInf;
  // Part's M2: the increment (x_k - m^_{k-1})(x_k - m^_k) vs (x_k - m_{k-1})(x_k - m_k) = A B >= 0: first order in the
  // means' errors (2 R E + E^2), g3 relative (two subtractions and the product), eta (underflow); then the part's
  // sequential sum (gamma_{k-1} of the sum of |increments|); sum over parts of sum A B = sum of the parts' M2 <= n var.
  const double inc = nd * (2 * R * e + e * e) * (1 + g3) + g3 * nvar + nd * eta;
  double f = inc + gamma(k - 1, u) * (nvar + inc);
  // Every combination's T = (mb - ma)^2 na nb / n rounded (g7: delta twice through the square, the square, the products
  // and the weight nb/n or nb * fl(1/n)); sum over the whole tree of the exact T is M2 - sum of the parts' M2 <= n var.
  f += g7 * nvar;
  for (int l = 0; l < levels; ++l) {
    // (mb^ - ma^)^2 = (D + d)^2, |D| <= R, |d| <= 2E: |(D + d)^2 - D^2| <= 4 R E + 4 E^2, times na nb / n (their sum over a
    // level <= n / 4); the two additions M2a + M2b + T: g2 of the node's M2 (a level's nodes' M2 sum to <= n var).
    const double terr = nd * (R * e + e * e) * (1 + g7);
    f = (f + terr + g2 * (nvar + f + terr)) * kSlack;
    // mean = ma + (mb - ma) nb/n (Chan) or (na/n) ma + (nb/n) mb (PyTorch's cuWelfordCombine): the weighted mean of the two
    // errors (<= E) plus g2 (R + 2E) (Chan) or g4 (M + E) (weights rounded), then the addition's rounding.
    e = (e + g2 * (R + 2 * e) + g4 * (M + e) + u * M + 2 * eta) / (1 - u) * kSlack;
  }
  em = e;
  dm2 = f;
}

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
  } else if (a.variance == NormVariance::WelfordCombined) {
    // The kernel runs on the stored values x^_j = x_j + q_j, |q_j| <= p_j: their range, magnitude and variance bounded from
    // the exact row's (var(x^) - var(x) = (1/n) sum (c^_j^2 - c_j^2), c^_j = c_j + q_j - mean(q)).
    double pmax = 0, dvs = 0;
    for (std::size_t j = 0; j < n; ++j) pmax = std::max(pmax, pert ? pert[j] : 0.0);
    if (pmax > 0)
      for (std::size_t j = 0; j < n; ++j) {
        const double q = (pert ? pert[j] : 0.0) + pertsum / nd, cj = std::fabs(x[j] - mean) * (1 + 0x1p-50);
        dvs += 2 * cj * q + q * q;
      }
    dvs = dvs / nd * kSlack;
    const double uc = std::max(u, ua);
    const double range = ((hi - lo) + 2 * pmax) * kSlack, big = (maxabs + pmax) * kSlack, vs = (var + dvs) * (1 + 0x1p-50);
    const auto k = static_cast<double>(welford_part_length(a.welford, static_cast<std::int64_t>(n)));
    double dm2 = 0;
    welford_combined_bound(uc, eta, nd, k, welford_depth(a.welford), range, big, vs, em, dm2);
    em = (em + pertsum / nd) * kSlack;
    dv = (dm2 / nd + u * (vs + dm2 / nd) + eta + dvs) * kSlack;  // fl(M2 / n), then the storage's share
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

namespace {

std::string mean_how(const NormArith& a) {
  if (a.variance == NormVariance::Welford) return "running mean";
  if (a.variance == NormVariance::WelfordCombined)
    return fmt::format("Welford per part, parts {}, combined pairwise at depth {}", to_string(a.welford), welford_depth(a.welford));
  return "any-order row sum, gamma_{n-1} sum|x| / n";
}

}  // namespace

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
    t.push_back({"mean", ag * rb.r * rb.e_mean, fmt::format("|g| r E_mean; E_mean = {:.3g} ({}, n = {})", rb.e_mean, mean_how(a), nd)});
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
