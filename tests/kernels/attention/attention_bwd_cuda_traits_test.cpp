// tests/kernels/attention/attention_bwd_cuda_traits_test.cpp — the CUDA attention backward built-ins' declarations,
// checked without a device (constructing a kernel does not touch one): registered as CUDA attention backward kernels;
// the flash kernels declare mma.sync's GEMM traits for the five products (f16/bf16 operands, P and dS in the input
// format, exact products, f32 accumulators, tensor-core k-steps of 16), exp2f folded, D and the compute in f32, dQ
// added with atomics (order unknown, run to run: an order a RunToRun GEMM may declare) or deterministic; the naive
// kernel f32 fmaf chains and expf; each carries the faults it can; head dim 256 is declined before any device is asked.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernels/attention/attention_backward_kernel.hpp"

namespace fpcert {

#if defined(FPCERT_HAVE_CUDA)
TEST_CASE("attention backward CUDA built-ins: registered, with the arithmetic they run declared") {
  for (const char* name : {"attention_bwd_f16_flash_cuda", "attention_bwd_bf16_flash_cuda", "attention_bwd_f16_flash_det_cuda",
                           "attention_bwd_bf16_flash_det_cuda"}) {
    CAPTURE(name);
    const std::string n = name;
    const bool det = n.find("_det_") != std::string::npos;
    const KernelInfo* info = find_kernel_info(name);
    REQUIRE(info);
    CHECK(info->backend == Backend::Cuda);
    CHECK(info->operation == Operation::AttentionBackward);
    const auto k = make_attention_bwd_kernel(name);
    REQUIRE(k);
    CHECK(k->name() == n);
    CHECK(k->memory() == MemorySpace::Device);
    CHECK_FALSE(k->is_mutant());
    const AttentionBwdTraits& t = k->attention_bwd_traits();
    const Format& in = n.find("bf16") != std::string::npos ? bf16 : f16;
    CHECK(*t.input == in);
    for (const KernelTraits* g : {&t.qk, &t.dov, &t.pdo, &t.dsk, &t.dsq}) {
      CHECK(*g->a_input == in);  // Q, dO, P, dS, dS: each rounded into the input format before its MMA
      CHECK(*g->b_input == in);
      CHECK(g->exact_products);
      CHECK(*g->acc == f32);
      CHECK(determinism_problem(*g).empty());
      CHECK(g->sum_order.block_model.instruction == (&in == &bf16 ? "mma_bf16_f32" : "mma_f16_f32"));
    }
    for (const KernelTraits* g : {&t.qk, &t.dov, &t.pdo, &t.dsq}) {
      CHECK(g->sum_order.kind == OrderKind::TensorCoreBlock);
      CHECK(g->sum_order.block == 16);
      CHECK(g->determinism == Determinism::Deterministic);
    }
    if (det) {
      CHECK(t.dsk.sum_order.kind == OrderKind::TensorCoreBlock);
      CHECK(t.dsk.determinism == Determinism::Deterministic);
      CHECK(t.dq_determinism == Determinism::Deterministic);
    } else {
      CHECK(t.dsk.sum_order.kind == OrderKind::Unknown);  // partials per key block, as many as len_k / 64, atomics
      CHECK(t.dsk.determinism == Determinism::RunToRun);
      CHECK(t.dq_determinism == Determinism::RunToRun);
    }
    CHECK(t.exp_form == AttentionExpForm::Base2Folded);
    CHECK(t.exp.ulps == 2);  // exp2f, CUDA C Programming Guide
    CHECK(*t.d_acc == f32);
    CHECK(*t.compute == f32);
    CHECK(*t.dq_acc == f32);
    CHECK(*t.dq_out == in);
    CHECK(*t.dk_out == in);
    CHECK(*t.dv_out == in);
    CHECK(t.masked_lse == MaskedLse::PosInf);
    CHECK(t.reads_saved);
    CHECK(t.grouped_heads);
    CHECK(t.head_dims == std::vector<int>{64, 128});
    CHECK(t.masks == (kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight | kAttnMaskAdditive));
    // Declined before any device is asked: head dim 256 (the dK and dV accumulators would spill), heads that do not group.
    CHECK_FALSE(k->can_implement({1, 1, 1, 16, 16, 256}, CausalAlign::None, false).ok);
    CHECK_FALSE(k->can_implement({1, 4, 3, 16, 16, 64}, CausalAlign::None, false).ok);
    for (AttentionBwdBug b : {AttentionBwdBug::DFromWrongO, AttentionBwdBug::NoDSubtract, AttentionBwdBug::DqScaleMissing,
                              AttentionBwdBug::DqScaleTwice, AttentionBwdBug::LseWrongBase, AttentionBwdBug::GqaNotSummed,
                              AttentionBwdBug::CausalOffByOne, AttentionBwdBug::Zeros}) {
      CAPTURE(to_string(b));
      const auto m = k->with_bug(b);
      REQUIRE(m);
      CHECK(m->is_mutant());
      CHECK(m->name() == k->name());
    }
    // Only the atomic dQ has atomics to put into bf16.
    CHECK(static_cast<bool>(k->with_bug(AttentionBwdBug::DqAtomicsBf16)) == !det);
    const std::string d = k->description();
    CHECK(d.find(det ? "ascending order" : "atomics") != std::string::npos);
  }
  const auto n = make_attention_bwd_kernel("attention_bwd_f32_naive_cuda");
  REQUIRE(n);
  CHECK(find_kernel_info("attention_bwd_f32_naive_cuda")->backend == Backend::Cuda);
  const AttentionBwdTraits& t = n->attention_bwd_traits();
  CHECK(*t.input == f32);
  for (const KernelTraits* g : {&t.qk, &t.dov, &t.pdo, &t.dsk, &t.dsq}) {
    CHECK(*g->a_input == f32);
    CHECK(*g->acc == f32);
    CHECK(g->sum_order.kind == OrderKind::Sequential);
    CHECK(g->sum_order.step == StepKind::Fma);
  }
  CHECK(t.exp_form == AttentionExpForm::Natural);
  CHECK(t.exp.ulps == 2);  // expf
  CHECK(t.dq_determinism == Determinism::Deterministic);
  CHECK(*t.dq_out == f32);
  CHECK(*t.dk_out == f32);
  CHECK(*t.dv_out == f32);
  CHECK(t.head_dims.empty());
  CHECK(t.masked_lse == MaskedLse::NegInf);
  CHECK_FALSE(n->with_bug(AttentionBwdBug::DqAtomicsBf16));  // no atomics
  CHECK(n->with_bug(AttentionBwdBug::GqaNotSummed));
  CHECK(n->with_bug(AttentionBwdBug::LseWrongBase));
  // Not a forward kernel: the attention registry does not hand it out.
  CHECK_FALSE(make_attention_kernel("attention_bwd_f32_naive_cuda"));
}
#endif

}  // namespace fpcert
