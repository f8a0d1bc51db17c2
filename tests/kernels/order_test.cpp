// tests/kernels/order_test.cpp — the structured order: spec strings round-trip, malformed specs are
// InputErrors that name the part and the valid values, and every built-in CPU model declares its order.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/error.hpp"
#include "kernels/kernel.hpp"
#include "kernels/order.hpp"

using namespace fpcert;

TEST_CASE("every order kind round-trips through its spec string") {
  BlockModel measured;
  measured.fused_length = 8;
  measured.block_rounding = Rounding::NearestEven;
  measured.measured = true;
  SummationOrder ulps = SummationOrder::sequential();
  ulps.bitwise_ulps = 2;
  const std::vector<SummationOrder> orders = {
      SummationOrder::unknown(),
      SummationOrder::sequential(StepKind::Fma),
      SummationOrder::sequential(StepKind::MulAdd),
      SummationOrder::blocked(32, Combine::Pairwise, Combine::Sequential),
      SummationOrder::split_k(4, Combine::Pairwise),
      SummationOrder::pairwise(),
      SummationOrder::tensor_core(16),
      SummationOrder::tensor_core(32, measured),
      SummationOrder::split_products("3xtf32"),
      SummationOrder::split_products("6xbf16", OrderKind::TensorCoreBlock, 16),
      SummationOrder::blocked(16, Combine::Exact, Combine::Sequential),
      SummationOrder::pow2_scaled("kblock64"),
      SummationOrder::pow2_scaled("rowcol", OrderKind::TensorCoreBlock, 16),
      SummationOrder::ozaki2(20),
      SummationOrder::ozaki2(7),
      ulps,
  };
  SummationOrder nvfp4 = SummationOrder::blocked(16, Combine::Exact, Combine::Sequential);
  nvfp4.final_scale = FinalScale::Tensor;
  CHECK(order_spec(nvfp4) == "blocked:block=16,inner=exact,outer=sequential,step=fma,final_scale=tensor");
  CHECK(parse_order_spec(order_spec(nvfp4)) == nvfp4);
  CHECK(order_spec(SummationOrder::pow2_scaled("auto")) == "pow2_scaled:scheme=auto,term=sequential");
  CHECK(parse_order_spec("pow2_scaled:scheme=outlier").scale_scheme == "outlier");
  for (const SummationOrder& o : orders) {
    const std::string spec = order_spec(o);
    CAPTURE(spec);
    const SummationOrder back = parse_order_spec(spec);
    CHECK(order_spec(back) == spec);
    CHECK(back.kind == o.kind);
    CHECK(back.block == o.block);
    CHECK(back.splits == o.splits);
    CHECK(back.bitwise_ulps == o.bitwise_ulps);
    CHECK(back.block_model.measured == o.block_model.measured);
    CHECK(back.inner == o.inner);
    CHECK(back.scale_scheme == o.scale_scheme);
    CHECK(back.term_order == o.term_order);
    CHECK(back.moduli == o.moduli);
    CHECK(back.order_free() == (o.kind == OrderKind::Ozaki2));  // only the exact-in-K arithmetic is order-free
  }
  CHECK(order_spec(SummationOrder::ozaki2(14)) == "ozaki2:moduli=14");
  CHECK(order_spec(SummationOrder::sequential()) == "sequential:step=fma");
  CHECK(parse_order_spec("splitk:splits=8").outer == Combine::Sequential);
}

TEST_CASE("malformed order specs are InputErrors naming the problem") {
  CHECK_THROWS_WITH_AS(parse_order_spec("zigzag"), doctest::Contains("unknown order kind 'zigzag'"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("sequential:block=4"), doctest::Contains("unknown key 'block' for sequential (valid: ulps, final_scale, step)"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("splitk:splits=1"), doctest::Contains("splits >= 2"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("blocked:block=0"), doctest::Contains("block >= 1"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("blocked:block=x"), doctest::Contains("non-negative integer"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("split_products:scheme=5xfoo"), doctest::Contains("unknown split scheme '5xfoo' (valid: 3xtf32"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("tensor_core:k=16,fused=5"), doctest::Contains("must divide"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("sequential:step"), doctest::Contains("key=value"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("tensor_core:k=16,rounding=rx"), doctest::Contains("unknown mode 'rx'"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("pow2_scaled:scheme=kblock32"),
                       doctest::Contains("unknown scaling scheme 'kblock32' (valid: cast, tensor, rowcol, kblock64"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("splitk:splits=4,combine=exact"), doctest::Contains("combine must be sequential, pairwise or atomic"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("blocked:block=32,inner=exact,step=mul_add"), doctest::Contains("no step"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("sequential:final_scale=row"), doctest::Contains("final_scale must be none or tensor"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("ozaki2"), doctest::Contains("ozaki2 needs moduli = 2..20, got 0"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("ozaki2:moduli=21"), doctest::Contains("ozaki2 needs moduli = 2..20, got 21"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("ozaki2:moduli=8,k=16"), doctest::Contains("unknown key 'k' for ozaki2 (valid: ulps, final_scale, moduli)"),
                       InputError);
}

TEST_CASE("every built-in CPU model declares its order") {
  int known = 0;
  for (const auto& info : kernel_registry()) {
    if (info.backend != Backend::Cpu || info.mutant || info.operation != Operation::Gemm) continue;
    const auto k = make_gemm_kernel(info.name);
    const SummationOrder& o = k->traits().sum_order;
    CAPTURE(info.name);
    CHECK(check_order(o).empty());
    CHECK(describe_traits(k->traits()).find("order " + order_spec(o)) != std::string::npos);
    // The bf16-on-fp16 models declare their scaling, the block-sum models an exact inner sum per block,
    // NVFP4 its final tensor scales (kernels/block/block_scaled.cpp, kernels/emu/bf16_on_fp16.cpp).
    if (info.name.rfind("model_gemm_bf16_on_f16_", 0) == 0) CHECK(o.kind == OrderKind::Pow2Scaled);
    if (info.name.find("_blocksum_") != std::string::npos) CHECK((o.kind == OrderKind::BlockedK && o.inner == Combine::Exact));
    if (k->traits().block.active()) CHECK((o.final_scale == FinalScale::Tensor) == k->traits().block.format->tensor_scale);
    // model_gemm_f64_noorder declares no order on purpose: the envelope and statistical tiers alone (docs/fp64.md);
    // model_gemm_f64_ozaki2 declares its scheme (ozaki2:moduli=20): an exact integer product rounded once, not a sum
    // of rounded products (docs/fp64.md, "The built-in Ozaki-II emulation").
    if (info.name.rfind("model_gemm_f64_ozaki2", 0) == 0) CHECK((o.kind == OrderKind::Ozaki2 && o.moduli == 20));
    // The cuBLASLt FP8 stand-ins declare what cuBLASLt declares, an unknown order on its FP8 instructions (their own
    // arithmetic the Hopper FP8 card's: kernels/gemm/cpu/epilogue_models.cpp, lt_fp8_call).
    const bool lt_stand_in = info.name.rfind("model_gemm_e4m3_ltcall_", 0) == 0;
    if (lt_stand_in) CHECK((o.block_model.params && !o.block_model.instruction.empty()));
    if (info.name == "model_gemm_f64_noorder" || lt_stand_in) CHECK(!o.known());
    else CHECK(o.known());
    ++known;
  }
  CHECK(known >= 40);
}
