// tests/suites/eltwise_faults_test.cpp — the elementwise fault injectors (suites/ops/elementwise/eltwise_faults.hpp): the
// code transformations held against fpcert's rounding core and std::nextafter, and the mutation score of the elementwise
// suite on glibc's functions, each verdict derived from the fault and the function (which results it can change), not
// read from a run: sqrtf (correctly rounded) refuses every fault that can change one of its results, and elt_ftz is not
// applicable (a square root has no subnormal result); expf on f16 refuses elt_ftz (results below 2^-14 near x = -10),
// elt_daz is not applicable (exp of a subnormal and exp(0) both round to 1), and on the f32 -> f16 kernel whose
// results a flush could change, the rules that say so are held against the results themselves.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>

#include "base/error.hpp"
#include "base/philox.hpp"
#include "kernels/elementwise/eltwise_kernel.hpp"
#include "oracle/round.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/elementwise/eltwise_faults.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/sqrt_mutation.hpp"

namespace fpcert {
namespace {

float as_float(std::uint32_t c) { return std::bit_cast<float>(c); }

/// A spread of f32 codes: every exponent with random fractions, both signs, and the codes around the boundaries.
std::vector<std::uint32_t> f32_codes() {
  std::vector<std::uint32_t> v;
  std::uint64_t at = 0;
  for (std::uint32_t e = 0; e < 256; ++e)
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t frac = random_bits32(11, at++) & 0x7FFFFF;
      v.push_back((e << 23) | frac);
      v.push_back(0x80000000u | (e << 23) | frac);
    }
  for (std::uint32_t c : {0x0u, 0x1u, 0x7FFFFFu, 0x800000u, 0x7F7FFFFFu, 0x7F7F8000u, 0x7F7F7FFFu, 0x3F808000u, 0x3F818000u, 0x3F80FFFFu})
    v.push_back(c), v.push_back(c | 0x80000000u);
  return v;
}

}  // namespace

TEST_CASE("eltwise fault codes: narrowing to 8 bits is the rounding core's bf16, one ulp away is nextafter, flush is DAZ/FTZ") {
  int checked = 0;
  for (std::uint32_t c : f32_codes()) {
    const float v = as_float(c);
    if (std::isnan(v)) continue;
    CAPTURE(c);
    // bf16 has f32's exponent range: RN to 8 significand bits is RN into bf16, widened back (fpcert's rounding core, from
    // the value, not the code).
    const auto b = round_double(bf16, static_cast<double>(v), Rounder::nearest(bf16));
    CHECK(eltwise_narrow(f32, c, 8) == static_cast<std::uint32_t>(b.code) << 16);
    if (std::isfinite(v) && v != 0) {
      const float away = std::nextafter(v, std::copysign(INFINITY, v));
      CHECK(eltwise_ulp_away(f32, c) == std::bit_cast<std::uint32_t>(away));
    } else {
      CHECK(eltwise_ulp_away(f32, c) == c);
    }
    const bool sub = std::fpclassify(v) == FP_SUBNORMAL;
    CHECK(eltwise_flush(f32, c) == (sub ? std::bit_cast<std::uint32_t>(std::copysign(0.0f, v)) : c));
    ++checked;
  }
  CHECK(checked > 30000);
  // f16: the narrowing is RN on the code's low bits; 1 + 2^-8 (a tie: 0x3C04) goes to even, 1 + 3 2^-9 (0x3C06) up.
  CHECK(eltwise_narrow(f16, 0x3C04, 8) == 0x3C00);
  CHECK(eltwise_narrow(f16, 0x3C06, 8) == 0x3C08);
  CHECK(eltwise_narrow(f16, 0x7BFF, 8) == 0x7C00);  // 65504 rounds past the largest finite: Inf
  CHECK(eltwise_flush(f16, 0x8001) == 0x8000);
}

TEST_CASE("eltwise mutation: glibc's sqrtf refuses every fault that can change a square root, for its own fault") {
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s);
  test::check_sqrt_mutation("glibc_sqrtf", run_mutation(*s, "glibc_sqrtf", MutationOptions{}));
}

TEST_CASE("eltwise mutation: expf on f16 refuses flushed results and cannot see flushed inputs") {
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s);
  MutationOptions o;
  o.faults = {Fault::EltFtz, Fault::EltDaz, Fault::EltInfToMax, Fault::EltNarrowBf16};
  const MutationScore m = run_mutation(*s, "glibc_expf_f16", o);
  REQUIRE(m.mutants.size() == 4);
  for (const MutantResult& x : m.mutants) {
    CAPTURE(x.fault);
    CAPTURE(x.detail);
    if (x.fault == "elt_daz") CHECK(x.outcome == MutantOutcome::NotApplicable);  // exp(+-2^-24 k) rounds to 1 in f16, as exp(0)
    if (x.fault == "elt_ftz") CHECK(x.outcome == MutantOutcome::Killed);    // exp(-10) = 4.5e-5 < 2^-14: subnormal in f16
    if (x.fault == "elt_inf_to_max") CHECK(x.outcome == MutantOutcome::Killed);  // exp(12) overflows f16
    // f16's 11 bits rounded to 8: 3 bits lost, up to 4 ulp against a 1-ulp claim.
    if (x.fault == "elt_narrow_bf16") CHECK(x.outcome == MutantOutcome::Killed);
  }
  // A bf16 output has no bits to lose.
  const auto k = make_eltwise_kernel("glibc_expf_bf16");
  REQUIRE(k);
  CHECK_FALSE(eltwise_fault_not_applicable(Fault::EltNarrowBf16, *k).empty());
  CHECK(eltwise_fault_not_applicable(Fault::EltFtz, *k).empty());
}

TEST_CASE("eltwise faults: 'not applicable' only where the fault provably changes no result (every 16-bit code checked)") {
  // The two function rules (no subnormal result; f(subnormal) rounds to f(0) = 1) held against the results of glibc's
  // functions on every f16 and bf16 code: where a rule says "cannot change", flushing changes no result.
  int rules = 0;
  for (const char* name : {"glibc_logf_bf16", "glibc_log10f_f16", "glibc_expf_f16", "glibc_exp10f_bf16", "glibc_coshf_f16",
                           "glibc_tanhf_f16", "glibc_log1pf_f16", "glibc_erff_bf16", "glibc_exp2f_bf16", "glibc_sinf_f16"}) {
    CAPTURE(name);
    auto k = make_eltwise_kernel(name);
    if (!k) continue;
    const EltwiseTraits& t = k->eltwise_traits();
    std::vector<std::uint16_t> x(65536), y(65536), xd(65536), yd(65536), xl(65536), yl(65536);
    const auto large = static_cast<std::uint32_t>(t.in->frac_bits + t.in->bias) << t.in->frac_bits;  // |x| >= 2^(p-1)
    for (std::uint32_t c = 0; c < 65536; ++c) {
      x[c] = static_cast<std::uint16_t>(c), xd[c] = static_cast<std::uint16_t>(eltwise_flush(*t.in, c));
      const bool big = (c & t.in->magnitude_mask()) >= large && (c & t.in->exp_field_mask()) != t.in->exp_field_mask();
      xl[c] = static_cast<std::uint16_t>(big ? c & ~0xFu : c);
    }
    k->run({65536, x.data(), y.data(), nullptr, nullptr});
    k->run({65536, xd.data(), yd.data(), nullptr, nullptr});
    k->run({65536, xl.data(), yl.data(), nullptr, nullptr});
    const Format& o = *t.out;
    auto nan = [&](std::uint32_t c) { return (c & o.exp_field_mask()) == o.exp_field_mask() && (c & o.frac_mask()) != 0; };
    auto inf = [&](std::uint32_t c) { return (c & o.magnitude_mask()) == o.inf_code(); };
    bool ftz_changes = false, daz_changes = false, large_changes = false, any_inf = false;
    for (std::uint32_t c = 0; c < 65536; ++c) {
      ftz_changes = ftz_changes || eltwise_flush(o, y[c]) != y[c];
      daz_changes = daz_changes || (y[c] != yd[c] && !nan(y[c]) && !nan(yd[c]));
      large_changes = large_changes || (y[c] != yl[c] && !nan(y[c]) && !nan(yl[c]));
      any_inf = any_inf || (inf(y[c]) && !inf(x[c]));
    }
    if (!eltwise_fault_not_applicable(Fault::EltLargeArg, *k).empty()) {
      CHECK_FALSE(large_changes);
      ++rules;
    }
    if (!eltwise_fault_not_applicable(Fault::EltInfToMax, *k).empty()) {
      CHECK_FALSE(any_inf);
      ++rules;
    }
    if (!eltwise_fault_not_applicable(Fault::EltFtz, *k).empty()) {
      CHECK_FALSE(ftz_changes);
      ++rules;
    }
    if (!eltwise_fault_not_applicable(Fault::EltDaz, *k).empty()) {
      CHECK_FALSE(daz_changes);
      ++rules;
    }
    if (std::string(name) == "glibc_tanhf_f16") CHECK(ftz_changes);  // tanh(x) = x: subnormal results exist and are flushed
    if (std::string(name) == "glibc_log10f_f16") CHECK(large_changes);  // log10 of 1024 .. 65504: not saturated
  }
  CHECK(rules >= 9);
}

TEST_CASE("eltwise mutants: an unknown kernel or a fault of another operation is refused with a clear error") {
  CHECK_THROWS_WITH_AS(register_eltwise_mutant("no_such_kernel", Fault::EltZeros), doctest::Contains("unknown elementwise kernel"),
                       InputError);
  CHECK_THROWS_WITH_AS(register_eltwise_mutant("glibc_sqrtf", Fault::AccF16), doctest::Contains("not a fault of elementwise"), InputError);
  // The name a user types (kernel~fault) makes the mutant.
  CHECK(register_mutant_name("glibc_sqrtf~elt_zeros"));
  const auto z = make_eltwise_kernel("glibc_sqrtf~elt_zeros");
  REQUIRE(z);
  CHECK(z->is_mutant());
}

}  // namespace fpcert
