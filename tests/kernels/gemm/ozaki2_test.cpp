// tests/kernels/gemm/ozaki2_test.cpp — fpcert's Ozaki-II FP64 emulation on the host (kernels/gemm/cpu/ozaki2.hpp,
// docs/fp64.md): the residues and the CRT on hand-built integers, correct rounding (subnormals included) where the
// scaled operands are exact, K past the int32 headroom of one block, the domain. The bound and the correct bits per
// moduli count: tests/suites/ozaki2_certify_test.cpp.
#include <doctest/doctest.h>
#include <gmp.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/error.hpp"
#include "kernels/gemm/cpu/ozaki2.hpp"
#include "oracle/mpfr_ref.hpp"
#include "oracle/gemm_engine.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/refvalue.hpp"
#include "tests/support/ozaki2_data.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

}  // namespace

TEST_CASE("ozaki2 arithmetic: symmetric residues, Garner's CRT and the plan") {
  // 300 = 256 + 44; -1 = 254 (mod 255) -> -1; 128 (mod 256) is -128 (the symmetric range -128..127); 127 stays.
  CHECK(ozaki2::symmetric_residue(300, 256) == 44);
  CHECK(ozaki2::symmetric_residue(-1, 255) == -1);
  CHECK(ozaki2::symmetric_residue(128, 256) == -128);
  CHECK(ozaki2::symmetric_residue(127, 255) == 127);
  CHECK(ozaki2::symmetric_residue(128, 255) == -127);
  // 2^70 (beyond int64: the mantissa-and-power path): 2^70 mod 251 by repeated doubling.
  int p70 = 1;
  for (int q = 0; q < 70; ++q) p70 = p70 * 2 % 251;
  CHECK(ozaki2::mod_positive(ozaki2::symmetric_residue(0x1p70, 251), 251) == p70);
  CHECK(ozaki2::mod_positive(ozaki2::symmetric_residue(-0x1p70 - 0x1p18, 251), 251) ==
        ozaki2::mod_positive(-(static_cast<long long>(p70) + (1 << 18) % 251), 251));
  // The plan: P = 256 255 253 = 16,515,840 for 3 moduli (floor(log2) = 23); bad counts are input errors.
  const ozaki2::Plan p3 = ozaki2::make_plan(3);
  CHECK(p3.p[0] == 256u * 255u * 253u);
  CHECK(p3.log2p == 23);
  CHECK_THROWS(ozaki2::make_plan(1));
  CHECK_THROWS(ozaki2::make_plan(21));
  CHECK_THROWS(ozaki2::make_plan(8, 0));
  CHECK_THROWS(ozaki2::make_plan(8, ozaki2::kMaxKBlock + 1));
  // mod_small (Garner's division-free step) against % on its whole domain: every x < 2^20, every m in 2..256, with the
  // reciprocal make_plan stores; the plan's moduli carry theirs.
  long long wrong = 0;
  for (std::uint32_t m = 2; m <= 256; ++m) {
    const std::uint64_t magic = ((std::uint64_t{1} << 32) + m - 1) / m;
    for (std::uint32_t x = 0; x < (1u << 20); ++x) wrong += ozaki2::mod_small(x, static_cast<int>(m), magic) != static_cast<int>(x % m);
  }
  CHECK(wrong == 0);
  for (int l = 0; l < p3.n; ++l) CHECK(p3.magic[l] == ((std::uint64_t{1} << 32) + static_cast<std::uint64_t>(p3.m[l]) - 1) / static_cast<std::uint64_t>(p3.m[l]));
  // CRT round trip on integers T in [-P/2, P/2) for 20 moduli (P ~ 2^155): T = +-(h 2^64 + l), up to 2^127.
  const ozaki2::Plan pl = ozaki2::make_plan(20);
  test::Draw d{test::seed() + 39};
  for (int trial = 0; trial < 2000; ++trial) {
    const auto hi = static_cast<std::uint64_t>(d() * 0x1p63), lo = static_cast<std::uint64_t>(d() * 0x1p64);
    const bool neg = d() < 0.5;
    int r[ozaki2::kMaxModuli];
    for (int l = 0; l < pl.n; ++l) {
      const unsigned __int128 t = (static_cast<unsigned __int128>(hi) << 64) | lo;
      const int mod = static_cast<int>(t % static_cast<unsigned>(pl.m[l]));
      r[l] = neg ? (pl.m[l] - mod) % pl.m[l] : mod;
    }
    std::uint32_t mag[ozaki2::kLimbs];
    bool got_neg = false;
    ozaki2::reconstruct(pl, r, mag, got_neg);
    CAPTURE(trial);
    const bool zero = hi == 0 && lo == 0;
    CHECK(got_neg == (neg && !zero));
    CHECK(mag[0] == static_cast<std::uint32_t>(lo));
    CHECK(mag[1] == static_cast<std::uint32_t>(lo >> 32));
    CHECK(mag[2] == static_cast<std::uint32_t>(hi));
    CHECK(mag[3] == static_cast<std::uint32_t>(hi >> 32));
    CHECK(mag[4] == 0u);
  }
}

namespace {

/// The symmetric residue of an mpz integer modulo m (ozaki2_arith.hpp's form: m = 256 -128..127, odd m +-(m-1)/2).
int mpz_symmetric(const mpz_t t, int m) {
  const auto r = static_cast<int>(mpz_fdiv_ui(t, static_cast<unsigned long>(m)));
  return r >= (m + 1) / 2 ? r - m : r;
}

/// A multiword magnitude (32-bit limbs) as an mpz.
void mpz_from_limbs(mpz_t out, const std::uint32_t* mag) {
  mpz_set_ui(out, 0);
  for (int w = ozaki2::kLimbs - 1; w >= 0; --w) {
    mpz_mul_2exp(out, out, 32);
    mpz_add_ui(out, out, mag[w]);
  }
}

}  // namespace

TEST_CASE("ozaki2 host route: every modulus's residue of a whole value and the CRT sum, against GMP and the kernel's Garner") {
  // The host emulation's own arithmetic (host_residues, host_reconstruct) must give the integers the kernel's
  // (symmetric_residue, reconstruct) give: both are held to GMP here, on random values of every size the scaling makes
  // and on the edges (0, -0, 2^53 +- 1, the table's top 2^115, multiples of the moduli; T = -P/2, P/2 - 1, 0, +-1).
  test::Draw d{test::seed() + 41};
  mpz_t t, u;
  mpz_init(t);
  mpz_init(u);
  for (const int nm : {2, 3, 7, 14, 20}) {
    CAPTURE(nm);
    const ozaki2::Plan pl = ozaki2::make_plan(nm);
    const ozaki2::HostPlan hp = ozaki2::make_host_plan(pl);
    std::vector<double> vals = {0.0, -0.0, 1.0, -1.0, 0x1p53 - 1, 0x1p53, 0x1p53 + 2, -0x1p53 - 2, 0x1p115, -0x1p115, 255.0 * 253.0 * 7,
                                -256.0 * 0x1p40, 0x1p79 - 0x1p27};
    for (int x = 0; x < 4000; ++x) {
      const double mant = std::floor(d() * 0x1p53);
      const int e = static_cast<int>(d() * 64);
      vals.push_back((d() < 0.5 ? -1 : 1) * std::ldexp(mant, x % 3 == 0 ? 0 : e));
    }
    long long wrong_res = 0, wrong_kernel = 0;
    for (const double v : vals) {
      std::int8_t r[ozaki2::kMaxModuli];
      ozaki2::host_residues(hp, v, r);
      mpz_set_d(t, v);
      for (int l = 0; l < nm; ++l) {
        wrong_res += r[l] != mpz_symmetric(t, pl.m[l]);
        if (std::fabs(v) <= 0x1p80) wrong_kernel += r[l] != ozaki2::symmetric_residue(v, pl.m[l]);
      }
    }
    CHECK(wrong_res == 0);
    CHECK(wrong_kernel == 0);
    CHECK_THROWS_AS(ozaki2::host_residues(hp, 0x1p116, nullptr), std::logic_error);
    // T uniform in [-P/2, P/2) by GMP's generator, and the edges.
    mpz_t p, half;
    mpz_init(p);
    mpz_init(half);
    mpz_from_limbs(p, pl.p);
    mpz_fdiv_q_2exp(half, p, 1);  // floor(P / 2); P is even (256 is a modulus): T in [-half, half)
    gmp_randstate_t rs;
    gmp_randinit_default(rs);
    gmp_randseed_ui(rs, static_cast<unsigned long>(test::seed()) + static_cast<unsigned long>(nm));
    long long wrong_crt = 0, wrong_garner = 0;
    for (int x = 0; x < 3000; ++x) {
      if (x == 0) mpz_neg(t, half);
      else if (x == 1) mpz_sub_ui(t, half, 1);
      else if (x == 2) mpz_set_si(t, 0);
      else if (x == 3) mpz_set_si(t, 1);
      else if (x == 4) mpz_set_si(t, -1);
      else {
        mpz_urandomm(t, rs, p);
        mpz_sub(t, t, half);
      }
      int r[ozaki2::kMaxModuli];
      for (int l = 0; l < nm; ++l) r[l] = static_cast<int>(mpz_fdiv_ui(t, static_cast<unsigned long>(pl.m[l])));
      std::uint32_t mag[ozaki2::kLimbs], mag_k[ozaki2::kLimbs];
      bool neg = false, neg_k = false;
      ozaki2::host_reconstruct(hp, r, mag, neg);
      ozaki2::reconstruct(pl, r, mag_k, neg_k);
      mpz_from_limbs(u, mag);
      if (neg) mpz_neg(u, u);
      const bool bad = mpz_cmp(u, t) != 0 || (neg && mpz_sgn(t) == 0);
      if (bad) gmp_printf("T = %Zd came back as %Zd\n", t, u);
      wrong_crt += bad;
      wrong_garner += neg != neg_k || !std::equal(mag, mag + ozaki2::kLimbs, mag_k);
    }
    CHECK(wrong_crt == 0);
    CHECK(wrong_garner == 0);
    gmp_randclear(rs);
    mpz_clear(p);
    mpz_clear(half);
  }
  mpz_clear(t);
  mpz_clear(u);
}

TEST_CASE("ozaki2: round_scaled is RN_f64(mag 2^-S) against MPFR (normal, subnormal, tiny, overflowing; ties and sticky bits)") {
  // Random magnitudes of 1..192 bits, some with the bits below the 53rd cleared and one set (ties) or all but the
  // lowest cleared (sticky only), scaled by S across the whole range of results: normal, subnormal, below half the
  // smallest subnormal (0), beyond the largest finite (Inf).
  test::Draw d{test::seed() + 77};
  int compared = 0, ties = 0, subnormal = 0, zero = 0, inf = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::uint32_t mag[ozaki2::kLimbs] = {};
    const int len = 1 + static_cast<int>(d() * 32 * ozaki2::kLimbs);
    for (int w = 0; w < ozaki2::kLimbs; ++w) mag[w] = static_cast<std::uint32_t>(d() * 0x1p32);
    for (int b = len; b < 32 * ozaki2::kLimbs; ++b) mag[b >> 5] &= ~(1u << (b & 31));
    mag[(len - 1) >> 5] |= 1u << ((len - 1) & 31);
    const int kind = static_cast<int>(d() * 3);  // 0: random; 1: a tie below bit len - 53; 2: only the lowest bit below
    if (kind > 0 && len > 54) {
      const int cut = len - 53;
      for (int b = 0; b < cut; ++b) mag[b >> 5] &= ~(1u << (b & 31));
      if (kind == 1) mag[(cut - 1) >> 5] |= 1u << ((cut - 1) & 31);
      else mag[0] |= 1u;
    }
    const int S = len - 1 - static_cast<int>(d() * 2200 - 1100);  // results 2^-1100 .. 2^1100
    const bool neg = d() < 0.5;
    mpz_t z;
    mpz_init(z);
    mpz_import(z, ozaki2::kLimbs, -1, sizeof(std::uint32_t), 0, 0, mag);
    mpfr_ref::Mpfr x(256);
    mpfr_set_z(x, z, MPFR_RNDN);  // exact: at most 192 bits
    mpz_clear(z);
    mpfr_mul_2si(x, x, -S, MPFR_RNDN);
    if (neg) mpfr_neg(x, x, MPFR_RNDN);
    const Rounded want = mpfr_ref::round(f64, x, Rounder::nearest(f64));
    const double got = ozaki2::round_scaled(mag, neg, S);
    CAPTURE(trial);
    CAPTURE(len);
    CAPTURE(S);
    CHECK(bits(got) == want.code);
    ++compared;
    ties += kind == 1 && len > 54;
    subnormal += got != 0 && std::fabs(got) < 0x1p-1022;
    zero += got == 0;
    inf += std::isinf(got);
  }
  MESSAGE(compared << " magnitudes: " << ties << " ties, " << subnormal << " subnormal, " << zero << " zero, " << inf << " Inf results");
  CHECK(ties > 1000);
  CHECK(subnormal > 100);
  CHECK(zero > 100);
  CHECK(inf > 300);
}

TEST_CASE("ozaki2: correctly rounded where the scaled operands are exact (ties, subnormal and normal results, MPFR reference)") {
  // 20 moduli, K = 24: alpha = floor((155 - 1 - 5) / 2) = 74 bits. Lines spanning at most 74 - 53 = 21 binades scale to
  // exact integers, so the only rounding is the final one: every element must be RN_f64 of the exact product, bit for
  // bit. Exponents in [-10, 10] around an offset: 0 (normal results) and -536 (products near 2^-1072: subnormal results,
  // where the rounding position is fixed at 2^-1074). Non-integer 53-bit values: the sums need rounding.
  const ozaki2::Plan pl = ozaki2::make_plan(20);
  for (const int offset : {0, -536}) {
    CAPTURE(offset);
    const std::int64_t m = 9, n = 7, k = 24;
    std::vector<double> a, b;
    test::wide_cancelling(m, n, k, 20, test::seed() + 3 + static_cast<std::uint64_t>(-offset), a, b);
    for (double& v : a) v = std::ldexp(v, offset);
    for (double& v : b) v = std::ldexp(v, offset);
    const GemmRef ref = gemm_reference_mpfr(MatrixView::row_major(a.data(), m, k), MatrixView::row_major(b.data(), k, n));
    ozaki2::Scaling sc;
    const std::vector<double> c = ozaki2::gemm(pl, a.data(), b.data(), m, n, k, &sc);
    CHECK(sc.alpha == 74);
    int inexact = 0, subnormal = 0;
    for (std::int64_t x = 0; x < m * n; ++x) {
      const auto ux = static_cast<std::size_t>(x);
      const std::uint64_t rn = round_ref(f64, ref.c[ux], Rounder::nearest(f64)).code;
      CAPTURE(x);
      CHECK(bits(c[ux]) == rn);
      inexact += ref.c[ux].lo != 0 || ref.c[ux].tail != 0;
      subnormal += c[ux] != 0 && std::fabs(c[ux]) < 0x1p-1022;
    }
    CHECK(inexact > m * n / 2);  // the final rounding was exercised
    if (offset < 0) CHECK(subnormal > m * n / 2);
  }
}

TEST_CASE("ozaki2: K past the int32 headroom of one block (K = 2^17 + 1), and the blocking does not change a bit") {
  // 8 moduli (P ~ 2^63.8), K = 131,073: alpha = floor((63 - 1 - 18) / 2) = 22. Every entry is 1 + 2^-14, scaled by 2^21 to
  // 2^21 + 2^7 (exact), whose residue mod 256 is -128: every product of that modulus is +16,384 and K of them sum to
  // 2^31 + 2^14, past int32 (a single int32 accumulator would wrap). K blocks of 2^17 - 1 keep each block below 2^31.
  // The operands are exact, so the result is RN_f64 of the exact K (1 + 2^-14)^2.
  const std::int64_t m = 2, n = 3, k = (std::int64_t{1} << 17) + 1;
  std::vector<double> a(static_cast<std::size_t>(m * k), 1 + 0x1p-14), b(static_cast<std::size_t>(k * n), 1 + 0x1p-14);
  a[5] = -(1 + 0x1p-14);  // one sign flipped in row 0: both rows exercised, row 0 has K - 2 net products
  const ozaki2::Plan pl = ozaki2::make_plan(8);
  ozaki2::Scaling sc;
  const std::vector<double> c = ozaki2::gemm(pl, a.data(), b.data(), m, n, k, &sc);
  CHECK(sc.alpha == 22);
  CHECK(ozaki2::symmetric_residue(ozaki2::scaled_integer(a[0], sc.s[0]), 256) == -128);
  const GemmRef ref = gemm_reference(MatrixView::row_major(a.data(), m, k), MatrixView::row_major(b.data(), k, n));
  for (std::size_t x = 0; x < c.size(); ++x) CHECK(bits(c[x]) == round_ref(f64, ref.c[x], Rounder::nearest(f64)).code);
  // A test hook: K blocks of 1000 (131 block boundaries crossed) give the same bits.
  const std::vector<double> c2 = ozaki2::gemm(ozaki2::make_plan(8, 1000), a.data(), b.data(), m, n, k);
  for (std::size_t x = 0; x < c.size(); ++x) CHECK(bits(c2[x]) == bits(c[x]));
  // The same with 20 moduli (the registered kernels', and the GPU test's data): alpha = 68, every residue of modulus 256
  // -128, the exact product rounded once.
  std::vector<double> a3, b3;
  test::headroom_operands(2, 3, test::seed() + 394, a3, b3);
  ozaki2::Scaling sc3;
  const std::vector<double> c3 = ozaki2::gemm(ozaki2::make_plan(20), a3.data(), b3.data(), 2, 3, test::kHeadroomK, &sc3);
  CHECK(sc3.alpha == 68);
  CHECK(ozaki2::symmetric_residue(ozaki2::scaled_integer(a3[1], sc3.s[0]), 256) == -128);
  CHECK(ozaki2::symmetric_residue(ozaki2::scaled_integer(b3[3 * 7 + 2], sc3.t[2]), 256) == -128);
  const GemmRef ref3 = gemm_reference(MatrixView::row_major(a3.data(), 2, test::kHeadroomK), MatrixView::row_major(b3.data(), test::kHeadroomK, 3));
  for (std::size_t x = 0; x < c3.size(); ++x) CHECK(bits(c3[x]) == round_ref(f64, ref3.c[x], Rounder::nearest(f64)).code);
}

TEST_CASE("ozaki2: NaN where a line holds Inf or NaN; the fp64 span domain of each moduli count") {
  const ozaki2::Plan pl = ozaki2::make_plan(20);
  // Outside the declared domain: an element whose row of A or column of B holds Inf or NaN is NaN, the others as usual.
  const double a[4] = {1, INFINITY, 0.5, 0.25}, b[4] = {1, 2, NAN, 3};  // A 2 x 2 (row 0 infinite), B 2 x 2 (column 0 NaN)
  const std::vector<double> c = ozaki2::gemm(pl, a, b, 2, 2, 2);
  CHECK(std::isnan(c[0]));
  CHECK(std::isnan(c[1]));
  CHECK(std::isnan(c[2]));
  CHECK(c[3] == 0.5 * 2 + 0.25 * 3);
  // 20 moduli (floor(log2 P) = 155): K = 1 gives alpha = 77 (24 binades exact), K = 2 and 3 alpha = 76 (23), K = 5
  // alpha = 75: exact up to 22, and S = 23 inexact would need 2^(23+1-75) (1 + u) + u = 5u (and a bit) <= gamma_5(u)
  // (1 - 2^-40): just no. The domain is 22.
  CHECK(ozaki2::fp64_span_domain(pl) == 22);
  // Too few moduli keep no span for fp64's envelope at K = 1 (alpha(1) < 53).
  CHECK(ozaki2::fp64_span_domain(ozaki2::make_plan(10)) == -1);
  int prev = -1;
  for (int N = 12; N <= 20; ++N) {
    const int s = ozaki2::fp64_span_domain(ozaki2::make_plan(N));
    CHECK(s >= prev);
    prev = s;
  }
}

namespace {

/// An engine that answers the residue GEMMs on the host by their definition, (sum over all K in 64 bits) mod m_l with no
/// K blocks, and counts its jobs; `decline`: takes none.
class DefinitionResidues final : public ExactGemmEngine {
 public:
  explicit DefinitionResidues(bool decline) : decline_(decline) {}
  const char* name() const override { return "test-residues"; }
  bool per_tile() const override { return true; }
  void multiply(const SliceBlock&, std::int64_t, std::int64_t, std::int64_t, std::int64_t, double*) override {}
  bool residue_gemms(const ResidueGemms& job, std::uint8_t* out) override {
    ++jobs;
    if (decline_) return false;
    for (int l = 0; l < job.count; ++l) {
      const std::int8_t* a = job.ops + l * (job.m * job.k + job.n * job.k);
      const std::int8_t* b = a + job.m * job.k;
      for (std::int64_t i = 0; i < job.m; ++i)
        for (std::int64_t j = 0; j < job.n; ++j) {
          std::int64_t s = 0;
          for (std::int64_t q = 0; q < job.k; ++q) s += std::int64_t{a[i * job.k + q]} * b[j * job.k + q];
          out[static_cast<std::size_t>(l * job.m * job.n + i * job.n + j)] = static_cast<std::uint8_t>(((s % job.moduli[l]) + job.moduli[l]) % job.moduli[l]);
        }
    }
    return true;
  }
  int jobs = 0;

 private:
  bool decline_;
};

}  // namespace

TEST_CASE("ozaki2: residue GEMMs on an engine (the bitwise tier's device route) give the host's C bit for bit, sample-checked") {
  // ExactGemmEngine::residue_gemms: the job's layout and reduction read as their definition says, on wide cancelling
  // non-integer data, with K blocks of 7 (the host reduces 11 times per element, the engine once); an engine that
  // declines leaves the host's loop.
  const std::int64_t m = 19, n = 13, k = 75;
  std::vector<double> a, b;
  test::wide_cancelling(m, n, k, 30, test::seed() + 77, a, b);
  for (const int moduli : {8, 14, 20}) {
    CAPTURE(moduli);
    const ozaki2::Plan pl = ozaki2::make_plan(moduli, 7);
    const std::vector<double> host = ozaki2::gemm(pl, a.data(), b.data(), m, n, k);
    DefinitionResidues engine(false), declining(true);
    const std::vector<double> on = ozaki2::gemm(pl, a.data(), b.data(), m, n, k, nullptr, ozaki2::Route::Host, &engine);
    const std::vector<double> off = ozaki2::gemm(pl, a.data(), b.data(), m, n, k, nullptr, ozaki2::Route::Host, &declining);
    CHECK(engine.jobs == 1);
    CHECK(declining.jobs == 1);
    std::int64_t differ = 0, differ_off = 0;
    for (std::size_t x = 0; x < host.size(); ++x) {
      differ += bits(on[x]) != bits(host[x]);
      differ_off += bits(off[x]) != bits(host[x]);
    }
    CHECK(differ == 0);
    CHECK(differ_off == 0);
  }
  // One residue changed by the engine: the host's sample check (every element of a problem this small) refuses it.
  class Flipping final : public ExactGemmEngine {
   public:
    const char* name() const override { return "test-flip"; }
    bool per_tile() const override { return true; }
    void multiply(const SliceBlock&, std::int64_t, std::int64_t, std::int64_t, std::int64_t, double*) override {}
    bool residue_gemms(const ResidueGemms& job, std::uint8_t* out) override {
      DefinitionResidues d(false);
      d.residue_gemms(job, out);
      out[5] = static_cast<std::uint8_t>((out[5] + 1) % job.moduli[0]);
      return true;
    }
  } flip;
  const ozaki2::Plan pl = ozaki2::make_plan(14, 7);
  CHECK_THROWS_WITH_AS(ozaki2::gemm(pl, a.data(), b.data(), m, n, k, nullptr, ozaki2::Route::Host, &flip),
                       doctest::Contains("differs from the host's at element (0, 5)"), DeviceError);
}
