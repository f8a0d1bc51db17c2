// oracle/gemm_ref.cpp — the MPFR ground truth for dot products and GEMMs, and the fast exact dot
// product (ExactSum). The fast GEMM is in oracle/gemm_fast.cpp.
#include "oracle/gemm_ref.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "base/parallel.hpp"
#include "oracle/exact_sum.hpp"

namespace fpcert {
namespace {

/// Exact sum of exact products through mpfr_sum at a precision wide enough to hold the exact
/// result (every product needs at most 106 bits; the span of exponents bounds the rest).
class MpfrDot {
 public:
  DotRef run(const double* x, const double* y, std::size_t n, std::ptrdiff_t incx, std::ptrdiff_t incy) {
    DotRef r;
    if (prods_.size() < n) {
      for (std::size_t i = prods_.size(); i < n; ++i) {
        prods_.emplace_back();
        mpfr_init2(prods_.back().v, 106);
      }
    }
    std::vector<mpfr_ptr> ptrs;
    ptrs.reserve(n);
    bool nonfinite = false;
    long emax = std::numeric_limits<long>::min(), emin = std::numeric_limits<long>::max();
    double abs_sum = 0;
    double nan_or_inf = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double a = x[static_cast<std::ptrdiff_t>(i) * incx], b = y[static_cast<std::ptrdiff_t>(i) * incy];
      if (!std::isfinite(a) || !std::isfinite(b)) {
        nonfinite = true;
        nan_or_inf += a * b;  // IEEE: the sum of the non-finite products decides NaN or +-Inf
        continue;
      }
      if (a == 0 || b == 0) continue;
      mpfr_ptr p = prods_[ptrs.size()].v;
      mpfr_set_prec(p, 106);
      mpfr_set_d(p, a, MPFR_RNDN);
      mpfr_mul_d(p, p, b, MPFR_RNDN);  // exact: 53 + 53 bits, exponent range of MPFR is wide
      emax = std::max<long>(emax, mpfr_get_exp(p));
      emin = std::min<long>(emin, mpfr_get_exp(p) - 106);
      ptrs.push_back(p);
      abs_sum += std::fabs(a * b);  // refined below
    }
    if (nonfinite) {
      // Inf - Inf and NaN inputs give NaN; a finite part cannot change an infinite sum.
      r.value = {std::isnan(nan_or_inf) ? std::numeric_limits<double>::quiet_NaN() : nan_or_inf, 0.0, 0};
      r.status = kRefNonFinite;
      r.abs_sum = std::numeric_limits<double>::infinity();
      return r;
    }
    if (ptrs.empty()) {
      r.value = {0.0, 0.0, 0};
      return r;
    }
    const long need = (emax - emin) + 64 + 64;  // exact: covers every bit and any carry out
    mpfr_t s, t;
    mpfr_init2(s, need);
    mpfr_init2(t, need);
    mpfr_sum(s, ptrs.data(), ptrs.size(), MPFR_RNDN);  // exact at this precision
    r.value = ref_from_mpfr(s, t, r.status);
    // sum |x_i y_i| rounded upward: each |product| exact, the sum rounded toward +inf.
    for (mpfr_ptr p : ptrs) mpfr_abs(p, p, MPFR_RNDN);
    mpfr_sum(t, ptrs.data(), ptrs.size(), MPFR_RNDN);
    r.abs_sum = mpfr_get_d(t, MPFR_RNDU);
    mpfr_clear(s);
    mpfr_clear(t);
    (void)abs_sum;
    return r;
  }
  ~MpfrDot() {
    for (auto& p : prods_) mpfr_clear(p.v);
  }

  /// hi = RN(s), lo = RN(s - hi), tail = sign(s - hi - lo), with out-of-range status: overflow
  /// when RN(s) is +-Inf (hi = +-Inf, lo = 0, tail = 0), tiny when |s| < 2^-969.
  static RefValue ref_from_mpfr(mpfr_ptr s, mpfr_ptr scratch, std::uint8_t& status) {
    RefValue v;
    if (mpfr_zero_p(s)) return v;
    if (mpfr_get_exp(s) < -968) status |= kRefTiny;  // lo would fall below double's normal range
    v.hi = mpfr_get_d(s, MPFR_RNDN);                  // correctly rounded, subnormals included
    if (std::isinf(v.hi)) {
      status |= kRefOverflow;
      return v;
    }
    mpfr_sub_d(scratch, s, v.hi, MPFR_RNDN);  // exact: scratch has the precision of s
    v.lo = mpfr_get_d(scratch, MPFR_RNDN);
    mpfr_sub_d(scratch, scratch, v.lo, MPFR_RNDN);
    v.tail = static_cast<std::int8_t>(mpfr_sgn(scratch));
    return v;
  }

 private:
  struct P {
    mpfr_t v;
  };
  std::vector<P> prods_;
};

}  // namespace

DotRef exact_dot_mpfr(const double* x, const double* y, std::size_t n, std::ptrdiff_t incx, std::ptrdiff_t incy) {
  MpfrDot d;
  return d.run(x, y, n, incx, incy);
}

DotRef exact_dot(const double* x, const double* y, std::size_t n, std::ptrdiff_t incx, std::ptrdiff_t incy) {
  DotRef r;
  ExactSum sum, abs_sum;
  bool nonfinite = false;
  double nan_or_inf = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = x[static_cast<std::ptrdiff_t>(i) * incx], b = y[static_cast<std::ptrdiff_t>(i) * incy];
    if (!std::isfinite(a) || !std::isfinite(b)) {
      nonfinite = true;
      nan_or_inf += a * b;  // as exact_dot_mpfr: IEEE decides NaN or +-Inf
      continue;
    }
    sum.add_product(a, b);
    abs_sum.add_product(std::fabs(a), std::fabs(b));
  }
  if (nonfinite) {
    r.value = {std::isnan(nan_or_inf) ? std::numeric_limits<double>::quiet_NaN() : nan_or_inf, 0.0, 0};
    r.status = kRefNonFinite;
    r.abs_sum = std::numeric_limits<double>::infinity();
    return r;
  }
  r.value = sum.finalize(r.status);
  r.abs_sum = abs_sum.round_up();
  return r;
}

GemmRef gemm_reference_mpfr(const MatrixView& a, const MatrixView& b, const GemmRefOptions& opt) {
  if (a.cols != b.rows) throw std::invalid_argument("gemm_reference: inner dimensions differ");
  GemmRef r;
  r.info.path = "mpfr";
  r.m = a.rows;
  r.n = b.cols;
  const auto mn = static_cast<std::size_t>(r.m * r.n);
  r.c.resize(mn);
  r.abs_sum.resize(mn);
  r.status.resize(mn);
  const std::int64_t k = a.cols;
  parallel_for(
      static_cast<std::uint64_t>(r.m), 1,
      [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
        MpfrDot dot;
        std::vector<double> row(static_cast<std::size_t>(k)), col(static_cast<std::size_t>(k));
        for (std::uint64_t i = i0; i < i1; ++i) {
          for (std::int64_t t = 0; t < k; ++t) row[static_cast<std::size_t>(t)] = a.at(static_cast<std::int64_t>(i), t);
          for (std::int64_t j = 0; j < r.n; ++j) {
            for (std::int64_t t = 0; t < k; ++t) col[static_cast<std::size_t>(t)] = b.at(t, j);
            const DotRef d = dot.run(row.data(), col.data(), static_cast<std::size_t>(k), 1, 1);
            const auto idx = static_cast<std::size_t>(static_cast<std::int64_t>(i) * r.n + j);
            r.c[idx] = d.value;
            r.abs_sum[idx] = d.abs_sum;
            r.status[idx] = d.status;
          }
        }
      },
      opt.threads);
  return r;
}

}  // namespace fpcert
