// tests/plugin/attention_plugin_test.cpp — attention forward and backward kernels in plugins (ABI minor 10, docs/plugin.md
// "Attention kernels" and "Attention backward kernels"): every malformed declaration refused with its kernel and field
// named; a table of minor 9 (its kernels end before the new fields) still loads and cannot declare either operation; the
// traits read back as declared; a kernel returning an error status (from run or can_implement) is the case's failure, a
// NOT_SUPPORTED its own verdict; the example plugin's correct kernels pass the quick suites while their wrong twins (no
// rescale when the running max grows; dS without D) are refused on the cases that expose them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "generators/attention/attention.hpp"
#include "generators/generate.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "plugin/attention_plugin.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/attention/attention_runner.hpp"
#include "suites/run/suite.hpp"
#include "tests/plugin/fixtures/attention_descriptors.hpp"
#include "tests/support/plugin_checks.hpp"

using namespace fpcert;

namespace {

const std::string kDir = FPCERT_TEST_PLUGIN_DIR;

fpcert_status fwd_ok(void*, const fpcert_attention_args*, void*, char*, size_t) { return FPCERT_STATUS_OK; }
fpcert_status bwd_ok(void*, const fpcert_attention_bwd_args*, void*, char*, size_t) { return FPCERT_STATUS_OK; }
fpcert_status fwd_fails(void*, const fpcert_attention_args*, void*, char* message, size_t capacity) {
  fpcert_plugin_set_message(message, capacity, "shared memory of 9 MB requested");
  return FPCERT_STATUS_INTERNAL;
}
/// Declines keys beyond 100; fails outright (INTERNAL) on grouped heads; takes the rest.
fpcert_status fwd_can(void*, const fpcert_attention_shape* s, int32_t, fpcert_attention_causal, char* message, size_t capacity) {
  if (s->heads_kv != s->heads_q) {
    fpcert_plugin_set_message(message, capacity, "driver query failed");
    return FPCERT_STATUS_INTERNAL;
  }
  if (s->len_k <= 100) return FPCERT_STATUS_OK;
  fpcert_plugin_set_message(message, capacity, "sequences longer than 100 keys are not implemented");
  return FPCERT_STATUS_NOT_SUPPORTED;
}

fpcert_attention_product product(fpcert_format a_input) {
  return f16_attention_product("s = fma(a_k, b_k, s) in fp32 from +0, k ascending", a_input);
}
fpcert_kernel kernel_head(const char* name, fpcert_operation operation) { return attention_descriptor_head(name, operation, FPCERT_MEMORY_HOST); }
fpcert_kernel forward_kernel(const char* name) {
  return f16_attention_descriptor(name, FPCERT_MEMORY_HOST, FPCERT_ELEM_FN_LIBM_F32, FPCERT_ELEM_FN_LIBM_F32, fwd_ok);
}
fpcert_kernel backward_kernel(const char* name) { return f16_attention_bwd_descriptor(name, FPCERT_MEMORY_HOST, FPCERT_ELEM_FN_LIBM_F32, bwd_ok); }

using test::expect_one_problem;
using test::table_problems;
using test::tally_suite;

/// A forward (backward) kernel with one field changed by `edit`: exactly one problem, naming it.
template <class Edit>
void refused_fwd(Edit edit, std::initializer_list<const char*> fragments) {
  fpcert_kernel k = forward_kernel("at_bad");
  edit(k);
  expect_one_problem(k, fragments);
}
template <class Edit>
void refused_bwd(Edit edit, std::initializer_list<const char*> fragments) {
  fpcert_kernel k = backward_kernel("at_bad_bwd");
  edit(k);
  expect_one_problem(k, fragments);
}

}  // namespace

TEST_CASE("attention forward declarations: a valid one validates, each broken field is named") {
  const fpcert_kernel good = forward_kernel("at_good");
  CHECK(table_problems(&good).empty());
  refused_fwd([](fpcert_kernel& k) { k.attention_run = nullptr; }, {"kernel #0 'at_bad'", "attention_run is NULL (required)"});
  refused_fwd([](fpcert_kernel& k) { k.attention.input = 0; }, {"attention.input: required, got FPCERT_FORMAT_NONE"});
  refused_fwd([](fpcert_kernel& k) { k.attention.input = 99; }, {"attention.input: unknown format value 99"});
  refused_fwd([](fpcert_kernel& k) { k.attention.qk.traits.a_input = k.attention.qk.traits.a_operand = FPCERT_FORMAT_F32; },
              {"attention.qk.traits.a_input must be the input format (f16), got f32"});
  refused_fwd([](fpcert_kernel& k) { k.attention.pv.traits.b_input = k.attention.pv.traits.b_operand = FPCERT_FORMAT_BF16; },
              {"attention.pv.traits.b_input must be the input format (f16), got bf16"});
  refused_fwd([](fpcert_kernel& k) { k.attention.qk.traits.order = ""; }, {"attention.qk.traits.order is empty"});
  refused_fwd([](fpcert_kernel& k) { k.attention.qk.traits.out_format = FPCERT_FORMAT_F16; },
              {"attention.qk.traits.out_format must be f32", "got f16"});
  refused_fwd([](fpcert_kernel& k) { k.attention.qk.traits.acc_rounding = 9; }, {"attention.qk.traits.acc_rounding: unknown rounding value 9"});
  refused_fwd([](fpcert_kernel& k) { k.attention.pv.order.kind = 0; }, {"attention.pv.order.kind: required, got value 0"});
  refused_fwd(
      [](fpcert_kernel& k) {
        k.attention.pv.order = {};
        k.attention.pv.order.kind = FPCERT_ORDER_SPLIT_K;
        k.attention.pv.order.step = FPCERT_STEP_FMA;
        k.attention.pv.order.splits = 2;
        k.attention.pv.order.outer = FPCERT_COMBINE_ATOMIC;
      },
      {"attention.pv.order: an atomic split-K combine is a run-to-run order"});
  refused_fwd([](fpcert_kernel& k) { k.attention.shift = FPCERT_SOFTMAX_UNSHIFTED; }, {"attention.shift UNSHIFTED"});
  refused_fwd([](fpcert_kernel& k) { k.attention.shift = 9; }, {"attention.shift: unknown value 9 (valid in ABI minor 12: 1 shifted, 3 online, 4 online_by_difference)"});
  refused_fwd([](fpcert_kernel& k) { k.attention.key_block = 0; }, {"attention.key_block must be >= 1 for an ONLINE softmax"});
  refused_fwd([](fpcert_kernel& k) { k.attention.shift = FPCERT_SOFTMAX_SHIFTED; }, {"attention.key_block must be 0 for a SHIFTED softmax"});
  refused_fwd([](fpcert_kernel& k) { k.attention.exp_form = 0; },
              {"attention.exp_form: required, got value 0 (valid in ABI minor 12: 1 natural, 2 base2_folded, 3 base2_scaled)"});
  refused_fwd([](fpcert_kernel& k) { k.attention.writes_lse = 2; }, {"attention.writes_lse must be 0 or 1, got 2"});
  refused_fwd([](fpcert_kernel& k) { k.attention.writes_lse = 0; }, {"attention.log must be all zero when writes_lse is 0"});
  refused_fwd([](fpcert_kernel& k) { k.attention.exp.implementation = FPCERT_ELEM_FN_CUDA_LOGF; },
              {"attention.exp.implementation 5 is not an implementation of exp"});
  refused_fwd([](fpcert_kernel& k) { k.attention.log = {FPCERT_ELEM_FN_STATED, 0, 1, 0, 0, nullptr}; }, {"attention.log.source is required"});
  refused_fwd([](fpcert_kernel& k) { k.attention.sum_format = FPCERT_FORMAT_E4M3; }, {"attention.sum_format: e4m3 has no Inf"});
  refused_fwd([](fpcert_kernel& k) { k.attention.normalize = 5; }, {"attention.normalize: unknown value 5", "4 reciprocal_approx"});
  refused_fwd([](fpcert_kernel& k) { k.attention.masked_rows = 0; }, {"attention.masked_rows: required, got value 0"});
  refused_fwd(
      [](fpcert_kernel& k) {
        k.attention.masked_rows = FPCERT_MASKED_ROWS_NAN;
        k.attention.out_format = FPCERT_FORMAT_E2M3;
      },
      {"attention.masked_rows NAN: the output format e2m3 has no NaN"});
  refused_fwd([](fpcert_kernel& k) { k.attention.masked_lse = 3; }, {"attention.masked_lse: unknown value 3 (valid in ABI minor 12: 1 neg_inf, 2 pos_inf)"});
  refused_fwd([](fpcert_kernel& k) { k.attention.masks = 0x9; }, {"attention.masks: unknown bits 0x8"});
  refused_fwd([](fpcert_kernel& k) { k.attention.grouped_heads = 2; }, {"attention.grouped_heads must be 0 or 1, got 2"});
  refused_fwd([](fpcert_kernel& k) { k.attention.head_dim_count = 9; }, {"attention.head_dim_count must be 0 (any head dim) .. 8, got 9"});
  refused_fwd([](fpcert_kernel& k) { k.attention.head_dim_count = 1; }, {"attention.head_dims[0] must be >= 1"});
  refused_fwd([](fpcert_kernel& k) { k.attention.head_dims[2] = 64; }, {"attention.head_dims[2] must be 0 past head_dim_count (0), got 64"});
  refused_fwd([](fpcert_kernel& k) { k.attention.score_rel = 1.5; }, {"attention.score_rel = 1.5: must be a relative error in [0, 1)"});
  refused_fwd([](fpcert_kernel& k) { k.attention.score_rel = 1e-7; }, {"attention.note is required when score_rel > 0"});
  // A value of a newer minor names both versions.
  fpcert_kernel k = forward_kernel("at_newer");
  k.attention.masks |= 0x10;
  expect_one_problem(k, {"attention.masks: unknown bits 0x10", "this fpcert speaks plugin ABI 1."}, FPCERT_PLUGIN_ABI_MINOR + 1);  // any current minor
}

TEST_CASE("attention backward declarations: a valid one validates, each broken field is named") {
  const fpcert_kernel good = backward_kernel("at_good_bwd");
  CHECK(table_problems(&good).empty());
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd_run = nullptr; }, {"attention_bwd_run is NULL (required)"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.dov.traits.a_input = k.attention_bwd.dov.traits.a_operand = FPCERT_FORMAT_F32; },
              {"attention_bwd.dov.traits.a_input must be the input format (f16), got f32"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.dsq.traits.b_input = k.attention_bwd.dsq.traits.b_operand = FPCERT_FORMAT_F32; },
              {"attention_bwd.dsq.traits.b_input must be the input format (f16), got f32"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.pdo.traits.exact_products = 3; }, {"attention_bwd.pdo.traits.exact_products must be 0 or 1"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.dsk.traits.out_format = FPCERT_FORMAT_BF16; }, {"attention_bwd.dsk.traits.out_format must be f32"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.dsk.order.step = 0; }, {"attention_bwd.dsk.order.step: required for this kind"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.exp_form = 3; }, {"attention_bwd.exp_form: unknown value 3"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.reads_saved = -1; }, {"attention_bwd.reads_saved must be 0 or 1, got -1"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.exp = {FPCERT_ELEM_FN_STATED, 0, 0.25, 0, 0, "too good"}; },
              {"attention_bwd.exp.ulps must be finite and >= 0.5, got 0.25"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.d_acc = 0; }, {"attention_bwd.d_acc: required, got FPCERT_FORMAT_NONE"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.compute_format = FPCERT_FORMAT_E2M1; }, {"attention_bwd.compute_format: e2m1 has no Inf"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.dq_determinism = 0; },
              {"attention_bwd.dq_determinism: required, got value 0 (valid in ABI minor 12: 1 deterministic, 2 run_to_run)"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.dq_acc = FPCERT_FORMAT_UE8M0; }, {"attention_bwd.dq_acc: ue8m0 is a scale format"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.dk_out = 42; }, {"attention_bwd.dk_out: unknown format value 42"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.masked_lse = 0; }, {"attention_bwd.masked_lse: required, got value 0"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.masks = 0x80; }, {"attention_bwd.masks: unknown bits 0x80"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.head_dim_count = -1; }, {"attention_bwd.head_dim_count must be 0"});
  refused_bwd([](fpcert_kernel& k) { k.attention_bwd.reserved = 5; }, {"attention_bwd.reserved must be 0, got 5"});
}

TEST_CASE("attention kernels need the minor 10 fields: a minor 9 table loads its other kernels unchanged; a short struct is named") {
  // A minor 9 table (stride FPCERT_KERNEL_SIZE_MINOR9): an attention kernel there needs minor 10.
  static std::vector<unsigned char> bytes;
  fpcert_plugin_info info = test::older_table(forward_kernel("at_minor9"), 9, FPCERT_KERNEL_SIZE_MINOR9, bytes);
  auto e = validate_plugin_info(&info, "t");
  REQUIRE(e.size() == 1);
  CHECK(e[0].find("operation: 6 (attention) needs plugin ABI minor 10; the plugin was built against 1.9") != std::string::npos);
  // A GEMM kernel of minor 9 (its rounding before the bias declared, the last field it has) in the same short table
  // validates, registers and reads back what it declared.
  fpcert_kernel g = kernel_head("at_minor9_gemm", FPCERT_OPERATION_GEMM);
  g.gemm = product(FPCERT_FORMAT_F16).traits;
  g.gemm_order = product(FPCERT_FORMAT_F16).order;
  g.determinism = FPCERT_DETERMINISTIC;
  g.gemm_run = [](void*, const fpcert_gemm_args*, void*, size_t, void*, char*, size_t) -> fpcert_status { return FPCERT_STATUS_OK; };
  g.gemm_epilogue.bias_kinds = FPCERT_EPILOGUE_BIT(FPCERT_BIAS_COLUMN);
  g.gemm_alpha_beta = 1;
  g.gemm_round_before_bias = 1;
  info = test::older_table(g, 9, FPCERT_KERNEL_SIZE_MINOR9, bytes);
  e = validate_plugin_info(&info, "t");
  INFO((e.empty() ? std::string() : e[0]));
  CHECK(e.empty());
  const PluginSummary s = register_plugin_info(&info, "minor9");
  REQUIRE(s.gemm_kernels.size() == 1);
  const auto gk = make_gemm_kernel("at_minor9_gemm");
  REQUIRE(gk);
  CHECK(gk->traits().epilogue.round_before_bias);
  CHECK(gk->traits().sum_order.kind == OrderKind::Sequential);
  // The stride says the minor: a minor 9 stride in a table of the current minor is refused.
  info.abi_minor = FPCERT_PLUGIN_ABI_MINOR;
  CHECK(!validate_plugin_info(&info, "t").empty());
  // A kernel of the current minor whose struct_size ends before the fields: both problems named.
  fpcert_kernel b = backward_kernel("at_short");
  b.struct_size = FPCERT_KERNEL_SIZE_MINOR9;
  e = table_problems(&b);
  REQUIRE(e.size() == 2);
  CHECK(e[1].find("operation: 7 (attention_bwd) but struct_size " + std::to_string(FPCERT_KERNEL_SIZE_MINOR9) +
                  " ends before the attention fields") != std::string::npos);
  CHECK(FPCERT_KERNEL_SIZE_MINOR9 == offsetof(fpcert_kernel, attention));
  CHECK(FPCERT_KERNEL_SIZE_MINOR9 + sizeof(fpcert_attention_traits) + 2 * sizeof(void*) + sizeof(fpcert_attention_bwd_traits) +
            2 * sizeof(void*) == offsetof(fpcert_kernel, gemm_shape_multiple));
}

TEST_CASE("declared attention traits read back: products as GEMMs, the softmax, the policies, the masks and head dims") {
  fpcert_kernel k = forward_kernel("at_traits");
  k.attention.exp_form = FPCERT_ATTENTION_EXP_BASE2_FOLDED;
  k.attention.exp = {FPCERT_ELEM_FN_STATED, 0, 2, 0, 0x1p-149, "our exp2: 2 ulp"};
  k.attention.normalize = FPCERT_ATTENTION_NORMALIZE_RECIPROCAL;
  k.attention.pv.traits.a_input = k.attention.pv.traits.a_operand = FPCERT_FORMAT_F32;
  k.attention.masks = FPCERT_ATTENTION_MASK_CAUSAL_TOP_LEFT;
  k.attention.head_dim_count = 2;
  k.attention.head_dims[0] = 64;
  k.attention.head_dims[1] = 128;
  k.attention.masked_lse = FPCERT_ATTENTION_MASKED_LSE_NEG_INF;
  k.attention.score_rel = 0x1p-23;
  k.attention.note = "q and k scaled by RN(sqrt s)";
  REQUIRE(table_problems(&k).empty());
  const AttentionTraits t = attention_traits_from_abi(k);
  CHECK(*t.input == f16);
  CHECK(*t.qk.a_input == f16);
  CHECK(*t.qk.acc == f32);
  CHECK(t.qk.exact_products);
  CHECK(t.qk.sum_order.kind == OrderKind::Sequential);
  CHECK(t.qk.sum_order.step == StepKind::Fma);
  CHECK(*t.pv.a_input == f32);
  CHECK(t.shift == SoftmaxShift::Online);
  CHECK(t.key_block == 32);
  CHECK(t.exp_form == AttentionExpForm::Base2Folded);
  CHECK(t.exp.ulps == 2);
  CHECK(t.exp.abs == 0x1p-149);
  CHECK(t.exp.source.find("our exp2: 2 ulp") == 0);
  CHECK(t.log.ulps == log_error_libm_f32().ulps);
  CHECK(t.normalize == AttentionNormalize::Reciprocal);
  CHECK(*t.out == f16);
  CHECK(t.writes_lse);
  CHECK(t.masked_rows == MaskedRowPolicy::Zero);
  CHECK_FALSE(t.rescale_by_difference);
  // ABI minor 12: the memory-efficient kernel's exp form and FlashAttention-2's rescaling factor (forward only: a backward
  // declaring exp form 3 is refused above).
  fpcert_kernel k12 = k;
  k12.attention.exp_form = FPCERT_ATTENTION_EXP_BASE2_SCALED;
  k12.attention.shift = FPCERT_ATTENTION_SHIFT_ONLINE_BY_DIFFERENCE;
  k12.attention.normalize = FPCERT_ATTENTION_NORMALIZE_RECIPROCAL_APPROX;
  REQUIRE(table_problems(&k12).empty());
  const AttentionTraits t12 = attention_traits_from_abi(k12);
  CHECK(t12.exp_form == AttentionExpForm::Base2Scaled);
  CHECK(t12.shift == SoftmaxShift::Online);
  CHECK(t12.rescale_by_difference);
  CHECK(t12.key_block == 32);
  CHECK(t12.normalize == AttentionNormalize::Reciprocal);
  CHECK(t12.recip_ulps == 2);
  CHECK(t.recip_ulps == 0.5);
  CHECK(t.masked_lse == MaskedLse::NegInf);
  CHECK(t.masks == kAttnMaskCausalTopLeft);
  CHECK(t.head_dims == std::vector<int>{64, 128});
  CHECK(t.grouped_heads);
  CHECK(t.score_rel == 0x1p-23);
  CHECK(t.note.find("q and k scaled") == 0);

  fpcert_kernel b = backward_kernel("at_traits_bwd");
  b.attention_bwd.dq_determinism = FPCERT_RUN_TO_RUN;
  b.attention_bwd.dq_acc = FPCERT_FORMAT_BF16;
  b.attention_bwd.dv_out = FPCERT_FORMAT_F32;
  b.attention_bwd.reads_saved = 0;
  b.attention_bwd.grouped_heads = 0;
  REQUIRE(table_problems(&b).empty());
  const AttentionBwdTraits bt = attention_bwd_traits_from_abi(b);
  CHECK(*bt.pdo.a_input == f32);
  CHECK(*bt.dov.a_input == f16);
  CHECK(bt.exp_form == AttentionExpForm::Natural);
  CHECK(bt.dq_determinism == Determinism::RunToRun);
  CHECK(*bt.dq_acc == bf16);
  CHECK(*bt.dq_out == f16);
  CHECK(*bt.dv_out == f32);
  CHECK_FALSE(bt.reads_saved);
  CHECK_FALSE(bt.grouped_heads);
  CHECK(bt.masked_lse == MaskedLse::PosInf);
}

TEST_CASE("a plugin attention kernel's error status is the case's failure with its message; NOT_SUPPORTED is its own verdict") {
  static fpcert_kernel ks[2] = {forward_kernel("at_status_fails"), forward_kernel("at_status_declines")};
  ks[0].attention_run = fwd_fails;
  ks[1].attention_can_implement = fwd_can;
  static fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "in-process", "0", 2, 0, ks};
  REQUIRE(validate_plugin_info(&info, "status").empty());
  const PluginSummary s = register_plugin_info(&info, "status");
  CHECK(s.attention_kernels.size() == 2);
  const SuiteInfo* suite = find_suite("attention_quick");
  REQUIRE(suite);
  SuiteRunOptions o;
  o.only_case = "normal_l17_kv2";
  RunResult r = run_suite(*suite, {"at_status_fails"}, o);
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].status == CaseStatus::Crashed);
  CHECK(r.cases[0].reason.find("attention_run() returned INTERNAL (3): shared memory of 9 MB requested") != std::string::npos);
  // can_implement: NOT_SUPPORTED (200 keys) is the verdict; INTERNAL (grouped heads, kv2) the case's failure.
  o.only_case = "normal_l200";
  r = run_suite(*suite, {"at_status_declines"}, o);
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].status == CaseStatus::NotSupported);
  CHECK(r.cases[0].reason.find("longer than 100 keys") != std::string::npos);
  o.only_case = "normal_l17_kv2";
  r = run_suite(*suite, {"at_status_declines"}, o);
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].status == CaseStatus::Crashed);
  CHECK(r.cases[0].reason.find("attention_can_implement() returned INTERNAL (3): driver query failed") != std::string::npos);
}

TEST_CASE("the attention example plugin: the correct kernels pass the quick suites, the wrong twins are refused where exposed") {
  const PluginSummary& s = load_plugin(kDir + "/libexample_attention_plugin.so");
  CHECK(s.abi_minor == FPCERT_PLUGIN_ABI_MINOR);
  CHECK(s.attention_kernels.size() == 2);
  CHECK(s.attention_bwd_kernels.size() == 2);
  const auto fwd = make_attention_kernel("example_attention_f16_online");
  REQUIRE(fwd);
  CHECK(fwd->backend() == Backend::Plugin);
  CHECK(fwd->attention_traits().key_block == 32);
  const auto bwd = make_attention_bwd_kernel("example_attention_bwd_f16");
  REQUIRE(bwd);
  CHECK(*bwd->attention_bwd_traits().pdo.a_input == f32);

  const test::Tally good = tally_suite("attention_quick", {"example_attention_f16_online"});
  CHECK(good.fail == 0);
  CHECK(good.other == 0);
  CHECK(good.pass == 5);
  const test::Tally good_bwd = tally_suite("attention_backward_quick", {"example_attention_bwd_f16"});
  CHECK(good_bwd.fail == 0);
  CHECK(good_bwd.other == 0);
  CHECK(good_bwd.pass == 5);
  // 200 keys in blocks of 32: the running max grows in later blocks, and the old terms keep their larger scale.
  CHECK(tally_suite("attention_quick", {"example_attention_f16_norescale"}, "normal_l200").failed_case("normal_l200"));
  // dS = P dP: sum_j dS_ij no longer vanishes; dQ and dK are off by P D k (q) everywhere.
  CHECK(tally_suite("attention_backward_quick", {"example_attention_bwd_f16_nod"}, "normal_l17_kv2").failed_case("normal_l17_kv2"));
}

TEST_CASE("the attention example plugin: the faults made around its closed kernels are killed, the others not applicable") {
  // Forward: zeros, the scale after the softmax, causal off by one, the last key block dropped (no-rescale, LSE without
  // the max and P rounded lower live inside a kernel); backward: zeros, dQ's scale missing and twice, D from dO, D = 0,
  // the LSE in base 2, causal off by one (GQA not summed and bf16 atomics live inside it).
  load_plugin(kDir + "/libexample_attention_plugin.so");
  for (const auto& [kernel, suite, made] : {std::tuple{"example_attention_f16_online", "attention_quick", 4},
                                           std::tuple{"example_attention_bwd_f16", "attention_backward_quick", 7}}) {
    CAPTURE(kernel);
    const MutationScore m = run_mutation(*find_suite(suite), kernel, MutationOptions{});
    for (const MutantResult& r : m.mutants) {
      CAPTURE(r.fault);
      CAPTURE(r.detail);
      CHECK((r.outcome == MutantOutcome::Killed || r.outcome == MutantOutcome::NotApplicable));
      if (r.outcome == MutantOutcome::NotApplicable)  // inside a closed kernel, or FP8's descale fault on a kernel without descales
        CHECK((r.detail.find("closed kernel") != std::string::npos || r.detail.find("no FP8 descale") != std::string::npos));
    }
    CHECK(m.total() == made);
    CHECK(m.count(MutantOutcome::Killed) == made);
  }
}

namespace {
float g_seen[3] = {0, 0, 0};
fpcert_status fwd_records_descales(void*, const fpcert_attention_args* a, void*, char* message, size_t capacity) {
  g_seen[0] = a->descale_q, g_seen[1] = a->descale_k, g_seen[2] = a->descale_v;
  fpcert_plugin_set_message(message, capacity, "recorded the descales only");
  return FPCERT_STATUS_INTERNAL;
}
}  // namespace

TEST_CASE("FP8 attention declarations (ABI minor 13): descales and the P offset read back, reach the call; bad fields named") {
  fpcert_kernel k = forward_kernel("at_fp8");
  k.attention.exp_form = FPCERT_ATTENTION_EXP_BASE2_FOLDED;
  k.attention_fp8 = {1, 2, 8, 0};
  CHECK(table_problems(&k).empty());
  const AttentionTraits t = attention_traits_from_abi(k);
  CHECK(t.descales);
  CHECK(t.descale_roundings == 2);
  CHECK(t.p_offset_log2 == 8);
  // A kernel of minor 12 (its struct ends before attention_fp8) has none, whatever bytes follow it.
  fpcert_kernel old = k;
  old.struct_size = FPCERT_KERNEL_SIZE_MINOR12;
  CHECK_FALSE(has_attention_fp8_fields(old));
  CHECK_FALSE(attention_traits_from_abi(old).descales);
  CHECK(attention_traits_from_abi(old).p_offset_log2 == 0);
  const auto fp8 = [](fpcert_kernel& x) {
    x.attention.exp_form = FPCERT_ATTENTION_EXP_BASE2_FOLDED;
    x.attention_fp8 = {1, 2, 8, 0};
  };
  refused_fwd([&](fpcert_kernel& x) { fp8(x), x.attention_fp8.descales = 2; }, {"attention_fp8.descales must be 0 or 1, got 2"});
  refused_fwd([&](fpcert_kernel& x) { fp8(x), x.attention_fp8.descales = 0; }, {"attention_fp8.descale_roundings = 2", "0 when descales is 0"});
  refused_fwd([&](fpcert_kernel& x) { fp8(x), x.attention_fp8.descale_roundings = 9; }, {"attention_fp8.descale_roundings = 9"});
  refused_fwd([&](fpcert_kernel& x) { fp8(x), x.attention_fp8.p_offset_log2 = 17; }, {"attention_fp8.p_offset_log2 = 17"});
  refused_fwd([&](fpcert_kernel& x) { fp8(x), x.attention.exp_form = FPCERT_ATTENTION_EXP_NATURAL; },
              {"attention_fp8.p_offset_log2 > 0 needs exp_form BASE2_FOLDED"});
  refused_fwd([&](fpcert_kernel& x) { fp8(x), x.attention_fp8.reserved = 1; }, {"attention_fp8.reserved must be 0, got 1"});

  // The call: a case with descale factors reaches the kernel with them (fp32 values of the problem's), a kernel without
  // descales is refused that case before any call.
  static fpcert_kernel ks[2] = {forward_kernel("at_fp8_records"), forward_kernel("at_fp8_none")};
  fp8(ks[0]);
  ks[0].attention_run = fwd_records_descales;
  static fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "in-process-fp8", "0", 2, 0, ks};
  REQUIRE(validate_plugin_info(&info, "fp8").empty());
  register_plugin_info(&info, "fp8");
  const Problem p = generate("attention:batch=1,heads_q=1,heads_kv=1,len_q=5,len_k=9,head_dim=64,seed=3,source=e4m3,fp8_scale=amax");
  const AttentionProblemShape ps = attention_shape(p);
  const std::unique_ptr<DeviceApi> host = make_host_api();
  AttentionCaseSetup setup{"attention", "fp8", &p, "", "fp8"};
  auto rec = make_attention_kernel("at_fp8_records");
  REQUIRE(rec);
  const CaseResult r = run_attention_case(*rec, setup, *host, RunOptions{});
  CHECK(r.status == CaseStatus::Crashed);  // INTERNAL: the case's failure, after the call
  CHECK(g_seen[0] == static_cast<float>(ps.descale_q));
  CHECK(g_seen[1] == static_cast<float>(ps.descale_k));
  CHECK(g_seen[2] == static_cast<float>(ps.descale_v));
  CHECK(g_seen[0] != 1.0f);
  auto none = make_attention_kernel("at_fp8_none");
  REQUIRE(none);
  const CaseResult n = run_attention_case(*none, setup, *host, RunOptions{});
  CHECK(n.status == CaseStatus::NotSupported);
  CHECK(n.reason.find("descale factors") != std::string::npos);
}
