// tests/suites/epilogue_test.cpp — GEMMs as libraries call them, issue 37: the fused epilogue's exact reference, bound and
// grader (suites/ops/gemm/epilogue.hpp). The bias draw against a splitmix64 written here; activation_exact against an
// MPFR evaluation at 300 bits written here (other formulas: erf where the implementation uses erfc, tanh where it uses
// exp); the Lipschitz constants against MPFR derivatives; the activations' envelopes against binary32 implementations in
// several operation orders (glibc's erff, tanhf, expf) over a dense sweep of binary32 inputs, and two wrong declarations
// that must violate them; grade_epilogue on simulated kernels, correct ones in every combination and eight wrong ones.
#include <doctest/doctest.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "generators/generate.hpp"
#include "oracle/block/block_format.hpp"
#include "oracle/mpfr_ref.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/ops/gemm/epilogue.hpp"
#include "tests/support/mpfr_to_ref.hpp"
#include "tests/support/splitmix.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using mpfr_ref::Mpfr;

namespace {

constexpr Activation kActs[] = {Activation::None, Activation::Relu, Activation::GeluErf, Activation::GeluTanh, Activation::Silu};
constexpr Activation kSmooth[] = {Activation::GeluErf, Activation::GeluTanh, Activation::Silu};

// ---- binary32 implementations, several operation orders each (the build has -ffp-contract=off: each operation rounds) ----
constexpr float kRs2 = 0.70710678118654752440f;                           // RN(1/sqrt 2)
const float kBeta = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5);        // RN(sqrt(2/pi)), as PyTorch forms it
constexpr float kKappa = 0.044715f;
constexpr int kOrders = 4;

float gelu_erf_f32(float x, int order) {
  switch (order) {
    case 0: return 0.5f * x * (1.0f + std::erf(x * kRs2));                 // (0.5 x) s, y = x RN(1/sqrt 2)
    case 1: return x * (1.0f + std::erf(x / std::sqrt(2.0f))) * 0.5f;      // (x s) 0.5, y = x / RN(sqrt 2)
    case 2: return x * (0.5f * std::erfc(-x * kRs2));                      // the erfc form
    default: {
      const float h = 0.5f * x;
      return std::fma(h, std::erf(x * kRs2), h);                           // fused: h + h erf
    }
  }
}
float gelu_tanh_f32(float x, int order) {
  switch (order) {
    case 0: {  // PyTorch's: kBeta (x + kKappa x x x)
      const float inner = kBeta * (x + kKappa * x * x * x);
      return 0.5f * x * (1.0f + std::tanh(inner));
    }
    case 1: {  // Horner, fused: kBeta x (1 + kKappa x^2)
      const float inner = kBeta * x * std::fma(kKappa, x * x, 1.0f);
      return x * 0.5f * (1.0f + std::tanh(inner));
    }
    case 2: {  // the sigmoid form x / (1 + e^(-2 v))
      const float inner = kBeta * (x + kKappa * (x * x * x));
      return x / (1.0f + std::exp(-2.0f * inner));
    }
    default: {  // k0 formed in binary32 at run time
      const float k0 = std::sqrt(2.0f / 3.14159265358979f);
      const float inner = k0 * (x + 0.044715f * (x * (x * x)));
      return 0.5f * x * (1.0f + std::tanh(inner));
    }
  }
}
float silu_f32(float x, int order) {
  switch (order) {
    case 0: return x / (1.0f + std::exp(-x));
    case 1: return x * (1.0f / (1.0f + std::exp(-x)));
    case 2: {  // e^x for negative x (no overflow of e^-x)
      if (x >= 0) return x / (1.0f + std::exp(-x));
      const float e = std::exp(x);
      return x * e / (1.0f + e);
    }
    default: {
      const float s = 1.0f / (1.0f + std::exp(-x));
      return s * x;
    }
  }
}
float act_f32(Activation a, float x, int order) {
  switch (a) {
    case Activation::None: return x;
    case Activation::Relu: return x > 0 ? x : 0.0f;
    case Activation::GeluErf: return gelu_erf_f32(x, order);
    case Activation::GeluTanh: return gelu_tanh_f32(x, order);
    case Activation::Silu: return silu_f32(x, order);
  }
  return x;
}

// ---- the sweep's reference: x87 long double (64-bit significand), checked against activation_exact below ----
long double act_ld(Activation a, long double x) {
  switch (a) {
    case Activation::None: return x;
    case Activation::Relu: return x > 0 ? x : 0.0L;
    case Activation::GeluErf: return 0.5L * x * erfcl(-x / sqrtl(2.0L));
    case Activation::GeluTanh: {
      const long double v = sqrtl(2.0L / 3.141592653589793238462643383279502884L) * (x + 0.044715L * x * x * x);
      return x / (1.0L + expl(-2.0L * v));
    }
    case Activation::Silu: return x / (1.0L + expl(-x));
  }
  return x;
}
/// The long double reference's own error, checked by "the sweep's reference" below: 2^-50 relative (far below 2^-24).
constexpr double kLdRel = 0x1p-50;

/// Binary32 inputs: ~1.1 million patterns in (0, 12) (subnormals included) and ~0.2 million in [12, 1e4], both signs,
/// and +-0.
std::vector<float> sweep_inputs() {
  std::vector<float> xs = {0.0f, -0.0f};
  const auto bits = [](float f) { return std::bit_cast<std::uint32_t>(f); };
  for (std::uint32_t b = 1; b < 64; ++b) xs.push_back(std::bit_cast<float>(b));  // the smallest subnormals
  for (std::uint32_t b = 1; b < bits(12.0f); b += 1009) xs.push_back(std::bit_cast<float>(b));
  for (std::uint32_t b = bits(12.0f); b <= bits(1e4f); b += 401) xs.push_back(std::bit_cast<float>(b));
  const std::size_t n = xs.size();
  for (std::size_t i = 0; i < n; ++i) xs.push_back(-xs[i]);
  return xs;
}

struct Sweep {
  double worst = 0;
  float worst_x = 0;
  double worst_normal = 0;  ///< over |x| >= 2^-100 (the floor's underflow terms out of play)
  float worst_normal_x = 0;
  std::int64_t violations = 0;
};
/// |impl(x) - act(x)| / (the envelope + the reference's own error) over the sweep.
template <class F>
Sweep sweep(Activation a, const ActivationEnvelope& env, const std::vector<float>& xs, F impl) {
  Sweep s;
  for (float x : xs) {
    const long double ref = act_ld(a, x);
    const double got = impl(x);
    const double allowed = env.rel * std::fabs(static_cast<double>(ref)) + env.abs * std::fabs(x) + env.floor +
                           kLdRel * std::fabs(static_cast<double>(ref)) + 0x1p-1060;
    const double err = std::isnan(got) ? INFINITY : static_cast<double>(std::fabs(static_cast<long double>(got) - ref));
    const double frac = err / allowed;
    if (frac > 1) ++s.violations;
    if (frac > s.worst) s.worst = frac, s.worst_x = x;
    if (std::fabs(x) >= 0x1p-100f && frac > s.worst_normal) s.worst_normal = frac, s.worst_normal_x = x;
  }
  return s;
}

// ---- an independent exact evaluation: MPFR at 300 bits, other formulas than the implementation's ----
/// z - act(z) for z > 0 at 300 bits: GELU (erf) z Gamma(1/2, z^2 / 2) / (2 sqrt pi) (the incomplete gamma function, not
/// erfc), GELU (tanh) and SiLU z e^-u / (1 + e^-u) (u = 2v, z).
void complement_300(Activation a, mpfr_ptr c, mpfr_srcptr z) {
  Mpfr t(300), s(300), k0(300), k1(300);
  switch (a) {
    case Activation::GeluErf:
      mpfr_sqr(t, z, MPFR_RNDN);
      mpfr_div_2ui(t, t, 1, MPFR_RNDN);
      mpfr_set_d(s, 0.5, MPFR_RNDN);
      mpfr_gamma_inc(t, s, t, MPFR_RNDN);
      mpfr_const_pi(s, MPFR_RNDN);
      mpfr_sqrt(s, s, MPFR_RNDN);
      mpfr_div(t, t, s, MPFR_RNDN);
      mpfr_mul(t, t, z, MPFR_RNDN);
      mpfr_div_2ui(c, t, 1, MPFR_RNDN);
      return;
    case Activation::GeluTanh:
    case Activation::Silu:
      if (a == Activation::Silu) {
        mpfr_set(t, z, MPFR_RNDN);
      } else {
        mpfr_const_pi(k0, MPFR_RNDN);
        mpfr_div_2ui(k0, k0, 1, MPFR_RNDN);
        mpfr_rec_sqrt(k0, k0, MPFR_RNDN);
        mpfr_set_ui(k1, 44715, MPFR_RNDN);
        mpfr_div_ui(k1, k1, 1000000, MPFR_RNDN);
        mpfr_pow_ui(t, z, 3, MPFR_RNDN);
        mpfr_fma(t, t, k1, z, MPFR_RNDN);
        mpfr_mul(t, t, k0, MPFR_RNDN);
        mpfr_mul_2ui(t, t, 1, MPFR_RNDN);  // 2v
      }
      mpfr_neg(t, t, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(s, t, 1, MPFR_RNDN);
      mpfr_mul(t, t, z, MPFR_RNDN);
      mpfr_div(c, t, s, MPFR_RNDN);
      return;
    default: mpfr_set_zero(c, 1); return;
  }
}

/// scale act(z) as a RefValue: z <= 0 (or ReLU, none) from act_300 at 300 bits; z > 0 as scale z - scale c, formed exactly
/// (the precision spans both), so that an act(z) within 2^-300 of z still has the right lo and tail.
RefValue act_ref_300(Activation a, mpfr_srcptr z, double scale);

void act_300(Activation a, mpfr_ptr y, mpfr_srcptr z) {
  Mpfr t(300), s(300), k0(300), k1(300);
  switch (a) {
    case Activation::None:
    case Activation::Relu:  // max(z, 0) = (z + |z|) / 2, exact
      mpfr_set(y, z, MPFR_RNDN);
      if (a == Activation::Relu) {
        mpfr_abs(t, z, MPFR_RNDN);
        mpfr_add(y, y, t, MPFR_RNDN);
        mpfr_div_2ui(y, y, 1, MPFR_RNDN);
      }
      return;
    case Activation::GeluErf:
      mpfr_sqrt_ui(t, 2, MPFR_RNDN);
      mpfr_div(t, z, t, MPFR_RNDN);  // z / sqrt 2
      if (mpfr_sgn(z) >= 0) {        // z (1 + erf(t)) / 2
        mpfr_erf(s, t, MPFR_RNDN);
        mpfr_add_ui(s, s, 1, MPFR_RNDN);
      } else {  // z erfc(|t|) / 2 (no cancellation)
        mpfr_neg(t, t, MPFR_RNDN);
        mpfr_erfc(s, t, MPFR_RNDN);
      }
      mpfr_mul(y, s, z, MPFR_RNDN);
      mpfr_div_2ui(y, y, 1, MPFR_RNDN);
      return;
    case Activation::GeluTanh:
      mpfr_const_pi(k0, MPFR_RNDN);
      mpfr_div_2ui(k0, k0, 1, MPFR_RNDN);
      mpfr_rec_sqrt(k0, k0, MPFR_RNDN);  // 1 / sqrt(pi / 2)
      mpfr_set_ui(k1, 44715, MPFR_RNDN);
      mpfr_div_ui(k1, k1, 1000000, MPFR_RNDN);
      mpfr_pow_ui(t, z, 3, MPFR_RNDN);
      mpfr_fma(t, t, k1, z, MPFR_RNDN);
      mpfr_mul(t, t, k0, MPFR_RNDN);  // v
      if (mpfr_cmp_si(z, -3) >= 0) {  // z (1 + tanh v) / 2: cancels at most ~9 bits here
        mpfr_tanh(s, t, MPFR_RNDN);
        mpfr_add_ui(s, s, 1, MPFR_RNDN);
        mpfr_mul(y, s, z, MPFR_RNDN);
        mpfr_div_2ui(y, y, 1, MPFR_RNDN);
      } else {  // z e^(2v) / (1 + e^(2v))
        mpfr_mul_2ui(t, t, 1, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(s, t, 1, MPFR_RNDN);
        mpfr_mul(t, t, z, MPFR_RNDN);
        mpfr_div(y, t, s, MPFR_RNDN);
      }
      return;
    case Activation::Silu:
      if (mpfr_sgn(z) >= 0) {
        mpfr_neg(t, z, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(s, t, 1, MPFR_RNDN);
        mpfr_div(y, z, s, MPFR_RNDN);
      } else {  // z e^z / (1 + e^z)
        mpfr_exp(t, z, MPFR_RNDN);
        mpfr_add_ui(s, t, 1, MPFR_RNDN);
        mpfr_mul(t, t, z, MPFR_RNDN);
        mpfr_div(y, t, s, MPFR_RNDN);
      }
      return;
  }
}

RefValue act_ref_300(Activation a, mpfr_srcptr z, double scale) {
  const bool smooth = a == Activation::GeluErf || a == Activation::GeluTanh || a == Activation::Silu;
  if (!smooth || mpfr_sgn(z) <= 0) {
    Mpfr y(300);
    act_300(a, y, z);
    mpfr_mul_d(y, y, scale, MPFR_RNDN);
    return test::mpfr_to_ref(y);
  }
  Mpfr c(300);
  complement_300(a, c, z);
  const long span = mpfr_zero_p(c.get()) ? 0 : mpfr_get_exp(z) - mpfr_get_exp(c);
  Mpfr v(static_cast<mpfr_prec_t>(mpfr_get_prec(z) + 53 + 300 + std::max(0L, span) + 64));
  mpfr_mul_d(v, z, scale, MPFR_RNDN);  // exact
  mpfr_mul_d(c, c, scale, MPFR_RNDN);
  mpfr_sub(v, v, c, MPFR_RNDN);  // exact: the precision spans scale z and the 300 bits of scale c
  return test::mpfr_to_ref(v);
}

/// act'(x) at 120 bits, from the derivative's closed form.
double act_derivative(Activation a, double xd) {
  Mpfr x(120), t(120), s(120), y(120), k0(120), k1(120);
  mpfr_set_d(x, xd, MPFR_RNDN);
  switch (a) {
    case Activation::GeluErf: {  // Phi(x) + x phi(x)
      mpfr_sqrt_ui(t, 2, MPFR_RNDN);
      mpfr_div(t, x, t, MPFR_RNDN);
      mpfr_neg(t, t, MPFR_RNDN);
      mpfr_erfc(s, t, MPFR_RNDN);
      mpfr_div_2ui(s, s, 1, MPFR_RNDN);  // Phi
      mpfr_sqr(t, x, MPFR_RNDN);
      mpfr_div_2ui(t, t, 1, MPFR_RNDN);
      mpfr_neg(t, t, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_const_pi(y, MPFR_RNDN);
      mpfr_mul_2ui(y, y, 1, MPFR_RNDN);
      mpfr_sqrt(y, y, MPFR_RNDN);
      mpfr_div(t, t, y, MPFR_RNDN);  // phi
      mpfr_fma(y, t, x, s, MPFR_RNDN);
      break;
    }
    case Activation::GeluTanh: {  // (1 + tanh v) / 2 + x sech^2(v) k0 (1 + 3 k1 x^2) / 2
      mpfr_const_pi(k0, MPFR_RNDN);
      mpfr_ui_div(k0, 2, k0, MPFR_RNDN);
      mpfr_sqrt(k0, k0, MPFR_RNDN);
      mpfr_set_str(k1, "0.044715", 10, MPFR_RNDN);
      mpfr_pow_ui(t, x, 3, MPFR_RNDN);
      mpfr_fma(t, t, k1, x, MPFR_RNDN);
      mpfr_mul(t, t, k0, MPFR_RNDN);  // v
      mpfr_sech(s, t, MPFR_RNDN);
      mpfr_sqr(s, s, MPFR_RNDN);
      mpfr_tanh(t, t, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_sqr(y, x, MPFR_RNDN);
      mpfr_mul(y, y, k1, MPFR_RNDN);
      mpfr_mul_ui(y, y, 3, MPFR_RNDN);
      mpfr_add_ui(y, y, 1, MPFR_RNDN);
      mpfr_mul(y, y, k0, MPFR_RNDN);
      mpfr_mul(y, y, x, MPFR_RNDN);
      mpfr_mul(y, y, s, MPFR_RNDN);
      mpfr_add(y, y, t, MPFR_RNDN);
      mpfr_div_2ui(y, y, 1, MPFR_RNDN);
      break;
    }
    case Activation::Silu: {  // sigma (1 + x (1 - sigma))
      mpfr_neg(t, x, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_ui_div(s, 1, t, MPFR_RNDN);  // sigma
      mpfr_ui_sub(t, 1, s, MPFR_RNDN);
      mpfr_mul(t, t, x, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_mul(y, t, s, MPFR_RNDN);
      break;
    }
    default: return 1;
  }
  return mpfr_get_d(y, MPFR_RNDA);
}

/// The maximiser of act' near `guess` (golden-section search on act' itself, 200 steps in [guess - 0.5, guess + 0.5]).
double max_derivative_near(Activation a, double guess) {
  double lo = guess - 0.5, hi = guess + 0.5;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 200; ++it) {
    const double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    if (act_derivative(a, x1) > act_derivative(a, x2)) hi = x2;
    else lo = x1;
  }
  return act_derivative(a, (lo + hi) / 2);
}

// ---- simulated kernels for grade_epilogue ----
enum class Bug { None, BiasPerRow, BiasIgnored, BiasScaledByAlpha, GeluSwapped, ActDropped, ScaleDIgnored, ScaleBIgnored, AmaxScaled };

struct SimCall {
  const Problem* p = nullptr;
  const KernelTraits* t = nullptr;
  const EpilogueCase* ec = nullptr;
  double alpha = 1, beta = 0, sa = 1, sb = 1, sd = 1;
  const std::vector<double>* c = nullptr;
  const std::vector<double>* bias = nullptr;
};
struct SimOut {
  std::vector<std::uint64_t> codes;
  double amax = 0;
};

/// A kernel in binary32: each element's products summed in a random order, then the epilogue in a random operation order
/// (alpha' formed in one of three ways, the addends in a random order or fused, one of kOrders activation forms), D
/// rounded to nearest into the output format. `bug` makes it wrong in one way.
SimOut simulate(const SimCall& s, Bug bug, std::uint64_t seed, bool rounds_z = false, bool rounds_before_bias = false) {
  const Problem& p = *s.p;
  const KernelTraits& t = *s.t;
  const EpilogueCase& ec = *s.ec;
  const std::int64_t m = p.m, n = p.n, k = p.k;
  std::vector<float> a(p.a.data.size()), b(p.b.data.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(quantize(*t.a_input, p.a.data[i]));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(quantize(*t.b_input, p.b.data[i]));
  const float alpha = static_cast<float>(s.alpha), beta = static_cast<float>(s.beta), sa = static_cast<float>(s.sa);
  const float sb = bug == Bug::ScaleBIgnored ? 1.0f : static_cast<float>(s.sb);
  const float sd = bug == Bug::ScaleDIgnored ? 1.0f : static_cast<float>(s.sd);
  Activation act = ec.activation;
  if (bug == Bug::GeluSwapped) act = act == Activation::GeluErf ? Activation::GeluTanh : Activation::GeluErf;
  if (bug == Bug::ActDropped) act = Activation::None;
  SimOut o;
  o.codes.resize(static_cast<std::size_t>(m * n));
  std::vector<std::int64_t> perm(static_cast<std::size_t>(k));
  float amax = 0;
  for (std::int64_t x = 0; x < m * n; ++x) {
    const std::int64_t i = x / n, j = x % n;
    std::uint64_t r = test::mix(seed ^ test::mix(static_cast<std::uint64_t>(x)));
    auto draw = [&](std::uint64_t bound) { r = test::mix(r); return r % bound; };
    std::iota(perm.begin(), perm.end(), 0);
    for (std::int64_t q = k - 1; q > 0; --q) std::swap(perm[static_cast<std::size_t>(q)], perm[draw(static_cast<std::uint64_t>(q + 1))]);
    float acc = 0;
    for (std::int64_t q : perm) acc += a[static_cast<std::size_t>(i * k + q)] * b[static_cast<std::size_t>(q * n + j)];  // products exact
    float bias = 0;
    if (s.bias && !s.bias->empty() && bug != Bug::BiasIgnored) {
      const bool row = (ec.bias == BiasKind::PerRow) != (bug == Bug::BiasPerRow);
      bias = static_cast<float>((*s.bias)[static_cast<std::size_t>((row ? i : j) % static_cast<std::int64_t>(s.bias->size()))]);
    }
    const float cv = s.beta != 0 ? static_cast<float>((*s.c)[static_cast<std::size_t>(x)]) : 0.0f;
    float ap = alpha, t1 = 0;
    const auto how = draw(3);
    if (ec.fp8_scaling) ap = how == 0 ? (alpha * sa) * sb : alpha * (sa * sb);
    const float base = bug == Bug::BiasScaledByAlpha ? acc + bias : acc;
    t1 = ec.fp8_scaling && how == 2 ? ((base * sa) * sb) * alpha : ap * base;
    if (bug == Bug::BiasScaledByAlpha) bias = 0;
    float z = 0;
    const float t2 = beta * cv;
    if (rounds_before_bias && s.beta != 0 && bias != 0) {
      // cuBLASLt's bias epilogue with C (measured): alpha' acc + beta c rounded into the output format, then the bias
      z = static_cast<float>(quantize(*t.out, draw(2) ? std::fma(ap, base, t2) : t1 + t2)) + bias;
    } else if (s.beta != 0 && draw(2) == 0) {
      z = std::fma(ap, base, t2) + bias;  // fused alpha' acc + beta c
    } else {
      float terms[3] = {t1, t2, bias};
      const auto rot = draw(3);
      std::rotate(terms, terms + rot, terms + 3);
      if (draw(2)) std::swap(terms[0], terms[1]);
      z = (terms[0] + terms[1]) + terms[2];
    }
    if (rounds_z) z = static_cast<float>(quantize(*t.out, z));  // an unfused linear, then the activation
    const float y = act_f32(act, z, static_cast<int>(draw(kOrders)));
    const float d = ec.fp8_scaling ? sd * y : y;
    amax = std::max(amax, std::fabs(bug == Bug::AmaxScaled ? d : y));
    o.codes[static_cast<std::size_t>(x)] = round_double(*t.out, static_cast<double>(d), Rounder::nearest(*t.out)).code;
  }
  o.amax = amax;
  return o;
}

KernelTraits epilogue_traits(const Format& in, const Format& out) {
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &in;
  t.acc = &f32;
  t.out = &out;
  t.alpha_beta = true;
  t.epilogue.bias = bit(BiasKind::PerRow) | bit(BiasKind::PerColumn);
  t.epilogue.activations = bit(Activation::Relu) | bit(Activation::GeluErf) | bit(Activation::GeluTanh) | bit(Activation::Silu);
  t.epilogue.func_rel_err = 0x1p-22;
  t.epilogue.func_note = "glibc's erff, tanhf, expf (the test's binary32 forms)";
  t.epilogue.fp8_scaling = true;
  t.epilogue.amax = true;
  return t;
}

/// One graded call: the case's scalars, C and bias as the runner makes them, the simulated kernel's D and amax.
struct Graded {
  CaseResult r;
  AmaxInterval iv;
  double amax = 0;
};
Graded grade_sim(const Problem& p, const KernelTraits& t, const EpilogueCase& ec, bool ab, Bug bug, std::uint64_t seed,
                 bool rounds_z = false, bool rounds_before_bias = false) {
  SimCall s;
  s.p = &p;
  s.t = &t;
  s.ec = &ec;
  s.alpha = epilogue_scalar(ab ? 0.7 : 1.0, t);
  s.beta = epilogue_scalar(ab ? -1.3 : 0.0, t);
  const std::vector<double> c = alpha_beta_c(AlphaBetaCase{ab, 0.7, ab ? -1.3 : 0.0, false, seed ^ 5}, *t.out, p.m, p.n);
  const std::vector<double> bias = epilogue_bias(ec, epilogue_bias_format(t), p.m, p.n);
  s.c = &c;
  s.bias = &bias;
  if (ec.fp8_scaling) {
    s.sa = epilogue_scalar(ec.scale_a, t);
    s.sb = epilogue_scalar(ec.scale_b, t);
    s.sd = epilogue_scalar(ec.scale_d, t);
  }
  const SimOut sim = simulate(s, bug, seed, rounds_z, rounds_before_bias);
  EpilogueGrade g;
  g.problem = &p;
  g.traits = &t;
  g.epilogue = &ec;
  g.alpha = s.alpha;
  g.beta = s.beta;
  g.c = s.beta != 0 ? &c : nullptr;
  g.bias = &bias;
  g.scale_a = s.sa;
  g.scale_b = s.sb;
  g.scale_d = s.sd;
  g.codes = &sim.codes;
  Graded out;
  out.r.status = CaseStatus::Pass;
  out.iv = grade_epilogue(g, out.r);
  out.amax = sim.amax;
  if (ec.amax) check_amax(sim.amax, out.iv, t, out.r);
  return out;
}

EpilogueCase make_case(BiasKind b, Activation a, bool fp8, std::uint64_t seed) {
  EpilogueCase ec;
  ec.active = true;
  ec.bias = b;
  ec.activation = a;
  ec.fp8_scaling = fp8;
  if (fp8) ec.scale_a = 1.5, ec.scale_b = 0.6171875, ec.scale_d = 0.37;  // 0.37 rounds in binary32
  ec.amax = fp8;
  ec.bias_seed = seed;
  return ec;
}

bool check_failed(const CaseResult& r, CheckKind k) {
  return std::any_of(r.checks.begin(), r.checks.end(), [&](const CheckResult& c) { return c.kind == k && !c.passed; });
}

}  // namespace

TEST_CASE("epilogue_bias: splitmix64 uniform [-2, 2) rounded into the bias format, m values per row, n per column") {
  KernelTraits t = epilogue_traits(bf16, f32);
  CHECK(&epilogue_bias_format(t) == &f32);
  t.epilogue.bias_format = &bf16;
  CHECK(&epilogue_bias_format(t) == &bf16);
  EpilogueCase ec = make_case(BiasKind::PerRow, Activation::None, false, 1234);
  CHECK(epilogue_bias(ec, bf16, 7, 5).size() == 7);
  ec.bias = BiasKind::PerColumn;
  const std::vector<double> v = epilogue_bias(ec, bf16, 7, 5);
  REQUIRE(v.size() == 5);
  // Draw i: splitmix64's finaliser of seed + (i + 1) golden, 53 bits, -2 + 4 u, rounded to nearest even into bf16.
  bool some_rounded = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double u01 = static_cast<double>(test::mix(1234 + i * 0x9E3779B97F4A7C15ull) >> 11) * 0x1p-53;
    const double x = -2 + 4 * u01;
    const double want = quantize(bf16, x);
    CHECK(v[i] == want);
    CHECK(v[i] >= -2);
    CHECK(v[i] <= 2);
    some_rounded = some_rounded || want != x;
  }
  CHECK(some_rounded);
  ec.bias = BiasKind::None;
  CHECK(epilogue_bias(ec, bf16, 7, 5).empty());
  // Scalars are rounded to nearest into the accumulator format.
  CHECK(epilogue_scalar(0.37, t) == static_cast<double>(0.37f));
}

TEST_CASE("epilogue_unsupported names every reason") {
  KernelTraits plain;  // no epilogue, no alpha/beta
  EpilogueCase ec = make_case(BiasKind::PerColumn, Activation::GeluTanh, true, 1);
  const std::string why = epilogue_unsupported(plain, ec, AlphaBetaCase{true, 0.5, 0.5, false, 1});
  for (const char* part : {"bias per column", "activation gelu_tanh", "FP8 scale factors", "amax", "does not declare alpha/beta"}) {
    INFO(why);
    CHECK(why.find(part) != std::string::npos);
  }
  const KernelTraits full = epilogue_traits(bf16, bf16);
  CHECK(epilogue_unsupported(full, ec, AlphaBetaCase{true, 0.5, 0.5, false, 1}).empty());
  CHECK(epilogue_unsupported(plain, EpilogueCase{}).empty());
  KernelTraits wide = full;
  wide.acc = &f64;
  CHECK(epilogue_unsupported(wide, ec).find("accumulator f64 (53 bits)") != std::string::npos);
  KernelTraits bad_f = full;
  bad_f.epilogue.func_rel_err = -1;
  CHECK(epilogue_unsupported(bad_f, ec).find("func_rel_err") != std::string::npos);
  KernelTraits block = full;
  block.block.format = &mxfp8_e4m3;
  CHECK(epilogue_unsupported(block, ec).find("block-scaled") != std::string::npos);
  KernelTraits row_only = full;
  row_only.epilogue.bias = bit(BiasKind::PerRow);
  CHECK(epilogue_unsupported(row_only, ec).find("does not take a bias per column") != std::string::npos);
}

TEST_CASE("activation_exact equals an independent MPFR evaluation at 300 bits (hi, lo and the tail's sign)") {
  const std::uint64_t seed = test::seed();
  MESSAGE("FPCERT_TEST_SEED=", seed);
  int compared = 0;
  for (Activation a : kActs)
    for (int it = 0; it < 400; ++it) {
      // z = hi + lo: hi spread over [-40, 40] and a few wide magnitudes, lo a few ulps of hi below it (an exact double-double).
      const double u1 = test::unit(seed, 3 * it), u2 = test::unit(seed, 3 * it + 1), u3 = test::unit(seed, 3 * it + 2);
      double hi = (u1 - 0.5) * 80;
      if (it % 10 == 0) hi = std::ldexp(u1 - 0.5, static_cast<int>(u2 * 36) - 30);  // |z| from 2^-31 to 2^5
      const double lo = std::ldexp(hi * (u2 - 0.5), -55 - static_cast<int>(u3 * 20));
      const double sc = it % 3 == 0 ? 1.0 : it % 3 == 1 ? 0.37 : -3.0;
      const RefValue got = activation_exact(a, hi, lo, sc);
      Mpfr z(300);
      mpfr_set_d(z, hi, MPFR_RNDN);
      mpfr_add_d(z, z, lo, MPFR_RNDN);  // exact
      const RefValue want = act_ref_300(a, z, sc);
      char hex[96];
      std::snprintf(hex, sizeof hex, "%a + %a", hi, lo);
      INFO(to_string(a), " z = ", hex, " scale ", sc);
      CHECK(got.hi == want.hi);
      CHECK(got.lo == want.lo);
      CHECK(got.tail == want.tail);
      ++compared;
    }
  CHECK(compared == 2000);
  // Far out, act(z) differs from z (z > 0) or from 0 (z < 0) by less than any double, and only the tail shows it:
  // act(z) < z, so z = 10^6 gives hi = 10^6, lo = 0, tail -1; act(-10^6) is a negative number below the double range.
  for (Activation a : kSmooth) {
    const RefValue big = activation_exact(a, 1e6, 0), big3 = activation_exact(a, 1e6, 0, -3), neg = activation_exact(a, -1e6, 0);
    INFO(to_string(a));
    CHECK(big.hi == 1e6);
    CHECK(big.lo == 0);
    CHECK(big.tail == -1);
    CHECK(big3.hi == -3e6);
    CHECK(big3.tail == 1);
    CHECK(neg.hi == 0);
    CHECK(std::signbit(neg.hi));
    CHECK(neg.tail == -1);
  }
  // Limits: act(+inf) = +inf, GELU and SiLU at -inf -> -0, ReLU 0.
  CHECK(activation_exact(Activation::Silu, INFINITY, 0).hi == INFINITY);
  CHECK(std::signbit(activation_exact(Activation::GeluErf, -INFINITY, 0).hi));
  CHECK(activation_exact(Activation::Relu, -INFINITY, 0).hi == 0);
}

TEST_CASE("activation_lipschitz: sup |act'| from MPFR derivatives on a grid and at the analytic maximiser, rounded upward") {
  CHECK(activation_lipschitz(Activation::None) == 1);
  CHECK(activation_lipschitz(Activation::Relu) == 1);
  // The maximisers: GELU (erf) at sqrt 2 (g'' = phi(x) (2 - x^2)); its tanh form near 1.4185; SiLU near 2.3994
  // (2 + x (1 - 2 sigma(x)) = 0). The minima of act' are above -0.13: |act'| peaks at the maximum.
  const double guess[] = {std::sqrt(2.0), 1.4185, 2.3994};
  for (int i = 0; i < 3; ++i) {
    const Activation a = kSmooth[i];
    double grid_max = 0;
    for (int s = -20000; s <= 20000; ++s) grid_max = std::max(grid_max, std::fabs(act_derivative(a, s * 1e-3)));  // [-20, 20]
    const double peak = max_derivative_near(a, guess[i]);
    INFO(to_string(a), ": grid ", grid_max, ", at the maximiser ", peak);
    CHECK(grid_max <= peak);
    CHECK(peak <= activation_lipschitz(a));
    CHECK(activation_lipschitz(a) - peak < 1e-5);  // tight: the constant is the sup rounded up in the 5th decimal
    // Beyond [-20, 20], |act'| stays within 20 e^-20 < 1e-7 of 1 (x > 20) or of 0 (x < -20): the tails x e^-x decrease.
    CHECK(std::fabs(act_derivative(a, 20) - 1) < 1e-7);
    CHECK(std::fabs(act_derivative(a, -20)) < 1e-7);
  }
  CHECK(max_derivative_near(Activation::GeluErf, 1.2) == doctest::Approx(1.1289041451851548).epsilon(1e-12));
}

TEST_CASE("the sweep's reference: long double activations within 2^-50 of activation_exact") {
  for (Activation a : kSmooth)
    for (int i = 0; i < 3000; ++i) {
      const float x = static_cast<float>((test::unit(11, static_cast<std::uint64_t>(i)) - 0.5) * (i % 3 == 0 ? 2e4 : 24));
      const RefValue e = activation_exact(a, x, 0);
      const long double ld = act_ld(a, x);
      INFO(to_string(a), " x = ", x);
      CHECK(std::fabs(static_cast<double>(ld - (static_cast<long double>(e.hi) + e.lo))) <= kLdRel * std::fabs(e.hi) + 0x1p-1070);
    }
}

TEST_CASE("activation_envelope: binary32 forms in every order within it over a dense sweep; wrong declarations violate it") {
  const double u = 0x1p-24, eta = 0x1p-149, f = 0x1p-22;
  const std::vector<float> xs = sweep_inputs();
  REQUIRE(xs.size() > 2000000);
  // ReLU is exact.
  const ActivationEnvelope relu = activation_envelope(Activation::Relu, u, eta, f);
  CHECK(relu.rel == 0);
  CHECK(relu.abs == 0);
  CHECK(relu.floor == 0);
  for (Activation a : kSmooth) {
    const ActivationEnvelope env = activation_envelope(a, u, eta, f);
    CHECK_FALSE(env.derivation.empty());
    for (int order = 0; order < kOrders; ++order) {
      const Sweep s = sweep(a, env, xs, [&](float x) { return static_cast<double>(act_f32(a, x, order)); });
      MESSAGE(to_string(a), " order ", order, ": worst ", s.worst, " of the envelope at x = ", s.worst_x, "; for |x| >= 2^-100 ",
              s.worst_normal, " at x = ", s.worst_normal_x, " (", xs.size(), " inputs)");
      CHECK(s.violations == 0);
      CHECK(s.worst > 0.02);  // not vacuous: a good part of it is used
    }
  }
  // The other GELU form, declared as the erf form: far outside.
  const Sweep swapped = sweep(Activation::GeluErf, activation_envelope(Activation::GeluErf, u, eta, f), xs,
                              [&](float x) { return static_cast<double>(gelu_tanh_f32(x, 0)); });
  MESSAGE("GELU tanh form graded as the erf form: worst ", swapped.worst, ", ", swapped.violations, " violations");
  CHECK(swapped.violations > 1000);
  // SiLU in binary64 arithmetic calling binary32's expf: declared f = 2^-40 (a double exp) it violates the envelope
  // (u = 2^-53); declared f = 2^-22 (expf's own error) it is within it.
  auto silu_mixed = [](float x) { return static_cast<double>(x) / (1.0 + static_cast<double>(std::exp(-x))); };
  const Sweep wrong = sweep(Activation::Silu, activation_envelope(Activation::Silu, 0x1p-53, 0x1p-1074, 0x1p-40), xs, silu_mixed);
  MESSAGE("SiLU with expf declared 2^-40: worst ", wrong.worst, ", ", wrong.violations, " violations");
  CHECK(wrong.violations > 1000);
  // (Where expf itself stays in binary32's range, |x| <= 80: beyond it expf is not within f of e^-x at all.)
  std::vector<float> in_range;
  std::copy_if(xs.begin(), xs.end(), std::back_inserter(in_range), [](float x) { return std::fabs(x) <= 80; });
  const Sweep right = sweep(Activation::Silu, activation_envelope(Activation::Silu, 0x1p-53, 0x1p-1074, 0x1p-22), in_range, silu_mixed);
  MESSAGE("SiLU with expf declared 2^-22: worst ", right.worst);
  CHECK(right.violations == 0);
}

TEST_CASE("epilogue_allowed: hand values") {
  const KernelTraits t = epilogue_traits(bf16, f32);
  EpilogueCase ec = make_case(BiasKind::None, Activation::None, false, 1);
  EpilogueElement e;  // alpha' = 1, no rounding of it, nothing added: the 3 eta of underflow alone
  CHECK(epilogue_allowed(t, ec, 1, e).d == 3 * 0x1p-149 * (1 + 0x1p-44));
  // One addend (a bias of 2): gamma_1 (|Q| + 2), Q = |A'B'| + E = 1.
  e.ref_abs = 1;
  e.bias_abs = 2;
  const double u = 0x1p-24, g1 = u / (1 - u);
  CHECK(epilogue_allowed(t, ec, 1, e).d == (g1 * 3 + 3 * 0x1p-149) * (1 + 0x1p-44));
  // ReLU: Lipschitz 1, exact: the same; scale_d 0.5: Y' = Y / 2 + u (|act| + Y) / 2 + eta / 2.
  ec.activation = Activation::Relu;
  const double Y = g1 * 3 + 3 * 0x1p-149;
  e.act_abs = 3;
  CHECK(epilogue_allowed(t, ec, 1, e).y == Y * (1 + 0x1p-44));
  CHECK(epilogue_allowed(t, ec, 0.5, e).d == (0.5 * Y + u * 0.5 * (3 + Y) + 0x1p-150) * (1 + 0x1p-44));
}

TEST_CASE("grade_epilogue: a correct binary32 kernel passes every bias x activation x alpha/beta x FP8 scaling x output") {
  const std::uint64_t seed = test::seed();
  int graded = 0;
  double worst = 0;
  std::string worst_case;
  for (const Format* out : {&f32, &bf16})
    for (bool fp8 : {false, true}) {
      const KernelTraits t = epilogue_traits(fp8 ? e4m3 : bf16, *out);
      // Inputs force rounding: uniform [-1, 1) binary32 values into bf16 / e4m3.
      const Problem p = generate("uniform:m=12,n=10,k=16,seed=" + std::to_string(seed % 1000 + 1));
      for (BiasKind b : {BiasKind::None, BiasKind::PerRow, BiasKind::PerColumn})
        for (Activation a : kActs)
          for (bool ab : {false, true}) {
            const EpilogueCase ec = make_case(b, a, fp8, seed + 17);
            const Graded g = grade_sim(p, t, ec, ab, Bug::None, seed + graded);
            INFO(out->tag, " fp8 ", fp8, " bias ", to_string(b), " ", to_string(a), " ab ", ab, ": ", g.r.reason);
            CHECK(g.r.status == CaseStatus::Pass);
            CHECK_FALSE(g.r.vacuous);
            CHECK(g.r.tier == Tier::Envelope);
            CHECK(g.r.metrics.err_frac_max > 0);
            if (ec.amax) CHECK(std::any_of(g.r.checks.begin(), g.r.checks.end(), [](const CheckResult& c) { return c.kind == CheckKind::Amax && c.passed; }));
            if (g.r.metrics.err_frac_max > worst)
              worst = g.r.metrics.err_frac_max, worst_case = std::string(out->tag) + (fp8 ? " fp8 " : " ") + std::string(to_string(b)) + " " +
                                                            std::string(to_string(a)) + (ab ? " alpha/beta" : "");
            ++graded;
          }
    }
  CHECK(graded == 120);
  MESSAGE("120 correct kernels: worst ", worst, " of the allowance (", worst_case, ")");
}

TEST_CASE("grade_epilogue: each wrong kernel fails (bias per row, ignored, scaled by alpha; GELU swapped; activation dropped; scales; amax)") {
  const KernelTraits t = epilogue_traits(e4m3, f32);
  const Problem p = generate("uniform:m=12,n=10,k=16,seed=9");
  const EpilogueCase ec = make_case(BiasKind::PerColumn, Activation::GeluErf, true, 77);
  const Graded ok = grade_sim(p, t, ec, true, Bug::None, 3);
  REQUIRE(ok.r.status == CaseStatus::Pass);
  for (Bug bug : {Bug::BiasPerRow, Bug::BiasIgnored, Bug::BiasScaledByAlpha, Bug::GeluSwapped, Bug::ActDropped, Bug::ScaleDIgnored,
                  Bug::ScaleBIgnored}) {
    const Graded g = grade_sim(p, t, ec, true, bug, 3);
    INFO("bug ", static_cast<int>(bug), ": ", g.r.reason);
    CHECK(g.r.status == CaseStatus::Fail);
    CHECK(check_failed(g.r, CheckKind::Envelope));
  }
  // Per row where per column is asked, also with a per-row case (per column where per row is).
  const EpilogueCase row = make_case(BiasKind::PerRow, Activation::Relu, false, 78);
  CHECK(grade_sim(p, t, row, false, Bug::None, 4).r.status == CaseStatus::Pass);
  CHECK(grade_sim(p, t, row, false, Bug::BiasPerRow, 4).r.status == CaseStatus::Fail);
  // GELU's tanh form asked, the erf form computed.
  const EpilogueCase tanh_case = make_case(BiasKind::None, Activation::GeluTanh, false, 79);
  CHECK(grade_sim(p, t, tanh_case, false, Bug::None, 5).r.status == CaseStatus::Pass);
  CHECK(grade_sim(p, t, tanh_case, false, Bug::GeluSwapped, 5).r.status == CaseStatus::Fail);
  // amax of the scaled result: D itself is right, the amax check fails.
  const Graded am = grade_sim(p, t, ec, true, Bug::AmaxScaled, 3);
  CHECK(am.r.status == CaseStatus::Fail);
  CHECK(check_failed(am.r, CheckKind::Amax));
  CHECK_FALSE(check_failed(am.r, CheckKind::Envelope));
  MESSAGE("amax: the kernel's ", am.amax, " against [", am.iv.lo, ", ", am.iv.hi, "] (exact ", am.iv.exact, ")");
  // A call that does not hold together is refused with the reason.
  EpilogueGrade bad;
  bad.problem = &p;
  bad.traits = &t;
  bad.epilogue = &ec;
  const std::vector<std::uint64_t> codes(120, 0);
  bad.codes = &codes;
  CaseResult scratch;
  CHECK_THROWS_WITH_AS(grade_epilogue(bad, scratch), doctest::Contains("a bias per column has 10 values"), std::invalid_argument);
  bad.beta = 0.5;
  CHECK_THROWS_WITH_AS(grade_epilogue(bad, scratch), doctest::Contains("needs C's 120 values"), std::invalid_argument);
  // The report's terms and flags name the case.
  bool has_act = false;
  for (const BoundTerm& term : ok.r.envelope.terms) has_act = has_act || term.name == "activation (implementation)";
  CHECK(has_act);
  CHECK(std::any_of(ok.r.flags.begin(), ok.r.flags.end(), [](const std::string& f) { return f.find("bias per column") != std::string::npos; }));
}

TEST_CASE("round_before_act: Z rounded to bf16 before the activation passes where declared, fails where not") {
  KernelTraits t = epilogue_traits(bf16, bf16);
  const Problem p = generate("uniform:m=24,n=20,k=16,seed=12");
  int failed_undeclared = 0;
  for (Activation a : {Activation::GeluErf, Activation::GeluTanh, Activation::Silu}) {
    const EpilogueCase ec = make_case(BiasKind::PerColumn, a, false, 31);
    t.epilogue.round_before_act = true;
    const Graded ok = grade_sim(p, t, ec, true, Bug::None, 6, true);
    INFO(to_string(a), ": ", ok.r.reason);
    CHECK(ok.r.status == CaseStatus::Pass);
    CHECK(std::any_of(ok.r.envelope.terms.begin(), ok.r.envelope.terms.end(),
                      [](const BoundTerm& term) { return term.name == "rounding before the activation"; }));
    t.epilogue.round_before_act = false;
    // Undeclared, the second bf16 rounding (u_out |Z| before the activation, then u_out |D|) exceeds the one allowed.
    failed_undeclared += grade_sim(p, t, ec, true, Bug::None, 6, true).r.status == CaseStatus::Fail;
  }
  MESSAGE(failed_undeclared, " of 3 activations fail with the rounding of Z undeclared");
  CHECK(failed_undeclared == 3);
}

TEST_CASE("round_before_bias: alpha' acc + beta C rounded to bf16 before the bias passes where declared, fails where not") {
  KernelTraits t = epilogue_traits(bf16, bf16);
  const Problem p = generate("uniform:m=24,n=20,k=16,seed=13");
  int failed_undeclared = 0, cases = 0;
  for (Activation a : {Activation::None, Activation::Relu, Activation::GeluTanh}) {
    const EpilogueCase ec = make_case(BiasKind::PerColumn, a, false, 41);
    t.epilogue.round_before_bias = true;
    const Graded ok = grade_sim(p, t, ec, true, Bug::None, 8, false, true);
    INFO(to_string(a), ": ", ok.r.reason);
    CHECK(ok.r.status == CaseStatus::Pass);
    CHECK(std::any_of(ok.r.envelope.terms.begin(), ok.r.envelope.terms.end(),
                      [](const BoundTerm& term) { return term.name == "rounding before the bias"; }));
    // Declared, a kernel that does not round there passes too (the term is an allowance), and beta = 0 adds no term.
    CHECK(grade_sim(p, t, ec, true, Bug::None, 8).r.status == CaseStatus::Pass);
    const Graded no_c = grade_sim(p, t, ec, false, Bug::None, 8);
    CHECK(no_c.r.status == CaseStatus::Pass);
    CHECK(std::none_of(no_c.r.envelope.terms.begin(), no_c.r.envelope.terms.end(),
                       [](const BoundTerm& term) { return term.name == "rounding before the bias"; }));
    t.epilogue.round_before_bias = false;
    // Undeclared, where the bias cancels alpha' acc + beta c, the bf16 rounding of the larger sum exceeds the allowance.
    failed_undeclared += grade_sim(p, t, ec, true, Bug::None, 8, false, true).r.status == CaseStatus::Fail;
    ++cases;
  }
  MESSAGE(failed_undeclared, " of ", cases, " activations fail with the rounding before the bias undeclared");
  CHECK(failed_undeclared == cases);
}

TEST_CASE("grade_epilogue: act(Z) memoised by Z bit for bit: a second grading decides as the first, another Z is not served it") {
  // A mutation campaign grades each epilogue case once per mutant with the same exact Z (the activations' MPFR values
  // are kept, suites/ops/gemm/epilogue.cpp act_values_all). Another problem whose Z differs in one row only must get
  // its own values: a correct kernel on it passes (stale values of the first problem would refuse its row 0).
  const KernelTraits t = epilogue_traits(bf16, f32);
  const Problem p = generate("uniform:m=12,n=10,k=16,seed=" + std::to_string(test::seed() % 1000 + 3));
  const EpilogueCase ec = make_case(BiasKind::PerColumn, Activation::GeluErf, false, 41);
  const Graded g1 = grade_sim(p, t, ec, true, Bug::None, 5), g2 = grade_sim(p, t, ec, true, Bug::None, 5);
  REQUIRE(g1.r.status == CaseStatus::Pass);
  REQUIRE(g1.r.checks.size() == g2.r.checks.size());
  for (std::size_t c = 0; c < g1.r.checks.size(); ++c) {
    CHECK(g1.r.checks[c].passed == g2.r.checks[c].passed);
    CHECK(g1.r.checks[c].detail == g2.r.checks[c].detail);
    CHECK(std::bit_cast<std::uint64_t>(g1.r.checks[c].measured) == std::bit_cast<std::uint64_t>(g2.r.checks[c].measured));
  }
  CHECK(std::bit_cast<std::uint64_t>(g1.r.metrics.err_frac_max) == std::bit_cast<std::uint64_t>(g2.r.metrics.err_frac_max));
  Problem q = p;
  for (std::int64_t kk = 0; kk < q.k; ++kk) q.a(0, kk) = -q.a(0, kk);  // Z of row 0 changes sign (bf16 inputs stay exact)
  const Graded h = grade_sim(q, t, ec, true, Bug::None, 5);
  CHECK_MESSAGE(h.r.status == CaseStatus::Pass, h.r.reason);
  CHECK(h.r.metrics.err_frac_max > 0);
}
