// oracle/attention/attention_bwd_bound.cpp — the per-element bound of oracle/attention/attention_bwd_bound.hpp
// (docs/backward.md, "Attention backward", "Bound", derives each term).
#include "oracle/attention/attention_bwd_bound.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>

#include "base/parallel.hpp"

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSlack = 1 + 0x1p-30;  // the bound's own double evaluation (exp, sums) of the exact quantities

__attribute__((format(printf, 1, 2))) std::string strf(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

double gamma(double n, const Format& f) {
  const double u = f.unit_roundoff();
  return n * u >= 1 ? kInf : n * u / (1 - n * u);
}
double fn_rel(const ElemFnError& e, double x, double u) { return (e.ulps + std::floor(e.ulps_per_x * std::fabs(x))) * 2 * u; }
/// u and eta of rounding a compute-format value into f (0 when f is not narrower).
void narrowing(const Format& f, const Format& compute, double& u, double& eta) {
  const bool narrow = f.precision() < compute.precision() || f.emin() > compute.emin();
  u = narrow ? f.unit_roundoff() : 0;
  eta = narrow ? f.min_subnormal() / 2 : 0;
}
double dot(const double* a, const double* b, std::int64_t n, double& abs) {
  double s = 0;
  abs = 0;
  for (std::int64_t c = 0; c < n; ++c) s += a[c] * b[c], abs += std::fabs(a[c] * b[c]);
  return s;
}

using QStats = AttentionBwdRowStats;

/// Far keys (docs/backward.md, "Attention backward", "Bound"; the forward's step 10 in docs/attention.md): a key whose
/// recomputed P lies below e^-kFar under every rounding of its argument (a large finite mask: -1e9, torch.finfo(dtype).min).
/// Its argument error u |mask| would make e^a infinite; its P^ is instead at most F (the exp's claim at an argument below
/// -kFar: its ulps of the least subnormal, and its absolute part), and |P^ - P| <= 2.01 F.
constexpr double kFar = 110;
bool far_arg(double upper, double u) { return upper * (1 - 4 * u) <= -kFar; }
double far_f(const AttentionBwdArith& a, double x) {
  const double xl = a.base2 ? x / 0.6931471805599453 : x;
  return std::exp(-kFar) + a.exp.abs + (a.exp.ulps + a.exp.ulps_per_x * xl) * a.compute->min_subnormal();
}

/// One pair (i, j) as the bound sees it: P, |x| = |dP - D|, dS, and the kernel's errors on P (after its rounding into
/// p_format: dp_err_v), on x, on dS (after its rounding into each GEMM's input: e_ds_q, e_ds_k).
struct PairB {
  bool visible = false, bad = false, far = false;
  std::int64_t i = 0, j = 0;
  double p = 0, dp_p = 0, e_pv = 0, x = 0, e_x = 0, ds = 0, e_ds = 0, e_ds_q = 0, e_ds_k = 0;
  double a = 0, eps = 0;
};

/// P's argument error a (natural units) and the exp's relative error at query row r, key j (z, L, |s x|, qk_abs given).
void arg_error(const AttentionBwdArith& a, double sx, double qkabs, double mask, double z, double l, double& arg, double& eps) {
  const double u = a.compute->unit_roundoff();
  const double e_s = a.qk_coef * qkabs + a.qk_abs;
  const double mk = std::fabs(mask);
  double err;
  if (a.base2)  // RN(S^ + RN(mask / s)) RN(s log2 e) - RN(L RN(log2 e)), the fma's rounding: in natural units
    err = e_s * (1 + 2 * u) + (2 * u + u * u) * (sx + e_s + mk * (1 + u)) + (mk != 0 ? u * mk : 0.0) + (2 * u + u * u) * std::fabs(l);
  else  // RN(RN(RN(s S^) + mask) - L)
    err = e_s + u * (sx + e_s) * (1 + u) + (mk != 0 ? u * (std::fabs(z) + e_s + u * sx) * (1 + u) : 0.0);
  err += u * (std::fabs(z - l) + err) * (1 + u);  // the subtraction (or the fma's one rounding)
  arg = err * kSlack;
  eps = fn_rel(a.exp, (std::fabs(z - l) + arg) / (a.base2 ? 0.6931471805599453 : 1.0), u);
}

/// Score z_ij = s x + mask (double), |s x| and sum |q k| of row r, key j; false if not visible.
bool score(const AttentionInputs& f, std::int64_t r, std::int64_t j, double& z, double& sx, double& qkabs) {
  if (!f.visible(r, j)) return false;
  const double x = dot(f.q_row(r), f.k + (f.kv_base(r) + j) * f.head_dim, f.head_dim, qkabs);
  sx = std::fabs(f.scale * x);
  z = f.scale * x + f.mask_at(r, j);
  return true;
}

QStats q_stats(const AttentionBwdArith& a, const AttentionBwdInputs& in, std::int64_t r) {
  QStats q;
  const AttentionInputs& f = in.fwd;
  const std::int64_t d = f.head_dim;
  std::vector<double> z(static_cast<std::size_t>(f.len_k), -kInf), sx(z.size()), qa(z.size());
  double m = -kInf;
  for (std::int64_t j = 0; j < f.len_k; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (score(f, r, j, z[ju], sx[ju], qa[ju])) m = std::max(m, z[ju]), q.masked = false;
  }
  if (q.masked) return q;
  if (std::isnan(m) || m == kInf) {
    q.bad = true;
    return q;
  }
  if (in.reads_saved) {
    q.l = in.lse[r];
    double abs = 0;
    q.d = dot(in.d_o + r * d, in.o + r * d, d, abs);
    q.e_d = gamma(static_cast<double>(d + 1), *a.d_acc) * abs;  // D^: head_dim products, each rounded or exact, any order
    if (!std::isfinite(q.l)) q.bad = true;
    return q;
  }
  double s = 0;
  for (double v : z)
    if (v != -kInf) s += std::exp(v - m);
  q.l = m + std::log(s);
  // D = sum_j P_j dP_j from the kernel's own P^ and dP^: their errors and the sum's (compute format, any order).
  double dabs = 0, prop = 0;
  std::int64_t n = 0;
  // The kernel recomputes l from its own max: far keys (relative to m, with the near keys' argument error amax on the
  // shift) are left out of amax and emax, and add at most 3.01 F each to its sum (relative to e^m: the sum s >= 1).
  const double u = a.compute->unit_roundoff();
  std::vector<char> far(z.size(), 0);
  double amax_all = 0, far_share = 0;
  for (std::int64_t j = 0; j < f.len_k; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (z[ju] == -kInf) continue;
    double ar = 0, ep = 0;
    arg_error(a, sx[ju], qa[ju], f.mask_at(r, j), z[ju], m, ar, ep);
    if (z[ju] - m > -2 * kFar) amax_all = std::max(amax_all, ar);
  }
  for (std::int64_t j = 0; j < f.len_k; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (z[ju] == -kInf) continue;
    double ar = 0, ep = 0;
    arg_error(a, sx[ju], qa[ju], f.mask_at(r, j), z[ju], m, ar, ep);
    if (far_arg(z[ju] - m + ar + amax_all, u)) {
      far[ju] = 1;
      far_share += 3.01 * far_f(a, m - z[ju] + ar + amax_all);
      continue;
    }
    q.amax = std::max(q.amax, ar);
    q.emax = std::max(q.emax, ep);
  }
  q.amax += far_share * std::exp(q.amax) / s;  // log of the sum: far keys' share, relative to the exact s
  for (std::int64_t j = 0; j < f.len_k; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (z[ju] == -kInf) continue;
    double ar = 0, ep = 0, dpa = 0;
    arg_error(a, sx[ju], qa[ju], f.mask_at(r, j), z[ju], m, ar, ep);
    if (far[ju]) {  // |P^ dP^ - P dP| <= 2.01 F' (|dP| + e_dP), F' at the argument relative to the kernel's l
      const double dp = dot(in.d_o + r * d, f.v + (f.kv_base(r) + j) * d, d, dpa);
      const double e_dp = a.dov_coef * dpa + a.dov_abs;
      const double p = std::exp(z[ju] - q.l);
      q.d += p * dp;
      dabs += p * std::fabs(dp);
      prop += 2.01 * far_f(a, q.l - z[ju] + ar + q.amax) * (std::fabs(dp) + e_dp);
      ++n;
      continue;
    }
    const double p = std::exp(z[ju] - q.l);
    const double g = gamma(static_cast<double>(f.len_k), *a.compute);
    const double rel = std::exp(ar + q.amax) * (1 + ep) * (1 + q.emax) * (1 + g) / (1 - g) * (1 + a.compute->unit_roundoff()) - 1;
    const double dp = dot(in.d_o + r * d, f.v + (f.kv_base(r) + j) * d, d, dpa);
    const double e_dp = a.dov_coef * dpa + a.dov_abs;
    q.d += p * dp;
    dabs += p * std::fabs(dp);
    prop += p * rel * (std::fabs(dp) + e_dp) + p * e_dp;
    ++n;
  }
  q.e_d = (prop + gamma(static_cast<double>(n + 1), *a.compute) * dabs * 2) * kSlack;
  return q;
}

PairB pair_b(const AttentionBwdArith& a, const AttentionBwdInputs& in, std::int64_t r, std::int64_t j, const QStats& q) {
  PairB pb;
  pb.i = r;
  pb.j = j;
  if (q.masked) return pb;
  const AttentionInputs& f = in.fwd;
  double z = 0, sx = 0, qa = 0;
  if (!score(f, r, j, z, sx, qa)) return pb;
  pb.visible = true;
  if (q.bad || z - q.l > 700) {
    pb.bad = true;
    return pb;
  }
  const double u = a.compute->unit_roundoff();
  arg_error(a, sx, qa, f.mask_at(r, j), z, q.l, pb.a, pb.eps);
  pb.p = std::exp(z - q.l) * kSlack;
  // The kernel's argument is at most (z - L) + a, and with the LSE recomputed, L^ >= l - amax - 1 (generous).
  const double shift_err = a.reads_saved ? 0.0 : q.amax + 1;
  double dpp = 0;  // |P^ - P|
  if (far_arg(z - q.l + pb.a + shift_err, u)) {
    pb.far = true;
    dpp = 2.01 * far_f(a, q.l - z + pb.a + shift_err);
  } else {
    double rel = std::exp(pb.a) * (1 + pb.eps) - 1;
    if (!a.reads_saved)
      rel = std::exp(pb.a + q.amax) * (1 + pb.eps) * (1 + q.emax) * (1 + gamma(static_cast<double>(f.len_k), *a.compute)) /
                (1 - gamma(static_cast<double>(f.len_k), *a.compute)) * (1 + u) - 1;
    dpp = pb.p * rel + a.exp.abs;
  }
  double up = 0, etap = 0;
  narrowing(*a.p_format, *a.compute, up, etap);
  pb.dp_p = dpp;
  pb.e_pv = dpp + up * (pb.p + dpp) + etap;  // P as dV's GEMM reads it
  const std::int64_t d = f.head_dim;
  double dpa = 0;
  const double dp = dot(in.d_o + r * d, f.v + (f.kv_base(r) + j) * d, d, dpa);
  const double e_dp = a.dov_coef * dpa + a.dov_abs;
  pb.x = std::fabs(dp - q.d) * kSlack;
  pb.e_x = (e_dp + q.e_d) * (1 + u) + u * pb.x;                                       // RN(dP^ - D^)
  pb.ds = pb.p * pb.x;
  pb.e_ds = (dpp * (pb.x + pb.e_x) + pb.p * pb.e_x) * (1 + u) + u * pb.ds;              // RN(P^ x^)
  double uq = 0, eq = 0, uk = 0, ek = 0;
  narrowing(*a.ds_q, *a.compute, uq, eq);
  narrowing(*a.ds_k, *a.compute, uk, ek);
  pb.e_ds_q = pb.e_ds + uq * (pb.ds + pb.e_ds) + eq;
  pb.e_ds_k = pb.e_ds + uk * (pb.ds + pb.e_ds) + ek;
  return pb;
}

/// The pairs of one output row: dQ row r over its keys; dK / dV row r over its group's query rows.
std::vector<PairB> row_pairs(const AttentionBwdArith& a, const AttentionBwdInputs& in, const std::vector<QStats>& st, AttentionGrad g,
                             std::int64_t r) {
  std::vector<PairB> v;
  const AttentionInputs& f = in.fwd;
  if (g == AttentionGrad::Dq) {
    for (std::int64_t j = 0; j < f.len_k; ++j) {
      PairB pb = pair_b(a, in, r, j, st[static_cast<std::size_t>(r)]);
      if (pb.visible) v.push_back(pb);
    }
    return v;
  }
  const std::int64_t j = r % f.len_k, r0 = in.group_row0(r);
  for (std::int64_t i = r0; i < r0 + in.group() * f.len_q; ++i) {
    PairB pb = pair_b(a, in, i, j, st[static_cast<std::size_t>(i)]);
    if (pb.visible) v.push_back(pb);
  }
  return v;
}

struct Element {
  double total = 0;
  std::vector<AttentionBoundTerm> terms;
};

Element element(const AttentionBwdArith& a, const AttentionBwdInputs& in, AttentionGrad g, const std::vector<PairB>& pairs, std::int64_t c,
                bool explain) {
  Element e;
  auto term = [&](std::string name, double v, std::string law) {
    if (explain) e.terms.push_back({std::move(name), v, std::move(law)});
  };
  const AttentionInputs& f = in.fwd;
  const std::int64_t d = f.head_dim;
  const double u = a.compute->unit_roundoff();
  double prop = 0, mag = 0, val = 0, babs = 0;
  std::int64_t n = 0;
  for (const PairB& pb : pairs) {
    if (pb.bad) {
      e.total = kInf;
      term("not applicable", kInf, "a P beyond e^700 or a NaN score");
      return e;
    }
    double b, av, ae;
    if (g == AttentionGrad::Dv) b = in.d_o[pb.i * d + c], av = pb.p, ae = pb.e_pv;
    else if (g == AttentionGrad::Dq) b = f.k[(f.kv_base(pb.i) + pb.j) * d + c], av = pb.ds, ae = pb.e_ds_q;
    else b = f.q_row(pb.i)[c], av = pb.ds, ae = pb.e_ds_k;
    prop += ae * std::fabs(b);
    mag += (av + ae) * std::fabs(b);
    val += av * std::fabs(b);
    babs += std::fabs(b);
    ++n;
  }
  const double gc = g == AttentionGrad::Dv ? a.pdo_coef : g == AttentionGrad::Dq ? a.dsk_coef : a.dsq_coef;
  const double ga = g == AttentionGrad::Dv ? a.pdo_abs : g == AttentionGrad::Dq ? a.dsk_abs : a.dsq_abs;
  const double gemm = gc * mag + ga;
  const double atom = g == AttentionGrad::Dq && a.dq_acc_extra ? gamma(static_cast<double>(std::max<std::int64_t>(f.len_k, 1)), *a.dq_acc) * mag : 0.0;
  const double s = g == AttentionGrad::Dv ? 1.0 : f.scale;
  const double acc_err = prop + gemm + atom;
  const double scaled = s * acc_err;
  const double scale_round = g == AttentionGrad::Dv ? 0.0 : u * s * (val + acc_err);
  const Format& out = g == AttentionGrad::Dq ? *a.dq_out : g == AttentionGrad::Dk ? *a.dk_out : *a.dv_out;
  double uo = 0, eo = 0;
  narrowing(out, *a.compute, uo, eo);
  const double before = scaled + scale_round;
  const double outr = uo * (s * val + before) + eo;
  e.total = (before + outr) * kSlack;
  const char* what = g == AttentionGrad::Dv ? "P" : "dS";
  if (explain) {
    term(strf("%s's error (P recomputed: QK^T, %s, exp; dP, D, dP - D, the product with P; rounded into the GEMM's input)", what,
              a.base2 ? "exp2 folded" : "scale"),
         s * prop, strf("s sum |%s^ - %s| |b| over %lld terms", what, what, static_cast<long long>(n)));
    term(g == AttentionGrad::Dv ? "dV GEMM (P^T dO)" : g == AttentionGrad::Dq ? "dQ GEMM (dS K)" : "dK GEMM (dS^T Q)", s * gemm,
         strf("s (%.3g sum (|a| + err) |b| + %.3g)", gc, ga));
    if (atom > 0) term(strf("dQ's partials added in %s (any order)", std::string(a.dq_acc->tag).c_str()), s * atom, "s gamma_{len_k} sum |dS| |k|");
    if (g != AttentionGrad::Dv) term("the scale s (1 rounding)", scale_round, "u s (sum |dS| |b| + the above)");
    if (uo > 0) term(strf("output rounding (%s)", std::string(out.tag).c_str()), outr, "u_out (|grad| + the above) + eta_out");
    term(strf("sum |%s| |b| (the scale of every term)", what), s * val, "a bound at or above |exact| counts as vacuous");
    term("total", e.total, "docs/backward.md, \"Attention backward\"");
  }
  return e;
}

}  // namespace

std::vector<AttentionBwdRowStats> attention_bwd_row_stats(const AttentionBwdArith& a, const AttentionBwdInputs& in, unsigned threads) {
  std::vector<AttentionBwdRowStats> st(static_cast<std::size_t>(in.fwd.rows()));
  parallel_for(st.size(), 16, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    for (std::uint64_t r = b; r < e; ++r) st[r] = q_stats(a, in, static_cast<std::int64_t>(r));
  }, threads ? threads : thread_count());
  return st;
}

void attention_bwd_row_bound(const AttentionBwdArith& a, const AttentionBwdInputs& in, const std::vector<AttentionBwdRowStats>& stats,
                             AttentionGrad g, std::int64_t r, double* bound) {
  const std::vector<PairB> pairs = row_pairs(a, in, stats, g, r);
  for (std::int64_t c = 0; c < in.fwd.head_dim; ++c) bound[c] = element(a, in, g, pairs, c, false).total;
}

std::vector<AttentionBoundTerm> attention_bwd_bound_terms(const AttentionBwdArith& a, const AttentionBwdInputs& in,
                                                          const std::vector<AttentionBwdRowStats>& stats, AttentionGrad g, std::int64_t r,
                                                          std::int64_t c) {
  return element(a, in, g, row_pairs(a, in, stats, g, r), c, true).terms;
}

}  // namespace fpcert
