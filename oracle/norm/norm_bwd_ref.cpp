// oracle/norm/norm_bwd_ref.cpp — the LayerNorm / RMSNorm backward reference: exact sums of products in MPFR, the
// quotient by n (or the power of D) rounded once by a directed bracket at a doubling precision (oracle/norm/norm_bwd_ref.hpp).
#include "oracle/norm/norm_bwd_ref.hpp"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "base/parallel.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert {

namespace {

using mpfr_ref::Mpfr;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr long kZivCap = 1L << 16;

/// The bit span of finite doubles: every value seen is a multiple of 2^lo below 2^hi in magnitude, so a sum of `count`
/// products of `factors` such values (or of their sums and differences) is exact at bits(factors, count) bits.
struct Span {
  int hi = -100000, lo = 100000;
  void see(double v) {
    if (v == 0 || !std::isfinite(v)) return;
    int e;
    const double m = std::frexp(std::fabs(v), &e);  // v = m 2^e, 1/2 <= m < 1
    const auto bits = static_cast<std::uint64_t>(std::ldexp(m, 53));
    hi = std::max(hi, e);
    lo = std::min(lo, e - 53 + std::countr_zero(bits));
  }
  long bits(int factors, std::int64_t count) const {
    if (hi < lo) return 128;
    const long lg = 64 - std::countl_zero(static_cast<std::uint64_t>(count) + 1);
    return std::max(128L, factors * (static_cast<long>(hi - lo) + 2) + 2 * lg + 64);
  }
};

/// Runs `f(prec)` until MPFR reports no inexact operation, doubling the precision (the span's estimate normally holds).
template <class F>
long exactly(long prec, F&& f) {
  for (;; prec *= 2) {
    mpfr_clear_inexflag();
    f(prec);
    if (!mpfr_inexflag_p()) return prec;
    if (prec > (1L << 22)) throw std::logic_error("norm backward reference: the exact sums were rounded (precision too small)");
  }
}

struct Settled {
  Rounded r;
  double value = 0;
  bool settled = true;
};

/// Ziv's loop: eval(p, lo, hi) brackets the exact value by lo <= v <= hi at precision p; returns the common rounding.
template <class F>
Settled ziv(const Format& out, F&& eval) {
  const Rounder rn = Rounder::nearest(out);
  Settled s;
  for (long p = 128; p <= kZivCap; p *= 2) {
    Mpfr lo(p), hi(p);
    eval(p, lo, hi);
    if (mpfr_zero_p(lo) && mpfr_zero_p(hi)) mpfr_set_zero(lo, 1), mpfr_set_zero(hi, 1);  // exactly 0: +0, as RN sums give
    const Rounded a = mpfr_ref::round(out, lo, rn), b = mpfr_ref::round(out, hi, rn);
    s.r = a;
    s.value = mpfr_get_d(lo, MPFR_RNDN);
    if (a.code == b.code) return s;
  }
  s.settled = false;
  return s;
}

Rounded nan_code(const Format& f) { return round_double(f, kNan, Rounder::nearest(f)); }

/// y = num * r^k with r in [rl, rh] (r > 0), directed: lo rounded down, hi up.
void times_power(mpfr_ptr lo, mpfr_ptr hi, mpfr_srcptr num, mpfr_srcptr rl, mpfr_srcptr rh, int k) {
  const long p = mpfr_get_prec(lo);
  Mpfr pl(p), ph(p);
  mpfr_pow_ui(pl, rl, static_cast<unsigned long>(k), MPFR_RNDD);
  mpfr_pow_ui(ph, rh, static_cast<unsigned long>(k), MPFR_RNDU);
  const bool neg = mpfr_sgn(num) < 0;
  mpfr_mul(lo, num, neg ? ph : pl, MPFR_RNDD);
  mpfr_mul(hi, num, neg ? pl : ph, MPFR_RNDU);
}

/// One row's exact data the column pass of reads_saved = false needs: S and D (the forward's, norm_ref.hpp).
struct RowExact {
  bool finite = false;
  std::unique_ptr<Mpfr> s, d;
};

class Reference {
 public:
  Reference(const NormBwdInputs& in, const Format& dx_out, const Format& param_out)
      : in_(in), dx_out_(dx_out), param_out_(param_out), n_(static_cast<std::size_t>(in.cols)),
        ln_(in.kind == NormKind::LayerNorm) {}

  double x(std::int64_t r, std::size_t j) const { return in_.x[static_cast<std::size_t>(r) * n_ + j]; }
  double dy(std::int64_t r, std::size_t j) const { return in_.dy[static_cast<std::size_t>(r) * n_ + j]; }
  double gamma(std::size_t j) const { return in_.gamma ? in_.gamma[j] : 1.0; }
  double mean(std::int64_t r) const { return ln_ ? in_.mean[r] : 0.0; }

  /// Row r: dx into codes/values (n entries), the row's statistics returned; rows_[r] filled for the column pass.
  NormBwdRowStats row(std::int64_t r, std::uint64_t* code, double* value, NormBwdRefStats& st, RowExact& keep) const {
    NormBwdRowStats rs;
    bool finite = true;
    Span sp;
    for (std::size_t j = 0; j < n_; ++j) {
      finite = finite && std::isfinite(x(r, j)) && std::isfinite(dy(r, j)) && std::isfinite(gamma(j));
      sp.see(x(r, j)), sp.see(dy(r, j)), sp.see(gamma(j));
    }
    if (in_.reads_saved) {
      finite = finite && std::isfinite(mean(r)) && std::isfinite(in_.rstd[r]);
      sp.see(mean(r)), sp.see(in_.rstd[r]);
    } else {
      sp.see(in_.eps);
    }
    sp.see(static_cast<double>(n_));
    st.elements += static_cast<std::int64_t>(n_);
    auto nan_row = [&] {
      rs.finite = false;
      rs.mean = rs.rstd = rs.a = rs.b = kNan;
      for (std::size_t j = 0; j < n_; ++j) code[j] = nan_code(dx_out_).code, value[j] = kNan;
      return rs;
    };
    if (!finite || n_ == 0) return nan_row();
    const auto nn = static_cast<unsigned long>(n_);
    const long prec = sp.bits(7, static_cast<std::int64_t>(n_));
    if (in_.reads_saved) {
      rs.mean = mean(r), rs.rstd = in_.rstd[r];
      // xh_j, g_j, A, B exact; q_j = rstd (n g_j - A - xh_j B), then dx_j = q_j / n rounded once.
      std::vector<std::unique_ptr<Mpfr>> q(n_);
      Mpfr a(prec), b(prec);
      exactly(prec, [&](long p) {
        mpfr_set_prec(a, p), mpfr_set_prec(b, p);
        Mpfr t(p), xh(p);
        g_sums(r, [&](std::size_t j, mpfr_ptr f) { xhat(r, j, f); }, a, b);
        for (std::size_t j = 0; j < n_; ++j) {
          q[j] = std::make_unique<Mpfr>(p);
          mpfr_ptr qj = *q[j];
          xhat(r, j, xh);
          mpfr_mul(t, xh, b, MPFR_RNDN);
          n_g(r, j, qj), mpfr_sub(qj, qj, a, MPFR_RNDN), mpfr_sub(qj, qj, t, MPFR_RNDN);
          mpfr_mul_d(qj, qj, in_.rstd[r], MPFR_RNDN);
        }
      });
      rs.a = mpfr_get_d(a, MPFR_RNDN), rs.b = mpfr_get_d(b, MPFR_RNDN);
      for (std::size_t j = 0; j < n_; ++j) {
        const Settled s = ziv(dx_out_, [&](long p, mpfr_ptr lo, mpfr_ptr hi) {
          (void)p;
          mpfr_div_ui(lo, *q[j], nn, MPFR_RNDD);
          mpfr_div_ui(hi, *q[j], nn, MPFR_RNDU);
        });
        code[j] = s.r.code, value[j] = s.value;
        st.unsettled += !s.settled;
      }
      return rs;
    }
    // reads_saved = false: S, Q, D, N_j, A, G exact; M_j = D (n g_j - A) - N_j G; dx_j = M_j D^{-3/2}.
    std::vector<std::unique_ptr<Mpfr>> m(n_);
    keep.s = std::make_unique<Mpfr>(prec);
    keep.d = std::make_unique<Mpfr>(prec);
    Mpfr a(prec), gg(prec);
    const long pe = exactly(prec, [&](long p) {
      mpfr_set_prec(*keep.s, p), mpfr_set_prec(*keep.d, p), mpfr_set_prec(a, p), mpfr_set_prec(gg, p);
      Mpfr q(p), t(p), nj(p);
      mpfr_ptr s = *keep.s, d = *keep.d;
      mpfr_set_zero(s, 1), mpfr_set_zero(q, 1), mpfr_set_zero(a, 1), mpfr_set_zero(gg, 1);
      for (std::size_t j = 0; j < n_; ++j) {
        mpfr_add_d(s, s, x(r, j), MPFR_RNDN);
        mpfr_set_d(t, x(r, j), MPFR_RNDN), mpfr_sqr(t, t, MPFR_RNDN), mpfr_add(q, q, t, MPFR_RNDN);
      }
      if (!ln_) mpfr_set_zero(s, 1);
      mpfr_mul_ui(d, q, nn, MPFR_RNDN);
      mpfr_sqr(t, s, MPFR_RNDN), mpfr_sub(d, d, t, MPFR_RNDN);
      mpfr_set_d(t, in_.eps, MPFR_RNDN), mpfr_mul_ui(t, t, nn, MPFR_RNDN), mpfr_mul_ui(t, t, nn, MPFR_RNDN);
      mpfr_add(d, d, t, MPFR_RNDN);
      g_sums(r, [&](std::size_t j, mpfr_ptr f) { numer(r, j, s, f); }, a, gg);
      for (std::size_t j = 0; j < n_; ++j) {
        m[j] = std::make_unique<Mpfr>(p);
        mpfr_ptr mj = *m[j];
        n_g(r, j, mj), mpfr_sub(mj, mj, a, MPFR_RNDN), mpfr_mul(mj, mj, d, MPFR_RNDN);
        numer(r, j, s, nj);
        mpfr_mul(t, nj, gg, MPFR_RNDN), mpfr_sub(mj, mj, t, MPFR_RNDN);
      }
    });
    if (mpfr_zero_p(keep.d->get())) return nan_row();
    {  // The statistics the bound reads (rounded to double): mean = S/n, rstd = n / sqrt(D), A, B = G / sqrt(D).
      Mpfr w(pe + 64), t(pe + 64);
      mpfr_div_ui(w, *keep.s, nn, MPFR_RNDN), rs.mean = mpfr_get_d(w, MPFR_RNDN);
      mpfr_rec_sqrt(w, *keep.d, MPFR_RNDN);
      mpfr_mul_ui(t, w, nn, MPFR_RNDN), rs.rstd = mpfr_get_d(t, MPFR_RNDN);
      mpfr_mul(t, w, gg, MPFR_RNDN), rs.b = mpfr_get_d(t, MPFR_RNDN);
      rs.a = mpfr_get_d(a, MPFR_RNDN);
    }
    keep.finite = true;
    for (std::size_t j = 0; j < n_; ++j) {
      const Settled s = ziv(dx_out_, [&](long p, mpfr_ptr lo, mpfr_ptr hi) {
        Mpfr rl(p), rh(p);
        mpfr_rec_sqrt(rl, *keep.d, MPFR_RNDD), mpfr_rec_sqrt(rh, *keep.d, MPFR_RNDU);
        times_power(lo, hi, *m[j], rl, rh, 3);
      });
      code[j] = s.r.code, value[j] = s.value;
      st.unsettled += !s.settled;
    }
    return rs;
  }

  /// Column j: dgamma_j (and dbeta_j) rounded into param_out.
  void column(std::size_t j, const std::vector<NormBwdRowStats>& rows, const std::vector<RowExact>& keep, NormBwdRef& out,
              NormBwdRefStats& st) const {
    const std::int64_t nr = in_.rows;
    bool dy_finite = true, xh_finite = true;
    Span sp;
    sp.see(static_cast<double>(n_));
    for (std::int64_t r = 0; r < nr; ++r) {
      dy_finite = dy_finite && std::isfinite(dy(r, j));
      const bool stats_ok = in_.reads_saved ? std::isfinite(mean(r)) && std::isfinite(in_.rstd[r]) : keep[r].finite;
      xh_finite = xh_finite && std::isfinite(x(r, j)) && stats_ok;
      sp.see(dy(r, j)), sp.see(x(r, j));
      if (in_.reads_saved) sp.see(mean(r)), sp.see(in_.rstd[r]);
    }
    (void)rows;
    st.elements += ln_ ? 2 : 1;
    const Rounder rn = Rounder::nearest(param_out_);
    if (ln_) {
      if (!dy_finite) {
        out.dbeta_code[j] = nan_code(param_out_).code, out.dbeta_value[j] = kNan;
      } else {
        const long p0 = sp.bits(1, nr);
        Mpfr sum(p0);
        exactly(p0, [&](long p) {
          mpfr_set_prec(sum, p), mpfr_set_zero(sum, 1);
          for (std::int64_t r = 0; r < nr; ++r) mpfr_add_d(sum, sum, dy(r, j), MPFR_RNDN);
        });
        out.dbeta_code[j] = mpfr_ref::round(param_out_, sum, rn).code, out.dbeta_value[j] = mpfr_get_d(sum, MPFR_RNDN);
      }
    }
    if (!dy_finite || !xh_finite) {
      out.dgamma_code[j] = nan_code(param_out_).code, out.dgamma_value[j] = kNan;
      return;
    }
    if (in_.reads_saved) {
      const long p0 = sp.bits(3, nr);
      Mpfr sum(p0);
      exactly(p0, [&](long p) {
        mpfr_set_prec(sum, p), mpfr_set_zero(sum, 1);
        Mpfr t(p);
        for (std::int64_t r = 0; r < nr; ++r) {
          xhat(r, j, t);
          mpfr_mul_d(t, t, dy(r, j), MPFR_RNDN), mpfr_add(sum, sum, t, MPFR_RNDN);
        }
      });
      out.dgamma_code[j] = mpfr_ref::round(param_out_, sum, rn).code, out.dgamma_value[j] = mpfr_get_d(sum, MPFR_RNDN);
      return;
    }
    // reads_saved = false: sum_r dy N_j D_r^{-1/2}, each term bracketed.
    std::vector<std::unique_ptr<Mpfr>> term(static_cast<std::size_t>(nr));
    for (std::int64_t r = 0; r < nr; ++r) {
      const long p0 = std::max<long>(mpfr_get_prec(*keep[r].s), 128) + 64;
      auto& tr = term[static_cast<std::size_t>(r)];
      tr = std::make_unique<Mpfr>(p0);
      exactly(p0, [&](long p) {
        mpfr_set_prec(*tr, p);
        numer(r, j, *keep[r].s, *tr);
        mpfr_mul_d(*tr, *tr, dy(r, j), MPFR_RNDN);
      });
    }
    const Settled s = ziv(param_out_, [&](long p, mpfr_ptr lo, mpfr_ptr hi) {
      Mpfr rl(p), rh(p), tl(p), th(p);
      mpfr_set_zero(lo, 1), mpfr_set_zero(hi, 1);
      for (std::int64_t r = 0; r < nr; ++r) {
        mpfr_rec_sqrt(rl, *keep[r].d, MPFR_RNDD), mpfr_rec_sqrt(rh, *keep[r].d, MPFR_RNDU);
        times_power(tl, th, *term[static_cast<std::size_t>(r)], rl, rh, 1);
        mpfr_add(lo, lo, tl, MPFR_RNDD), mpfr_add(hi, hi, th, MPFR_RNDU);
      }
    });
    out.dgamma_code[j] = s.r.code, out.dgamma_value[j] = s.value;
    st.unsettled += !s.settled;
  }

 private:
  /// xh = (x_rj - mean_r) rstd_r (RMSNorm: x_rj rstd_r), exact at t's precision (the caller checks).
  void xhat(std::int64_t r, std::size_t j, mpfr_ptr t) const {
    mpfr_set_d(t, x(r, j), MPFR_RNDN);
    if (ln_) mpfr_sub_d(t, t, mean(r), MPFR_RNDN);
    mpfr_mul_d(t, t, in_.rstd[r], MPFR_RNDN);
  }
  /// A = sum g (LayerNorm; 0 for RMSNorm) and sum g f_k with f_k from f(k, t) (xh_k or N_k), at b's precision (exact
  /// where the caller checks).
  template <class F>
  void g_sums(std::int64_t r, F&& f, mpfr_ptr a, mpfr_ptr b) const {
    const long p = mpfr_get_prec(b);
    Mpfr g(p), t(p);
    mpfr_set_zero(a, 1), mpfr_set_zero(b, 1);
    for (std::size_t k = 0; k < n_; ++k) {
      f(k, t);
      mpfr_set_d(g, dy(r, k), MPFR_RNDN), mpfr_mul_d(g, g, gamma(k), MPFR_RNDN);
      if (ln_) mpfr_add(a, a, g, MPFR_RNDN);
      mpfr_mul(t, g, t, MPFR_RNDN), mpfr_add(b, b, t, MPFR_RNDN);
    }
  }
  /// n g_j = n dy_rj gamma_j (exact).
  void n_g(std::int64_t r, std::size_t j, mpfr_ptr t) const {
    mpfr_set_d(t, dy(r, j), MPFR_RNDN), mpfr_mul_d(t, t, gamma(j), MPFR_RNDN);
    mpfr_mul_ui(t, t, static_cast<unsigned long>(n_), MPFR_RNDN);
  }
  /// N = n x_rj - S (S = 0 for RMSNorm).
  void numer(std::int64_t r, std::size_t j, mpfr_srcptr s, mpfr_ptr t) const {
    mpfr_set_d(t, x(r, j), MPFR_RNDN);
    mpfr_mul_ui(t, t, static_cast<unsigned long>(n_), MPFR_RNDN);
    if (ln_) mpfr_sub(t, t, s, MPFR_RNDN);
  }

  const NormBwdInputs& in_;
  const Format& dx_out_;
  const Format& param_out_;
  std::size_t n_;
  bool ln_;
};

void check_inputs(const NormBwdInputs& in) {
  if (in.rows < 0 || in.cols < 0) throw std::invalid_argument("norm backward reference: negative rows or cols");
  if (in.rows * in.cols > 0 && (!in.x || !in.dy)) throw std::invalid_argument("norm backward reference: x and dy are required");
  if (in.reads_saved && in.rows > 0 && (!in.rstd || (in.kind == NormKind::LayerNorm && !in.mean)))
    throw std::invalid_argument("norm backward reference: reads_saved needs rstd (and, for LayerNorm, mean) per row");
  if (!in.reads_saved && !(in.eps >= 0)) throw std::invalid_argument("norm backward reference: eps must be >= 0");
}

}  // namespace

NormBwdRef norm_bwd_reference(const NormBwdInputs& in, const Format& dx_out, const Format& param_out, unsigned threads) {
  check_inputs(in);
  NormBwdRef ref;
  const auto n = static_cast<std::size_t>(in.cols), rows = static_cast<std::size_t>(in.rows);
  ref.dx_code.resize(rows * n), ref.dx_value.resize(rows * n), ref.rows.resize(rows);
  ref.dgamma_code.resize(n), ref.dgamma_value.resize(n);
  if (in.kind == NormKind::LayerNorm) ref.dbeta_code.resize(n), ref.dbeta_value.resize(n);
  const Reference R(in, dx_out, param_out);
  std::vector<RowExact> keep(rows);
  const unsigned workers = threads ? threads : thread_count();
  std::vector<NormBwdRefStats> per(workers + 1);
  parallel_for(rows, 1, [&](std::uint64_t b, std::uint64_t e, unsigned w) {
    for (std::uint64_t r = b; r < e; ++r)
      ref.rows[r] = R.row(static_cast<std::int64_t>(r), ref.dx_code.data() + r * n, ref.dx_value.data() + r * n,
                          per[std::min<std::size_t>(w, workers)], keep[r]);
  }, workers);
  parallel_for(n, 1, [&](std::uint64_t b, std::uint64_t e, unsigned w) {
    for (std::uint64_t j = b; j < e; ++j) R.column(j, ref.rows, keep, ref, per[std::min<std::size_t>(w, workers)]);
  }, workers);
  for (const auto& s : per) ref.stats.elements += s.elements, ref.stats.unsettled += s.unsettled;
  return ref;
}

void norm_saved_stats(NormKind kind, const double* x, std::size_t n, double eps, double* mean, double* rstd) {
  bool finite = n > 0 && std::isfinite(eps);
  Span sp;
  for (std::size_t j = 0; j < n; ++j) finite = finite && std::isfinite(x[j]), sp.see(x[j]);
  *mean = *rstd = kNan;
  if (!finite) return;
  sp.see(eps), sp.see(static_cast<double>(n));
  const long p0 = sp.bits(3, static_cast<std::int64_t>(n));
  Mpfr s(p0), d(p0);
  const auto nn = static_cast<unsigned long>(n);
  exactly(p0, [&](long p) {
    mpfr_set_prec(s, p), mpfr_set_prec(d, p);
    Mpfr t(p);
    mpfr_set_zero(s, 1), mpfr_set_zero(d, 1);
    for (std::size_t j = 0; j < n; ++j) {
      mpfr_add_d(s, s, x[j], MPFR_RNDN);
      mpfr_set_d(t, x[j], MPFR_RNDN), mpfr_sqr(t, t, MPFR_RNDN), mpfr_add(d, d, t, MPFR_RNDN);
    }
    if (kind == NormKind::RmsNorm) mpfr_set_zero(s, 1);
    mpfr_mul_ui(d, d, nn, MPFR_RNDN);  // D = n Q - S^2 + eps n^2 (RMSNorm: n Q + eps n^2)
    mpfr_sqr(t, s, MPFR_RNDN), mpfr_sub(d, d, t, MPFR_RNDN);
    mpfr_set_d(t, eps, MPFR_RNDN), mpfr_mul_ui(t, t, nn, MPFR_RNDN), mpfr_mul_ui(t, t, nn, MPFR_RNDN), mpfr_add(d, d, t, MPFR_RNDN);
  });
  if (mpfr_zero_p(d.get())) return;
  *mean = to_double(f32, ziv(f32, [&](long, mpfr_ptr lo, mpfr_ptr hi) {
                      mpfr_div_ui(lo, s, nn, MPFR_RNDD), mpfr_div_ui(hi, s, nn, MPFR_RNDU);
                    }).r.code);
  *rstd = to_double(f32, ziv(f32, [&](long, mpfr_ptr lo, mpfr_ptr hi) {  // rstd = n / sqrt(D)
                      mpfr_rec_sqrt(lo, d, MPFR_RNDD), mpfr_mul_ui(lo, lo, nn, MPFR_RNDD);
                      mpfr_rec_sqrt(hi, d, MPFR_RNDU), mpfr_mul_ui(hi, hi, nn, MPFR_RNDU);
                    }).r.code);
}

void norm_bwd_mpfr(const NormBwdInputs& in, const Format& dx_out, const Format& param_out, long prec, std::uint64_t* dx,
                   std::uint64_t* dgamma, std::uint64_t* dbeta) {
  check_inputs(in);
  const auto n = static_cast<std::size_t>(in.cols);
  const bool ln = in.kind == NormKind::LayerNorm;
  const Rounder rdx = Rounder::nearest(dx_out), rp = Rounder::nearest(param_out);
  std::vector<std::unique_ptr<Mpfr>> dg(n), db(n);
  for (std::size_t j = 0; j < n; ++j) {
    dg[j] = std::make_unique<Mpfr>(prec), db[j] = std::make_unique<Mpfr>(prec);
    mpfr_set_zero(*dg[j], 1), mpfr_set_zero(*db[j], 1);
  }
  Mpfr mean(prec), rstd(prec), t(prec), a(prec), b(prec), y(prec);
  std::vector<std::unique_ptr<Mpfr>> xh(n);
  for (auto& v : xh) v = std::make_unique<Mpfr>(prec);
  for (std::int64_t r = 0; r < in.rows; ++r) {
    const double* x = in.x + static_cast<std::size_t>(r) * n;
    const double* dy = in.dy + static_cast<std::size_t>(r) * n;
    if (in.reads_saved) {
      mpfr_set_d(mean, ln ? in.mean[r] : 0.0, MPFR_RNDN);
      mpfr_set_d(rstd, in.rstd[r], MPFR_RNDN);
    } else {
      mpfr_set_zero(mean, 1);
      if (ln) {
        for (std::size_t j = 0; j < n; ++j) mpfr_add_d(mean, mean, x[j], MPFR_RNDN);
        mpfr_div_ui(mean, mean, static_cast<unsigned long>(n), MPFR_RNDN);
      }
      mpfr_set_zero(rstd, 1);
      for (std::size_t j = 0; j < n; ++j) {
        mpfr_set_d(t, x[j], MPFR_RNDN), mpfr_sub(t, t, mean, MPFR_RNDN), mpfr_sqr(t, t, MPFR_RNDN);
        mpfr_add(rstd, rstd, t, MPFR_RNDN);
      }
      mpfr_div_ui(rstd, rstd, static_cast<unsigned long>(n), MPFR_RNDN);
      mpfr_add_d(rstd, rstd, in.eps, MPFR_RNDN);
      mpfr_rec_sqrt(rstd, rstd, MPFR_RNDN);
    }
    mpfr_set_zero(a, 1), mpfr_set_zero(b, 1);
    for (std::size_t j = 0; j < n; ++j) {
      const double g = in.gamma ? in.gamma[j] : 1.0;
      mpfr_set_d(*xh[j], x[j], MPFR_RNDN), mpfr_sub(*xh[j], *xh[j], mean, MPFR_RNDN), mpfr_mul(*xh[j], *xh[j], rstd, MPFR_RNDN);
      mpfr_set_d(t, dy[j], MPFR_RNDN), mpfr_mul_d(t, t, g, MPFR_RNDN);
      if (ln) mpfr_add(a, a, t, MPFR_RNDN);
      mpfr_mul(t, t, *xh[j], MPFR_RNDN), mpfr_add(b, b, t, MPFR_RNDN);
      mpfr_mul_d(t, *xh[j], dy[j], MPFR_RNDN), mpfr_add(*dg[j], *dg[j], t, MPFR_RNDN);
      mpfr_add_d(*db[j], *db[j], dy[j], MPFR_RNDN);
    }
    mpfr_div_ui(a, a, static_cast<unsigned long>(n), MPFR_RNDN);
    mpfr_div_ui(b, b, static_cast<unsigned long>(n), MPFR_RNDN);
    for (std::size_t j = 0; j < n; ++j) {
      const double g = in.gamma ? in.gamma[j] : 1.0;
      mpfr_set_d(y, dy[j], MPFR_RNDN), mpfr_mul_d(y, y, g, MPFR_RNDN), mpfr_sub(y, y, a, MPFR_RNDN);
      mpfr_mul(t, *xh[j], b, MPFR_RNDN), mpfr_sub(y, y, t, MPFR_RNDN);
      mpfr_mul(y, y, rstd, MPFR_RNDN);
      dx[static_cast<std::size_t>(r) * n + j] = mpfr_ref::round(dx_out, y, rdx).code;
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    dgamma[j] = mpfr_ref::round(param_out, *dg[j], rp).code;
    if (ln && dbeta) dbeta[j] = mpfr_ref::round(param_out, *db[j], rp).code;
  }
}

}  // namespace fpcert
