// suites/verdict/tolerance.cpp — tolerances from traits: for a shape, and element by element for data.
#include "suites/verdict/tolerance.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include "base/error.hpp"
#include "kernels/order.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {
namespace {

const Format* format_arg(const std::string& key, const std::string& v) {
  const Format* f = find_format(v);
  if (!f) throw InputError(fmt::format("traits: {}={}: unknown format (one of {})", key, v, format_tags()));
  return f;
}

Rounding rounding_arg(const std::string& key, const std::string& v) {
  const auto r = parse_rounding(v);
  if (!r) throw InputError(fmt::format("traits: {}={}: unknown rounding ({})", key, v, rounding_names()));
  return *r;
}

/// A decimal integer in [lo, hi], nothing before or after it (no sign for a positive, no blank, no suffix).
long long integer_arg(const std::string& key, const std::string& v, long long lo, long long hi) {
  long long x = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || x < lo || x > hi)
    throw InputError(fmt::format("traits: {}={}: an integer in [{}, {}]", key, v, lo, hi));
  return x;
}

bool flag_arg(const std::string& key, const std::string& v) {
  if (v != "0" && v != "1" && v != "true" && v != "false") throw InputError(fmt::format("traits: {}={}: not 0/1/true/false", key, v));
  return v == "1" || v == "true";
}

/// One key of the fused epilogue (kernels/kernel.hpp, EpilogueTraits; docs/python.md, "Fused epilogues"): bias=row|column,
/// bias_format=<tag>, activation=relu|gelu_erf|gelu_tanh|silu (several joined by '|'), func_rel_err=<x> or 2^-<e>,
/// round_before_act, round_before_bias, fp8_scaling, fp8_scale_d, amax (0/1). False when `key` is not one of them.
bool epilogue_key(EpilogueTraits& e, const std::string& key, const std::string& v) {
  auto each = [&](const char* what, auto parse, auto add) {
    std::stringstream ss(v);
    std::string one;
    while (std::getline(ss, one, '|')) {
      const auto x = parse(one);
      if (!x || one == "none")
        throw InputError(fmt::format("traits: {}={}: unknown {} '{}' ({}; several joined by '|')", key, v, what, one,
                                     key == "bias" ? "row, column" : "relu, gelu_erf, gelu_tanh, silu"));
      add(*x);
    }
  };
  if (key == "bias") each("bias kind", parse_bias_kind, [&](BiasKind b) { e.bias |= bit(b); });
  else if (key == "activation") each("activation", parse_activation, [&](Activation a) { e.activations |= bit(a); });
  else if (key == "bias_format") e.bias_format = format_arg(key, v);
  else if (key == "round_before_act") e.round_before_act = flag_arg(key, v);
  else if (key == "round_before_bias") e.round_before_bias = flag_arg(key, v);
  else if (key == "fp8_scaling") e.fp8_scaling = flag_arg(key, v);
  else if (key == "amax") e.amax = flag_arg(key, v);
  else if (key == "fp8_scale_d") e.fp8_scale_d = flag_arg(key, v);
  else if (key == "func_rel_err") {
    // a number (2.38e-7) or a power of two (2^-22, 2^-10.99)
    const bool pow2 = v.rfind("2^", 0) == 0;
    std::size_t used = 0;
    double x = NAN;
    try {
      x = std::stod(pow2 ? v.substr(2) : v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != (pow2 ? v.size() - 2 : v.size()) || !(std::isfinite(x)))
      throw InputError(fmt::format("traits: func_rel_err={}: not a number (e.g. 2.38e-7 or 2^-22)", v));
    e.func_rel_err = pow2 ? std::exp2(x) : x;
    e.func_note = "traits spec func_rel_err=" + v;
  } else {
    return false;
  }
  return true;
}

/// The epilogue's declarations hold together (as the plugin ABI's, plugin/epilogue_plugin.cpp): GELU and SiLU call an
/// elementary function whose relative error must be stated, in (0, 1); ReLU calls none; a bias format needs a bias.
void check_epilogue(const EpilogueTraits& e) {
  const bool elementary = e.activations & (bit(Activation::GeluErf) | bit(Activation::GeluTanh) | bit(Activation::Silu));
  if (!(e.func_rel_err >= 0 && e.func_rel_err < 1))
    throw InputError(fmt::format("traits: func_rel_err={}: a relative error in [0, 1)", e.func_rel_err));
  if (elementary && e.func_rel_err == 0)
    throw InputError("traits: activation=gelu_erf, gelu_tanh or silu needs func_rel_err (the relative error of the erf, tanh or exp it "
                     "calls, e.g. 2^-22 for CUDA's erff, tanhf, expf: 2 ulp)");
  if (!elementary && e.func_rel_err != 0)
    throw InputError("traits: func_rel_err is for a GELU or SiLU activation (declare one, or leave func_rel_err out)");
  if (e.bias_format && !e.bias) throw InputError("traits: bias_format without bias=row or bias=column");
  if (!e.fp8_scale_d && !e.fp8_scaling) throw InputError("traits: fp8_scale_d=0 without fp8_scaling=1 (it says which scale factors are taken)");
}

std::string bound_text(const Bound& b) {
  std::string s;
  for (const BoundTerm& t : b.terms) s += fmt::format("    {:<34} {:<12.6g} {}\n", t.name, t.value, t.formula);
  s += "    " + b.arithmetic + "\n    pass iff " + b.allowed + (b.vacuous ? "\n    VACUOUS: K u >= 1, no rigorous bound" : "") + "\n";
  return s;
}

}  // namespace

KernelTraits parse_traits_spec(const std::string& spec) {
  KernelTraits t;
  std::string order;
  const auto at = spec.rfind("order=", 0) == 0 ? 0 : spec.find(",order=");
  if (at != std::string::npos) order = spec.substr(spec.find('=', at) + 1);
  std::stringstream ss(spec.substr(0, at));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError(fmt::format("traits: '{}' is not key=value", item));
    const std::string key = item.substr(0, eq), v = item.substr(eq + 1);
    if (key == "in") t.a_input = t.b_input = t.a_operand = t.b_operand = format_arg(key, v);
    else if (key == "a") t.a_input = t.a_operand = format_arg(key, v);
    else if (key == "b") t.b_input = t.b_operand = format_arg(key, v);
    else if (key == "operand") t.a_operand = t.b_operand = format_arg(key, v);
    else if (key == "a_operand") t.a_operand = format_arg(key, v);
    else if (key == "b_operand") t.b_operand = format_arg(key, v);
    else if (key == "acc") t.acc = format_arg(key, v);
    else if (key == "acc_rounding") t.acc_rounding = rounding_arg(key, v);
    else if (key == "input_rounding") t.input_rounding = rounding_arg(key, v);
    else if (key == "out") t.out = format_arg(key, v);
    else if (key == "promote") t.promote_format = format_arg(key, v);
    else if (key == "products") {
      t.exact_products = v == "exact";
      t.product_format = t.exact_products ? nullptr : format_arg(key, v);
    } else if (key == "promote_every") {
      t.promote_every = static_cast<int>(integer_arg(key, v, 0, std::numeric_limits<int>::max()));
    } else if (key == "batch_invariant") {
      // a declared property (docs/audit.md, "Batch invariance"), checked bit for bit by fpcert audit
      t.batch_invariant = flag_arg(key, v);
      t.batch_invariant_note = "traits spec";
    } else if (key == "alpha_beta") {
      // D = alpha (A B) + beta C as BLAS defines it (kernels/kernel.hpp, KernelTraits::alpha_beta; docs/python.md)
      t.alpha_beta = flag_arg(key, v);
    } else if (key == "shape_multiple") {
      t.shape_multiple = integer_arg(key, v, 1, 4096);  // M, N, K multiples of it (KernelTraits::shape_multiple; cuBLASLt FP8: 16)
    } else if (key == "batched") {
      // strided batches as cublasGemmStridedBatchedEx defines them (KernelTraits::batched; docs/python.md)
      t.batched = flag_arg(key, v);
    } else if (!epilogue_key(t.epilogue, key, v)) {
      throw InputError(fmt::format("traits: unknown key '{}' (in, a, b, operand, a_operand, b_operand, acc, acc_rounding, "
                                   "input_rounding, products, promote_every, promote, out, batch_invariant, alpha_beta, shape_multiple, batched, "
                                   "bias, bias_format, activation, func_rel_err, round_before_act, round_before_bias, fp8_scaling, fp8_scale_d, "
                                   "amax, order last)",
                                   key));
    }
  }
  check_epilogue(t.epilogue);
  if (t.promote_every > 0 && !t.promote_format) t.promote_format = &f32;
  if (!order.empty()) {
    t.sum_order = parse_order_spec(order);
    if (const std::string bad = check_order(t.sum_order); !bad.empty()) throw InputError("traits: order=" + order + ": " + bad);
  }
  t.order = order.empty() ? "unknown (traits spec " + spec + ")" : order_spec(t.sum_order) + " (traits spec)";
  return t;
}

KernelTraits traits_by_name_or_spec(const std::string& s) {
  if (s.find('=') != std::string::npos) return parse_traits_spec(s);
  const auto k = make_gemm_kernel(s);
  if (!k) throw InputError(fmt::format("unknown kernel '{}' (fpcert kernels lists them; or give a traits spec like in=f16,acc=f32,out=f16)", s));
  return k->traits();
}

ShapeTolerance shape_tolerance(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k, bool inputs_exact) {
  if (m <= 0 || n <= 0 || k <= 0) throw InputError(fmt::format("tolerance: m, n, k must be positive (got {}, {}, {})", m, n, k));
  ShapeTolerance s;
  s.m = m, s.n = n, s.k = k;
  BoundInputs bi;
  bi.traits = &t;
  bi.k = k;
  bi.ref_max_abs = 1;  // normwise atol is printed per unit of max|ref|
  bi.a_exact = inputs_exact && t.operand_u == 0 && t.a_operand->precision() >= t.a_input->precision();
  bi.b_exact = inputs_exact && t.operand_u == 0 && t.b_operand->precision() >= t.b_input->precision();
  s.normwise = make_bound(BoundVariant::Independent, bi);
  // The envelope bounds the kernel's own errors around the exact product of its inputs: a caller whose
  // inputs still round into the input formats adds that storage error (the normwise form includes it).
  s.element = make_envelope(t, k).bound;
  s.derivation = fmt::format("traits: {}\nshape: M={} N={} K={} ({})\n", describe_traits(t), m, n, k,
                             inputs_exact ? "inputs given in the input formats" : "inputs assumed to round into storage") +
                 std::string("normwise (independent; atol shown for max|ref| = 1):\n") + bound_text(s.normwise) +
                 "per element (the envelope tier, around the exact product of the inputs as the kernel receives them):\n" +
                 bound_text(s.element);
  return s;
}

ElementTolerance element_tolerance(const KernelTraits& t, const Problem& p, const GemmRef& ref) {
  const EnvelopeModel env = make_envelope(t, p.k);
  std::vector<double> row_abs_a(static_cast<std::size_t>(p.m), 0.0), col_abs_b(static_cast<std::size_t>(p.n), 0.0);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t q = 0; q < p.k; ++q) row_abs_a[static_cast<std::size_t>(i)] += std::fabs(p.a(i, q));
  for (std::int64_t q = 0; q < p.k; ++q)
    for (std::int64_t j = 0; j < p.n; ++j) col_abs_b[static_cast<std::size_t>(j)] += std::fabs(p.b(q, j));
  for (auto* v : {&row_abs_a, &col_abs_b})
    for (double& x : *v) x *= 1 + 0x1p-30;  // K roundings of a sum of magnitudes: within K 2^-53 < 2^-30 (K < 2^23), as grade does
  ElementTolerance e;
  e.bound = env.bound;
  e.allowed.resize(static_cast<std::size_t>(p.m * p.n));
  // Elements whose sums overflow double (fp64 inputs near their largest values): the allowance from the scaled sums
  // (docs/fp64.md, "Sums beyond double's range"), +Inf only where it is itself beyond double.
  const WideSums wide = wide_sums(p.a.data, p.b.data, p.m, p.n, p.k, ref);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const auto x = static_cast<std::size_t>(i * p.n + j);
      if (const WideSums::Sums* w = wide.find(static_cast<std::int64_t>(x))) {
        e.allowed[x] = std::ldexp(wide_allowed(ref.c[x], *w, [&](double ra, double as, double rw, double cl) {
                                    return envelope_allowed(env, ra, as, rw, cl);
                                  }),
                                  w->shift);
        continue;
      }
      e.allowed[x] = envelope_allowed(env, std::fabs(ref.c[x].hi), ref.abs_sum[x], row_abs_a[static_cast<std::size_t>(i)],
                                      col_abs_b[static_cast<std::size_t>(j)]);
    }
  return e;
}

}  // namespace fpcert
