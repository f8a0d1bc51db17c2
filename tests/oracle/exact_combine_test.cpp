// tests/oracle/exact_combine_test.cpp — the pieces the GPU's whole reference shares with the CPU oracle
// (oracle/exact_combine.hpp): F32ExactSum, ExactSum's code over binary32's range, against ExactSum itself bit for bit on
// the sums the device forms (an integer X 2^E from the slice GEMMs plus exact products of binary32 values), ties and
// cancellations included; abs_sum_bound's step up; and the whole_reference hook of gemm_reference (an engine's
// references are sample-checked: a corrupted element is refused).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/philox.hpp"
#include "oracle/exact_combine.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/gemm_engine.hpp"
#include "oracle/gemm_ref.hpp"
#include "tests/support/same_reference.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
namespace xg = fpcert::exact_gemm;

namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
using test::same_ref;
using test::show_ref;

/// A random binary32 value (as a double) with exponent in [emin, emax] (subnormals when emin < -126), random sign.
double random_f32(std::uint64_t key, std::uint64_t ctr, int emin, int emax) {
  const auto w = philox_4x32(key, 11, ctr);
  const int e = emin + static_cast<int>(w[0] % static_cast<std::uint32_t>(emax - emin + 1));
  const double m = 1.0 + static_cast<double>(w[1] & 0x7FFFFF) * 0x1p-23;  // 24 significant bits
  auto f = static_cast<float>(std::ldexp(m, e));                          // rounds into the subnormal grid below -126
  if (w[2] & 1) f = -f;
  return f;
}

/// One sum of the kind the device forms: X 2^E (X a multiple of 2^(-298 - E) when E < -298, |X| 2^E < 2^250) plus
/// n products of binary32 values. Fed to both accumulators; returns whether they agree.
struct Case {
  xg::i128 X = 0;
  int E = 0;
  std::vector<std::pair<double, double>> prods;
};

bool agree(const Case& c, std::string* detail) {
  ExactSum big;
  xg::F32ExactSum small;
  big.add_scaled(c.X, c.E);
  small.add_scaled(c.X, c.E);
  for (const auto& [x, y] : c.prods) {
    big.add_product(x, y);
    small.add_product(x, y);
  }
  std::uint8_t sb = 0, ss = 0;
  const RefValue rb = big.finalize(sb), rs = small.finalize(ss);
  if (same_ref(rb, rs) && sb == ss) return true;
  *detail = "ExactSum " + show_ref(rb) + " status " + std::to_string(sb) + ", F32ExactSum " + show_ref(rs) + " status " +
            std::to_string(ss) + ", E " + std::to_string(c.E) + ", " + std::to_string(c.prods.size()) + " products";
  return false;
}

xg::i128 random_X(std::uint64_t key, std::uint64_t ctr, int bits_wanted) {
  const auto w = philox_4x32(key, 12, ctr), v = philox_4x32(key, 13, ctr);
  xg::u128 u = (static_cast<xg::u128>(w[0]) << 96) | (static_cast<xg::u128>(w[1]) << 64) |
               (static_cast<xg::u128>(v[0]) << 32) | v[1];
  u >>= 128 - bits_wanted;
  return (w[2] & 1) ? -static_cast<xg::i128>(u) : static_cast<xg::i128>(u);
}

}  // namespace

TEST_CASE("F32ExactSum equals ExactSum bit for bit on the GPU's sums of binary32 products") {
  const std::uint64_t key = test::seed() ^ 0xC0B1;
  int failures = 0;
  std::uint64_t ctr = 0;
  for (int t = 0; t < 20000; ++t) {
    Case c;
    const auto w = philox_4x32(key, 14, static_cast<std::uint64_t>(t));
    // Product exponents: narrow, wide, subnormal-heavy, near the top of binary32.
    const int mode = static_cast<int>(w[0] % 4);
    const int emin = mode == 0 ? -20 : mode == 1 ? -149 : mode == 2 ? -149 : 60;
    const int emax = mode == 0 ? 20 : mode == 1 ? 127 : -100;
    const int top = mode == 3 ? 127 : emax;
    const int n = static_cast<int>(w[1] % 9);
    for (int p = 0; p < n; ++p) {
      const double x = random_f32(key, ctr++, emin, top);
      c.prods.emplace_back(x, random_f32(key, ctr++, emin, top));
    }
    // X 2^E: E from -400 to 100, X up to 118 bits, its bits below 2^-298 cleared, |X| 2^E below 2^250.
    c.E = -400 + static_cast<int>(w[2] % 501);
    int xb = 1 + static_cast<int>(w[3] % 118);
    if (c.E + xb > 250) xb = std::max(1, 250 - c.E);
    c.X = random_X(key, ctr++, xb);
    if (c.E < -298) {
      const int sh = -298 - c.E;
      c.X = sh >= 127 ? 0 : (c.X >> sh) * (static_cast<xg::i128>(1) << sh);
    }
    // A third of the cases cancel: X 2^E made the negated sum of the products, plus one more product (or none).
    if (w[3] % 3 == 0 && !c.prods.empty()) {
      c.X = 0;
      const auto extra = c.prods;
      for (const auto& [x, y] : extra) c.prods.emplace_back(-x, y);
      if (w[3] % 2) {
        const double x = random_f32(key, ctr++, -149, -120);
        c.prods.emplace_back(x, random_f32(key, ctr++, -149, -120));
      }
    }
    std::string d;
    if (!agree(c, &d)) {
      if (++failures <= 5) MESSAGE("case " << t << ": " << d);
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("F32ExactSum: ties, tails and exact zero against ExactSum") {
  std::string d;
  // X = 2^53 + 1 at 2^0: RN is a tie between 2^53 and 2^53 + 2 (to even: 2^53), lo = 1, tail 0.
  Case tie{(static_cast<xg::i128>(1) << 53) + 1, 0, {}};
  CHECK_MESSAGE(agree(tie, &d), d);
  // The same tie broken by a product of 2^-149 * 2^-149 = 2^-298 (the smallest binary32 product).
  Case broken = tie;
  broken.prods.emplace_back(0x1p-149, 0x1p-149);
  CHECK_MESSAGE(agree(broken, &d), d);
  broken.prods.back().first = -0x1p-149;
  CHECK_MESSAGE(agree(broken, &d), d);
  // A tail below hi + lo: X with 110 significant bits at 2^-298 plus a product.
  Case tail{(static_cast<xg::i128>(1) << 109) + 3, -298, {{0x1p-149, -0x1p-149}}};
  CHECK_MESSAGE(agree(tail, &d), d);
  // Exact zero from cancellation between X 2^E and products: +0, lo 0, tail 0.
  Case zero{-3, -298, {{0x1p-149, 0x1.8p-148}}};
  CHECK_MESSAGE(agree(zero, &d), d);
  xg::F32ExactSum z;
  z.add_scaled(zero.X, zero.E);
  z.add_product(0x1p-149, 0x1.8p-148);
  std::uint8_t st = 0;
  CHECK(same_ref(z.finalize(st), RefValue{}));
  // The largest: 2^127 * 2^127 times a few, with X near 2^250.
  Case big{static_cast<xg::i128>(1) << 100, 150, {{0x1.fffffep127, 0x1.fffffep127}, {-0x1p127, 0x1p127}}};
  CHECK_MESSAGE(agree(big, &d), d);
}

TEST_CASE("abs_sum_bound: one place up when the scaled bound is subnormal or zero, as nextafter") {
  // absv 1.0 scaled by 2^-1070: subnormal, moved up by one unit.
  const double s = xg::abs_sum_bound(1.0, 0.0, 1.0, -1070);
  CHECK(bits(s) == bits(std::nextafter(0x1p-1070, std::numeric_limits<double>::infinity())));
  // Scaled to zero (2^-1100): the smallest subnormal.
  CHECK(xg::abs_sum_bound(1.0, 0.0, 1.0, -1100) == std::numeric_limits<double>::denorm_min());
  // Normal results are the exact product; zero stays zero.
  CHECK(xg::abs_sum_bound(3.0, 0.0, 1.0, 10) == 3072.0);
  CHECK(xg::abs_sum_bound(0.0, 0.0, 1.0, -1100) == 0.0);
  // Overflow: +Inf (still an upper bound).
  CHECK(std::isinf(xg::abs_sum_bound(2.0, 0.0, 1.0, 1023)));
}

namespace {

/// An engine that makes whole references (the built-in oracle's, then one element's lo moved by one unit when asked):
/// gemm_reference must sample-check them and refuse the corrupted one.
class WholeEngine final : public ExactGemmEngine {
 public:
  explicit WholeEngine(bool corrupt) : corrupt_(corrupt) {}
  const char* name() const override { return "test-whole"; }
  bool per_tile() const override { return true; }
  void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn,
                double* out) override {
    eigen_gemm_engine().multiply(ops, i0, tm, j0, tn, out);
  }
  bool whole_reference(const MatrixView& a, const MatrixView& b, unsigned threads, GemmRef& r) override {
    GemmRefOptions o;
    o.threads = threads;
    o.engine = &eigen_gemm_engine();
    const char* engine = r.info.engine;
    r = gemm_reference(a, b, o);
    r.info.engine = engine;
    ++calls;
    if (corrupt_) {
      RefValue& v = r.c[r.c.size() / 2];
      v.hi = std::nextafter(v.hi, std::numeric_limits<double>::infinity());
    }
    return true;
  }
  int calls = 0;

 private:
  bool corrupt_;
};

}  // namespace

TEST_CASE("gemm_reference: a whole reference from an engine is sample-checked against exact_dot") {
  const std::int64_t M = 9, K = 37, N = 11;
  std::vector<double> A(static_cast<std::size_t>(M * K)), B(static_cast<std::size_t>(K * N));
  const std::uint64_t key = test::seed() ^ 0x3E3;
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = random_f32(key, i, -30, 10);
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = random_f32(key, 1000 + i, -30, 10);
  const MatrixView a = MatrixView::row_major(A.data(), M, K), b = MatrixView::row_major(B.data(), K, N);
  WholeEngine good(false), bad(true);
  GemmRefOptions o;
  o.engine = &good;
  const GemmRef r = gemm_reference(a, b, o);
  CHECK(good.calls == 1);
  CHECK(std::string(r.info.engine) == "test-whole");
  CHECK(r.info.sample_checked == M * N);  // m n k <= 2^22: every element
  const GemmRef cpu = gemm_reference(a, b);
  for (std::size_t i = 0; i < cpu.c.size(); ++i) CHECK(same_ref(cpu.c[i], r.c[i]));
  o.engine = &bad;
  CHECK_THROWS_AS(gemm_reference(a, b, o), DeviceError);
  CHECK(bad.calls == 1);
}
