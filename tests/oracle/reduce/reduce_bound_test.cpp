// tests/oracle/reduce/reduce_bound_test.cpp — the reduction bounds: their depths against the closed forms,
// every emulated order inside its bound on adversarial data (every mode, accumulator, product rounding and
// output), the bound well below |s| on well-conditioned data (not vacuous), and the cases where it must
// refuse to speak (gamma undefined, the unscaled nrm2 overflow).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/philox.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/reduce/reduce_bound.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

ReduceArith arith(const Format& acc, Rounding r, ProductRounding p = ProductRounding::Exact) {
  ReduceArith a;
  a.acc = &acc;
  a.rounder = {r, default_saturation(acc), NanPayload::Preserve};
  a.products = p;
  a.stochastic_key = 99;
  return a;
}

/// |v - exact| for a double v and a reference hi + lo (+ tail): v - hi - lo summed exactly, rounded to
/// nearest. The tail (and, for nrm2, the irrational rest) is below 2^-105 |exact|, which the caller's
/// tolerance covers.
double error_of(double v, const RefValue& ref) {
  ExactSum e;
  e.add(v);
  e.add(-ref.hi);
  e.add(-ref.lo);
  return std::fabs(e.round_nearest());
}

/// A value of `f` from the code's low `exp_bits_max` exponent codes: sign, exponent field in [0, emax_field],
/// random fraction. emax_field = 0 gives subnormals only.
double value_of(const Format& f, std::uint32_t w0, std::uint32_t w1, int emax_field) {
  const std::uint64_t frac = w0 & f.frac_mask();
  const std::uint64_t ef = static_cast<std::uint64_t>(w1 % static_cast<std::uint32_t>(emax_field + 1));
  const std::uint64_t code = (ef << f.frac_bits) | frac | ((w1 >> 16) & 1 ? f.sign_mask() : 0);
  return to_double(f, code);
}

/// Adversarial vectors of f16 values: random (exponent fields up to 20, |x| < 64), cancellation (x, -x but
/// for every 5th), subnormals only, subnormals with a few normals, all positive (well-conditioned).
std::vector<std::vector<double>> f16_vectors(std::uint64_t key) {
  std::vector<std::vector<double>> out;
  std::uint64_t ctr = 0;
  for (int c = 0; c < 25; ++c) {
    const int n = 1 + static_cast<int>(philox_4x32(key, 51, ctr++)[0] % 400);
    std::vector<double> x;
    const int kind = c % 5;
    for (int i = 0; i < n; ++i) {
      const auto w = philox_4x32(key, 52, ctr++);
      const int emax_field = kind == 2 ? 0 : kind == 3 ? (w[2] % 8 == 0 ? 16 : 0) : 20;
      double v = value_of(f16, w[0], w[1], emax_field);
      if (kind == 4) v = std::fabs(v);
      x.push_back(v);
    }
    if (kind == 1) {
      const std::size_t m = x.size();
      for (std::size_t i = 0; i < m; ++i)
        if (i % 5 != 2) x.push_back(-x[i]);
    }
    out.push_back(x);
  }
  return out;
}

/// bf16 vectors (for the f32 accumulator): exponents over bf16's range up to 2^40, subnormals included.
std::vector<std::vector<double>> bf16_vectors(std::uint64_t key) {
  std::vector<std::vector<double>> out;
  std::uint64_t ctr = 0;
  for (int c = 0; c < 12; ++c) {
    const int n = 1 + static_cast<int>(philox_4x32(key, 53, ctr++)[0] % 400);
    std::vector<double> x;
    for (int i = 0; i < n; ++i) {
      const auto w = philox_4x32(key, 54, ctr++);
      x.push_back(value_of(bf16, w[0], w[1], c % 2 ? 166 : 4));  // 166: up to 2^39; 4: subnormals and tiny normals
    }
    if (c % 3 == 0) {
      const std::size_t m = x.size();
      for (std::size_t i = 0; i < m; ++i)
        if (i % 9 != 4) x.push_back(-x[i]);
    }
    out.push_back(x);
  }
  return out;
}

const ReduceOrder kOrders[] = {ReduceOrder::sequential(),   ReduceOrder::sequential(ChainStart::First),
                               ReduceOrder::pairwise(),     ReduceOrder::blocked(1),
                               ReduceOrder::blocked(7),     ReduceOrder::blocked(64, ChainStart::First),
                               ReduceOrder::warp_tree(),    ReduceOrder::warp_tree(4, ChainStart::First),
                               ReduceOrder::numpy_pairwise(), ReduceOrder::numpy_pairwise(100),
                               ReduceOrder::block_tree(4, WarpCombine::Sequential, 8),
                               ReduceOrder::block_tree(4, WarpCombine::Butterfly, 8, ChainStart::First)};

}  // namespace

TEST_CASE("reduce_bound: depths are the closed forms") {
  // Sums: sequential n - 1, pairwise ceil(log2 n), blocked (B - 1) + (ceil(n/B) - 1), warp (ceil(n/32) - 1) + 5.
  const ProductRounding ex = ProductRounding::Exact, rd = ProductRounding::Rounded;
  CHECK(rounding_depth(ReduceKind::Sum, 1000, ReduceOrder::sequential(), ex) == 999);
  CHECK(rounding_depth(ReduceKind::Sum, 1000, ReduceOrder::unknown(), ex) == 999);
  CHECK(rounding_depth(ReduceKind::Sum, 1000, ReduceOrder::pairwise(), ex) == 10);
  CHECK(rounding_depth(ReduceKind::Sum, 1024, ReduceOrder::pairwise(), ex) == 10);
  CHECK(rounding_depth(ReduceKind::Sum, 1025, ReduceOrder::pairwise(), ex) == 11);
  CHECK(rounding_depth(ReduceKind::Sum, 1000, ReduceOrder::blocked(64), ex) == 63 + 15);
  CHECK(rounding_depth(ReduceKind::Sum, 10, ReduceOrder::blocked(64), ex) == 9);
  CHECK(rounding_depth(ReduceKind::Sum, 1000, ReduceOrder::warp_tree(), ex) == 31 + 5);
  CHECK(rounding_depth(ReduceKind::Sum, 1, ReduceOrder::warp_tree(), ex) == 5);
  CHECK(rounding_depth(ReduceKind::Sum, 0, ReduceOrder::sequential(), ex) == 0);
  // A dot adds one rounding to each term: an exact product rounded alone, or the product's own rounding
  // (Higham §3.1: gamma_n for an inner product of length n).
  CHECK(rounding_depth(ReduceKind::Dot, 1000, ReduceOrder::sequential(), ex) == 1000);
  CHECK(rounding_depth(ReduceKind::Dot, 1000, ReduceOrder::sequential(), rd) == 1000);
  CHECK(rounding_depth(ReduceKind::Nrm2, 1000, ReduceOrder::warp_tree(), rd) == 37);
  CHECK(depth_formula(ReduceKind::Sum, 1000, ReduceOrder::blocked(64), ex) == "h = (min(B, n) - 1) + (ceil(n/B) - 1) = 63 + 15 = 78");
  // NumPy: 100 terms: 12 per accumulator (11 additions), 3 combining levels, 4 leftovers: 18. 1000 terms: halves
  // 496 and 504, then 248 + 248 and 248 + 256, then 120 + 128 and 128 + 128: 128 terms is 15 + 3 = 18, plus three
  // halvings: 21.
  CHECK(rounding_depth(ReduceKind::Sum, 100, ReduceOrder::numpy_pairwise(), ex) == 18);
  CHECK(rounding_depth(ReduceKind::Sum, 1000, ReduceOrder::numpy_pairwise(), ex) == 21);
  CHECK(rounding_depth(ReduceKind::Sum, 7, ReduceOrder::numpy_pairwise(), ex) == 6);
  // Block tree, 8 warps of 32 lanes (T = 256), n = 10000: ceil(10000/256) = 40 terms a thread (39), 5 levels,
  // then 7 sequential additions of warps or 5 more levels.
  CHECK(rounding_depth(ReduceKind::Sum, 10000, ReduceOrder::block_tree(8), ex) == 39 + 5 + 7);
  CHECK(rounding_depth(ReduceKind::Sum, 10000, ReduceOrder::block_tree(8, WarpCombine::Butterfly), ex) == 39 + 5 + 5);
  // 20000 terms: chunks of 8192, 8192, 3616; the first chunk's tree (128-term leaves after six halvings: 18 + 6)
  // and two more additions.
  CHECK(rounding_depth(ReduceKind::Sum, 20000, ReduceOrder::numpy_pairwise(), ex) == 24 + 2);
}

TEST_CASE("reduce_bound: every emulated order lies within its bound (every mode, f32 and f16 accumulators)") {
  const std::uint64_t key = test::seed();
  std::uint64_t checked = 0, ctr = 0;
  double worst = 0;  // the largest error / bound seen
  struct Setup {
    const Format* acc;
    std::vector<std::vector<double>> data;
    std::vector<const Format*> outs;
  };
  const Setup setups[] = {{&f16, f16_vectors(key), {&f16, &f32, &e4m3}}, {&f32, f16_vectors(key + 1), {&f32, &f16, &bf16}},
                          {&f32, bf16_vectors(key), {&f32, &bf16}}};
  for (const Setup& su : setups)
    for (const auto& x : su.data)
      for (ReduceKind kind : {ReduceKind::Sum, ReduceKind::Dot, ReduceKind::Nrm2}) {
        // The dot's y: x reversed (products of unlike magnitudes, the same cancellation pattern).
        const std::vector<double> y(x.rbegin(), x.rend());
        const ReduceRef ref = reduce_reference(kind, x.data(), y.data(), x.size());
        for (const ReduceOrder& o : kOrders)
          for (Rounding rdm : kAllRoundings)
            for (ProductRounding pr : {ProductRounding::Exact, ProductRounding::Rounded}) {
              if (kind == ReduceKind::Sum && pr == ProductRounding::Rounded) continue;
              const ReduceArith a = arith(*su.acc, rdm, pr);
              const double v = emulate_reduce(kind, x.data(), y.data(), x.size(), o, a);
              for (const Format* out : su.outs) {
                const Rounder orr{rdm, default_saturation(*out), NanPayload::Preserve};
                const ReduceBound b = reduce_bound(kind, x.size(), o, a, *out, orr, ref);
                if (!b.applicable || !b.overflow_free) continue;
                const double got = to_double(*out, round_double(*out, v, orr, philox_4x32(key, 55, ctr++)[0]).code);
                const double err = error_of(got, ref.value);
                // Tolerance: error_of rounds once (2^-53 relative) and drops the tail, below 2^-105 |s|; the bound's
                // own double arithmetic is within 2^-50 relative (reduce_bound.cpp).
                const double allowed = b.total * (1 + 0x1p-50) + std::fabs(ref.value.hi) * 0x1p-100;
                if (!(err <= allowed)) {
                  MESSAGE(to_string(kind) << " n " << x.size() << " acc " << su.acc->tag << " out " << out->tag << " "
                                          << describe(o) << " " << to_string(rdm) << (pr == ProductRounding::Exact ? " exact" : " rounded")
                                          << " products: got " << got << " exact " << ref.value.hi << " err " << err
                                          << "\n" << to_text(b));
                  REQUIRE(err <= allowed);
                }
                if (b.total > 0) worst = std::max(worst, err / b.total);
                ++checked;
              }
            }
      }
  MESSAGE("checked " << checked << " emulated results; the largest error / bound was " << worst);
  CHECK(checked > 20000);  // the overflow and applicability filters leave most cases in
  CHECK(worst > 1e-4);     // the data do reach into the bounds (errors are not all zero)
}

TEST_CASE("reduce_bound: not vacuous on well-conditioned data") {
  // 1024 positive values in [1, 2) (f16 values, so exact in both accumulators): sum|x| = s.
  std::vector<double> x;
  for (int i = 0; i < 1024; ++i) x.push_back(1.0 + static_cast<double>(philox_4x32(test::seed(), 56, static_cast<std::uint64_t>(i))[0] % 1024) * 0x1p-10);
  const ReduceRef ref = sum_reference(x.data(), x.size());
  const double s = ref.value.hi;
  {
    // f32, sequential: gamma_1023 with u = 2^-24: about 1023 * 2^-24 = 6.1e-5 of s.
    const ReduceBound b = reduce_bound(ReduceKind::Sum, x.size(), ReduceOrder::sequential(), arith(f32, Rounding::NearestEven), f32,
                                       Rounder::nearest(f32), ref);
    CHECK(b.applicable);
    CHECK(b.total < 7e-5 * s);
    CHECK(b.total > 6e-5 * s);
  }
  {
    // f32, warp tree: h = 31 + 5 = 36: 36 * 2^-24 = 2.1e-6 of s, plus an f16 output's rounding 2^-11 (|s| + that).
    const ReduceBound b = reduce_bound(ReduceKind::Sum, x.size(), ReduceOrder::warp_tree(), arith(f32, Rounding::NearestEven), f16,
                                       Rounder::nearest(f16), ref);
    CHECK(b.total < (36 * 0x1p-24 * 1.001 + 0x1p-11 * 1.001) * s);
    CHECK(b.terms.size() == 2);
    CHECK(b.terms[1].name == "output rounding (f16, rn)");
  }
  {
    // f16 pairwise: h = 10, 10 * 2^-11 = 0.0049 of s: the bound is below |s|, so a kernel that writes 0
    // is refused.
    const ReduceBound b = reduce_bound(ReduceKind::Sum, x.size(), ReduceOrder::pairwise(), arith(f16, Rounding::NearestEven), f16,
                                       Rounder::nearest(f16), ref);
    CHECK(b.total < 0.005 * s);
  }
  {
    // nrm2 in f32, sequential: relative to ||x|| about gamma_1024 / 2 + u = 3.1e-5.
    const ReduceRef r2 = nrm2_reference(x.data(), x.size());
    const ReduceBound b = reduce_bound(ReduceKind::Nrm2, x.size(), ReduceOrder::sequential(), arith(f32, Rounding::NearestEven), f32,
                                       Rounder::nearest(f32), r2);
    CHECK(b.total < 3.2e-5 * r2.value.hi);
    CHECK(b.terms.size() == 3);  // sum of squares, underflow of squares (0 here), square root
    // n eta (1 + gamma) / (||x|| sqrt(1 - gamma)) with eta = 2^-150 (half f32's smallest subnormal), ||x|| > 32:
    // about 1024 2^-150 / 32 = 2^-145, positive and negligible.
    CHECK(b.terms[1].value > 0);
    CHECK(b.terms[1].value < 0x1p-144);
  }
}

TEST_CASE("reduce_bound: where it must not speak") {
  {
    // 2049 ones, f16 sequential: h u = 2048 * 2^-11 = 1: gamma undefined. (The stall at 2048 is an error of
    // 1 that no gamma_h Σ|x| bound below s could cover anyway: h u >= 1 is when that can happen.)
    std::vector<double> x(2049, 1.0);
    const ReduceBound b = reduce_bound(ReduceKind::Sum, x.size(), ReduceOrder::sequential(), arith(f16, Rounding::NearestEven), f16,
                                       Rounder::nearest(f16), sum_reference(x.data(), x.size()));
    CHECK(!b.applicable);
    CHECK(b.assumption.find("vacuous") != std::string::npos);
  }
  {
    // The unscaled nrm2 trap: sum x^2 = 2^201 > f32's largest finite: no bound (the emulation gives Inf).
    const double x[] = {0x1p100, 0x1p100};
    const ReduceBound b = reduce_bound(ReduceKind::Nrm2, 2, ReduceOrder::sequential(), arith(f32, Rounding::NearestEven), f32,
                                       Rounder::nearest(f32), nrm2_reference(x, 2));
    CHECK(b.applicable);
    CHECK(!b.overflow_free);
    CHECK(b.assumption.find("unscaled nrm2 trap") != std::string::npos);
  }
  {
    const double x[] = {1.0, INFINITY};
    const ReduceBound b = reduce_bound(ReduceKind::Sum, 2, ReduceOrder::sequential(), arith(f32, Rounding::NearestEven), f32,
                                       Rounder::nearest(f32), sum_reference(x, 2));
    CHECK(!b.applicable);
  }
  {
    // Every term names its law and its source.
    const double x[] = {1.0, 2.0, 3.0};
    const ReduceBound b = reduce_bound(ReduceKind::Dot, 3, ReduceOrder::pairwise(), arith(f16, Rounding::Up), e4m3,
                                       Rounder::nearest(e4m3), dot_reference(x, x, 3));
    for (const auto& t : b.terms) {
      CHECK(!t.law.empty());
      CHECK(!t.source.empty());
    }
    CHECK(to_text(b).find("total") != std::string::npos);
  }
}
