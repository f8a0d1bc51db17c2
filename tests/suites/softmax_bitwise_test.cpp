// tests/suites/softmax_bitwise_test.cpp — the softmax's bitwise tier (docs/softmax.md, "Bitwise tier"). The two models
// declared exactly (expf_ops, the warp's row sum written out lane by lane in the model, a division) equal the emulation
// (oracle/softmax/softmax_emulate.cpp, which sums through oracle/reduce's order emulation) on every case of the suite;
// a kernel whose declaration is exact but wrong about one step (the order of its row sum, or its exp) keeps inside the
// envelope and is refused by the bitwise check alone; every mutant of the exact models is refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "kernels/softmax/softmax_kernel.hpp"
#include "oracle/softmax/softmax_emulate.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {
namespace {

/// A model that runs as it is but declares one step otherwise (what a kernel author gets wrong in a declaration).
class Misdeclared final : public SoftmaxKernel {
 public:
  Misdeclared(std::string name, const std::string& inner, void (*change)(SoftmaxArith&)) : name_(std::move(name)), k_(make_softmax_kernel(inner)) {
    t_ = k_->softmax_traits();
    change(t_.arith);
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return "test: " + describe_softmax_traits(t_); }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return true; }
  const SoftmaxTraits& softmax_traits() const override { return t_; }
  void run(const SoftmaxOperands& o) override { k_->run(o); }

 private:
  std::string name_;
  std::unique_ptr<SoftmaxKernel> k_;
  SoftmaxTraits t_;
};

}  // namespace

TEST_CASE("softmax bitwise tier: the exactly declared models equal the emulation on every case") {
  const SuiteInfo* s = find_suite("softmax");
  REQUIRE(s);
  for (const char* k : {"model_softmax_f32_warp_ops", "model_softmax_bf16_warp_ops"}) {
    CAPTURE(k);
    REQUIRE(softmax_emulable(make_softmax_kernel(k)->softmax_traits().arith));
    RunResult r = run_suite(*s, {k}, SuiteRunOptions{});
    int bitwise = 0;
    for (const CaseResult& c : r.cases) {
      if (c.case_id == "evidence") continue;
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      CHECK(c.status == CaseStatus::Pass);
      const CheckResult* b = find_check(c, CheckKind::Bitwise);
      REQUIRE(b);
      CAPTURE(b->detail);
      CHECK(b->passed);
      CHECK(c.tier == Tier::Bitwise);
      bitwise += b->passed;
    }
    CHECK(bitwise >= 12);
  }
  // An opaque exp (glibc's) leaves the envelope only, with the reason.
  std::string why;
  CHECK_FALSE(softmax_emulable(make_softmax_kernel("model_softmax_f32_shifted")->softmax_traits().arith, &why));
  CHECK(why.find("opaque") != std::string::npos);
}

TEST_CASE("softmax bitwise tier: a wrong exact declaration passes the envelope and is refused bit for bit") {
  // The warp model declared with a sequential row sum (its real order is the warp's), and the glibc model declared with
  // expf_ops (its real exp is glibc's): both within every bound, neither what it declares.
  register_kernel("test_smx_order_lie", Backend::Cpu, true, [] {
    return std::make_unique<Misdeclared>("test_smx_order_lie", "model_softmax_f32_warp_ops",
                                         [](SoftmaxArith& a) { a.sum_order = ReduceOrder::sequential(); });
  }, Operation::Softmax);
  register_kernel("test_smx_exp_lie", Backend::Cpu, true, [] {
    return std::make_unique<Misdeclared>("test_smx_exp_lie", "model_softmax_f32_shifted", [](SoftmaxArith& a) {
      a.exp_exact = SoftmaxExpExact::ExpfOps;
      a.exp = exp_error_expf_ops();
    });
  }, Operation::Softmax);
  const SuiteInfo* s = find_suite("softmax");
  REQUIRE(s);
  for (const char* k : {"test_smx_order_lie", "test_smx_exp_lie"}) {
    CAPTURE(k);
    SuiteRunOptions o;
    o.only_case = "uniform_n1000";  // long rows: the orders' roundings and the two exps differ somewhere
    RunResult r = run_suite(*s, {k}, o);
    REQUIRE(r.cases.size() >= 1);
    const CaseResult& c = r.cases[0];
    CAPTURE(c.reason);
    const CheckResult* b = find_check(c, CheckKind::Bitwise);
    const CheckResult* e = find_check(c, CheckKind::Envelope);
    REQUIRE(b);
    REQUIRE(e);
    CAPTURE(b->detail);
    CHECK(e->passed);
    CHECK_FALSE(b->passed);
    CHECK(c.status == CaseStatus::Fail);
    std::printf("%s: %s\n", k, b->detail.c_str());
  }
}

TEST_CASE("softmax bitwise tier: every mutant of the exact model is refused") {
  const SuiteInfo* s = find_suite("softmax_quick");
  REQUIRE(s);
  const MutationScore m = run_mutation(*s, "model_softmax_f32_warp_ops", MutationOptions{});
  for (const MutantResult& x : m.mutants) {
    CAPTURE(x.fault);
    CAPTURE(x.detail);
    CHECK((x.outcome == MutantOutcome::Killed || x.outcome == MutantOutcome::NotApplicable));
  }
  CHECK(m.total() >= 4);
  CHECK(m.score() == 1.0);
}

}  // namespace fpcert
