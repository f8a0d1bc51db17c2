// tests/kernels/attention/attention_cuda_traits_test.cpp — the CUDA attention built-ins' declarations, checked without a
// device (constructing a kernel does not touch one): registered as CUDA attention kernels; the flash kernels declare
// mma.sync's GEMM traits (f16/bf16 operands, exact products, f32 accumulator, tensor-core k-steps of 16), the online
// softmax in key blocks of 64 with exp2f folded, P in the input format, the reciprocal and +Inf for masked rows' LSE;
// the naive kernel f32 fmaf chains, the shifted softmax with expf, the division; each carries the faults it can.
#include <doctest/doctest.h>

#include <string>

#include "kernels/attention/attention_kernel.hpp"

namespace fpcert {

#if defined(FPCERT_HAVE_CUDA)
TEST_CASE("attention CUDA built-ins: registered, with the arithmetic they run declared") {
  for (const char* name : {"attention_f16_flash_cuda", "attention_bf16_flash_cuda"}) {
    CAPTURE(name);
    const KernelInfo* info = find_kernel_info(name);
    REQUIRE(info);
    CHECK(info->backend == Backend::Cuda);
    CHECK(info->operation == Operation::Attention);
    const auto k = make_attention_kernel(name);
    REQUIRE(k);
    CHECK(k->memory() == MemorySpace::Device);
    const AttentionTraits& t = k->attention_traits();
    const Format& in = std::string(name).find("bf16") != std::string::npos ? bf16 : f16;
    CHECK(*t.input == in);
    CHECK(*t.out == in);
    for (const KernelTraits* g : {&t.qk, &t.pv}) {
      CHECK(*g->a_input == in);  // qk: Q; pv: P rounded to nearest into the input format
      CHECK(*g->b_input == in);
      CHECK(g->exact_products);
      CHECK(*g->acc == f32);
      CHECK(g->sum_order.kind == OrderKind::TensorCoreBlock);
      CHECK(g->sum_order.block == 16);
      CHECK(*g->out == f32);
    }
    CHECK(t.shift == SoftmaxShift::Online);
    CHECK(t.key_block == 64);
    CHECK(t.exp_form == AttentionExpForm::Base2Folded);
    CHECK(t.exp.ulps == 2);  // exp2f, CUDA C Programming Guide
    CHECK(t.normalize == AttentionNormalize::Reciprocal);
    CHECK(t.masked_rows == MaskedRowPolicy::Zero);
    CHECK(t.masked_lse == MaskedLse::PosInf);
    CHECK(t.head_dims == std::vector<int>{64, 128});
    // Head dim 256 is declined before any device is asked (the registers of 128 O accumulators per thread).
    CHECK_FALSE(k->can_implement({1, 1, 1, 16, 16, 256}, CausalAlign::None, false).ok);
    CHECK_FALSE(k->can_implement({1, 4, 3, 16, 16, 64}, CausalAlign::None, false).ok);  // 4 heads on 3 kv heads
    for (AttentionBug b : {AttentionBug::NoRescale, AttentionBug::ScaleAfterSoftmax, AttentionBug::CausalOffByOne, AttentionBug::LseNoMax,
                           AttentionBug::PRoundedLower, AttentionBug::DropLastKeyBlock, AttentionBug::Zeros}) {
      CAPTURE(to_string(b));
      const auto m = k->with_bug(b);
      REQUIRE(m);
      CHECK(m->is_mutant());
      CHECK(m->name() == k->name());
    }
    const std::string d = k->description();
    CHECK(d.find("online softmax block 64") != std::string::npos);
    CHECK_FALSE(k->with_bug(AttentionBug::DescaleVDropped));  // no descale factors
    CHECK(d.find("reciprocal") != std::string::npos);
  }
  const auto n = make_attention_kernel("attention_f32_naive_cuda");
  REQUIRE(n);
  const AttentionTraits& t = n->attention_traits();
  CHECK(*t.input == f32);
  CHECK(*t.out == f32);
  CHECK(*t.pv.a_input == f32);
  CHECK(t.qk.sum_order.kind == OrderKind::Sequential);
  CHECK(t.pv.sum_order.kind == OrderKind::Sequential);
  CHECK(t.shift == SoftmaxShift::Shifted);
  CHECK(t.exp_form == AttentionExpForm::Natural);
  CHECK(t.normalize == AttentionNormalize::Divide);
  CHECK(t.masked_lse == MaskedLse::NegInf);
  CHECK(t.head_dims.empty());
  // No online softmax and no key blocks: those two faults cannot be carried.
  CHECK_FALSE(n->with_bug(AttentionBug::NoRescale));
  CHECK_FALSE(n->with_bug(AttentionBug::DropLastKeyBlock));
  CHECK(n->with_bug(AttentionBug::PRoundedLower));
  CHECK(n->with_bug(AttentionBug::ScaleAfterSoftmax));
  CHECK_FALSE(n->with_bug(AttentionBug::DescaleVDropped));  // no descale factors
}

TEST_CASE("attention CUDA FP8 built-in: e4m3 mma.sync products, descales folded, P offset by 2^8, causal masks only") {
  const auto k = make_attention_kernel("attention_e4m3_flash_cuda");
  REQUIRE(k);
  CHECK(k->memory() == MemorySpace::Device);
  const AttentionTraits& t = k->attention_traits();
  CHECK(*t.input == e4m3);
  CHECK(*t.out == bf16);
  for (const KernelTraits* g : {&t.qk, &t.pv}) {
    CHECK(*g->a_input == e4m3);  // qk: Q; pv: P rounded into e4m3
    CHECK(*g->b_input == e4m3);
    CHECK(g->exact_products);
    CHECK(g->sum_order.kind == OrderKind::TensorCoreBlock);
    CHECK(g->sum_order.block == 32);
  }
  CHECK(t.descales);
  CHECK(t.descale_roundings == 2);  // RN(dq dk), then its product with RN(s log2 e) (and with s for the LSE)
  CHECK(t.p_offset_log2 == 8);
  CHECK(t.exp_form == AttentionExpForm::Base2Folded);
  CHECK(t.masks == (kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight));
  CHECK_FALSE(k->can_implement({1, 1, 1, 16, 16, 64}, CausalAlign::None, true).ok);  // an additive mask
  CHECK_FALSE(k->can_implement({1, 1, 1, 16, 16, 256}, CausalAlign::None, false).ok);
  for (AttentionBug b : {AttentionBug::NoRescale, AttentionBug::ScaleAfterSoftmax, AttentionBug::CausalOffByOne, AttentionBug::LseNoMax,
                         AttentionBug::PRoundedLower, AttentionBug::DropLastKeyBlock, AttentionBug::DescaleVDropped, AttentionBug::Zeros}) {
    CAPTURE(to_string(b));
    const auto m = k->with_bug(b);
    REQUIRE(m);
    CHECK(m->is_mutant());
  }
  CHECK(k->description().find("per-tensor descales") != std::string::npos);
}
#endif

}  // namespace fpcert
