// tests/reports/sample_results.hpp — real results for the report tests, made without the
// generators: CPU models run through run_case() on hand-made problems (Philox values rounded to
// f32), graded against exact references. Six runs, each feeding one kind of plot:
//   accuracy-vs-k   k{K}_uniform / k{K}_normal for three models (error vs K, bounds, slopes);
//   certify         a mutant (fault injector) that fails (failure cards, worst elements, reproduction commands);
//   cancellation    dot products whose last term cancels the rest (error vs kappa; kappa measured);
//   exponent-range  entries scaled by 2^e, e uniform in [-E, E] (heat map; spans measured);
//   tiles (twice)   model_gemm_f32, then its tail-tile mutant under the same name (comparison; error map in tiles).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/philox.hpp"
#include "kernels/kernel.hpp"
#include "oracle/round.hpp"
#include "suites/run/environment.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/problems.hpp"

namespace fpcert::test {

/// Uniform [0, 1) from Philox (53 bits).
inline double unit_uniform(std::uint64_t seed, std::uint64_t ctr) {
  const auto w = philox_4x32(seed, 1, ctr);
  return static_cast<double>((std::uint64_t{w[0]} << 21) ^ w[1]) * 0x1p-53;
}

/// N(0, 1) values (Box-Muller on Philox uniforms) rounded to f32.
inline Problem normal_problem(std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed) {
  Problem p = uniform_problem(m, n, k, f32, seed);
  p.spec = "test-normal";
  std::uint64_t ctr = 0;
  auto next = [&] {
    const double u1 = 1 - unit_uniform(seed, ctr++), u2 = unit_uniform(seed, ctr++);
    return quantize(f32, std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  };
  for (auto& v : p.a.data) v = next();
  for (auto& v : p.b.data) v = next();
  return p;
}

/// Dot products (m = 1) whose last term cancels the others down to a fraction ~delta of their sum:
/// kappa = sum |a_i b_i| / |sum a_i b_i| ~ 1/delta. kappa_min/median/max are measured exactly.
inline Problem cancel_problem(std::int64_t n, std::int64_t k, double delta, std::uint64_t seed) {
  Problem p = uniform_problem(1, n, k, f32, seed);
  p.spec = fmt::format("test-cancel:delta={:g}", delta);
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (std::int64_t i = 0; i + 1 < k; ++i) s += p.a(0, i) * p.b(i, j);
    const double alast = p.a(0, k - 1) == 0 ? 0.5 : p.a(0, k - 1);
    p.a(0, k - 1) = alast;
    // s + alast * b = delta * scale, with scale ~ sum |a_i b_i| / sqrt(k) hidden in s itself.
    p.b(k - 1, j) = quantize(f32, (-s + delta * std::abs(s) * (j % 2 ? 1 : -1)) / alast);
  }
  return p;
}

/// Entries scaled by 2^e, e uniform in [-E, E]; measured exponent spans go into `achieved`.
inline Problem exp_problem(std::int64_t m, std::int64_t n, std::int64_t k, int E, std::uint64_t seed) {
  Problem p = uniform_problem(m, n, k, f32, seed);
  p.spec = fmt::format("test-exp:emin={},emax={}", -E, E);
  std::uint64_t ctr = 0;
  auto scale = [&](double v) {
    const int e = static_cast<int>(std::floor(unit_uniform(seed + 99, ctr++) * (2 * E + 1))) - E;
    return quantize(f32, std::ldexp(v, e));
  };
  for (auto& v : p.a.data) v = scale(v);
  for (auto& v : p.b.data) v = scale(v);
  return p;
}

/// Measured properties, under the keys the generators use (generators/problem.hpp).
inline void measure(Problem& p, const GemmRef& ref) {
  auto span = [](const std::vector<double>& d) {
    int lo = 10000, hi = -10000;
    for (double v : d)
      if (v != 0 && std::isfinite(v)) {
        lo = std::min(lo, std::ilogb(v));
        hi = std::max(hi, std::ilogb(v));
      }
    return hi >= lo ? static_cast<double>(hi - lo) : 0.0;
  };
  p.achieved["a_exp_span"] = span(p.a.data);
  p.achieved["b_exp_span"] = span(p.b.data);
  std::vector<double> kappa;
  for (std::size_t i = 0; i < ref.c.size(); ++i) {
    const double c = std::abs(ref.c[i].hi);
    kappa.push_back(c > 0 ? ref.abs_sum[i] / c : INFINITY);
  }
  std::sort(kappa.begin(), kappa.end());
  if (!kappa.empty()) {
    p.achieved["kappa_min"] = kappa.front();
    p.achieved["kappa_median"] = kappa[kappa.size() / 2];
    p.achieved["kappa_max"] = kappa.back();
  }
}

struct SampleCase {
  std::string id;
  Problem problem;
  BoundVariant variant;
  bool keep_kappa = false, keep_span = false;
  std::string family = {};  ///< the cases' family and axis, as a suite declares them (suites/run/suite.hpp)
  CaseAxis axis = CaseAxis::None;
};

inline RunResult run_sample(const std::string& suite, const std::vector<std::string>& kernels, std::vector<SampleCase> cases,
                            const std::string& verb) {
  RunResult r;
  r.kind = suite == "certify" ? RunKind::Gemm : RunKind::Experiment;
  r.suite = suite;
  r.kernels = kernels;
  std::string klist;
  for (const auto& k : kernels) klist += (klist.empty() ? "" : ",") + k;
  r.env = make_environment(fmt::format("fpcert {} {} --kernels {} (tests/reports/sample_results.hpp)", verb, suite, klist), nullptr);
  auto api = make_host_api();
  for (auto& sc : cases) {
    const GemmRef ref = gemm_reference(sc.problem.a.view(), sc.problem.b.view());
    measure(sc.problem, ref);
    if (!sc.keep_kappa)
      for (const char* k : {"kappa_min", "kappa_median", "kappa_max"}) sc.problem.achieved.erase(k);
    if (!sc.keep_span)
      for (const char* k : {"a_exp_span", "b_exp_span"}) sc.problem.achieved.erase(k);
    for (const auto& kn : kernels) {
      auto kernel = make_gemm_kernel(kn);
      CaseSetup s;
      s.suite = suite;
      s.case_id = sc.id;
      s.problem = &sc.problem;
      s.ref = &ref;
      s.variant = sc.variant;
      s.repro = fmt::format("fpcert {} --suite {} --kernel {} --case {}", verb, suite, kn, sc.id);
      s.family = sc.family;
      s.axis = sc.axis;
      r.cases.push_back(run_case(*kernel, s, *api, RunOptions{}));
    }
  }
  r.notes["inputs"] = "hand-made problems from tests/reports/sample_results.hpp (the generators are not used)";
  return r;
}

/// The four sample runs. `scale` 1 is the test size; larger K lists make a fuller screenshot.
inline std::vector<RunResult> sample_runs(std::uint64_t seed, bool full = false) {
  std::vector<RunResult> runs;
  const std::int64_t mn = full ? 16 : 8;
  {
    std::vector<SampleCase> cs;
    std::vector<std::int64_t> ks = full ? std::vector<std::int64_t>{64, 256, 1024, 4096, 16384} : std::vector<std::int64_t>{64, 256, 1024, 4096};
    std::uint64_t s = seed;
    for (auto k : ks) {
      cs.push_back({fmt::format("k{}_uniform", k), uniform_problem(mn, mn, k, f32, s++), BoundVariant::Independent, false, false, "uniform",
                    CaseAxis::K});
      cs.push_back({fmt::format("k{}_normal", k), normal_problem(mn, mn, k, s++), BoundVariant::Independent, false, false, "normal",
                    CaseAxis::K});
    }
    runs.push_back(run_sample("accuracy-vs-k", {"model_gemm_f32", "model_gemm_f16_f32acc", "model_gemm_f16_f16acc"}, std::move(cs), "run-suite"));
  }
  {
    std::vector<SampleCase> cs;
    cs.push_back({"uniform", uniform_problem(mn, mn, 512, f32, seed + 100), BoundVariant::Independent});
    cs.push_back({"f16_exact", uniform_problem(mn, mn, 512, f16, seed + 101), BoundVariant::Independent});
    const std::string mutant = register_mutant("model_gemm_bf16_f32acc", Fault::WritesNan);
    runs.push_back(run_sample("certify", {"model_gemm_bf16_f32acc", mutant}, std::move(cs), "certify"));
  }
  {
    std::vector<SampleCase> cs;
    int i = 0;
    for (double d : {1e-1, 1e-3, 1e-5, 1e-7}) cs.push_back({fmt::format("cancel_{}", i++), cancel_problem(16, 256, d, seed + 200 + i), BoundVariant::Componentwise, true});
    runs.push_back(run_sample("cancellation", {"model_gemm_f32", "model_gemm_bf16_f32acc"}, std::move(cs), "run-suite"));
  }
  {
    std::vector<SampleCase> cs;
    for (int e : {1, 4, 8, 12, 16, 24}) cs.push_back({fmt::format("exp_e{}", e), exp_problem(mn, mn, 128, e, seed + 300 + static_cast<std::uint64_t>(e)), BoundVariant::Componentwise, false, true, "",
                                        CaseAxis::ExponentSpan});
    runs.push_back(run_sample("exponent-range", {"model_gemm_f32", "model_gemm_bf16_f32acc", "model_gemm_f16_f32acc"}, std::move(cs), "run-suite"));
  }
  {
    // Two runs of one suite for the comparison and the error map: the old run is model_gemm_f32; the new one is its
    // tail-tile mutant (16 x 16 tiles whose partial last tile loads zeros), recorded under the kernel's own name to
    // stand for a change that introduced the bug (the run's note says so). 40 x 40 has partial tiles; 32 x 48 none.
    auto tail_cases = [&] {
      std::vector<SampleCase> cs;
      cs.push_back({"tail_40x40", uniform_problem(40, 40, 64, f32, seed + 400), BoundVariant::Independent});
      cs.push_back({"full_32x48", uniform_problem(32, 48, 64, f32, seed + 401), BoundVariant::Independent});
      return cs;
    };
    runs.push_back(run_sample("tiles", {"model_gemm_f32"}, tail_cases(), "certify"));
    const std::string mutant = register_mutant("model_gemm_f32", Fault::TailTile);
    RunResult changed = run_sample("tiles", {mutant}, tail_cases(), "certify");
    changed.kernels = {"model_gemm_f32"};
    for (auto& c : changed.cases) c.kernel = "model_gemm_f32";
    changed.notes["note"] = "the kernel is " + mutant + ", recorded as model_gemm_f32 (a change that introduced a tile-tail bug)";
    runs.push_back(std::move(changed));
  }
  return runs;
}

}  // namespace fpcert::test
