// tests/oracle/softmax/softmax_ref_test.cpp — the softmax reference (oracle/softmax/softmax_ref.hpp): 10^6 elements of
// random rows (uniform logits, spreads to 3000, ties, a dominant entry, masked entries; softmax and log-softmax; f32,
// f16 and bf16 results) equal MPFR at 200 bits rounded once, code for code; special values as documented; exact cases.
// The seed is printed and read back from FPCERT_TEST_SEED to reproduce.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "base/parallel.hpp"
#include "oracle/softmax/softmax_ref.hpp"
#include "tests/support/splitmix.hpp"

namespace fpcert {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::uint64_t seed_from_env() {
  const char* s = std::getenv("FPCERT_TEST_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261203;
}

using test::mix;
using test::unit;

/// Row r of the random set: fp32 logits of one of five kinds, some entries masked.
std::vector<double> random_row(std::uint64_t seed, std::uint64_t r, std::size_t n) {
  std::vector<double> z(n);
  const std::uint64_t kind = r % 5;
  const double spread = kind == 1 ? 200 : kind == 2 ? 3000 : 8;
  const std::size_t dom = static_cast<std::size_t>(unit(seed, r * 7919 + 1) * static_cast<double>(n));
  for (std::size_t j = 0; j < n; ++j) {
    const double u = unit(seed, r * 100003 + j);
    double v = spread * (u - 0.5);
    if (kind == 3) v = std::floor(u * 3) - 1;  // ties
    if (kind == 4) v = j == dom ? 20 : u - 0.5;  // a dominant entry
    z[j] = static_cast<float>(v);
    if (unit(seed, r * 31 + j * 17 + 5) < 0.05 && j != dom) z[j] = -kInf;  // masked
  }
  return z;
}

}  // namespace

TEST_CASE("softmax reference: 10^6 elements equal MPFR at 200 bits rounded once") {
  const std::uint64_t seed = seed_from_env();
  std::printf("softmax_ref_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  struct Set {
    SoftmaxFn fn;
    const Format* out;
    std::uint64_t rows;
  };
  // 100 elements a row: 6000 + 2000 + 1000 + 1000 rows = 10^6 elements.
  const Set sets[] = {{SoftmaxFn::Softmax, &f32, 6000}, {SoftmaxFn::LogSoftmax, &f32, 2000}, {SoftmaxFn::Softmax, &f16, 1000},
                      {SoftmaxFn::Softmax, &bf16, 1000}};
  constexpr std::size_t n = 100;
  std::int64_t elements = 0, mpfr = 0, differ = 0, nonzero = 0;
  for (const Set& s : sets) {
    std::vector<std::int64_t> diff(s.rows, 0), used(s.rows, 0), nz(s.rows, 0);
    parallel_for(s.rows, 8, [&](std::uint64_t b, std::uint64_t e, unsigned) {
      for (std::uint64_t r = b; r < e; ++r) {
        const std::vector<double> z = random_row(seed + static_cast<std::uint64_t>(s.fn) * 7 + s.out->precision(), r, n);
        std::vector<std::uint64_t> fast(n), slow(n);
        std::vector<double> value(n);
        SoftmaxRefStats st;
        softmax_reference_row(s.fn, z.data(), n, *s.out, MaskedRowPolicy::Zero, fast.data(), value.data(), &st);
        softmax_mpfr_row(s.fn, z.data(), n, *s.out, 200, slow.data());
        used[r] = st.mpfr;
        if (fast != slow) {
          // An exact value within 2^-180 of a rounding boundary (a log-softmax z_i - M on an f32 midpoint minus a log S
          // of e^-1500: 2^-2164) is rounded wrongly at 200 bits; the same at 2^15 bits settles it (e^-3000 > 2^-4330).
          std::vector<std::uint64_t> wide(n);
          softmax_mpfr_row(s.fn, z.data(), n, *s.out, 1 << 15, wide.data());
          for (std::size_t i = 0; i < n; ++i)
            if (fast[i] != slow[i] && wide[i] == fast[i]) slow[i] = wide[i], ++used[r];
        }
        for (std::size_t i = 0; i < n; ++i) {
          diff[r] += fast[i] != slow[i];
          nz[r] += to_double(*s.out, slow[i]) != 0;
          if (fast[i] != slow[i] && diff[r] == 1)
            std::printf("row %llu element %zu (%s into %s): reference 0x%llx, MPFR 0x%llx\n", static_cast<unsigned long long>(r), i,
                        std::string(to_string(s.fn)).c_str(), std::string(s.out->tag).c_str(), static_cast<unsigned long long>(fast[i]),
                        static_cast<unsigned long long>(slow[i]));
        }
      }
    });
    for (std::uint64_t r = 0; r < s.rows; ++r) differ += diff[r], mpfr += used[r], nonzero += nz[r];
    elements += static_cast<std::int64_t>(s.rows * n);
  }
  std::printf("softmax_ref_test: %lld elements, %lld differences, %lld decided by MPFR (Ziv) or settled at 2^15 bits, %lld nonzero\n",
              static_cast<long long>(elements), static_cast<long long>(differ), static_cast<long long>(mpfr), static_cast<long long>(nonzero));
  CHECK(elements == 1000000);
  CHECK(differ == 0);
  CHECK(nonzero > elements / 2);  // the comparison is not one of zeros
}

TEST_CASE("softmax reference: special values and fully masked rows") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::uint64_t> c(3);
  std::vector<double> v(3);
  SUBCASE("a NaN or +Inf logit makes the row NaN (max = +Inf: Inf - Inf)") {
    for (double bad : {nan, kInf}) {
      const double z[3] = {1, bad, 2};
      for (SoftmaxFn fn : {SoftmaxFn::Softmax, SoftmaxFn::LogSoftmax}) {
        softmax_reference_row(fn, z, 3, f32, MaskedRowPolicy::Zero, c.data(), v.data());
        for (auto code : c) CHECK(std::isnan(to_double(f32, code)));
      }
    }
  }
  SUBCASE("-Inf is a zero weight; the rest is the softmax of the others") {
    const double z[3] = {0, -kInf, 0};
    softmax_reference_row(SoftmaxFn::Softmax, z, 3, f32, MaskedRowPolicy::Zero, c.data(), v.data());
    CHECK(to_double(f32, c[0]) == 0.5);  // e^0 / (e^0 + e^0), exact
    CHECK(c[1] == 0);                    // +0
    softmax_reference_row(SoftmaxFn::LogSoftmax, z, 3, f32, MaskedRowPolicy::Zero, c.data(), v.data());
    CHECK(to_double(f32, c[1]) == -kInf);
    CHECK(to_double(f32, c[0]) == static_cast<float>(-std::log(2.0)));  // -log 2 rounded once (far from a boundary)
  }
  SUBCASE("a fully masked row: the declared policy") {
    const double z[3] = {-kInf, -kInf, -kInf};
    softmax_reference_row(SoftmaxFn::Softmax, z, 3, f32, MaskedRowPolicy::Zero, c.data(), v.data());
    for (auto code : c) CHECK(code == 0);
    softmax_reference_row(SoftmaxFn::Softmax, z, 3, f32, MaskedRowPolicy::Nan, c.data(), v.data());
    for (auto code : c) CHECK(std::isnan(to_double(f32, code)));
    softmax_reference_row(SoftmaxFn::LogSoftmax, z, 3, f32, MaskedRowPolicy::Zero, c.data(), v.data());
    for (auto code : c) CHECK(to_double(f32, code) == -kInf);
  }
}

TEST_CASE("softmax reference: exact and near-exact cases") {
  // Equal logits: y = 1/n. n = 4: 0.25 exactly; n = 3: RN_f32(1/3) = 0x3eaaaaab (1/3 = 0x1.5555...p-2 rounds up).
  const double four[4] = {7, 7, 7, 7}, three[3] = {-3, -3, -3};
  std::uint64_t c[4];
  softmax_reference_row(SoftmaxFn::Softmax, four, 4, f32, MaskedRowPolicy::Zero, c, nullptr);
  for (auto code : c) CHECK(to_double(f32, code) == 0.25);
  softmax_reference_row(SoftmaxFn::Softmax, three, 3, f32, MaskedRowPolicy::Zero, c, nullptr);
  for (int i = 0; i < 3; ++i) CHECK(c[i] == 0x3eaaaaabu);
  // A single element: softmax 1, log-softmax +0, whatever its value.
  const double one[1] = {88.5};
  softmax_reference_row(SoftmaxFn::Softmax, one, 1, f16, MaskedRowPolicy::Zero, c, nullptr);
  CHECK(to_double(f16, c[0]) == 1.0);
  softmax_reference_row(SoftmaxFn::LogSoftmax, one, 1, f32, MaskedRowPolicy::Zero, c, nullptr);
  CHECK(c[0] == 0);  // +0: IEEE's (z - max) - log(1) = 0 - 0 = +0
  // A dominant entry 200 above another: log-softmax of the max is -log(1 + e^-200) = -1.38e-87: below f32's least
  // subnormal/2 = 2^-150, so -0 (code 0x80000000); softmax of the small one e^-200 / (1 + e^-200) also rounds to +0.
  const double dom[2] = {200, 0};
  softmax_reference_row(SoftmaxFn::LogSoftmax, dom, 2, f32, MaskedRowPolicy::Zero, c, nullptr);
  CHECK(c[0] == 0x80000000u);
  CHECK(to_double(f32, c[1]) == -200.0f);  // -200 - 1.4e-87 rounds to -200
  softmax_reference_row(SoftmaxFn::Softmax, dom, 2, f32, MaskedRowPolicy::Zero, c, nullptr);
  CHECK(to_double(f32, c[0]) == 1.0);
  CHECK(c[1] == 0);  // A midpoint minus a log S of e^-1500 (2^-2164): z_1 - M = -(2048 + 2^-13) lies halfway between the fp32 values
  // -2048 and -(2048 + 2^-12); y_1 = that - log1p(e^-1500 + ...) is just beyond it, so it rounds to -(2048 + 2^-12), not to
  // the even -2048. Only a precision above 2176 bits sees it (Ziv's loop goes to 4096).
  const double mid[3] = {0, -(2048 + 0x1p-13), -1500};
  softmax_reference_row(SoftmaxFn::LogSoftmax, mid, 3, f32, MaskedRowPolicy::Zero, c, nullptr);
  CHECK(to_double(f32, c[1]) == -(2048 + 0x1p-12));
  CHECK(to_double(f32, c[2]) == -1500.0);
}

}  // namespace fpcert
