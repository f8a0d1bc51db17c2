// tests/suites/attention_bwd_operation_test.cpp — attention backward through the runner (suites/ops/attention_bwd/): every
// CPU model passes every case of both suites with evidence (the bound holds for the declared arithmetic on every
// generated case, and is not vacuous on most elements), the fault injectors reach a mutation score of 100 % on every
// model, each mutant killed for its own fault, and fault by fault the check that refuses it is the one its definition
// names. The expected verdicts come from the faults' definitions, not from the models' output.
#include <doctest/doctest.h>

#include <algorithm>

#include "kernels/attention/attention_backward_kernel.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {
namespace {

std::vector<std::string> cpu_models() {
  std::vector<std::string> out;
  for (const auto& n : kernel_names(false, Operation::AttentionBackward))
    if (find_kernel_info(n)->backend == Backend::Cpu) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("attention backward suites: every CPU model passes every case, with evidence") {
  const auto models = cpu_models();
  REQUIRE(models.size() >= 3);
  CHECK(find_suite("attention_backward")->cases({}).size() >= 14);
  CHECK(find_suite("attention_backward_quick")->cases({}).size() >= 5);
  // The checks the CUDA built-ins get (tests/support/row_gpu_checks.hpp): every case passes, the evidence rule adds no case.
  // A base-2 folded model is outside its declaration on additive_mask_min (bf16's most negative value as a mask: RN(mask /
  // s) and RN(L log2 e) overflow fp32, NaN gradients): not supported, with the reason; every other case passes.
  const auto declined = [](const std::string& k, const CaseResult& c) {
    const auto t = make_attention_bwd_kernel(k);
    return t && t->attention_bwd_traits().exp_form == AttentionExpForm::Base2Folded && c.case_id == "additive_mask_min" &&
           c.reason.find("base-2 folded form") != std::string::npos;
  };
  check_builtins_pass(Operation::AttentionBackward, "attention_backward_quick", models, declined);
  check_builtins_pass(Operation::AttentionBackward, "attention_backward", models, declined);
}

TEST_CASE("attention backward mutation: 100 % of the applicable faults killed on every CPU model, each for its own fault") {
  const auto models = cpu_models();
  REQUIRE(models.size() >= 3);
  check_builtins_mutation("attention_backward", models);  // the check the CUDA built-ins get (tests/support/row_gpu_checks.hpp)
}

TEST_CASE("attention backward faults: each refused by the check its definition names") {
  const SuiteInfo* s = find_suite("attention_backward");
  REQUIRE(s);
  struct Expect {
    Fault f;
    const char* kernel;
    const char* case_id;
    CheckKind check;
  };
  // The case each fault shows in, and why: D from dO: D changes every dS; no subtraction: D ~ dP of the dominant key;
  // scale missing / twice: s = 1/8; wrong base: LSE ~ log(77) not near 0; GQA: 4 query heads on one kv head; bf16
  // atomics: 2^-8 on dQ against the f16 bound; causal off by one: query i's P_i,i+1 = e^{z - LSE} where 0 is exact (the
  // queries that see no key keep P = 0: their saved LSE is +-Inf); zeros: every gradient.
  const Expect cases[] = {
      {Fault::AbwdDFromWrongO, "model_attention_bwd_f16_flash", "normal_l17_kv2", CheckKind::Envelope},
      {Fault::AbwdNoDSubtract, "model_attention_bwd_f32_naive", "like_o_l77_kv1", CheckKind::Envelope},
      {Fault::AbwdDqScaleMissing, "model_attention_bwd_bf16_flash", "normal_l17_kv2", CheckKind::Envelope},
      {Fault::AbwdDqScaleTwice, "model_attention_bwd_f32_naive", "normal_l17_kv2", CheckKind::Envelope},
      {Fault::AbwdLseWrongBase, "model_attention_bwd_f16_flash", "like_o_l77_kv1", CheckKind::Envelope},
      {Fault::AbwdGqaNotSummed, "model_attention_bwd_f16_flash", "like_o_l77_kv1", CheckKind::Envelope},
      {Fault::AbwdDqAtomicsBf16, "model_attention_bwd_f32_naive", "normal_l200_d128", CheckKind::Envelope},
      {Fault::AbwdCausalOffByOne, "model_attention_bwd_f16_flash", "causal_bottom_right", CheckKind::Envelope},
      {Fault::AbwdZeros, "model_attention_bwd_bf16_flash", "normal_l17_kv2", CheckKind::Envelope},
  };
  for (const Expect& e : cases) {
    const std::string mutant = register_mutant(e.kernel, e.f);
    CAPTURE(mutant);
    SuiteRunOptions o;
    o.only_case = e.case_id;
    const RunResult r = run_suite(*s, {mutant}, o);
    REQUIRE(r.cases.size() == 1);
    CHECK(r.cases[0].status == CaseStatus::Fail);
    const auto& ch = r.cases[0].checks;
    CHECK(std::any_of(ch.begin(), ch.end(), [&](const CheckResult& x) { return x.kind == e.check && !x.passed; }));
  }
}

TEST_CASE("attention backward with finfo.min masks: far keys judged, the base-2 folded model outside its domain") {
  // additive_mask_min: keys hidden by the input format's most negative finite value. The recomputed P's argument error
  // u |mask| made every bound of such a pair infinite (0 x Inf = NaN: unjudged); far pairs are now bounded by absolute
  // terms (oracle/attention/attention_bwd_bound.cpp). The f16 model (f16's -65504) is judged on every element; the f32
  // model on dQ (dK and dV sum over the queries that see only masked keys, which no bound covers); the bf16 model is not
  // supported there (RN(mask / s) and RN(L log2 e) overflow fp32: NaN gradients).
  CHECK(run_one_case("attention_backward", "model_attention_bwd_bf16_flash", "additive_mask_min").status == CaseStatus::NotSupported);
  for (const std::string k : {"model_attention_bwd_f16_flash", "model_attention_bwd_f32_naive"}) {
    CAPTURE(k);
    const CaseResult c = run_one_case("attention_backward", k, "additive_mask_min");
    CHECK(c.status == CaseStatus::Pass);
    CHECK_FALSE(c.vacuous);
    CHECK(c.metrics.err_frac_max > 0x1p-12);
    CHECK(c.metrics.err_frac_max <= 1);
  }
}

}  // namespace fpcert
