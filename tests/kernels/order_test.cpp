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
      ulps,
  };
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
  }
  CHECK(order_spec(SummationOrder::sequential()) == "sequential:step=fma");
  CHECK(parse_order_spec("splitk:splits=8").outer == Combine::Sequential);
}

TEST_CASE("malformed order specs are InputErrors naming the problem") {
  CHECK_THROWS_WITH_AS(parse_order_spec("zigzag"), doctest::Contains("unknown order kind 'zigzag'"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("sequential:block=4"), doctest::Contains("unknown key 'block' for sequential (valid: ulps, step)"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("splitk:splits=1"), doctest::Contains("splits >= 2"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("blocked:block=0"), doctest::Contains("block >= 1"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("blocked:block=x"), doctest::Contains("non-negative integer"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("split_products:scheme=5xfoo"), doctest::Contains("unknown split scheme '5xfoo' (valid: 3xtf32"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("tensor_core:k=16,fused=5"), doctest::Contains("must divide"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("sequential:step"), doctest::Contains("key=value"), InputError);
  CHECK_THROWS_WITH_AS(parse_order_spec("tensor_core:k=16,rounding=rx"), doctest::Contains("unknown mode 'rx'"), InputError);
}

TEST_CASE("every built-in CPU model declares its order; the bf16-on-fp16 models' scaling is outside the vocabulary") {
  int known = 0;
  for (const auto& info : kernel_registry()) {
    if (info.backend != Backend::Cpu || info.mutant || info.operation != Operation::Gemm) continue;
    const auto k = make_gemm_kernel(info.name);
    const SummationOrder& o = k->traits().sum_order;
    CAPTURE(info.name);
    CHECK(check_order(o).empty());
    CHECK(describe_traits(k->traits()).find("order " + order_spec(o)) != std::string::npos);
    // Outside the vocabulary: the bf16-on-fp16 models' scaling, block sums rounded once per block and
    // NVFP4's final tensor scale (kernels/block/block_scaled.cpp).
    const bool block_outside = k->traits().block.active() &&
                               (info.name.find("_blocksum_") != std::string::npos || k->traits().block.format->tensor_scale);
    if (info.name.rfind("model_gemm_bf16_on_f16_", 0) == 0 || block_outside) {
      CHECK(o.kind == OrderKind::Unknown);
      continue;
    }
    CHECK(o.known());
    ++known;
  }
  CHECK(known >= 19);
}
