// tests/suites/attention_closed_faults_test.cpp — the attention and attention backward faults made around a closed kernel
// (suites/ops/attention*/..._faults.cpp, docs/mutation.md "Faults made around a closed kernel"): a CPU model behind a
// wrapper that carries no fault in its own arithmetic (a plugin's or a Python callable's position), with and without
// additive masks (without them the causal fault is made by one padded query and key). The unmutated closed kernel passes,
// every fault that can be made around it is killed for its own fault, the others are not applicable; and where the fault's
// definition and the call made around the kernel compute the same thing (D from dO, D = 0, the LSE in the other base of a
// natural-form kernel, the causal diagonal moved through an additive mask, the last key block dropped), the closed
// mutant's largest error over the bound on a case equals that of the model carrying the fault in its own arithmetic.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "kernels/attention/attention_backward_kernel.hpp"
#include "kernels/attention/attention_kernel.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {
namespace {

/// A model as a closed kernel: no fault of its own; `additive`: whether it takes additive masks.
class ClosedAttention final : public AttentionKernel {
 public:
  ClosedAttention(const std::string& inner, std::string name, bool additive) : in_(make_attention_kernel(inner)), name_(std::move(name)) {
    t_ = in_->attention_traits();
    if (!additive) t_.masks &= static_cast<std::uint8_t>(~kAttnMaskAdditive);
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return "closed " + in_->description(); }
  Backend backend() const override { return Backend::Plugin; }
  MemorySpace memory() const override { return in_->memory(); }
  const AttentionTraits& attention_traits() const override { return t_; }
  Support can_implement(const AttentionShape& s, CausalAlign c, bool m) const override {
    return m && !(t_.masks & kAttnMaskAdditive) ? Support::no("no additive mask") : in_->can_implement(s, c, m);
  }
  void run(const AttentionOperands& o) override { in_->run(o); }

 private:
  std::unique_ptr<AttentionKernel> in_;
  std::string name_;
  AttentionTraits t_;
};

class ClosedAttentionBwd final : public AttentionBwdKernel {
 public:
  ClosedAttentionBwd(const std::string& inner, std::string name, bool additive) : in_(make_attention_bwd_kernel(inner)), name_(std::move(name)) {
    t_ = in_->attention_bwd_traits();
    if (!additive) t_.masks &= static_cast<std::uint8_t>(~kAttnMaskAdditive);
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return "closed " + in_->description(); }
  Backend backend() const override { return Backend::Plugin; }
  MemorySpace memory() const override { return in_->memory(); }
  const AttentionBwdTraits& attention_bwd_traits() const override { return t_; }
  Support can_implement(const AttentionShape& s, CausalAlign c, bool m) const override {
    return m && !(t_.masks & kAttnMaskAdditive) ? Support::no("no additive mask") : in_->can_implement(s, c, m);
  }
  void run(const AttentionBwdOperands& o) override { in_->run(o); }

 private:
  std::unique_ptr<AttentionBwdKernel> in_;
  std::string name_;
  AttentionBwdTraits t_;
};

template <class Closed>
std::string register_closed(const std::string& inner, bool additive, Operation op) {
  const std::string name = "closed_" + inner + (additive ? "" : "_no_additive");
  register_kernel(name, Backend::Plugin, false, [=] { return std::unique_ptr<Kernel>(new Closed(inner, name, additive)); }, op);
  return name;
}

/// The mutation score on `suite` of the closed kernel: every applicable fault killed for its own fault; `made` of them.
void check_closed_mutation(const std::string& suite, const std::string& closed, int made) {
  CAPTURE(closed);
  const SuiteInfo* s = find_suite(suite);
  REQUIRE(s);
  const MutationScore m = run_mutation(*s, closed, MutationOptions{});
  for (const MutantResult& r : m.mutants) {
    CAPTURE(r.fault);
    CAPTURE(r.detail);
    if (r.outcome == MutantOutcome::NotApplicable) continue;
    CHECK(r.outcome == MutantOutcome::Killed);
  }
  CHECK(m.invalid_cases.empty());
  CHECK(m.total() == made);
  CHECK(m.count(MutantOutcome::Killed) == made);
}

/// The closed mutant and the model's own mutant on one case: the same largest error over the bound (the same outputs).
void check_same_as_own(const std::string& suite, const std::string& model, const std::string& closed, Fault f, const char* case_id) {
  const std::string id = case_id;
  CAPTURE(model);
  CAPTURE(id);
  const CaseResult own = run_one_case(suite.c_str(), register_mutant(model, f), case_id);
  const CaseResult made = run_one_case(suite.c_str(), register_mutant(closed, f), case_id);
  CAPTURE(own.reason);
  CAPTURE(made.reason);
  CHECK(own.status == CaseStatus::Fail);
  CHECK(made.status == CaseStatus::Fail);
  CHECK(made.metrics.err_frac_max == own.metrics.err_frac_max);
}

}  // namespace

TEST_CASE("attention faults made around a closed kernel: the scale after the softmax, causal off by one, the last key block, zeros") {
  // The flash models: all four (DropLastKeyBlock needs key blocks); the naive one: three. NoRescale, LseNoMax and
  // PRoundedLower live inside the kernel: not applicable to a closed one.
  for (const bool additive : {true, false}) {
    CAPTURE(additive);
    check_closed_mutation("attention", register_closed<ClosedAttention>("model_attention_f16_flash", additive, Operation::Attention), 4);
    check_closed_mutation("attention", register_closed<ClosedAttention>("model_attention_f32_naive", additive, Operation::Attention), 3);
  }
  // The quick suite too (the CUDA plugin fixture's GPU test runs `fpcert mutate` on it).
  check_closed_mutation("attention_quick", register_closed<ClosedAttention>("model_attention_f16_flash", true, Operation::Attention), 4);
  const std::string closed = register_closed<ClosedAttention>("model_attention_f16_flash", true, Operation::Attention);
  check_same_as_own("attention", "model_attention_f16_flash", closed, Fault::AttnCausalOffByOne, "causal_bottom_right");
  check_same_as_own("attention", "model_attention_f16_flash", closed, Fault::AttnDropLastKeyBlock, "normal_l200");
}

TEST_CASE("attention backward faults made around a closed kernel: D from dO, D = 0, the LSE's base, causal off by one, the scale, zeros") {
  // Seven faults can be made around a kernel that reads the saved O and LSE; GqaNotSummed and DqAtomicsBf16 live inside it.
  for (const bool additive : {true, false}) {
    CAPTURE(additive);
    check_closed_mutation("attention_backward",
                          register_closed<ClosedAttentionBwd>("model_attention_bwd_f16_flash", additive, Operation::AttentionBackward), 7);
    check_closed_mutation("attention_backward",
                          register_closed<ClosedAttentionBwd>("model_attention_bwd_f32_naive", additive, Operation::AttentionBackward), 7);
  }
  check_closed_mutation("attention_backward_quick",
                        register_closed<ClosedAttentionBwd>("model_attention_bwd_f32_naive", true, Operation::AttentionBackward), 7);
  const std::string closed = register_closed<ClosedAttentionBwd>("model_attention_bwd_f32_naive", true, Operation::AttentionBackward);
  for (const Fault f : {Fault::AbwdDFromWrongO, Fault::AbwdNoDSubtract, Fault::AbwdLseWrongBase})
    check_same_as_own("attention_backward", "model_attention_bwd_f32_naive", closed, f, "like_o_l77_kv1");
  check_same_as_own("attention_backward", "model_attention_bwd_f32_naive", closed, Fault::AbwdCausalOffByOne, "causal_bottom_right");
}

}  // namespace fpcert
