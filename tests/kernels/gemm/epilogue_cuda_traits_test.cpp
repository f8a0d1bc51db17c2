// tests/kernels/gemm/epilogue_cuda_traits_test.cpp — the fused-epilogue subjects' declarations, checked without a
// device (constructing them loads neither CUDA work nor cuBLASLt; docs/epilogue.md, "CUDA subjects"): the cuBLASLt
// subjects take the bias per column only (cuBLASLt's bias runs along its D's rows, fpcert's columns), ReLU and GELU's
// tanh form as measured on the H200 (Z rounded to D's format first, func_rel_err 2^-16; alpha AB + beta C rounded before
// the bias), FP8 scales and amax where cuBLASLt gives them, the "TN" layout alone and dimensions multiples of 16 for FP8; the SIMT built-ins every bias kind and activation with CUDA's 2 ulp functions (2^-22), every layout.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "kernels/kernel.hpp"

namespace fpcert {

#if defined(FPCERT_HAVE_CUDA)
TEST_CASE("cuBLASLt subjects: registered under cublas, with the epilogue cuBLASLt documents declared") {
  const GemmLayout nt{Layout::RowMajor, Layout::ColMajor, Layout::RowMajor}, nn{}, tn{Layout::ColMajor, Layout::RowMajor, Layout::RowMajor};
  const GemmLayout nn_ccol{Layout::RowMajor, Layout::RowMajor, Layout::ColMajor};
  for (const char* name : {"cublaslt_bf16_epilogue", "cublaslt_f16_epilogue", "cublaslt_e4m3_scaled_bf16out", "cublaslt_e4m3_scaled_e4m3out"}) {
    CAPTURE(name);
    const KernelInfo* info = find_kernel_info(name);
    REQUIRE(info);
    CHECK(info->backend == Backend::Cublas);
    const auto k = make_gemm_kernel(name);
    REQUIRE(k);
    CHECK(k->memory() == MemorySpace::Device);
    const KernelTraits& t = k->traits();
    const EpilogueTraits& e = t.epilogue;
    const bool fp8 = *t.a_input == e4m3;
    CHECK(t.alpha_beta);
    CHECK(t.batched);
    CHECK(*t.acc == f32);
    CHECK(e.takes(BiasKind::PerColumn));
    CHECK_FALSE(e.takes(BiasKind::PerRow));  // cuBLASLt's bias is per row of its D: fpcert's columns
    CHECK(e.takes(Activation::Relu));
    CHECK(e.takes(Activation::GeluTanh));
    CHECK_FALSE(e.takes(Activation::GeluErf));  // cuBLASLt's GELU is the tanh form
    CHECK_FALSE(e.takes(Activation::Silu));
    CHECK(e.func_rel_err == std::exp2(-16));
    CHECK(e.func_note.find("2^-17.98") != std::string::npos);  // what the declaration rests on, named
    CHECK(e.round_before_act);
    CHECK(e.round_before_bias != fp8);  // measured: the 16-bit subjects round alpha AB + beta C before the bias, FP8 not
    CHECK(t.shape_multiple == (fp8 ? 16 : 1));
    CHECK(e.fp8_scale_d == (!fp8 || *t.out == e4m3));  // cuBLASLt applies scale_d to an FP8 D only
    if (fp8) {  // M, N, K multiples of 16 (declared), declined before any device is asked
      const Support s = k->can_implement_shape(81, 48, 96);
      CHECK_FALSE(s.ok);
      CHECK(s.reason.find("multiples of 16") != std::string::npos);
    }
    CHECK(e.fp8_scaling == fp8);
    CHECK(e.amax == (fp8 && *t.out == e4m3));
    // FP8 bias: bf16 (cuBLAS documentation's type table), also for an e4m3 D.
    CHECK(*e.bias_format == (fp8 ? bf16 : *t.out));
    CHECK(k->can_implement_layout(nt).ok);
    CHECK(k->can_implement_layout(nn).ok != fp8);
    CHECK(k->can_implement_layout(tn).ok != fp8);
    CHECK_FALSE(k->can_implement_layout(nn_ccol).ok);  // C row-major only
    if (fp8) CHECK(t.promote_every == 128);
  }
  // scale_d reaches an FP8 output only: the bf16-output subject declines it, the e4m3 one takes it.
  GemmOperands ops;
  ops.scale_d = 2.7;
  CHECK_FALSE(make_gemm_kernel("cublaslt_e4m3_scaled_bf16out")->can_implement_operands(ops).ok);
  CHECK(make_gemm_kernel("cublaslt_e4m3_scaled_e4m3out")->can_implement_operands(ops).ok);
  // Nothing undeclared runs silently: a bias per row, SiLU, scales on 16-bit inputs, amax of a bf16 output.
  auto lt16 = make_gemm_kernel("cublaslt_bf16_epilogue");
  GemmOperands row, silu, scaled, amax;
  row.bias_kind = BiasKind::PerRow;
  silu.activation = Activation::Silu;
  scaled.scale_a = 2;
  float box = 0;
  amax.amax = &box;
  for (const GemmOperands* o : {&row, &silu, &scaled, &amax}) CHECK_FALSE(lt16->can_implement_operands(*o).ok);
  CHECK(lt16->can_implement_operands(GemmOperands{}).ok);
}

TEST_CASE("SIMT epilogue built-ins: every bias kind, activation and layout, CUDA's 2-ulp functions declared") {
  for (const char* name : {"simt_f32_epilogue_cuda", "simt_bf16_epilogue_cuda"}) {
    CAPTURE(name);
    const KernelInfo* info = find_kernel_info(name);
    REQUIRE(info);
    CHECK(info->backend == Backend::Cuda);
    const auto k = make_gemm_kernel(name);
    REQUIRE(k);
    const KernelTraits& t = k->traits();
    const EpilogueTraits& e = t.epilogue;
    const Format& io = std::string(name).find("bf16") != std::string::npos ? bf16 : f32;
    CHECK(*t.a_input == io);
    CHECK(*t.out == io);
    CHECK(*t.acc == f32);
    CHECK(t.layouts == kLayoutsAll);
    CHECK(t.alpha_beta);
    CHECK(t.batched);
    for (BiasKind b : {BiasKind::PerRow, BiasKind::PerColumn}) CHECK(e.takes(b));
    for (Activation a : {Activation::Relu, Activation::GeluErf, Activation::GeluTanh, Activation::Silu}) CHECK(e.takes(a));
    CHECK(e.func_rel_err == std::ldexp(1.0, -22));
    CHECK(e.bias_format == nullptr);  // the output format
    CHECK(e.fp8_scaling);
    CHECK(e.amax);
    CHECK_FALSE(e.round_before_act);
  }
}
TEST_CASE("the SIMT tiled kernels take their model's arithmetic, not its interface: no alpha/beta, batches or epilogue") {
  // kernels/gemm/cuda/pipeline.cu computes C = A B of one matrix. Its traits come from the CPU model of the same
  // order, which declares alpha/beta and batches (the models implement them): inheriting those made the runner
  // hand the kernel batch and alpha/beta cases it computes wrongly (the H100 main job, 2026-12-06).
  for (const char* name : {"gemm_f32_tiled", "gemm_f16_f32acc_tiled", "gemm_f16_f16acc_tiled"}) {
    auto k = make_gemm_kernel(name);
    REQUIRE(k);
    CAPTURE(name);
    CHECK(!k->traits().alpha_beta);
    CHECK(!k->traits().batched);
    CHECK(!k->traits().epilogue.active());
  }
}

#endif

}  // namespace fpcert
