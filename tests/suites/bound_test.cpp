// tests/suites/bound_test.cpp — the bound model's arithmetic against the formulas of DESIGN.md.
#include <doctest/doctest.h>

#include <cmath>

#include "kernels/gemm/cpu/model.hpp"
#include "suites/verdict/bound.hpp"

using namespace fpcert;

TEST_CASE("independent gate reproduces the reference course for fp16 storage: 0.0625, 0.125, 0.177") {
  const auto k = make_cpu_model("model_gemm_f16_f32acc");
  REQUIRE(k);
  for (int K : {256, 1024, 2048}) {
    BoundInputs in;
    in.traits = &k->traits();
    in.k = K;
    in.ref_max_abs = 10;
    const Bound b = make_bound(BoundVariant::Independent, in);
    // Course: rtol = 4 * eps * sqrt(K), eps = 2^-10 (fp16 fraction bits) = u_A + u_B. fpcert adds
    // the fp32 accumulation term 4 * sqrt(K) * 2^-24 (1.1e-5 at K = 2048).
    const double course = 4 * std::ldexp(1.0, -10) * std::sqrt(K);
    CAPTURE(K);
    CHECK(b.rtol == doctest::Approx(course + 4 * std::sqrt(K) * std::ldexp(1.0, -24)).epsilon(1e-14));
    CHECK(b.atol == doctest::Approx(b.rtol * 10));
    CHECK(!b.arithmetic.empty());
  }
  // The printed values the issue quotes.
  BoundInputs in;
  in.traits = &k->traits();
  in.k = 2048;
  CHECK(std::round(make_bound(BoundVariant::Independent, in).rtol * 1000) / 1000 == 0.177);
}

TEST_CASE("storage terms vanish for representable inputs; floors and output terms") {
  const auto k = make_cpu_model("model_gemm_f16_f32acc");
  BoundInputs in;
  in.traits = &k->traits();
  in.k = 1024;
  in.a_exact = in.b_exact = true;
  const Bound b = make_bound(BoundVariant::Independent, in);
  // Only fp32 accumulation remains: 4 * sqrt(1024) * 2^-24 = 2^-17; above the fp32 floor 2^-23.
  CHECK(b.rtol == std::ldexp(1.0, -17));
  const auto f16acc = make_cpu_model("model_gemm_f16_f16acc");
  in.traits = &f16acc->traits();
  const Bound b2 = make_bound(BoundVariant::Independent, in);
  CHECK(b2.rtol == 4 * 32 * std::ldexp(1.0, -11));  // fp16 accumulation, sqrt(K) growth
}

TEST_CASE("worst case: gamma_K, vacuous when K u >= 1") {
  const auto k = make_cpu_model("model_gemm_f32");
  BoundInputs in;
  in.traits = &k->traits();
  in.k = 1000;
  in.a_exact = in.b_exact = true;  // fp32 inputs in fp32 storage
  const Bound b = make_bound(BoundVariant::WorstCase, in);
  const double u = std::ldexp(1.0, -24);
  CHECK(b.rtol == doctest::Approx(1000 * u / (1 - 1000 * u)).epsilon(1e-12));
  CHECK(!b.vacuous);
  const auto f16acc = make_cpu_model("model_gemm_f16_f16acc");
  in.traits = &f16acc->traits();
  in.k = 4096;  // 4096 * 2^-11 = 2 >= 1
  CHECK(make_bound(BoundVariant::WorstCase, in).vacuous);
}

TEST_CASE("truncating accumulators grow like K, promotion limits the low-precision run") {
  const auto lp = make_cpu_model("model_gemm_e4m3_lpacc");
  const auto lp128 = make_cpu_model("model_gemm_e4m3_lpacc_p128");
  BoundInputs in;
  in.k = 4096;
  in.a_exact = in.b_exact = true;
  in.traits = &lp->traits();
  const double no_promo = make_bound(BoundVariant::Componentwise, in).rtol;
  in.traits = &lp128->traits();
  const double promo = make_bound(BoundVariant::Componentwise, in).rtol;
  // 4 * 4096 * 2^-13 against 4 * (128 * 2^-13 + sqrt(32) * 2^-24).
  CHECK(no_promo == doctest::Approx(4 * 4096 * std::ldexp(1.0, -13)));
  CHECK(promo == doctest::Approx(4 * (128 * std::ldexp(1.0, -13) + std::sqrt(32.0) * std::ldexp(1.0, -24))));
}
