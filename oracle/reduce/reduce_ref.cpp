// oracle/reduce/reduce_ref.cpp — exact sums, dots and norms (the contract is in reduce_ref.hpp).
#include "oracle/reduce/reduce_ref.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/parallel.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert {
namespace {

using mpfr_ref::Mpfr;

/// The exact value of an ExactSum in an MPFR number of sufficient precision, through ExactSum's public
/// reading only: peel hi and lo of what remains (each exact doubles, subtracted exactly) until the tail
/// is 0. Every step removes all but the bits below lo's last place, so the loop ends; it needs the sum to
/// be a multiple of 2^-1074 below 2^1024 (checked: a remainder that no double can hold throws).
void exact_sum_to_mpfr(const ExactSum& acc, Mpfr& out) {
  std::vector<double> parts;
  ExactSum rem = acc;
  for (;;) {
    ExactSum c = rem;
    std::uint8_t st = 0;
    const RefValue r = c.finalize(st);
    if (r.hi == 0 && r.tail == 0) break;  // the remainder is exactly zero
    if (r.hi == 0 || !std::isfinite(r.hi) || (r.lo == 0 && r.tail != 0))  // a rest below 2^-1075
      throw std::logic_error("exact_sum_to_mpfr: the exact sum has bits outside double's range");
    parts.push_back(r.hi);
    rem.add(-r.hi);
    if (r.lo != 0) {
      parts.push_back(r.lo);
      rem.add(-r.lo);
    }
    if (r.tail == 0) break;
  }
  if (parts.empty()) {
    mpfr_set_prec(out, 64);
    mpfr_set_zero(out, 1);
    return;
  }
  int low = top_exponent(parts[0]);
  for (double p : parts) low = std::min(low, low_exponent(p));
  // Every partial sum of the parts is below 2^(top + 1) and a multiple of 2^low: top - low + 2 bits hold
  // each one exactly, so every mpfr_add_d below is exact.
  const mpfr_prec_t prec = std::max<mpfr_prec_t>(64, top_exponent(parts[0]) - low + 2);
  mpfr_set_prec(out, prec);
  mpfr_set_zero(out, 1);
  for (double p : parts) mpfr_add_d(out, out, p, MPFR_RNDN);
}

/// hi, lo and tail of sqrt(q), q > 0 exact in an MPFR number. r = sqrt(q) rounded to odd at precision P
/// (truncate, then set the last bit when inexact: Boldo & Melquiond 2008) keeps which side of every number
/// with fewer than P bits sqrt(q) lies on, so hi = RN53(r) = RN53(sqrt q) once P >= 55. r - hi is the
/// round-to-odd of sqrt(q) - hi on the same absolute grid g = ulp_P(r) (hi is a multiple of g), so
/// lo = RN53(r - hi) is right once g is 2^3 times finer than lo's ulp, and then r - hi - lo is an odd
/// multiple of g (hi + lo is a multiple of 2g) with sqrt(q) within g of r: its sign is the tail. P doubles
/// until that holds (an exact root ends at once).
RefValue sqrt_ref(mpfr_srcptr q) {
  for (mpfr_prec_t P = 128; P <= (mpfr_prec_t{1} << 16); P *= 2) {
    Mpfr r(P), d(P + 64);
    const int t = mpfr_sqrt(r, q, MPFR_RNDZ);
    if (t != 0 && mpfr_min_prec(r) < P) mpfr_nextabove(r);  // round to odd
    RefValue v;
    v.hi = mpfr_get_d(r, MPFR_RNDN);
    mpfr_sub_d(d, r, v.hi, MPFR_RNDN);  // exact: r and hi are multiples of g, |r - hi| < 2^(exp(r) + 1)
    v.lo = mpfr_get_d(d, MPFR_RNDN);
    const bool decided = t == 0 || (v.lo != 0 && std::ilogb(v.lo) - 52 >= mpfr_get_exp(r) - P + 3);
    if (!decided) continue;
    mpfr_sub_d(d, d, v.lo, MPFR_RNDN);  // exact likewise
    v.tail = static_cast<std::int8_t>(mpfr_sgn(d.get()));
    return v;
  }
  throw std::logic_error("nrm2_reference: the square root was not decided at 65536 bits");
}

}  // namespace

std::string_view to_string(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum: return "sum";
    case ReduceKind::Dot: return "dot";
    case ReduceKind::Nrm2: return "nrm2";
  }
  return "?";
}

ReduceRef sum_reference(const double* x, std::size_t n, std::ptrdiff_t inc) {
  ExactSum s, a;
  bool nan = false, pinf = false, ninf = false;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = x[static_cast<std::ptrdiff_t>(i) * inc];
    if (std::isnan(v)) nan = true;
    else if (std::isinf(v)) (v > 0 ? pinf : ninf) = true;
    else {
      s.add(v);
      a.add(std::fabs(v));
    }
  }
  ReduceRef r;
  if (nan || pinf || ninf) {
    r.status = kRefNonFinite;
    r.value.hi = (nan || (pinf && ninf)) ? std::numeric_limits<double>::quiet_NaN() : (pinf ? INFINITY : -INFINITY);
    r.abs_sum = INFINITY;
    return r;
  }
  r.value = s.finalize(r.status);
  r.abs_sum = a.round_up();
  return r;
}

ReduceRef dot_reference(const double* x, const double* y, std::size_t n, std::ptrdiff_t incx, std::ptrdiff_t incy) {
  const DotRef d = exact_dot(x, y, n, incx, incy);
  return {d.value, d.abs_sum, d.status};
}

ReduceRef nrm2_reference(const double* x, std::size_t n, std::ptrdiff_t inc, Nrm2Specials specials) {
  ExactSum q;
  bool nan = false, inf = false;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = x[static_cast<std::ptrdiff_t>(i) * inc];
    if (std::isnan(v)) nan = true;
    else if (std::isinf(v)) inf = true;
    else if (v != 0) {
      const double a = std::fabs(v);
      if (a < 0x1p-537 || a >= 0x1p511)
        throw std::invalid_argument("nrm2_reference: |x| = " + std::to_string(a) +
                                    " is outside [2^-537, 2^511), where the exact squares fit the superaccumulator's reading");
      q.add_product(v, v);
    }
  }
  ReduceRef r;
  if (nan || inf) {
    r.status = kRefNonFinite | (nan && inf ? kRefInfAndNaN : 0);
    const bool inf_result = inf && (!nan || specials == Nrm2Specials::InfWins);
    r.value.hi = inf_result ? INFINITY : std::numeric_limits<double>::quiet_NaN();
    r.abs_sum = INFINITY;
    return r;
  }
  ExactSum qa = q;
  r.abs_sum = qa.round_up();  // the squares are >= 0: sum |x_i^2| is q itself
  if (q.sign() == 0) return r;  // +0
  Mpfr qm;
  exact_sum_to_mpfr(q, qm);
  r.value = sqrt_ref(qm);
  return r;
}

ReduceRef reduce_reference(ReduceKind kind, const double* x, const double* y, std::size_t n, std::ptrdiff_t incx,
                           std::ptrdiff_t incy, Nrm2Specials specials) {
  switch (kind) {
    case ReduceKind::Sum: return sum_reference(x, n, incx);
    case ReduceKind::Dot: return dot_reference(x, y, n, incx, incy);
    case ReduceKind::Nrm2: return nrm2_reference(x, n, incx, specials);
  }
  throw std::invalid_argument("reduce_reference: unknown kind");
}

ReduceRef reduce_reference_codes(ReduceKind kind, const Format& f, const std::uint64_t* x, const std::uint64_t* y,
                                 std::size_t n, Nrm2Specials specials) {
  std::vector<double> xd(n), yd(kind == ReduceKind::Dot ? n : 0);
  for (std::size_t i = 0; i < n; ++i) xd[i] = to_double(f, x[i]);
  for (std::size_t i = 0; i < yd.size(); ++i) yd[i] = to_double(f, y[i]);
  return reduce_reference(kind, xd.data(), yd.data(), n, 1, 1, specials);
}

MatrixView transposed(const MatrixView& a) {
  return {a.data, a.cols, a.rows, a.ld, a.layout == Layout::RowMajor ? Layout::ColMajor : Layout::RowMajor};
}

std::vector<ReduceRef> reduce_rows(ReduceKind kind, const MatrixView& x, const MatrixView* y, Nrm2Specials specials,
                                   unsigned threads) {
  if (kind == ReduceKind::Dot && (y == nullptr || y->rows != x.rows || y->cols != x.cols))
    throw std::invalid_argument("reduce_rows: a dot product of rows needs y of x's shape");
  // Row i of a view: its first element and the stride between consecutive elements of the row.
  auto row = [](const MatrixView& v, std::int64_t i, const double*& p, std::ptrdiff_t& inc) {
    p = v.layout == Layout::RowMajor ? v.data + i * v.ld : v.data + i;
    inc = v.layout == Layout::RowMajor ? 1 : static_cast<std::ptrdiff_t>(v.ld);
  };
  std::vector<ReduceRef> out(static_cast<std::size_t>(x.rows));
  parallel_for(static_cast<std::uint64_t>(x.rows), 16, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    for (std::uint64_t i = b; i < e; ++i) {
      const double *px = nullptr, *py = nullptr;
      std::ptrdiff_t ix = 1, iy = 1;
      row(x, static_cast<std::int64_t>(i), px, ix);
      if (kind == ReduceKind::Dot) row(*y, static_cast<std::int64_t>(i), py, iy);
      out[i] = reduce_reference(kind, px, py, static_cast<std::size_t>(x.cols), ix, iy, specials);
    }
  }, threads);
  return out;
}

}  // namespace fpcert
