// tests/suites/error_fraction_test.cpp — the report's fields as grading fills them: the error fraction is the
// envelope's (its maximum is the envelope check's figure), a correct bitwise-tier kernel matches the
// prediction of its declared arithmetic bucket for bucket, cancellation-dominated elements leave the ULP
// statistics, and the error map keeps the maximum of each cell and shows a tail-tile bug in the tail only.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {
std::uint64_t total(const std::vector<std::uint64_t>& h) { return std::accumulate(h.begin(), h.end(), std::uint64_t{0}); }

CaseResult graded(const std::string& kernel, const Problem& p, bool maps = false) {
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto k = make_gemm_kernel(kernel);
  auto api = make_host_api();
  RunOptions o;
  o.error_maps = maps;
  return test::run_graded(*k, p, ref, *api, o);
}
}  // namespace

TEST_CASE("a correct kernel: the error fraction is the envelope's, and the measured histograms equal the predicted ones") {
  const Problem p = test::uniform_problem(24, 20, 300, f32, test::seed());
  const CaseResult c = graded("model_gemm_f16_f32acc", p);
  REQUIRE(c.status == CaseStatus::Pass);
  REQUIRE(c.tier == Tier::Bitwise);
  const CheckResult* env = find_check(c, CheckKind::Envelope);
  REQUIRE(env);
  CHECK(c.metrics.err_frac_max == env->measured);
  CHECK(c.metrics.err_frac_max > 0);  // f16 storage of f32 values rounds: a zero would prove nothing
  CHECK(c.metrics.err_frac_max <= 1);
  CHECK(c.metrics.err_frac_median <= c.metrics.err_frac_p99);
  CHECK(c.metrics.err_frac_p99 <= c.metrics.err_frac_max);
  CHECK(total(c.metrics.err_frac_hist) == 24 * 20);
  // Equal bit for bit to its emulation, so graded the same way it lands in the same buckets.
  CHECK(c.metrics.predicted_err_frac_hist == c.metrics.err_frac_hist);
  CHECK(c.metrics.predicted_ulp_hist == c.metrics.ulp_hist);
  // The worst elements under the envelope: the largest fraction first, the first one the maximum.
  REQUIRE(c.worst_envelope.size() == 5);
  CHECK(c.worst_envelope[0].frac == c.metrics.err_frac_max);
  for (std::size_t w = 1; w < c.worst_envelope.size(); ++w) CHECK(c.worst_envelope[w].frac <= c.worst_envelope[w - 1].frac);
  CHECK_FALSE(c.error_map);  // passing: no map unless asked
  CHECK(graded("model_gemm_f16_f32acc", p, true).error_map);
}

TEST_CASE("the error map keeps each cell's maximum and stays within 64 x 64 cells") {
  const Problem p = test::uniform_problem(200, 130, 8, f32, test::seed() + 1);
  const CaseResult c = graded("model_gemm_f16_f32acc", p, true);
  REQUIRE(c.error_map);
  const ErrorMap& e = *c.error_map;
  CHECK(e.cell_rows == 4);  // ceil(200 / 64)
  CHECK(e.rows == 50);      // ceil(200 / 4)
  CHECK(e.cell_cols == 3);  // ceil(130 / 64)
  CHECK(e.cols == 44);      // ceil(130 / 3)
  REQUIRE(e.max_frac.size() == 50 * 44);
  CHECK(*std::max_element(e.max_frac.begin(), e.max_frac.end()) == c.metrics.err_frac_max);
}

TEST_CASE("a tile-tail bug: the failing cells of the error map are in the partial last tiles, and the tile is recorded") {
  const std::string mutant = register_mutant("model_gemm_f32", Fault::TailTile);
  const Problem p = test::uniform_problem(40, 40, 64, f32, test::seed() + 2);
  const CaseResult c = graded(mutant, p);
  REQUIRE(c.status == CaseStatus::Fail);
  CHECK(c.tile_m == 16);
  CHECK(c.tile_n == 16);
  REQUIRE(c.error_map);
  const ErrorMap& e = *c.error_map;
  REQUIRE(e.cell_rows == 1);
  REQUIRE(e.cell_cols == 1);
  int failing_in_tail = 0;
  for (std::int64_t i = 0; i < 40; ++i)
    for (std::int64_t j = 0; j < 40; ++j) {
      const double f = e.max_frac[static_cast<std::size_t>(i * 40 + j)];
      if (i < 32 && j < 32) CHECK(f <= 1);  // full tiles: the kernel is correct there
      else failing_in_tail += f > 1;
    }
  CHECK(failing_in_tail > 0);
  for (const WorstElement& w : c.worst) {
    const bool in_tail = w.i >= 32 || w.j >= 32;
    CHECK(in_tail);
  }
  REQUIRE(!c.worst_envelope.empty());
  for (const ElementFraction& w : c.worst_envelope) {
    const bool in_tail = w.i >= 32 || w.j >= 32;
    CHECK(in_tail);
    CHECK(w.frac > 1);
    CHECK(e.max_frac[static_cast<std::size_t>(w.i * 40 + w.j)] == w.frac);  // the map shows the same value there
  }
}

TEST_CASE("cancellation-dominated elements are left out of the ULP statistics and counted apart") {
  // One dot product per column whose last term cancels the rest to ~1e-7 of it: kappa ~ 1e7 > 1024.
  const Problem hard = test::cancel_problem(16, 256, 1e-7, test::seed() + 3);
  const CaseResult c = graded("model_gemm_f32", hard);
  CHECK(c.metrics.ulp_cancelled > 0);
  CHECK(total(c.metrics.ulp_hist) + static_cast<std::uint64_t>(c.metrics.ulp_cancelled) == 16);
  // Well-conditioned (all terms positive): nothing is left out.
  Problem easy = test::uniform_problem(4, 4, 64, f32, test::seed() + 4);
  for (auto* d : {&easy.a.data, &easy.b.data})
    for (double& v : *d) v = std::fabs(v);  // kappa = 1 everywhere
  const CaseResult e = graded("model_gemm_f32", easy);
  CHECK(e.metrics.ulp_cancelled == 0);
  CHECK(total(e.metrics.ulp_hist) == 16);
}
