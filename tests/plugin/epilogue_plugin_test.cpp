// tests/plugin/epilogue_plugin_test.cpp — the fused-epilogue example plugin (examples/plugin/epilogue; ABI minor 8)
// loaded with dlopen and called through fpcert's wrapper, in two layers (docs/STYLE: kernel vs model bit for bit where
// the order is fixed, then against a derived bound): Z = A B + bias bit for bit against fp32 arithmetic done here in
// the declared order, the ReLU exactly, GELU (tanh) within a bound derived below from its fp32 evaluation around an
// independent long double GELU, amax = max |act(Z)|; the buggy kernel (the erf form computed, the tanh form
// declared) outside that bound. Then both through fpcert's epilogue grader (exact reference in MPFR, the declared bound,
// the amax check), as the runner grades the certify suite's epilogue cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "generators/generate.hpp"
#include "oracle/round.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "suites/ops/gemm/epilogue.hpp"

using namespace fpcert;

namespace {

const std::string kDir = FPCERT_TEST_PLUGIN_DIR;

float bf16_value(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

/// bf16 codes of values spread over [-1, 1) times 2^-e, e in 0..3 (so that the fp32 sums round), from raw generator
/// bits (no std::*_distribution: reproducible across standard libraries); `scale` multiplies them (exact).
std::vector<std::uint16_t> bf16_codes(std::size_t count, std::mt19937_64& g, float scale) {
  std::vector<std::uint16_t> v(count);
  for (auto& x : v) {
    const std::uint64_t r = g();
    const float f = std::ldexp(static_cast<float>(static_cast<std::int64_t>(r >> 40) - (1 << 23)) * 0x1p-23f, -static_cast<int>(r & 3)) * scale;
    x = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16);  // truncated to bf16: a bf16 value all the same
  }
  return v;
}

struct Call {
  std::int64_t m = 6, n = 10, k = 33, ldc = 12;  // two padding columns the kernel must not touch
  std::vector<std::uint16_t> A, B, bias;
  std::vector<float> D;
  float amax = -1;
  explicit Call(std::uint64_t seed) {
    std::mt19937_64 g(seed);
    A = bf16_codes(static_cast<std::size_t>(m * k), g, 2.0f);  // |Z| up to ~6: GELU's curved region and its tails
    B = bf16_codes(static_cast<std::size_t>(k * n), g, 1.0f);
    bias = bf16_codes(static_cast<std::size_t>(n), g, 2.0f);
  }
  void run(GemmKernel& kern, Activation act) {
    D.assign(static_cast<std::size_t>(m * ldc), -7.0f);
    amax = -1;
    GemmOperands ops;
    ops.m = m, ops.n = n, ops.k = k;
    ops.a = A.data(), ops.lda = k, ops.b = B.data(), ops.ldb = n, ops.c = D.data(), ops.ldc = ldc;
    ops.bias_kind = BiasKind::PerColumn;
    ops.bias = bias.data();
    ops.activation = act;
    ops.amax = &amax;
    kern.run(ops);
  }
  float d(std::int64_t i, std::int64_t j) const { return D[static_cast<std::size_t>(i * ldc + j)]; }
  /// Z as the kernel declares it: fma along K in fp32 from +0, then + bias_j, rounded to fp32 (the C++ here, with
  /// std::fma, not the plugin's code).
  float z(std::int64_t i, std::int64_t j) const {
    float s = 0.0f;
    for (std::int64_t p = 0; p < k; ++p)
      s = std::fma(bf16_value(A[static_cast<std::size_t>(i * k + p)]), bf16_value(B[static_cast<std::size_t>(p * n + j)]), s);
    return s + bf16_value(bias[static_cast<std::size_t>(j)]);
  }
};

/// GELU's tanh form in long double (64-bit significand): its own error is below 2^-60 relative, nothing beside fp32's.
long double gelu_tanh_ld(long double z) {
  const long double c0 = std::sqrt(2.0L / 3.14159265358979323846264338327950288L);
  return 0.5L * z * (1.0L + std::tanh(c0 * (z + 0.044715L * z * z * z)));
}

/// How far the plugin's fp32 GELU (gelu_tanh_f32 in the example: k1 z z z, z + that, k0 times it, tanhf, 1 + t, 0.5 z
/// times it; u = 2^-24) may lie from the exact GELU at the same fp32 argument z. Each step, |.| bounds with u's
/// products folded into the rounded-up constants:
///   the cubic k1 z^3: k1's representation (u) and three roundings: relative 4.01 u;
///   s = z + cubic: |ds| <= 4.01 u c1 |z|^3 + u (|z| + c1 |z|^3);  inner = k0 s: k0's representation and the product,
///   |d inner| <= k0 |ds| + 2.01 u k0 (|z| + c1 |z|^3) <= 7.1 u k0 (|z| + c1 |z|^3);
///   t = tanhf(inner): 2 ulp, <= 2^-22 = 4 u relative (|t| <= 1), plus tanh's Lipschitz 1 times |d inner|;
///   w = 1 + t: + u |w| <= 2 u;  0.5 z exact (z is not below 2^-125 here: checked);  g = (0.5 z) w: + u |g|.
///   |g^ - g| <= 0.5 |z| (4.01 u + 7.1 u k0 (|z| + c1 |z|^3) + 2 u) + 1.01 u |g|, and 1.1 for what the folds hide.
double gelu_f32_allowance(float zf, long double g) {
  const double u = 0x1p-24, z = std::fabs(static_cast<double>(zf)), k0 = 0.7978845608028654, c1 = 0.044715;
  return 1.1 * (0.5 * z * (4.01 * u + 7.1 * u * k0 * (z + c1 * z * z * z) + 2 * u) + 1.01 * u * std::fabs(static_cast<double>(g)));
}

}  // namespace

TEST_CASE("the epilogue example plugin: bias per column bit for bit, ReLU exact, GELU (tanh) within its fp32 bound, amax; the erf form refused") {
  const PluginSummary& s = load_plugin(kDir + "/libexample_epilogue_plugin.so");
  CHECK(s.abi_minor == FPCERT_PLUGIN_ABI_MINOR);
  auto kern = make_gemm_kernel("example_gemm_bf16_bias_gelu");
  REQUIRE(kern);
  const EpilogueTraits& e = kern->traits().epilogue;
  CHECK(e.bias == bit(BiasKind::PerColumn));
  CHECK(*e.bias_format == bf16);
  CHECK(e.takes(Activation::GeluTanh));
  CHECK_FALSE(e.takes(Activation::GeluErf));
  CHECK(e.func_rel_err == std::ldexp(1.0, -22));
  CHECK(e.amax);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    INFO("seed ", seed);
    Call c(seed);
    // Layer 1: no activation: D = Z, bit for bit the declared order; the padding untouched; amax = max |Z|.
    c.run(*kern, Activation::None);
    float zmax = 0;
    int rounded = 0;
    for (std::int64_t i = 0; i < c.m; ++i) {
      for (std::int64_t j = 0; j < c.n; ++j) {
        const float z = c.z(i, j);
        CHECK(std::bit_cast<std::uint32_t>(c.d(i, j)) == std::bit_cast<std::uint32_t>(z));
        zmax = std::max(zmax, std::fabs(z));
        REQUIRE((z == 0 || std::fabs(z) > 0x1p-125f));
        // A test that cannot fail proves nothing: Z must differ from its exact value on most elements (long double:
        // each bf16 product exact, the 34-term sum within 34 2^-64 sum|.| of it, far below fp32's 2^-24).
        long double exact = bf16_value(c.bias[static_cast<std::size_t>(j)]), mag = std::fabs(exact);
        for (std::int64_t p = 0; p < c.k; ++p) {
          const long double t = static_cast<long double>(bf16_value(c.A[static_cast<std::size_t>(i * c.k + p)])) *
                                bf16_value(c.B[static_cast<std::size_t>(p * c.n + j)]);
          exact += t;
          mag += std::fabs(t);
        }
        rounded += std::fabs(static_cast<long double>(z) - exact) > 0x1p-40L * mag;
      }
      CHECK(c.d(i, c.n) == -7.0f);
      CHECK(c.d(i, c.n + 1) == -7.0f);
    }
    CHECK(rounded > c.m * c.n / 2);
    CHECK(c.amax == zmax);
    CHECK(zmax > 2.0f);  // GELU's curved region is reached
    // ReLU: exactly max(Z, 0).
    c.run(*kern, Activation::Relu);
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) CHECK(c.d(i, j) == std::max(c.z(i, j), 0.0f));
    // GELU (tanh): within the fp32 evaluation's bound of the long double GELU at the same Z; amax the max |D|.
    c.run(*kern, Activation::GeluTanh);
    float dmax = 0;
    double worst = 0;
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const float z = c.z(i, j);
        const long double g = gelu_tanh_ld(z);
        const double err = std::fabs(static_cast<double>(c.d(i, j) - g)), allowed = gelu_f32_allowance(z, g);
        INFO("D[", i, "][", j, "] = ", c.d(i, j), " z = ", z, " exact GELU ", static_cast<double>(g), " allowed ", allowed);
        CHECK(err <= allowed);
        worst = std::max(worst, err / allowed);
        dmax = std::max(dmax, std::fabs(c.d(i, j)));
      }
    CHECK(c.amax == dmax);
    MESSAGE("seed ", seed, ": the correct GELU used ", worst, " of its allowance at most");
  }
  // The buggy kernel: GELU's erf form where the tanh form is declared. The forms differ by up to ~5e-4 near |z| = 2,
  // thousands of times the fp32 allowance there: refused on many elements of every seed.
  auto bug = make_gemm_kernel("example_gemm_bf16_bias_gelu_erf");
  REQUIRE(bug);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    Call c(seed);
    c.run(*bug, Activation::GeluTanh);
    int outside = 0;
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const float z = c.z(i, j);
        const long double g = gelu_tanh_ld(z);
        outside += std::fabs(static_cast<double>(c.d(i, j) - g)) > gelu_f32_allowance(z, g);
      }
    INFO("seed ", seed);
    CHECK(outside > c.m * c.n / 4);
  }
}

// ---- the same plugin graded by fpcert's epilogue grader (suites/ops/gemm/epilogue.hpp): exact reference, bound ----

namespace {

/// One epilogue case of the example plugin, graded as the runner grades it: inputs of a uniform problem rounded into
/// bf16, the case's bias (epilogue_bias) in bf16, D and amax from the plugin, grade_epilogue and check_amax.
CaseResult grade_plugin_case(const std::string& kernel, Activation act, std::uint64_t seed) {
  auto kern = make_gemm_kernel(kernel);
  REQUIRE(kern);
  const KernelTraits& t = kern->traits();
  const Problem p = generate("uniform:m=9,n=11,k=40,seed=" + std::to_string(seed));
  EpilogueCase ec;
  ec.active = true;
  ec.bias = BiasKind::PerColumn;
  ec.activation = act;
  ec.amax = true;
  ec.bias_seed = seed + 100;
  REQUIRE(epilogue_unsupported(t, ec).empty());
  auto bf16_codes_of = [](const std::vector<double>& v) {
    std::vector<std::uint16_t> c(v.size());
    for (std::size_t x = 0; x < v.size(); ++x) c[x] = static_cast<std::uint16_t>(round_double(bf16, v[x], Rounder::nearest(bf16)).code);
    return c;
  };
  const std::vector<std::uint16_t> A = bf16_codes_of(p.a.data), B = bf16_codes_of(p.b.data);
  const std::vector<double> bias = epilogue_bias(ec, epilogue_bias_format(t), p.m, p.n);
  const std::vector<std::uint16_t> bias_codes = bf16_codes_of(bias);
  std::vector<float> D(static_cast<std::size_t>(p.m * p.n), std::nanf(""));
  float amax = std::nanf("");
  GemmOperands ops;
  ops.m = p.m, ops.n = p.n, ops.k = p.k;
  ops.a = A.data(), ops.lda = p.k, ops.b = B.data(), ops.ldb = p.n, ops.c = D.data(), ops.ldc = p.n;
  ops.bias_kind = ec.bias;
  ops.bias = bias_codes.data();
  ops.activation = ec.activation;
  ops.amax = &amax;
  kern->run(ops);
  std::vector<std::uint64_t> codes(D.size());
  for (std::size_t x = 0; x < D.size(); ++x) codes[x] = std::bit_cast<std::uint32_t>(D[x]);
  EpilogueGrade g;
  g.problem = &p;
  g.traits = &t;
  g.epilogue = &ec;
  g.bias = &bias;
  g.codes = &codes;
  CaseResult r;
  r.status = CaseStatus::Pass;
  const AmaxInterval iv = grade_epilogue(g, r);
  check_amax(amax, iv, t, r);
  return r;
}

}  // namespace

TEST_CASE("the epilogue example plugin through fpcert's epilogue grader: ReLU and GELU (tanh) with a bias pass, the erf twin fails") {
  (void)load_plugin(kDir + "/libexample_epilogue_plugin.so");
  for (std::uint64_t seed : {3u, 4u}) {
    for (Activation a : {Activation::None, Activation::Relu, Activation::GeluTanh}) {
      const CaseResult r = grade_plugin_case("example_gemm_bf16_bias_gelu", a, seed);
      INFO(to_string(a), " seed ", seed, ": ", r.reason);
      CHECK(r.status == CaseStatus::Pass);
      CHECK_FALSE(r.vacuous);
      CHECK(r.metrics.err_frac_max > 0);  // the output is not the exact value: the check can fail
      CHECK(std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) { return c.kind == CheckKind::Amax && c.passed; }));
    }
    const CaseResult bad = grade_plugin_case("example_gemm_bf16_bias_gelu_erf", Activation::GeluTanh, seed);
    INFO("erf twin, seed ", seed, ": ", bad.reason);
    CHECK(bad.status == CaseStatus::Fail);
    CHECK(std::any_of(bad.checks.begin(), bad.checks.end(), [](const CheckResult& c) { return c.kind == CheckKind::Envelope && !c.passed; }));
  }
}
