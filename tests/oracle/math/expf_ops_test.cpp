// tests/oracle/math/expf_ops_test.cpp — fpcert's expf_ops (oracle/math/expf_ops.hpp), the exp a softmax kernel declares
// exactly, held to its claim against MPFR (Ziv's loop alone, not the fast path the elementwise check uses): within
// kExpfOpsUlps codes of the correctly rounded result on random inputs over its whole range, on the subnormal-result
// range, and every input of [-1, 1) with a 2^-10 spacing; IEEE's special values.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "oracle/math/elementary.hpp"
#include "oracle/math/expf_ops.hpp"

namespace fpcert {
namespace {

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// Distance in codes between two finite non-negative binary32 results (codes are monotone there).
std::int64_t codes_apart(float a, float b) { return std::llabs(static_cast<std::int64_t>(bits(a)) - static_cast<std::int64_t>(bits(b))); }

}  // namespace

TEST_CASE("expf_ops: within its claimed ulps of MPFR's correctly rounded exp, every range") {
  const Rounder rn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
  std::mt19937_64 rng(20261204);
  std::int64_t worst = 0, checked = 0, not_cr = 0;
  auto check = [&](float x) {
    const float got = math::expf_ops(x);
    std::uint32_t c = static_cast<std::uint32_t>(math::evaluate_mpfr(math::Fn::Exp, x, f32, rn).code);
    float cr;
    std::memcpy(&cr, &c, 4);
    const std::int64_t d = std::isinf(cr) || std::isinf(got) ? (got == cr ? 0 : 99) : codes_apart(got, cr);
    if (d > worst) {
      worst = d;
      MESSAGE(fmt::format("x = {:a}: got {:a}, correctly rounded {:a}", x, got, cr));
    }
    not_cr += d != 0;
    ++checked;
  };
  std::uniform_real_distribution<float> whole(-104.0f, 89.0f), tiny(-104.0f, -87.0f);
  for (int i = 0; i < 300000; ++i) check(whole(rng));
  for (int i = 0; i < 100000; ++i) check(tiny(rng));  // subnormal and near-underflow results
  for (float x = -1.0f; x < 1.0f; x += 0x1p-10f) check(x);
  for (float x : {0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 88.72283f, 88.7228394f, -103.97f, -87.33655f, 1e-8f})
    check(x);
  MESSAGE(checked << " inputs, " << not_cr << " not correctly rounded, worst " << worst << " code(s) away");
  CHECK(worst <= static_cast<std::int64_t>(math::kExpfOpsUlps));
  CHECK(not_cr > 0);  // a 1-ulp exp, not a correctly rounded one: the claim is what is checked, not more
}

TEST_CASE("expf_ops: IEEE special values") {
  CHECK(std::isnan(math::expf_ops(std::nanf(""))));
  CHECK(math::expf_ops(-INFINITY) == 0.0f);
  CHECK(!std::signbit(math::expf_ops(-INFINITY)));
  CHECK(math::expf_ops(INFINITY) == INFINITY);
  CHECK(math::expf_ops(89.0f) == INFINITY);     // e^89 > 3.4e38
  CHECK(math::expf_ops(-105.0f) == 0.0f);       // e^-105 < 2^-150
  CHECK(math::expf_ops(0.0f) == 1.0f);
  CHECK(math::expf_ops(-0.0f) == 1.0f);
}

}  // namespace fpcert
