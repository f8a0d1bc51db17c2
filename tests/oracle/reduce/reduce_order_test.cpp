// tests/oracle/reduce/reduce_order_test.cpp — the declared orders' emulation against hand-worked examples
// (each states its arithmetic), and the identities that tie the orders together.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "base/philox.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

ReduceArith arith(const Format& acc, Rounding r = Rounding::NearestEven,
                  ProductRounding p = ProductRounding::Exact) {
  ReduceArith a;
  a.acc = &acc;
  a.rounder = {r, default_saturation(acc), NanPayload::Preserve};
  a.products = p;
  return a;
}

double sum(const std::vector<double>& x, const ReduceOrder& o, const ReduceArith& a) {
  return emulate_sum(x.data(), x.size(), o, a);
}

}  // namespace

TEST_CASE("reduce_order: the f16 running sum of ones stalls at 2048") {
  // f16 has 11 significant bits: the integers up to 2048 are exact, above 2048 the spacing is 2. So
  // 2048 + 1 = 2049 lies halfway between 2048 and 2050; nearest-even keeps 2048, every later + 1 too.
  const ReduceArith rn = arith(f16);
  const std::vector<double> ones2049(2049, 1.0), ones4096(4096, 1.0);
  CHECK(sum(ones2049, ReduceOrder::sequential(), rn) == 2048.0);
  CHECK(sum(ones4096, ReduceOrder::sequential(), rn) == 2048.0);
  CHECK(sum(ones4096, ReduceOrder::sequential(ChainStart::First), rn) == 2048.0);
  // Toward zero stalls too. Upward each + 1 moves to the next f16 value: the first 2048 ones are exact, the
  // next 1024 step by the spacing 2 to 4096, the last 1024 by the spacing 4 (above 4096) to 8192.
  CHECK(sum(ones4096, ReduceOrder::sequential(), arith(f16, Rounding::TowardZero)) == 2048.0);
  CHECK(sum(ones4096, ReduceOrder::sequential(), arith(f16, Rounding::Up)) == 8192.0);
  // Pairwise: every partial sum is a power of two (1, 2, 4, ..., 4096): exact.
  CHECK(sum(ones4096, ReduceOrder::pairwise(), rn) == 4096.0);
  // Blocked B = 1024: each block is 1024 exactly; the partials 1024, 2048, 3072 (= 1.5 * 2^11, exact), 4096.
  CHECK(sum(ones4096, ReduceOrder::blocked(1024), rn) == 4096.0);
  // Blocked B = 4096 is the sequential stall again.
  CHECK(sum(ones4096, ReduceOrder::blocked(4096), rn) == 2048.0);
  // Warp tree: each of 32 lanes sums 128 ones (exact), the butterfly doubles: 256, ..., 4096.
  CHECK(sum(ones4096, ReduceOrder::warp_tree(), rn) == 4096.0);
  // 2049 pairwise: 1025 + 1024 (both exact below 2048) = 2049, a tie: 2048.
  CHECK(sum(ones2049, ReduceOrder::pairwise(), rn) == 2048.0);
}

TEST_CASE("reduce_order: f32 examples that tell the orders apart") {
  const ReduceArith rn = arith(f32);
  const double big = 0x1p24;  // f32's integers are exact up to 2^24; 2^24 + 1 is a tie, even is 2^24
  {
    // x = (2^24, 1, 1, -2^24).
    // sequential: 2^24 + 1 -> 2^24 (tie, even), + 1 -> 2^24, - 2^24 -> 0.
    // pairwise: (2^24 + 1 -> 2^24) + (1 - 2^24 = -(2^24 - 1), exact) = 1.
    // blocked B = 3: (2^24 + 1 + 1 -> 2^24) + (-2^24) = 0.
    const std::vector<double> x{big, 1, 1, -big};
    CHECK(sum(x, ReduceOrder::sequential(), rn) == 0.0);
    CHECK(sum(x, ReduceOrder::pairwise(), rn) == 1.0);
    CHECK(sum(x, ReduceOrder::blocked(2), rn) == 1.0);
    CHECK(sum(x, ReduceOrder::blocked(3), rn) == 0.0);
  }
  {
    // x = (2^24, -2^24, 1, 1): sequential 0 + 1 + 1 = 2; pairwise (0) + (2) = 2.
    // warp tree, 32 lanes: lane l < 4 holds x_l, the others +0; levels 16, 8, 4 add zeros. Level 2:
    // lane 0 = x_0 + x_2 = 2^24 + 1 -> 2^24, lane 1 = x_1 + x_3 = -2^24 + 1 = -(2^24 - 1) (exact).
    // Level 1: lane 0 = 2^24 - (2^24 - 1) = 1.
    const std::vector<double> x{big, -big, 1, 1};
    CHECK(sum(x, ReduceOrder::sequential(), rn) == 2.0);
    CHECK(sum(x, ReduceOrder::pairwise(), rn) == 2.0);
    CHECK(sum(x, ReduceOrder::warp_tree(), rn) == 1.0);
  }
  {
    // Strided lanes, L = 2, x = (2^24, 1, -2^24, 1): lane 0 sums x_0, x_2 = 0; lane 1 sums x_1, x_3 = 2;
    // butterfly: 0 + 2 = 2. Sequential: 2^24 + 1 -> 2^24, - 2^24 = 0, + 1 = 1.
    const std::vector<double> x{big, 1, -big, 1};
    CHECK(sum(x, ReduceOrder::warp_tree(2), rn) == 2.0);
    CHECK(sum(x, ReduceOrder::sequential(), rn) == 1.0);
  }
  {
    // Five terms, pairwise splits 3 + 2 and the 3 into 2 + 1: ((x0 + x1) + x2) + (x3 + x4).
    // x = (1, 2^24, 1, -2^24, 1): (1 + 2^24 -> 2^24, + 1 -> 2^24) + (-2^24 + 1 = -(2^24 - 1)) = 1.
    // With the split n/2 rounded down (2 + 3) it would be (1 + 2^24 -> 2^24) + ((1 - 2^24) + 1 = 2 - 2^24)
    // = 2: the convention matters, and this one is kernels/order.hpp's (first ceil(n/2)).
    const std::vector<double> x{1, big, 1, -big, 1};
    CHECK(sum(x, ReduceOrder::pairwise(), rn) == 1.0);
  }
}

TEST_CASE("reduce_order: exact and rounded products (f16 accumulator)") {
  // x = (1, 1 + 2^-10), y = (-1, 1 + 3 2^-10): p0 = -1, p1 = 1 + 2^-8 + 3 2^-20 (exact).
  // FMA chain: acc = R(+0 - 1) = -1; R(-1 + p1) = R(2^-8 + 3 2^-20): f16's spacing at 2^-8 is 2^-18 and
  // 3 2^-20 = 0.75 2^-18 rounds up: 2^-8 + 2^-18.
  // Rounded products: R(p1) = 1 + 2^-8 (spacing 2^-10 at 1; 3 2^-20 is far below half of it); -1 + that = 2^-8.
  const std::vector<double> x{1.0, 1.0 + 0x1p-10}, y{-1.0, 1.0 + 3 * 0x1p-10};
  CHECK(emulate_dot(x.data(), y.data(), 2, ReduceOrder::sequential(), arith(f16)) == 0x1p-8 + 0x1p-18);
  CHECK(emulate_dot(x.data(), y.data(), 2, ReduceOrder::sequential(), arith(f16, Rounding::NearestEven, ProductRounding::Rounded)) ==
        0x1p-8);
  // Pairwise rounds each product at its leaf (kernels/order.hpp's pairwise): R(p0) + R(p1) = -1 + (1 + 2^-8).
  CHECK(emulate_dot(x.data(), y.data(), 2, ReduceOrder::pairwise(), arith(f16)) == 0x1p-8);
}

TEST_CASE("reduce_order: nrm2, unscaled") {
  {
    // (3, 4): 9 + 16 = 25, sqrt 25 = 5, all exact in f16.
    const double x[] = {3.0, 4.0};
    CHECK(emulate_nrm2(x, 2, ReduceOrder::sequential(), arith(f16)) == 5.0);
  }
  {
    // (1, 1): sqrt 2 = 0x1.6a09e6|67...p+0: the bits after f32's 24 are 0x67 = 0110 0111..., below half:
    // RN is 0x1.6a09e6p+0; RU one f32 spacing (2^-23) above: 0x1.6a09e8p+0.
    const double x[] = {1.0, 1.0};
    CHECK(emulate_nrm2(x, 2, ReduceOrder::sequential(), arith(f32)) == 0x1.6a09e6p+0);
    CHECK(emulate_nrm2(x, 2, ReduceOrder::sequential(), arith(f32, Rounding::Up)) == 0x1.6a09e8p+0);
    CHECK(emulate_nrm2(x, 2, ReduceOrder::sequential(), arith(f32, Rounding::Down)) == 0x1.6a09e6p+0);
  }
  {
    // The trap: (2^100, 2^100) in f32. Each square is 2^200 > f32's largest finite (about 2^128): Inf, and
    // sqrt(Inf) = Inf, although the norm 2^100.5 is an f32 value's neighbour. Saturating instead clamps the
    // first square to the largest finite value (2 - 2^-23) 2^127; adding the second saturates again, and the
    // result is sqrt((2 - 2^-23) 2^127) ~ 2^64: finite and wrong by a factor of 2^36.
    const double x[] = {0x1p100, 0x1p100};
    CHECK(std::isinf(emulate_nrm2(x, 2, ReduceOrder::sequential(), arith(f32))));
    ReduceArith sat = arith(f32);
    sat.rounder.saturation = Saturation::Finite;
    const double r = emulate_nrm2(x, 2, ReduceOrder::sequential(), sat);
    CHECK(r < 0x1p65);
    CHECK(r > 0x1p63);
  }
}

TEST_CASE("reduce_order: signs of zero (IEEE 754-2019 §6.3)") {
  const std::vector<double> cancel{1.0, -1.0}, negzeros{-0.0, -0.0};
  CHECK(!std::signbit(sum(cancel, ReduceOrder::sequential(), arith(f32))));                  // +0
  CHECK(std::signbit(sum(cancel, ReduceOrder::sequential(), arith(f32, Rounding::Down))));   // -0 under RD
  CHECK(!std::signbit(sum(negzeros, ReduceOrder::sequential(), arith(f32))));                // +0 + -0 = +0
  CHECK(std::signbit(sum(negzeros, ReduceOrder::sequential(ChainStart::First), arith(f32))));  // -0 + -0 = -0
}

TEST_CASE("reduce_order: identities between the orders, every mode, random f16 data") {
  // On any data: blocked with B >= n is sequential; blocked with B = 1 is sequential from the first term
  // (each block is its term, the partials summed from the first); a warp tree of one lane is sequential.
  std::uint64_t ctr = 0;
  for (int c = 0; c < 40; ++c) {
    const int n = 1 + static_cast<int>(philox_4x32(test::seed(), 41, ctr++)[0] % 300);
    std::vector<double> x(static_cast<std::size_t>(n));
    for (double& v : x) {
      const auto w = philox_4x32(test::seed(), 42, ctr++);
      v = to_double(f16, w[0] & 0x7BFF) * ((w[1] & 1) ? -1 : 1);  // finite f16 codes, exponents up to 30
    }
    for (Rounding rd : kAllRoundings) {
      ReduceArith a = arith(f16, rd);
      a.rounder.saturation = Saturation::Finite;  // large sums of f16 values overflow: keep the chains finite
      a.stochastic_key = test::seed();
      CAPTURE(n);
      CAPTURE(to_string(rd));
      const double s = sum(x, ReduceOrder::sequential(), a);
      CHECK(sum(x, ReduceOrder::blocked(n), a) == s);
      CHECK(sum(x, ReduceOrder::blocked(n + 7), a) == s);
      CHECK(sum(x, ReduceOrder::warp_tree(1), a) == s);
      CHECK(sum(x, ReduceOrder::blocked(1, ChainStart::First), a) == sum(x, ReduceOrder::sequential(ChainStart::First), a));
      // Stochastic rounding is reproducible from its key.
      CHECK(sum(x, ReduceOrder::warp_tree(), a) == sum(x, ReduceOrder::warp_tree(), a));
    }
  }
}

TEST_CASE("reduce_order: what it refuses") {
  const std::vector<double> x{1.0, 0.1};  // 0.1 is no f16 value
  CHECK_THROWS_AS(sum(x, ReduceOrder::sequential(), arith(f16)), std::invalid_argument);
  const std::vector<double> ok{1.0, 2.0};
  CHECK_THROWS_AS(sum(ok, ReduceOrder::unknown(), arith(f32)), std::invalid_argument);
  CHECK_THROWS_AS(sum(ok, ReduceOrder::warp_tree(3), arith(f32)), std::invalid_argument);
  CHECK_THROWS_AS(sum(ok, ReduceOrder::blocked(0), arith(f32)), std::invalid_argument);
  CHECK_THROWS_AS(sum(ok, ReduceOrder::sequential(), arith(f64)), std::invalid_argument);
}

TEST_CASE("reduce_order: NumPy's pairwise_sum, against numpy 1.24's np.sum") {
  // A hand-worked case first. x = (2^24, 1, 1, 1, 1, 1, 1, 1, 1), n = 9: eight accumulators take x_0..x_7, no
  // full group of 8 follows, ((2^24 + 1 -> 2^24, a tie) + (1 + 1)) + ((1 + 1) + (1 + 1)) = 2^24 + 6, then the
  // leftover x_8: 2^24 + 7 is a tie between 2^24 + 6 and 2^24 + 8, even wins: 2^24 + 8 (the exact sum, by luck).
  // Textbook pairwise (5 + 4): (((2^24 + 1 -> 2^24) + 1 -> 2^24) + 2) + 4 = 2^24 + 6; sequential stalls at 2^24.
  const std::vector<double> x{0x1p24, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(sum(x, ReduceOrder::numpy_pairwise(), arith(f32)) == 0x1p24 + 8);
  CHECK(sum(x, ReduceOrder::pairwise(), arith(f32)) == 0x1p24 + 6);
  CHECK(sum(x, ReduceOrder::sequential(), arith(f32)) == 0x1p24);

  // Golden values: float(np.sum(a)).hex() from numpy 1.24.2 (Debian's python3-numpy), with
  //   a = np.array([((i*7919 + 13) % 2001 - 1000) * 2.0**(((i*37) % 41) - 20) for i in range(n)], dtype=np.float32)
  // (every value an integer below 2^10 times a power of two: exact in f32), and for float16
  //   a = np.array([((i*7919 + 13) % 201 - 100) * 2.0**(((i*37) % 7) - 4) for i in range(n)], dtype=np.float16)
  // whose sum numpy accumulates in float32 and converts to float16 once at the end. n = 100000 passes through
  // 13 chunks of numpy's 8192-element buffer (the whole-array pairwise sum would be -0x1.6eb46p+29 instead).
  CHECK(sum(std::vector<double>(20000, 1.0), ReduceOrder::numpy_pairwise(), arith(f32)) == 20000.0);
  struct Gold {
    int n;
    double value;
  };
  const Gold g32[] = {{1, -0x1.ed8p-11},        {5, 0x1.ec709p+26},     {8, 0x1.ec71c8p+26},    {9, 0x1.ec71c8p+26},
                      {100, 0x1.86706ep+29},    {128, 0x1.5d0eccp+28},  {129, 0x1.5d0edcp+28},  {1000, 0x1.9472ap+25},
                      {4099, 0x1.4855ep+28},    {100000, -0x1.6eb38p+29}};
  int sequential_differs = 0;
  for (const Gold& g : g32) {
    std::vector<double> a;
    for (int i = 0; i < g.n; ++i) a.push_back(((i * 7919 + 13) % 2001 - 1000) * std::ldexp(1.0, (i * 37) % 41 - 20));
    CAPTURE(g.n);
    CHECK(sum(a, ReduceOrder::numpy_pairwise(), arith(f32)) == g.value);
    sequential_differs += sum(a, ReduceOrder::sequential(), arith(f32)) != g.value;
  }
  CHECK(sequential_differs >= 3);  // the golden values tell the orders apart
  const Gold g16[] = {{7, -0x1.718p+7}, {64, 0x1.f2p+3}, {300, 0x1.798p+8}, {5000, 0x1.3bp+9}};
  for (const Gold& g : g16) {
    std::vector<double> a;
    for (int i = 0; i < g.n; ++i) a.push_back(((i * 7919 + 13) % 201 - 100) * std::ldexp(1.0, (i * 37) % 7 - 4));
    CAPTURE(g.n);
    const double acc = sum(a, ReduceOrder::numpy_pairwise(), arith(f32));
    CHECK(to_double(f16, round_double(f16, acc, Rounder::nearest(f16)).code) == g.value);
  }
}

TEST_CASE("reduce_order: block tree (warps of a thread block, then their results)") {
  const ReduceArith rn = arith(f32);
  {
    // 4 warps of 4 lanes, 16 terms, one per thread; x_{4j} = w_j and the other lanes 0, so warp j's butterfly gives
    // exactly w_j = (2^24, 1, 1, -2^24). Warps sequentially: (2^24 + 1 -> 2^24) + 1 -> 2^24, - 2^24 -> 0. By one more
    // butterfly (lane j holds w_j): (w_0 + w_2 = 2^24 + 1 -> 2^24) + (w_1 + w_3 = 1 - 2^24, exact) = 1.
    std::vector<double> x(16, 0.0);
    x[0] = 0x1p24;
    x[4] = 1;
    x[8] = 1;
    x[12] = -0x1p24;
    CHECK(sum(x, ReduceOrder::block_tree(4, WarpCombine::Sequential, 4), rn) == 0.0);
    CHECK(sum(x, ReduceOrder::block_tree(4, WarpCombine::Butterfly, 4), rn) == 1.0);
  }
  {
    // Threads stride by the whole block: 2 warps of 2 lanes (T = 4), x = (2^24, 0, 0, 0, 1, 0, 0, 0, 1): thread 0
    // sums x_0, x_4, x_8 = 2^24 + 1 -> 2^24, + 1 -> 2^24; everything else is 0: 2^24. (A warp tree of 4 lanes gives
    // the same here; of 2 lanes, lane 0 sums x_0, x_2, ..., x_8: the same three terms.)
    const std::vector<double> x{0x1p24, 0, 0, 0, 1, 0, 0, 0, 1};
    CHECK(sum(x, ReduceOrder::block_tree(2, WarpCombine::Sequential, 2), rn) == 0x1p24);
  }
  // One warp is the warp tree, on any data and in every deterministic mode.
  std::uint64_t ctr = 0;
  for (int c = 0; c < 20; ++c) {
    std::vector<double> x(1 + philox_4x32(test::seed(), 43, ctr++)[0] % 500);
    for (double& v : x) {
      const auto w = philox_4x32(test::seed(), 44, ctr++);
      // An f16 value with exponent field 0 .. 18 (below 16: 500 of them sum below 8000, no overflow).
      v = to_double(f16, ((w[0] % 19) << 10) | (w[2] & 0x3FF)) * ((w[1] & 1) ? -1 : 1);
    }
    for (Rounding rd : {Rounding::NearestEven, Rounding::TowardZero, Rounding::Up, Rounding::Down, Rounding::NearestAway}) {
      const ReduceArith a = arith(f16, rd);
      const double wt = sum(x, ReduceOrder::warp_tree(), a);
      CHECK(sum(x, ReduceOrder::block_tree(1, WarpCombine::Sequential), a) == wt);
      CHECK(sum(x, ReduceOrder::block_tree(1, WarpCombine::Butterfly), a) == wt);  // the second butterfly adds zeros
    }
  }
  CHECK_THROWS_AS(sum({1.0}, ReduceOrder::block_tree(8, WarpCombine::Butterfly, 4), rn), std::invalid_argument);
}
