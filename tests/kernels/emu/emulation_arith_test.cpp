// tests/kernels/emu/emulation_arith_test.cpp — the scalar arithmetic of the emulation kernels
// (kernels/emu/emu_arith.cuh, compiled here as host C++) against independent references: the
// oracle's correct rounding (oracle/round.hpp) and the split table's own slicing (kernels/emu/split.cpp,
// which rounds through the oracle). The device compiles the same functions; tests/kernels/emu/emulation_gpu_test.cpp
// checks that the device's results equal these bit for bit.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "base/philox.hpp"
#include "kernels/emu/cuda/emu_scheme.cuh"
#include "kernels/emu/emu_arith.cuh"
#include "kernels/emu/split.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

/// fp32 test values: random patterns over every exponent (subnormals included), values just around
/// tf32 and bf16 rounding ties (exact ties, one ulp either side), the largest finite values (whose
/// rounding overflows), signed zeros and the smallest subnormals.
std::vector<float> test_floats(std::uint64_t n, std::uint64_t seed) {
  std::vector<float> v;
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto w = philox_4x32(seed, 31, i);
    std::uint32_t b = w[0];
    if ((b & 0x7F800000u) == 0x7F800000u) b &= 0xBFFFFFFFu;  // no Inf/NaN
    v.push_back(std::bit_cast<float>(b));
    // A tie at the tf32 cut (bit 12 set, bits 0..11 clear) and at the bf16 cut (bit 15, bits 0..14), and neighbours.
    for (std::uint32_t tie : {0x1000u, 0x8000u}) {
      const std::uint32_t t = (b & ~(2 * tie - 1)) | tie;
      for (std::uint32_t d : {t - 1, t, t + 1})
        if ((d & 0x7F800000u) != 0x7F800000u) v.push_back(std::bit_cast<float>(d));
    }
  }
  for (std::uint32_t b : {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x00001000u, 0x00001001u, 0x00008000u,
                          0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7FF000u, 0x7F7F8000u, 0x3F800000u})
    v.push_back(std::bit_cast<float>(b));
  return v;
}

float oracle_round(const Format& f, Rounding r, float x) {
  const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
  return static_cast<float>(to_double(f, round_double(f, x, rr).code));
}

}  // namespace

TEST_CASE("emulation arith: tf32 and bf16 slice rounding on the bits equals the oracle's correct rounding") {
  const auto xs = test_floats(200000, test::seed());
  std::int64_t bad_rn = 0, bad_rz = 0, bad_bf = 0;
  for (float x : xs) {
    bad_rn += bits(emu::slice_round(emu::SliceKind::Tf32NearestEven, x)) != bits(oracle_round(tf32, Rounding::NearestEven, x));
    bad_rz += bits(emu::slice_round(emu::SliceKind::Tf32TowardZero, x)) != bits(oracle_round(tf32, Rounding::TowardZero, x));
    bad_bf += bits(emu::slice_round(emu::SliceKind::Bf16NearestEven, x)) != bits(oracle_round(bf16, Rounding::NearestEven, x));
  }
  INFO(xs.size() << " values (seed " << test::seed() << ")");
  CHECK(bad_rn == 0);
  CHECK(bad_rz == 0);
  CHECK(bad_bf == 0);
  // Known values: 1 + 2^-11 is a tf32 tie (rn: 1, even), 1 + 3 2^-11 rounds up to 1 + 2^-9; rz drops both.
  CHECK(emu::slice_round(emu::SliceKind::Tf32NearestEven, 1.0f + 0x1p-11f) == 1.0f);
  CHECK(emu::slice_round(emu::SliceKind::Tf32NearestEven, 1.0f + 3 * 0x1p-11f) == 1.0f + 0x1p-9f);
  CHECK(emu::slice_round(emu::SliceKind::Tf32TowardZero, 1.0f + 3 * 0x1p-11f) == 1.0f + 0x1p-10f);
  CHECK(emu::slice_round(emu::SliceKind::Bf16NearestEven, 1.0007f) == 1.0f);  // DESIGN.md: 1.0007 -> bf16 is 1.0
}

TEST_CASE("emulation arith: slices and split products equal the split table's (kernels/emu/split.cpp) for every scheme") {
  // Pairs: random significands with exponents uniform in [-126, 127] (products may underflow or
  // overflow fp32; the slices of small values are subnormal or zero), plus the test values above.
  const auto xs = test_floats(20000, test::seed() + 1);
  std::vector<float> as, bs;
  for (std::uint64_t i = 0; i < 200000; ++i) {
    const auto w = philox_4x32(test::seed(), 32, i);
    auto make = [](std::uint32_t r, std::uint32_t e) {
      const float m = 1.0f + static_cast<float>(r & 0x7FFFFF) * 0x1p-23f;
      return std::ldexp((r >> 31) ? -m : m, -126 + static_cast<int>(e % 254));
    };
    as.push_back(make(w[0], w[1]));
    bs.push_back(make(w[2], w[3]));
  }
  for (std::size_t i = 0; i + 1 < xs.size(); i += 2) as.push_back(xs[i]), bs.push_back(xs[i + 1]);
  for (const SplitScheme& sc : split_schemes()) {
    CAPTURE(sc.name);
    const emu::SliceKind kind = emu::slice_kind_of(sc);
    const emu::TermList terms = emu::terms_of(sc);
    CHECK_NOTHROW(emu::term_mask_of(sc));  // the MMA kernels' canonical order is the table's
    std::int64_t bad_slices = 0, bad_products = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < as.size(); ++i) {
      float want[3], got[3];
      split_value(sc, as[i], want);
      emu::split_slices(kind, sc.slices, as[i], got);
      for (int l = 0; l < sc.slices; ++l) bad_slices += bits(want[l]) != bits(got[l]);
      const float p = emu::split_product(kind, sc.slices, terms, as[i], bs[i]);
      if (bits(p) != bits(split_product(sc, as[i], bs[i])) && bad_products++ == 0) first = i;
    }
    INFO("first differing pair: a = " << std::hexfloat << as[first] << ", b = " << bs[first]);
    CHECK(bad_slices == 0);
    CHECK(bad_products == 0);
  }
}

TEST_CASE("emulation arith: the overflow guard - fp32 values above the slice format's largest split into finite slices") {
  // Every finite fp32 above the largest tf32 / bf16 value (and their negatives) rounds to Inf in the
  // slice format; the split must stay finite, its slices must sum to x within the first slice's u (the
  // residual bound of kernels/emu/split.hpp), and a product with 0 is 0, with 1 finite and within
  // operand_u of x (the slices never sum past |x|: no overflow of x * 1).
  for (const SplitScheme& sc : split_schemes()) {
    CAPTURE(sc.name);
    const emu::SliceKind kind = emu::slice_kind_of(sc);
    // The first slice's residual: at most u_S |x| (nearest, saturated or not), one ulp for truncation.
    const double u = (sc.slice == &bf16 ? 0x1p-8 : 0x1p-11) * (sc.rounding == Rounding::TowardZero ? 2 : 1);
    std::int64_t nonfinite = 0, residual = 0, zero_products = 0, one_products = 0, checked = 0;
    for (std::uint32_t b = 0x7F7F0000u; b <= 0x7F7FFFFFu; b += 7) {
      for (float x : {std::bit_cast<float>(b), -std::bit_cast<float>(b)}) {
        ++checked;
        float sl[3] = {0, 0, 0}, host[3] = {0, 0, 0};
        emu::split_slices(kind, sc.slices, x, sl);
        split_value(sc, x, host);
        double sum = 0;
        for (int l = 0; l < sc.slices; ++l) {
          nonfinite += !std::isfinite(sl[l]) || bits(sl[l]) != bits(host[l]);
          sum += sl[l];
        }
        residual += std::fabs(static_cast<double>(x) - static_cast<double>(sl[0])) > u * std::fabs(static_cast<double>(x));
        residual += sc.slices == 1 ? false : std::fabs(static_cast<double>(x) - sum) > sc.operand_u * std::fabs(static_cast<double>(x));
        const float p0 = emu::split_product(kind, sc.slices, emu::terms_of(sc), x, 0.0f);
        zero_products += bits(p0) != 0 && bits(p0) != 0x80000000u;
        const float p1 = emu::split_product(kind, sc.slices, emu::terms_of(sc), x, 1.0f);
        one_products += !(std::fabs(static_cast<double>(p1) - static_cast<double>(x)) <= sc.operand_u * std::fabs(static_cast<double>(x)));
      }
    }
    INFO(checked << " values");
    CHECK(nonfinite == 0);
    CHECK(residual == 0);
    CHECK(zero_products == 0);
    CHECK(one_products == 0);
    // Inf and NaN are not clipped: Inf splits into Inf.
    float inf_sl[3];
    emu::split_slices(kind, sc.slices, INFINITY, inf_sl);
    CHECK(std::isinf(inf_sl[0]));
  }
}

TEST_CASE("emulation arith: the MMA kernels refuse a table order that is not theirs") {
  SplitScheme s = *find_split_scheme("6xbf16");
  std::swap(s.terms[0], s.terms[1]);  // (1,1) before (2,0): another merge order
  CHECK_THROWS_AS(emu::term_mask_of(s), std::logic_error);
  SplitScheme t = *find_split_scheme("3xtf32");
  t.terms.pop_back();  // (0,0) dropped
  CHECK_THROWS_AS(emu::term_mask_of(t), std::logic_error);
}

TEST_CASE("emulation arith: bf16 -> fp16 with a power-of-two scale equals RN_f16(x 2^s), flags included (all bf16 codes)") {
  // Every bf16 code (Inf and NaN apart) for every s in [-160, 160] (the scales a plan can produce lie
  // in [-112, 148]): the code must be the oracle's nearest-even rounding of the exact x 2^s into fp16,
  // and the flags must say exactly: inexact iff the value moved, overflow iff a finite x became Inf,
  // underflow iff a nonzero x became 0, subnormal iff the result is a nonzero fp16 subnormal.
  const Rounder rn = Rounder::nearest(f16);
  std::int64_t bad = 0, exact_window = 0, checked = 0;
  for (int s = -160; s <= 160; ++s)
    for (std::uint32_t c = 0; c < 0x10000; ++c) {
      const auto code = static_cast<std::uint16_t>(c);
      const double x = to_double(bf16, code);
      if (!std::isfinite(x)) continue;
      const double xs = std::ldexp(x, s);  // exact in double: 8 bits, exponent within +-300
      const std::uint64_t want = round_double(f16, xs, rn).code;
      const emu::F16Conv got = emu::bf16_to_f16_scaled(code, s);
      const double y = to_double(f16, got.code);
      const bool inexact = y != xs, overflow = std::isinf(y), under = x != 0 && y == 0;
      const bool sub = y != 0 && std::fabs(y) < 0x1p-14;
      const bool ok = got.code == want && ((got.flags & emu::kF16Inexact) != 0) == inexact &&
                      ((got.flags & emu::kF16Overflow) != 0) == overflow && ((got.flags & emu::kF16Underflow) != 0) == under &&
                      ((got.flags & emu::kF16Subnormal) != 0) == sub;
      if (!ok && bad++ < 5)
        std::printf("bf16 %04x s=%d: got %04x flags %u, want %04x (inexact %d overflow %d underflow %d subnormal %d)\n", c, s,
                    got.code, got.flags, static_cast<unsigned>(want), inexact, overflow, under, sub);
      // The window claim: binade e of a nonzero x with e + s in [-17, 15] converts exactly.
      const int e = emu::bf16_binade(code);
      if (e != emu::kNoBinade && e + s >= emu::kF16Low && e + s <= emu::kF16High) {
        ++exact_window;
        if (inexact) ++bad;
      }
      ++checked;
    }
  INFO(checked << " conversions, " << exact_window << " inside the window");
  CHECK(bad == 0);
  CHECK(exact_window > 0);
}

TEST_CASE("emulation arith: binades, fp16 decoding, exact power-of-two rescaling, best windows") {
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const double x = to_double(bf16, c);
    const int e = emu::bf16_binade(static_cast<std::uint16_t>(c));
    if (!std::isfinite(x) || x == 0) {
      CHECK(e == emu::kNoBinade);
    } else {
      CHECK(e == static_cast<int>(std::floor(std::log2(std::fabs(x)))));
    }
    const double h = to_double(f16, c);
    if (!std::isnan(h)) CHECK(static_cast<double>(emu::f16_value(static_cast<std::uint16_t>(c))) == h);
  }
  // ldexp_rn: RN_f32(x 2^m) with one rounding; the reference forms x 2^m exactly in double.
  std::int64_t bad = 0;
  for (std::uint64_t i = 0; i < 400000; ++i) {
    const auto w = philox_4x32(test::seed(), 33, i);
    std::uint32_t b = w[0];
    if ((b & 0x7F800000u) == 0x7F800000u) b &= 0xBFFFFFFFu;
    const float x = std::bit_cast<float>(b);
    const int m = static_cast<int>(w[1] % 601) - 300;
    const float want = static_cast<float>(std::ldexp(static_cast<double>(x), m));
    bad += bits(emu::ldexp_rn(x, m)) != bits(want);
  }
  CHECK(bad == 0);
  // best_window_top against its definition by brute force: among the binades present, the top t
  // whose window [t - 32, t] holds the most entries, the highest on ties.
  for (std::uint64_t trial = 0; trial < 2000; ++trial) {
    std::vector<int> hist(emu::kBinadeBins, 0);
    const auto w = philox_4x32(test::seed(), 34, trial);
    const int entries = 1 + static_cast<int>(w[0] % 40), width = 1 + static_cast<int>(w[1] % 90);
    const int base = static_cast<int>(w[2] % static_cast<std::uint32_t>(emu::kBinadeBins - width));
    for (int q = 0; q < entries; ++q) ++hist[static_cast<std::size_t>(base + static_cast<int>(philox_4x32(test::seed(), 35, trial * 64 + static_cast<std::uint64_t>(q))[0] % static_cast<std::uint32_t>(width)))];
    int best = -1, top = emu::kNoBinade;
    for (int t = 0; t < emu::kBinadeBins; ++t) {
      if (!hist[static_cast<std::size_t>(t)]) continue;
      int cnt = 0;
      for (int e = std::max(0, t - emu::kSpanLossless); e <= t; ++e) cnt += hist[static_cast<std::size_t>(e)];
      if (cnt >= best) best = cnt, top = t + emu::kBinadeMin;
    }
    CHECK(emu::best_window_top(hist.data()) == top);
  }
  const std::vector<int> empty(emu::kBinadeBins, 0);
  CHECK(emu::best_window_top(empty.data()) == emu::kNoBinade);
  CHECK(emu::scale_for_top(emu::kNoBinade) == 0);
}
