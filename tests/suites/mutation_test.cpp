// tests/suites/mutation_test.cpp — run_mutation: cases cheapest first, a mutant stops at its first kill
// for its own fault (or runs every case when asked), kills only count on cases the unmutated kernel
// passes, not-applicable faults stay outside the score, and each kill names a command that reproduces it.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

SuiteInfo small_suite() {
  return {"mini", "two small cases, the dearer one first", [](const SuiteContext&) {
            return std::vector<CaseSpec>{{"dear", "uniform:m=16,n=16,k=64,seed=11", BoundVariant::Independent, ""},
                                         {"cheap", "uniform:m=16,n=16,k=32,seed=12", BoundVariant::Independent, ""}};
          }};
}

/// A kernel that writes NaN everywhere: it passes no case, so no case can judge a mutant.
class NanKernel final : public GemmKernel {
 public:
  const std::string& name() const override { return name_; }
  std::string description() const override { return "writes NaN"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return traits_; }
  void run(const GemmOperands& o) override {
    for (std::int64_t i = 0; i < o.m; ++i)
      for (std::int64_t j = 0; j < o.n; ++j) store_code(o.c, i * o.ldc + j, 4, f32.canonical_nan_code());
  }

 private:
  std::string name_ = "test_nan_kernel";
  KernelTraits traits_;
};

const MutantResult& find(const MutationScore& s, const std::string& fault) {
  const auto it = std::find_if(s.mutants.begin(), s.mutants.end(), [&](const MutantResult& m) { return m.fault == fault; });
  REQUIRE(it != s.mutants.end());
  return *it;
}

bool own_kill(const MutantResult& m) {
  for (CheckKind k : m.fired)
    if (std::find(m.expected.begin(), m.expected.end(), k) != m.expected.end()) return true;
  return false;
}

}  // namespace

TEST_CASE("runtime faults are killed for their own fault on the cheapest case, each with a reproduction command") {
  const SuiteInfo suite = small_suite();
  MutationOptions o;
  o.faults = {Fault::ZeroRow, Fault::WritesNan, Fault::UnwrittenRow, Fault::WritePastEnd, Fault::OneRunInN};
  std::vector<std::string> progress;
  o.on_progress = [&](const std::string& line) { progress.push_back(line); };
  int honest_cases = 0;
  o.on_honest_case = [&](const CaseResult& c) {
    CHECK(c.kernel == "model_gemm_f32");
    CHECK(c.status == CaseStatus::Pass);
    ++honest_cases;
  };
  const MutationScore s = run_mutation(suite, "model_gemm_f32", o);
  CHECK(s.kernel == "model_gemm_f32");
  CHECK(s.suite == "mini");
  CHECK(s.cases == 2);
  CHECK(s.invalid_cases.empty());
  CHECK(s.total() == 5);
  CHECK(s.count(MutantOutcome::Killed) == 5);
  CHECK(s.score() == 1.0);
  CHECK(honest_cases == 1);  // everything died on the first case: the second never ran
  REQUIRE(!progress.empty());
  CHECK(progress.front().find("cheap") != std::string::npos);
  for (const MutantResult& m : s.mutants) {
    CAPTURE(m.fault);
    CHECK(m.case_id == "cheap");
    CHECK(m.cases_run == 1);
    CHECK(own_kill(m));
    CHECK(m.repro == "fpcert certify --suite mini --kernel model_gemm_f32~" + m.fault + " --case cheap");
    CHECK(m.runs == 2);  // the checked run and one more
  }
  CHECK(find(s, "unwritten_row").fired.front() == CheckKind::Unwritten);
  CHECK(find(s, "write_past_end").fired == std::vector<CheckKind>{CheckKind::GuardOutput});
}

TEST_CASE("--all-cases runs every case on every mutant; the first own kill is the one reported") {
  MutationOptions o;
  o.faults = {Fault::ZeroRow};
  o.all_cases = true;
  const MutationScore s = run_mutation(small_suite(), "model_gemm_f32", o);
  const MutantResult& m = find(s, "zero_row");
  CHECK(m.outcome == MutantOutcome::Killed);
  CHECK(m.cases_run == 2);
  CHECK(m.case_id == "cheap");
}

TEST_CASE("a fault that changes nothing survives as dormant, saying what a suite needs") {
  MutationOptions o;
  o.faults = {Fault::TailTile};  // M = N = 16: no partial tile
  const MutationScore s = run_mutation(small_suite(), "model_gemm_f32", o);
  const MutantResult& m = find(s, "tail_tile");
  CHECK(m.outcome == MutantOutcome::Survived);
  CHECK(m.active_runs == 0);
  CHECK(m.detail.find("dormant") != std::string::npos);
  CHECK(m.detail.find("not a multiple of 16") != std::string::npos);
}

TEST_CASE("not-applicable faults are listed with the reason and left out of the total") {
  MutationOptions o;
  o.faults = {Fault::AccF16, Fault::ZeroRow};
  const MutationScore s = run_mutation(small_suite(), "model_gemm_f16_f16acc", o);
  CHECK(find(s, "acc_f16").outcome == MutantOutcome::NotApplicable);
  CHECK(find(s, "acc_f16").detail.find("fp16") != std::string::npos);
  CHECK(s.total() == 1);
}

TEST_CASE("cases the unmutated kernel fails judge no mutant") {
  // Registered as a deliberately wrong entry (the mutant flag), so that tests walking the honest models skip it.
  register_kernel("test_nan_kernel", Backend::Cpu, true, [] { return std::unique_ptr<GemmKernel>(new NanKernel); });
  MutationOptions o;
  o.faults = {Fault::ZeroRow};
  const MutationScore s = run_mutation(small_suite(), "test_nan_kernel", o);
  CHECK(s.invalid_cases.size() == 2);
  CHECK(s.invalid_cases.front().rfind("cheap: fail:", 0) == 0);
  const MutantResult& m = find(s, "zero_row");
  CHECK(m.outcome == MutantOutcome::Survived);
  CHECK(m.cases_run == 0);
  CHECK(m.detail.find("no case") != std::string::npos);
}

TEST_CASE("bad input: an unknown kernel, a mutant given as the kernel") {
  CHECK_THROWS_AS(run_mutation(small_suite(), "no_such_kernel", {}), InputError);
  register_mutant("model_gemm_f32", Fault::ZeroRow);
  CHECK_THROWS_AS(run_mutation(small_suite(), "model_gemm_f32~zero_row", {}), InputError);
}

TEST_CASE("failed_checks: recorded checks when the case has them, else the runner's findings") {
  CaseResult c;
  c.status = CaseStatus::Fail;
  c.checks = {{CheckKind::Envelope, false, "x", 3, 2, 1}, {CheckKind::CourseGate, false, "gate", -1, 3, 1},
              {CheckKind::Nonfinite, true, "ok", -1, 0, 0}};
  CHECK(failed_checks(c) == std::vector<CheckKind>{CheckKind::Envelope});  // the course gate never decides
  CaseResult old;
  old.status = CaseStatus::Fail;
  old.metrics.guard_violations = 2;
  old.metrics.deterministic = false;
  old.reason = "gate exceeded: max |c - ref| / allowed = 3";
  CHECK(failed_checks(old) == std::vector<CheckKind>{CheckKind::GuardOutput, CheckKind::Nondeterministic, CheckKind::Envelope});
  old.status = CaseStatus::Hung;
  CHECK(failed_checks(old) == std::vector<CheckKind>{CheckKind::Hung});
  old.status = CaseStatus::Pass;
  CHECK(failed_checks(old).empty());
}

TEST_CASE("a case of few products but a long K runs after shorter-K cases: the K-chunk faults call the kernel once per chunk") {
  // By products alone "long_k" (2 x 2 x 32768 = 131072) would come before "square" (64^3 = 262144); each of its K
  // chunks is a kernel call for acc_* and out_rz, counted as 2^16 products (suites/ops/gemm/gemm_mutation.cpp).
  const SuiteInfo suite{"mini_k", "a long K and a square", [](const SuiteContext&) {
                          return std::vector<CaseSpec>{{"long_k", "uniform:m=2,n=2,k=32768,seed=13", BoundVariant::Independent, ""},
                                                       {"square", "uniform:m=64,n=64,k=64,seed=14", BoundVariant::Independent, ""}};
                        }};
  MutationOptions o;
  o.faults = {Fault::ZeroRow};
  std::vector<std::string> progress;
  o.on_progress = [&](const std::string& line) { progress.push_back(line); };
  const MutationScore s = run_mutation(suite, "model_gemm_f32", o);
  REQUIRE(!progress.empty());
  CHECK(progress.front().find("square") != std::string::npos);
  CHECK(find(s, "zero_row").case_id == "square");
  CHECK(find(s, "zero_row").cases_run == 1);
}

TEST_CASE("a campaign given the unmutated kernel's results runs only the mutants, and judges by those results") {
  const SuiteInfo suite = small_suite();
  SuiteRunOptions ro;
  const RunResult pass = run_suite(suite, {"model_gemm_f32"}, ro);
  REQUIRE(pass.cases.size() == 2);
  const std::vector<Fault> faults = {Fault::ZeroRow, Fault::WritesNan, Fault::OneRunInN, Fault::DropLastProduct};
  MutationOptions plain;
  plain.faults = faults;
  const MutationScore a = run_mutation(suite, "model_gemm_f32", plain);

  MutationOptions given = plain;
  int ran_honest = 0;
  given.on_honest_case = [&](const CaseResult&) { ++ran_honest; };
  given.honest_result = [&](const std::string& id) -> const CaseResult* {
    for (const CaseResult& c : pass.cases)
      if (c.case_id == id) return &c;
    return nullptr;
  };
  const MutationScore b = run_mutation(suite, "model_gemm_f32", given);
  CHECK(ran_honest == 0);  // the unmutated kernel never ran in the campaign
  REQUIRE(a.mutants.size() == b.mutants.size());
  for (std::size_t i = 0; i < a.mutants.size(); ++i) {
    CAPTURE(a.mutants[i].fault);
    CHECK(a.mutants[i].outcome == b.mutants[i].outcome);
    CHECK(a.mutants[i].case_id == b.mutants[i].case_id);
    CHECK(a.mutants[i].fired == b.mutants[i].fired);
  }

  // A case those results say the kernel failed judges no mutant: the cheap one here, so every kill moves to "dear".
  CaseResult failed = pass.cases.front().case_id == "cheap" ? pass.cases.front() : pass.cases.back();
  REQUIRE(failed.case_id == "cheap");
  failed.status = CaseStatus::Fail;
  failed.reason = "said to fail (test)";
  given.honest_result = [&](const std::string& id) -> const CaseResult* {
    if (id == "cheap") return &failed;
    for (const CaseResult& c : pass.cases)
      if (c.case_id == id) return &c;
    return nullptr;
  };
  const MutationScore c = run_mutation(suite, "model_gemm_f32", given);
  CHECK(ran_honest == 0);
  REQUIRE(c.invalid_cases.size() == 1);
  CHECK(c.invalid_cases.front().find("cheap") != std::string::npos);
  for (const MutantResult& m : c.mutants) {
    CAPTURE(m.fault);
    if (m.outcome == MutantOutcome::Killed) CHECK(m.case_id == "dear");
  }
  CHECK(c.count(MutantOutcome::Killed) > 0);
}
