// tests/results/report_fields_test.cpp — what the report reads as fields: the error-fraction buckets (their
// edges are powers of two), the cancellation threshold, the error map and tile surviving JSON, bounded
// maps refused when malformed, and the run-to-run comparison (flips, growth beyond the factor, speed).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "base/error.hpp"
#include "results/compare.hpp"
#include "results/results.hpp"
#include "results/results_json.hpp"

using namespace fpcert;

TEST_CASE("error-fraction buckets: 0, (0, 2^-10], powers of two up to 1, then 2, 4, 16, above, non-finite") {
  CHECK(err_frac_bucket(0) == 0);
  CHECK(err_frac_bucket(std::numeric_limits<double>::denorm_min()) == 1);
  CHECK(err_frac_bucket(0x1p-10) == 1);                 // the edge belongs to the bucket below it: (.., 2^-10]
  CHECK(err_frac_bucket(std::nextafter(0x1p-10, 1.0)) == 2);
  CHECK(err_frac_bucket(0x1p-9) == 2);
  CHECK(err_frac_bucket(0.75) == 11);                   // (1/2, 1]
  CHECK(err_frac_bucket(1.0) == 11);                    // exactly at the bound: passes, so below the pass edge
  CHECK(err_frac_bucket(std::nextafter(1.0, 2.0)) == 12);  // just beyond the bound: the first failing bucket
  CHECK(err_frac_bucket(3) == 13);
  CHECK(err_frac_bucket(16) == 14);
  CHECK(err_frac_bucket(17) == 15);
  CHECK(err_frac_bucket(INFINITY) == 16);
  // Every bucket of 2^-11+b .. 2^-10+b for b = 2..11 holds its upper edge and not its lower one.
  for (int b = 2; b <= 11; ++b) {
    const double hi = std::ldexp(1.0, b - 11), lo = std::ldexp(1.0, b - 12);
    CHECK(err_frac_bucket(hi) == b);
    CHECK(err_frac_bucket(lo) == b - 1);
  }
  CHECK(err_frac_bucket_labels().size() == static_cast<std::size_t>(kErrFracBuckets));
}

TEST_CASE("cancellation-dominated: (|A||B|)_ij / |ref_ij| above 1024, or an exact zero of a nonzero sum") {
  CHECK_FALSE(cancellation_dominated(1.0, 1024.0));       // exactly 10 bits lost: still counted
  CHECK(cancellation_dominated(1.0, std::nextafter(1024.0, 2048.0)));
  CHECK(cancellation_dominated(-1e-30, 1.0));
  CHECK(cancellation_dominated(0.0, 1.0));
  CHECK_FALSE(cancellation_dominated(0.0, 0.0));          // 0 = sum of zeros: nothing cancelled
}

namespace {
CaseResult make_case(const std::string& kernel, const std::string& id, CaseStatus st, double frac, double ms) {
  CaseResult c;
  c.suite = "quick";
  c.kernel = kernel;
  c.case_id = id;
  c.status = st;
  c.metrics.err_frac_max = frac;
  c.time_ms_median = ms;
  c.timed_runs = ms > 0 ? 10 : 0;
  return c;
}
}  // namespace

TEST_CASE("the error map and the tile survive JSON; a map beyond the bound or of the wrong size is refused") {
  CaseResult c = make_case("k", "tail", CaseStatus::Fail, 3.5, 0);
  c.m = 100;
  c.n = 3;
  c.tile_m = 16;
  c.tile_n = 8;
  c.metrics.err_frac_hist = {1, 2, 3};
  c.metrics.predicted_err_frac_hist = {4, 5};
  c.metrics.ulp_cancelled = 7;
  c.worst_envelope = {{99, 2, INFINITY}, {98, 0, 3.5}};
  c.error_map = ErrorMap{50, 3, 2, 1, {}, {}};
  for (int i = 0; i < 150; ++i) c.error_map->max_frac.push_back(i == 149 ? INFINITY : i == 0 ? NAN : i * 0.01);
  const CaseResult b = case_from_json(to_json(c));
  CHECK(b.tile_m == 16);
  CHECK(b.tile_n == 8);
  CHECK(b.metrics.err_frac_max == 3.5);
  CHECK(b.metrics.err_frac_hist == c.metrics.err_frac_hist);
  CHECK(b.metrics.predicted_err_frac_hist == c.metrics.predicted_err_frac_hist);
  CHECK(b.metrics.ulp_cancelled == 7);
  REQUIRE(b.worst_envelope.size() == 2);
  CHECK(std::isinf(b.worst_envelope[0].frac));
  CHECK(b.worst_envelope[1].i == 98);
  CHECK(b.worst_envelope[1].frac == 3.5);
  REQUIRE(b.error_map);
  CHECK(b.error_map->rows == 50);
  CHECK(b.error_map->cell_rows == 2);
  REQUIRE(b.error_map->max_frac.size() == 150);
  CHECK(std::isnan(b.error_map->max_frac[0]));
  CHECK(std::isinf(b.error_map->max_frac[149]));
  CHECK(b.error_map->max_frac[42] == 0.42);

  CHECK(b.error_map->min_correct_bits.empty());  // not an fp64 case: no correct-bits map written or read

  // An fp64 case's correct-bits map, on the same grid: survives; of the wrong size, refused.
  CaseResult f = c;
  for (int i = 0; i < 150; ++i) f.error_map->min_correct_bits.push_back(i == 7 ? NAN : 53 - i % 54);
  const CaseResult fb = case_from_json(to_json(f));
  REQUIRE(fb.error_map);
  REQUIRE(fb.error_map->min_correct_bits.size() == 150);
  CHECK(std::isnan(fb.error_map->min_correct_bits[7]));
  CHECK(fb.error_map->min_correct_bits[60] == 53 - 60 % 54);
  auto jf = to_json(f);
  jf["error_map"]["min_correct_bits"].erase(3);
  CHECK_THROWS_AS(case_from_json(jf), InputError);

  auto j = to_json(c);
  j["error_map"]["max_frac"].erase(0);
  CHECK_THROWS_AS(case_from_json(j), InputError);
  j = to_json(c);
  j["error_map"]["rows"] = kErrorMapCells + 1;
  CHECK_THROWS_AS(case_from_json(j), InputError);
}

TEST_CASE("comparison: flipped verdicts, error fractions grown beyond 2x (small ones floored), speed beyond 1.1x, unmatched cases") {
  RunResult o, n;
  o.suite = n.suite = "quick";
  o.cases = {make_case("k", "a", CaseStatus::Pass, 0.3, 1.0), make_case("k", "b", CaseStatus::Pass, 0.1, 1.0),
             make_case("k", "c", CaseStatus::Pass, 1e-6, 1.0), make_case("k", "gone", CaseStatus::Pass, 0.1, 1.0),
             make_case("k", "d", CaseStatus::Pass, 0.2, 1.0)};
  n.cases = {make_case("k", "a", CaseStatus::Fail, 3.0, 1.0),     // flipped and grew 10x
             make_case("k", "b", CaseStatus::Pass, 0.19, 1.2),    // grew 1.9x: not beyond 2x; 1.2x slower
             make_case("k", "c", CaseStatus::Pass, 1e-4, 0.95),   // 100x, but both below the 2^-10 floor
             make_case("k", "new", CaseStatus::Pass, 0.1, 1.0),
             make_case("k", "d", CaseStatus::Pass, 0.05, 0.5)};   // shrank 4x, 2x faster
  const RunComparison d = compare_runs(o, n);
  CHECK(d.matched == 4);
  REQUIRE(d.changes.size() == 3);
  CHECK(d.changes[0].case_id == "a");  // flips first (here it is also first in the run)
  CHECK(d.changes[0].flipped);
  CHECK(d.changes[0].grew);
  CHECK(d.changes[0].frac_ratio == doctest::Approx(10));
  CHECK(d.changes[1].case_id == "b");
  CHECK_FALSE(d.changes[1].grew);
  CHECK(d.changes[1].slower);
  CHECK(d.changes[2].case_id == "d");
  CHECK(d.changes[2].shrank);
  CHECK(d.changes[2].faster);
  CHECK(d.count_flipped() == 1);
  CHECK(d.count_regressions() == 1);
  REQUIRE(d.only_old.size() == 1);
  CHECK(o.cases[d.only_old[0]].case_id == "gone");
  REQUIRE(d.only_new.size() == 1);
  CHECK(n.cases[d.only_new[0]].case_id == "new");
  const std::string text = comparison_text(d, o, n);
  CHECK(text.find("1 verdict(s) flipped") != std::string::npos);
  CHECK(text.find("a on k: verdict pass -> fail; error fraction 0.3 -> 3") != std::string::npos);
  // Timings of fewer than 3 runs are not compared (noise); a flip is listed before a speed change.
  RunResult o2 = o, n2 = n;
  for (auto* r : {&o2, &n2})
    for (auto& c : r->cases) c.timed_runs = 2;
  for (const CaseChange& c : compare_runs(o2, n2).changes) CHECK((c.time_ratio == 0 && !c.slower && !c.faster));
  std::swap(n2.cases[0], n2.cases[1]);  // b (speed only, with 10 runs) now comes before a (flipped) in the new run
  for (auto* r : {&o2, &n2})
    for (auto& c : r->cases) c.timed_runs = 10;
  const RunComparison d2 = compare_runs(o2, n2);
  REQUIRE(d2.changes.size() == 3);
  CHECK(d2.changes[0].case_id == "a");
  CHECK(d2.changes[1].case_id == "b");
  // A run compared with itself changes nothing.
  CHECK(compare_runs(n, n).changes.empty());
}

TEST_CASE("comparable runs: each run with the latest earlier run of its suite that shares a case; never across suites") {
  auto run = [](const std::string& suite, const std::string& kernel) {
    RunResult r;
    r.suite = suite;
    r.cases = {make_case(kernel, "a", CaseStatus::Pass, 0.1, 0)};
    return r;
  };
  const std::vector<RunResult> runs = {run("quick", "k"), run("certify", "k"), run("quick", "other"), run("quick", "k"), run("quick", "k")};
  const auto pairs = comparable_runs(runs);
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0] == std::make_pair(std::size_t{0}, std::size_t{3}));  // run 2 (another kernel) shares no case with run 3
  CHECK(pairs[1] == std::make_pair(std::size_t{3}, std::size_t{4}));  // the latest earlier one
}
