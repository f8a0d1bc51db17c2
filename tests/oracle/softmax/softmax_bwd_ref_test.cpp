// tests/oracle/softmax/softmax_bwd_ref_test.cpp — the softmax / log-softmax backward reference
// (oracle/softmax/softmax_bwd_ref.hpp): random rows in f16, bf16 and f32 (y the correctly rounded forward output of
// random logits, dy random, correlated with y so that dy_j - D or dy_j - e^{y_j} G cancels, or one-hot as a
// cross-entropy gives it; scales that round) equal a pure-MPFR evaluation at 300 bits rounded once, code for code;
// special values as the header documents; exact cases. The seed is printed and read back from FPCERT_TEST_SEED.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "oracle/round.hpp"
#include "oracle/softmax/softmax_bwd_ref.hpp"

namespace fpcert {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::uint64_t seed_from_env() {
  const char* s = std::getenv("FPCERT_TEST_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261204;
}

/// splitmix64: the test's own generator (the reference must not share the generators' code).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double unit(std::uint64_t seed, std::uint64_t i) { return static_cast<double>(mix(seed ^ mix(i)) >> 11) * 0x1p-53; }
double q(const Format& f, double v) { return to_double(f, round_double(f, v, Rounder::nearest(f)).code); }

struct Row {
  std::vector<double> y, dy;
  double scale = 1;
};

/// Row r: logits of spread 8, 30 or 200 (some masked for log-softmax), y their forward output in f; dy of one of four
/// kinds: uniform, y-correlated (dy_j = c + tiny: softmax's dy_j - D ~ tiny; log-softmax dy_j = K e^{y_j} + tiny, so
/// dy_j - e^{y_j} G cancels), one-hot (-1 at one entry: a cross-entropy), huge/tiny magnitudes.
Row random_row(std::uint64_t seed, std::uint64_t r, std::size_t n, SoftmaxFn fn, const Format& f) {
  Row row;
  std::vector<double> z(n);
  const double spread = r % 3 == 0 ? 8 : r % 3 == 1 ? 30 : 200;
  for (std::size_t j = 0; j < n; ++j) {
    z[j] = static_cast<float>(spread * (unit(seed, r * 100003 + j) - 0.5));
    if (fn == SoftmaxFn::LogSoftmax && unit(seed, r * 31 + j * 17 + 5) < 0.05 && j != 0) z[j] = -kInf;
  }
  std::vector<std::uint64_t> codes(n);
  softmax_reference_row(fn, z.data(), n, f, MaskedRowPolicy::Zero, codes.data(), nullptr);
  row.y.resize(n);
  for (std::size_t j = 0; j < n; ++j) row.y[j] = to_double(f, codes[j]);
  row.dy.resize(n);
  const std::uint64_t kind = (r / 3) % 4;
  const double c = q(f, 4 * unit(seed, r * 7 + 3) - 2);
  const std::size_t hot = static_cast<std::size_t>(unit(seed, r * 7 + 1) * static_cast<double>(n));
  for (std::size_t j = 0; j < n; ++j) {
    const double u = unit(seed, r * 999331 + j) - 0.5;
    double v = 2 * u;
    if (kind == 1) v = fn == SoftmaxFn::Softmax ? c + u * 0x1p-9 : c * std::exp(row.y[j]) * (1 + u * 0x1p-9);
    if (kind == 2) v = j == hot ? -1.0 : 0.0;
    if (kind == 3) v = u * std::ldexp(1.0, static_cast<int>(unit(seed, r * 5 + j) * 40) - 20);
    row.dy[j] = q(f, v);
    if (fn == SoftmaxFn::LogSoftmax && row.y[j] == -kInf) row.dy[j] = 0;
  }
  const double scales[] = {1, static_cast<float>(0.7), 0.125, static_cast<float>(1 / std::sqrt(96.0))};
  row.scale = scales[r % 4];
  return row;
}

}  // namespace

TEST_CASE("softmax backward reference: random rows equal MPFR at 300 bits rounded once") {
  const std::uint64_t seed = seed_from_env();
  std::printf("softmax_bwd_ref_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  for (const SoftmaxFn fn : {SoftmaxFn::Softmax, SoftmaxFn::LogSoftmax})
    for (const Format* f : {&f16, &bf16, &f32}) {
      CAPTURE(to_string(fn));
      CAPTURE(f->tag);
      std::int64_t elements = 0, rounded = 0, differ = 0, mpfr = 0, cancel = 0;
      for (std::uint64_t r = 0; r < 240; ++r) {
        const std::size_t n = 1 + static_cast<std::size_t>(unit(seed, r * 3 + 11) * 300);
        const Row row = random_row(seed + r, r, n, fn, *f);
        std::vector<std::uint64_t> got(n), want(n);
        std::vector<double> value(n);
        SoftmaxBwdRefStats st;
        softmax_bwd_reference_row(fn, row.y.data(), row.dy.data(), n, row.scale, *f, got.data(), value.data(), &st);
        softmax_bwd_mpfr_row(fn, row.y.data(), row.dy.data(), n, row.scale, *f, 300, want.data());
        const SoftmaxBwdRow sums = softmax_bwd_row(fn, row.y.data(), row.dy.data(), n);
        mpfr += st.mpfr;
        for (std::size_t j = 0; j < n; ++j) {
          ++elements;
          const double g = to_double(*f, got[j]);
          rounded += std::isfinite(value[j]) && g != value[j];
          const double sub = fn == SoftmaxFn::Softmax ? row.dy[j] - sums.dot : row.dy[j] - std::exp(row.y[j]) * sums.dot;
          cancel += std::fabs(sub) < 0x1p-8 * std::fabs(row.dy[j]);
          if (got[j] != want[j] && !(g == 0 && to_double(*f, want[j]) == 0)) {
            if (differ++ < 5)
              std::printf("  %s %s row %llu col %zu: reference %.17g, MPFR-300 %.17g\n", std::string(to_string(fn)).c_str(),
                          std::string(f->tag).c_str(), static_cast<unsigned long long>(r), j, g, to_double(*f, want[j]));
          }
        }
      }
      std::printf("softmax_bwd_ref_test %s %s: %lld elements, %lld rounded (not exact in the format), %lld with dy_j - D "
                  "cancelling below 2^-8 |dy_j|, %lld decided by MPFR, %lld differ\n",
                  std::string(to_string(fn)).c_str(), std::string(f->tag).c_str(), static_cast<long long>(elements),
                  static_cast<long long>(rounded), static_cast<long long>(cancel), static_cast<long long>(mpfr),
                  static_cast<long long>(differ));
      CHECK(differ == 0);
      CHECK(rounded > elements / 4);  // the inputs force rounding
      CHECK(cancel > elements / 20);  // and cancellation
      CHECK(mpfr > 0);                // the fast bracket's fall back ran
    }
}

TEST_CASE("softmax backward reference: exact cases and special values") {
  const Rounder rn = Rounder::nearest(f32);
  auto run = [](SoftmaxFn fn, std::vector<double> y, std::vector<double> dy, double s, const Format& out) {
    std::vector<std::uint64_t> c(y.size());
    std::vector<double> v(y.size());
    softmax_bwd_reference_row(fn, y.data(), dy.data(), y.size(), s, out, c.data(), v.data());
    std::vector<double> r;
    for (auto x : c) r.push_back(to_double(out, x));
    return r;
  };
  // Softmax y = (1/2, 1/4, 1/4), dy = (1, 2, 3): D = 1/2 + 1/2 + 3/4 = 7/4; dx = (-3/8, 1/16, 5/16).
  auto a = run(SoftmaxFn::Softmax, {0.5, 0.25, 0.25}, {1, 2, 3}, 1, f32);
  CHECK(a == std::vector<double>{-0.375, 0.0625, 0.3125});
  // With s = 2 every dx doubles; in f16 0.3125 * 3 = 0.9375 stays exact.
  a = run(SoftmaxFn::Softmax, {0.5, 0.25, 0.25}, {1, 2, 3}, 2, f16);
  CHECK(a == std::vector<double>{-0.75, 0.125, 0.625});
  // dy constant: dy_j - D = 0 exactly (sum y = 1): dx = +0 however large dy.
  a = run(SoftmaxFn::Softmax, {0.5, 0.25, 0.25}, {1e30, 1e30, 1e30}, 1, f32);
  CHECK(a == std::vector<double>{0, 0, 0});
  // The rounding of an exact rational: y = (1 - 2^-24, 2^-24), dy = (0, 1): D = 2^-24, dx_0 = -(1 - 2^-24) 2^-24,
  // exactly representable in f32 (24 bits); in bf16 (8 bits) it rounds to -2^-24.
  a = run(SoftmaxFn::Softmax, {1 - 0x1p-24, 0x1p-24}, {0, 1}, 1, f32);
  CHECK(a[0] == -(1 - 0x1p-24) * 0x1p-24);
  CHECK(a[1] == 0x1p-24 * (1 - 0x1p-24));
  a = run(SoftmaxFn::Softmax, {1 - 0x1p-24, 0x1p-24}, {0, 1}, 1, bf16);
  CHECK(a[0] == -0x1p-24);
  // A zero probability gives +0 whatever dy; a NaN dy makes the row NaN, an Inf dy: NaN at y = 0 (IEEE), Inf elsewhere.
  a = run(SoftmaxFn::Softmax, {1, 0}, {1, 5}, 1, f32);
  CHECK(a[1] == 0);
  CHECK(!std::signbit(a[1]));
  a = run(SoftmaxFn::Softmax, {0.5, 0.5}, {kNan, 1}, 1, f32);
  CHECK((std::isnan(a[0]) && std::isnan(a[1])));
  a = run(SoftmaxFn::Softmax, {0.5, 0.5, 0}, {kInf, 1, 1}, 1, f32);
  CHECK(std::isnan(a[0]));  // Inf - Inf
  CHECK(a[1] == -kInf);
  CHECK(std::isnan(a[2]));
  // Log-softmax y = (log 1/2, log 1/2) in f32, dy = (-1, 0): G = -1, dx = (e^{y_0} - 1, e^{y_1}) with e^{y} near 1/2:
  // against MPFR; masked entries give +0 and stay out of G.
  const double l = to_double(f32, round_double(f32, std::log(0.5), rn).code);
  std::vector<std::uint64_t> want(3);
  softmax_bwd_mpfr_row(SoftmaxFn::LogSoftmax, std::vector<double>{l, l, -kInf}.data(), std::vector<double>{-1, 0, 0}.data(), 3, 1, f32,
                       300, want.data());
  a = run(SoftmaxFn::LogSoftmax, {l, l, -kInf}, {-1, 0, 7}, 1, f32);
  CHECK(a[0] == to_double(f32, want[0]));
  CHECK(a[1] == to_double(f32, want[1]));
  CHECK(std::fabs(a[1] - 0.5) < 1e-7);
  CHECK(a[2] == 0);
  // y_j = 0 (one unmasked entry): e^0 = 1 exactly, dx = s (dy - G) = 0 exactly.
  a = run(SoftmaxFn::LogSoftmax, {0, -kInf}, {3, 5}, 0.7, f32);
  CHECK(a == std::vector<double>{0, 0});
  // e^{y_j} below MPFR's range: dx = s dy_j nudged toward -s G. dy = 1 + 2^-11 is an f16 midpoint (between 1 and
  // 1 + 2^-10): G > 0 takes it down to 1, G < 0 up to 1 + 2^-10.
  a = run(SoftmaxFn::LogSoftmax, {0, -3e38}, {1, 1 + 0x1p-11}, 1, f16);
  CHECK(a[1] == 1.0);
  a = run(SoftmaxFn::LogSoftmax, {0, -3e38}, {-4, 1 + 0x1p-11}, 1, f16);
  CHECK(a[1] == 1 + 0x1p-10);
}

}  // namespace fpcert
