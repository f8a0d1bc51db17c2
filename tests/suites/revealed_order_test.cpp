// tests/suites/revealed_order_test.cpp — certification with a revealed order (suites/reveal/revealed_order.hpp,
// docs/reveal.md, "Certifying with a revealed order"): CPU kernels of known order that declare none reach
// the bitwise tier with the tree revealed at the case's shape and pass; kernels that do not compute their
// revealed tree — one ulp off where the probes never look, an order changed after the revelation,
// nondeterministic, data-dependent — fail or fall back to the declared tier with the reason, never pass
// bitwise; an order read from a revelation's JSON holds for its own shape only.
#include <doctest/doctest.h>

#include <bit>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "base/error.hpp"
#include "generators/generate.hpp"
#include "kernels/tc/probe.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results_json.hpp"
#include "suites/reveal/revealed_order.hpp"
#include "tests/support/order_kernels.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

std::shared_ptr<OrderSource> revealing(std::uint64_t samples = 1024) {
  OrderSourceOptions o;
  o.reveal_all = true;
  o.seed = test::seed();
  o.check_samples = samples;
  return std::make_shared<OrderSource>(o);
}

/// One case of `spec` on `kernel`, graded with the orders of `src` (null: the declared order).
CaseResult certify_case(GemmKernel& kernel, const std::shared_ptr<OrderSource>& src, const std::string& spec) {
  const Problem p = generate(spec);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto api = make_host_api();
  RunOptions o;
  o.orders = src;
  return test::run_graded(kernel, p, ref, *api, o);
}

std::string spec_of(std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed, const char* family = "uniform") {
  return std::string(family) + ":m=" + std::to_string(m) + ",n=" + std::to_string(n) + ",k=" + std::to_string(k) + ",seed=" + std::to_string(seed);
}

/// The case passed in the bitwise tier with the revealed order, and the check says so.
void expect_bitwise_revealed(const CaseResult& r) {
  CAPTURE(r.kernel);
  CAPTURE(r.reason);
  REQUIRE(r.order.has_value());
  CAPTURE(r.order->fallback);
  CHECK(r.order->used);
  CHECK(r.order->source == "revealed");
  CHECK(r.status == CaseStatus::Pass);
  CHECK(r.tier == Tier::Bitwise);
  const CheckResult* b = find_check(r, CheckKind::Bitwise);
  REQUIRE(b != nullptr);
  CHECK(b->passed);
  CHECK(b->detail.find("equal bit for bit to the emulation of the revealed order") != std::string::npos);
  CHECK_FALSE(r.order->tree.empty());
  CHECK(r.order->launches > 0);
  CHECK(r.order->checks.find("replay on random inputs") != std::string::npos);
}

/// Whatever happened, the case did not pass bitwise with the revealed order; a fall-back says why.
void expect_refused_or_fallback(const CaseResult& r) {
  CAPTURE(r.kernel);
  CAPTURE(r.reason);
  REQUIRE(r.order.has_value());
  CAPTURE(r.order->fallback);
  const bool passed_bitwise = r.status == CaseStatus::Pass && r.tier == Tier::Bitwise && r.order->used;
  CHECK_FALSE(passed_bitwise);
  if (!r.order->used) {
    CHECK_FALSE(r.order->fallback.empty());
    CHECK(r.tier != Tier::Bitwise);  // the test kernels declare no order: their declared tier is the envelope
    bool flagged = false;
    for (const auto& f : r.flags) flagged = flagged || f.find("not used (") != std::string::npos;
    CHECK(flagged);
  } else {
    CHECK(r.status == CaseStatus::Fail);
  }
}

FusedDotParams hopper_f16() { return *tc::mma_sim_hopper(*tc::find_instruction("mma_f16_f32")); }

/// fp32 FMA chain in k order, or in reverse once *reversed is set (a kernel whose order changes between calls).
std::unique_ptr<test::LoopKernel> switching_kernel(std::shared_ptr<bool> reversed) {
  return std::make_unique<test::LoopKernel>("test_switching", test::f32_traits(), [reversed](const auto& a, const auto& b, auto, auto) {
    std::vector<std::size_t> ord = test::range_of(0, a.size());
    if (*reversed) std::reverse(ord.begin(), ord.end());
    return test::f32_code(test::fma_chain(a, b, ord));
  });
}

/// The sequential chain, one ulp further from zero wherever an input is not a power of two or zero: the
/// probe values (powers of two and zeros) never show it.
std::unique_ptr<test::LoopKernel> ulp_off_kernel() {
  return std::make_unique<test::LoopKernel>("test_ulp_off", test::f32_traits(), [](const auto& a, const auto& b, auto, auto) {
    const float c = test::fma_chain(a, b, test::range_of(0, a.size()));
    bool plain = false;
    for (std::size_t t = 0; t < a.size(); ++t)
      for (double v : {a[t], b[t]}) {
        int e = 0;
        plain = plain || (v != 0 && std::fabs(std::frexp(v, &e)) != 0.5);
      }
    const std::uint64_t code = test::f32_code(c);
    return plain && std::isfinite(c) && c != 0 ? code + 1 : code;
  });
}

}  // namespace

TEST_CASE("revealed order: CPU kernels of known order that declare none reach the bitwise tier and pass") {
  const auto src = revealing();
  SUBCASE("sequential") {
    auto k = test::sequential_kernel();
    // Without the revealed order the kernel declares none: the envelope decides.
    const CaseResult declared = certify_case(*k, nullptr, spec_of(12, 12, 67, 1));
    CHECK(declared.status == CaseStatus::Pass);
    CHECK(declared.tier != Tier::Bitwise);
    CHECK_FALSE(declared.order.has_value());
    const CaseResult r = certify_case(*k, src, spec_of(12, 12, 67, 1));
    expect_bitwise_revealed(r);
    CHECK(r.order->tree.find("sequential") != std::string::npos);
  }
  SUBCASE("pairwise") { expect_bitwise_revealed(certify_case(*test::pairwise_kernel(), src, spec_of(12, 12, 100, 2, "normal"))); }
  SUBCASE("blocked: blocks of 32") { expect_bitwise_revealed(certify_case(*test::blocked_kernel(32), src, spec_of(12, 12, 150, 3))); }
  SUBCASE("split-K: four chunks, partials pairwise") {
    expect_bitwise_revealed(certify_case(*test::split_k4_pairwise_kernel(), src, spec_of(12, 12, 130, 4)));
  }
  SUBCASE("a simulated tensor-core kernel: fused nodes of 16 by the published Hopper model") {
    const CaseResult r = certify_case(*test::fused_block_kernel(hopper_f16(), 16), src, spec_of(12, 12, 96, 5));
    expect_bitwise_revealed(r);
    CHECK(r.order->arithmetic.find("MMA-Sim") != std::string::npos);
  }
  SUBCASE("two classes of elements (sequential top rows, pairwise bottom rows)") {
    const CaseResult r = certify_case(*test::two_tiles_kernel(5), src, spec_of(12, 12, 64, 6));
    expect_bitwise_revealed(r);
    CHECK(r.order->tree.find("rows 0..4") != std::string::npos);
    CHECK(r.order->tree.find("rows 5..11") != std::string::npos);
  }
}

TEST_CASE("revealed order: one revelation per kernel and shape, reused by the run's other cases") {
  auto runs = std::make_shared<int>(0);
  test::LoopKernel k("test_counted", test::f32_traits(),
                     [](const auto& a, const auto& b, auto, auto) { return test::f32_code(test::fma_chain(a, b, test::range_of(0, a.size()))); }, runs);
  const auto src = revealing();
  const CaseResult first = certify_case(k, src, spec_of(8, 8, 40, 7));
  expect_bitwise_revealed(first);
  const int after_first = *runs;
  const CaseResult second = certify_case(k, src, spec_of(8, 8, 40, 8, "normal"));
  expect_bitwise_revealed(second);
  CHECK(*runs - after_first == 2);  // the case's own checked and timed runs only
  CHECK(second.order->launches == first.order->launches);
  const CaseResult other = certify_case(k, src, spec_of(8, 8, 41, 9));  // another shape: revealed again
  expect_bitwise_revealed(other);
  CHECK(*runs - after_first > 4);
  CHECK(other.order->k == 41);
}

TEST_CASE("revealed order: kernels that do not compute their revealed tree fail or fall back, with the reason") {
  SUBCASE("one ulp off where the probes never look: the replay check on random inputs refuses the tree") {
    const CaseResult r = certify_case(*ulp_off_kernel(), revealing(), spec_of(12, 12, 64, 10));
    expect_refused_or_fallback(r);
    CHECK_FALSE(r.order->used);
    CHECK(r.order->fallback.find("elements equal to the kernel on random inputs") != std::string::npos);
    CHECK(r.order->tree.find("sequential") != std::string::npos);  // the order itself was found
    // --reveal-strict: a revealed, verified tree that does not replay the kernel fails the case.
    OrderSourceOptions o;
    o.reveal_all = true;
    o.strict = true;
    o.seed = test::seed();
    const CaseResult strict = certify_case(*ulp_off_kernel(), std::make_shared<OrderSource>(o), spec_of(12, 12, 64, 10));
    CHECK(strict.status == CaseStatus::Fail);
    bool failed_bitwise = false;
    for (const auto& c : strict.checks) failed_bitwise = failed_bitwise || (c.kind == CheckKind::Bitwise && !c.passed && c.detail.find("--reveal-strict") != std::string::npos);
    CHECK(failed_bitwise);
    // A correct kernel is not refused by it.
    expect_bitwise_revealed(certify_case(*test::sequential_kernel(), std::make_shared<OrderSource>(o), spec_of(12, 12, 64, 10)));
  }
  SUBCASE("an order that changes after the revelation (a later call sums in reverse): the bitwise check fails") {
    auto reversed = std::make_shared<bool>(false);
    auto k = switching_kernel(reversed);
    const auto src = revealing();
    auto api = make_host_api();
    REQUIRE(src->order_for(*k, *api, 12, 12, 64)->record.used);  // revealed while it summed in k order
    *reversed = true;
    const CaseResult r = certify_case(*k, src, spec_of(12, 12, 64, 11));
    expect_refused_or_fallback(r);
    CHECK(r.status == CaseStatus::Fail);
    const CheckResult* b = find_check(r, CheckKind::Bitwise);
    REQUIRE(b != nullptr);
    CHECK_FALSE(b->passed);
    CHECK(b->detail.find("differ from the emulation of the revealed order") != std::string::npos);
  }
  SUBCASE("a different order on every launch: nondeterministic, not revealed, and the case fails") {
    const CaseResult r = certify_case(*test::rotating_kernel(), revealing(), spec_of(12, 12, 64, 12));
    expect_refused_or_fallback(r);
    CHECK(r.order->fallback.find("nondeterministic") != std::string::npos);
    CHECK(r.status == CaseStatus::Fail);
  }
  SUBCASE("an order that depends on the data") {
    expect_refused_or_fallback(certify_case(*test::data_dependent_kernel(), revealing(), spec_of(12, 12, 64, 13, "normal")));
  }
  SUBCASE("a launch budget too small: the shape falls back to the declared tier") {
    OrderSourceOptions o;
    o.reveal_all = true;
    o.max_launches = 1;
    const CaseResult r = certify_case(*test::pairwise_kernel(), std::make_shared<OrderSource>(o), spec_of(12, 12, 100, 14));
    expect_refused_or_fallback(r);
    CHECK(r.status == CaseStatus::Pass);  // a correct kernel: the envelope still passes it
    CHECK(r.order->fallback.find("max-launches") != std::string::npos);
  }
}

TEST_CASE("revealed order: an order file holds for its kernel and shape; the record survives JSON") {
  auto k = test::split_k4_pairwise_kernel();
  auto api = make_host_api();
  RevealOptions ro;
  ro.m = 10;
  ro.n = 10;
  ro.k = 90;
  ro.seed = test::seed();
  const RevealResult revealed = reveal_order(*k, *api, ro);
  REQUIRE(revealed.status == "revealed");
  const auto dir = std::filesystem::temp_directory_path() / ("fpcert_order_file_" + std::to_string(test::seed()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "order.json").string();
  std::ofstream(path) << to_json(revealed).dump(1);
  OrderSourceOptions o;
  o.files.push_back(read_order_file(path));
  o.seed = test::seed();
  const auto src = std::make_shared<OrderSource>(o);
  CHECK(src->applies("test_split_k4"));
  CHECK(src->applies("test_split_k4~out_ulp"));  // its mutants follow it
  CHECK_FALSE(src->applies("test_sequential"));
  const CaseResult r = certify_case(*k, src, spec_of(10, 10, 90, 15));
  CAPTURE(r.reason);
  REQUIRE(r.order.has_value());
  CAPTURE(r.order->fallback);
  CHECK(r.order->used);
  CHECK(r.order->source == "file");
  CHECK(r.order->file == path);
  CHECK(r.tier == Tier::Bitwise);
  CHECK(r.status == CaseStatus::Pass);
  // Another shape: the file says nothing about it; the case falls back and says so.
  const CaseResult other = certify_case(*k, src, spec_of(10, 10, 91, 16));
  REQUIRE(other.order.has_value());
  CHECK_FALSE(other.order->used);
  CHECK(other.order->fallback.find("no revealed order for test_split_k4 at 10x10x91") != std::string::npos);
  CHECK(other.tier != Tier::Bitwise);
  // The record through JSON.
  const CaseResult back = case_from_json(to_json(r));
  REQUIRE(back.order.has_value());
  CHECK(back.order->source == "file");
  CHECK(back.order->tree == r.order->tree);
  CHECK(back.order->used);
  CHECK(back.order->launches == r.order->launches);
  // Files that are not a successful revelation are refused.
  nlohmann::json bad = to_json(revealed);
  bad["status"] = "inconsistent";
  std::ofstream(dir / "bad.json") << bad.dump();
  CHECK_THROWS_WITH_AS(read_order_file((dir / "bad.json").string()), doctest::Contains("did not succeed"), InputError);
  std::ofstream(dir / "junk.json") << "{";
  CHECK_THROWS_AS(read_order_file((dir / "junk.json").string()), InputError);
  CHECK_THROWS_AS(read_order_file((dir / "missing.json").string()), InputError);
  std::filesystem::remove_all(dir);
}
