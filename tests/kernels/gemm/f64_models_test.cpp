// tests/kernels/gemm/f64_models_test.cpp — the FP64 GEMM models (kernels/gemm/cpu/f64_models.cpp, docs/fp64.md): each
// order's result on hand-derived sums that round in fp64, the exact oracle's correctly rounded value beside them
// (their certification: tests/suites/f64_certify_test.cpp).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "kernels/gemm/cpu/model.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"

using namespace fpcert;

namespace {

/// C = x . y (1 x K times K x 1) through a registered kernel on host buffers; the fp64 result.
double dot_through(const char* name, const std::vector<double>& x, const std::vector<double>& y) {
  auto k = make_gemm_kernel(name);
  REQUIRE(k);
  double c = std::nan("");
  GemmOperands o;
  o.m = o.n = 1;
  o.k = static_cast<std::int64_t>(x.size());
  o.a = x.data();
  o.lda = o.k;
  o.b = y.data();
  o.ldb = 1;
  o.c = &c;
  o.ldc = 1;
  k->run(o);
  return c;
}

}  // namespace

TEST_CASE("fp64 models: each declared order on a sum that rounds in fp64, against the oracle's correct rounding") {
  // x = (1, 2^-53, 2^-53, 2^-53), y = ones: the exact sum 1 + 3 2^-53 = 1 + 1.5 2^-52 lies halfway between 1 + 2^-52
  // (odd last bit) and 1 + 2^-51 (even): RN gives 1 + 2^-51.
  const std::vector<double> x = {1, 0x1p-53, 0x1p-53, 0x1p-53}, y = {1, 1, 1, 1};
  const DotRef ref = exact_dot(x.data(), y.data(), x.size());
  CHECK(to_double(f64, round_ref(f64, ref.value, Rounder::nearest(f64)).code) == 1 + 0x1p-51);
  // Sequential FMA from +0: 1, then 1 + 2^-53 is a tie rounded to even (1), three times: 1.
  CHECK(dot_through("model_gemm_f64", x, y) == 1.0);
  // Pairwise: (1 + 2^-53) -> 1 (tie to even), (2^-53 + 2^-53) = 2^-52 exactly, 1 + 2^-52 exactly.
  CHECK(dot_through("model_gemm_f64_pairwise", x, y) == 1 + 0x1p-52);
  // Blocked by 32 (one block): the sequential order's 1.
  CHECK(dot_through("model_gemm_f64_blocked32", x, y) == 1.0);
}

TEST_CASE("fp64 models: an fp64 product rounds (53 x 53 bits) and the FMA keeps it exact") {
  // a = 1 + 2^-30: a a = 1 + 2^-29 + 2^-60, not an fp64 value. Sequential FMA over (-1, a) . (1, a): acc = -1, then
  // fma(a, a, -1) = 2^-29 + 2^-60 exactly; a multiply-then-add would give RN(a a) - 1 = 2^-29 (2^-60 is below half
  // an ulp of 1 + 2^-29).
  const double a = 1 + 0x1p-30;
  CHECK(dot_through("model_gemm_f64", {-1, a}, {1, a}) == 0x1p-29 + 0x1p-60);
  // Pairwise rounds each product first: -1 + RN(a a) = 2^-29.
  CHECK(dot_through("model_gemm_f64_pairwise", {-1, a}, {1, a}) == 0x1p-29);
}
