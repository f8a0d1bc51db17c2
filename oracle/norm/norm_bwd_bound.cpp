// oracle/norm/norm_bwd_bound.cpp — the LayerNorm / RMSNorm backward bounds (oracle/norm/norm_bwd_bound.hpp); the same
// code gives the total and the terms (Terms below), so the printed arithmetic is the graded one.
#include "oracle/norm/norm_bwd_bound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSecondOrder = 1 + 0x1p-10;  // products of two relative errors (header)

double unit(const Format& f) { return std::ldexp(1.0, -f.precision()); }
/// gamma_k = k u / (1 - k u) (Higham 2002, Lemma 3.1); +Inf when k u >= 1.
double gam(double k, double u) { return k * u < 1 ? k * u / (1 - k * u) : kInf; }
/// Half the smallest subnormal of f (the absolute error of one rounding in its underflow range; Higham §2.1).
double eta(const Format& f) { return 0.5 * f.min_subnormal(); }

/// The total of the terms, and (when wanted) the terms themselves.
struct Terms {
  std::vector<NormBoundTerm>* out = nullptr;
  double total = 0;
  void add(const char* name, double v, std::string law) {
    total += v;
    if (out) out->push_back({name, v, std::move(law)});
  }
  double finish() {
    total *= kSecondOrder;
    if (out) out->push_back({"total", total, "sum of the terms x (1 + 2^-10) (second-order products)"});
    return total;
  }
};

/// The recomputed statistics' error (reads_saved = false): |mean^ - mean| <= e_mean, |rstd^ - rstd| <= rr rstd; the
/// forward's bound (oracle/norm/norm_bound.hpp) for a two-pass and a Welford variance (the larger: the backward's
/// declaration does not say which), rsqrt within 2 ulp (CUDA's rsqrtf; 1/sqrt rounded twice is within it).
struct Recompute {
  bool covered = true;
  double e_mean = 0, rr = 0;
};
Recompute recompute(const NormBwdArith& a, const double* x, std::size_t n, const NormBwdRowStats& st) {
  Recompute r;
  if (a.reads_saved) return r;
  NormRowStats fs;
  fs.finite = st.finite;
  fs.mean = st.mean;
  fs.var = 1 / (st.rstd * st.rstd) - a.eps;
  for (const NormVariance v : {NormVariance::TwoPass, NormVariance::Welford}) {
    NormArith fa;
    fa.kind = a.kind;
    fa.variance = v;
    fa.compute = a.compute;
    fa.acc = a.acc;
    fa.rsqrt_ulps = 2;
    fa.out = a.compute;
    const NormRowBound rb = norm_row_bound(fa, x, nullptr, n, a.eps, fs);
    r.covered = r.covered && rb.covered;
    r.e_mean = std::max(r.e_mean, rb.e_mean);
    r.rr = std::max(r.rr, rb.r > 0 ? rb.d_r / rb.r : kInf);
  }
  return r;
}

/// What every element of a row shares: the recomputed statistics' error, sum |g| and sum |g xh|.
struct RowPart {
  bool covered = true;
  Recompute rc;
  double sg = 0, sgx = 0;
};
RowPart row_part(const NormBwdArith& a, const double* x, const double* dy, const double* gamma, std::size_t n, const NormBwdRowStats& st) {
  RowPart p;
  if (!st.finite) return p.covered = false, p;
  p.rc = recompute(a, x, n, st);
  p.covered = p.rc.covered;
  const double mean = a.kind == NormKind::LayerNorm ? st.mean : 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const double g = std::fabs(dy[k] * (gamma ? gamma[k] : 1.0)), xh = std::fabs((x[k] - mean) * st.rstd);
    p.sg += g, p.sgx += g * xh;
  }
  return p;
}

double dx_bound(const NormBwdArith& a, const RowPart& rp0, const double* x, const double* dy, const double* gamma, std::size_t n,
                const NormBwdRowStats& st, std::size_t j, std::vector<NormBoundTerm>* out) {
  Terms t{out};
  if (!rp0.covered) return kInf;
  const Recompute& rc = rp0.rc;
  const double sg = rp0.sg, sgx = rp0.sgx;
  const bool ln = a.kind == NormKind::LayerNorm;
  const double u = unit(*a.compute), ua = unit(*a.acc), uo = unit(*a.dx_out), nd = static_cast<double>(n);
  const double rstd = st.rstd, mean = ln ? st.mean : 0.0;
  const double kxh = ln ? 2 : 1, kg = gamma ? 1 : 0;
  const double g = dy[j] * (gamma ? gamma[j] : 1.0), xh = (x[j] - mean) * rstd;
  const double A = ln ? st.a : 0.0, B = st.b, an = std::fabs(A) / nd, bn = std::fabs(B) / nd;
  // Relative error of a computed xh (and the recomputed statistics' part), of a computed g, of a product g xh.
  const double rxh = gam(kxh, u) + rc.rr, axh = rc.e_mean * rstd;
  const double eg = gam(kg, u) * std::fabs(g);
  // The row sums: the terms' own errors, then the accumulation in any order (gamma_{n-1} of the accumulator).
  const double ea = ln ? gam(kg, u) * sg + gam(nd - 1, ua) * (1 + gam(kg, u)) * sg : 0.0;
  const double rp = gam(kxh + kg + 1, u) + rc.rr;
  const double eb = rp * sgx + axh * sg + gam(nd - 1, ua) * (1 + rp) * sgx;
  // a = A/n, b = B/n: the sums' errors over n, and the scaling's two roundings (fl(1/n), the product).
  const double ea_n = ln ? ea / nd + gam(2, u) * (an + ea / nd) : 0.0, eb_n = eb / nd + gam(2, u) * (bn + eb / nd);
  const double exh = rxh * std::fabs(xh) + axh;
  const double mag = std::fabs(g) + an + std::fabs(xh) * bn;  // |g_j| + |A/n| + |xh_j B/n|
  if (gamma) t.add("g = dy gamma", rstd * eg, fmt::format("rstd u |g_j| (u = 2^-{})", a.compute->precision()));
  if (ln) t.add("row sum A = sum g", rstd * ea_n, fmt::format("rstd (gamma_{}(u_acc) sum |g| + scaling gamma_2) / n", n - 1));
  t.add("row sum B = sum g xh", rstd * (std::fabs(xh) * eb_n),
        fmt::format("rstd |xh_j| (gamma_{}(u) + gamma_{}(u_acc)) sum |g xh| / n", static_cast<int>(kxh + kg + 1), n - 1));
  t.add("xh_j", rstd * exh * (bn + eb_n), fmt::format("rstd gamma_{}(u) |xh_j| |B/n|", static_cast<int>(kxh)));
  if (!a.reads_saved)
    t.add("recomputed mean, rstd", rstd * (rc.rr * mag + axh * bn),
          "the forward's bound on the recomputed statistics (oracle/norm/norm_bound.hpp), relative rr, absolute e_mean rstd");
  t.add("combination and rstd", gam(6, u) * rstd * (mag + eg + ea_n + exh * bn + std::fabs(xh) * eb_n),
        "gamma_6(u) rstd (|g_j| + |A/n| + |xh_j B/n|): any grouping of n g, the subtractions, xh b, rstd, 1/n");
  const double dx = rstd * std::fabs(g - A / nd - xh * B / nd);
  t.add("output rounding", uo * (dx + t.total), fmt::format("u_out |dx| (u_out = 2^-{})", a.dx_out->precision()));
  t.add("underflow", (nd + 8) * eta(*a.compute) * std::max(1.0, rstd) + eta(*a.dx_out),
        "(n + 8) eta_compute max(1, rstd) + eta_out (products below the normal range)");
  return t.finish();
}

std::vector<Recompute> recomputes(const NormBwdArith& a, const double* x, std::int64_t rows, std::int64_t cols,
                                  const std::vector<NormBwdRowStats>& st) {
  std::vector<Recompute> v(static_cast<std::size_t>(rows));
  if (!a.reads_saved)
    for (std::int64_t r = 0; r < rows; ++r)
      if (st[static_cast<std::size_t>(r)].finite)
        v[static_cast<std::size_t>(r)] = recompute(a, x + r * cols, static_cast<std::size_t>(cols), st[static_cast<std::size_t>(r)]);
  return v;
}

double param_bound(const NormBwdArith& a, bool dbeta, const double* x, const double* dy, std::int64_t rows, std::int64_t cols,
                   const std::vector<NormBwdRowStats>& st, const std::vector<Recompute>& rcs, std::int64_t j,
                   std::vector<NormBoundTerm>* out) {
  Terms t{out};
  const bool ln = a.kind == NormKind::LayerNorm;
  const double u = unit(*a.compute), upa = unit(*a.param_acc), uo = unit(*a.param_out), rd = static_cast<double>(rows);
  const double kxh = ln ? 2 : 1;
  double s = 0, sabs = 0, term_err = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const NormBwdRowStats& rs = st[static_cast<std::size_t>(r)];
    const double d = dy[r * cols + j];
    if (dbeta) {
      s += d, sabs += std::fabs(d);
      continue;
    }
    const Recompute& rc = rcs[static_cast<std::size_t>(r)];
    if (!rs.finite || !rc.covered) return kInf;
    const double xh = (x[r * cols + j] - (ln ? rs.mean : 0.0)) * rs.rstd;
    s += d * xh, sabs += std::fabs(d * xh);
    term_err += (gam(kxh + 1, u) + rc.rr) * std::fabs(d * xh) + rc.e_mean * rs.rstd * std::fabs(d);
  }
  if (!dbeta) t.add("terms dy xh", term_err, fmt::format("sum_rows gamma_{}(u) |dy xh| (xh's roundings and the product)", static_cast<int>(kxh + 1)));
  t.add("column sum", gam(rd - 1, upa) * (sabs + term_err),
        fmt::format("gamma_{}(u_param_acc) sum_rows |term| (any order, atomics included; u_param_acc = 2^-{})", rows - 1,
                    a.param_acc->precision()));
  t.add("output rounding", a.param_out == a.param_acc ? 0.0 : uo * (std::fabs(s) + t.total),
        a.param_out == a.param_acc ? "0: param_out is the accumulator" : "u_out |sum|");
  t.add("underflow", (dbeta ? 0.0 : rd * eta(*a.compute)) + eta(*a.param_out), "rows eta_compute (the products) + eta_out");
  return t.finish();
}

}  // namespace

void norm_bwd_dx_bounds(const NormBwdArith& a, const double* x, const double* dy, const double* gamma, std::size_t n,
                        const NormBwdRowStats& st, double* bound) {
  const RowPart rp = row_part(a, x, dy, gamma, n, st);
  for (std::size_t j = 0; j < n; ++j) bound[j] = dx_bound(a, rp, x, dy, gamma, n, st, j, nullptr);
}

std::vector<NormBoundTerm> norm_bwd_dx_terms(const NormBwdArith& a, const double* x, const double* dy, const double* gamma,
                                             std::size_t n, const NormBwdRowStats& st, std::size_t j) {
  std::vector<NormBoundTerm> v;
  dx_bound(a, row_part(a, x, dy, gamma, n, st), x, dy, gamma, n, st, j, &v);
  return v;
}

void norm_bwd_param_bounds(const NormBwdArith& a, const double* x, const double* dy, std::int64_t rows, std::int64_t cols,
                           const std::vector<NormBwdRowStats>& st, double* dgamma, double* dbeta) {
  const std::vector<Recompute> rcs = recomputes(a, x, rows, cols, st);
  for (std::int64_t j = 0; j < cols; ++j) {
    dgamma[j] = param_bound(a, false, x, dy, rows, cols, st, rcs, j, nullptr);
    if (dbeta) dbeta[j] = param_bound(a, true, x, dy, rows, cols, st, rcs, j, nullptr);
  }
}

std::vector<NormBoundTerm> norm_bwd_param_terms(const NormBwdArith& a, bool dbeta, const double* x, const double* dy, std::int64_t rows,
                                                std::int64_t cols, const std::vector<NormBwdRowStats>& st, std::int64_t j) {
  std::vector<NormBoundTerm> v;
  param_bound(a, dbeta, x, dy, rows, cols, st, recomputes(a, x, rows, cols, st), j, &v);
  return v;
}

}  // namespace fpcert
