// oracle/attention/attention_bwd_ref.cpp — the attention backward reference: a double / double-double evaluation with a
// proved bracket per element, MPFR where it cannot decide (docs/backward.md, "Attention backward", derives every
// constant used here; the scores' bracket is the forward's, oracle/attention/attention_ref.cpp).
#include "oracle/attention/attention_bwd_ref.hpp"

#include "oracle/attention/attention_bwd_mp.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <set>

#include "base/parallel.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert {

namespace {

using mpfr_ref::Mpfr;
using namespace abwd_mp;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kU = 0x1p-53;   // double's unit roundoff
constexpr long kZivCap = 2048;   // bits: beyond, the p-bit value's rounding is kept and counted as unsettled
constexpr double kUp = 1 + 0x1p-40;  // covers the roundings of the bound's own double arithmetic

inline void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

/// gamma_n^2 of double (Ogita, Rump and Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput. 26(6), 2005:
/// Sum2 and Dot2 kept as the pair (s, c) err by at most gamma_n^2 sum |p_i| over their n terms).
double gamma2(double n) {
  const double g = n * kU / (1 - n * kU);
  return g * g * (1 + 0x1p-40);
}

/// sum_c a_c b_c for values whose products are exact in double (fp32 and narrower: 48 bits) as hi + lo, within err.
struct Dot {
  double hi = 0, lo = 0, abs = 0, err = 0;
};
Dot exact_dot(const double* a, const double* b, std::int64_t n) {
  Dot d;
  double s = 0, comp = 0;
  for (std::int64_t c = 0; c < n; ++c) {
    const double pr = a[c] * b[c];
    double e;
    two_sum(s, pr, s, e);
    comp += e;
    d.abs += std::fabs(pr);
  }
  two_sum(s, comp, d.hi, d.lo);
  d.err = gamma2(static_cast<double>(std::max<std::int64_t>(n, 2))) * d.abs;
  return d;
}

/// Dot2 of a_j b_j (a_j doubles with an absolute error aerr_j, b_j exact): value, the sum of |a b| and the propagated
/// sum aerr_j |b_j|.
struct Acc {
  double hi = 0, c = 0, abs = 0, prop = 0;
  std::int64_t n = 0;
  void add(double a, double aerr, double b) {
    const double ph = a * b, pl = std::fma(a, b, -ph);
    double e;
    two_sum(hi, ph, hi, e);
    c += e + pl;
    abs += std::fabs(ph);
    prop += aerr * std::fabs(b);
    ++n;
  }
  /// s times the sum as a double, and the bound on its error: s (prop + gamma_{2n}^2 abs) (each product's TwoProd error
  /// is one more term) and the final roundings, 2^-51 |result| (s (hi + c) rounded twice).
  double finish(double s, double& err) const {
    double th, tl;
    two_sum(hi, c, th, tl);
    const double ph = s * th;
    const double res = ph + (std::fma(s, th, -ph) + s * tl);
    err = (s * (prop * kUp + gamma2(static_cast<double>(2 * n + 2)) * abs) + 0x1p-51 * std::fabs(res)) * kUp;
    return res;
  }
};

/// Query row r's L_i (the saved LSE, or the exact forward's log-sum-exp) and D_i as double-doubles with error bounds.
struct QRow {
  double l_hi = 0, l_lo = 0, l_err = 0;
  double d_hi = 0, d_lo = 0, d_err = 0;
  bool masked = false, nan = false;
  /// reads_saved = false and one visible key: P = e^{z - log e^z} = 1 and D = dP exactly, so dS = 0 exactly (no bracket
  /// around 0 would ever settle).
  bool single = false;
};

/// One pair (i, j): P_ij within perr, dP_ij as hi + lo within dp_err.
struct Pair {
  bool visible = false, nan = false;
  double p = 0, perr = 0;
  double dp_hi = 0, dp_lo = 0, dp_err = 0, dp_abs = 0;
  double zabs = 0;  ///< |s x| + |mask| + |z - L|: scales the MPFR path's argument error
};

/// z_ij = s q_i . k_j + mask_ij as zh + zl within zerr (the forward's bracket: attention_scores).
bool pair_score(const AttentionInputs& in, std::int64_t r, std::int64_t j, double& zh, double& zl, double& zerr, double& zabs,
                bool& nan) {
  nan = false;
  if (!in.visible(r, j)) return false;
  const std::int64_t d = in.head_dim;
  const Dot x = exact_dot(in.q_row(r), in.k + (in.kv_base(r) + j) * d, d);
  const double m = in.mask_at(r, j);
  if (std::isnan(m) || m == kInf) {
    nan = true;
    return true;
  }
  const double ph = in.scale * x.hi, pl = std::fma(in.scale, x.hi, -ph) + in.scale * x.lo;
  double e;
  two_sum(ph, m, zh, e);
  zl = e + pl;
  two_sum(zh, zl, zh, zl);
  zerr = 1.01 * in.scale * x.err + 0x1p-102 * (std::fabs(ph) + std::fabs(m));
  zabs = std::fabs(ph) + std::fabs(m);
  return true;
}

/// P_ij = e^{z_ij - L_i} and dP_ij = dO_i . v_j in double (docs/backward.md, "Reference"): exp_fast's relative error,
/// (1 + tl)'s truncation tl^2, the argument's error (z's, L's, tl's rounding); below e^-104 P is taken as 0 (2^-150).
Pair make_pair_d(const AttentionBwdInputs& in, std::int64_t r, std::int64_t j, const QRow& row) {
  Pair pr;
  const AttentionInputs& f = in.fwd;
  double zh = 0, zl = 0, zerr = 0, zabs = 0;
  bool nan = false;
  if (!pair_score(f, r, j, zh, zl, zerr, zabs, nan)) return pr;
  pr.visible = true;
  if (nan || std::isnan(row.l_hi) || row.l_hi == -kInf) {
    pr.nan = true;
    return pr;
  }
  const std::int64_t d = f.head_dim;
  const Dot dp = exact_dot(in.d_o + r * d, f.v + (f.kv_base(r) + j) * d, d);
  pr.dp_hi = dp.hi;
  pr.dp_lo = dp.lo;
  pr.dp_err = dp.err;
  pr.dp_abs = dp.abs;
  if (row.l_hi == kInf) return pr;  // P = 0 exactly (a saved +Inf LSE)
  if (row.single) {
    pr.p = 1;
    return pr;
  }
  double th, tl;
  two_sum(zh, -row.l_hi, th, tl);
  tl += zl - row.l_lo;
  pr.zabs = zabs + std::fabs(th);
  if (th > 700) {  // P beyond e^700: the saved LSE is not this row's
    pr.nan = true;
    return pr;
  }
  if (th < kTailArgument) {
    pr.perr = 0x1p-150;
    return pr;
  }
  const double w = math::exp_fast(math::ExpKind::Exp, th, math::exp_tables());
  pr.p = w + w * tl;
  const double eps = kExpTermRelError + 1.01 * tl * tl + 1.01 * (zerr + row.l_err + kU * std::fabs(tl) + 0x1p-104 * std::fabs(row.l_hi));
  pr.perr = 1.01 * eps * pr.p;
  return pr;
}

/// x = dP_ij - D_i and its error.
double pair_x(const Pair& pr, const QRow& row, double& xerr) {
  xerr = 0;
  if (row.single) return 0;
  double s, e;
  two_sum(pr.dp_hi, -row.d_hi, s, e);
  const double t = (e + pr.dp_lo) - row.d_lo;
  const double x = s + t;
  xerr = (pr.dp_err + row.d_err + 2.02 * kU * (std::fabs(e) + std::fabs(pr.dp_lo) + std::fabs(row.d_lo)) + kU * std::fabs(x)) * kUp;
  return x;
}

/// dS = P x and its error: |P x - P~ x~| <= perr (|x~| + xerr) + P~ xerr, and the product's rounding.
double pair_ds(const Pair& pr, double x, double xerr, double& err) {
  const double ds = pr.p * x;
  err = ((pr.perr * (std::fabs(x) + xerr) + pr.p * xerr) + kU * std::fabs(ds)) * kUp;
  return ds;
}

QRow row_stats_d(const AttentionBwdInputs& in, std::int64_t r) {
  QRow row;
  const AttentionInputs& f = in.fwd;
  const std::int64_t d = f.head_dim;
  std::int64_t visible = 0;
  for (std::int64_t j = 0; j < f.len_k; ++j) visible += f.visible(r, j) ? 1 : 0;
  if (visible == 0) {
    row.masked = true;
    return row;
  }
  if (in.reads_saved) {
    row.l_hi = in.lse[r];
    const Dot dd = exact_dot(in.d_o + r * d, in.o + r * d, d);
    row.d_hi = dd.hi;
    row.d_lo = dd.lo;
    row.d_err = dd.err;
    return row;
  }
  row.single = visible == 1;
  // The exact forward's L = M + log sum_j e^{z_j - M} (as attention_reference_row: S within eps_s relative, log S at 128
  // bits, within 1.02 eps_s), then D = sum_j P_j dP_j by Dot2 with the pairs' errors propagated.
  std::vector<double> zh(static_cast<std::size_t>(f.len_k), -kInf), zl(zh.size(), 0), ze(zh.size(), 0);
  double m = -kInf;
  for (std::int64_t j = 0; j < f.len_k; ++j) {
    double a = 0, b = 0, e = 0, za = 0;
    bool nan = false;
    if (!pair_score(f, r, j, a, b, e, za, nan)) continue;
    if (nan) {
      row.nan = true;
      return row;
    }
    const auto ju = static_cast<std::size_t>(j);
    zh[ju] = a, zl[ju] = b, ze[ju] = e;
    m = std::max(m, a);
  }
  double s = 0, sc = 0, eps = 0;
  std::int64_t terms = 0, dropped = 0;
  for (std::size_t j = 0; j < zh.size(); ++j) {
    if (zh[j] == -kInf) continue;
    double th, tl;
    two_sum(zh[j], -m, th, tl);
    tl += zl[j];
    if (th < kTailArgument) {
      ++dropped;
      continue;
    }
    const double e = math::exp_fast(math::ExpKind::Exp, th, math::exp_tables());
    const double w = e + e * tl;
    eps = std::max(eps, kExpTermRelError + 1.01 * tl * tl + 1.01 * (ze[j] + kU * std::fabs(tl)));
    double t, ee;
    two_sum(s, w, t, ee);
    s = t;
    sc += ee;
    ++terms;
  }
  double s_hi, s_lo;
  two_sum(s, sc, s_hi, s_lo);
  const double eps_s = eps + gamma2(static_cast<double>(2 * terms + 1)) + static_cast<double>(dropped) * 0x1p-150;
  Mpfr sm(128), lg(128);
  mpfr_set_d(sm, s_hi, MPFR_RNDN);
  mpfr_add_d(sm, sm, s_lo, MPFR_RNDN);
  mpfr_log(lg, sm, MPFR_RNDN);
  mpfr_add_d(lg, lg, m, MPFR_RNDN);
  row.l_hi = mpfr_get_d(lg, MPFR_RNDN);
  mpfr_sub_d(lg, lg, row.l_hi, MPFR_RNDN);
  row.l_lo = mpfr_get_d(lg, MPFR_RNDN);
  row.l_err = 1.02 * eps_s + 0x1p-100 * std::fabs(row.l_hi);
  Acc acc;
  for (std::int64_t j = 0; j < f.len_k; ++j) {
    const Pair pr = make_pair_d(in, r, j, row);
    if (!pr.visible) continue;
    if (pr.nan) {
      row.nan = true;
      return row;
    }
    // P~ (dp_hi + dp_lo) as two terms; |P dP - P~ dP~| <= perr (|dP~| + dp_err) + P~ dp_err, propagated.
    acc.add(pr.p, 0, pr.dp_hi);
    acc.add(pr.p, 0, pr.dp_lo);
    acc.prop += pr.perr * (std::fabs(pr.dp_hi) + std::fabs(pr.dp_lo) + pr.dp_err) + pr.p * pr.dp_err;
  }
  double err = 0;
  const double dsum = acc.finish(1.0, err);
  double dh, dl;
  two_sum(dsum, 0.0, dh, dl);
  row.d_hi = dh;
  row.d_lo = dl;
  row.d_err = err;
  return row;
}

struct Outputs {
  const Format *dq, *dk, *dv;
};

/// Rounds value +- err into out; false when the bracket straddles.
bool round_bracket(const Format& out, double v, double err, std::uint64_t& code) {
  const Rounder rn = Rounder::nearest(out);
  if (v == 0 && err == 0) v = 0.0;  // an exact 0: +0
  code = round_double(out, v - err, rn).code;
  return code == round_double(out, v + err, rn).code;
}

/// dQ of query row r (d elements), the rows' stats given.
void dq_row(const AttentionBwdInputs& in, std::int64_t r, const QRow& row, const Format& out, std::uint64_t* codes, double* values,
            AttentionBwdRefStats& st) {
  const AttentionInputs& f = in.fwd;
  const std::int64_t d = f.head_dim;
  st.elements += d;
  auto fill = [&](double v) {
    for (std::int64_t c = 0; c < d; ++c) codes[c] = round_double(out, v, Rounder::nearest(out)).code, values[c] = v;
  };
  if (row.nan) return fill(kNan);
  if (row.masked) return fill(0.0);
  std::vector<Acc> acc(static_cast<std::size_t>(d));
  const std::int64_t kb = f.kv_base(r);
  // At the exact forward (reads_saved = false) sum_j dS_ij = sum_j P_ij dP_ij - D_i sum_j P_ij = 0, so dQ_i = s sum_j
  // dS_ij (k_j - k_j0) for any key j0: the first visible key's coordinates are subtracted where every difference is exact
  // (a column in which the visible keys agree then gives dQ = 0 exactly, which no bracket around 0 would settle).
  std::vector<double> shift(static_cast<std::size_t>(d), 0.0);
  if (!in.reads_saved) {
    std::int64_t j0 = -1;
    for (std::int64_t j = 0; j < f.len_k && j0 < 0; ++j)
      if (f.visible(r, j)) j0 = j;
    for (std::int64_t c = 0; c < d; ++c) {
      const double k0 = f.k[(kb + j0) * d + c];
      bool exact = true;
      for (std::int64_t j = 0; j < f.len_k && exact; ++j) {
        const double kj = f.k[(kb + j) * d + c];
        double hi, lo;
        two_sum(kj, -k0, hi, lo);
        exact = lo == 0;
      }
      shift[static_cast<std::size_t>(c)] = exact ? k0 : 0.0;
    }
  }
  for (std::int64_t j = 0; j < f.len_k; ++j) {
    const Pair pr = make_pair_d(in, r, j, row);
    if (!pr.visible) continue;
    if (pr.nan) return fill(kNan);
    double xerr = 0, err = 0;
    const double x = pair_x(pr, row, xerr);
    const double ds = pair_ds(pr, x, xerr, err);
    const double* k = f.k + (kb + j) * d;
    for (std::int64_t c = 0; c < d; ++c) acc[static_cast<std::size_t>(c)].add(ds, err, k[c] - shift[static_cast<std::size_t>(c)]);
  }
  std::vector<std::int64_t> unsettled;
  for (std::int64_t c = 0; c < d; ++c) {
    double err = 0;
    values[c] = acc[static_cast<std::size_t>(c)].finish(f.scale, err);
    if (!round_bracket(out, values[c], err, codes[c])) unsettled.push_back(c);
  }
  st.mpfr += static_cast<std::int64_t>(unsettled.size());
  for (long p = 128; !unsettled.empty(); p *= 2) {
    MpQRow mrow(p);
    mp_row_stats(in, r, p, mrow);
    std::deque<MpPair> pairs;
    std::deque<Mpfr> ds;
    std::vector<MpTerm> terms;
    std::vector<std::int64_t> keys;
    for (std::int64_t j = 0; j < f.len_k; ++j) {
      pairs.emplace_back(p);
      if (!mp_pair(in, r, j, mrow, p, pairs.back())) {
        pairs.pop_back();
        continue;
      }
      ds.emplace_back(p);
      terms.push_back({&ds.back(), mp_ds(pairs.back(), ds.back())});
      keys.push_back(j);
    }
    std::vector<std::int64_t> still;
    std::vector<double> b(keys.size());
    for (std::int64_t c : unsettled) {
      for (std::size_t t = 0; t < keys.size(); ++t) b[t] = f.k[(kb + keys[t]) * d + c] - shift[static_cast<std::size_t>(c)];
      Mpfr v(p);
      double err = 0;
      mp_sum(terms, b, f.scale, p, v, err);
      const bool ok = settles(out, v, err, p, codes[c]);
      values[c] = mpfr_get_d(v, MPFR_RNDN);
      if (!ok && p < kZivCap) still.push_back(c);
      if (!ok && p >= kZivCap) ++st.unsettled;
    }
    unsettled = std::move(still);
  }
}

/// dK and dV of key/value row kr (d elements each), every query row's stats in `rows` (indexed by query row).
void dkv_row(const AttentionBwdInputs& in, std::int64_t kr, const std::vector<QRow>& rows, const Outputs& o, std::uint64_t* kc,
             double* kv, std::uint64_t* vc, double* vv, AttentionBwdRefStats& st) {
  const AttentionInputs& f = in.fwd;
  const std::int64_t d = f.head_dim, j = kr % f.len_k, r0 = in.group_row0(kr), nq = in.group() * f.len_q;
  st.elements += 2 * d;
  std::vector<Acc> ak(static_cast<std::size_t>(d)), av(static_cast<std::size_t>(d));
  bool nan = false;
  for (std::int64_t r = r0; r < r0 + nq && !nan; ++r) {
    const QRow& row = rows[static_cast<std::size_t>(r)];
    if (row.masked) continue;
    const Pair pr = make_pair_d(in, r, j, row);
    if (!pr.visible) continue;
    if (pr.nan || row.nan) {
      nan = true;
      break;
    }
    double xerr = 0, err = 0;
    const double x = pair_x(pr, row, xerr);
    const double ds = pair_ds(pr, x, xerr, err);
    const double* q = f.q_row(r);
    const double* g = in.d_o + r * d;
    for (std::int64_t c = 0; c < d; ++c) {
      ak[static_cast<std::size_t>(c)].add(ds, err, q[c]);
      av[static_cast<std::size_t>(c)].add(pr.p, pr.perr, g[c]);
    }
  }
  if (nan) {
    for (std::int64_t c = 0; c < d; ++c) {
      kc[c] = round_double(*o.dk, kNan, Rounder::nearest(*o.dk)).code, kv[c] = kNan;
      vc[c] = round_double(*o.dv, kNan, Rounder::nearest(*o.dv)).code, vv[c] = kNan;
    }
    return;
  }
  std::vector<std::int64_t> uk, uv;
  for (std::int64_t c = 0; c < d; ++c) {
    double err = 0;
    kv[c] = ak[static_cast<std::size_t>(c)].finish(f.scale, err);
    if (!round_bracket(*o.dk, kv[c], err, kc[c])) uk.push_back(c);
    vv[c] = av[static_cast<std::size_t>(c)].finish(1.0, err);
    if (!round_bracket(*o.dv, vv[c], err, vc[c])) uv.push_back(c);
  }
  st.mpfr += static_cast<std::int64_t>(uk.size() + uv.size());
  for (long p = 128; !uk.empty() || !uv.empty(); p *= 2) {
    std::deque<MpPair> pairs;
    std::deque<Mpfr> ds;
    std::vector<MpTerm> tk, tv;
    std::vector<std::int64_t> qs;
    for (std::int64_t r = r0; r < r0 + nq; ++r) {
      if (rows[static_cast<std::size_t>(r)].masked) continue;
      MpQRow mrow(p);
      mp_row_stats(in, r, p, mrow);
      pairs.emplace_back(p);
      if (!mp_pair(in, r, j, mrow, p, pairs.back())) {
        pairs.pop_back();
        continue;
      }
      ds.emplace_back(p);
      tk.push_back({&ds.back(), mp_ds(pairs.back(), ds.back())});
      tv.push_back({&pairs.back().pv, pairs.back().eps * 1.01 * std::fabs(mpfr_get_d(pairs.back().pv, MPFR_RNDA))});
      qs.push_back(r);
    }
    std::vector<double> b(qs.size());
    auto pass = [&](std::vector<std::int64_t>& todo, const std::vector<MpTerm>& terms, const double* src, double s, const Format& out,
                    std::uint64_t* codes, double* values) {
      std::vector<std::int64_t> still;
      for (std::int64_t c : todo) {
        for (std::size_t t = 0; t < qs.size(); ++t) b[t] = src[qs[t] * d + c];
        Mpfr v(p);
        double err = 0;
        mp_sum(terms, b, s, p, v, err);
        const bool ok = settles(out, v, err, p, codes[c]);
        values[c] = mpfr_get_d(v, MPFR_RNDN);
        if (!ok && p < kZivCap) still.push_back(c);
        if (!ok && p >= kZivCap) ++st.unsettled;
      }
      todo = std::move(still);
    };
    pass(uk, tk, f.q, f.scale, *o.dk, kc, kv);
    pass(uv, tv, in.d_o, 1.0, *o.dv, vc, vv);
  }
}

}  // namespace

std::int64_t AttentionBwdInputs::group_row0(std::int64_t kr) const {
  const std::int64_t bh = kr / fwd.len_k, b = bh / fwd.heads_kv, hk = bh % fwd.heads_kv;
  return (b * fwd.heads_q + hk * group()) * fwd.len_q;
}

AttentionBwdRef attention_bwd_reference(const AttentionBwdInputs& in, const Format& dq_out, const Format& dk_out, const Format& dv_out,
                                        const std::vector<std::int64_t>& q_rows, const std::vector<std::int64_t>& kv_rows,
                                        unsigned threads) {
  const AttentionInputs& f = in.fwd;
  AttentionBwdRef ref;
  const bool all = q_rows.empty() && kv_rows.empty();
  if (all) {
    for (std::int64_t r = 0; r < f.rows(); ++r) ref.q_rows.push_back(r);
    for (std::int64_t r = 0; r < in.kv_rows(); ++r) ref.kv_rows.push_back(r);
  } else {
    ref.q_rows = q_rows;
    ref.kv_rows = kv_rows;
  }
  const auto d = static_cast<std::size_t>(f.head_dim);
  const unsigned workers = threads ? threads : thread_count();
  // Every query row's L and D that a requested row needs: the dQ rows, and all the query rows of each dK/dV row's group.
  std::vector<char> need(static_cast<std::size_t>(f.rows()), 0);
  for (std::int64_t r : ref.q_rows) need[static_cast<std::size_t>(r)] = 1;
  for (std::int64_t kr : ref.kv_rows) {
    const std::int64_t r0 = in.group_row0(kr);
    for (std::int64_t r = r0; r < r0 + in.group() * f.len_q; ++r) need[static_cast<std::size_t>(r)] = 1;
  }
  std::vector<QRow> rows(need.size());
  parallel_for(need.size(), 16, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    for (std::uint64_t r = b; r < e; ++r)
      if (need[r]) rows[r] = row_stats_d(in, static_cast<std::int64_t>(r));
  }, workers);
  std::vector<AttentionBwdRefStats> per(workers + 1);
  const std::size_t nq = ref.q_rows.size(), nk = ref.kv_rows.size();
  ref.dq_code.resize(nq * d);
  ref.dq_value.resize(nq * d);
  ref.q_masked.resize(nq);
  ref.dk_code.resize(nk * d);
  ref.dk_value.resize(nk * d);
  ref.dv_code.resize(nk * d);
  ref.dv_value.resize(nk * d);
  parallel_for(nq, 1, [&](std::uint64_t b, std::uint64_t e, unsigned wk) {
    for (std::uint64_t i = b; i < e; ++i) {
      const QRow& row = rows[static_cast<std::size_t>(ref.q_rows[i])];
      ref.q_masked[i] = row.masked ? 1 : 0;
      dq_row(in, ref.q_rows[i], row, dq_out, ref.dq_code.data() + i * d, ref.dq_value.data() + i * d,
             per[std::min<std::size_t>(wk, workers)]);
    }
  }, workers);
  const Outputs o{&dq_out, &dk_out, &dv_out};
  parallel_for(nk, 1, [&](std::uint64_t b, std::uint64_t e, unsigned wk) {
    for (std::uint64_t i = b; i < e; ++i)
      dkv_row(in, ref.kv_rows[i], rows, o, ref.dk_code.data() + i * d, ref.dk_value.data() + i * d, ref.dv_code.data() + i * d,
              ref.dv_value.data() + i * d, per[std::min<std::size_t>(wk, workers)]);
  }, workers);
  for (const auto& s : per) {
    ref.stats.elements += s.elements;
    ref.stats.mpfr += s.mpfr;
    ref.stats.unsettled += s.unsettled;
  }
  return ref;
}

std::vector<std::int64_t> attention_bwd_sample_kv_rows(const AttentionBwdInputs& in, std::int64_t count) {
  const AttentionInputs& f = in.fwd;
  std::set<std::int64_t> rows;
  const std::int64_t heads = f.batch * f.heads_kv, total = in.kv_rows();
  for (std::int64_t bh = 0; bh < heads; ++bh) rows.insert({bh * f.len_k, bh * f.len_k + f.len_k - 1});
  const std::int64_t more = std::max<std::int64_t>(count - static_cast<std::int64_t>(rows.size()), 0);
  for (std::int64_t k = 0; k < more; ++k)
    rows.insert((k * total) / std::max<std::int64_t>(more, 1) + (k * 7919) % std::max<std::int64_t>(f.len_k / 8, 1));
  std::vector<std::int64_t> v;
  for (std::int64_t r : rows)
    if (r < total) v.push_back(r);
  return v;
}

}  // namespace fpcert
