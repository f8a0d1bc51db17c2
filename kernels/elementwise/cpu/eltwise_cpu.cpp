// kernels/elementwise/cpu/eltwise_cpu.cpp — CPU subjects of the elementwise check: glibc's exp, log and sqrt functions
// (the libm this build links), the f16/bf16 functions as "compute in float, round once" (the way a library without a
// half-precision kernel makes them), and two fixtures the tests use: a deliberately wrong expf (3 ulp too large on
// [1, 2)) and a correctly rounded exp from MPFR alone (Ziv's loop, not the fast path the check uses).
#include <bit>
#include <cmath>
#include <cstring>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/elementwise/eltwise_kernel.hpp"
#include "oracle/math/binary.hpp"
#include "oracle/math/expf_ops.hpp"

namespace fpcert {

namespace {

enum class How : std::uint8_t { Libm, Wrong3, Mpfr, Naive, ExpfOps, NaivePow, Wrong3Flushed };

struct CpuSpec {
  std::string name, note;
  EltwiseTraits t;
  How how = How::Libm;
  bool mutant = false;
};

float libm(math::Fn f, float x) {
  switch (f) {
    case math::Fn::Exp: return ::expf(x);
    case math::Fn::Exp2: return ::exp2f(x);
    case math::Fn::Exp10: return ::exp10f(x);
    case math::Fn::Log: return ::logf(x);
    case math::Fn::Log2: return ::log2f(x);
    case math::Fn::Log10: return ::log10f(x);
    case math::Fn::Sqrt: return ::sqrtf(x);
    case math::Fn::Rsqrt: break;  // no glibc function: not registered
    case math::Fn::Expm1: return ::expm1f(x);
    case math::Fn::Log1p: return ::log1pf(x);
    case math::Fn::Tanh: return ::tanhf(x);
    case math::Fn::Sinh: return ::sinhf(x);
    case math::Fn::Cosh: return ::coshf(x);
    case math::Fn::Cbrt: return ::cbrtf(x);
    case math::Fn::Erf: return ::erff(x);
    case math::Fn::Erfc: return ::erfcf(x);
    // The activations as kernels write them, in float with glibc's functions (docs/elementwise.md, "Activations").
    case math::Fn::Sigmoid: return 1.0f / (1.0f + ::expf(-x));
    case math::Fn::Silu: return x / (1.0f + ::expf(-x));
    case math::Fn::Softplus: return x > 20.0f ? x : ::log1pf(::expf(x));  // PyTorch's threshold 20
    case math::Fn::GeluErf: return 0.5f * x * (1.0f + ::erff(x * 0.70710678f));
    case math::Fn::GeluTanh: return 0.5f * x * (1.0f + ::tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
    case math::Fn::Sin: return ::sinf(x);
    case math::Fn::Cos: return ::cosf(x);
    case math::Fn::Tan: return ::tanf(x);
    case math::Fn::Sinpi:
    case math::Fn::Cospi: break;  // not in this glibc (2.41 adds sinpif): not registered
    case math::Fn::Div:
    case math::Fn::Pow:
    case math::Fn::Atan2:
    case math::Fn::Fmax:
    case math::Fn::Fmin: break;  // binary: libm2
  }
  return x;
}

/// The binary subjects: glibc's powf, atan2f (atan2f(y = a, x = b)), fmaxf, fminf, and the host's float division (divss).
float libm2(math::Fn f, float a, float b) {
  switch (f) {
    case math::Fn::Pow: return ::powf(a, b);
    case math::Fn::Atan2: return ::atan2f(a, b);
    case math::Fn::Fmax: return ::fmaxf(a, b);
    case math::Fn::Fmin: return ::fminf(a, b);
    default: return a / b;
  }
}

class CpuEltwise final : public ElementwiseKernel {
 public:
  explicit CpuEltwise(CpuSpec s) : s_(std::move(s)) {}
  const std::string& name() const override { return s_.name; }
  std::string description() const override { return s_.note; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return s_.mutant; }
  const EltwiseTraits& eltwise_traits() const override { return s_.t; }

  void run(const EltwiseOperands& o) override {
    const Format& in = *s_.t.in;
    const Format& out = *s_.t.out;
    const math::CodeFormat& oc = *code_format(out);
    const int ib = container_bytes(in), ob = container_bytes(out);
    const Rounder rn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
    if (math::arity(s_.t.fn) == 2) return run2(o);
    for (std::int64_t i = 0; i < o.count; ++i) {
      const std::uint64_t xc = from_container(in, load_code(o.x, i, ib));
      float x = static_cast<float>(to_double(in, xc));  // exact: f16/bf16/f32 values are floats
      if (s_.how == How::Wrong3Flushed && std::fpclassify(x) == FP_SUBNORMAL) x = std::copysign(0.0f, x);  // DAZ
      std::uint32_t y = 0;
      if (s_.how == How::Mpfr) {
        y = static_cast<std::uint32_t>(math::evaluate_mpfr(s_.t.fn, x, out, rn).code);
      } else {
        const float v = s_.how == How::Naive     ? ::logf(1.0f + ::expf(x))
                        : s_.how == How::ExpfOps ? math::expf_ops(x)
                                                 : libm(s_.t.fn, x);
        y = math::round_rn_code(static_cast<double>(v), oc);  // f32: the float itself; f16/bf16: rounded once more
        if ((s_.how == How::Wrong3 || s_.how == How::Wrong3Flushed) && x >= 1.0f && x < 2.0f) y += 3;  // e^x in [e, e^2): 3 codes up stays finite
        if (s_.how == How::Wrong3Flushed && (y & 0x7fffffffu) < 0x00800000u) y &= 0x80000000u;  // FTZ (f32 out)
      }
      store_code(o.y, i, ob, to_container(out, y));
    }
  }

 private:
  /// z = f(x1, x2), f32 codes (eltwise_traits_problem holds binary functions to f32).
  void run2(const EltwiseOperands& o) const {
    if (!o.x2) throw InputError(s_.name + ": a binary function needs its second operand (EltwiseOperands::x2)");
    for (std::int64_t i = 0; i < o.count; ++i) {
      const float a = std::bit_cast<float>(static_cast<std::uint32_t>(load_code(o.x, i, 4)));
      const float b = std::bit_cast<float>(static_cast<std::uint32_t>(load_code(o.x2, i, 4)));
      std::uint32_t z = 0;
      if (s_.how == How::Mpfr) z = math::binary_ref_f32(s_.t.fn, a, b);
      else if (s_.how == How::NaivePow) z = std::bit_cast<std::uint32_t>(::expf(b * ::logf(a)));
      else z = std::bit_cast<std::uint32_t>(libm2(s_.t.fn, a, b));
      store_code(o.y, i, 4, z);
    }
  }

  CpuSpec s_;
};

EltwiseTraits traits(math::Fn f, const Format& in, const Format& out, math::Claim c, std::string source) {
  EltwiseTraits t;
  t.fn = f;
  t.in = &in;
  t.out = &out;
  t.claim = c;
  t.claim_source = std::move(source);
  return t;
}

math::Claim ulps(double n) { return {math::ClaimKind::Ulp, n}; }
/// glibc's float function f and its f16/bf16 variants.
void add_glibc(std::vector<CpuSpec>& specs, math::Fn f, double ulps_f32 = 1) {
  const std::string fn(math::to_string(f));
  const std::string glibc = math::is_log(f)   ? "glibc: 0.82 ulp documented for logf, 0.75 for log2f; the manual's <= 1 ulp"
                            : math::is_exp(f) ? "glibc: 0.502 ulp documented for expf/exp2f; the manual's <= 1 ulp"
                                              : "glibc manual, known maximum errors (x86_64)";
  // log10f is older code (not in the 2.28 rewrite): its claim is 2 ulp; with 1 the check refuses it (measured: 2 ulp at
  // x = 0x3f1311bf, glibc 2.36; docs/elementwise.md).
  const double n = f == math::Fn::Log10 ? 2 : ulps_f32;
  specs.push_back({"glibc_" + fn + "f", "glibc's " + fn + "f (this build's libm)",
                   traits(f, f32, f32, ulps(n), f == math::Fn::Log10 ? "glibc: log10f held to 2 ulp (1 is refused: docs/elementwise.md)" : glibc)});
  // f16 and bf16 through the float function and one more rounding: within 1 ulp of f16/bf16 when the float result
  // is within 1 ulp of f32 (a double rounding moves the result at most to the neighbouring code).
  specs.push_back({"glibc_" + fn + "f_f16", "glibc's " + fn + "f on f16 inputs, rounded to f16 (compute in float, round once)",
                   traits(f, f16, f16, ulps(1), "float function then one rounding: <= 1 ulp")});
  specs.push_back({"glibc_" + fn + "f_bf16", "glibc's " + fn + "f on bf16 inputs, rounded to bf16",
                   traits(f, bf16, bf16, ulps(1), "float function then one rounding: <= 1 ulp")});
}

/// The binary subjects (docs/elementwise.md, "Binary functions"), f32 x f32 -> f32, checked on sampled pairs.
void add_binary(std::vector<CpuSpec>& specs) {
  const math::Claim cr{math::ClaimKind::CorrectlyRounded};
  // x / y in float: the host's divss, correctly rounded by IEEE 754 (5.4.1) under the default round-to-nearest-even.
  specs.push_back({"host_div_f32", "x / y in float on the host (divss)", traits(math::Fn::Div, f32, f32, cr, "IEEE 754: division correctly rounded")});
  // powf (glibc >= 2.28, Szabolcs Nagy's code): documented at 0.82 ulp of the exact value (sysdeps/ieee754/flt-32/e_powf.c),
  // so within 1 code of the correctly rounded result.
  specs.push_back({"glibc_powf", "glibc's powf (this build's libm)", traits(math::Fn::Pow, f32, f32, ulps(1), "glibc: 0.82 ulp documented for powf (e_powf.c); <= 1 ulp")});
  // atan2f (older code, outside the 2.28 rewrite): held to the glibc manual's 1 ulp for x86_64 (docs/elementwise.md: measured).
  specs.push_back({"glibc_atan2f", "glibc's atan2f(x1, x2) = atan2(y = x1, x = x2)", traits(math::Fn::Atan2, f32, f32, ulps(1), "glibc manual, known maximum errors (x86_64): 1 ulp")});
  // fmaxf, fminf: exact (an operand), a NaN operand yields the other one (C Annex F.10.9.2, IEEE 754-2008 maxNum/minNum).
  specs.push_back({"glibc_fmaxf", "glibc's fmaxf", traits(math::Fn::Fmax, f32, f32, cr, "C Annex F / IEEE 754-2008 maxNum: exact, NaN loses")});
  specs.push_back({"glibc_fminf", "glibc's fminf", traits(math::Fn::Fmin, f32, f32, cr, "C Annex F / IEEE 754-2008 minNum: exact, NaN loses")});
  // Fixtures (mutants): pow as expf(y logf(x)) claiming glibc's 1 ulp (logf's relative error is magnified |y log x| times:
  // refused where the result is large or tiny), and pow correctly rounded by MPFR alone (claims 0 ulp: must pass).
  specs.push_back({"fixture_powf_naive", "expf(y * logf(x)) in float (claims 1 ulp: must be refused)",
                   traits(math::Fn::Pow, f32, f32, ulps(1), "fixture"), How::NaivePow, true});
  for (math::Fn f : math::kBinaryFns)
    specs.push_back({"fixture_" + std::string(math::to_string(f)) + "_mpfr_f32", std::string(math::to_string(f)) + " correctly rounded by MPFR (claims 0 ulp: must pass)",
                     traits(f, f32, f32, cr, "fixture"), How::Mpfr, true});
}

}  // namespace

void register_eltwise_cpu_kernels() {
  // glibc: expf, exp2f (glibc >= 2.28, Szabolcs Nagy's code) are documented at 0.502 ulp of the exact value under
  // round-to-nearest (sysdeps/ieee754/flt-32/e_expf.c, e_exp2f.c; exp10f too since glibc 2.32: e_exp10f.c), so at
  // most 1 ulp from the correctly rounded result. The check says whether the installed libm keeps it.
  // logf and log2f (glibc >= 2.28) are documented at 0.82 and 0.75 ulp (e_logf.c, e_log2f.c): within 1 code too.
  std::vector<CpuSpec> specs;
  for (math::Fn f : math::kExpFns) add_glibc(specs, f);
  for (math::Fn f : math::kLogFns) add_glibc(specs, f);
  // expm1f, log1pf (older code, outside the 2.28 rewrite): the glibc manual's table of known maximum errors lists 1 ulp on
  // x86_64 for both; the check holds them to it.
  for (math::Fn f : math::kNearZeroFns) add_glibc(specs, f);
  // tanhf: the glibc manual's table of known maximum errors lists 2 ulp on x86_64.
  add_glibc(specs, math::Fn::Tanh, 2);
  // sinhf, coshf: held to 2 ulp (the glibc manual's table of known maximum errors lists at most 2 ulp for both on x86_64,
  // as recalled: docs/elementwise.md gives the measured figure).
  add_glibc(specs, math::Fn::Sinh, 2);
  add_glibc(specs, math::Fn::Cosh, 2);
  // cbrtf, erff, erfcf (older code, outside the 2.28 rewrite): held to the glibc manual's table of known maximum errors on
  // x86_64 as recalled (cbrtf 1 ulp, erff 1, erfcf 3: docs/elementwise.md gives the measured figures). Their reference has
  // no fast path yet: MPFR decides every input (oracle/math/fn.hpp, kMpfrOnlyFns).
  add_glibc(specs, math::Fn::Cbrt, 1);
  add_glibc(specs, math::Fn::Erf, 1);
  add_glibc(specs, math::Fn::Erfc, 3);
  // sinf, cosf (glibc >= 2.28, Szabolcs Nagy's code: documented below 1 ulp of the exact value) and tanf: held to 1 ulp, as
  // the glibc manual's table of known maximum errors on x86_64 lists them (as recalled); measured: docs/elementwise.md.
  add_glibc(specs, math::Fn::Sin, 1);
  add_glibc(specs, math::Fn::Cos, 1);
  add_glibc(specs, math::Fn::Tan, 1);
  // The activations in float with glibc's expf (1 ulp), log1pf (1), erff (1), tanhf (2): bounds derived in
  // docs/elementwise.md, "Activations" (ulps <= 2^25 rho + 1 for a relative error rho before the last rounding).
  auto act = [&](math::Fn f, math::Claim c, const char* formula, const char* why) {
    specs.push_back({"glibc_" + std::string(math::to_string(f)) + "_f32", std::string("float ") + formula + " with glibc's libm",
                     traits(f, f32, f32, c, why)});
  };
  math::Claim nine{math::ClaimKind::Ulp, 9}, eight{math::ClaimKind::Ulp, 8};
  nine.lo = eight.lo = -87.0;  // results normal, expf(-x) finite
  math::Claim gelu{math::ClaimKind::Absolute}, gelu_t{math::ClaimKind::Absolute};
  gelu.bound = 0x1p-20, gelu_t.bound = 0x1p-19;
  gelu.lo = gelu_t.lo = -4.0;
  gelu.hi = gelu_t.hi = 4.0;
  act(math::Fn::Sigmoid, nine, "1 / (1 + expf(-x))", "derived: 9 ulp on [-87, inf) (docs/elementwise.md)");
  act(math::Fn::Silu, nine, "x / (1 + expf(-x))", "derived: 9 ulp on [-87, inf) (docs/elementwise.md)");
  act(math::Fn::Softplus, eight, "x > 20 ? x : log1pf(expf(x))", "derived: 8 ulp on [-87, inf) (docs/elementwise.md)");
  act(math::Fn::GeluErf, gelu, "0.5 x (1 + erff(x 0.70710678))", "derived: abs 2^-20 on [-4, 4] (docs/elementwise.md)");
  act(math::Fn::GeluTanh, gelu_t, "0.5 x (1 + tanhf(0.7978845608 (x + 0.044715 x^3)))", "derived: abs 2^-19 on [-4, 4] (docs/elementwise.md)");
  // The textbook softplus log(1 + e^x) in float, held to the same 8 ulp: refused where 1 + e^x rounds to 1 (a mutant).
  specs.push_back({"fixture_softplus_naive", "float logf(1 + expf(x)) (claims 8 ulp: refused below about -17 and above 88.72)",
                   traits(math::Fn::Softplus, f32, f32, eight, "fixture"), How::Naive, true});
  // sqrtf: IEEE 754 requires the square root correctly rounded (glibc: the hardware's sqrtss). The f16 and bf16 variants
  // (float sqrt, then one more rounding) are correctly rounded too: double rounding is innocuous for sqrt when the wider
  // precision p' >= 2p + 2 (Figueroa, "When is double rounding innocuous?", SIGNUM 1995): 24 >= 2 * 11 + 2 and
  // 24 >= 2 * 8 + 2, and neither format's results of its own inputs are subnormal or overflow.
  specs.push_back({"glibc_sqrtf", "glibc's sqrtf (this build's libm)",
                   traits(math::Fn::Sqrt, f32, f32, {math::ClaimKind::CorrectlyRounded}, "IEEE 754: sqrt correctly rounded")});
  for (const Format* h : {&f16, &bf16})
    specs.push_back({"glibc_sqrtf_" + std::string(h->tag), "glibc's sqrtf on " + std::string(h->tag) + " inputs, rounded once more",
                     traits(math::Fn::Sqrt, *h, *h, {math::ClaimKind::CorrectlyRounded}, "sqrtf then one rounding: innocuous (24 >= 2p + 2)")});
  // fpcert's own expf as binary32 operations (oracle/math/expf_ops.hpp): the exp a softmax kernel declares exactly for the
  // bitwise tier; its claim, 1 ulp on every input, held here on the host (cuda_fpcert_expf_ops on the GPU, every input).
  specs.push_back({"fpcert_expf_ops", "fpcert's expf_ops: Cody-Waite reduction, degree-7 Taylor by fmaf, two-step scaling",
                   traits(math::Fn::Exp, f32, f32, ulps(math::kExpfOpsUlps), "oracle/math/expf_ops.hpp: 0.94 ulp measured, all 2^32 inputs"),
                   How::ExpfOps});
  // Fixtures (mutants: not listed unless asked): one that breaks its claim on a known interval, one that keeps the
  // strictest claim.
  specs.push_back({"fixture_expf_3ulp", "glibc's expf plus 3 ulp on [1, 2) (claims 1 ulp: must be refused there)",
                   traits(math::Fn::Exp, f32, f32, ulps(1), "fixture"), How::Wrong3, true});
  // The same built with DAZ and FTZ, declaring neither (docs/diagnose.md: diagnosed as fixture_expf_3ulp+daz+ftz, a pair
  // of changes on another kernel, as the H200's -use_fast_math expf is __expf with both).
  specs.push_back({"fixture_expf_3ulp_fastmath", "fixture_expf_3ulp with subnormal inputs read as 0 and subnormal results flushed",
                   traits(math::Fn::Exp, f32, f32, ulps(1), "fixture"), How::Wrong3Flushed, true});
  for (const Format* f : {&f32, &f16, &bf16})
    specs.push_back({std::string("fixture_exp_mpfr_") + std::string(f->tag),
                     "exp correctly rounded by MPFR alone (claims 0 ulp: must pass)",
                     traits(math::Fn::Exp, *f, *f, {math::ClaimKind::CorrectlyRounded}, "fixture"), How::Mpfr, true});
  add_binary(specs);
  for (const CpuSpec& s : specs)
    register_kernel(s.name, Backend::Cpu, s.mutant, [s] { return std::make_unique<CpuEltwise>(s); }, Operation::Elementwise);
}

}  // namespace fpcert
