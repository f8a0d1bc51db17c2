// tests/suites/order_free_test.cpp — order-free elements (docs/bound_model.md, "Order-free elements"): which
// elements qualify (each rule tried on hand-made dots whose answer is worked out here), correct kernels in
// every valid order pass the order_free case with their order withheld, and faults the envelope admits (one
// ulp, lost operand bits, flushed subnormals, a last rounding toward zero) fail it bit for bit.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "generators/generate.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/kernel.hpp"
#include "oracle/block/block_format.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/verdict/bound.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/verdict/order_free.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"
#include "tests/support/withheld.hpp"

using namespace fpcert;
using test::Withheld;

namespace {

/// One dot (m = n = 1) of the given products a_q * 1.
OrderFreeElements one_dot(const KernelTraits& t, const std::vector<double>& a, const std::vector<double>* a_op = nullptr) {
  const std::vector<double> b(a.size(), 1.0);
  return order_free_elements(t, 1, 1, static_cast<std::int64_t>(a.size()), a, b, a_op ? *a_op : a, b);
}

KernelTraits unknown_f32() {
  KernelTraits t;
  t.order = "unknown";
  return t;
}

CaseResult run(GemmKernel& k, const Problem& p) {
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto api = make_host_api();
  return test::run_graded(k, p, ref, *api, RunOptions{}, BoundVariant::Componentwise);
}

/// The case's bitwise check on its order-free elements (there must be one).
const CheckResult& order_free_check(const CaseResult& r) {
  const CheckResult* b = find_check(r, CheckKind::Bitwise);
  REQUIRE(b);
  CHECK(b->detail.find("order-free") != std::string::npos);
  return *b;
}

std::string order_free_spec(const KernelTraits& t, std::uint64_t seed, std::int64_t m = 24) {
  const Format& st = storage_format(*t.a_input, *t.a_operand);
  const char* acc = *t.acc == f16 ? "f16" : *t.acc == bf16 ? "bf16" : "f32";
  return fmt::format("order_free:m={},n=10,k=300,target={},acc={},seed={}", m, st.tag, acc, seed % 1000003);
}

}  // namespace

TEST_CASE("order_free_elements: each rule on dots worked out by hand") {
  const KernelTraits t = unknown_f32();
  const double two24 = 0x1p24;
  SUBCASE("exact sums, in any order: 1 + 2 + 3 = 6") {
    const auto r = one_dot(t, {1, 2, 3});
    CHECK(r.kind[0] == OrderFreeKind::ExactSum);
    CHECK(r.expect[0] == round_double(f32, 6.0, Rounder::nearest(f32)).code);
  }
  SUBCASE("a sum of magnitudes at 2^24 times the lowest bit is not: 2^24 - 1 + 1 needs no rounding, but -1 first might") {
    CHECK(one_dot(t, {two24 - 1, 1}).kind[0] == OrderFreeKind::OneRounding);  // exactly two products: one rounding (exact here)
    CHECK(one_dot(t, {two24 - 1, 1, 1}).kind[0] == OrderFreeKind::None);        // 2^24 + 1 on the way: order-dependent
    CHECK(one_dot(t, {two24 - 2, 1}).kind[0] == OrderFreeKind::ExactSum);       // 2^24 - 1 < 2^24
  }
  SUBCASE("two products rounded once to nearest: 2^24 + 3 gives 2^24 + 4") {
    const auto r = one_dot(t, {two24, 3});
    CHECK(r.kind[0] == OrderFreeKind::OneRounding);
    CHECK(to_double(f32, r.expect[0]) == two24 + 4);
    KernelTraits rz = t;
    rz.acc_rounding = Rounding::TowardZero;  // declared toward zero: the block model's rounding is not claimed exactly
    CHECK(one_dot(rz, {two24, 3}).kind[0] == OrderFreeKind::None);
    CHECK(one_dot(rz, {two24, 4}).kind[0] == OrderFreeKind::ExactSum);
  }
  SUBCASE("a sum of zero takes either sign") {
    CHECK(one_dot(t, {1.5, -1.5}).kind[0] == OrderFreeKind::ExactZero);
    CHECK(one_dot(t, {0.0, -0.0}).kind[0] == OrderFreeKind::ExactZero);
  }
  SUBCASE("a product that fp32 cannot hold, or an operand the kernel narrows, disqualifies the element") {
    CHECK(one_dot(t, {1 + 0x1p-20, 1 + 0x1p-20}).kind[0] == OrderFreeKind::ExactSum);  // each product exact: 1 + 2^-20
    std::vector<double> a = {(1 + 0x1p-20) * (1 + 0x1p-20)};                            // 41 bits: not an fp32 value
    CHECK(one_dot(t, a).kind[0] == OrderFreeKind::None);
    const std::vector<double> narrowed = {1.0, 2.0}, in = {1.0 + 0x1p-15, 2.0};
    CHECK(one_dot(t, in, &narrowed).kind[0] == OrderFreeKind::None);
  }
  SUBCASE("subnormal sums are exact where the accumulator has subnormals") {
    const double s = 0x1p-149;
    const auto r = one_dot(t, {3 * s, 5 * s, -s});
    CHECK(r.kind[0] == OrderFreeKind::ExactSum);
    CHECK(to_double(f32, r.expect[0]) == 7 * s);
  }
  SUBCASE("a tensor-core block keeping fewer bits than the accumulator bounds what counts as exact") {
    KernelTraits tc = t;
    FusedDotParams card;
    card.align_bits = 13;
    tc.sum_order.block_model.params = card;
    CHECK(one_dot(tc, {4096, 1, 2}).kind[0] == OrderFreeKind::ExactSum);     // 13 bits
    CHECK(one_dot(tc, {8192, 1, 2}).kind[0] == OrderFreeKind::None);         // 14 bits: the alignment may cut the 1
    const double s = 0x1p-149;
    CHECK(one_dot(tc, {3 * s, 5 * s}).kind[0] == OrderFreeKind::ExactSum);  // the card keeps subnormal results
    tc.sum_order.block_model.params->output_subnormals = false;             // one that flushes them
    CHECK(one_dot(tc, {3 * s, 5 * s}).kind[0] == OrderFreeKind::None);
    tc.sum_order.block_model.params->product_frac_bits = 3;                  // products truncated to 4 bits
    CHECK(one_dot(tc, {5, 3}).kind[0] == OrderFreeKind::ExactSum);
    CHECK(one_dot(tc, {17, 3}).kind[0] == OrderFreeKind::None);
  }
  SUBCASE("split operands count only where one slice holds them whole; block-scaled operands not at all") {
    KernelTraits sp = t;
    sp.operand_u = 0x1p-24;
    CHECK(order_free_unavailable(sp).empty());
    CHECK(one_dot(sp, {1.5, 255}).kind[0] == OrderFreeKind::ExactSum);   // 8 bits
    CHECK(one_dot(sp, {1.5, 257}).kind[0] == OrderFreeKind::None);       // 9 bits: two slices
    CHECK(one_dot(sp, {1.5, 0x1p-20}).kind[0] == OrderFreeKind::None);   // below fp16's normal range
    KernelTraits bs = t;
    bs.block.format = find_block_format("mxfp8");
    REQUIRE(bs.block.active());
    CHECK_FALSE(order_free_unavailable(bs).empty());
    CHECK(one_dot(bs, {1, 2}).count() == 0);
  }
}

TEST_CASE("correct kernels in every valid order pass the order_free case with their order withheld, bit for bit") {
  const std::uint64_t seed = test::seed();
  CAPTURE(seed);
  for (const char* name : {"model_gemm_f32", "model_gemm_f32_splitk4", "model_gemm_f32_pairwise", "model_gemm_f32_muladd",
                           "model_gemm_f16_f32acc", "model_gemm_f16_f32acc_blocked32", "model_gemm_f16_f16acc", "model_gemm_bf16_f32acc",
                           "model_gemm_tf32_f32acc"}) {
    CAPTURE(name);
    Withheld w(make_gemm_kernel(name), std::string(name) + "_withheld");
    const Problem p = generate(order_free_spec(w.traits(), seed));
    CAPTURE(p.spec);
    const CaseResult r = run(w, p);
    INFO(r.reason);
    CHECK(r.status == CaseStatus::Pass);
    CHECK(order_free_check(r).passed);
    // Round to nearest declared: every element (exact, pair and tiny rows) has one value; the case is bitwise.
    if (w.traits().acc_rounding == Rounding::NearestEven && std::string(name) != "model_gemm_f16_f32acc_blocked32") CHECK(r.tier == Tier::Bitwise);
  }
}

TEST_CASE("faults inside the envelope fail the order_free case bit for bit") {
  const std::uint64_t seed = test::seed() + 1;
  CAPTURE(seed);
  struct Expect {
    const char* kernel;
    Fault fault;
  };
  for (const Expect& e : {Expect{"model_gemm_f32", Fault::OutputUlp}, Expect{"model_gemm_f32", Fault::PrecisionSwitch},
                          Expect{"model_gemm_f32", Fault::OutputTowardZero}, Expect{"model_gemm_f32", Fault::FlushInputs},
                          Expect{"model_gemm_f32", Fault::FlushOutputs}, Expect{"model_gemm_f16_f16acc", Fault::OutputUlp},
                          Expect{"model_gemm_f16_f16acc", Fault::PrecisionSwitch}, Expect{"model_gemm_f16_f16acc", Fault::FlushOutputs},
                          Expect{"model_gemm_bf16_f32acc", Fault::FlushInputs}}) {
    Withheld w(make_fault_injector(make_gemm_kernel(e.kernel), e.fault), fmt::format("{}~{}_withheld", e.kernel, fault_info(e.fault).id));
    CAPTURE(w.name());
    const Problem p = generate(order_free_spec(w.traits(), seed, 27));
    const CaseResult r = run(w, p);
    INFO(r.reason);
    CHECK(r.status == CaseStatus::Fail);
    CHECK_FALSE(order_free_check(r).passed);
  }
}

TEST_CASE("equivalent mutants are not applicable: a last truncation under declared truncation, DAZ before a narrowing") {
  KernelTraits t = unknown_f32();
  t.acc_rounding = Rounding::TowardZero;
  CHECK_FALSE(fault_not_applicable(Fault::OutputTowardZero, t).empty());
  t.sum_order = SummationOrder::sequential();  // a declared order: the bitwise tier tells the truncations apart
  CHECK(fault_not_applicable(Fault::OutputTowardZero, t).empty());
  t.sum_order = SummationOrder::unknown();
  t.acc_rounding = Rounding::NearestEven;
  CHECK(fault_not_applicable(Fault::OutputTowardZero, t).empty());
  // fp32 inputs narrowed to fp16 (smallest subnormal 2^-24): every fp32 subnormal becomes a zero of its sign.
  KernelTraits n = unknown_f32();
  n.a_operand = n.b_operand = &f16;
  CHECK_FALSE(fault_not_applicable(Fault::FlushInputs, n).empty());
  n.a_operand = n.b_operand = &bf16;  // bf16 keeps fp32's range: its subnormals survive the narrowing
  CHECK(fault_not_applicable(Fault::FlushInputs, n).empty());
  n.a_operand = &f16;  // B still reaches bf16 subnormals
  CHECK(fault_not_applicable(Fault::FlushInputs, n).empty());
}
