// tests/kernels/emu/emulation_bf16_test.cpp — the BF16-on-FP16 strategies on the CPU (kernels/emu/bf16_on_fp16.cpp):
// the span at which the single-scale fast path stops being lossless, found with the span-tile
// generators and checked against its derivation; the direct cast's counts against the oracle; the
// lossless strategies bit for bit against the bf16 reference orders; the outlier and automatic
// strategies lossless on any data; the plans' tile modes. (The models through the runner and the
// suite: `fpcert certify --suite bf16-on-fp16`, docs/emulation.md.)
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "generators/generate.hpp"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/emu_arith.cuh"
#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

std::vector<std::uint16_t> bf16_codes(const Matrix& x) {
  std::vector<std::uint16_t> c(x.data.size());
  const Rounder rn = Rounder::nearest(bf16);
  for (std::size_t i = 0; i < c.size(); ++i) {
    const Rounded r = round_double(bf16, x.data[i], rn);
    REQUIRE((r.flags & kInexact) == 0);  // the problem's source is bf16
    c[i] = static_cast<std::uint16_t>(r.code);
  }
  return c;
}

struct Run {
  std::vector<float> c;
  Bf16OnF16Stats stats;
};
Run run_policy(const std::string& tag, const Problem& p) {
  const Bf16OnF16Policy* pol = find_bf16_on_f16_policy(tag);
  REQUIRE(pol);
  const auto a = bf16_codes(p.a), b = bf16_codes(p.b);
  Run r;
  r.c = bf16_on_f16_cpu(*pol, p.m, p.n, p.k, a.data(), p.k, b.data(), p.n, &r.stats);
  return r;
}

/// The target semantics in a fixed order: fp32 FMA along K ascending from +0 on the bf16 values,
/// in K-blocks of `block` (0: one block) whose partial sums start at +0 and are added in fp32.
std::vector<float> bf16_reference(const Problem& p, std::int64_t block) {
  std::vector<float> c(static_cast<std::size_t>(p.m * p.n));
  const std::int64_t blk = block > 0 ? block : std::max<std::int64_t>(p.k, 1);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float acc = 0;
      for (std::int64_t k0 = 0; k0 < std::max<std::int64_t>(p.k, 1); k0 += blk) {
        float part = 0;
        for (std::int64_t q = k0; q < std::min(p.k, k0 + blk); ++q)
          part = std::fma(static_cast<float>(p.a(i, q)), static_cast<float>(p.b(q, j)), part);
        acc = block > 0 ? acc + part : part;
      }
      c[static_cast<std::size_t>(i * p.n + j)] = acc;
    }
  return c;
}

std::int64_t bitwise_differences(const std::vector<float>& x, const std::vector<float>& y) {
  std::int64_t d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) d += emu::f32_bits(x[i]) != emu::f32_bits(y[i]);
  return d;
}

/// max_ij |c - exact| / (|A||B|)_ij: with exact products and fp32 accumulation over at most K + K/64
/// + 2 roundings (K FMAs, the K-block adds, the rescale and the outlier merge) it is below
/// gamma_(K + K/64 + 2)(2^-24) (Higham, Lemma 3.1); the tests check this rigorous worst case.
double componentwise_error(const Problem& p, const std::vector<float>& c) {
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  double worst = 0;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const RefValue& r = ref.at(i, j);
      const double err = std::fabs((static_cast<double>(c[static_cast<std::size_t>(i * p.n + j)]) - r.hi) - r.lo);
      const double s = ref.abs_sum[static_cast<std::size_t>(i * p.n + j)];
      if (s > 0) worst = std::max(worst, err / s);
    }
  return worst;
}
double gamma_bound(std::int64_t k) {
  const double n = static_cast<double>(k + k / 64 + 2), u = 0x1p-24;
  return n * u / (1 - n * u);
}

}  // namespace

TEST_CASE("bf16 on fp16: the single-scale fast path is lossless up to exponent span 32 and lossy from 33 (span tiles)") {
  // Derivation (emu_arith.cuh, docs/emulation.md): a bf16 value of binade e has 8 significant bits, the
  // lowest at 2^(e-7); scaled by 2^s it is an fp16 value iff e + s - 7 >= -24 (fp16's smallest
  // subnormal) and e + s <= 15 (2^15 (2 - 2^-7) = 65280 <= 65504): 33 binades [-17, 15]. A line whose
  // binades span s (max - min) fits one window iff s <= 32; at s = 33 its lowest binade lands at -18,
  // where a bf16 value with its lowest significand bit set (half of them) rounds. Without fp16
  // subnormals (binades [-14, 15]) the limit would be 29: at spans 30..32 the lowest binades are fp16
  // subnormals, which the MMA must take as they are.
  // Measured: span tiles (one entry at e0, one at e0 + s, the rest uniform in between, random 8-bit
  // significands; 64 rows and 64 columns per problem) for s = 26..40; per row and column (rowcol) and
  // for the whole operand (tensor: every tile here has the same range, so the operand spans s too).
  int first_lossy_rowcol = -1, first_lossy_tensor = -1;
  std::printf("span  rowcol inexact  tensor inexact  fp16 subnormals  cast overflow\n");
  for (int s = 26; s <= 40; ++s) {
    CAPTURE(s);
    const Problem p = generate(fmt::format("span:m=64,n=64,k=256,s={},seed={}", s, test::seed() % 1000 + static_cast<unsigned>(s)));
    REQUIRE(p.achieved.at("tile_span_min") == s);
    REQUIRE(p.achieved.at("tile_span_max") == s);
    const Run rc = run_policy("rowcol", p), tn = run_policy("tensor", p), cast = run_policy("cast", p);
    std::printf("%4d  %14lld  %14lld  %15lld  %13lld\n", s, static_cast<long long>(rc.stats.a.inexact + rc.stats.b.inexact),
                static_cast<long long>(tn.stats.a.inexact + tn.stats.b.inexact),
                static_cast<long long>(rc.stats.a.subnormal + rc.stats.b.subnormal),
                static_cast<long long>(cast.stats.a.overflow + cast.stats.b.overflow));
    CHECK(rc.stats.lossless() == (s <= emu::kSpanLossless));
    CHECK(tn.stats.lossless() == (s <= emu::kSpanLossless));
    // fp16 subnormals appear exactly from span 30 on (the window's lowest three binades).
    CHECK((rc.stats.a.subnormal + rc.stats.b.subnormal > 0) == (s >= 30));
    CHECK(rc.stats.a.nonzero == 64 * 256);  // every entry went through the fp16 path
    if (s > emu::kSpanLossless && first_lossy_rowcol < 0 && !rc.stats.lossless()) first_lossy_rowcol = s;
    if (s > emu::kSpanLossless && first_lossy_tensor < 0 && !tn.stats.lossless()) first_lossy_tensor = s;
    // Centred tiles (center 0: binades [-floor(s/2), s - floor(s/2)]): the unscaled cast overflows from s = 31.
    CHECK((cast.stats.a.overflow > 0) == (s >= 31));
  }
  std::printf("first lossy span: rowcol %d, tensor %d (derived: %d)\n", first_lossy_rowcol, first_lossy_tensor, emu::kSpanLossless + 1);
  CHECK(first_lossy_rowcol == emu::kSpanLossless + 1);
  CHECK(first_lossy_tensor == emu::kSpanLossless + 1);
}

TEST_CASE("bf16 on fp16: lossless means exact products - C = A I equals A bit for bit up to span 32 and not at 33") {
  // B = identity: C_ij = a_ij through the whole pipeline (one product each), so a single rounded
  // conversion shows in C. A's rows span s binades (span tiles); the identity's columns span 0.
  for (const int s : {29, 30, 31, 32, 33, 40}) {
    CAPTURE(s);
    Problem p = generate(fmt::format("span:m=32,n=64,k=64,s={},seed={}", s, test::seed() % 1000 + 7));
    for (std::int64_t q = 0; q < p.k; ++q)
      for (std::int64_t j = 0; j < p.n; ++j) p.b(q, j) = q == j ? 1.0 : 0.0;
    for (const char* tag : {"rowcol", "tensor", "kblock64", "outlier", "auto"}) {
      CAPTURE(tag);
      const Run r = run_policy(tag, p);
      std::int64_t differ = 0;
      for (std::int64_t i = 0; i < p.m; ++i)
        for (std::int64_t j = 0; j < p.n; ++j)
          differ += static_cast<double>(r.c[static_cast<std::size_t>(i * p.n + j)]) != p.a(i, j);
      const bool single_window = std::string(tag) == "rowcol" || std::string(tag) == "tensor" || std::string(tag) == "kblock64";
      if (single_window && s > emu::kSpanLossless) {
        CHECK(differ > 0);  // one window per row (block): the lowest binades round
        CHECK(!r.stats.lossless());
      } else {
        CHECK(differ == 0);  // inside the span, or with the outlier path: every product exact
        CHECK(r.stats.lossless());
      }
    }
  }
}

TEST_CASE("bf16 on fp16: the direct cast's overflow, underflow, subnormal and inexact counts equal the oracle's") {
  // Exponents uniform in [-40, 40]: beyond fp16 at both ends. Every nonzero entry's RN_f16 by the
  // oracle: Inf (overflow), 0 (underflow to zero), a nonzero value below 2^-14 (subnormal), or inexact.
  const Problem p = generate(fmt::format("exp_uniform:m=48,n=40,k=96,emin=-40,emax=40,seed={},source=bf16", test::seed() % 1000));
  const Run r = run_policy("cast", p);
  const Rounder rn = Rounder::nearest(f16);
  Bf16OnF16OperandStats want[2];
  for (int o = 0; o < 2; ++o)
    for (double x : (o ? p.b : p.a).data) {
      if (x == 0) continue;
      const double y = to_double(f16, round_double(f16, x, rn).code);
      auto& w = want[o];
      ++w.nonzero;
      w.inexact += y != x;
      w.overflow += std::isinf(y);
      w.underflow_zero += y == 0;
      w.subnormal += y != 0 && std::fabs(y) < 0x1p-14;
    }
  INFO(to_string(r.stats));
  CHECK(r.stats.a == want[0]);
  CHECK(r.stats.b == want[1]);
  CHECK(want[0].overflow > 0);  // the test exercises every count
  CHECK(want[0].underflow_zero > 0);
  CHECK(want[0].subnormal > 0);
}

TEST_CASE("bf16 on fp16: lossless strategies equal the bf16 reference order bit for bit (row order and K-blocked order)") {
  // Row mode, spans <= 32: the scaled FMA chain is the unscaled chain times 2^(s_A + s_B) (power-of-two
  // scaling commutes with every fp32 rounding while nothing under- or overflows), so C equals the fp32
  // FMA chain on the bf16 values bit for bit.
  {
    const Problem p = generate(fmt::format("span:m=40,n=36,k=300,s=32,seed={}", test::seed() % 1000 + 3));
    const auto want = bf16_reference(p, 0);
    for (const char* tag : {"rowcol", "tensor", "outlier", "auto"}) {
      CAPTURE(tag);
      const Run r = run_policy(tag, p);
      CHECK(r.stats.lossless());
      CHECK(r.stats.tiles_kblock == 0);
      CHECK(bitwise_differences(r.c, want) == 0);
    }
  }
  // K-blocks: tiles of 64 (128) entries spanning 29 binades, each shifted by up to +-20: whole rows span
  // up to 69. The per-line scale loses bits; per K-block it does not and equals the blocked order.
  for (const int blk : {64, 128}) {
    CAPTURE(blk);
    const Problem p = generate(fmt::format("span:m=40,n=36,k=512,s=29,block={},shift=20,seed={}", blk, test::seed() % 1000 + 4));
    const Run rc = run_policy("rowcol", p);
    CHECK(!rc.stats.lossless());
    const Run kb = run_policy(blk == 64 ? "kblock64" : "kblock128", p);
    CHECK(kb.stats.lossless());
    CHECK(kb.stats.tiles_row == 0);
    CHECK(bitwise_differences(kb.c, bf16_reference(p, blk)) == 0);
    if (blk == 64) {  // auto: rows span > 32, their 64-blocks <= 32: K-block tiles without outliers
      const Run au = run_policy("auto", p);
      CHECK(au.stats.lossless());
      CHECK(au.stats.a.outliers + au.stats.b.outliers == 0);
      CHECK(au.stats.tiles_kblock == 1);
      CHECK(bitwise_differences(au.c, kb.c) == 0);
    }
  }
}

TEST_CASE("bf16 on fp16: the outlier split and the automatic strategy are lossless on any data") {
  // (1) N(0,1) entries, 2% of them scaled by 2^40: rows span about 60 binades; the window of 33 binades
  // holding most entries keeps the N(0,1) bulk, so the outliers are exactly the scaled entries (an
  // N(0,1) draw below 2^-30 has probability ~1e-9).
  // The same spec with p = 0 gives the base values: the scaled entries are those that differ.
  const std::string spec = "outlier:m=48,n=40,k=256,p={},e=40,seed={},source=bf16";
  const Problem p = generate(fmt::format(fmt::runtime(spec), "0.02", test::seed() % 1000 + 5));
  const Problem base = generate(fmt::format(fmt::runtime(spec), "0", test::seed() % 1000 + 5));
  std::int64_t scaled = 0;
  for (std::size_t i = 0; i < p.a.data.size(); ++i) scaled += p.a.data[i] != base.a.data[i];
  for (std::size_t i = 0; i < p.b.data.size(); ++i) scaled += p.b.data[i] != base.b.data[i];
  const Run ol = run_policy("outlier", p), rc = run_policy("rowcol", p), au = run_policy("auto", p);
  INFO(to_string(ol.stats));
  CHECK(ol.stats.lossless());
  CHECK(ol.stats.a.outliers + ol.stats.b.outliers == scaled);
  CHECK(scaled > 0);
  CHECK(!rc.stats.lossless());  // one window per row: the N(0,1) bulk 40 binades below the outliers rounds
  CHECK(au.stats.lossless());
  CHECK(componentwise_error(p, ol.c) <= gamma_bound(p.k));
  CHECK(componentwise_error(p, au.c) <= gamma_bound(p.k));
  // (2) Every 64-block spanning 40 binades: only the outlier path keeps the products exact.
  const Problem q = generate(fmt::format("span:m=40,n=36,k=256,s=40,block=64,seed={}", test::seed() % 1000 + 6));
  const Run kb = run_policy("kblock64", q), a2 = run_policy("auto", q), o2 = run_policy("outlier", q);
  CHECK(!kb.stats.lossless());
  CHECK(a2.stats.lossless());
  CHECK(o2.stats.lossless());
  CHECK(a2.stats.a.outliers > 0);
  CHECK(componentwise_error(q, a2.c) <= gamma_bound(q.k));
  CHECK(componentwise_error(q, o2.c) <= gamma_bound(q.k));
}

TEST_CASE("bf16 on fp16: plans - auto decides each 128 x 128 tile from the spans of its rows and columns") {
  // A 300 x 260 x 192 problem whose rows span 20 binades, except rows 130..140 which span 40: tiles of
  // block row 1 run per K-block, the others per row (no column spans more than 32).
  Problem p = generate(fmt::format("span:m=300,n=260,k=192,s=20,seed={}", test::seed() % 1000 + 8));
  for (std::int64_t i = 130; i <= 140; ++i) p.a(i, 5) = std::ldexp(1.5, 30);  // row span 20 -> >= 40
  const auto a = bf16_codes(p.a), b = bf16_codes(p.b);
  const Bf16OnF16Policy& au = *find_bf16_on_f16_policy("auto");
  const OperandPlan pa = plan_operand(au, a.data(), p.m, p.k, p.k, 1), pb = plan_operand(au, b.data(), p.n, p.k, 1, p.n);
  for (std::int64_t bm = 0; bm < 3; ++bm)
    for (std::int64_t bn = 0; bn < 3; ++bn) CHECK(tile_mode(pa, pb, bm, bn) == (bm == 1 ? kModeKBlock : kModeRow));
  CHECK(pa.mode[129] == kModeRow);
  CHECK(pa.mode[130] == kModeKBlock);
  const Run r = run_policy("auto", p);
  CHECK(r.stats.tiles_kblock == 3);
  CHECK(r.stats.tiles_row == 6);
  CHECK(r.stats.lossless());
}
