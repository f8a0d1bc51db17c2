// oracle/attention/attention_ref.cpp — the attention reference: a double evaluation with a proved bracket per element,
// MPFR where it cannot decide (docs/attention.md, "Reference", derives every constant used here).
#include "oracle/attention/attention_ref.hpp"

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
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kU = 0x1p-53;  // double's unit roundoff
constexpr long kZivCap = 4096;  // bits: beyond, the p-bit value's rounding is kept and counted as unsettled

inline void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

/// gamma_n^2 of double: the error of Ogita, Rump and Oishi's Sum2 kept as the unevaluated pair (s, c) is at most
/// gamma_{n-1}^2 sum |p_i| ("Accurate sum and dot product", SIAM J. Sci. Comput. 26(6), 2005, proof of Prop. 4.5: the
/// TwoSum errors sum in absolute value to at most gamma_{n-1} sum |p_i|, and their float sum in c errs by gamma_{n-1} of that).
double gamma2(double n) {
  const double g = n * kU / (1 - n * kU);
  return g * g * (1 + 0x1p-40);
}

Rounded special(const Format& out, double v) { return round_double(out, v, Rounder::nearest(out)); }

/// MPFR at precision p over one row (docs/attention.md, "MPFR path"): the visible keys' w_j = e^{z_j - M} (z_j to
/// p + 64 bits), S = sum w_j, and Zmax = max_j (|s x_j| + |mask_j| + |z_j - M|), which scales the arguments' error.
struct MpRow {
  explicit MpRow(long prec) : p(prec), s(prec) {}
  long p;
  std::deque<Mpfr> w;  // Mpfr does not move: a deque grows without moving its elements
  std::vector<std::int64_t> keys;
  Mpfr s;
  double m = 0, zmax = 0;
  std::int64_t underflowed = 0;
  /// The relative error of each w_j as a coefficient of 2^-p: exp's rounding (1), the argument's (z_j within
  /// 2^-(p+62) (|s x_j| + |mask_j|) after three roundings at p + 64 bits, z_j - M one more: 1.01 2^-60 Zmax).
  double eps_w() const { return 1 + 1.01 * 0x1p-60 * zmax; }
};

void mp_row(const AttentionInputs& in, std::int64_t r, MpRow& row) {
  const long p2 = row.p + 64;
  const std::int64_t d = in.head_dim, kb = in.kv_base(r);
  const double* q = in.q_row(r);
  std::deque<Mpfr> zs;
  std::vector<double> sx;
  Mpfr x(p2);
  std::deque<Mpfr> ps;
  std::vector<mpfr_ptr> ptr;
  for (std::int64_t j = 0; j < in.len_k; ++j) {
    if (!in.visible(r, j)) continue;
    const double* k = in.k + (kb + j) * d;
    ps.clear();
    ptr.clear();
    for (std::int64_t c = 0; c < d; ++c) {
      ps.emplace_back(53);
      mpfr_set_d(ps.back(), q[c] * k[c], MPFR_RNDN);  // exact: a product of two fp32 values fits 48 bits
      ptr.push_back(ps.back().get());
    }
    mpfr_sum(x, ptr.data(), static_cast<unsigned long>(ptr.size()), MPFR_RNDN);
    zs.emplace_back(p2);
    mpfr_mul_d(zs.back(), x, in.scale, MPFR_RNDN);
    sx.push_back(std::fabs(mpfr_get_d(zs.back(), MPFR_RNDA)) + std::fabs(in.mask_at(r, j)));
    mpfr_add_d(zs.back(), zs.back(), in.mask_at(r, j), MPFR_RNDN);
    row.keys.push_back(j);
  }
  Mpfr mx(p2);
  mpfr_set_inf(mx, -1);
  for (auto& z : zs) mpfr_max(mx, mx, z, MPFR_RNDN);
  row.m = mpfr_get_d(mx, MPFR_RNDN);
  ptr.clear();
  Mpfr t(p2);
  std::size_t at = 0;
  for (auto& z : zs) {
    mpfr_sub_d(t, z, row.m, MPFR_RNDN);
    row.zmax = std::max(row.zmax, sx[at++] + std::fabs(mpfr_get_d(t, MPFR_RNDA)));
    row.w.emplace_back(row.p);
    mpfr_clear_underflow();
    mpfr_exp(row.w.back(), t, MPFR_RNDN);
    if (mpfr_underflow_p()) ++row.underflowed, mpfr_set_zero(row.w.back(), 1);
    ptr.push_back(row.w.back().get());
  }
  mpfr_sum(row.s, ptr.data(), static_cast<unsigned long>(ptr.size()), MPFR_RNDN);
}

/// O_c at the row's precision p and its error bound as a coefficient of 2^-p (docs/attention.md, "MPFR path"):
/// N = sum w_j v_jc with exact products and one rounding, O = N / S one more;
/// |O~ - O| <= (eps_N A + eps_S A) / S~ 1.01 + 2^-p |O~| with eps_N <= eps_w + 2^-p |N~| / A, eps_S = eps_w + 1.01 2^-p,
/// and |N~| <= A~: E <= ((2 eps_w + 2.02) 1.02 + 0.01) A~ / S~ + |O~|; underflowed terms (each below 2^-(2^29)) add
/// 2^-p max |v_c| per term.
void mp_element(const AttentionInputs& in, std::int64_t r, const MpRow& row, std::int64_t c, Mpfr& o, double& err) {
  const long p = row.p;
  const std::int64_t d = in.head_dim, kb = in.kv_base(r);
  std::deque<Mpfr> prod, aprod;
  std::vector<mpfr_ptr> ptr, aptr;
  double vmax = 0;
  std::size_t at = 0;
  for (std::int64_t j : row.keys) {
    const double v = in.v[(kb + j) * d + c];
    vmax = std::max(vmax, std::fabs(v));
    prod.emplace_back(p + 64);
    mpfr_mul_d(prod.back(), row.w[at++], v, MPFR_RNDN);  // exact: p + 24 bits
    aprod.emplace_back(p + 64);
    mpfr_abs(aprod.back(), prod.back(), MPFR_RNDN);
    ptr.push_back(prod.back().get());
    aptr.push_back(aprod.back().get());
  }
  Mpfr n(p), a(p);
  mpfr_sum(n, ptr.data(), static_cast<unsigned long>(ptr.size()), MPFR_RNDN);
  mpfr_sum(a, aptr.data(), static_cast<unsigned long>(aptr.size()), MPFR_RNDU);
  mpfr_div(o, n, row.s, MPFR_RNDN);
  const double ratio = mpfr_get_d(a, MPFR_RNDU) / mpfr_get_d(row.s, MPFR_RNDD);
  err = ((2 * row.eps_w() + 2.02) * 1.02 + 0.01) * ratio * (1 + 0x1p-40) + std::fabs(mpfr_get_d(o, MPFR_RNDA)) +
        static_cast<double>(row.underflowed) * vmax;
}

/// LSE = M + log S at precision p, its error a coefficient of 2^-p: log S~ within 1.01 eps_S of log S (eps_S = eps_w +
/// 1.01), the log's rounding |log S~|, the sum's |L~|; underflowed terms 1 each (relative to S >= 1).
void mp_lse(const MpRow& row, Mpfr& l, double& err) {
  Mpfr lg(row.p);
  mpfr_log(lg, row.s, MPFR_RNDN);
  mpfr_add_d(l, lg, row.m, MPFR_RNDN);
  err = 1.02 * (row.eps_w() + 1.01) + std::fabs(mpfr_get_d(lg, MPFR_RNDA)) + std::fabs(mpfr_get_d(l, MPFR_RNDA)) +
        static_cast<double>(row.underflowed);
}

/// Rounds v +- err 2^-p into out; true when both ends agree (then code holds it).
bool bracket_agrees(const Format& out, const Mpfr& v, double err, long p, std::uint64_t& code) {
  const Rounder rn = Rounder::nearest(out);
  Mpfr w(64), lo(mpfr_get_prec(v) + 8), hi(mpfr_get_prec(v) + 8);
  mpfr_set_d(w, err, MPFR_RNDU);
  mpfr_mul_2si(w, w, -p, MPFR_RNDU);
  mpfr_sub(lo, v, w, MPFR_RNDD);
  mpfr_add(hi, v, w, MPFR_RNDU);
  const std::uint64_t a = mpfr_ref::round(out, lo, rn).code, b = mpfr_ref::round(out, hi, rn).code;
  code = mpfr_ref::round(out, v, rn).code;
  return a == b;
}

}  // namespace

std::int64_t AttentionInputs::kv_base(std::int64_t r) const {
  const std::int64_t bh = r / len_q, b = bh / heads_q, h = bh % heads_q;
  const std::int64_t hk = h / (heads_q / heads_kv);
  return (b * heads_kv + hk) * len_k;
}

bool AttentionInputs::visible(std::int64_t r, std::int64_t j) const {
  if (causal && j > query(r) + causal_offset) return false;
  return !(mask && mask_at(r, j) == -kInf);
}

AttentionScores attention_scores(const AttentionInputs& in, std::int64_t r) {
  AttentionScores s;
  const auto n = static_cast<std::size_t>(in.len_k);
  const std::int64_t d = in.head_dim, kb = in.kv_base(r);
  s.x.assign(n, 0.0);
  s.qk_abs.assign(n, 0.0);
  s.z_hi.assign(n, -kInf);
  s.z_lo.assign(n, 0.0);
  s.z_err.assign(n, 0.0);
  const double* q = in.q_row(r);
  const double g2 = gamma2(static_cast<double>(std::max<std::int64_t>(d - 1, 1)));
  for (std::int64_t j = 0; j < in.len_k; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    const double* k = in.k + (kb + j) * d;
    double sum = 0, comp = 0, ab = 0;
    for (std::int64_t c = 0; c < d; ++c) {
      const double pr = q[c] * k[c];  // exact (fp32 values: 48 bits)
      double e;
      two_sum(sum, pr, sum, e);
      comp += e;
      ab += std::fabs(pr);
    }
    double xh, xl;
    two_sum(sum, comp, xh, xl);  // x = xh + xl within g2 ab
    s.x[ju] = xh;
    s.qk_abs[ju] = ab;
    if (!in.visible(r, j)) continue;
    const double m = in.mask_at(r, j);
    if (std::isnan(m) || m == kInf) {
      s.nan = true;
      continue;
    }
    ++s.visible;
    // z = s (xh + xl) + m: TwoProd (fma) of s xh, s xl rounded, TwoSum with m, the low parts added and renormalised.
    const double ph = in.scale * xh, pl = std::fma(in.scale, xh, -ph) + in.scale * xl;
    double zh, e;
    two_sum(ph, m, zh, e);
    double zl = e + pl;
    two_sum(zh, zl, zh, zl);
    s.z_hi[ju] = zh;
    s.z_lo[ju] = zl;
    s.z_err[ju] = 1.01 * in.scale * g2 * ab + 0x1p-102 * (std::fabs(ph) + std::fabs(m));
  }
  return s;
}

bool attention_reference_row(const AttentionInputs& in, std::int64_t r, const Format& out, MaskedRowPolicy o_policy,
                             bool masked_lse_pos_inf, std::uint64_t* codes, double* values, std::uint64_t& lse_code,
                             double& lse_value, AttentionRefStats* stats) {
  const std::int64_t d = in.head_dim;
  const auto du = static_cast<std::size_t>(d);
  auto put_all = [&](double o, double l) {
    for (std::size_t c = 0; c < du; ++c) {
      codes[c] = special(out, o).code;
      if (values) values[c] = o;
    }
    lse_code = special(f32, l).code;
    lse_value = l;
  };
  if (stats) stats->elements += d;
  const AttentionScores sc = attention_scores(in, r);
  if (sc.nan) {
    put_all(kNan, kNan);
    return true;
  }
  if (sc.visible == 0) {
    put_all(o_policy == MaskedRowPolicy::Nan ? kNan : 0.0, masked_lse_pos_inf ? kInf : -kInf);
    return false;
  }
  if (sc.visible == 1) {
    // One key: O = v_j and LSE = z_j exactly (S = 1): v rounded once, z_j computed exactly (2048 bits hold every product of
    // fp32 values, their sum, s times it and the mask: exponents span less than 700 bits) and rounded once; the bracket
    // would not settle where z_j is an fp32 midpoint.
    std::int64_t j = 0;
    while (sc.z_hi[static_cast<std::size_t>(j)] == -kInf) ++j;
    const double* v = in.v + (in.kv_base(r) + j) * d;
    for (std::size_t c = 0; c < du; ++c) {
      codes[c] = special(out, v[c]).code;
      if (values) values[c] = v[c];
    }
    Mpfr x(2048), pr(2048);
    mpfr_set_zero(x, 1);
    const double* q = in.q_row(r);
    const double* k = in.k + (in.kv_base(r) + j) * d;
    for (std::int64_t c = 0; c < d; ++c) {
      mpfr_set_d(pr, q[c], MPFR_RNDN);
      mpfr_mul_d(pr, pr, k[c], MPFR_RNDN);
      mpfr_add(x, x, pr, MPFR_RNDN);
    }
    mpfr_mul_d(x, x, in.scale, MPFR_RNDN);
    mpfr_add_d(x, x, in.mask_at(r, j), MPFR_RNDN);
    lse_code = mpfr_ref::round(f32, x, Rounder::nearest(f32)).code;
    lse_value = mpfr_get_d(x, MPFR_RNDN);
    return true;
  }
  // The shift M = the largest z_hi (ties: the larger z_lo); t_j = z_j - M as th + tl.
  std::size_t j0 = 0;
  const auto n = static_cast<std::size_t>(in.len_k);
  bool first = true;
  for (std::size_t j = 0; j < n; ++j) {
    if (sc.z_hi[j] == -kInf) continue;
    if (first || sc.z_hi[j] > sc.z_hi[j0] || (sc.z_hi[j] == sc.z_hi[j0] && sc.z_lo[j] > sc.z_lo[j0])) j0 = j;
    first = false;
  }
  const double m = sc.z_hi[j0];
  const math::ExpTables& tab = math::exp_tables();
  std::vector<double> w(n, 0.0);
  double eps = 0, s = 0, sc_ = 0;
  std::int64_t dropped = 0, terms = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (sc.z_hi[j] == -kInf) continue;
    double th, tl;
    two_sum(sc.z_hi[j], -m, th, tl);
    tl += sc.z_lo[j];
    if (th < kTailArgument) {  // e^{t_j} < e^{-104} + : below 2^-150, counted in the bound
      ++dropped;
      continue;
    }
    const double e = math::exp_fast(math::ExpKind::Exp, th, tab);
    w[j] = e + e * tl;
    ++terms;
    // exp_fast and the product by (1 + tl) (kExpTermRelError), e^tl - (1 + tl) <= tl^2, the argument's error: z_err,
    // tl's rounding (2^-53 |tl|) and th's representation (exact: TwoSum).
    const double arg = sc.z_err[j] + kU * std::fabs(tl);
    eps = std::max(eps, kExpTermRelError + 1.01 * tl * tl + 1.01 * arg);
    double t, ee;
    two_sum(s, w[j], t, ee);
    s = t;
    sc_ += ee;
  }
  double s_hi, s_lo;
  two_sum(s, sc_, s_hi, s_lo);
  const double g2 = gamma2(static_cast<double>(2 * terms + 1));
  const double tail = static_cast<double>(dropped) * 0x1p-150;
  const double eps_s = eps + g2 + tail;  // relative error of S (S >= 1 - eps: w_{j0} = e^{tl} with |tl| tiny)
  const Rounder rn = Rounder::nearest(out);
  std::vector<std::int64_t> unsettled;
  const std::int64_t kb = in.kv_base(r);
  for (std::int64_t c = 0; c < d; ++c) {
    const auto cu = static_cast<std::size_t>(c);
    double nh = 0, nc = 0, a = 0, vmax = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double v = in.v[(kb + static_cast<std::int64_t>(j)) * d + c];
      if (sc.z_hi[j] == -kInf) continue;
      vmax = std::max(vmax, std::fabs(v));
      if (w[j] == 0) continue;
      const double ph = w[j] * v, pl = std::fma(w[j], v, -ph);
      double t, e;
      two_sum(nh, ph, t, e);
      nh = t;
      nc += e + pl;
      a += std::fabs(ph);
    }
    double n_hi, n_lo;
    two_sum(nh, nc, n_hi, n_lo);
    double o = n_hi / s_hi;
    o += (n_lo - o * s_lo - std::fma(o, s_hi, -n_hi)) / s_hi;
    // |O~ - O| <= 1.03 (eps_N + eps_S) A / S + 2^-50 |O~| + 2 dropped 2^-150 vmax: eps_N = eps + g2 (the terms' and
    // the sum's), A / S from the double sums (within 1.01), the quotient's two roundings.
    const double err = 1.03 * (eps + g2 + eps_s) * (a * (1 + 0x1p-40)) / (s_hi * (1 - 0x1p-40)) + 0x1p-50 * std::fabs(o) +
                       2 * tail * vmax;
    const std::uint64_t c0 = round_double(out, o - err, rn).code, c1 = round_double(out, o + err, rn).code;
    codes[cu] = c0;
    if (values) values[cu] = o;
    if (c0 != c1) unsettled.push_back(c);
  }
  // LSE = M + log S: log of the double-double S at 128 bits.
  Mpfr sm(128), lg(128);
  mpfr_set_d(sm, s_hi, MPFR_RNDN);
  mpfr_add_d(sm, sm, s_lo, MPFR_RNDN);
  mpfr_log(lg, sm, MPFR_RNDN);
  mpfr_add_d(lg, lg, m, MPFR_RNDN);
  const double l = mpfr_get_d(lg, MPFR_RNDN);
  const double lerr = 1.02 * eps_s + 0x1p-51 * std::fabs(l) + 0x1p-120 * std::fabs(m);
  const Rounder r32 = Rounder::nearest(f32);
  lse_value = l;
  lse_code = round_double(f32, l - lerr, r32).code;
  const bool lse_ok = lse_code == round_double(f32, l + lerr, r32).code;
  if (unsettled.empty() && lse_ok) return true;
  // Ziv's loop over the row: precision doubled until every unsettled element's bracket rounds one way.
  if (stats) stats->mpfr += static_cast<std::int64_t>(unsettled.size()) + (lse_ok ? 0 : 1);
  bool lse_todo = !lse_ok;
  for (long p = 128; !unsettled.empty() || lse_todo; p *= 2) {
    MpRow row(p);
    mp_row(in, r, row);
    const bool last = p >= kZivCap;
    std::vector<std::int64_t> still;
    for (std::int64_t c : unsettled) {
      Mpfr o(p);
      double err = 0;
      mp_element(in, r, row, c, o, err);
      std::uint64_t code;
      const bool ok = bracket_agrees(out, o, err, p, code);
      codes[c] = code;
      if (values) values[c] = mpfr_get_d(o, MPFR_RNDN);
      if (!ok && !last) still.push_back(c);
      if (!ok && last && stats) ++stats->unsettled;
    }
    unsettled = std::move(still);
    if (lse_todo) {
      Mpfr lv(p);
      double err = 0;
      mp_lse(row, lv, err);
      std::uint64_t code;
      const bool ok = bracket_agrees(f32, lv, err, p, code);
      lse_code = code;
      lse_value = mpfr_get_d(lv, MPFR_RNDN);
      if (ok || last) lse_todo = false;
      if (!ok && last && stats) ++stats->unsettled;
    }
  }
  return true;
}

AttentionRef attention_reference(const AttentionInputs& in, const Format& out, MaskedRowPolicy o_policy, bool masked_lse_pos_inf,
                                 const std::vector<std::int64_t>& rows, unsigned threads) {
  AttentionRef ref;
  if (rows.empty()) {
    ref.rows.resize(static_cast<std::size_t>(in.rows()));
    for (std::int64_t r = 0; r < in.rows(); ++r) ref.rows[static_cast<std::size_t>(r)] = r;
  } else {
    ref.rows = rows;
  }
  const std::size_t nr = ref.rows.size(), d = static_cast<std::size_t>(in.head_dim);
  ref.code.resize(nr * d);
  ref.value.resize(nr * d);
  ref.lse_code.resize(nr);
  ref.lse_value.resize(nr);
  ref.masked.resize(nr);
  const unsigned workers = threads ? threads : thread_count();
  std::vector<AttentionRefStats> per(workers + 1);
  parallel_for(nr, 1, [&](std::uint64_t b, std::uint64_t e, unsigned wk) {
    for (std::uint64_t i = b; i < e; ++i) {
      std::uint64_t lc = 0;
      double lv = 0;
      const bool seen = attention_reference_row(in, ref.rows[i], out, o_policy, masked_lse_pos_inf, ref.code.data() + i * d,
                                                ref.value.data() + i * d, lc, lv, &per[std::min<std::size_t>(wk, workers)]);
      ref.lse_code[i] = lc;
      ref.lse_value[i] = lv;
      ref.masked[i] = seen ? 0 : 1;
    }
  }, workers);
  for (const auto& s : per) {
    ref.stats.elements += s.elements;
    ref.stats.mpfr += s.mpfr;
    ref.stats.unsettled += s.unsettled;
  }
  return ref;
}

std::vector<std::int64_t> attention_sample_rows(const AttentionInputs& in, std::int64_t count) {
  std::set<std::int64_t> rows;
  const std::int64_t heads = in.batch * in.heads_q, total = in.rows();
  for (std::int64_t bh = 0; bh < heads; ++bh) rows.insert({bh * in.len_q, bh * in.len_q + in.len_q - 1});
  const std::int64_t more = std::max<std::int64_t>(count - static_cast<std::int64_t>(rows.size()), 0);
  // Spread the rest evenly, with an odd stride over the length so that every head gets different queries.
  for (std::int64_t k = 0; k < more; ++k) rows.insert((k * total) / std::max<std::int64_t>(more, 1) + (k * 7919) % std::max<std::int64_t>(in.len_q / 8, 1));
  std::vector<std::int64_t> v;
  for (std::int64_t r : rows)
    if (r < total) v.push_back(r);
  return v;
}

void attention_mpfr_row(const AttentionInputs& in, std::int64_t r, const Format& out, MaskedRowPolicy o_policy, bool masked_lse_pos_inf,
                        long prec, std::uint64_t* codes, std::uint64_t& lse_code) {
  const std::int64_t d = in.head_dim, kb = in.kv_base(r);
  const double* q = in.q_row(r);
  std::deque<Mpfr> z;
  std::vector<std::int64_t> keys;
  Mpfr pr(prec);
  for (std::int64_t j = 0; j < in.len_k; ++j) {
    if (!in.visible(r, j)) continue;
    z.emplace_back(prec);
    mpfr_set_zero(z.back(), 1);
    for (std::int64_t c = 0; c < d; ++c) {
      mpfr_set_d(pr, q[c], MPFR_RNDN);
      mpfr_mul_d(pr, pr, in.k[(kb + j) * d + c], MPFR_RNDN);
      mpfr_add(z.back(), z.back(), pr, MPFR_RNDN);
    }
    mpfr_mul_d(z.back(), z.back(), in.scale, MPFR_RNDN);
    mpfr_add_d(z.back(), z.back(), in.mask_at(r, j), MPFR_RNDN);
    keys.push_back(j);
  }
  if (keys.empty()) {
    for (std::int64_t c = 0; c < d; ++c) codes[c] = special(out, o_policy == MaskedRowPolicy::Nan ? kNan : 0.0).code;
    lse_code = special(f32, masked_lse_pos_inf ? kInf : -kInf).code;
    return;
  }
  Mpfr mx(prec), s(prec), t(prec), nsum(prec), rest(prec);
  mpfr_set_inf(mx, -1);
  std::size_t j0 = 0, at0 = 0;
  for (auto& x : z) {
    if (mpfr_greater_p(x, mx)) mpfr_set(mx, x, MPFR_RNDN), j0 = at0;
    ++at0;
  }
  mpfr_set_zero(rest, 1);  // R = sum over j != j0 of e^{z_j - M}: S = 1 + R, log S = log1p(R) keeps R's digits
  at0 = 0;
  for (auto& x : z) {
    mpfr_sub(x, x, mx, MPFR_RNDN);
    mpfr_exp(x, x, MPFR_RNDN);  // x now holds e^{z_j - M}
    if (at0++ != j0) mpfr_add(rest, rest, x, MPFR_RNDN);
  }
  mpfr_add_ui(s, rest, 1, MPFR_RNDN);
  const Rounder rn = Rounder::nearest(out);
  for (std::int64_t c = 0; c < d; ++c) {
    mpfr_set_zero(nsum, 1);
    std::size_t at = 0;
    for (std::int64_t j : keys) {
      mpfr_mul_d(t, z[at++], in.v[(kb + j) * d + c], MPFR_RNDN);
      mpfr_add(nsum, nsum, t, MPFR_RNDN);
    }
    mpfr_div(t, nsum, s, MPFR_RNDN);
    codes[c] = mpfr_ref::round(out, t, rn).code;
  }
  // LSE = M + log1p(R), the sum at a precision that keeps log1p(R)'s digits below M's (M may be an fp32 midpoint).
  mpfr_log1p(t, rest, MPFR_RNDN);
  long lp = prec;
  if (!mpfr_zero_p(t) && !mpfr_zero_p(mx)) lp += std::max<long>(0, static_cast<long>(mpfr_get_exp(mx) - mpfr_get_exp(t)));
  Mpfr l(lp);
  mpfr_add(l, t, mx, MPFR_RNDN);
  lse_code = mpfr_ref::round(f32, l, Rounder::nearest(f32)).code;
}

}  // namespace fpcert
