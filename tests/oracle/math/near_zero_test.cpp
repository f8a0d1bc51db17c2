// tests/oracle/math/near_zero_test.cpp — expm1, log1p and tanh (oracle/math/expm1_log1p_kernel.hpp, elementary.hpp,
// eltwise_ref.hpp) against MPFR directly: mpfr_expm1 / mpfr_log1p / mpfr_tanh at 200 bits toward zero plus a sticky bit (reference()
// below), rounded by mpfr_ref::round under every mode into f32, f16, bf16. The only exact results are f(+-0) = +-0 (and
// tanh(+-Inf) = +-1).
#include <doctest/doctest.h>

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/philox.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/math/eltwise_ref.hpp"
#include "oracle/mpfr_ref.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using namespace fpcert::math;

namespace {

const Format* const kDests[] = {&f32, &f16, &bf16};
const Fn kFns[] = {Fn::Expm1, Fn::Log1p, Fn::Tanh, Fn::Sinh, Fn::Cosh};
const Rounding kModes[] = {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down,
                           Rounding::Stochastic};

Rounder rounder(const Format& d, Rounding m) { return Rounder{m, default_saturation(d), NanPayload::Preserve}; }

void mpfr_f(Fn f, mpfr_ptr y, float x) {
  mpfr_ref::Mpfr in(24);
  mpfr_set_flt(in, x, MPFR_RNDN);
  if (f == Fn::Expm1) mpfr_expm1(y, in, MPFR_RNDN);
  else if (f == Fn::Tanh) mpfr_tanh(y, in, MPFR_RNDN);
  else if (f == Fn::Sinh) mpfr_sinh(y, in, MPFR_RNDN);
  else if (f == Fn::Cosh) mpfr_cosh(y, in, MPFR_RNDN);
  else mpfr_log1p(y, in, MPFR_RNDN);
}

// 200 bits toward zero, then one more bit: when MPFR says the result is inexact, the exact value lies strictly between y
// and its 200-bit neighbour away from zero, and so does y's 201-bit neighbour away from zero: that stand-in rounds like the
// exact value into any format of at most 57 bits. (Needed where the exact value lies within 2^-200 of a boundary: expm1(x)
// = -1 + e^x for x < -139 is -1 at 200 bits.) Overflow beyond MPFR's own range (expm1 of a huge x): a value > 2^129 stands in.
Rounded reference(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  mpfr_ref::Mpfr in(24), y(200), z(201);
  mpfr_set_flt(in, x, MPFR_RNDN);
  mpfr_clear_flags();
  const int inex = f == Fn::Expm1  ? mpfr_expm1(y, in, MPFR_RNDZ)
                   : f == Fn::Tanh ? mpfr_tanh(y, in, MPFR_RNDZ)
                   : f == Fn::Sinh ? mpfr_sinh(y, in, MPFR_RNDZ)
                   : f == Fn::Cosh ? mpfr_cosh(y, in, MPFR_RNDZ)
                                   : mpfr_log1p(y, in, MPFR_RNDZ);
  // log1p(-1) = -Inf (divide by zero: exact in every mode); expm1(+Inf) = +Inf, log1p(+Inf) = +Inf: exact infinities.
  if (mpfr_inf_p(y)) return {(mpfr_signbit(y) ? d.sign_mask() : 0) | d.inf_code(), 0};
  if (mpfr_nan_p(y)) return round_double(d, std::nan(""), r, rbits);
  if (mpfr_overflow_p()) return round_double(d, mpfr_signbit(y) ? -0x1p1000 : 0x1p1000, r, rbits);
  if (mpfr_zero_p(y)) return round_double(d, mpfr_signbit(y) ? -0.0 : 0.0, r, rbits);
  mpfr_set(z, y, MPFR_RNDN);  // exact
  if (inex != 0) {
    if (mpfr_cmp_ui(z, 0) > 0) mpfr_nextabove(z);
    else mpfr_nextbelow(z);
  }
  return mpfr_ref::round(d, z, r, rbits);
}

const CodeFormat& code_of(const Format& d) { return &d == &f32 ? kCodeF32 : &d == &f16 ? kCodeF16 : kCodeBf16; }

bool same(const Format& d, std::uint64_t a, std::uint64_t b) {
  return a == b || (std::isnan(to_double(d, a)) && std::isnan(to_double(d, b)));
}

struct Count {
  std::int64_t checks = 0, differ = 0, mpfr = 0, rn_differ = 0, rn_undecided = 0, rn_checks = 0;
};

void check(Fn f, float x, Count& c, std::uint64_t seed, std::uint64_t i) {
  for (const Format* d : kDests) {
    for (Rounding m : kModes) {
      const Rounder r = rounder(*d, m);
      const std::uint32_t rbits = m == Rounding::Stochastic ? random_bits32(seed ^ 0x6531, i) : 0;
      const MathResult got = evaluate(f, x, *d, r, rbits);
      const Rounded want = reference(f, x, *d, r, rbits);
      ++c.checks;
      c.mpfr += got.used_mpfr;
      if (!same(*d, got.rounded.code, want.code) && ++c.differ <= 8)
        MESSAGE(to_string(f) << "(" << std::hexfloat << x << ") into " << d->tag << " " << to_string(m) << ": got 0x" << std::hex
                              << got.rounded.code << " want 0x" << want.code);
    }
    // the device's reference (nearest-even): a decided code must be MPFR's
    const RefRn rn = ref_rn(f, x, code_of(*d), exp_tables(), log_tables());
    ++c.rn_checks;
    if (!rn.decided) {
      ++c.rn_undecided;
      continue;
    }
    const Rounded want = reference(f, x, *d, rounder(*d, Rounding::NearestEven), 0);
    if (!same(*d, rn.code, want.code) && ++c.rn_differ <= 8)
      MESSAGE("ref_rn " << to_string(f) << "(" << std::hexfloat << x << ") into " << d->tag << ": got 0x" << std::hex << rn.code
                        << " want 0x" << want.code);
  }
}

float draw(Fn f, std::uint64_t seed, std::uint64_t i) {
  const auto w = philox_4x32(seed, 0x656d31, i);
  const double u = w[1] * 0x1p-32;
  switch (i % 4) {
    case 0: return std::bit_cast<float>(w[0]);  // any pattern: tiny, huge, NaN, negative
    case 1:  // both sides of the Taylor switch (expm1 1/8, log1p 2^-5, tanh 1/16)
      return f == Fn::Log1p ? static_cast<float>(-0x1p-4 + 0x1p-3 * u) : static_cast<float>(-0.25 + 0.5 * u);
    case 2:  // the finite range (expm1 [-45, 91], log1p (-1, 2], tanh [-25, 25])
      return f == Fn::Expm1  ? static_cast<float>(-45.0 + 136.0 * u)
             : f == Fn::Tanh ? static_cast<float>(-25.0 + 50.0 * u)
             : f == Fn::Log1p ? static_cast<float>(-1.0 + 3.0 * u)
                              : static_cast<float>(-92.0 + 184.0 * u);  // sinh, cosh: past the overflow on both sides
    default: return std::bit_cast<float>(w[0] & 0x7fffffffu);  // positive, every binade
  }
}

}  // namespace

TEST_CASE("expm1, log1p, tanh, sinh, cosh: random inputs against MPFR in f32, f16, bf16 under every mode, 0 differences") {
  const std::uint64_t seed = test::seed();
  std::printf("near_zero_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  for (Fn f : kFns) {
    Count c;
    for (std::uint64_t i = 0; i < 60000; ++i) check(f, draw(f, seed, i), c, seed, i);
    MESSAGE(to_string(f) << ": " << c.checks << " checks, " << c.mpfr << " decided by MPFR; ref_rn undecided " << c.rn_undecided
                         << " of " << c.rn_checks);
    CHECK(c.checks == 60000 * 18);
    CHECK(c.differ == 0);
    CHECK(c.rn_differ == 0);
    CHECK(c.rn_undecided * 1000 < c.rn_checks);  // bracket 2^-43 (expm1), 2^-46 (log1p): rare straddles under nearest
  }
}

TEST_CASE("expm1, log1p, tanh, sinh, cosh: 10^6 random inputs per function into f32 under nearest-even, 0 differences") {
  const std::uint64_t seed = test::seed();
  for (Fn f : kFns) {
    std::int64_t differ = 0, mpfr = 0, undecided = 0;
    const Rounder rn = rounder(f32, Rounding::NearestEven);
    for (std::uint64_t i = 0; i < 1000000; ++i) {
      const float x = draw(f, seed ^ 0x1000000, i);
      const MathResult got = evaluate(f, x, f32, rn);
      mpfr += got.used_mpfr;
      const Rounded want = reference(f, x, f32, rn, 0);
      if (!same(f32, got.rounded.code, want.code) && ++differ <= 5) MESSAGE(to_string(f) << "(" << std::hexfloat << x << ")");
      const RefRn r = ref_rn(f, x, kCodeF32, exp_tables(), log_tables());
      undecided += !r.decided;
      if (r.decided && !same(f32, r.code, want.code) && ++differ <= 5) MESSAGE("ref_rn " << to_string(f) << "(" << std::hexfloat << x << ")");
    }
    MESSAGE(to_string(f) << ": 10^6 inputs, " << mpfr << " decided by MPFR, ref_rn undecided " << undecided);
    CHECK(differ == 0);
  }
}

TEST_CASE("expm1, log1p, tanh, sinh, cosh: special values, the fast path's switches, clamps, tiny inputs, -1") {
  const std::uint64_t seed = test::seed();
  std::vector<float> xs = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, -2.0f, 0x1p-149f, -0x1p-149f, 0x1p-126f, 0x1.fffffep127f,
                           -0x1.fffffep127f, 88.72283f, 88.72284f, 90.0f, -40.0f, 0.125f, -0.125f, 0x1p-5f, -0x1p-5f,
                           -0x1.fffffep-1f,  // log1p's least result: log(2^-24)
                           0.0625f, -0.0625f, 9.01f, -9.01f, 20.0f, -20.0f, 25.0f,  // tanh's switch, its 1 in f32, the clamp
                           89.4159f, -89.4159f, 11.09f, 0x1p-30f, -0x1p-30f};  // sinh/cosh: f32, f16 overflow; cosh's shortcut
  for (int k = -149; k <= 127; ++k) xs.push_back(std::ldexp(1.0f, k)), xs.push_back(-std::ldexp(1.0f, k));
  std::vector<float> around;
  for (float x : xs)
    if (std::isfinite(x))
      for (int d = -3; d <= 3; ++d) around.push_back(std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) + static_cast<std::uint32_t>(d)));
  xs.insert(xs.end(), around.begin(), around.end());
  Count c;
  for (Fn f : kFns)
    for (std::size_t i = 0; i < xs.size(); ++i) check(f, xs[i], c, seed, i);
  CHECK(c.differ == 0);
  CHECK(c.rn_differ == 0);
  const Rounder rn = rounder(f32, Rounding::NearestEven), rz = rounder(f32, Rounding::TowardZero);
  CHECK(evaluate(Fn::Expm1, -0.0f, f32, rn).rounded.code == 0x80000000u);  // expm1(-0) = -0
  CHECK(evaluate(Fn::Expm1, -INFINITY, f32, rn).rounded.code == 0xbf800000u);  // -1 exactly
  CHECK(evaluate(Fn::Expm1, -50.0f, f32, rz).rounded.code == 0xbf7fffffu);  // -1 + e^-50: toward zero, -(1 - 2^-24)
  CHECK(evaluate(Fn::Log1p, -1.0f, f32, rz).rounded.code == 0xff800000u);  // -Inf in every mode
  CHECK(std::isnan(to_double(f32, evaluate(Fn::Log1p, -2.0f, f32, rn).rounded.code)));
  CHECK(evaluate(Fn::Tanh, -INFINITY, f32, rz).rounded.code == 0xbf800000u);  // tanh(-Inf) = -1 exactly
  CHECK(evaluate(Fn::Tanh, 25.0f, f32, rz).rounded.code == 0x3f7fffffu);     // 1 - 2e^-50...: toward zero, 1 - 2^-24
  CHECK(evaluate(Fn::Tanh, 25.0f, f32, rn).rounded.code == 0x3f800000u);
}

TEST_CASE("expm1_fast, log1p_fast, tanh_fast, sinh_fast, cosh_fast: relative error within their bounds against 200-bit MPFR (what the brackets rest on)") {
  const std::uint64_t seed = test::seed();
  for (Fn f : kFns) {
    double worst = 0;
    for (std::uint64_t i = 0; i < 200000; ++i) {
      const float x = draw(f, seed ^ 0x2000000, i);
      if (!std::isfinite(x) || x == 0 || (f == Fn::Expm1 && (x < -40 || x > 90)) || (f == Fn::Log1p && x <= -1) ||
          (f == Fn::Tanh && std::fabs(x) > 20) || ((f == Fn::Sinh || f == Fn::Cosh) && std::fabs(x) > 90))
        continue;
      const double y = f == Fn::Expm1 ? expm1_fast(x, exp_tables())
                       : f == Fn::Tanh ? (x < 0 ? -tanh_fast(-x, exp_tables()) : tanh_fast(x, exp_tables()))
                       : f == Fn::Sinh ? (x < 0 ? -sinh_fast(-x, exp_tables()) : sinh_fast(x, exp_tables()))
                       : f == Fn::Cosh ? cosh_fast(std::fabs(x), exp_tables())
                                       : log1p_fast(x, log_tables());
      mpfr_ref::Mpfr e(200), d(200);
      mpfr_f(f, e, x);
      mpfr_sub_d(d, e, y, MPFR_RNDN);
      mpfr_div(d, d, e, MPFR_RNDN);
      worst = std::max(worst, std::fabs(mpfr_get_d(d, MPFR_RNDN)));
    }
    const double bound = f == Fn::Expm1  ? kExpm1ErrorBound
                         : f == Fn::Tanh ? kTanhErrorBound
                         : f == Fn::Sinh ? kSinhErrorBound
                         : f == Fn::Cosh ? kCoshErrorBound
                                         : kLog1pErrorBound;
    MESSAGE(to_string(f) << "_fast: largest relative error 2^" << std::log2(worst) << " (bound 2^" << std::log2(bound) << ")");
    CHECK(worst > 0);  // the measurement can see an error
    CHECK(worst <= bound);
  }
}
