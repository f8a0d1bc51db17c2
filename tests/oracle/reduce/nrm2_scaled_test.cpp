// tests/oracle/reduce/nrm2_scaled_test.cpp — LAPACK 3.10's scaled nrm2 emulated: its constants against LAPACK's
// published ones, hand-worked vectors of every branch (each with its arithmetic), the special values, the
// identity with the unscaled sum on medium data, and the bound against the emulation in every mode.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/philox.hpp"
#include "oracle/reduce/nrm2_scaled.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

ReduceArith arith(const Format& acc, Rounding r = Rounding::NearestEven, ProductRounding p = ProductRounding::Rounded) {
  ReduceArith a;
  a.acc = &acc;
  a.rounder = {r, default_saturation(acc), NanPayload::Preserve};
  a.products = p;
  a.stochastic_key = 7;
  return a;
}

double scaled(const std::vector<double>& x, const ReduceArith& a = arith(f32)) {
  return emulate_nrm2_scaled(x.data(), x.size(), a);
}

}  // namespace

TEST_CASE("nrm2_scaled: Blue's constants are LAPACK's") {
  // LAPACK 3.10 la_constants: single precision 2^-63, 2^52, 2^75, 2^-76; double 2^-511, 2^486, 2^537, 2^-538
  // (from Fortran's minexponent -125 / -1021, maxexponent 128 / 1024, digits 24 / 53).
  const BlueConstants s = blue_constants(f32), d = blue_constants(f64);
  CHECK(s.tsml == 0x1p-63);
  CHECK(s.tbig == 0x1p52);
  CHECK(s.ssml == 0x1p75);
  CHECK(s.sbig == 0x1p-76);
  CHECK(d.tsml == 0x1p-511);
  CHECK(d.tbig == 0x1p486);
  CHECK(d.ssml == 0x1p537);
  CHECK(d.sbig == 0x1p-538);
  // f16 (emin -14, emax 15, p 11): 2^ceil(-14/2) = 2^-7, 2^floor(6/2) = 2^3, 2^-floor(-24/2) = 2^12, 2^-ceil(26/2) = 2^-13.
  const BlueConstants h = blue_constants(f16);
  CHECK(h.tsml == 0x1p-7);
  CHECK(h.tbig == 0x1p3);
  CHECK(h.ssml == 0x1p12);
  CHECK(h.sbig == 0x1p-13);
}

TEST_CASE("nrm2_scaled: hand-worked vectors, one per branch (f32)") {
  // Big: (2^100, 2^100): each (2^100 2^-76)^2 = 2^48, A_big = 2^49, sqrt = 2^24.5 -> RN f32 0x1.6a09e6p+24 (sqrt 2's
  // bits after the 24th are 0x67..., below half), times 2^76: 0x1.6a09e6p+100. The unscaled sum of squares is Inf.
  CHECK(scaled({0x1p100, 0x1p100}) == 0x1.6a09e6p+100);
  CHECK(nrm2_scaled_branch(std::vector<double>{0x1p100, 0x1p100}.data(), 2, f32) == Nrm2Branch::Big);
  // Small: (2^-100, 2^-100): (2^-100 2^75)^2 = 2^-50 each, sum 2^-49, sqrt -> 0x1.6a09e6p-25, times 2^-75:
  // 0x1.6a09e6p-100. Unscaled, each square 2^-200 underflows to 0.
  CHECK(scaled({0x1p-100, -0x1p-100}) == 0x1.6a09e6p-100);
  // Medium and small: (1, 2^-100): y = 1, z = sqrt(2^-50) / 2^75 = 2^-100, r = 2^-100, r^2 = 2^-200 underflows to 0,
  // 1 + 0 = 1, 1 * 1 = 1, sqrt 1 = 1 (the exact norm sqrt(1 + 2^-200) rounds to 1 too).
  CHECK(scaled({1.0, 0x1p-100}) == 1.0);
  CHECK(nrm2_scaled_branch(std::vector<double>{1.0, 0x1p-100}.data(), 2, f32) == Nrm2Branch::MediumAndSmall);
  // Big with a medium value: (2^60, 3): A_big = (2^-16)^2 = 2^-32; A_med = 9, scaled twice by 2^-76: 9 2^-152 =
  // 1.125 2^-149 rounds to f32's smallest subnormal 2^-149; 2^-32 + 2^-149 -> 2^-32; sqrt 2^-16, times 2^76: 2^60.
  CHECK(scaled({0x1p60, 3.0}) == 0x1p60);
  // A small value before the big one is summed into A_small and then ignored; after it, not even summed.
  CHECK(scaled({0x1p-70, 0x1p60}) == 0x1p60);
  // Medium: (3, 4) -> 5.
  CHECK(scaled({3.0, 4.0}) == 5.0);
  CHECK(scaled({}) == 0.0);
}

TEST_CASE("nrm2_scaled: special values follow LAPACK (Inf and NaN together give NaN)") {
  const double inf = INFINITY, nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(scaled({1.0, inf}) == inf);
  CHECK(scaled({-inf, 0x1p-100}) == inf);
  CHECK(std::isnan(scaled({1.0, nan})));
  CHECK(std::isnan(scaled({inf, nan})));  // A_big = Inf, A_med = NaN: Inf + NaN (Nrm2Specials::NaNWins)
  CHECK(std::isnan(scaled({nan, 0x1p-100})));  // NaN in A_med, A_small > 0: sqrt(NaN) reaches the result
}

TEST_CASE("nrm2_scaled: on medium data it is the unscaled sequential nrm2, every mode") {
  std::uint64_t ctr = 0;
  for (int c = 0; c < 30; ++c) {
    std::vector<double> x(1 + philox_4x32(test::seed(), 61, ctr++)[0] % 200);
    for (double& v : x) {
      const auto w = philox_4x32(test::seed(), 62, ctr++);
      v = std::ldexp(1.0 + static_cast<double>(w[0] >> 9) * 0x1p-23, static_cast<int>(w[1] % 61) - 30) * ((w[2] & 1) ? -1 : 1);
    }
    // Every deterministic mode (stochastic bits are numbered in evaluation order: the scaled loop squares and
    // adds term by term, emulate_nrm2 forms every product first, so their draws differ).
    for (Rounding rd : kAllRoundings)
      for (ProductRounding pr : {ProductRounding::Exact, ProductRounding::Rounded}) {
        if (rd == Rounding::Stochastic) continue;
        const ReduceArith a = arith(f32, rd, pr);
        CHECK(emulate_nrm2_scaled(x.data(), x.size(), a) == emulate_nrm2(x.data(), x.size(), ReduceOrder::sequential(), a));
      }
  }
}

TEST_CASE("nrm2_scaled: within its bound on every branch, every mode, f32 and f16 accumulators") {
  std::uint64_t ctr = 0, checked = 0;
  double worst = 0;
  for (const Format* acc : {&f32, &f16}) {
    const BlueConstants c = blue_constants(*acc);
    const int e_small = std::ilogb(c.tsml), e_big = std::ilogb(c.tbig);
    const int e_min = acc->emin() - acc->frac_bits, e_max = acc->emax() - 6;  // keep the norm of 60 values finite
    for (int v = 0; v < 60; ++v) {
      // Classes by v mod 5: big + medium + small, medium + small, small only, big + small, medium only.
      const int cls = v % 5;
      std::vector<double> x(1 + philox_4x32(test::seed(), 63, ctr++)[0] % 60);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const auto w = philox_4x32(test::seed(), 64, ctr++);
        const int pick = cls == 0 ? static_cast<int>(w[1] % 3) : cls == 1 ? 1 + static_cast<int>(w[1] % 2) : cls == 2 ? 2
                       : cls == 3 ? (w[1] % 2 ? 0 : 2) : 1;
        int lo = e_small, hi = e_big - 1;  // medium
        if (pick == 0) lo = e_big + 1, hi = e_max;
        if (pick == 2) lo = e_min, hi = e_small - 1;
        const int e = lo + static_cast<int>(w[2] % static_cast<std::uint32_t>(hi - lo + 1));
        const double m = 1.0 + static_cast<double>(w[0] >> 8) * 0x1p-24;
        x[i] = to_double(*acc, round_double(*acc, std::ldexp(m, e), {Rounding::TowardZero, Saturation::Finite, NanPayload::Preserve}).code) *
               ((w[3] & 1) ? -1 : 1);
      }
      const ReduceRef ref = nrm2_reference(x.data(), x.size());
      for (Rounding rd : kAllRoundings)
        for (ProductRounding pr : {ProductRounding::Exact, ProductRounding::Rounded}) {
          const ReduceArith a = arith(*acc, rd, pr);
          const double got = emulate_nrm2_scaled(x.data(), x.size(), a);
          const ReduceBound b = nrm2_scaled_bound(x.data(), x.size(), a, *acc, a.rounder, ref);
          REQUIRE(b.applicable);
          if (!b.overflow_free) continue;
          // got - ||x||: hi carries the norm to 2^-53 relative, lo to 2^-106; the difference is taken in double
          // from hi and lo (each step below 2^-52 relative of a quantity <= 2 ||x||): 2^-49 ||x|| of slack.
          const double err = std::fabs((got - ref.value.hi) - ref.value.lo);
          const double allowed = b.total * (1 + 0x1p-50) + std::fabs(ref.value.hi) * 0x1p-49;
          if (!(err <= allowed)) {
            MESSAGE(acc->tag << " " << to_string(rd) << " branch " << to_string(nrm2_scaled_branch(x.data(), x.size(), *acc))
                             << " got " << got << " exact " << ref.value.hi << " err " << err << "\n" << to_text(b));
            REQUIRE(err <= allowed);
          }
          if (b.total > 0) worst = std::max(worst, err / b.total);
          ++checked;
        }
    }
  }
  MESSAGE("checked " << checked << " scaled norms; the largest error / bound was " << worst);
  CHECK(checked > 1000);
  {
    // Not vacuous: 1000 medium values in f32, the bound is below 6e-5 ||x|| (gamma_1000 / 2 + u).
    std::vector<double> x(1000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + static_cast<double>(i) * 0x1p-10;
    const ReduceRef ref = nrm2_reference(x.data(), x.size());
    const ReduceBound b = nrm2_scaled_bound(x.data(), x.size(), arith(f32), f32, Rounder::nearest(f32), ref);
    CHECK(b.total < 6e-5 * ref.value.hi);
  }
}

TEST_CASE("nrm2_scaled: the second-order terms, by value (no data can show them past the first term)") {
  // They are below 2^-150 of the sums-of-squares term on any data (a left-out square is < T_s^2 = 2^-126 while
  // ||x|| > T_b = 2^52 in that branch), so the emulation cannot exceed a bound without them; their values are
  // checked here instead.
  auto term = [](const ReduceBound& b, const std::string& prefix) {
    for (const auto& t : b.terms)
      if (t.name.rfind(prefix, 0) == 0) return t.value;
    return -1.0;
  };
  {
    // Big: (2^60, 2^-70, 2^-70) leaves out 2 2^-140 = 2^-139; over ||x|| = 2^60 (hi times 1 + 2^-52): 2^-199.
    const std::vector<double> x{0x1p60, 0x1p-70, -0x1p-70};
    const ReduceBound b = nrm2_scaled_bound(x.data(), 3, arith(f32), f32, Rounder::nearest(f32), nrm2_reference(x.data(), 3));
    CHECK(term(b, "squares left out") == doctest::Approx(0x1p-199).epsilon(1e-12));
    CHECK(term(b, "underflow") == -1.0);  // no medium value: nothing is scaled twice by S_b
  }
  {
    // Small: (2^-140, 2^-140): each (2^-140 2^75)^2 = 2^-130 lands in f32's subnormal range, eta = 2^-150 each, in
    // units of q: 2 2^-150 / S_s^2 = 2^-299; over sqrt(q) = sqrt(2^-279) = 2^-139.5: 2^-159.5 (times (1 + gamma_2) /
    // sqrt(1 - gamma_2), within 2e-7 of 1). The final division by S_s can land subnormal: eta = 2^-150.
    const std::vector<double> x{0x1p-140, 0x1p-140};
    const ReduceBound b = nrm2_scaled_bound(x.data(), 2, arith(f32), f32, Rounder::nearest(f32), nrm2_reference(x.data(), 2));
    CHECK(term(b, "underflow") == doctest::Approx(std::ldexp(1.0, -159) / std::sqrt(2.0)).epsilon(1e-6));
    CHECK(term(b, "final scaling") == 0x1p-150);
  }
}

