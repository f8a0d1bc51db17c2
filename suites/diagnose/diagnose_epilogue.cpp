// suites/diagnose/diagnose_epilogue.cpp — see diagnose_epilogue.hpp; the hypotheses, their envelopes and the ranking are
// derived in docs/diagnose.md, "Epilogues".
#include "suites/diagnose/diagnose_epilogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "base/error.hpp"
#include "base/fpenv.hpp"
#include "generators/generate.hpp"
#include "kernels/tc/cards.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/refvalue.hpp"
#include "oracle/round.hpp"
#include "oracle/ulp.hpp"
#include "suites/diagnose/diagnose_alpha_beta.hpp"
#include "suites/diagnose/diagnose_run.hpp"
#include "suites/diagnose/hypotheses.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/ops/gemm/batch.hpp"
#include "suites/ops/gemm/epilogue.hpp"
#include "suites/ops/gemm/epilogue_exact.hpp"
#include "suites/ops/gemm/epilogue_run.hpp"
#include "suites/ops/gemm/runner.hpp"

namespace fpcert {
namespace {

/// What computes the activation: the declared forms of kernels/kernel.hpp (as kernels/gemm/cpu/epilogue_models.cpp
/// writes them) and the variants a library may compute instead.
enum class Form : std::uint8_t {
  Identity,
  Relu,
  GeluErf,      ///< 0.5 (z (1 + erf(z RN(1/sqrt 2))))
  GeluTanh,     ///< 0.5 (z (1 + tanh(RN(sqrt(2/pi)) (z + RN(0.044715) (z (z z))))))
  GeluSigmoid,  ///< z (1 / (1 + exp(-RN(1.702) z))): GELU's sigmoid approximation x sigma(1.702 x)
  GeluTanhExp,  ///< the tanh form with tanh(v) = 1 - 2 / (exp(2 v) + 1)
  GeluTanh11,   ///< the tanh form with tanh rounded to 11 significant bits (tanh.approx.f32's error, ~2^-11)
  GeluTaylor,   ///< CUTLASS's GELU_taylor: 0.5 z (1 + fast_tanh(k0 z (1 + k1 z z))), fast_tanh = tanh.approx (11 bits)
  Silu,         ///< z / (1 + exp(-z))
  SiluSigmoid,  ///< z (1 / (1 + exp(-z)))
  SiluFastExp,  ///< z / (1 + exp2(RN(-z RN(log2 e)))): __expf's argument reduction
};

/// The bias: as declared, after the activation, on the other axis (a bias per column read per row: bias[i mod n];
/// per row read per column: bias[j mod m]), or rounded into the output format before it is added.
enum class BiasMode : std::uint8_t { Declared, AfterAct, OtherAxis, RoundedToOut };

struct EpiHyp {
  std::string id = "declared", what = "the declared epilogue";
  AbForm ab = AbForm::Declared;   ///< with ab_from_t: how Z0 is formed from the accumulator t (EpilogueMatrix::t)
  bool ab_from_t = false;         ///< Z0 formed by `ab` from t (the alpha/beta hypotheses); else the matrix's acc
  int changes = 0;
  Form form = Form::Identity;
  bool round_before_act = false;  ///< Z rounded into the output format before the activation
  bool round_before_bias = false; ///< Z0 = alpha' acc + beta C rounded into the output format before the bias is added
  bool act_in_out = false;        ///< every operation of the activation rounded into the output format
  BiasMode bias = BiasMode::Declared;
  int scale_times = 1;            ///< scale_d applied this many times (0, 1, 2)
  bool acc_rn = false;            ///< start from RN_f32(Z0) instead of the declared order's value
};

constexpr float kRsqrt2 = 0.70710678118654752440f;       // RN_f32(1/sqrt 2)
constexpr float kSqrt2OverPi = 0.79788456080286535588f;  // RN_f32(sqrt(2/pi))
constexpr float kGeluCubic = 0.044715f;                  // RN_f32(0.044715)
constexpr float kSigmoidGelu = 1.702f;                   // RN_f32(1.702)
constexpr float kLog2e = 1.44269504088896340736f;        // RN_f32(log2 e)

Form declared_form(Activation a) {
  switch (a) {
    case Activation::None: return Form::Identity;
    case Activation::Relu: return Form::Relu;
    case Activation::GeluErf: return Form::GeluErf;
    case Activation::GeluTanh: return Form::GeluTanh;
    case Activation::Silu: return Form::Silu;
  }
  return Form::Identity;
}

std::string_view form_id(Form f) {
  switch (f) {
    case Form::Identity: return "none";
    case Form::Relu: return "relu";
    case Form::GeluErf: return "gelu_erf";
    case Form::GeluTanh: return "gelu_tanh";
    case Form::GeluSigmoid: return "gelu_sigmoid";
    case Form::GeluTanhExp: return "gelu_tanh_exp";
    case Form::GeluTanh11: return "gelu_tanh11";
    case Form::GeluTaylor: return "gelu_taylor";
    case Form::Silu: return "silu";
    case Form::SiluSigmoid: return "silu_sigmoid";
    case Form::SiluFastExp: return "silu_fast_exp";
  }
  return "?";
}

std::string_view form_words(Form f) {
  switch (f) {
    case Form::Identity: return "no activation";
    case Form::Relu: return "ReLU";
    case Form::GeluErf: return "GELU's erf form z (1 + erf(z / sqrt 2)) / 2";
    case Form::GeluTanh: return "GELU's tanh form z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) / 2";
    case Form::GeluSigmoid: return "GELU's sigmoid form z sigmoid(1.702 z)";
    case Form::GeluTanhExp: return "GELU's tanh form with tanh(v) = 1 - 2 / (exp(2v) + 1) in fp32";
    case Form::GeluTanh11: return "GELU's tanh form with tanh rounded to 11 bits (tanh.approx.f32-like)";
    case Form::GeluTaylor: return "CUTLASS's GELU_taylor 0.5 z (1 + tanh(k0 z (1 + k1 z z))), tanh to 11 bits (fast_tanh: tanh.approx.f32)";
    case Form::Silu: return "SiLU z / (1 + exp(-z))";
    case Form::SiluSigmoid: return "SiLU as z sigmoid(z) = z (1 / (1 + exp(-z)))";
    case Form::SiluFastExp: return "SiLU with a coarse exp (__expf-like: exp2(RN(-z log2 e)))";
  }
  return "?";
}

/// sup |act'|, rounded upward: how far an error of z moves the activation (suites/ops/gemm/epilogue.hpp's constants;
/// the sigmoid form x sigma(a x) has derivative silu'(a x), so SiLU's constant).
double form_lipschitz(Form f) {
  switch (f) {
    case Form::Identity:
    case Form::Relu: return 1;
    case Form::GeluErf: return activation_lipschitz(Activation::GeluErf);
    case Form::GeluTanh:
    case Form::GeluTanhExp:
    case Form::GeluTanh11:
    case Form::GeluTaylor: return activation_lipschitz(Activation::GeluTanh);
    case Form::GeluSigmoid:
    case Form::Silu:
    case Form::SiluSigmoid:
    case Form::SiluFastExp: return activation_lipschitz(Activation::Silu);
  }
  return 1;
}

/// Arithmetic in one format (fp32, or the output format for act_in_out): every operation's exact result (a double
/// holds it, or rounds it innocuously: 53 >= 2 p + 2 for p <= 24) rounded to nearest into the format; elementary functions
/// are fp32's (glibc erff, tanhf, expf, exp2f) on the value, their result rounded into the format.
struct Arith {
  const Format* f = &f32;
  double r(double v) const { return f == &f32 || *f == f32 ? static_cast<double>(static_cast<float>(v)) : quantize(*f, v); }
  double k(float c) const { return r(c); }
};

double tanh_part(Form form, const Arith& A, double v) {
  switch (form) {
    case Form::GeluTanhExp: {
      const double e = A.r(std::exp(static_cast<float>(A.r(2 * v))));
      return A.r(1 - A.r(2 / A.r(e + 1)));
    }
    case Form::GeluTanh11:
    case Form::GeluTaylor: return A.r(quantize(tf32, std::tanh(static_cast<float>(v))));
    default: return A.r(std::tanh(static_cast<float>(v)));
  }
}

double activate(Form form, const Arith& A, double z) {
  switch (form) {
    case Form::Identity: return z;
    case Form::Relu: return std::isnan(z) ? z : (z > 0 ? z : 0.0);
    case Form::GeluErf: return A.r(0.5 * A.r(z * A.r(1 + A.r(std::erf(static_cast<float>(A.r(z * A.k(kRsqrt2))))))));
    case Form::GeluTanh:
    case Form::GeluTanhExp:
    case Form::GeluTanh11: {
      const double c = A.r(A.k(kGeluCubic) * A.r(z * A.r(z * z)));
      const double v = A.r(A.k(kSqrt2OverPi) * A.r(z + c));
      return A.r(0.5 * A.r(z * A.r(1 + tanh_part(form, A, v))));
    }
    case Form::GeluTaylor: {  // cutlass/epilogue/thread/activation.h, GELU_taylor<float>, left to right as written
      const double v = A.r(A.r(A.k(kSqrt2OverPi) * z) * A.r(1 + A.r(A.r(A.k(kGeluCubic) * z) * z)));
      return A.r(A.r(0.5 * z) * A.r(1 + tanh_part(form, A, v)));
    }
    case Form::GeluSigmoid: {
      const double e = A.r(std::exp(static_cast<float>(-A.r(A.k(kSigmoidGelu) * z))));
      return A.r(z * A.r(1 / A.r(1 + e)));
    }
    case Form::Silu: return A.r(z / A.r(1 + A.r(std::exp(static_cast<float>(-z)))));
    case Form::SiluSigmoid: return A.r(z * A.r(1 / A.r(1 + A.r(std::exp(static_cast<float>(-z))))));
    case Form::SiluFastExp: {
      const double e = A.r(std::exp2(static_cast<float>(A.r(-z * A.k(kLog2e)))));
      return A.r(z / A.r(1 + e));
    }
  }
  return z;
}

/// The forms a case's activation may have been computed with instead (its own first).
std::vector<Form> forms_for(Activation a) {
  switch (a) {
    case Activation::GeluErf:
    case Activation::GeluTanh: {
      std::vector<Form> r = {declared_form(a)};
      for (Form f : {Form::GeluErf, Form::GeluTanh, Form::GeluSigmoid, Form::GeluTanhExp, Form::GeluTanh11, Form::GeluTaylor})
        if (f != r.front()) r.push_back(f);
      return r;
    }
    case Activation::Silu: return {Form::Silu, Form::SiluSigmoid, Form::SiluFastExp};
    default: return {declared_form(a)};
  }
}

/// Every hypothesis for this case: each change alone, and each activation form with each of the two format changes
/// (Z rounded to the output before the activation, the activation in the output format).
std::vector<EpiHyp> hypotheses_for(const KernelTraits& t, const EpilogueDiagnoseCase& c) {
  const EpilogueCase& ec = c.ec;
  const Format& out = *t.out;
  const bool out_narrower = !(out == f32);
  const bool smooth = ec.activation == Activation::GeluErf || ec.activation == Activation::GeluTanh || ec.activation == Activation::Silu;
  EpiHyp decl;
  decl.form = declared_form(ec.activation);
  decl.round_before_act = t.epilogue.round_before_act;
  decl.round_before_bias = t.epilogue.round_before_bias && c.with_c && !c.bias.empty();
  // alpha/beta with an unknown order: the declared Z0 formed from t = RN_f32(A'B') by the declared form, as every
  // alpha/beta hypothesis is (not RN_f32(Z0), which is the form ab=f32_once); a declared order's acc is that form already.
  decl.ab_from_t = c.alpha_beta && !c.order_known;
  std::vector<EpiHyp> hs = {decl};
  const auto add = [&](EpiHyp h, std::string id, std::string what) {
    h.id = std::move(id);
    h.what = std::move(what);
    hs.push_back(std::move(h));
  };
  const std::string of = std::string(out.tag);
  for (const Form f : forms_for(ec.activation)) {
    const bool changed = f != decl.form;
    EpiHyp h = decl;
    h.form = f;
    h.changes = changed ? 1 : 0;
    const std::string fid = fmt::format("act={}", form_id(f));
    if (changed) add(h, fid, std::string(form_words(f)));
    if (out_narrower && ec.activation != Activation::None) {
      EpiHyp r = h;
      r.round_before_act = !decl.round_before_act;
      r.changes = h.changes + 1;
      const std::string rid = decl.round_before_act ? "z_not_rounded_to_out" : "z_rounded_to_out";
      const std::string rw = decl.round_before_act ? fmt::format("Z not rounded into {} before the activation", of)
                                                   : fmt::format("Z rounded into {} before the activation", of);
      add(r, changed ? fid + "+" + rid : rid, changed ? fmt::format("{}, {}", form_words(f), rw) : rw);
    }
    if (out_narrower && smooth) {
      EpiHyp a = h;
      a.act_in_out = true;
      a.changes = h.changes + 1;
      const std::string aw = fmt::format("the activation computed in {} (each operation rounded)", of);
      add(a, changed ? fid + "+act_in_out" : "act_in_out", changed ? fmt::format("{}, {}", form_words(f), aw) : aw);
      // both format changes: Z rounded into the output format, then the activation in it (an unfused bf16 linear, then
      // a bf16 activation)
      a.round_before_act = !decl.round_before_act;
      a.changes = h.changes + 2;
      const std::string rid = decl.round_before_act ? "z_not_rounded_to_out" : "z_rounded_to_out";
      add(a, (changed ? fid + "+" : "") + rid + "+act_in_out",
          fmt::format("{}Z {}rounded into {} before the activation, the activation computed in {}", changed ? std::string(form_words(f)) + ", " : "",
                      decl.round_before_act ? "not " : "", of, of));
    }
  }
  if (ec.bias != BiasKind::None) {
    EpiHyp h = decl;
    h.changes = 1;
    if (ec.activation != Activation::None) {
      h.bias = BiasMode::AfterAct;
      add(h, "bias_after_act", "the bias added after the activation");
    }
    h.bias = BiasMode::OtherAxis;
    add(h, ec.bias == BiasKind::PerColumn ? "bias_per_row" : "bias_per_column",
        ec.bias == BiasKind::PerColumn ? "the bias per column applied per row (bias[i mod n])" : "the bias per row applied per column (bias[j mod m])");
    if (c.with_c && out_narrower) {  // cuBLASLt's bias epilogue with C (docs/epilogue.md): alpha' acc + beta C rounded first
      EpiHyp r = decl;
      r.changes = 1;
      r.round_before_bias = !decl.round_before_bias;
      add(r, decl.round_before_bias ? "ab_not_rounded_before_bias" : "ab_rounded_before_bias",
          fmt::format("alpha' acc + beta C {}rounded into {} before the bias is added", decl.round_before_bias ? "not " : "", of));
    }
    const bool bias_rounds = std::any_of(c.bias.begin(), c.bias.end(), [&](double b) { return quantize(out, b) != b; });
    if (bias_rounds) {
      h.bias = BiasMode::RoundedToOut;
      add(h, "bias_rounded_to_out", fmt::format("the bias rounded into {} before it is added", of));
    }
  }
  if (c.alpha_beta)
    for (const AbHypothesis& f : alpha_beta_forms(c, out)) {
      EpiHyp h = decl;
      h.ab = f.form;
      h.ab_from_t = true;
      h.changes = 1;
      add(h, f.id, f.what);
    }
  if (c.scale_d != 1) {
    EpiHyp h = decl;
    h.changes = 1;
    h.scale_times = 2;
    add(h, "scale_d_twice", "scale_d applied twice");
    h.scale_times = 0;
    add(h, "scale_d_dropped", "scale_d not applied");
  }
  if (c.order_known) {
    EpiHyp h = decl;
    h.changes = 1;
    h.acc_rn = true;
    add(h, "acc=rn_f32", "the accumulator's value RN_f32(Z) (an fp32 accumulation in another order)");
  }
  return hs;
}

/// One element under hypothesis h: D's code, the value before the output rounding, and the envelope's allowance of
/// |D - D_h| when the kernel's accumulator lies within x0 of the exact Z0 (docs/diagnose.md, "Epilogues").
struct ElementEval {
  std::uint64_t code = 0;
  double pre = 0, allowance = 0;
};

ElementEval evaluate(const EpiHyp& h, const KernelTraits& t, const EpilogueDiagnoseCase& c, const EpilogueMatrix& mx, std::int64_t i,
                     std::int64_t j) {
  const Format& out = *t.out;
  const auto x = static_cast<std::size_t>(i * mx.n + j);
  const Arith a32{&f32};
  const Arith arith{h.act_in_out ? &out : &f32};
  const double u32 = f32.unit_roundoff(), eta32 = f32.min_subnormal();
  const double u_out = out.unit_roundoff(), eta_out = out.min_subnormal();
  // The start: the alpha/beta form from t (its own spread), or the matrix's acc (the declared Z0, or RN_f32(Z0)).
  std::optional<AbEval> ab;
  if (h.ab_from_t)
    ab = ab_evaluate(h.ab, c, static_cast<double>(mx.t[x]), mx.c.empty() ? 0.0 : mx.c[x],
                     mx.e_ab[x] + std::fabs((static_cast<double>(mx.t[x]) - mx.ab_hi[x]) - mx.ab_lo[x]), out);
  const double z0 = ab ? ab->z0 : h.acc_rn ? quantize(f32, mx.z_hi[x]) : static_cast<double>(mx.acc[x]);
  double b = 0;
  if (!c.bias.empty()) {
    const bool per_row = c.ec.bias == BiasKind::PerRow;
    const auto len = static_cast<std::int64_t>(c.bias.size());
    std::int64_t at = per_row ? i : j;
    if (h.bias == BiasMode::OtherAxis) at = (per_row ? j : i) % len;
    b = c.bias[static_cast<std::size_t>(at)];
    if (h.bias == BiasMode::RoundedToOut) b = quantize(out, b);
  }
  const bool bias_first = !c.bias.empty() && h.bias != BiasMode::AfterAct;
  // round_before_bias: Z0 rounded into the output format before the bias; values x0 apart round at most an output
  // ulp further apart (2 u_out |Z0| + eta_out on both sides).
  const double z0r = h.round_before_bias && bias_first ? quantize(out, z0) : z0;
  double z = bias_first ? a32.r(z0r + b) : z0r;
  // |z_kernel - z| before the activation: the accumulation's envelope of Z0, where the hypothesis's start lies from
  // Z0, and the bias's rounding on both sides (a rounding is monotone: RN(p + b) and RN(q + b) differ by <= |p - q| + ulp).
  // The declared form keeps the epilogue bound's x0 (|Z0 of the kernel - exact Z0| in any order) and its distance from Z0.
  const bool own_spread = ab && h.ab != AbForm::Declared;
  double dz = (own_spread ? ab->spread : mx.x0[x] + std::fabs((z0 - mx.z_hi[x]) - mx.z_lo[x])) + (bias_first ? 2 * u32 * std::fabs(z) + eta32 : 0.0) +
              (h.round_before_bias && bias_first ? 2 * u_out * std::fabs(z0) + eta_out : 0.0);
  if (h.round_before_act) {
    z = quantize(out, z);
    dz += 2 * u_out * std::fabs(z) + eta_out;
  }
  double y = h.form == Form::Identity ? z : activate(h.form, arith, z);
  // The hypothesis's own arithmetic at two arguments dz apart: L dz, and its roundings on each side — the steps after
  // the elementary function (1 + t, z s, the halving: about 4 u |y|) and those before it (the argument's relative error
  // of about 5 u moves t by at most 0.45 of it, y by |z| / 2 times that: about 2 u |z|), so 8 u |y| + 4 u |z| for the two;
  // tanh to 11 bits moves y by 2^-11 |z| / 2 each side; the coarse exp's argument rounding moves exp by |z log2 e| u ln 2
  // relative, y by about |z| times that.
  const double u_act = h.act_in_out ? u_out : u32;
  double noise = h.form == Form::Identity || h.form == Form::Relu ? 0.0 : u_act * (8 * std::fabs(y) + 4 * std::fabs(z)) + 4 * eta32;
  if (h.form == Form::GeluTanh11 || h.form == Form::GeluTaylor) noise += 0x1p-11 * std::fabs(z);
  if (h.form == Form::SiluFastExp) noise += 4 * u32 * std::fabs(z) * (1 + std::fabs(z));
  if (h.act_in_out) noise += 4 * out.min_subnormal();
  double spread = form_lipschitz(h.form) * dz + noise;
  if (!c.bias.empty() && h.bias == BiasMode::AfterAct) {
    y = a32.r(y + b);
    spread += 2 * u32 * std::fabs(y) + eta32;
  }
  const double sd = c.scale_d;
  for (int s = 0; s < h.scale_times && sd != 1; ++s) {
    y = a32.r(sd * y);
    spread = std::fabs(sd) * spread + 2 * u32 * std::fabs(y) + eta32;
  }
  ElementEval e;
  // One rounding of the exact alpha' t + beta c into the output format (nothing else after it: hypotheses_for).
  e.code = ab && h.ab == AbForm::OneRounding ? round_ref(out, ref_from_two_sum(ab->z0, ab->z0_lo), Rounder::nearest(out)).code
                                             : round_double(out, y, Rounder::nearest(out)).code;
  e.pre = y;
  const double got = to_double(out, mx.got[x]);
  // One output rounding on each side: values `spread` apart round at most one output ulp further apart.
  e.allowance = (spread + 2 * u_out * std::max(std::fabs(y), std::isfinite(got) ? std::fabs(got) : 0.0) + eta_out) * (1 + 0x1p-40);
  return e;
}

/// Equal as outputs: the same code, or both NaN.
bool same_output(const Format& f, std::uint64_t x, std::uint64_t y) {
  return x == y || (classify(f, x) == FpClass::NaN && classify(f, y) == FpClass::NaN);
}

struct Evaluated {
  EpiHyp h;
  DiagnosisHypothesis row;
  std::vector<std::uint64_t> out;  ///< every element of every matrix, in order
  double amax = 0, amax_scaled = 0;  ///< max |act(Z)| and max |scale_d act(Z)| under the hypothesis
};

double code_ulps(const Format& f, std::uint64_t x, std::uint64_t y) {
  const FpClass cx = classify(f, x), cy = classify(f, y);
  if (cx == FpClass::Inf || cx == FpClass::NaN || cy == FpClass::Inf || cy == FpClass::NaN) return std::numeric_limits<double>::infinity();
  return std::fabs(static_cast<double>(code_ordinal(f, x) - code_ordinal(f, y)));
}

Evaluated evaluate_all(const EpiHyp& h, const KernelTraits& t, const EpilogueDiagnoseCase& c) {
  const Format& out = *t.out;
  Evaluated e;
  e.h = h;
  DiagnosisHypothesis& r = e.row;
  r.id = h.id;
  r.what = h.what;
  r.changes = h.changes;
  for (const EpilogueMatrix& mx : c.mats)
    for (std::int64_t i = 0; i < mx.m; ++i)
      for (std::int64_t j = 0; j < mx.n; ++j) {
        const std::uint64_t got = mx.got[static_cast<std::size_t>(i * mx.n + j)];
        const ElementEval v = evaluate(h, t, c, mx, i, j);
        e.out.push_back(v.code);
        ++r.elements;
        // amax: max |act(Z)| before scale_d (the hypothesis's y before the scale), and of the scaled result
        EpiHyp unscaled = h;
        unscaled.scale_times = 0;
        const double y = h.scale_times == 0 || c.scale_d == 1 ? v.pre : evaluate(unscaled, t, c, mx, i, j).pre;
        e.amax = std::max(e.amax, std::fabs(y));
        e.amax_scaled = std::max(e.amax_scaled, std::fabs(static_cast<double>(static_cast<float>(c.scale_d * y))));
        if (same_output(out, v.code, got)) {
          ++r.matched;
          continue;
        }
        r.max_ulps = std::max(r.max_ulps, code_ulps(out, v.code, got));
        const double g = to_double(out, got);
        const bool both_nan = std::isnan(g) && std::isnan(v.pre);
        if (!both_nan && !(std::fabs(g - v.pre) <= v.allowance)) ++r.envelope_exceed;  // NaN on one side: outside
      }
  r.envelope_holds = r.envelope_exceed == 0;
  return e;
}

}  // namespace

DiagnosisRecord diagnose_epilogue(const std::string& kernel, const KernelTraits& declared, const EpilogueDiagnoseCase& c,
                                  const DiagnoseOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!(*declared.acc == f32))
    throw InputError(fmt::format("diagnose {}: the epilogue hypotheses emulate an fp32 epilogue; the kernel accumulates in {}", kernel,
                                 declared.acc->tag));
  for (const EpilogueMatrix& mx : c.mats)
    if (mx.z_hi.size() != static_cast<std::size_t>(mx.m * mx.n) || mx.z_lo.size() != mx.z_hi.size() || mx.x0.size() != mx.z_hi.size() ||
        mx.acc.size() != mx.z_hi.size() || mx.got.size() != mx.z_hi.size())
      throw InputError(fmt::format("diagnose {}: an epilogue matrix of {} x {} with {} exact values and {} results", kernel, mx.m, mx.n,
                                   mx.z_hi.size(), mx.got.size()));
  const Format& out = *declared.out;
  DiagnosisRecord rec;
  rec.kernel = kernel;
  rec.declared = describe_traits(declared);  // the epilogue included
  rec.cases = {c.label};
  std::vector<Evaluated> all;
  for (const EpiHyp& h : hypotheses_for(declared, c)) all.push_back(evaluate_all(h, declared, c));
  rec.tried = static_cast<std::int64_t>(all.size());
  // Rank: with a declared order the accumulator is emulated and bits decide first (as the GEMM hypotheses); with an
  // unknown order the kernel's f32 Z differs from the hypotheses' start wherever the order rounds otherwise, so the
  // envelope decides first and the share bit for bit among those that hold.
  const bool envelope_first = !c.order_known;
  std::stable_sort(all.begin(), all.end(), [&](const Evaluated& x, const Evaluated& y) { return diagnosis_better(x.row, y.row, envelope_first); });
  // Look-alikes: equal outputs on every element (NaN as NaN); a look-alike of a better-ranked entry is shown there.
  const auto alike = [&](const Evaluated& x, const Evaluated& y) {
    for (std::size_t e = 0; e < x.out.size(); ++e)
      if (!same_output(out, x.out[e], y.out[e])) return false;
    return true;
  };
  std::vector<std::string> shown;
  for (std::size_t x = 0; x < all.size() && rec.ranked.size() < static_cast<std::size_t>(opt.top); ++x) {
    if (std::find(shown.begin(), shown.end(), all[x].row.id) != shown.end()) continue;
    for (std::size_t y = 0; y < all.size(); ++y)
      if (x != y && alike(all[x], all[y])) all[x].row.same_as.push_back(all[y].row.id);
    rec.ranked.push_back(all[x].row);
    shown.push_back(all[x].row.id);
    for (const std::string& s : all[x].row.same_as) shown.push_back(s);
  }
  const Evaluated& best = all.front();
  const DiagnosisHypothesis& top = rec.ranked.front();
  // The first elements no hypothesis reproduces, with the exact D there (MPFR).
  {
    std::size_t at = 0;
    for (const EpilogueMatrix& mx : c.mats)
      for (std::int64_t x = 0; x < mx.m * mx.n; ++x, ++at) {
        if (rec.unexplained.size() >= static_cast<std::size_t>(opt.unexplained)) break;
        const auto xs = static_cast<std::size_t>(x);
        if (std::any_of(all.begin(), all.end(), [&](const Evaluated& e) { return same_output(out, e.out[at], mx.got[xs]); })) continue;
        const std::int64_t i = x / mx.n, j = x % mx.n;
        double zb = mx.z_hi[xs], zl = mx.z_lo[xs];
        if (!c.bias.empty()) zb += c.bias[static_cast<std::size_t>(c.ec.bias == BiasKind::PerRow ? i : j)];  // Z + bias, to double
        const RefValue d = activation_exact(c.ec.activation, zb, zl, c.scale_d);
        rec.unexplained.push_back({c.label, i, j, to_double(out, mx.got[xs]), d.hi, to_double(out, best.out[at])});
      }
  }
  const bool declared_top = top.id == "declared" || std::find(top.same_as.begin(), top.same_as.end(), "declared") != top.same_as.end();
  const std::string alike_text = top.same_as.empty() ? "" : fmt::format(" (indistinguishable on this case from: {})", fmt::join(top.same_as, ", "));
  const std::string share = diagnosis_share_text(top), env = diagnosis_envelope_text(top);
  if (declared_top && (top.fraction() >= opt.consistent || (!c.order_known && top.envelope_holds))) {
    rec.kind = "declared";
    rec.verdict = fmt::format("consistent with the declared epilogue: bit for bit on {} of elements, {}{}", share, env, alike_text);
  } else if (top.fraction() >= opt.consistent || (!c.order_known && top.envelope_holds)) {
    rec.kind = "consistent";
    rec.verdict = fmt::format("consistent with {} [{}]: bit for bit on {} of elements, {}{}", top.what, top.id, share, env, alike_text);
  } else if (top.envelope_holds) {
    rec.kind = "envelope";
    rec.verdict = fmt::format("no hypothesis bit for bit (best {} of elements); consistent with {} [{}] by its envelope everywhere{}", share,
                              top.what, top.id, alike_text);
  } else {
    rec.kind = "logic_error";
    rec.verdict = fmt::format("no known epilogue arithmetic explains it — a logic error; the closest is {} [{}], bit for bit on {} of elements, {}",
                              top.what, top.id, share, env);
    std::string first;
    for (const DiagnosisElement& e : rec.unexplained)
      first += fmt::format("{}({}, {}) got {:.9g} exact {:.9g}", first.empty() ? "" : "; ", e.i, e.j, e.got, e.ref);
    if (!first.empty()) rec.verdict += "; first unexplained elements: " + first;
  }
  rec.notes.push_back(
      c.order_known
          ? "the hypotheses start from the accumulator in the declared order (the bitwise emulator), then the epilogue in fp32 "
            "operation by operation; acc=rn_f32 starts from RN_f32(Z) instead"
          : fmt::format("the declared order is unknown: the hypotheses start from {}, and are ranked by their envelope first (the "
                        "accumulation's envelope of Z through each hypothesis, plus one output rounding), then bit for bit",
                        c.alpha_beta ? "RN_f32(A'B'), one fp32 accumulation of A'B' (alpha' t + beta C formed from it by each hypothesis's form)"
                                     : "RN_f32(Z), one fp32 accumulation of Z"));
  if (c.alpha_beta)
    rec.notes.push_back(fmt::format(
        "alpha = {:.9g}, beta = {:.9g}{}: the alpha/beta hypotheses form alpha' t + beta C from t, the {} (docs/diagnose.md, \"alpha, beta and C\")",
        c.alpha, c.beta, c.scale_a != 1 || c.scale_b != 1 ? fmt::format(", scale_a = {:.9g}, scale_b = {:.9g}", c.scale_a, c.scale_b) : std::string(),
        c.order_known ? "accumulator in the declared order" : "correctly rounded RN_f32(A'B') (the order is unknown)"));
  if (c.amax) {
    const double got = *c.amax;
    const auto near = [&](double v) { return std::fabs(got - v) <= 4 * f32.unit_roundoff() * std::fabs(v) + f32.min_subnormal(); };
    std::string what;
    if (static_cast<float>(got) == static_cast<float>(best.amax) || near(best.amax))
      what = "max |act(Z)| under the top hypothesis, before scale_d (as declared)";
    else if (c.scale_d != 1 && (static_cast<float>(got) == static_cast<float>(best.amax_scaled) || near(best.amax_scaled))) {
      what = "max |scale_d act(Z)| under the top hypothesis: the amax of the scaled result, where max |act(Z)| before scale_d is defined [amax_scaled]";
      if (rec.kind == "declared") rec.kind = "consistent";  // D as declared, amax not
      rec.verdict += "; amax is the amax of the scaled result, max |scale_d act(Z)|, not max |act(Z)| [amax_scaled]";
    } else
      what = fmt::format("neither max |act(Z)| ({:.9g}) nor max |scale_d act(Z)| ({:.9g}) under the top hypothesis", best.amax, best.amax_scaled);
    rec.notes.push_back(fmt::format("amax: the kernel's {:.9g} is {}", got, what));
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

DiagnosisRecord diagnose_epilogue_kernel(GemmKernel& k, const std::string& suite, const CaseSpec& cs, const DiagnoseOptions& opt,
                                         CaseResult* status) {
  const KernelTraits& t = k.traits();
  if (!cs.epilogue.active && !cs.alpha_beta.active) throw InputError(fmt::format("diagnose: {} is neither an epilogue nor an alpha/beta case", cs.id));
  if (!(*t.acc == f32))
    throw InputError(fmt::format("diagnose {}: the epilogue hypotheses emulate an fp32 epilogue; the kernel accumulates in {}", k.name(), t.acc->tag));
  pin_fp_env();
  const Problem problem = generate(cs.spec);
  const GemmRef ref = gemm_reference(problem.a.view(), problem.b.view());
  std::optional<BatchProblems> batched;
  if (cs.batch.active()) batched = batch_problems(problem, cs.batch);
  std::vector<double> got;
  CaseResult r = run_spec_for_diagnosis(k, suite, cs, problem, ref, got, batched ? &*batched : nullptr, true);

  const std::int64_t m = problem.m, n = problem.n, mn = m * n;
  const std::vector<const Problem*> probs = [&] {
    std::vector<const Problem*> v;
    if (batched)
      for (const Problem& q : batched->problems) v.push_back(&q);
    else
      v.push_back(&problem);
    return v;
  }();
  if (got.size() != probs.size() * static_cast<std::size_t>(mn))
    throw InputError(fmt::format("diagnose: {} results for {} matrices of {} x {}", got.size(), probs.size(), m, n));
  const EpilogueInputs in = epilogue_inputs(t, cs.epilogue, m, n);
  const AlphaBetaCase& abc = cs.alpha_beta;
  const double alpha = abc.active ? alpha_beta_scalar(abc.alpha, t) : 1.0, beta = abc.active ? alpha_beta_scalar(abc.beta, t) : 0.0;
  const std::int64_t gap = cs.batch.active() ? cs.batch.gap_rows : 0;
  const BatchC cin = abc.active ? batch_c(abc, beta, *t.out, m, n, static_cast<std::int64_t>(probs.size()), gap, cs.layout.c == Layout::ColMajor)
                                : BatchC{};
  // The declaration as certify grades it (a tensor-core order with its installed card); its accumulator emulated
  // into fp32 when the order is declared and fixed.
  const KernelTraits declared = tc::with_installed_cards(t);
  const bool order_known = declared.sum_order.known() && declared.determinism == Determinism::Deterministic;
  // The epilogue's scalars as the fp32 model forms them (kernels/gemm/cpu/epilogue_models.cpp): alpha' = RN(RN(alpha
  // scale_a) scale_b), z = RN(RN(alpha' acc) + RN(beta c)).
  const float alpha_f = cs.epilogue.fp8_scaling && (in.scale_a != 1 || in.scale_b != 1)
                            ? (static_cast<float>(alpha) * static_cast<float>(in.scale_a)) * static_cast<float>(in.scale_b)
                            : static_cast<float>(alpha);
  EpilogueCase z0_case = cs.epilogue;  // Z0 = alpha' A'B' + beta C: each hypothesis adds the bias its own way
  z0_case.bias = BiasKind::None;
  EpilogueCase plain;  // the accumulation's envelope of Z0 alone: no bias, no activation, no scale_d
  plain.active = true;
  KernelTraits plain_t = t;
  plain_t.epilogue.round_before_act = false;

  EpilogueDiagnoseCase c;
  c.label = fmt::format("{} ({})", cs.id, cs.spec);
  c.ec = cs.epilogue;
  c.bias = in.bias;
  c.scale_d = in.scale_d;
  c.order_known = order_known;
  c.with_c = beta != 0;
  c.alpha_beta = abc.active;
  c.alpha = alpha, c.beta = beta, c.scale_a = in.scale_a, c.scale_b = in.scale_b;
  for (std::size_t b = 0; b < probs.size(); ++b) {
    const Problem& p = *probs[b];
    std::vector<double> c_b;
    if (abc.active) c_b.assign(cin.values.begin() + static_cast<std::ptrdiff_t>(b) * mn, cin.values.begin() + static_cast<std::ptrdiff_t>(b + 1) * mn);
    EpilogueGrade g;
    g.problem = &p;
    g.traits = &t;
    g.epilogue = &z0_case;
    g.alpha = alpha;
    g.beta = beta;
    g.c = beta != 0 ? &c_b : nullptr;
    g.scale_a = in.scale_a;
    g.scale_b = in.scale_b;
    g.scale_d = in.scale_d;
    const EpilogueZ ez = epilogue_exact_z(g);
    if (!ez.why.empty()) throw InputError(fmt::format("diagnose {}: {}", k.name(), ez.why));
    EpilogueMatrix mx;
    mx.m = m, mx.n = n;
    mx.z_hi.resize(static_cast<std::size_t>(mn));
    mx.z_lo.resize(static_cast<std::size_t>(mn));
    mx.x0.resize(static_cast<std::size_t>(mn));
    mx.acc.resize(static_cast<std::size_t>(mn));
    mx.got.resize(static_cast<std::size_t>(mn));
    std::vector<std::uint64_t> acc_codes;
    const std::vector<double> a_in = rounded_into(p.a.data, *t.a_input, t.input_rounding), b_in = rounded_into(p.b.data, *t.b_input, t.input_rounding);
    if (order_known) {
      Hypothesis h = declared_hypothesis(declared);
      h.traits.out = &f32;
      acc_codes = evaluate_hypothesis(h, m, n, p.k, a_in, b_in);
    }
    // The alpha/beta hypotheses' start: A'B' exactly, t (the declared order's accumulator or RN_f32(A'B')), E, C.
    GemmRef ab_ref;
    if (abc.active) {
      ab_ref = gemm_reference(MatrixView::row_major(a_in.data(), m, p.k), MatrixView::row_major(b_in.data(), p.k, n));
      mx.t.resize(static_cast<std::size_t>(mn));
      mx.ab_hi.resize(static_cast<std::size_t>(mn));
      mx.ab_lo.resize(static_cast<std::size_t>(mn));
      mx.e_ab.resize(static_cast<std::size_t>(mn));
      if (beta != 0) mx.c = c_b;
    }
    const Rounder rn_out = Rounder::nearest(*t.out);
    for (std::int64_t x = 0; x < mn; ++x) {
      const auto xs = static_cast<std::size_t>(x);
      mx.z_hi[xs] = ez.z[xs].hi;
      mx.z_lo[xs] = ez.z[xs].lo;
      mx.x0[xs] = epilogue_allowed(plain_t, plain, 1, ez.el[xs]).y;
      if (order_known) {
        float z = static_cast<float>(to_double(f32, acc_codes[xs]));
        if (alpha_f != 1.0f) z = alpha_f * z;
        if (beta != 0) z = z + static_cast<float>(beta) * static_cast<float>(c_b[xs]);
        mx.acc[xs] = z;
      } else {
        mx.acc[xs] = static_cast<float>(to_double(f32, round_ref(f32, ez.z[xs], Rounder::nearest(f32)).code));
      }
      mx.got[xs] = round_double(*t.out, got[b * static_cast<std::size_t>(mn) + xs], rn_out).code;  // exact: got holds values of out
      if (abc.active) {
        mx.ab_hi[xs] = ab_ref.c[xs].hi;
        mx.ab_lo[xs] = ab_ref.c[xs].lo;
        mx.e_ab[xs] = ez.el[xs].E;
        mx.t[xs] = order_known ? static_cast<float>(to_double(f32, acc_codes[xs]))
                               : static_cast<float>(to_double(f32, round_ref(f32, ab_ref.c[xs], Rounder::nearest(f32)).code));
      }
    }
    c.mats.push_back(std::move(mx));
  }
  if (cs.epilogue.amax)
    for (const CheckResult& ch : r.checks)
      if (ch.kind == CheckKind::Amax && std::isfinite(ch.measured)) c.amax = ch.measured;
  DiagnosisRecord rec = diagnose_epilogue(k.name(), declared, c, opt);
  if (status) *status = std::move(r);
  return rec;
}

}  // namespace fpcert
