// oracle/mpfr_ref.cpp — MPFR rounding into an emulated format; the reference the fast path is held to.
#include "oracle/mpfr_ref.hpp"

#include <bit>
#include <cstring>

namespace fpcert::mpfr_ref {
namespace {

/// Restores MPFR's exponent range on scope exit (the range is thread-local state).
class ExpRange {
 public:
  ExpRange(mpfr_exp_t emin, mpfr_exp_t emax) : old_min_(mpfr_get_emin()), old_max_(mpfr_get_emax()) {
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
  }
  ~ExpRange() {
    mpfr_set_emin(old_min_);
    mpfr_set_emax(old_max_);
  }

 private:
  mpfr_exp_t old_min_, old_max_;
};

/// y = x rounded with rnd into the format's precision and subnormal range, exponent unbounded
/// above (overflow is judged by the caller). Returns MPFR's ternary value.
int round_recipe(mpfr_ptr y, mpfr_srcptr x, const Format& d, mpfr_rnd_t rnd) {
  // MPFR writes x = m * 2^e with 1/2 <= |m| < 1: the smallest subnormal 2^(emin - frac) has e =
  // emin - frac + 1. The value is rounded to p bits in the default (wide) range, then squeezed
  // into the format's range; the ternary value carries the first rounding's direction so that
  // mpfr_check_range and mpfr_subnormalize do not round twice (MPFR manual, mpfr_subnormalize).
  int t = mpfr_set(y, x, rnd);
  {
    ExpRange range(d.emin() - d.frac_bits + 1, d.emax() + 64);
    t = mpfr_check_range(y, t, rnd);
    t = mpfr_subnormalize(y, t, rnd);
  }
  return t;
}

/// Encode a finite value already representable in d (|y| <= max finite) as a code.
std::uint64_t encode(const Format& d, mpfr_srcptr y, bool neg) {
  const std::uint64_t sign = neg ? d.sign_mask() : 0;
  if (mpfr_zero_p(y)) return sign;
  MPFR_DECL_INIT(a, 64);  // on the stack; y has at most 53 bits, so every step below is exact
  mpfr_abs(a, y, MPFR_RNDN);
  const long E = mpfr_get_exp(a) - 1;
  if (E < d.emin()) {  // subnormal: |y| = m * 2^(emin - frac)
    mpfr_mul_2si(a, a, d.frac_bits - d.emin(), MPFR_RNDN);
    return sign | mpfr_get_ui(a, MPFR_RNDN);
  }
  mpfr_mul_2si(a, a, d.frac_bits - E, MPFR_RNDN);  // in [2^frac, 2^(frac+1))
  mpfr_sub_ui(a, a, 1UL << d.frac_bits, MPFR_RNDN);
  const std::uint64_t m = mpfr_get_ui(a, MPFR_RNDN);
  return sign | (static_cast<std::uint64_t>(E + d.bias) << d.frac_bits) | m;
}

/// floor(((|x| - |lo|) / (|hi| - |lo|)) * 2^32) for lo = RZ(x), hi = RA(x), lo != hi.
std::uint64_t discarded_fraction32(mpfr_srcptr x, mpfr_srcptr lo, mpfr_srcptr hi) {
  const mpfr_prec_t prec = mpfr_get_prec(x) + mpfr_get_prec(lo) + 2200;
  Mpfr num(prec), den(prec), q(96);
  mpfr_sub(num, x, lo, MPFR_RNDN);  // exact at this precision
  mpfr_sub(den, hi, lo, MPFR_RNDN);
  mpfr_abs(num, num, MPFR_RNDN);
  mpfr_abs(den, den, MPFR_RNDN);
  mpfr_div(q, num, den, MPFR_RNDZ);
  mpfr_mul_2ui(q, q, 32, MPFR_RNDZ);
  return mpfr_get_ui(q, MPFR_RNDZ);
}

Rounded round_scale_only(mpfr_srcptr x, const Rounder& r, std::uint32_t rbits) {
  Mpfr a(mpfr_get_prec(x) + 2);
  mpfr_abs(a, x, MPFR_RNDN);
  Mpfr smallest(8);
  mpfr_set_ui_2exp(smallest, 1, -127, MPFR_RNDN);
  if (mpfr_cmp(a, smallest) < 0) return {0, kInexact | kUnderflow};
  const long e = mpfr_get_exp(a) - 1;  // 2^e <= |x| < 2^(e+1)
  const bool exact = mpfr_cmp_ui_2exp(a, 1, e) == 0;
  bool up = false;
  switch (r.rounding) {
    case Rounding::TowardZero:
    case Rounding::Down: up = false; break;
    case Rounding::Up: up = !exact; break;
    case Rounding::NearestEven:
    case Rounding::NearestAway: {
      const int c = mpfr_cmp_ui_2exp(a, 3, e - 1);  // midpoint 1.5 * 2^e
      up = c > 0 || (c == 0 && (r.rounding == Rounding::NearestAway || ((e + 127) & 1)));
      break;
    }
    case Rounding::Stochastic: {
      Mpfr f(mpfr_get_prec(x) + 40);
      mpfr_mul_2si(f, a, -e, MPFR_RNDN);
      mpfr_sub_ui(f, f, 1, MPFR_RNDN);
      mpfr_mul_2ui(f, f, 32, MPFR_RNDN);
      const std::uint64_t D = mpfr_get_ui(f, MPFR_RNDZ);
      up = D + rbits >= (std::uint64_t{1} << 32);
      break;
    }
  }
  const long er = e + (up ? 1 : 0);
  const std::uint8_t flags = exact ? 0 : kInexact;
  if (er > 127) return {r.saturation == Saturation::Finite ? 0xFEu : 0xFFu, kInexact | kOverflow};
  return {static_cast<std::uint64_t>(er + 127), flags};
}

/// Per-thread MPFR variables of one limb (p <= 64), reused across calls: init2/clear per call
/// would cost more than the rounding itself.
struct Work {
  mpfr_t y, lo, hi, maxf, ay, x;
  Work() {
    for (mpfr_ptr v : {y, lo, hi, maxf, ay, x}) mpfr_init2(v, 64);
  }
  ~Work() {
    for (mpfr_ptr v : {y, lo, hi, maxf, ay, x}) mpfr_clear(v);
  }
};
Work& work() {
  thread_local Work w;
  return w;
}

}  // namespace

void max_finite(mpfr_ptr out, const Format& d) {
  // (2 - 2^(1-p)) * 2^emax, one ulp less for fn formats whose all-ones code is NaN.
  const int p = d.precision();
  const int ulps_below_two = (d.specials == Specials::FiniteNaN) ? 2 : 1;
  mpfr_set_ui_2exp(out, (1UL << p) - ulps_below_two, d.emax() - (p - 1), MPFR_RNDN);
  if (d.specials == Specials::ScaleOnly) mpfr_set_ui_2exp(out, 1, d.emax(), MPFR_RNDN);
}

void set_code(mpfr_ptr x, const Format& f, std::uint64_t code) {
  if (f == f64) {
    mpfr_set_d(x, std::bit_cast<double>(code), MPFR_RNDN);
    return;
  }
  if (f == f32) {
    mpfr_set_flt(x, std::bit_cast<float>(static_cast<std::uint32_t>(code)), MPFR_RNDN);
    return;
  }
  if (f == bf16) {
    mpfr_set_flt(x, std::bit_cast<float>(static_cast<std::uint32_t>(code << 16)), MPFR_RNDN);
    return;
  }
#if defined(__FLT16_MANT_DIG__)
  if (f == f16) {
    const _Float16 h = std::bit_cast<_Float16>(static_cast<std::uint16_t>(code));
    mpfr_set_flt(x, static_cast<float>(h), MPFR_RNDN);
    return;
  }
#endif
  // From the fields: (-1)^s * (implicit + fraction/2^frac) * 2^(e - bias), e = max(biased, 1)
  // when biased exponent 0 holds subnormals.
  const bool neg = (code & f.sign_mask()) != 0;
  const std::uint64_t mag = code & f.magnitude_mask();
  const long biased = static_cast<long>(mag >> f.frac_bits);
  const std::uint64_t frac = mag & f.frac_mask();
  const bool sub = f.subnormals && biased == 0;
  const std::uint64_t m = sub ? frac : (frac | (std::uint64_t{1} << f.frac_bits));
  const long e = (sub ? 1 : biased) - f.bias - f.frac_bits;
  mpfr_set_ui_2exp(x, m, e, MPFR_RNDN);
  if (neg) mpfr_neg(x, x, MPFR_RNDN);
}

Rounded round(const Format& d, mpfr_srcptr x, const Rounder& r, std::uint32_t rbits) {
  const bool neg = mpfr_signbit(x) != 0;
  if (mpfr_zero_p(x)) {
    if (d.specials == Specials::ScaleOnly) return {0, kInexact | kUnderflow};
    return {neg ? d.sign_mask() : 0, 0};
  }
  if (d.specials == Specials::ScaleOnly) return round_scale_only(x, r, rbits);

  const int p = d.precision();
  Work& w = work();
  mpfr_ptr y = w.y, lo = w.lo, hi = w.hi;
  mpfr_set_prec(y, p);
  mpfr_set_prec(lo, p);
  mpfr_set_prec(hi, p);
  int t = 0;
  switch (r.rounding) {
    case Rounding::NearestEven: t = round_recipe(y, x, d, MPFR_RNDN); break;
    case Rounding::TowardZero: t = round_recipe(y, x, d, MPFR_RNDZ); break;
    case Rounding::Up: t = round_recipe(y, x, d, MPFR_RNDU); break;
    case Rounding::Down: t = round_recipe(y, x, d, MPFR_RNDD); break;
    case Rounding::NearestAway:
    case Rounding::Stochastic: {
      const int tz = round_recipe(lo, x, d, MPFR_RNDZ);
      round_recipe(hi, x, d, MPFR_RNDA);
      if (tz == 0) {
        mpfr_set(y, lo, MPFR_RNDN);
        t = 0;
        break;
      }
      bool away;
      if (r.rounding == Rounding::NearestAway) {
        // Compare |x - lo| with |hi - x| exactly: 2|x| vs |lo| + |hi|.
        const mpfr_prec_t prec = mpfr_get_prec(x) + p + 2200;
        Mpfr twice(prec), sum(prec);
        mpfr_mul_2ui(twice, x, 1, MPFR_RNDN);
        mpfr_add(sum, lo, hi, MPFR_RNDN);
        mpfr_abs(twice, twice, MPFR_RNDN);
        mpfr_abs(sum, sum, MPFR_RNDN);
        away = mpfr_cmp(twice, sum) >= 0;
      } else {
        const std::uint64_t D = discarded_fraction32(x, lo, hi);
        away = D + rbits >= (std::uint64_t{1} << 32);
      }
      mpfr_set(y, away ? hi : lo, MPFR_RNDN);
      t = 1;  // inexact
      break;
    }
  }
  std::uint8_t flags = t != 0 ? kInexact : 0;
  if (t != 0 && mpfr_get_exp(x) - 1 < d.emin()) flags |= kUnderflow;

  mpfr_ptr maxf = w.maxf, ay = w.ay;
  max_finite(maxf, d);
  mpfr_abs(ay, y, MPFR_RNDN);  // exact: ay has 64 bits, y at most 53
  if (mpfr_cmp(ay, maxf) > 0) {
    flags |= kOverflow | kInexact;  // an overflow is always inexact (IEEE 754 7.4)
    const bool toward_zero = r.rounding == Rounding::TowardZero || (r.rounding == Rounding::Up && neg) ||
                             (r.rounding == Rounding::Down && !neg);
    const std::uint64_t sign = neg ? d.sign_mask() : 0;
    if (r.saturation == Saturation::Finite || toward_zero || !d.has_nan())
      return {sign | d.max_finite_code(), flags};
    if (r.saturation == Saturation::Inf && d.has_inf()) return {sign | d.inf_code(), flags};
    return {sign | d.canonical_nan_code(), flags};
  }
  return {encode(d, y, neg), flags};
}

Rounded convert(const Format& src, std::uint64_t code, const Format& dst, const Rounder& r, std::uint32_t rbits) {
  const FpClass c = classify(src, code);
  if (c == FpClass::Inf || c == FpClass::NaN) {
    // Specials are policy, not rounding: same documented table as the fast path.
    const Exact e = exact_from_code(src, code);
    return round_exact(dst, e, r, rbits);
  }
  mpfr_ptr x = work().x;
  set_code(x, src, code);
  if (c == FpClass::Zero && code_is_negative(src, code)) mpfr_setsign(x, x, 1, MPFR_RNDN);
  return round(dst, x, r, rbits);
}

}  // namespace fpcert::mpfr_ref
