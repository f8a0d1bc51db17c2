// suites/ops/gemm/epilogue.cpp — a GEMM's fused epilogue: the case's bias and scalars, the exact D = scale_d act(Z) (Z one
// exact GEMM of augmented operands, act in MPFR), the activations' Lipschitz constants and implementation envelopes, the
// per-element bound and the grader (the header states the bound; docs/epilogue.md, "The reference" and "The bound").
#include "suites/ops/gemm/epilogue.hpp"

#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "base/parallel.hpp"
#include "kernels/tc/cards.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/mpfr_ref.hpp"
#include "oracle/ulp.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/ops/gemm/epilogue_exact.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/verdict/unwritten.hpp"

namespace fpcert {

namespace {

using mpfr_ref::Mpfr;

/// The precision act(Z) is delivered at (bits); each step runs wider (act_mpfr).
constexpr mpfr_prec_t kActPrec = 200;

/// gamma_j = j u / (1 - j u) (Higham 2002, Lemma 3.1): |prod (1 + d_i)^(+-1) - 1| <= gamma_j for j factors |d_i| <= u.
double gamma_of(int j, double u) { return j <= 0 ? 0.0 : j * u / (1 - j * u); }

/// z's binary exponent when |z| >= 1 (|z| < 2^e), else 0: how many bits a step conditioned like |z|^p loses is about p e.
long big_exponent(mpfr_srcptr z) { return mpfr_regular_p(z) ? std::max<long>(0, mpfr_get_exp(z)) : 0; }

/// act(z) into y (precision kActPrec), z exact at any precision; with `complement`, z - act(z) instead (z > 0: the small
/// positive part the smooth activations take from z, computed without cancellation). Every step runs at w bits, w =
/// kActPrec + 32 + the bits the step's condition number costs: erfc(+-t) at t = z / sqrt 2 has relative condition
/// <= 2 t^2 + 2 (2 e_z + 2 bits, e_z = big_exponent(z)); e^v has condition |v|: v = -+z for SiLU (e_z bits), v = -+2 k0 (z +
/// k1 z^3) for GELU's tanh form (3 e_z + 2 bits). No step cancels: erfc(-t) = 1 + erf(t) and 1 + e^v add positive numbers,
/// z + k1 z^3 two numbers of one sign. Each step's rounding (2^-w relative) times the conditions of the steps after it stays
/// below 2^-(kActPrec + 20). MPFR's exponent range ends in the limits (z / (1 + inf) = -0, z erfc(huge) / 2 = 0).
///   GELU (erf):  act = z erfc(-t) / 2,         z - act = z erfc(t) / 2
///   GELU (tanh): act = z / (1 + e^(-2v)),      z - act = z / (1 + e^(2v)),   v = sqrt(2/pi) (z + 0.044715 z^3)
///   SiLU:        act = z / (1 + e^-z),         z - act = z / (1 + e^z)
void act_mpfr(Activation a, mpfr_ptr y, mpfr_srcptr z, bool complement = false) {
  const long ez = big_exponent(z);
  switch (a) {
    case Activation::None: mpfr_set(y, z, MPFR_RNDN); return;
    case Activation::Relu:
      if (mpfr_sgn(z) > 0) mpfr_set(y, z, MPFR_RNDN);
      else mpfr_set_zero(y, 1);
      return;
    case Activation::GeluErf: {
      // Both forms need erfc(|t|) (z <= 0: erfc(-t); the complement for z > 0: erfc(t)). MPFR 4.2's erf is 1.1 to 3.6 times
      // faster than its erfc (at 246 bits: 13 against 15 us for t in [0, 1], 66 against 152 in [5, 6], 190 against 681 in
      // [10, 11]; this machine, one thread): below |t| = 26, 1 - erf(|t|) at 1.45 t^2 + 8 more bits, which the
      // cancellation takes back (erfc(|t|) > 2 e^(-t^2) / (sqrt(pi) (|t| + sqrt(t^2 + 2))) > 2^-(1.443 t^2 + 6) there:
      // Abramowitz and Stegun 7.1.13).
      const double td = std::fabs(mpfr_get_d(z, MPFR_RNDN)) / std::sqrt(2.0);
      const long extra = td < 26 ? static_cast<long>(1.45 * td * td) + 8 : 0;
      const mpfr_prec_t w = kActPrec + 36 + 2 * ez + extra;
      Mpfr c(w), t(w), s(w);
      mpfr_sqrt_ui(c, 2, MPFR_RNDN);
      mpfr_div(t, z, c, MPFR_RNDN);
      if (!complement) mpfr_neg(t, t, MPFR_RNDN);  // erfc(t) of this t, t >= 0
      if (td < 26) {
        mpfr_erf(s, t, MPFR_RNDN);
        mpfr_ui_sub(s, 1, s, MPFR_RNDN);
      } else {
        mpfr_erfc(s, t, MPFR_RNDN);
      }
      mpfr_mul(s, s, z, MPFR_RNDN);
      mpfr_div_2ui(y, s, 1, MPFR_RNDN);
      return;
    }
    case Activation::GeluTanh: {
      const mpfr_prec_t w = kActPrec + 36 + 3 * ez;
      Mpfr k0(w), k1(w), t(w), s(w);
      mpfr_const_pi(k0, MPFR_RNDN);
      mpfr_ui_div(k0, 2, k0, MPFR_RNDN);
      mpfr_sqrt(k0, k0, MPFR_RNDN);
      mpfr_set_str(k1, "0.044715", 10, MPFR_RNDN);  // the decimal constant as the definition writes it
      mpfr_mul(t, z, z, MPFR_RNDN);
      mpfr_mul(t, t, z, MPFR_RNDN);
      mpfr_mul(t, t, k1, MPFR_RNDN);
      mpfr_add(t, t, z, MPFR_RNDN);
      mpfr_mul(t, t, k0, MPFR_RNDN);
      mpfr_mul_si(t, t, complement ? 2 : -2, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(s, t, 1, MPFR_RNDN);
      mpfr_div(y, z, s, MPFR_RNDN);
      return;
    }
    case Activation::Silu: {
      const mpfr_prec_t w = kActPrec + 34 + ez;
      Mpfr t(w), s(w);
      if (complement) mpfr_set(t, z, MPFR_RNDN);
      else mpfr_neg(t, z, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(s, t, 1, MPFR_RNDN);
      mpfr_div(y, z, s, MPFR_RNDN);
      return;
    }
  }
}

/// hi = RN(v), lo = RN(v - hi), tail = sign(v - hi - lo): both differences exact at v's precision (each drops leading bits).
RefValue refvalue_of(mpfr_srcptr v) {
  if (mpfr_nan_p(v)) return {std::numeric_limits<double>::quiet_NaN(), 0, 0};
  if (mpfr_zero_p(v)) return {mpfr_signbit(v) ? -0.0 : 0.0, 0, 0};
  const double hi = mpfr_get_d(v, MPFR_RNDN);
  if (!std::isfinite(hi)) return {hi, 0, 0};
  Mpfr r(mpfr_get_prec(v) + 64);
  mpfr_sub_d(r, v, hi, MPFR_RNDN);
  const double lo = mpfr_get_d(r, MPFR_RNDN);
  mpfr_sub_d(r, r, lo, MPFR_RNDN);
  return {hi, lo, static_cast<std::int8_t>(mpfr_sgn(r.get()))};
}

/// An exponent a value's bits reach down to (its precision below its exponent); none for 0.
long low_bit(mpfr_srcptr x) { return mpfr_get_exp(x) - static_cast<long>(mpfr_get_prec(x)); }

/// RN(A - S) into a double, A exact, S (any precision) with |S| <= |A| or S = 0 standing for a positive infinitesimal of
/// sign `s_sign`: exactly when A - S fits 3400 bits (the difference formed exactly, then one rounding), else with S an
/// infinitesimal of its sign (it decides only where A is a double or a midpoint between two).
double rn_minus(mpfr_srcptr A, mpfr_srcptr S, int s_sign) {
  if (mpfr_zero_p(A)) return -mpfr_get_d(S, MPFR_RNDN);
  if (!mpfr_zero_p(S) && mpfr_get_exp(A) - mpfr_get_exp(S) < 3000) {
    const long top = std::max(mpfr_get_exp(A), mpfr_get_exp(S)) + 1, bottom = std::min(low_bit(A), low_bit(S));
    Mpfr w(static_cast<mpfr_prec_t>(top - bottom + 2));
    mpfr_sub(w, A, S, MPFR_RNDN);  // exact
    return mpfr_get_d(w, MPFR_RNDN);
  }
  const double dn = mpfr_get_d(A, MPFR_RNDD), up = mpfr_get_d(A, MPFR_RNDU);
  if (dn == up) return dn;  // A is a double: A - eps rounds to it
  Mpfr a(mpfr_get_prec(A) + 1100), b(mpfr_get_prec(A) + 1100);
  mpfr_sub_d(a, A, dn, MPFR_RNDN);  // exact distances to the two neighbours
  mpfr_d_sub(b, up, A, MPFR_RNDN);
  const int c = mpfr_cmp(a, b);
  return c < 0 ? dn : c > 0 ? up : s_sign > 0 ? dn : up;  // a midpoint: A - S lies on the side away from S
}

/// A - d exactly (A exact, d a double) into x.
void sub_d_exact(Mpfr& x, mpfr_srcptr A, double d) {
  long top = mpfr_zero_p(A) ? std::ilogb(d) + 2 : mpfr_get_exp(A) + 1, bottom = mpfr_zero_p(A) ? std::ilogb(d) - 60 : low_bit(A);
  if (d != 0) top = std::max<long>(top, std::ilogb(d) + 2), bottom = std::min<long>(bottom, std::ilogb(d) - 60);
  mpfr_set_prec(x, static_cast<mpfr_prec_t>(std::max(64L, top - bottom + 2)));
  mpfr_sub_d(x, A, d, MPFR_RNDN);
}

/// The RefValue of P - S: P exact (any precision), S known to kActPrec bits relative with |S| <= |P| / 2, or 0 standing for
/// a positive value below MPFR's range times sign(P). hi = RN(P - S), lo = RN(P - hi - S), tail = sign(P - hi - lo - S),
/// each decided exactly (rn_minus; the tail by an exact comparison): however small S is, hi, lo and the tail see it where
/// it matters (act(z) = z (1 - 1e-80) has hi + lo = z and tail -1; P a midpoint between two doubles rounds away from S).
RefValue refvalue_minus(mpfr_srcptr P, mpfr_srcptr S) {
  const int s_sign = mpfr_zero_p(S) ? mpfr_sgn(P) : mpfr_sgn(S);
  const double hi = rn_minus(P, S, s_sign);
  if (!std::isfinite(hi)) return {hi, 0, 0};
  Mpfr r, t;
  sub_d_exact(r, P, hi);
  const double lo = rn_minus(r, S, s_sign);
  sub_d_exact(t, r, lo);
  int sign = 0;
  if (mpfr_zero_p(S)) sign = mpfr_zero_p(t.get()) ? -s_sign : mpfr_sgn(t.get());
  else sign = mpfr_cmp(t, S) > 0 ? 1 : mpfr_cmp(t, S) < 0 ? -1 : 0;
  return {hi, lo, static_cast<std::int8_t>(sign)};
}

/// hi + lo exactly, at the precision their span needs.
mpfr_prec_t double_double_prec(double hi, double lo) {
  if (lo == 0 || hi == 0) return 64;
  return std::max(64, std::ilogb(hi) - std::ilogb(lo) + 56);
}

/// act(Z) and scale_d act(Z) of one element.
struct ActValues {
  RefValue act, d;
};
ActValues act_values(Activation a, const RefValue& z, double scale_d) {
  const bool linear = a == Activation::None || a == Activation::Relu;
  if (!std::isfinite(z.hi)) {
    // act(+-inf), act(NaN): the limits (GELU and SiLU tend to -0 at -inf, ReLU is 0 there).
    const double v = std::isnan(z.hi) ? z.hi : z.hi > 0 || a == Activation::None ? z.hi : a == Activation::Relu ? 0.0 : -0.0;
    return {{v, 0, 0}, {v * scale_d, 0, 0}};
  }
  if (linear) {  // exact: the RefValue itself (its tail included), or 0
    const RefValue act = a == Activation::None || z.hi > 0 ? z : RefValue{};
    if (scale_d == 1) return {act, act};
  }
  Mpfr zz(double_double_prec(z.hi, z.lo));
  mpfr_set_d(zz, z.hi, MPFR_RNDN);
  mpfr_add_d(zz, zz, z.lo, MPFR_RNDN);
  if (!linear && z.hi > 0) {
    // act(z) = z - c, c = z - act(z) in (0, z / 2]: P = scale z exact, S = scale c.
    Mpfr c(kActPrec), p(mpfr_get_prec(zz) + 53), s(kActPrec);
    act_mpfr(a, c, zz, true);
    const RefValue act = refvalue_minus(zz, c);
    mpfr_mul_d(p, zz, scale_d, MPFR_RNDN);  // exact
    mpfr_mul_d(s, c, scale_d, MPFR_RNDN);
    return {act, refvalue_minus(p, s)};
  }
  Mpfr y(kActPrec), d(kActPrec);
  act_mpfr(a, y, zz);
  mpfr_mul_d(d, y, scale_d, MPFR_RNDN);
  if (!linear && mpfr_zero_p(y.get()) && z.hi < 0) {
    // Below MPFR's range (z erfc(huge) / 2): a nonzero value of z's sign, smaller than any double.
    const int sd = scale_d > 0 ? 1 : -1;
    return {{-0.0, 0, -1}, {sd > 0 ? -0.0 : 0.0, 0, static_cast<std::int8_t>(-sd)}};
  }
  RefValue act = refvalue_of(y), dv = refvalue_of(d);
  if (linear && (a == Activation::None || z.hi > 0)) {  // act(Z) = Z, tail included; scale_d (hi + lo) is exact at 200 bits
    act = z;
    if (dv.tail == 0) dv.tail = static_cast<std::int8_t>(scale_d > 0 ? z.tail : -z.tail);
  }
  return {act, dv};
}

/// act_values of every element, memoised by Z bit for bit (with the activation and scale_d, all it depends on): a mutation
/// campaign grades each epilogue case once per mutant with the same exact Z, and MPFR's smooth activations are the
/// grading's cost (about 2 s of one 259 x 251 GELU case, single-threaded, on the H100 host). At most 64 MB kept.
std::shared_ptr<const std::vector<ActValues>> act_values_all(Activation a, const std::vector<RefValue>& z, double sd) {
  struct Entry { Activation a; double sd; std::vector<RefValue> z; std::shared_ptr<const std::vector<ActValues>> av; };
  static std::mutex mu;
  static std::deque<Entry> cache;
  static std::size_t bytes = 0;
  const bool smooth = a != Activation::None && a != Activation::Relu;
  const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  const auto same = [&](const Entry& e) {
    if (e.a != a || bits(e.sd) != bits(sd) || e.z.size() != z.size()) return false;
    for (std::size_t x = 0; x < z.size(); ++x)
      if (bits(e.z[x].hi) != bits(z[x].hi) || bits(e.z[x].lo) != bits(z[x].lo) || e.z[x].tail != z[x].tail) return false;
    return true;
  };
  if (smooth) {
    const std::lock_guard<std::mutex> lock(mu);
    for (const Entry& e : cache)
      if (same(e)) return e.av;
  }
  auto av = std::make_shared<std::vector<ActValues>>(z.size());
  parallel_for(z.size(), 256, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    for (std::uint64_t x = b; x < e; ++x) (*av)[x] = act_values(a, z[x], sd);
  });
  if (smooth) {
    const std::lock_guard<std::mutex> lock(mu);
    cache.push_back({a, sd, z, av});
    bytes += z.size() * (sizeof(RefValue) + sizeof(ActValues));
    for (; bytes > (std::size_t{64} << 20) && cache.size() > 1; cache.pop_front()) bytes -= cache.front().z.size() * (sizeof(RefValue) + sizeof(ActValues));
  }
  return av;
}

/// The units of the epilogue's arithmetic and of the output rounding. The epilogue runs in the accumulator format (after
/// promotion, when the kernel promotes); a kernel whose accumulator rounds otherwise than to nearest may round its
/// epilogue so too: 2u and 2 eta, the bounds of a directed rounding (cuBLAS's tensor-core kernels declare toward zero).
struct Units {
  double u = 0, eta = 0, u_out = 0, eta_out = 0;
  const Format* arith = nullptr;
};
Units units_of(const KernelTraits& t) {
  const Format& ef = t.promote_every > 0 && t.promote_format ? *t.promote_format : *t.acc;
  const bool nearest = t.acc_rounding == Rounding::NearestEven || t.acc_rounding == Rounding::NearestAway;
  const Format& of = *t.out;
  const bool out_rounds = of.precision() < ef.precision() || of.emin() > ef.emin();
  return {nearest ? ef.unit_roundoff() : 2 * ef.unit_roundoff(), nearest ? ef.min_subnormal() : 2 * ef.min_subnormal(),
          out_rounds ? of.unit_roundoff() : 0.0, out_rounds ? of.min_subnormal() : 0.0, &ef};
}

/// ActivationEnvelope's numbers (activation_envelope adds the words).
struct ActEnv {
  double rel = 0, abs = 0, floor = 0;
};

/// max_t |t| erf'(t) = sqrt(2 / (pi e)) (at t = 1/sqrt 2) and max_t |t| sech^2(t) (at 2 t tanh t = 1, t = 0.77170),
/// rounded upward: how far a relative error of an argument moves erf and tanh.
constexpr double kErfArg = 0.483942;
constexpr double kTanhArg = 0.447744;

ActEnv act_env(Activation a, double u, double eta, double f) {
  switch (a) {
    case Activation::None:
    case Activation::Relu: return {};
    case Activation::GeluErf: {
      // y = x RN(1/sqrt 2) (or x / RN(sqrt 2)): (x / sqrt 2)(1 + th2), |th2| <= gamma_2. erf moves by at most
      // |t erf'(xi)| gamma_2 / (1 - gamma_2) <= kErfArg gamma_2 / (1 - gamma_2). s = 1 + erf^(y): erf within f (|erf| <= 1),
      // one rounding of a value <= 2 + f; or s = erfc^(-y) within f relative (<= 2f). Underflow in y, erf: 2 eta.
      const double g2 = gamma_of(2, u), g3 = gamma_of(3, u);
      const double ds = kErfArg * g2 / (1 - g2) + std::max(f + u * (2 + f), 2 * f) + 2 * eta;
      // g = x s / 2 with the products 0.5 x, x s (any order, halving exact): rel gamma_3, the error of s times |x| / 2.
      return {g3, 0.5 * ds * (1 + g3), 2 * eta};
    }
    case Activation::GeluTanh: {
      // v = k0 (x + k1 x^3): the constants k0 = sqrt(2/pi) (up to 3 roundings when formed in the format) and k1 = 0.044715
      // (1), x^3 or x^2 (2), k1 x^3 (1), x + k1 x^3 (1; one sign, no cancellation), k0 times it (1): at most 9 roundings,
      // relative gamma_9 (fma forms round less). tanh moves by at most kTanhArg gamma_9 / (1 - gamma_9); underflow in the
      // small terms of v: 4 eta absolute (sech^2 <= 1). tanh within f; s = 1 + tanh^ one rounding (<= u (2 + f)). The
      // sigmoid form x / (1 + e^(-2v)) moves s = 2 sigma(2v) by at most as much (2 sigma (1 - sigma) <= 1/2).
      const double g9 = gamma_of(9, u), g3 = gamma_of(3, u);
      const double ds = kTanhArg * g9 / (1 - g9) + f + u * (2 + f) + 4 * eta;
      return {g3, 0.5 * ds * (1 + g3), 2 * eta};
    }
    case Activation::Silu: {
      // e = e^-x within f; 1 + e one rounding (positive terms: the sum's relative error <= f e / (1 + e) + u); then
      // x / (1 + e) (one rounding) or x (1 / (1 + e)) (two): (1 + u)^2 / ((1 - f)(1 - u)) - 1 relative. e's underflow
      // for x > 0: below eta, relative to 1 + e >= 1.
      const double rel = (1 + u) * (1 + u) / ((1 - f) * (1 - u)) - 1 + eta;
      // The floor: for x < -ln(max) e^-x overflows and x / (1 + inf) = -0, while |silu(x)| < |x| e^x <= ln(max) / max
      // (max the format's largest finite value: 2^emax (2 - 2u), emax = 1 - emin for IEEE formats, 2^emin = eta / 2u);
      // results below the normal range round with eta / 2, and 1 / (1 + e) there carries |x| eta / 2, |x| <= ln(max) + 1.
      const double emin = std::log2(eta / (2 * u));
      const double ln_max = (1 - emin) * std::log(2.0) + std::log(2 - 2 * u);
      const double floor = ln_max * std::exp(-ln_max) * (1 + 0x1p-10) + (ln_max + 1) * eta / 2 + eta;
      return {rel, 0, floor};
    }
  }
  return {};
}

/// The case's model: everything of the bound but the element's data.
struct EpiModel {
  Units un;
  Activation act = Activation::None;
  double lip = 1;
  ActEnv env;
  double scale_d = 1;
  bool round_before_act = false;
  bool round_before_bias = false;
  double bias_u = 0;  ///< u when the bias format is not contained in the arithmetic's (its conversion rounds), else 0
};
EpiModel epi_model(const KernelTraits& t, const EpilogueCase& ec, double scale_d) {
  EpiModel m;
  m.un = units_of(t);
  m.act = ec.active ? ec.activation : Activation::None;
  m.lip = activation_lipschitz(m.act);
  m.env = act_env(m.act, m.un.u, m.un.eta, t.epilogue.func_rel_err);
  m.scale_d = scale_d;
  m.round_before_act = ec.active && t.epilogue.round_before_act;
  m.round_before_bias = ec.active && t.epilogue.round_before_bias && ec.bias != BiasKind::None;  // a zero bias value still rounds
  const Format& bf = epilogue_bias_format(t);
  m.bias_u = bf.precision() > m.un.arith->precision() || bf.emin() < m.un.arith->emin() ? m.un.u : 0.0;
  return m;
}

/// Half the output format's spacing at magnitudes up to x, u_out 2^floor(log2 x): |RN_out(s) - s| for every |s| <= x in
/// its normal range (eta_out / 2 below it: the formulas add that apart). At most u_out x, and as small as half of it
/// where x lies just below a power of two. x is inflated by 2^-50 so that a sum rounded down across a power of two
/// still takes the upper binade.
double out_half_spacing(double x, double u_out) {
  if (u_out == 0 || !(x > 0)) return 0;
  if (!std::isfinite(x)) return INFINITY;
  return u_out * std::ldexp(1.0, std::ilogb(x * (1 + 0x1p-50)));
}

EpilogueAllowance allowed_of(const EpiModel& m, const EpilogueElement& e) {
  const double u = m.un.u, eta = m.un.eta, u_out = m.un.u_out, eta_out = m.un.eta_out;
  const double a = std::fabs(e.alpha_eff), Q = e.ref_abs + e.E;
  // alpha' acc: r + 1 roundings (none when alpha' is 1 and no scale multiplies); the addends beyond the first (beta c, the
  // bias) each one rounding in any order (Higham 2002, §3.1: gamma_j of the sum of the magnitudes).
  const double g_alpha = e.alpha_eff == 1 && e.alpha_roundings == 0 ? 0.0 : gamma_of(e.alpha_roundings + 1, u);
  const int j = (e.beta_c > 0) + (e.bias_abs > 0);
  const double bias_conv = m.bias_u * e.bias_abs + (m.bias_u > 0 ? eta / 2 : 0.0);
  double X = a * e.E + g_alpha * a * Q + u * e.beta_c + bias_conv +
             gamma_of(j, u) * (a * Q * (1 + g_alpha) + e.beta_c * (1 + u) + e.bias_abs + bias_conv) + 3 * eta;
  // round_before_bias: alpha' acc + beta c (at most |alpha'| Q (1 + g_alpha) + |beta c| (1 + u) in magnitude, X off)
  // rounded into the output format before the bias is added: where the case has a bias (an element whose bias value
  // is 0 is rounded all the same) and beta c is there.
  if (m.round_before_bias && e.beta_c > 0) X += out_half_spacing(a * Q * (1 + g_alpha) + e.beta_c * (1 + u) + X, u_out) + eta_out / 2;
  // round_before_act: RN_out(Z) first. With no activation or ReLU and no scale_d the value that reaches the output
  // rounding is then already in the output format (RN_out(Z), ReLU of it), so the two roundings are one: no term.
  const bool exact_after = (m.act == Activation::None || m.act == Activation::Relu) && m.scale_d == 1;
  if (m.round_before_act && !exact_after) X += out_half_spacing(e.z_abs + X, u_out) + eta_out / 2;
  double Y = X;
  if (m.act != Activation::None)
    Y = m.lip * X + m.env.rel * (e.act_abs + m.lip * X) + m.env.abs * (e.z_abs + X) + m.env.floor;
  double Yd = Y;
  if (m.scale_d != 1) {
    const double sd = std::fabs(m.scale_d);
    Yd = sd * Y + u * sd * (e.act_abs + Y) + eta / 2;
  }
  // About forty operations on non-negative numbers, each within a relative 2^-53: 2^-44 covers them all.
  return {(Yd + out_half_spacing(e.d_abs + Yd, u_out) + eta_out / 2) * (1 + 0x1p-44), Y * (1 + 0x1p-44)};
}

void add_check(CaseResult& out, CheckKind kind, bool passed, std::string detail, std::int64_t index, double measured, double limit) {
  out.checks.push_back({kind, passed, std::move(detail), index, measured, limit});
  if (passed) return;
  if (out.status == CaseStatus::Pass) out.status = CaseStatus::Fail;
  out.reason += (out.reason.empty() ? "" : "; ") + out.checks.back().detail;
}

}  // namespace

const Format& epilogue_bias_format(const KernelTraits& t) { return t.epilogue.bias_format ? *t.epilogue.bias_format : *t.out; }

std::vector<double> epilogue_bias(const EpilogueCase& ec, const Format& f, std::int64_t m, std::int64_t n) {
  if (!ec.active || ec.bias == BiasKind::None) return {};
  return uniform_rounded(ec.bias_seed, static_cast<std::size_t>(ec.bias == BiasKind::PerColumn ? n : m), -2, 2, f);
}

double epilogue_scalar(double v, const KernelTraits& t) { return alpha_beta_scalar(v, t); }

std::string epilogue_unsupported(const KernelTraits& t, const EpilogueCase& ec, const AlphaBetaCase& ab) {
  std::vector<std::string> why;
  const EpilogueTraits& e = t.epilogue;
  if (ec.active) {
    EpilogueTraits bias_only;
    bias_only.bias = e.bias;
    bias_only.bias_format = e.bias_format;
    if (!e.takes(ec.bias))
      why.push_back(fmt::format("the kernel's epilogue does not take a bias per {} (EpilogueTraits::bias: {})", to_string(ec.bias),
                                e.bias ? describe_epilogue(bias_only) : "no bias"));
    if (!e.takes(ec.activation))
      why.push_back(fmt::format("the kernel's epilogue does not take the activation {} (EpilogueTraits::activations)", to_string(ec.activation)));
    if (ec.fp8_scaling && !e.fp8_scaling)
      why.push_back("the kernel's epilogue does not take FP8 scale factors (scale_a, scale_b, scale_d; EpilogueTraits::fp8_scaling)");
    if (ec.fp8_scaling && e.fp8_scaling && !e.fp8_scale_d && ec.scale_d != 1)
      why.push_back(fmt::format("the kernel's epilogue takes scale_a and scale_b but not scale_d (EpilogueTraits::fp8_scale_d), and the "
                                "case's scale_d is {:.9g}",
                                ec.scale_d));
    if (ec.amax && !e.amax) why.push_back("the kernel's epilogue does not write amax (EpilogueTraits::amax)");
    const bool calls_func = ec.activation == Activation::GeluErf || ec.activation == Activation::GeluTanh || ec.activation == Activation::Silu;
    if (calls_func && e.takes(ec.activation) && !(e.func_rel_err >= 0 && e.func_rel_err < 0x1p-4))
      why.push_back(fmt::format("the declared relative error of the epilogue's elementary functions ({:g}; EpilogueTraits::func_rel_err) "
                                "is not in [0, 2^-4)", e.func_rel_err));
  }
  if (ab.active && !t.alpha_beta)
    why.push_back("the case asks alpha/beta and the kernel does not declare alpha/beta (D = alpha AB + beta C; KernelTraits::alpha_beta)");
  if (ec.active || ab.active) {
    if (t.block.active()) why.push_back("epilogue cases do not grade block-scaled kernels (their reference is the quantized product)");
    std::string wide;
    const std::pair<const char*, const Format*> fs[] = {{"accumulator", t.acc},   {"output", t.out},
                                                        {"A input", t.a_input},   {"B input", t.b_input},
                                                        {"bias", &epilogue_bias_format(t)}};
    for (const auto& [what, f] : fs)
      if (f->precision() > 26) wide += fmt::format("{}{} {} ({} bits)", wide.empty() ? "" : ", ", what, f->tag, f->precision());
    if (!wide.empty())
      why.push_back("epilogue cases grade formats of at most 26 significant bits (alpha' a, beta c and the bias exact in double): " + wide);
  }
  std::string s;
  for (const auto& w : why) s += (s.empty() ? "" : "; ") + w;
  return s;
}

RefValue activation_exact(Activation a, double hi, double lo, double scale) { return act_values(a, RefValue{hi, lo, 0}, scale).d; }

double activation_lipschitz(Activation a) {
  switch (a) {
    case Activation::None:
    case Activation::Relu: return 1;
    case Activation::GeluErf: return 1.12891;   // Phi(sqrt 2) + sqrt 2 phi(sqrt 2) = 1.1289041... (g'' = phi (2 - x^2))
    case Activation::GeluTanh: return 1.12900;  // 1.1289931 at x = 1.41850
    case Activation::Silu: return 1.09984;      // 1.0998393 at x = 2.39936 (2 + x (1 - 2 sigma(x)) = 0)
  }
  return 1;
}

ActivationEnvelope activation_envelope(Activation a, double u, double eta, double f) {
  const ActEnv e = act_env(a, u, eta, f);
  ActivationEnvelope r{e.rel, e.abs, e.floor, {}};
  const std::string nums = fmt::format("rel {:.4g}, abs {:.4g}, floor {:.4g} (u = {}, eta = {}, f = {})", e.rel, e.abs, e.floor, pow2_text(u),
                                       pow2_text(eta), pow2_text(f));
  switch (a) {
    case Activation::None: r.derivation = "no activation"; break;
    case Activation::Relu: r.derivation = "ReLU: max(s, 0) is exact"; break;
    case Activation::GeluErf:
      r.derivation = "GELU (erf): s (1 + erf(s RN(1/sqrt 2))) / 2: the argument within gamma_2 moves erf by <= 0.4839 gamma_2, erf within f, "
                     "1 + erf one rounding (<= u (2 + f); erfc(-y) within 2f instead), the products gamma_3 relative: rel = gamma_3, "
                     "abs = (1 + gamma_3)(0.4839 gamma_2 + max(f + u (2 + f), 2f) + 2 eta) / 2, floor = 2 eta; " + nums;
      break;
    case Activation::GeluTanh:
      r.derivation = "GELU (tanh): s (1 + tanh(k0 (s + k1 s^3))) / 2: the argument within gamma_9 moves tanh by <= 0.4478 gamma_9, tanh within "
                     "f, 1 + tanh one rounding, the products gamma_3 relative: rel = gamma_3, abs = (1 + gamma_3)(0.4478 gamma_9 + f + "
                     "u (2 + f) + 4 eta) / 2, floor = 2 eta; " + nums;
      break;
    case Activation::Silu:
      r.derivation = "SiLU: s / (1 + e^-s) or s (1 / (1 + e^-s)): exp within f, 1 + e (one sign), at most two roundings more: rel = "
                     "(1 + u)^2 / ((1 - f)(1 - u)) - 1 + eta, floor = ln(max) / max (e^-s overflows below -ln(max): the result -0) + "
                     "(ln(max) + 1) eta / 2 + eta; " + nums;
      break;
  }
  return r;
}

EpilogueAllowance epilogue_allowed(const KernelTraits& t, const EpilogueCase& ec, double scale_d, const EpilogueElement& e) {
  return allowed_of(epi_model(t, ec, scale_d), e);
}

AmaxInterval grade_epilogue(const EpilogueGrade& given, CaseResult& out) {
  if (!given.problem || !given.traits || !given.codes) throw std::invalid_argument("grade_epilogue: problem, traits and codes are required");
  // As grade() (suites/verdict/grade.cpp): the installed behaviour cards give an unknown order on tensor cores the
  // measured bits of its instructions (kernels/tc/cards.hpp), so that the accumulation's envelope E of alpha/beta and
  // epilogue cases is the one the plain cases get (cuBLASLt's FP8 GEMM: 13 bits, not fp32's nominal 23).
  const KernelTraits applied = tc::with_installed_cards(*given.traits);
  EpilogueGrade in = given;
  in.traits = &applied;
  if (!applied.sum_order.block_model.instruction.empty())
    out.flags.push_back("tensor-core block model: " + applied.sum_order.block_model.source);
  const auto mn = static_cast<std::size_t>(in.problem->m * in.problem->n);
  if (in.codes->size() != mn)
    throw std::invalid_argument(fmt::format("grade_epilogue: {} output codes for a {} x {} D", in.codes->size(), in.problem->m, in.problem->n));
  const Problem& p = *in.problem;
  const KernelTraits& t = *in.traits;
  const EpilogueCase none;
  const EpilogueCase& ec = in.epilogue ? *in.epilogue : none;
  const Format& of = *t.out;
  const std::int64_t m = p.m, n = p.n, k = p.k;
  const std::vector<double> no_bias;
  const std::vector<double>& bias = in.bias && ec.active && ec.bias != BiasKind::None ? *in.bias : no_bias;
  const bool with_bias = !bias.empty();
  const double sa = ec.active && ec.fp8_scaling ? in.scale_a : 1.0, sb = ec.active && ec.fp8_scaling ? in.scale_b : 1.0;
  const double sd = ec.active && ec.fp8_scaling ? in.scale_d : 1.0;
  const double alpha_eff = in.alpha * sa * sb;
  const int alpha_roundings = std::max(0, (in.alpha != 1) + (sa != 1) + (sb != 1) - 1);
  const EpiModel model = epi_model(t, ec, sd);
  AmaxInterval iv;
  out.tier = Tier::Envelope;

  const EpilogueZ ez = epilogue_exact_z(in);
  if (!ez.why.empty()) {
    out.status = CaseStatus::NotSupported;
    out.tier = Tier::None;
    out.reason = ez.why;
    return iv;
  }
  if (ez.exact_sums > 0)
    out.flags.push_back(fmt::format("exact sums: {} of {} elements' accumulations are exact (products on a grid 2^q, sum |a'b'| < 2^(q + {})): "
                                    "E = 0 there (docs/bound_model.md, \"Exact sums\")",
                                    ez.exact_sums, m * n, ez.exact_bits));
  // act(Z) and D = scale_d act(Z), element by element (MPFR for the smooth activations: the reference's cost).
  const std::shared_ptr<const std::vector<ActValues>> av_kept = act_values_all(model.act, ez.z, sd);
  const std::vector<ActValues>& av = *av_kept;

  const EnvelopeModel env = make_envelope(t, k);  // its coefficient, for the terms printed
  const double out_max = of.max_finite();
  std::int64_t graded = 0, exceed = 0, admit_zero = 0, nonfinite = 0, saturated = 0, first_nonfinite = -1, worst_index = -1;
  double worst = 0, max_abs = 0, max_ulp = 0, ref_max = 0;
  struct {
    double got = 0, d = 0, err = 0, allowed = 0, z = 0, ref_abs = 0, e = 0, beta_c = 0;
  } worst_at;  // the worst element's values, formatted once after the loop
  bool amax_finite = true;
  const auto& codes = *in.codes;
  for (std::int64_t x = 0; x < m * n; ++x) {
    const auto xs = static_cast<std::size_t>(x);
    const RefValue& z = ez.z[xs];
    const RefValue& d = av[xs].d;
    EpilogueElement el = ez.el[xs];
    if (!std::isfinite(z.hi) || !std::isfinite(el.ref_abs) || !std::isfinite(d.hi)) {
      amax_finite = false;
      continue;
    }
    el.act_abs = std::fabs(av[xs].act.hi) * (1 + 0x1p-52);
    el.d_abs = std::fabs(d.hi) * (1 + 0x1p-52);
    const EpilogueAllowance al = allowed_of(model, el);
    // amax: max |act^_ij| lies within [max (|act_ij| - Y_ij), max (|act_ij| + Y_ij)] over the elements.
    const double act_abs = std::fabs(av[xs].act.hi);
    iv.lo = std::max(iv.lo, (act_abs - al.y) * (1 - 0x1p-52));
    iv.hi = std::max(iv.hi, (act_abs + al.y) * (1 + 0x1p-52));
    if (iv.index < 0 || act_abs > iv.exact) iv.exact = act_abs, iv.index = x;
    const FpClass gc = classify(of, codes[xs]);
    if (gc == FpClass::NaN || gc == FpClass::Inf) {
      if (std::fabs(d.hi) <= out_max) {
        ++nonfinite;
        if (first_nonfinite < 0) first_nonfinite = x;
      }
      continue;
    }
    const double got = to_double(of, codes[xs]);
    // Beyond the output's range a format without Inf (e4m3) overflows to NaN (above) or saturates (suites/verdict/envelope.hpp).
    if (saturated_overflow(of, d.hi, got)) {
      ++saturated;
      continue;
    }
    // |D^ - D| in double, shrunk so that it never exceeds the truth (as evaluate_envelope).
    const double err = std::max(0.0, std::fabs((got - d.hi) - d.lo) * (1 - 0x1p-50) - std::fabs(d.lo) * 0x1p-52);
    ++graded;
    max_abs = std::max(max_abs, err);
    ref_max = std::max(ref_max, std::fabs(d.hi));
    max_ulp = std::max(max_ulp, ulp_distance(of, codes[xs], d));
    admit_zero += std::fabs(d.hi) * (1 - 0x1p-50) <= al.d;
    const double frac = err == 0 ? 0 : (al.d > 0 ? err / al.d : INFINITY);
    if (frac > 1) ++exceed;
    if (worst_index < 0 || frac > worst) worst = frac, worst_index = x, worst_at = {got, d.hi, err, al.d, z.hi, el.ref_abs, el.E, el.beta_c};
  }
  // The worst element's values and terms, so that a failure can be read without a rerun.
  const std::string worst_text =
      worst_index < 0 ? std::string()
                      : fmt::format(" (got {} = {:.9g}, D {:.9g}, |D^ - D| {:.4g}, allowed {:.4g}; Z {:.9g}, |A'B'| {:.6g}, E {:.4g}, |beta c| {:.6g})",
                                    hex_code(of, codes[static_cast<std::size_t>(worst_index)]), worst_at.got, worst_at.d, worst_at.err,
                                    worst_at.allowed, worst_at.z, worst_at.ref_abs, worst_at.e, worst_at.beta_c);
  if (!amax_finite) iv.hi = INFINITY;
  out.metrics.max_abs = max_abs;
  out.metrics.ref_max_abs = ref_max;
  out.metrics.ulp_max = max_ulp;
  out.metrics.err_frac_max = worst;
  out.metrics.nonfinite = nonfinite;
  out.metrics.first_nonfinite = first_nonfinite;
  // An e4m3 D's pre-fill is its NaN, RN's own result where D is NaN or beyond the range (suites/verdict/unwritten.hpp).
  const UnwrittenCount uw = discount_prefill_results(of, codes, {in.unwritten, in.first_unwritten}, [&](std::size_t x) {
    const double z = ez.z[x].hi, dv = av[x].d.hi;
    return std::isfinite(z) ? dv : z;
  });
  out.metrics.unwritten = uw.unwritten;
  out.metrics.first_unwritten = uw.first_unwritten;
  out.worst_index = worst_index;

  // What D is, in words: "D = alpha A'B' + beta C" (alpha/beta alone), "D = scale_d gelu_erf(alpha' A'B' + beta C + bias)".
  const bool epi = ec.active;
  std::string zs = std::string(epi && ec.fp8_scaling ? "alpha'" : "alpha") + " A'B'" + (in.beta != 0 ? " + beta C" : "") + (with_bias ? " + bias" : "");
  if (model.act != Activation::None) zs = std::string(to_string(model.act)) + "(" + zs + ")";
  const std::string what = "D = " + std::string(sd != 1 ? "scale_d " : "") + zs;
  const std::string scal = fmt::format("alpha = {:.9g}, beta = {:.9g}", in.alpha, in.beta);
  add_check(out, CheckKind::Envelope, exceed == 0,
            exceed ? fmt::format("{} of {} element(s) of {} beyond the epilogue's envelope ({}), worst {:.4g} x the allowance at ({}, {}){}", exceed,
                                 graded, what, scal, worst, worst_index / n, worst_index % n, worst_text)
                   : fmt::format("every element of {} within the epilogue's envelope ({}; worst {:.4g} of the allowance)", what, scal, worst),
            exceed ? worst_index : -1, worst, 1);
  add_check(out, CheckKind::Nonfinite, nonfinite == 0,
            nonfinite ? fmt::format("{} element(s) NaN or Inf where D is finite, first at ({}, {}){}", nonfinite, first_nonfinite / n,
                                    first_nonfinite % n, in.beta == 0 ? " (beta = 0 and C holds NaN: was C read?)" : "")
                      : "no NaN or Inf where D is finite",
            first_nonfinite, static_cast<double>(nonfinite), 0);
  add_check(out, CheckKind::Unwritten, uw.unwritten == 0,
            uw.unwritten ? fmt::format("{} output(s) never written, first at ({}, {})", uw.unwritten, uw.first_unwritten / n, uw.first_unwritten % n)
                         : "every output written",
            uw.first_unwritten, static_cast<double>(uw.unwritten), 0);
  out.vacuous = graded > 0 && admit_zero == graded;
  if (out.vacuous) out.flags.push_back("vacuous: the epilogue's envelope admits an all-zeros output here (no evidence)");
  if (saturated)
    out.flags.push_back(fmt::format("saturated: {} element(s) with |D| beyond {}'s largest value {:.9g} hold +-{:.9g} (not graded)", saturated,
                                    of.tag, out_max, out_max));
  out.flags.push_back("alpha/beta: " + scal + (in.beta != 0 ? "" : " (C filled with NaN: BLAS does not read C when beta = 0)"));
  if (epi) {
    std::string f = "epilogue: " + what;
    if (with_bias) f += fmt::format("; bias per {} ({} values uniform in [-2, 2) in {})", to_string(ec.bias), bias.size(), epilogue_bias_format(t).tag);
    if (model.act != Activation::None)
      f += fmt::format("; {} (Lipschitz {}, elementary functions within {} relative{})", to_string(model.act), model.lip,
                       pow2_text(t.epilogue.func_rel_err), t.epilogue.round_before_act ? ", Z rounded to the output first" : "");
    if (ec.fp8_scaling) f += fmt::format("; scale_a = {:.9g}, scale_b = {:.9g}, scale_d = {:.9g} (alpha' = {:.9g})", sa, sb, sd, alpha_eff);
    if (ec.amax) f += fmt::format("; amax asked (max |act(Z)| = {:.9g})", iv.exact);
    out.flags.push_back(f);
  }
  const double u = model.un.u;
  out.envelope.variant = BoundVariant::Componentwise;
  out.envelope.rtol = env.coef;
  out.envelope.out_term = model.un.u_out;
  out.envelope.terms.push_back({"accumulation (envelope)", env.coef, "E_ij of A'B' (suites/verdict/envelope.hpp), output term left out"});
  out.envelope.terms.push_back(
      {"epilogue sums", gamma_of(alpha_roundings + 1, u),
       fmt::format("alpha' acc ({} rounding(s)), beta c, bias, summed in any order: X = |alpha'| E + gamma_{} |alpha'| Q + u |beta c| + "
                   "gamma_j (|alpha'| Q (1 + gamma_{}) + |beta c| (1 + u) + |bias|) + 3 eta, Q = |A'B'| + E, j the nonzero addends beyond the "
                   "first; u = {}, eta = {}",
                   alpha_roundings + 1, alpha_roundings + 1, alpha_roundings + 1, pow2_text(u), pow2_text(model.un.eta))});
  if (model.round_before_bias && in.beta != 0 && with_bias)
    out.envelope.terms.push_back({"rounding before the bias", model.un.u_out,
                                  "X += h_out(|alpha'| Q (1 + gamma) + |beta c| (1 + u) + X) + eta_out / 2: alpha' acc + beta c rounded to "
                                  "the output format, then the bias added"});
  if (model.round_before_act)
    out.envelope.terms.push_back({"rounding before the activation", model.un.u_out, "X' = X + h_out(|Z| + X) + eta_out / 2 (none with no activation or ReLU and no scale_d: one rounding then)"});
  if (model.act != Activation::None) {
    out.envelope.terms.push_back({"activation (Lipschitz)", model.lip, fmt::format("L X', L = sup |{}'| rounded upward", to_string(model.act))});
    out.envelope.terms.push_back({"activation (implementation)", model.env.rel,
                                  activation_envelope(model.act, u, model.un.eta, t.epilogue.func_rel_err).derivation});
  }
  if (sd != 1)
    out.envelope.terms.push_back({"scale_d", u, fmt::format("Y' = |scale_d| Y + u |scale_d| (|act(Z)| + Y) + eta / 2, scale_d = {:.9g}", sd)});
  out.envelope.terms.push_back({"output rounding", model.un.u_out,
                                model.un.u_out > 0 ? fmt::format("h_out(|D| + Y') + eta_out / 2 into {}, h_out(x) = u_out 2^floor(log2 x): half the spacing at x", of.tag)
                                                   : fmt::format("none: {} holds the epilogue's format", of.tag)});
  out.envelope.allowed = fmt::format("|D^ - D| <= Y' + h_out(|D| + Y') + eta_out / 2, {} exact (suites/ops/gemm/epilogue.hpp)", what);
  return iv;
}

void check_amax(double got, const AmaxInterval& iv, const KernelTraits& t, CaseResult& out) {
  // amax is a value of the accumulator format: RN of a value in [lo, hi] lies in [lo (1 - u) - eta / 2, hi (1 + u) + eta / 2].
  const Units un = units_of(t);
  const double lo = iv.lo * (1 - un.u) - un.eta / 2, hi = iv.hi * (1 + un.u) + un.eta / 2;
  if (iv.index < 0) {
    add_check(out, CheckKind::Amax, true, "no element with a finite exact value: amax not checked", -1, got, 0);
    return;
  }
  const bool ok = got >= lo && got <= hi;  // NaN fails
  const std::string where = fmt::format("max |act(Z)| = {:.9g} at element {}", iv.exact, iv.index);
  add_check(out, CheckKind::Amax, ok,
            ok ? fmt::format("amax = {:.9g} within [{:.9g}, {:.9g}] ({})", got, lo, hi, where)
               : fmt::format("amax = {:.9g} outside [{:.9g}, {:.9g}] ({}; amax is max |act(Z)| before scale_d)", got, lo, hi, where),
            ok ? -1 : iv.index, got, got > hi || std::isnan(got) ? hi : lo);
}

}  // namespace fpcert
