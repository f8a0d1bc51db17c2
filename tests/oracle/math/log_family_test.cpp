// tests/oracle/math/log_family_test.cpp — log, log2, log10 (oracle/math/log_kernel.hpp, elementary.hpp) against MPFR
// directly: mpfr_log/log2/log10 at 200 bits, rounded into f32/f16/bf16 by mpfr_ref::round under every rounding mode.
// 200 bits decide every case but the exact ones (log(1) = 0, log2(2^n) = n, log10(10^n) = n), which MPFR computes
// exactly; a binary32 input's log lies far above 2^-200 relative from a rounding boundary otherwise.
#include <doctest/doctest.h>

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/philox.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/mpfr_ref.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using namespace fpcert::math;

namespace {

const Format* const kDests[] = {&f32, &f16, &bf16};
const Rounding kModes[] = {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down,
                           Rounding::Stochastic};

Rounded reference(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  mpfr_ref::Mpfr in(24), y(200);
  mpfr_set_flt(in, x, MPFR_RNDN);
  if (f == Fn::Log) mpfr_log(y, in, MPFR_RNDN);
  else if (f == Fn::Log2) mpfr_log2(y, in, MPFR_RNDN);
  else mpfr_log10(y, in, MPFR_RNDN);
  // log(+-0) = -Inf and log(+Inf) = +Inf are exact infinities (IEEE 754 9.2; divideByZero, not overflow): every mode.
  if (mpfr_inf_p(y)) return {(mpfr_signbit(y) ? d.sign_mask() : 0) | d.inf_code(), 0};
  if (mpfr_nan_p(y)) return round_double(d, std::nan(""), r, rbits);  // x < 0: invalid, a NaN (any NaN matches)
  return mpfr_ref::round(d, y, r, rbits);
}

Rounder rounder(const Format& d, Rounding m) { return Rounder{m, default_saturation(d), NanPayload::Preserve}; }

struct Count {
  std::int64_t checks = 0, differ = 0, mpfr = 0;
};

void check(Fn f, float x, Count& c, std::uint64_t seed, std::uint64_t i) {
  for (const Format* d : kDests)
    for (Rounding m : kModes) {
      const Rounder r = rounder(*d, m);
      const std::uint32_t rbits = m == Rounding::Stochastic ? random_bits32(seed ^ 0x5a5a, i) : 0;
      const MathResult got = evaluate(f, x, *d, r, rbits);
      const Rounded want = reference(f, x, *d, r, rbits);
      ++c.checks;
      c.mpfr += got.used_mpfr;
      const bool both_nan = std::isnan(to_double(*d, got.rounded.code)) && std::isnan(to_double(*d, want.code));
      if (got.rounded.code != want.code && !both_nan && ++c.differ <= 8)
        MESSAGE(to_string(f) << "(" << std::hexfloat << x << ") into " << d->tag << " " << to_string(m) << ": got 0x" << std::hex
                              << got.rounded.code << " want 0x" << want.code);
    }
}

}  // namespace

TEST_CASE("log family: random inputs against MPFR in f32, f16, bf16 under every mode, 0 differences") {
  const std::uint64_t seed = test::seed();
  std::printf("log_family_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  for (Fn f : kLogFns) {
    Count c;
    for (std::uint64_t i = 0; i < 60000; ++i) {
      const auto w = philox_4x32(seed, 0x6c6f67, i);
      float x;
      if (i % 3 == 0) x = std::bit_cast<float>(w[0]);  // any pattern (negatives, NaN, subnormals)
      else if (i % 3 == 1) x = std::bit_cast<float>(w[0] & 0x7fffffffu);  // positive, every binade
      else x = static_cast<float>(1.0 + (static_cast<double>(w[1]) * 0x1p-32 - 0.5) * 0x1p-3);  // near 1: results near 0
      check(f, x, c, seed, i);
    }
    MESSAGE(to_string(f) << ": " << c.checks << " checks, " << c.mpfr << " decided by MPFR");
    CHECK(c.checks == 60000 * 18);
    CHECK(c.differ == 0);
  }
}

TEST_CASE("log family: 10^6 random inputs per function into f32 under nearest-even, 0 differences") {
  const std::uint64_t seed = test::seed();
  for (Fn f : kLogFns) {
    std::int64_t differ = 0, mpfr = 0;
    const Rounder rn = rounder(f32, Rounding::NearestEven);
    for (std::uint64_t i = 0; i < 1000000; ++i) {
      const auto w = philox_4x32(seed, 0x6c6f6731, i);
      const float x = (i & 1) ? std::bit_cast<float>(w[0] & 0x7fffffffu) : static_cast<float>(1.0 + (w[1] * 0x1p-32 - 0.5) * 0x1p-2);
      const MathResult got = evaluate(f, x, f32, rn);
      mpfr += got.used_mpfr;
      const Rounded want = reference(f, x, f32, rn, 0);
      if (got.rounded.code != want.code && !(std::isnan(x)) && ++differ <= 5) MESSAGE(to_string(f) << "(" << std::hexfloat << x << ")");
    }
    MESSAGE(to_string(f) << ": 10^6 inputs, " << mpfr << " decided by MPFR");
    CHECK(differ == 0);
  }
}

TEST_CASE("log family: special values, exact cases, powers, the neighbours of 1 and of every table boundary") {
  const std::uint64_t seed = test::seed();
  std::vector<float> xs = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, -0x1p-149f, 0x1p-149f, 0x1p-126f, 1.0f, 0x1.fffffep127f};
  for (int k = -149; k <= 127; ++k) xs.push_back(std::ldexp(1.0f, k));            // log2 exact: k
  for (int k = 1; k <= 10; ++k) xs.push_back(static_cast<float>(std::pow(10.0, k)));  // log10 exact: k
  for (int d = -64; d <= 64; ++d) xs.push_back(std::bit_cast<float>(0x3f800000u + static_cast<std::uint32_t>(d)));  // around 1
  // Each table boundary (m' = 1 + (j + 1/2)/128, where j changes) and the m' = 1.5 switch, +-2 codes, in a few binades.
  for (int j = -32; j <= 64; ++j)
    for (int e : {-100, -1, 0, 1, 60})
      for (int d = -2; d <= 2; ++d)
        xs.push_back(std::bit_cast<float>(std::bit_cast<std::uint32_t>(std::ldexp(static_cast<float>(1.0 + (j + 0.5) / 128), e)) +
                                          static_cast<std::uint32_t>(d)));
  Count c;
  for (Fn f : kLogFns)
    for (std::size_t i = 0; i < xs.size(); ++i) check(f, xs[i], c, seed, i);
  CHECK(c.differ == 0);
  // The exact cases themselves: log(1) = +0, log2(2^-149) = -149, log10(1e10) = 10, log(0) = -Inf, log(-1) = NaN.
  const Rounder rn = rounder(f32, Rounding::NearestEven), rd = rounder(f32, Rounding::Down);
  CHECK(evaluate(Fn::Log, 1.0f, f32, rd).rounded.code == 0);
  CHECK(to_double(f32, evaluate(Fn::Log2, 0x1p-149f, f32, rd).rounded.code) == -149.0);
  CHECK(to_double(f32, evaluate(Fn::Log10, 1e10f, f32, rd).rounded.code) == 10.0);
  CHECK(to_double(f32, evaluate(Fn::Log, 0.0f, f32, rn).rounded.code) == -INFINITY);
  CHECK(std::isnan(to_double(f32, evaluate(Fn::Log, -1.0f, f32, rn).rounded.code)));
}

TEST_CASE("log_fast's relative error stays within kLogErrorBound against 200-bit MPFR (the bound the bracket rests on)") {
  const std::uint64_t seed = test::seed();
  double worst = 0;
  for (LogKind k : {LogKind::Log, LogKind::Log2, LogKind::Log10})
    for (std::uint64_t i = 0; i < 100000; ++i) {
      const auto w = philox_4x32(seed, 0x6c66, i);
      const float x = (i & 1) ? std::bit_cast<float>((w[0] & 0x7fffffffu) % 0x7f800000u + 1)
                              : static_cast<float>(1.0 + (static_cast<double>(w[1]) * 0x1p-32 - 0.5) * 0x1p-5);
      if (x == 1.0f) continue;
      const double y = log_fast(k, x, log_tables());
      mpfr_ref::Mpfr in(24), e(200), d(200);
      mpfr_set_flt(in, x, MPFR_RNDN);
      if (k == LogKind::Log) mpfr_log(e, in, MPFR_RNDN);
      else if (k == LogKind::Log2) mpfr_log2(e, in, MPFR_RNDN);
      else mpfr_log10(e, in, MPFR_RNDN);
      if (mpfr_zero_p(e)) continue;
      mpfr_sub_d(d, e, y, MPFR_RNDN);
      mpfr_div(d, d, e, MPFR_RNDN);
      worst = std::max(worst, std::fabs(mpfr_get_d(d, MPFR_RNDN)));
    }
  MESSAGE("log_fast: largest relative error 2^" << std::log2(worst) << " (bound 2^-49, derived 2^-50)");
  CHECK(worst <= kLogErrorBound);
  CHECK(worst > 0x1p-60);  // the measure can see an error at all
}
