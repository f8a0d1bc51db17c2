// tests/suites/reveal_test.cpp — order revelation on the CPU: the breadth-first search recovers random
// trees from exact answers and refuses answers no tree gives; the probe values respect the formats;
// and whole revelations of CPU kernels whose loops implement known orders (sequential, pairwise,
// blocked, split-K, interleaved, a simulated tensor-core kernel) recover exactly those orders, replay
// them bit for bit, and report what they must: classes by tile, non-determinism, data dependence.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "base/error.hpp"
#include "base/philox.hpp"
#include "kernels/tc/probe.hpp"
#include "suites/reveal/reveal.hpp"
#include "tests/support/order_kernels.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// Answers from a known tree (exact), with a chosen all-pairs limit; counts its batches.
class TreeSource final : public PairSource {
 public:
  TreeSource(const SumTree& t, int limit) : idx_(t), limit_(limit) {}
  void answer(const std::vector<PairBlock>& blocks, PairAnswers& out) override {
    ++batches;
    for (const auto& b : blocks)
      for (int x : b.rows)
        for (int y : b.cols)
          if (x != y) out.put(x, y, idx_.lca_size(x, y));
  }
  int all_pairs_limit() const override { return limit_; }
  int batches = 0;

 private:
  LcaIndex idx_;
  int limit_;
};

/// Every pair answers 2: no tree of more than two products does that.
class LiarSource final : public PairSource {
 public:
  void answer(const std::vector<PairBlock>& blocks, PairAnswers& out) override {
    for (const auto& b : blocks)
      for (int x : b.rows)
        for (int y : b.cols)
          if (x != y) out.put(x, y, 2);
  }
  int all_pairs_limit() const override { return 4; }
};

SumTree random_tree(int k, std::uint64_t seed) {
  SumTree t;
  t.k = k;
  std::vector<int> roots;
  for (int i = 0; i < k; ++i) roots.push_back(i);
  std::uint64_t d = 0;
  while (roots.size() > 1) {
    const std::size_t n = std::min<std::size_t>(roots.size(), 2 + philox_4x32(seed, 1, d++)[0] % 4);
    std::vector<int> ch;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t pick = philox_4x32(seed, 2, d++)[0] % roots.size();
      ch.push_back(roots[pick]);
      roots.erase(roots.begin() + static_cast<long>(pick));
    }
    roots.push_back(t.add(ch));
  }
  t.root = roots.front();
  return t;
}

RevealOptions options(std::int64_t m, std::int64_t n, std::int64_t k, bool replay = true) {
  RevealOptions o;
  o.m = m;
  o.n = n;
  o.k = k;
  o.seed = test::seed();
  o.replay = replay;
  o.replay_samples = 2000;
  return o;
}

RevealResult reveal(GemmKernel& kernel, const RevealOptions& o) {
  auto api = make_host_api();
  return reveal_order(kernel, *api, o);
}

/// The kernel's revealed tree is `want`, every check passed, the replay agreed bit for bit.
void expect_revealed(GemmKernel& kernel, const RevealOptions& o, const SumTree& want) {
  const RevealResult r = reveal(kernel, o);
  CAPTURE(kernel.name());
  CAPTURE(r.message);
  CAPTURE(r.plan);
  REQUIRE(r.status == "revealed");
  REQUIRE(r.classes.size() == 1);
  const RevealClass& c = r.classes.front();
  CHECK(c.where == "every element");
  CHECK(c.revealed);
  CHECK(same_order(c.tree, want));
  CHECK(c.verified > 0);
  CHECK(c.verify_mismatches == 0);
  CHECK(r.deterministic);
  CHECK(r.value_check.find(" 0 of ") != std::string::npos);
  // Fewer launches than queries: many pairs per launch.
  CHECK(r.launches < r.queries);
  if (o.replay) {
    CAPTURE(c.replay.assumed);
    CAPTURE(c.replay.why_not);
    CHECK(c.replay.ran);
    CHECK(c.replay.compared >= o.replay_samples);
    CHECK(c.replay.equal == c.replay.compared);
  }
  CHECK(r.passed());
}

FusedDotParams hopper_f16() { return *tc::mma_sim_hopper(*tc::find_instruction("mma_f16_f32")); }

}  // namespace

TEST_CASE("reveal: the breadth-first search recovers random trees exactly, whatever the all-pairs limit") {
  const std::uint64_t seed = test::seed();
  for (int k : {2, 3, 5, 40, 300})
    for (int limit : {2, 16, 64}) {
      const SumTree t = random_tree(k, seed + static_cast<std::uint64_t>(k * 100 + limit));
      TreeSource src(t, limit);
      const TreeSearch s = search_tree(k, src);
      CAPTURE(k);
      CAPTURE(limit);
      REQUIRE_MESSAGE(s.ok, s.why);
      CHECK(same_order(s.tree, t));
      CHECK(s.rounds == src.batches);
    }
}

TEST_CASE("reveal: rounds stay few for chains, fused chains and partitions") {
  for (const auto& [t, most] : std::vector<std::pair<SumTree, int>>{{sequential_tree(4096), 2},
                                                                  {fused_chain_tree(4096, 16), 2},
                                                                  {partitioned_tree(4096, 1024, PartOrder::Sequential, PartOrder::Sequential, 16), 3}}) {
    TreeSource src(t, 64);
    const TreeSearch s = search_tree(t.k, src);
    REQUIRE(s.ok);
    CHECK(same_order(s.tree, t));
    CHECK(s.rounds <= most);
  }
}

TEST_CASE("reveal: answers no tree gives are refused with the reason") {
  LiarSource src;
  const TreeSearch s = search_tree(10, src);
  CHECK_FALSE(s.ok);
  CHECK(s.why.find("must hold") != std::string::npos);
}

TEST_CASE("reveal: probe values fit the formats, or the shape is refused with the reason") {
  KernelTraits f32t;
  const ProbePlan p = plan_probes(f32t, 65536);
  CHECK(p.mode == ProbeMode::Outer);
  CHECK(p.passes == 1);
  CHECK(p.units_per_pass == 65536);
  // 2^ratio must exceed K units by the accumulator's 24 bits, one for rounding and a 2-bit window margin.
  CHECK(p.ratio_bits >= 16 + 24 + 1 + 2);
  KernelTraits h;
  h.a_input = h.b_input = h.a_operand = h.b_operand = &f16;
  const ProbePlan q = plan_probes(h, 65536);
  // fp16 holds a ratio of 2^39 at most (subnormal units); 2^43 needs both operands: paired mode.
  CHECK(q.mode == ProbeMode::Paired);
  CHECK(q.passes == 1);
  CHECK(to_double(f16, q.a_big) / to_double(f16, q.a_unit) * to_double(f16, q.b_big) / to_double(f16, q.b_unit) == std::ldexp(1.0, q.ratio_bits));
  KernelTraits h16 = h;
  h16.acc = h16.out = &f16;
  const ProbePlan r = plan_probes(h16, 4096);
  CHECK(r.passes == 2);  // an fp16 accumulator counts 2^11 units exactly
  CHECK(r.units_per_pass == 2048);
  KernelTraits e = f32t;
  e.a_input = e.b_input = e.a_operand = e.b_operand = &e4m3;
  CHECK_THROWS_WITH_AS(plan_probes(e, 65536), doctest::Contains("launches (the limit is 64)"), InputError);
  CHECK_THROWS_WITH_AS(plan_probes(h16, 1 << 20), doctest::Contains("choose a smaller K"), InputError);
}

TEST_CASE("reveal: CPU kernels of known order give back exactly that order, and replay bit for bit") {
  SUBCASE("sequential (test loop and the built-in fp32 model)") {
    expect_revealed(*test::sequential_kernel(), options(16, 16, 67), sequential_tree(67));
    auto model = make_gemm_kernel("model_gemm_f32");
    expect_revealed(*model, options(16, 12, 256), sequential_tree(256));
  }
  SUBCASE("pairwise") { expect_revealed(*test::pairwise_kernel(), options(16, 16, 200), pairwise_tree(200)); }
  SUBCASE("blocked: blocks of 32, partials added sequentially") {
    expect_revealed(*test::blocked_kernel(32), options(16, 16, 200), partitioned_tree(200, 32, PartOrder::Sequential, PartOrder::Sequential));
  }
  SUBCASE("split-K: four chunks, partials added pairwise") {
    expect_revealed(*test::split_k4_pairwise_kernel(), options(16, 16, 130), partitioned_tree(130, 33, PartOrder::Sequential, PartOrder::Pairwise));
  }
  SUBCASE("interleaved: part j holds k = j mod 4") {
    SumTree want;
    want.k = 64;
    std::vector<int> parts;
    for (int j = 0; j < 4; ++j) {
      int cur = j;
      for (int x = j + 4; x < 64; x += 4) cur = want.add({cur, x});
      parts.push_back(cur);
    }
    want.root = want.add({want.add({want.add({parts[0], parts[1]}), parts[2]}), parts[3]});
    expect_revealed(*test::interleaved4_kernel(), options(16, 16, 64), want);
    const RevealResult r = reveal(*test::interleaved4_kernel(), options(16, 16, 64, false));
    CHECK(r.classes.front().headline.find("interleaved") != std::string::npos);
  }
  SUBCASE("a simulated tensor-core kernel: fused nodes of 16 products, the card's block model replays it") {
    auto k = test::fused_block_kernel(hopper_f16(), 16);
    expect_revealed(*k, options(16, 16, 200), fused_chain_tree(200, 16));
    const RevealResult r = reveal(*k, options(16, 16, 200));
    CHECK(r.classes.front().fused_width == 16);
    CHECK(r.classes.front().card_check.find("fused length 16 — agrees") != std::string::npos);
    CHECK(r.classes.front().replay.assumed.find("MMA-Sim") != std::string::npos);
  }
  SUBCASE("an fp16 accumulator (the built-in model)") {
    auto model = make_gemm_kernel("model_gemm_f16_f16acc");
    expect_revealed(*model, options(16, 16, 100), sequential_tree(100));
  }
}

TEST_CASE("reveal: a block model that is not the kernel's fails the replay, with the elements and what was assumed") {
  FusedDotParams p = hopper_f16();
  p.align_bits = 22;  // a narrower window than the published models'
  auto k = test::fused_block_kernel(p, 16);
  RevealOptions o = options(16, 16, 128);
  const RevealResult r = reveal(*k, o);
  REQUIRE(r.classes.front().revealed);
  CHECK(same_order(r.classes.front().tree, fused_chain_tree(128, 16)));  // the order is still found
  const RevealReplay& rep = r.classes.front().replay;
  CHECK(rep.ran);
  CHECK(rep.equal < rep.compared);
  REQUIRE_FALSE(rep.diffs.empty());
  CHECK(rep.diffs.front().note.find("ulp apart") != std::string::npos);
  CHECK(rep.tried.size() >= 2);
  CHECK_FALSE(r.passed());
  // With the right card the same kernel replays bit for bit.
  o.cards = {{"card under test", p}};
  const RevealResult good = reveal(*k, o);
  CHECK(good.classes.front().replay.assumed.find("card under test") != std::string::npos);
  CHECK(good.classes.front().replay.passed());
  CHECK(good.passed());
}

TEST_CASE("reveal: elements with different orders form classes, each with its own tree") {
  auto k = test::two_tiles_kernel(8);
  const RevealResult r = reveal(*k, options(16, 16, 64));
  CAPTURE(r.message);
  REQUIRE(r.classes.size() == 2);
  CHECK(r.classes[0].where == "rows 0..7 x columns 0..15");
  CHECK(r.classes[1].where == "rows 8..15 x columns 0..15");
  CHECK(same_order(r.classes[0].tree, sequential_tree(64)));
  CHECK(same_order(r.classes[1].tree, pairwise_tree(64)));
  CHECK(r.classes[0].replay.passed());
  CHECK(r.status == "revealed");
  RevealOptions o = options(16, 16, 64, false);
  o.focus_row = 12;  // the focus element's class comes first
  CHECK(reveal(*k, o).classes.front().where == "rows 8..15 x columns 0..15");
}

TEST_CASE("reveal: a kernel whose order changes between launches is reported, not guessed") {
  const RevealResult r = reveal(*test::rotating_kernel(), options(16, 16, 64));
  CHECK(r.status == "nondeterministic");
  CHECK_FALSE(r.deterministic);
  CHECK(r.determinism.find("outputs differ") != std::string::npos);
  CHECK(r.classes.empty());
  CHECK_FALSE(r.passed());
}

TEST_CASE("reveal: a kernel whose order depends on the data does not pass") {
  const RevealResult r = reveal(*test::data_dependent_kernel(), options(16, 16, 64));
  CAPTURE(r.message);
  CHECK_FALSE(r.passed());
  // Either the probes disagree with every tree, or the tree they give does not replay random inputs.
  const bool caught = r.status == "inconsistent" || (!r.classes.empty() && r.classes.front().replay.ran && !r.classes.front().replay.passed());
  CHECK(caught);
}

TEST_CASE("reveal: refused shapes say why and launch nothing; bad arguments are input errors") {
  auto model = make_gemm_kernel("model_gemm_e4m3_f32acc");
  const RevealResult r = reveal(*model, options(8, 8, 65536));
  CHECK(r.status == "refused");
  CHECK(r.message.find("e4m3 x e4m3") != std::string::npos);
  CHECK(r.launches == 0);
  auto f32m = make_gemm_kernel("model_gemm_f32");
  RevealOptions bad = options(8, 8, 16);
  bad.focus_row = 8;
  CHECK_THROWS_AS(reveal(*f32m, bad), InputError);
  CHECK_THROWS_AS(reveal(*f32m, options(0, 8, 16)), InputError);
}
