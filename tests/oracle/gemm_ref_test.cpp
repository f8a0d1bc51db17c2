// tests/oracle/gemm_ref_test.cpp — the fast GEMM reference (Ozaki split + ExactSum) against the MPFR
// ground truth, bit for bit, on random and adversarial problems.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "base/philox.hpp"
#include "oracle/format.hpp"
#include "oracle/gemm_ref.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

/// A matrix stored with a layout and a leading dimension larger than needed (padding filled with
/// NaN, so reading it would show).
struct Mat {
  std::int64_t rows = 0, cols = 0, ld = 0;
  Layout layout = Layout::RowMajor;
  std::vector<double> data;
  Mat(std::int64_t r, std::int64_t c, Layout l, std::int64_t pad = 0) : rows(r), cols(c), layout(l) {
    ld = (l == Layout::RowMajor ? c : r) + pad;
    data.assign(static_cast<std::size_t>(std::max<std::int64_t>(1, ld * (l == Layout::RowMajor ? r : c))),
                std::numeric_limits<double>::quiet_NaN());
  }
  double& at(std::int64_t i, std::int64_t j) {
    return data[static_cast<std::size_t>(layout == Layout::RowMajor ? i * ld + j : j * ld + i)];
  }
  MatrixView view() const { return {data.data(), rows, cols, ld, layout}; }
};

using Gen = std::function<double(std::int64_t, std::int64_t)>;

Mat make(std::int64_t r, std::int64_t c, Layout l, std::int64_t pad, const Gen& g) {
  Mat m(r, c, l, pad);
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) m.at(i, j) = g(i, j);
  return m;
}

/// Uniform in [-1, 1) rounded to fp32, from (key, stream, i, j).
double u32(std::uint64_t key, std::uint64_t stream, std::int64_t i, std::int64_t j) {
  const auto w = philox_4x32(key, stream, static_cast<std::uint64_t>(i) << 32 | static_cast<std::uint64_t>(j));
  return static_cast<float>(static_cast<double>(static_cast<std::int32_t>(w[0])) * 0x1p-31);
}
/// A random double with exponent uniform in [emin, emax] and a full 53-bit significand.
double d64(std::uint64_t key, std::uint64_t stream, std::int64_t i, std::int64_t j, int emin, int emax) {
  const auto w = philox_4x32(key, stream, static_cast<std::uint64_t>(i) << 32 | static_cast<std::uint64_t>(j));
  const int e = emin + static_cast<int>(w[0] % static_cast<std::uint32_t>(emax - emin + 1));
  const double f = 1.0 + static_cast<double>(w[1] >> 11) * 0x1p-21 + static_cast<double>(w[2]) * 0x1p-53;
  return std::ldexp((w[3] & 1) ? -f : f, e);
}

struct Stats {
  std::int64_t elements = 0, nonzero = 0;
};

/// The fast reference against the MPFR reference: c bit for bit (NaN as NaN), status equal but for
/// kRefFallback, and abs_sum an upper bound of MPFR's RU(sum |a b|) within the documented relative
/// tolerance 3 (K + nblocks + 2) 2^-53 (+ the absolute underflow term when fp64 inputs may underflow).
Stats compare(const Mat& A, const Mat& B, const std::string& what, const GemmRefOptions& opt = {}) {
  const GemmRef f = gemm_reference(A.view(), B.view(), opt);
  const GemmRef m = gemm_reference_mpfr(A.view(), B.view(), opt);
  REQUIRE(f.m == m.m);
  REQUIRE(f.n == m.n);
  REQUIRE(f.c.size() == m.c.size());
  const std::int64_t K = A.cols;
  const double nb = static_cast<double>(f.info.kblock ? (K + f.info.kblock - 1) / f.info.kblock : 1);
  const double rel = 3 * (static_cast<double>(K) + nb + 2) * 0x1p-53;
  Stats st;
  int failures = 0;
  for (std::size_t e = 0; e < f.c.size(); ++e) {
    const RefValue& x = f.c[e];
    const RefValue& y = m.c[e];
    const bool nan = std::isnan(y.hi);
    const bool ok_c = nan ? std::isnan(x.hi) : (bits(x.hi) == bits(y.hi) && bits(x.lo) == bits(y.lo) && x.tail == y.tail);
    const bool ok_s = (f.status[e] & ~kRefFallback) == m.status[e];
    bool ok_a;
    if (std::isinf(m.abs_sum[e])) {
      ok_a = std::isinf(f.abs_sum[e]);
    } else {
      ok_a = f.abs_sum[e] >= m.abs_sum[e] && f.abs_sum[e] <= m.abs_sum[e] * (1 + rel) + 0x1p-1000;
    }
    if ((!ok_c || !ok_s || !ok_a) && failures++ < 5) {
      const auto i = static_cast<std::int64_t>(e) / f.n, j = static_cast<std::int64_t>(e) % f.n;
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "%s: C[%lld,%lld] fast {%a, %a, %d} st %d abs %a | mpfr {%a, %a, %d} st %d abs %a (seed %llu)",
                    what.c_str(), static_cast<long long>(i), static_cast<long long>(j), x.hi, x.lo, x.tail, f.status[e],
                    f.abs_sum[e], y.hi, y.lo, y.tail, m.status[e], m.abs_sum[e],
                    static_cast<unsigned long long>(test::seed()));
      FAIL_CHECK(buf);
      // Reproduction record: the inputs of row i and column j as hex.
      std::string rec = "row a:";
      for (std::int64_t k = 0; k < K && k < 64; ++k) {
        std::snprintf(buf, sizeof buf, " %a", A.view().at(i, k));
        rec += buf;
      }
      rec += " | col b:";
      for (std::int64_t k = 0; k < K && k < 64; ++k) {
        std::snprintf(buf, sizeof buf, " %a", B.view().at(k, j));
        rec += buf;
      }
      MESSAGE(rec);
    }
    ++st.elements;
    st.nonzero += y.hi != 0 || y.tail != 0;
  }
  CHECK(failures == 0);
  return st;
}

}  // namespace

TEST_CASE("gemm_reference: fp32 uniform random problems equal MPFR bit for bit") {
  const std::uint64_t key = test::seed() + 21;
  struct Shape {
    std::int64_t m, n, k;
  } shapes[] = {{1, 1, 1}, {3, 5, 7}, {17, 9, 64}, {40, 300, 33}, {260, 7, 100}, {31, 37, 513}};
  for (const auto& s : shapes) {
    const Mat A = make(s.m, s.k, Layout::RowMajor, 0, [&](auto i, auto j) { return u32(key, 1, i, j); });
    const Mat B = make(s.k, s.n, Layout::RowMajor, 0, [&](auto i, auto j) { return u32(key, 2, i, j); });
    const GemmRef f = gemm_reference(A.view(), B.view());
    // The fast path really ran: every element came from the slice GEMMs alone; fp32's 24-bit
    // significands need two slices once K is large enough that beta < 24.
    CHECK(f.info.fast_elements == s.m * s.n);
    CHECK(f.fallbacks == 0);
    if (s.k >= 64) CHECK(f.info.slices == 2);
    const Stats st = compare(A, B, "uniform " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k));
    CHECK(st.nonzero == st.elements);  // the comparison saw real values
  }
}

TEST_CASE("gemm_reference: layouts and leading dimensions") {
  const std::uint64_t key = test::seed() + 22;
  for (Layout la : {Layout::RowMajor, Layout::ColMajor})
    for (Layout lb : {Layout::RowMajor, Layout::ColMajor}) {
      const Mat A = make(45, 70, la, 3, [&](auto i, auto j) { return u32(key, 3, i, j); });
      const Mat B = make(70, 38, lb, 5, [&](auto i, auto j) { return u32(key, 4, i, j) * 0x1p-30; });
      compare(A, B, std::string("layout ") + (la == Layout::RowMajor ? "r" : "c") + (lb == Layout::RowMajor ? "r" : "c"));
      // The same problem in the other layout gives the same references.
      Mat A2 = make(45, 70, la == Layout::RowMajor ? Layout::ColMajor : Layout::RowMajor, 1,
                    [&](auto i, auto j) { return u32(key, 3, i, j); });
      const GemmRef r1 = gemm_reference(A.view(), B.view()), r2 = gemm_reference(A2.view(), B.view());
      CHECK(r1.c == r2.c);
    }
}

TEST_CASE("gemm_reference: K = 0, K = 1, empty outputs") {
  const std::uint64_t key = test::seed() + 23;
  {
    const Mat A(4, 0, Layout::RowMajor), B(0, 3, Layout::RowMajor);
    const GemmRef f = gemm_reference(A.view(), B.view());
    REQUIRE(f.c.size() == 12);
    for (std::size_t e = 0; e < 12; ++e) {
      CHECK(f.c[e] == RefValue{});
      CHECK(f.abs_sum[e] == 0.0);
      CHECK(f.status[e] == kRefOk);
    }
    compare(A, B, "K=0");
  }
  {
    const Mat A = make(9, 1, Layout::RowMajor, 0, [&](auto i, auto j) { return u32(key, 5, i, j) * std::ldexp(1.0, static_cast<int>(i) * 13 - 60); });
    const Mat B = make(1, 11, Layout::ColMajor, 2, [&](auto i, auto j) { return u32(key, 6, i, j); });
    compare(A, B, "K=1");
    // K = 1: each element is one fp32 x fp32 product, exact in double.
    const GemmRef f = gemm_reference(A.view(), B.view());
    for (std::int64_t i = 0; i < 9; ++i)
      for (std::int64_t j = 0; j < 11; ++j) CHECK(f.at(i, j) == RefValue{A.view().at(i, 0) * B.view().at(0, j), 0.0, 0});
  }
  {
    const Mat A(0, 5, Layout::RowMajor), B(5, 7, Layout::RowMajor);
    CHECK(gemm_reference(A.view(), B.view()).c.empty());
  }
  const Mat A(2, 3, Layout::RowMajor), B(4, 2, Layout::RowMajor);
  CHECK_THROWS_AS(gemm_reference(A.view(), B.view()), std::invalid_argument);
}

TEST_CASE("gemm_reference: heavy cancellation") {
  const std::uint64_t key = test::seed() + 24;
  const std::int64_t M = 6, N = 5, K = 64;
  // Rows of x, -x pairs against a column of equal pairs: every element cancels to exactly zero;
  // other columns break the symmetry by one product of the smallest scale.
  Mat A(M, K, Layout::RowMajor), B(K, N, Layout::ColMajor);
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t k = 0; k < K; k += 2) {
      const double x = u32(key, 7, i, k) * std::ldexp(1.0, static_cast<int>(k % 40) - 20);
      A.at(i, k) = x;
      A.at(i, k + 1) = -x;
    }
  for (std::int64_t k = 0; k < K; k += 2)
    for (std::int64_t j = 0; j < N; ++j) {
      const double y = u32(key, 8, k, j);
      B.at(k, j) = y;
      B.at(k + 1, j) = (j == 0 || k != 2 * j) ? y : y * (1 + 0x1p-23);  // column j > 0: one pair off by an ulp
    }
  compare(A, B, "x,-x pairs");
  const GemmRef f = gemm_reference(A.view(), B.view());
  for (std::int64_t i = 0; i < M; ++i) CHECK(f.at(i, 0) == RefValue{});

  // 1e30 + 1 - 1e30 (fp32: 1e30f), as a GEMM row against ones; and variants whose exact sum is a
  // tiny fraction of the largest product.
  Mat A2(3, 4, Layout::RowMajor), B2(4, 2, Layout::RowMajor);
  const double big = static_cast<float>(1e30);
  const double rows[3][4] = {{big, 1.0, -big, 0.0}, {big, 0x1p-100, -big, 0x1p-126}, {big, -big, 0x1p-149, 0.0}};
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 4; ++k) A2.at(i, k) = rows[i][k];
  for (int k = 0; k < 4; ++k) {
    B2.at(k, 0) = 1.0;
    B2.at(k, 1) = k == 2 ? 1.0 + 0x1p-23 : 1.0;  // -1e30 (1 + 2^-23) leaves -1e30 * 2^-23 + ...
  }
  compare(A2, B2, "1e30 + 1 - 1e30");
  const GemmRef f2 = gemm_reference(A2.view(), B2.view());
  CHECK(f2.at(0, 0) == RefValue{1.0, 0.0, 0});
  CHECK(f2.at(2, 0) == RefValue{0x1p-149, 0.0, 0});  // cancels to the smallest fp32 subnormal
}

TEST_CASE("gemm_reference: cancellation to a subnormal double (fp64 inputs)") {
  // 2^-537 * 2^-537 = 2^-1074 is the smallest subnormal; the big products cancel around it.
  Mat A(2, 4, Layout::RowMajor), B(4, 1, Layout::RowMajor);
  const double a[2][4] = {{0x1p-537, 0x1p500, -0x1p500, 0}, {3 * 0x1p-537, -0x1p-536, 0x1p-600, -0x1p-600}};
  const double b[4] = {0x1p-537, 0x1p-3, 0x1p-3, 0x1p-537};
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) A.at(i, k) = a[i][k];
  for (int k = 0; k < 4; ++k) B.at(k, 0) = b[k];
  compare(A, B, "subnormal double");
  const GemmRef f = gemm_reference(A.view(), B.view());
  CHECK(f.at(0, 0) == RefValue{0x1p-1074, 0.0, 0});
  CHECK((f.status[0] & kRefTiny) != 0);
}

TEST_CASE("gemm_reference: huge exponent spread (2^-149 with 2^127) and all-subnormal fp32 inputs") {
  const std::uint64_t key = test::seed() + 25;
  const std::int64_t M = 23, N = 19, K = 90;
  auto spread = [&](std::uint64_t stream) {
    return [=](std::int64_t i, std::int64_t j) {
      const auto w = philox_4x32(key, stream, static_cast<std::uint64_t>(i * 1000 + j));
      switch (w[0] % 4) {
        case 0: return static_cast<double>(static_cast<float>(std::ldexp(1.0 + (w[1] >> 9) * 0x1p-23, 127))) * ((w[2] & 1) ? -1 : 1);
        case 1: return 0x1p-149 * static_cast<double>(1 + w[1] % 7) * ((w[2] & 1) ? -1 : 1);
        default: return u32(key, stream + 100, i, j);
      }
    };
  };
  const Mat A = make(M, K, Layout::RowMajor, 0, spread(9));
  const Mat B = make(K, N, Layout::ColMajor, 0, spread(10));
  compare(A, B, "spread");
  const GemmRef f = gemm_reference(A.view(), B.view());
  CHECK(f.fallbacks > 0);  // entries outside the slice window were added per element
  // All-subnormal fp32 inputs: multiples of 2^-149 below 2^-126.
  auto sub = [&](std::uint64_t stream) {
    return [=](std::int64_t i, std::int64_t j) {
      const auto w = philox_4x32(key, stream, static_cast<std::uint64_t>(i * 1000 + j));
      return 0x1p-149 * static_cast<double>(w[0] & 0x7FFFFF) * ((w[1] & 1) ? -1 : 1);
    };
  };
  const Mat As = make(20, 50, Layout::ColMajor, 0, sub(11));
  const Mat Bs = make(50, 30, Layout::RowMajor, 0, sub(12));
  const Stats st = compare(As, Bs, "all subnormal");
  CHECK(st.nonzero > 0);
}

TEST_CASE("gemm_reference: results that overflow fp32 but not fp64") {
  const std::uint64_t key = test::seed() + 26;
  const std::int64_t M = 8, N = 8, K = 40;
  const Mat A = make(M, K, Layout::RowMajor, 0, [&](auto i, auto j) { return std::fabs(u32(key, 13, i, j)) * 0x1p127; });
  const Mat B = make(K, N, Layout::RowMajor, 0, [&](auto i, auto j) { return std::fabs(u32(key, 14, i, j)) * 0x1p120; });
  compare(A, B, "overflow fp32");
  const GemmRef f = gemm_reference(A.view(), B.view());
  int overflow32 = 0;
  for (std::size_t e = 0; e < f.c.size(); ++e) {
    CHECK(std::isfinite(f.c[e].hi));
    CHECK(f.status[e] == kRefOk);
    const Rounded r = round_ref(f32, f.c[e], Rounder::nearest(f32));
    overflow32 += (r.flags & kOverflow) != 0 && r.code == f32.inf_code();
  }
  CHECK(overflow32 == M * N);
}

TEST_CASE("gemm_reference: NaN and Inf inputs follow IEEE") {
  const std::uint64_t key = test::seed() + 27;
  const std::int64_t M = 5, N = 6, K = 12;
  Mat A = make(M, K, Layout::RowMajor, 0, [&](auto i, auto j) { return u32(key, 15, i, j); });
  Mat B = make(K, N, Layout::ColMajor, 0, [&](auto i, auto j) { return u32(key, 16, i, j); });
  A.at(0, 3) = NAN;       // row 0: NaN everywhere
  A.at(1, 4) = INFINITY;  // row 1: +-Inf by the sign of b_4j, NaN where b_4j is 0 or another Inf cancels
  B.at(4, 2) = 0.0;       // Inf * 0 = NaN
  A.at(2, 5) = INFINITY;
  A.at(2, 6) = INFINITY;
  B.at(5, 3) = 1.0;
  B.at(6, 3) = -1.0;       // Inf - Inf = NaN in column 3 of row 2
  B.at(7, 5) = -INFINITY;  // column 5: -Inf * a_i7
  compare(A, B, "nonfinite");
  const GemmRef f = gemm_reference(A.view(), B.view());
  for (std::int64_t j = 0; j < N; ++j) CHECK(std::isnan(f.at(0, j).hi));
  CHECK(std::isnan(f.at(1, 2).hi));
  CHECK(std::isnan(f.at(2, 3).hi));
  CHECK(std::isinf(f.at(1, 0).hi));
  CHECK(f.at(3, 0).hi == doctest::Approx(f.at(3, 0).hi));  // row 3 finite except column 5
  CHECK(std::isfinite(f.at(3, 0).hi));
  CHECK(std::isinf(f.at(3, 5).hi));
  CHECK(f.status[static_cast<std::size_t>(3 * N + 5)] == kRefNonFinite);
  CHECK(f.status[static_cast<std::size_t>(3 * N + 0)] == kRefOk);
}

TEST_CASE("gemm_reference: fp64 inputs (full significands, wide and extreme exponents)") {
  const std::uint64_t key = test::seed() + 28;
  struct Range {
    int emin, emax;
    const char* name;
  } ranges[] = {{-3, 3, "fp64 narrow"}, {-60, 60, "fp64 wide"}, {-1074, 1023, "fp64 everything"}, {480, 540, "fp64 overflow"},
                {-560, -500, "fp64 tiny"}};
  for (const auto& rg : ranges) {
    const Mat A = make(21, 57, Layout::RowMajor, 0, [&](auto i, auto j) { return d64(key, 17, i, j, rg.emin, rg.emax); });
    const Mat B = make(57, 13, Layout::ColMajor, 1, [&](auto i, auto j) { return d64(key, 18, i, j, rg.emin, rg.emax); });
    compare(A, B, rg.name);
  }
  // Short significands (1 to 3 bits) over the whole exponent range: the one- or two-slice split is
  // chosen, and rows whose largest entry is near 2^1023 scale their tiny entries below double's
  // range (the underflow case of the capture test, docs/oracle.md "Slices").
  {
    auto shortsig = [&](std::uint64_t stream) {
      return [=](std::int64_t i, std::int64_t j) {
        const auto w = philox_4x32(key, stream, static_cast<std::uint64_t>(i * 1000 + j));
        const int e = (w[0] % 3 == 0) ? 1000 + static_cast<int>(w[1] % 23) : -1074 + static_cast<int>(w[1] % 2098);
        return std::ldexp(static_cast<double>(1 + 2 * (w[2] % 4)) * ((w[3] & 1) ? -1 : 1), e);
      };
    };
    const Mat A = make(15, 40, Layout::RowMajor, 0, shortsig(21));
    const Mat B = make(40, 11, Layout::ColMajor, 0, shortsig(22));
    const GemmRef f = gemm_reference(A.view(), B.view());
    CHECK(f.info.slices <= 2);
    compare(A, B, "fp64 short significands");
  }
  // fp64 overflow and tiny statuses really occur in those ranges.
  const Mat A = make(4, 8, Layout::RowMajor, 0, [&](auto i, auto j) { return std::fabs(d64(key, 19, i, j, 520, 530)); });
  const Mat B = make(8, 4, Layout::RowMajor, 0, [&](auto i, auto j) { return std::fabs(d64(key, 20, i, j, 520, 530)); });
  const GemmRef f = gemm_reference(A.view(), B.view());
  for (auto s : f.status) CHECK((s & kRefOverflow) != 0);
}

TEST_CASE("gemm_reference: inputs decoded from narrow formats (bf16, fp16, e4m3, e5m2)") {
  const std::uint64_t key = test::seed() + 29;
  for (const Format* fmt : {&bf16, &f16, &e4m3, &e5m2, &tf32}) {
    auto gen = [&](std::uint64_t stream) {
      return [=](std::int64_t i, std::int64_t j) {
        for (std::uint64_t t = 0;; ++t) {
          const auto w = philox_4x32(key, stream, static_cast<std::uint64_t>(i * 100000 + j) * 64 + t);
          const std::uint64_t code = w[0] & fmt->code_mask();
          const double v = to_double(*fmt, code);
          if (std::isfinite(v)) return v;
        }
      };
    };
    const Mat A = make(33, 200, Layout::RowMajor, 0, gen(30));
    const Mat B = make(200, 29, Layout::RowMajor, 0, gen(31));
    const Stats st = compare(A, B, std::string("narrow ") + std::string(fmt->tag));
    CHECK(st.nonzero > 0);
  }
}

TEST_CASE("gemm_reference: K beyond one exact block (block sums in integers)") {
  const std::uint64_t key = test::seed() + 30;
  const std::int64_t K = 4500;  // > 2048: three K blocks
  // Row 2 holds a few entries far below its largest one: they fall outside the slice window and
  // are added per element, across K blocks.
  const Mat A = make(5, K, Layout::RowMajor, 0, [&](auto i, auto j) {
    return u32(key, 32, i, j) * ((i == 2 && j % 1000 == 7) ? 0x1p-70 : 1.0);
  });
  const Mat B = make(K, 6, Layout::ColMajor, 0, [&](auto i, auto j) { return u32(key, 33, i, j) * ((j & 1) ? 1e10 : 1.0); });
  const GemmRef f = gemm_reference(A.view(), B.view());
  CHECK(f.info.kblock < K);
  CHECK(f.fallbacks == 6);  // row 2 only
  compare(A, B, "K=4500");
}

TEST_CASE("gemm_reference: threads do not change the result") {
  const std::uint64_t key = test::seed() + 31;
  const Mat A = make(300, 80, Layout::RowMajor, 0, [&](auto i, auto j) { return u32(key, 34, i, j); });
  const Mat B = make(80, 270, Layout::RowMajor, 0, [&](auto i, auto j) { return u32(key, 35, i, j); });
  const GemmRef r1 = gemm_reference(A.view(), B.view(), {1}), r2 = gemm_reference(A.view(), B.view(), {2});
  CHECK(r1.c == r2.c);
  CHECK(r1.abs_sum == r2.abs_sum);
  compare(A, B, "300x270x80");
  // K past Eigen's own K blocking: the rounded |A||B| depends on the output tiles' shape, which must come from
  // the shape alone (a --devices worker runs with a part of the threads; its results are the single run's).
  const Mat A2 = make(200, 1500, Layout::RowMajor, 0, [&](auto i, auto j) { return u32(key, 36, i, j); });
  const Mat B2 = make(1500, 190, Layout::RowMajor, 0, [&](auto i, auto j) { return u32(key, 37, i, j); });
  const GemmRef s1 = gemm_reference(A2.view(), B2.view(), {1});
  for (const unsigned t : {2u, 3u, 16u}) {
    const GemmRef st = gemm_reference(A2.view(), B2.view(), {t});
    CHECK_MESSAGE(st.c == s1.c, t << " threads");
    CHECK_MESSAGE(st.abs_sum == s1.abs_sum, t << " threads");
  }
}
