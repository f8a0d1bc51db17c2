// tests/suites/nondeterminism_test.cpp — kernels that declare run-to-run nondeterminism (docs/bound_model.md,
// "Nondeterministic kernels"): the atomics split-K model passes with its spread measured and within the derived
// bound; each fixture fails for its own reason; the spread bound of an atomic combine holds for every arrival
// order of hand-made partials (an independent enumeration, not the model's code); the declaration is coherent.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numeric>

#include "base/philox.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

RunResult certify_cases(const std::string& kernel, const std::string& only_case) {
  const SuiteInfo* s = find_suite("certify");
  REQUIRE(s);
  SuiteRunOptions o;
  o.only_case = only_case;
  return run_suite(*s, {kernel}, o);
}

const CheckResult* failed(const CaseResult& c, CheckKind k) {
  for (const CheckResult& x : c.checks)
    if (x.kind == k && !x.passed) return &x;
  return nullptr;
}

}  // namespace

TEST_CASE("the atomics split-K model: nondeterministic run to run, every case passes, the spread is measured") {
  // Cancellation makes the arrival order visible: the partials of an element have mixed signs and magnitudes.
  const RunResult r = certify_cases("model_gemm_f32_splitk4_atomic", "");
  std::int64_t differing = 0, spread_cases = 0;
  for (const CaseResult& c : r.cases) {
    CAPTURE(c.case_id);
    CAPTURE(c.reason);
    CHECK(c.status != CaseStatus::Fail);
    if (c.status != CaseStatus::Pass) continue;
    CHECK(c.determinism == "run_to_run");
    for (const CheckResult& x : c.checks)  // never the bitwise tier of one fixed order: order-free elements only
      if (x.kind == CheckKind::Bitwise) CHECK(x.detail.rfind("order-free", 0) == 0);
    REQUIRE(c.spread);
    ++spread_cases;
    differing += c.spread->differing_runs;
    CHECK(c.spread->max_frac <= 1);
    CHECK(c.spread->order_free_differ == 0);
    const CheckResult* sp = find_check(c, CheckKind::Spread);
    REQUIRE(sp);
    CHECK(sp->passed);
  }
  CHECK(spread_cases > 20);
  CHECK(differing > 0);  // the model's arrival order does change between runs somewhere
}

TEST_CASE("fixture: nondeterministic and wrong on a few elements fails by the envelope") {
  const RunResult r = certify_cases("mutant_gemm_f32_splitk4_atomic_lost_update", "uniform");
  REQUIRE(r.cases.size() == 1);
  const CaseResult& c = r.cases[0];
  CHECK(c.status == CaseStatus::Fail);
  const CheckResult* e = failed(c, CheckKind::Envelope);
  REQUIRE(e);
  CHECK(e->detail.find("envelope exceeded") != std::string::npos);
  // C[0][0] or C[1][0] (the lost updates) is where it fails.
  CHECK(e->first_index % c.n == 0);
  CHECK(e->first_index / c.n < 2);
}

TEST_CASE("fixture: a later run that leaves an order-free element's one value fails the spread check for that reason") {
  const RunResult r = certify_cases("mutant_gemm_f32_splitk4_atomic_order_free_drift", "order_free_f32");
  REQUIRE(r.cases.size() == 1);
  const CaseResult& c = r.cases[0];
  CHECK(c.status == CaseStatus::Fail);
  const CheckResult* s = failed(c, CheckKind::Spread);
  REQUIRE(s);
  CHECK(s->detail.find("order-free element(s) differ between runs") != std::string::npos);
  REQUIRE(c.spread);
  CHECK(c.spread->order_free_differ > 0);
  // The checked run is correct: its own verdicts (envelope, order-free bitwise) pass.
  CHECK_FALSE(failed(c, CheckKind::Bitwise));
  CHECK_FALSE(failed(c, CheckKind::Nondeterministic));
}

TEST_CASE("fixture: an undeclared run-to-run difference fails as non-deterministic, as before") {
  const RunResult r = certify_cases("mutant_gemm_f32_splitk4_atomic_undeclared", "uniform");
  REQUIRE(r.cases.size() == 1);
  const CaseResult& c = r.cases[0];
  CHECK(c.status == CaseStatus::Fail);
  REQUIRE(failed(c, CheckKind::Nondeterministic));
  CHECK_FALSE(c.spread);
  CHECK(c.determinism == "deterministic");
  CHECK_FALSE(failed(c, CheckKind::Envelope));  // its values are right: only the undeclared difference fails it
}

TEST_CASE("the atomic spread bound holds for every arrival order of hand-made partials") {
  // Four fp32 partials with mixed signs and exponents: the S! = 24 arrival orders, each summed from +0 with one
  // fp32 rounding per addition (float arithmetic, round to nearest even), differ pairwise by at most
  // 2 gamma_3(2^-24) sum |P_s| (Higham, eq. (4.4): recursive summation of S values is within gamma_{S-1} sum |x|).
  KernelTraits t;
  t.sum_order = SummationOrder::split_k(4, Combine::Atomic);
  t.determinism = Determinism::RunToRun;
  const SpreadModel m = make_spread_model(t, 4);  // K = 4: one product per chunk, the partials are the products
  REQUIRE(m.atomic);
  const double u = 0x1p-24;
  CHECK(m.coef == doctest::Approx(2 * 3 * u / (1 - 3 * u)).epsilon(1e-12));
  std::uint64_t ctr = 0;
  int orders_that_differ = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::array<float, 4> p{};
    for (float& v : p) {
      const auto w = philox_4x32(test::seed(), 7, ctr++);
      const float mant = 1.0f + static_cast<float>(w[0] >> 9) * 0x1p-23f;
      v = std::ldexp(mant, static_cast<int>(w[1] % 30) - 15) * ((w[2] & 1) ? -1.0f : 1.0f);
    }
    double abs_sum = 0;
    for (float v : p) abs_sum += std::fabs(static_cast<double>(v));
    // The partials here are exact products (a' b' = P_s with b' = 1): growth bounds them, eta_arith adds nothing.
    const double allowed = spread_allowed(m, 0, abs_sum);
    std::array<int, 4> idx{0, 1, 2, 3};
    float lo = INFINITY, hi = -INFINITY;
    do {
      float c = 0.0f;
      for (int i : idx) c += p[static_cast<std::size_t>(i)];
      lo = std::min(lo, c);
      hi = std::max(hi, c);
    } while (std::next_permutation(idx.begin(), idx.end()));
    orders_that_differ += hi != lo;
    CHECK(static_cast<double>(hi) - static_cast<double>(lo) <= allowed);
  }
  CHECK(orders_that_differ > 20);  // the test sees orders that matter
  // A hand case: 1 + 2^-24 + 2^-24 is 1 when 1 comes first (each addition a tie, to even), 1 + 2^-23 when the two
  // small ones meet first; the difference, 2^-23, is within 2 gamma_3(2^-24)(1 + 2^-23) = 6 2^-24 (1 + ...).
  CHECK(spread_allowed(m, 0, 1 + 0x1p-23) >= 0x1p-23);
}

TEST_CASE("the declaration: run to run needs an order family, an atomic combine needs run to run") {
  KernelTraits t;
  CHECK(determinism_problem(t).empty());  // deterministic, order unknown (cuBLAS)
  t.determinism = Determinism::RunToRun;
  CHECK(determinism_problem(t).empty());  // run to run, order unknown
  t.sum_order = SummationOrder::split_k(4, Combine::Atomic);
  CHECK(determinism_problem(t).empty());
  t.sum_order = SummationOrder::sequential();
  CHECK(determinism_problem(t).find("no fixed order") != std::string::npos);
  t.determinism = Determinism::Deterministic;
  t.sum_order = SummationOrder::split_k(4, Combine::Atomic);
  CHECK(determinism_problem(t).find("declare determinism run_to_run") != std::string::npos);
  // Partials added atomically into a bf16 output round in bf16's unit (2^-8), not the f32 accumulator's: the
  // envelope's combine term does not cover it, so the declaration is refused (an f32 output is fine above).
  t.determinism = Determinism::RunToRun;
  t.out = &bf16;
  CHECK(determinism_problem(t).find("narrower than the accumulator") != std::string::npos);
  t.out = &f32;
  CHECK(determinism_problem(t).empty());
  // The spec string round-trips, and atomic is refused where it means nothing.
  CHECK(order_spec(parse_order_spec("splitk:splits=4,combine=atomic")) == "splitk:splits=4,combine=atomic,step=fma");
  CHECK_THROWS(parse_order_spec("blocked:block=32,outer=atomic"));
  CHECK(parse_determinism("run_to_run") == Determinism::RunToRun);
  CHECK_FALSE(parse_determinism("sometimes"));
}

TEST_CASE("mutation: another order on some runs is not a fault of a kernel that declares run-to-run nondeterminism") {
  const auto k = make_gemm_kernel("model_gemm_f32_splitk4_atomic");
  REQUIRE(k);
  CHECK_FALSE(fault_not_applicable(Fault::OneRunInN, k->traits()).empty());
  CHECK(fault_not_applicable(Fault::OneRunInN, make_gemm_kernel("model_gemm_f32_splitk4")->traits()).empty());
}

TEST_CASE("mutation: the atomics split-K model refuses at least 95 % of its applicable mutants, each for its own fault") {
  const SuiteInfo* s = find_suite("certify");
  REQUIRE(s);
  MutationOptions o;
  const MutationScore sc = run_mutation(*s, "model_gemm_f32_splitk4_atomic", o);
  std::string survivors;
  for (const MutantResult& m : sc.mutants)
    if (m.outcome == MutantOutcome::Survived || m.outcome == MutantOutcome::KilledOther) survivors += m.fault + ": " + m.detail + "\n";
  CAPTURE(survivors);
  CHECK(sc.invalid_cases.empty());
  CHECK(sc.total() >= 19);
  CHECK(sc.score() >= 0.95);
}

TEST_CASE("a later run's overflow of a partial sum is judged as the checked run's: accepted where a valid order reaches it") {
  // Every element sums the products 3e38, 3e38, -3e38, -3e38 (exact result 0): arrival orders that add the two of
  // one sign first overflow to that sign's infinity and stay there, the others give 0. Runs differ (the order is
  // drawn per element and run); every outcome is one a valid order of the declared arithmetic gives.
  Problem p;
  p.spec = "test-overflow-orders";
  p.source = &f32;
  p.m = 8;
  p.n = 8;
  p.k = 4;
  p.a = Matrix(p.m, p.k);
  p.b = Matrix(p.k, p.n);
  for (double& v : p.a.data) v = 3e38;
  for (std::int64_t q = 0; q < p.k; ++q)
    for (std::int64_t j = 0; j < p.n; ++j) p.b.data[static_cast<std::size_t>(q * p.n + j)] = q < 2 ? 1.0 : -1.0;
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto k = make_gemm_kernel("model_gemm_f32_splitk4_atomic");
  auto api = make_host_api();
  RunOptions o;
  o.timed = 5;  // six runs in all: several arrival orders per element
  const CaseResult r = test::run_graded(*k, p, ref, *api, o);
  INFO(r.reason);
  CHECK(r.status == CaseStatus::Pass);
  REQUIRE(r.spread);
  CHECK(r.spread->differing_runs > 0);
  CHECK(r.spread->envelope_exceed == 0);
}

TEST_CASE("a later run's envelope excess counts elements, not element-runs") {
  // The lost-update fixture is wrong at C[0][0] and C[1][0] in every run (split 1's partial, about a quarter of a
  // sum of positive products, never lands): over five distinct later runs those are still two elements.
  Problem p = test::uniform_problem(8, 8, 64, f32, test::seed());
  for (Matrix* mat : {&p.a, &p.b})
    for (double& v : mat->data) v = std::fabs(v);  // positive products: the lost partial is far beyond any rounding error
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto k = make_gemm_kernel("mutant_gemm_f32_splitk4_atomic_lost_update");
  auto api = make_host_api();
  RunOptions o;
  o.timed = 5;  // six runs in all
  const CaseResult r = test::run_graded(*k, p, ref, *api, o);
  INFO(r.reason);
  CHECK(r.status == CaseStatus::Fail);
  REQUIRE(r.spread);
  REQUIRE(r.spread->differing_runs >= 2);  // several later runs, each wrong at the same two elements
  CHECK(r.spread->envelope_exceed == 2);
}
