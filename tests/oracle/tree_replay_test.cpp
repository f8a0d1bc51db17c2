// tests/oracle/tree_replay_test.cpp — a GEMM element in a tree's order: the known orders against the
// loops that define them (written here independently), the fp32 fast path against the exact generic
// path, fused nodes against fused_dot's own chaining, and the nodes a replay must refuse.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "base/error.hpp"
#include "base/philox.hpp"
#include "oracle/order/tree_replay.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// fp32 values spread over 2^-20 .. 2^20 with random signs and significands: sums round often.
std::vector<float> spread(int n, std::uint64_t seed, std::uint64_t stream) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto w = philox_4x32(seed, stream, static_cast<std::uint64_t>(i));
    const float m = 1.0f + static_cast<float>(w[0] >> 9) * 0x1p-23f;
    v[static_cast<std::size_t>(i)] = std::ldexp((w[1] & 1) ? -m : m, static_cast<int>(w[2] % 41) - 20);
  }
  return v;
}
std::vector<std::uint64_t> codes(const std::vector<float>& v) {
  std::vector<std::uint64_t> c;
  for (float x : v) c.push_back(std::bit_cast<std::uint32_t>(x));
  return c;
}
std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

/// fp32 with another tag: the same format, but not `f32`, so TreeReplay takes its exact generic path.
constexpr Format kF32Generic{"f32g", "fp32 (generic path)", 1, 8, 23, 127, true, Specials::IEEE, 32};

float pairwise(const float* a, const float* b, int n) {  // products rounded, recursive halving
  if (n == 1) return a[0] * b[0];
  const int h = (n + 1) / 2;
  return pairwise(a, b, h) + pairwise(a + h, b + h, n - h);
}

}  // namespace

TEST_CASE("tree_replay: known orders equal their loops bit for bit (fp32, fast and generic paths)") {
  const std::uint64_t seed = test::seed();
  const int k = 333;
  int orders_differ = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const auto a = spread(k, seed, 10 + 2 * static_cast<std::uint64_t>(trial));
    const auto b = spread(k, seed, 11 + 2 * static_cast<std::uint64_t>(trial));
    // The loops (independent of the tree code).
    float fma_acc = 0.0f, muladd_acc = 0.0f;
    for (int i = 0; i < k; ++i) {
      fma_acc = std::fma(a[static_cast<std::size_t>(i)], b[static_cast<std::size_t>(i)], fma_acc);
      muladd_acc = muladd_acc + a[static_cast<std::size_t>(i)] * b[static_cast<std::size_t>(i)];
    }
    float split = 0.0f;  // four chunks of 84 (the last 81), each fma from +0, joined sequentially
    for (int s = 0; s < k; s += 84) {
      float part = 0.0f;
      for (int i = s; i < std::min(k, s + 84); ++i) part = std::fma(a[static_cast<std::size_t>(i)], b[static_cast<std::size_t>(i)], part);
      split = s == 0 ? part : split + part;
    }
    const float pw = pairwise(a.data(), b.data(), k);
    for (const Format* acc : {&f32, &kF32Generic}) {
      TreeArith ar;
      ar.acc = acc;
      const auto run = [&](const SumTree& t, LeafJoin j) {
        TreeArith x = ar;
        x.leaf_join = j;
        const TreeReplay r(t, x);
        return static_cast<std::uint32_t>(r.run(r.line_a(codes(a)), r.line_b(codes(b))));
      };
      CAPTURE(acc->tag);
      CHECK(run(sequential_tree(k), LeafJoin::Fma) == bits(fma_acc));
      CHECK(run(sequential_tree(k), LeafJoin::MulAdd) == bits(muladd_acc));
      CHECK(run(partitioned_tree(k, 84, PartOrder::Sequential, PartOrder::Sequential), LeafJoin::Fma) == bits(split));
      CHECK(run(pairwise_tree(k), LeafJoin::MulAdd) == bits(pw));
    }
    orders_differ += bits(fma_acc) != bits(pw) || bits(fma_acc) != bits(split);
  }
  // The test can fail: on most of these inputs the orders disagree (sums round).
  CHECK(orders_differ >= 10);
}

TEST_CASE("tree_replay: fused nodes equal fused_dot's chained blocks; fp16 inputs") {
  FusedDotParams p;  // Hopper's f16 -> f32 block as MMA-Sim describes it: 16 products, 25 bits, RZ
  p.a = p.b = f16;
  p.acc = f32;
  p.fused_length = 16;
  const std::uint64_t seed = test::seed();
  const int k = 100;  // six full blocks and a tail of 4
  TreeArith ar;
  ar.a = ar.b = ar.a_operand = ar.b_operand = &f16;
  ar.fused = p;
  const TreeReplay r(fused_chain_tree(k, 16), ar);
  TreeArith scalar = ar;
  scalar.fused.reset();
  const TreeReplay s(sequential_tree(k), scalar);
  int differ = 0;
  for (int trial = 0; trial < 16; ++trial) {
    std::vector<std::uint32_t> a32(k), b32(k);
    std::vector<std::uint64_t> a64(k), b64(k);
    for (int i = 0; i < k; ++i) {
      const auto w = philox_4x32(seed, 77 + static_cast<std::uint64_t>(trial), static_cast<std::uint64_t>(i));
      a32[static_cast<std::size_t>(i)] = (w[0] & 0x3FFF) | ((w[0] >> 16) & 0x8000);  // |x| < 2: biased exponents 0..15
      b32[static_cast<std::size_t>(i)] = (w[1] & 0x3FFF) | ((w[1] >> 16) & 0x8000);
      a64[static_cast<std::size_t>(i)] = a32[static_cast<std::size_t>(i)];
      b64[static_cast<std::size_t>(i)] = b32[static_cast<std::size_t>(i)];
    }
    const std::uint64_t got = r.run(r.line_a(a64), r.line_b(b64));
    CHECK(got == fused_dot(p, a32.data(), b32.data(), k, 0));
    differ += s.run(s.line_a(a64), s.line_b(b64)) != got;
  }
  // And mostly not what an fp32 FMA chain gives on the same inputs (the test can fail).
  CHECK(differ >= 8);
}

TEST_CASE("tree_replay: nodes the arithmetic cannot evaluate are refused with the reason") {
  TreeArith ar;
  CHECK_THROWS_WITH_AS(TreeReplay(fused_chain_tree(32, 16), ar), doctest::Contains("needs a tensor-core block model"), InputError);
  FusedDotParams p;
  p.a = p.b = f16;
  p.fused_length = 8;
  ar.fused = p;
  CHECK_THROWS_WITH_AS(TreeReplay(fused_chain_tree(32, 16), ar), doctest::Contains("more products than the block model's fused length 8"), InputError);
  SumTree two;  // one 3-term node joining two partial sums
  two.k = 5;
  const int x = two.add({0, 1}), y = two.add({2, 3});
  two.root = two.add({x, y, 4});
  CHECK_THROWS_WITH_AS(TreeReplay(two, ar), doctest::Contains("joins 2 partial sums"), InputError);
}
