// oracle/attention/attention_bwd_mp.cpp — the MPFR path of the attention backward reference (attention_bwd_mp.hpp) and
// attention_bwd_mpfr, the all-MPFR evaluation the tests compare the reference with (attention_bwd_ref.hpp).
#include "oracle/attention/attention_bwd_mp.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace fpcert {

namespace abwd_mp {

namespace {

constexpr double kUp = 1 + 0x1p-40;  // covers the roundings of the bound's own double arithmetic

/// z_ij at prec bits (exact products, one rounding of the sum, one of the scale, one of the mask): |s x| + |mask| in za.
/// True when no step rounded.
bool mp_z(const AttentionInputs& f, std::int64_t r, std::int64_t j, Mpfr& z, double& za) {
  const std::int64_t d = f.head_dim;
  const double* q = f.q_row(r);
  const double* k = f.k + (f.kv_base(r) + j) * d;
  std::deque<Mpfr> ps;
  std::vector<mpfr_ptr> ptr;
  for (std::int64_t c = 0; c < d; ++c) {
    ps.emplace_back(53);
    mpfr_set_d(ps.back(), q[c] * k[c], MPFR_RNDN);  // exact
    ptr.push_back(ps.back().get());
  }
  int inexact = mpfr_sum(z, ptr.data(), static_cast<unsigned long>(ptr.size()), MPFR_RNDN) != 0;
  inexact |= mpfr_mul_d(z, z, f.scale, MPFR_RNDN) != 0;
  za = std::fabs(mpfr_get_d(z, MPFR_RNDA)) + std::fabs(f.mask_at(r, j));
  inexact |= mpfr_add_d(z, z, f.mask_at(r, j), MPFR_RNDN) != 0;
  return inexact == 0;
}

/// sum_c a_c b_c - sum_c e_c f_c (e may be null) at prec bits, exact products, one rounding; |value| and sum |.| too.
int mp_dot(const double* a, const double* b, const double* e, const double* g, std::int64_t n, Mpfr& out) {
  std::deque<Mpfr> ps;
  std::vector<mpfr_ptr> ptr;
  for (std::int64_t c = 0; c < n; ++c) {
    ps.emplace_back(53);
    mpfr_set_d(ps.back(), a[c] * b[c], MPFR_RNDN);
    ptr.push_back(ps.back().get());
    if (!e) continue;
    ps.emplace_back(53);
    mpfr_set_d(ps.back(), -e[c] * g[c], MPFR_RNDN);
    ptr.push_back(ps.back().get());
  }
  return mpfr_sum(out, ptr.data(), static_cast<unsigned long>(ptr.size()), MPFR_RNDN);  // 0: exact
}

}  // namespace


bool mp_pair(const AttentionBwdInputs& in, std::int64_t r, std::int64_t j, const MpQRow& row, long p, MpPair& out, Mpfr* dp_out) {
  const AttentionInputs& f = in.fwd;
  if (!f.visible(r, j)) return false;
  Mpfr z(p + 64), t(p + 64), dp(p + 64);
  const std::int64_t d = f.head_dim;
  if (row.single) {  // P = 1 and x = 0 exactly
    mpfr_set_ui(out.pv, 1, MPFR_RNDN);
    mpfr_set_zero(out.x, 1);
    out.eps = out.xerr = 0;
    if (dp_out) mp_dot(in.d_o + r * d, f.v + (f.kv_base(r) + j) * d, nullptr, nullptr, d, *dp_out);
    return true;
  }
  double za = 0;
  const bool z_exact = mp_z(f, r, j, z, za);
  const double zabs = std::fabs(mpfr_get_d(z, MPFR_RNDA));
  const bool t_exact = mpfr_sub(t, z, row.l, MPFR_RNDN) == 0 && z_exact && row.l_err == 0;
  const double targ = t_exact ? 0 : 0x1p-62 * (za + zabs + std::fabs(mpfr_get_d(t, MPFR_RNDA))) + row.l_err;
  const bool p_exact = mpfr_exp(out.pv, t, MPFR_RNDN) == 0;  // e^0 = 1 (a saved LSE equal to the only score)
  out.eps = ((p_exact ? 0 : 1) + 1.01 * targ) * kUp;
  // dP and x = dP - D at p + 64 bits, each rounding counted only where MPFR says it was inexact (x = 0 exactly happens:
  // one visible key makes O = v and D = dP).
  const bool dp_exact = mp_dot(in.d_o + r * d, f.v + (f.kv_base(r) + j) * d, nullptr, nullptr, d, dp) == 0;
  if (dp_out) mpfr_set(*dp_out, dp, MPFR_RNDN);
  const bool x_exact = mpfr_sub(out.x, dp, row.d, MPFR_RNDN) == 0;
  out.xerr = ((dp_exact ? 0 : 0x1p-64 * std::fabs(mpfr_get_d(dp, MPFR_RNDA))) + (x_exact ? 0 : 0x1p-64 * std::fabs(mpfr_get_d(out.x, MPFR_RNDA))) +
              row.d_err) * kUp;
  return true;
}

void mp_row_stats(const AttentionBwdInputs& in, std::int64_t r, long p, MpQRow& row) {
  const AttentionInputs& f = in.fwd;
  const std::int64_t d = f.head_dim;
  if (in.reads_saved) {
    mpfr_set_d(row.l, in.lse[r], MPFR_RNDN);
    const bool exact = mp_dot(in.d_o + r * d, in.o + r * d, nullptr, nullptr, d, row.d) == 0;
    row.d_err = exact ? 0 : 0x1p-64 * std::fabs(mpfr_get_d(row.d, MPFR_RNDA));
    return;
  }
  // L = M + log sum e^{z_j - M} at p + 64: z within 2^-(p+62) (|s x| + |mask| + |z|) each, w_j relative 1 + that
  // (of 2^-(p+64)), S one more, log S within 1.01 eps_S, the sum with M one more: L_err <= 2^-61 (Zmax + |L| + 8).
  std::deque<Mpfr> zs;
  double zmax = 0;
  for (std::int64_t j = 0; j < f.len_k; ++j) {
    if (!f.visible(r, j)) continue;
    zs.emplace_back(p + 64);
    double za = 0;
    mp_z(f, r, j, zs.back(), za);
    zmax = std::max(zmax, za + std::fabs(mpfr_get_d(zs.back(), MPFR_RNDA)));
  }
  row.single = zs.size() == 1;
  if (row.single) return;
  Mpfr mx(p + 64), s(p + 64), t(p + 64);
  mpfr_set_inf(mx, -1);
  for (auto& z : zs) mpfr_max(mx, mx, z, MPFR_RNDN);
  mpfr_set_zero(s, 1);
  for (auto& z : zs) {
    mpfr_sub(t, z, mx, MPFR_RNDN);
    zmax = std::max(zmax, std::fabs(mpfr_get_d(t, MPFR_RNDA)) + std::fabs(mpfr_get_d(z, MPFR_RNDA)));
    mpfr_exp(t, t, MPFR_RNDN);
    mpfr_add(s, s, t, MPFR_RNDN);
  }
  mpfr_log(t, s, MPFR_RNDN);
  mpfr_add(row.l, t, mx, MPFR_RNDN);
  row.l_err = 0x1p-61 * (zmax * (1 + static_cast<double>(zs.size()) * 0x1p-60) + std::fabs(mpfr_get_d(row.l, MPFR_RNDA)) + 8 +
                         static_cast<double>(zs.size()) * 0x1p-60) * kUp;
  // D = sum_j P_j dP_j at p bits: each product P dP within (eps_P + 1.02) P |dP| 2^-p, the sum one more rounding.
  row.d_err = 0;
  Mpfr dsum(p), prod(p), dp(p + 64);
  mpfr_set_zero(dsum, 1);
  double abs = 0;
  mpfr_set_zero(row.d, 1);
  for (std::int64_t j = 0; j < f.len_k; ++j) {
    MpPair pr(p);
    if (!mp_pair(in, r, j, row, p, pr, &dp)) continue;
    mpfr_mul(prod, pr.pv, dp, MPFR_RNDN);
    const double a = std::fabs(mpfr_get_d(prod, MPFR_RNDA));
    row.d_err += (pr.eps + 1.02) * a;
    abs += a;
    mpfr_add(dsum, dsum, prod, MPFR_RNDN);
  }
  // A sequential sum at p bits of n terms errs by at most (n - 1) 2^-p sum |terms| (1.01).
  row.d_err = (row.d_err * 1.01 + 1.01 * static_cast<double>(f.len_k) * abs) * kUp;
  mpfr_set(row.d, dsum, MPFR_RNDN);
}

/// v +- err 2^-p both rounded into out: true when they agree (code holds it).
bool settles(const Format& out, const Mpfr& v, double err, long p, std::uint64_t& code) {
  const Rounder rn = Rounder::nearest(out);
  Mpfr w(64), lo(mpfr_get_prec(v) + 8), hi(mpfr_get_prec(v) + 8);
  mpfr_set_d(w, err, MPFR_RNDU);
  mpfr_mul_2si(w, w, -p, MPFR_RNDU);
  mpfr_sub(lo, v, w, MPFR_RNDD);
  mpfr_add(hi, v, w, MPFR_RNDU);
  if (mpfr_zero_p(v) && err == 0) {  // an exact 0: +0 (the sign of a sum of zeros is not the gradient's)
    code = round_double(out, 0.0, rn).code;
    return true;
  }
  code = mpfr_ref::round(out, v, rn).code;
  return mpfr_ref::round(out, lo, rn).code == mpfr_ref::round(out, hi, rn).code;
}

/// s sum_t a_t b_t(c) at p bits (exact products, one rounding, the scale one more): err = s sum aerr |b| + 1.01 s |T|
/// + |res| (of 2^-p).
void mp_sum(const std::vector<MpTerm>& terms, const std::vector<double>& b, double s, long p, Mpfr& res, double& err) {
  std::deque<Mpfr> prod;
  std::vector<mpfr_ptr> ptr;
  double prop = 0;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    prod.emplace_back(p + 64);
    mpfr_mul_d(prod.back(), *terms[t].a, b[t], MPFR_RNDN);  // exact: p + 24 bits
    ptr.push_back(prod.back().get());
    prop += terms[t].aerr * std::fabs(b[t]);
  }
  Mpfr sum(p);
  // Each rounding counted only where MPFR says it was inexact: with exact terms (P = 1 and dS = 0: one visible key) dV is
  // an exact sum, possibly a midpoint of the output format, which no bracket of nonzero width would settle.
  const bool sum_exact = mpfr_sum(sum, ptr.data(), static_cast<unsigned long>(ptr.size()), MPFR_RNDN) == 0;
  const bool mul_exact = mpfr_mul_d(res, sum, s, MPFR_RNDN) == 0;
  err = (s * prop * 1.01 + (sum_exact ? 0 : 1.01 * s * std::fabs(mpfr_get_d(sum, MPFR_RNDA))) +
         (mul_exact ? 0 : std::fabs(mpfr_get_d(res, MPFR_RNDA)))) * kUp;
}

/// dS at p bits from a pair: err (of 2^-p) <= (eps + 1.01) P |x| + P xerr (1.01).
double mp_ds(const MpPair& pr, Mpfr& ds) {
  mpfr_mul(ds, pr.pv, pr.x, MPFR_RNDN);
  const double pa = std::fabs(mpfr_get_d(pr.pv, MPFR_RNDA)), xa = std::fabs(mpfr_get_d(pr.x, MPFR_RNDA));
  return ((pr.eps + 1.01) * pa * xa + pa * pr.xerr) * 1.01 * kUp;
}

}  // namespace abwd_mp

using abwd_mp::Mpfr;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
}  // namespace

void attention_bwd_mpfr(const AttentionBwdInputs& in, const Format& dq_out, const Format& dk_out, const Format& dv_out, long prec,
                        std::vector<std::uint64_t>& dq, std::vector<std::uint64_t>& dk, std::vector<std::uint64_t>& dv) {
  const AttentionInputs& f = in.fwd;
  const std::int64_t d = f.head_dim, lk = f.len_k;
  dq.assign(static_cast<std::size_t>(f.rows() * d), 0);
  std::deque<Mpfr> gk, gv;  // dK / s and dV, kv_rows x d
  for (std::int64_t e = 0; e < in.kv_rows() * d; ++e) {
    gk.emplace_back(prec);
    gv.emplace_back(prec);
    mpfr_set_zero(gk.back(), 1);
    mpfr_set_zero(gv.back(), 1);
  }
  std::vector<char> kv_nan(static_cast<std::size_t>(in.kv_rows()), 0);
  Mpfr t(prec), acc(prec), lse(prec), dd(prec), mx(prec);
  std::deque<Mpfr> z, p, dp;
  for (std::int64_t j = 0; j < lk; ++j) z.emplace_back(prec), p.emplace_back(prec), dp.emplace_back(prec);
  auto dot = [&](const double* a, const double* b, Mpfr& out) {
    mpfr_set_zero(out, 1);
    for (std::int64_t c = 0; c < d; ++c) {
      mpfr_set_d(t, a[c], MPFR_RNDN);
      mpfr_mul_d(t, t, b[c], MPFR_RNDN);
      mpfr_add(out, out, t, MPFR_RNDN);
    }
  };
  const Rounder rq = Rounder::nearest(dq_out);
  for (std::int64_t r = 0; r < f.rows(); ++r) {
    const std::int64_t kb = f.kv_base(r);
    std::vector<char> vis(static_cast<std::size_t>(lk), 0);
    bool any = false, nan = false;
    for (std::int64_t j = 0; j < lk; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      if (!f.visible(r, j)) continue;
      vis[ju] = 1;
      any = true;
      const double m = f.mask_at(r, j);
      nan = nan || std::isnan(m) || m == kInf;
      dot(f.q_row(r), f.k + (kb + j) * d, z[ju]);
      mpfr_mul_d(z[ju], z[ju], f.scale, MPFR_RNDN);
      mpfr_add_d(z[ju], z[ju], m, MPFR_RNDN);
      dot(in.d_o + r * d, f.v + (kb + j) * d, dp[ju]);
    }
    if (!any) {
      for (std::int64_t c = 0; c < d; ++c) dq[static_cast<std::size_t>(r * d + c)] = round_double(dq_out, 0.0, rq).code;
      continue;
    }
    if (in.reads_saved) {
      mpfr_set_d(lse, in.lse[r], MPFR_RNDN);
    } else {
      mpfr_set_inf(mx, -1);
      for (std::int64_t j = 0; j < lk; ++j)
        if (vis[static_cast<std::size_t>(j)]) mpfr_max(mx, mx, z[static_cast<std::size_t>(j)], MPFR_RNDN);
      mpfr_set_zero(acc, 1);
      for (std::int64_t j = 0; j < lk; ++j) {
        if (!vis[static_cast<std::size_t>(j)]) continue;
        mpfr_sub(t, z[static_cast<std::size_t>(j)], mx, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add(acc, acc, t, MPFR_RNDN);
      }
      mpfr_log(lse, acc, MPFR_RNDN);
      mpfr_add(lse, lse, mx, MPFR_RNDN);
    }
    for (std::int64_t j = 0; j < lk; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      if (!vis[ju]) continue;
      mpfr_sub(p[ju], z[ju], lse, MPFR_RNDN);
      mpfr_exp(p[ju], p[ju], MPFR_RNDN);
    }
    if (in.reads_saved) {
      dot(in.d_o + r * d, in.o + r * d, dd);
    } else {
      mpfr_set_zero(dd, 1);
      for (std::int64_t j = 0; j < lk; ++j) {
        const auto ju = static_cast<std::size_t>(j);
        if (!vis[ju]) continue;
        mpfr_mul(t, p[ju], dp[ju], MPFR_RNDN);
        mpfr_add(dd, dd, t, MPFR_RNDN);
      }
    }
    // dS_j = P_j (dP_j - D), stored in dp.
    for (std::int64_t j = 0; j < lk; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      if (!vis[ju]) continue;
      mpfr_sub(dp[ju], dp[ju], dd, MPFR_RNDN);
      mpfr_mul(dp[ju], dp[ju], p[ju], MPFR_RNDN);
    }
    for (std::int64_t c = 0; c < d; ++c) {
      mpfr_set_zero(acc, 1);
      for (std::int64_t j = 0; j < lk; ++j) {
        const auto ju = static_cast<std::size_t>(j);
        if (!vis[ju]) continue;
        mpfr_mul_d(t, dp[ju], f.k[(kb + j) * d + c], MPFR_RNDN);
        mpfr_add(acc, acc, t, MPFR_RNDN);
      }
      mpfr_mul_d(acc, acc, f.scale, MPFR_RNDN);
      dq[static_cast<std::size_t>(r * d + c)] = nan ? round_double(dq_out, kNan, rq).code : mpfr_ref::round(dq_out, acc, rq).code;
    }
    for (std::int64_t j = 0; j < lk; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      if (!vis[ju]) continue;
      if (nan) kv_nan[static_cast<std::size_t>(kb + j)] = 1;
      for (std::int64_t c = 0; c < d; ++c) {
        const auto e = static_cast<std::size_t>((kb + j) * d + c);
        mpfr_mul_d(t, dp[ju], f.q_row(r)[c], MPFR_RNDN);
        mpfr_add(gk[e], gk[e], t, MPFR_RNDN);
        mpfr_mul_d(t, p[ju], in.d_o[r * d + c], MPFR_RNDN);
        mpfr_add(gv[e], gv[e], t, MPFR_RNDN);
      }
    }
  }
  dk.assign(gk.size(), 0);
  dv.assign(gv.size(), 0);
  for (std::size_t e = 0; e < gk.size(); ++e) {
    const bool nan = kv_nan[e / static_cast<std::size_t>(d)] != 0;
    mpfr_mul_d(gk[e], gk[e], f.scale, MPFR_RNDN);
    dk[e] = nan ? round_double(dk_out, kNan, Rounder::nearest(dk_out)).code : mpfr_ref::round(dk_out, gk[e], Rounder::nearest(dk_out)).code;
    dv[e] = nan ? round_double(dv_out, kNan, Rounder::nearest(dv_out)).code : mpfr_ref::round(dv_out, gv[e], Rounder::nearest(dv_out)).code;
  }
}

}  // namespace fpcert
