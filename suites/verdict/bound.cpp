// suites/verdict/bound.cpp — the bound model's terms and their arithmetic, printed.
#include "suites/verdict/bound.hpp"

#include <fmt/format.h>

#include <cmath>

namespace fpcert {

std::string pow2_text(double v) {
  if (v == 0) return "0";
  int e;
  const double m = std::frexp(v, &e);
  if (m == 0.5) return fmt::format("2^{}", e - 1);
  return fmt::format("{:.4g}", v);
}

const Format& storage_format(const Format& input, const Format& operand) {
  return operand.precision() < input.precision() ? operand : input;
}

namespace {

double unit(const Format& f) { return f.unit_roundoff(); }
/// One ulp for directed (truncating) rounding, half an ulp for the nearest modes.
double unit(const Format& f, Rounding r) {
  return (r == Rounding::NearestEven || r == Rounding::NearestAway) ? unit(f) : 2 * unit(f);
}
bool directed(Rounding r) { return !(r == Rounding::NearestEven || r == Rounding::NearestAway || r == Rounding::Stochastic); }

double gamma(double n, double u, bool& vacuous) {
  if (n * u >= 1) {
    vacuous = true;
    return INFINITY;
  }
  return n * u / (1 - n * u);
}

}  // namespace

Bound make_bound(BoundVariant v, const BoundInputs& in) {
  const KernelTraits& t = *in.traits;
  Bound b;
  b.variant = v;
  const double K = static_cast<double>(std::max<std::int64_t>(in.k, 1));
  const double sK = std::sqrt(K);
  const double c = in.slack;

  // Storage: the narrowest format each operand passes through (split emulations: their u_eff).
  auto storage_u = [&](const Format& input, const Format& operand, bool exact, std::string& label) {
    if (t.operand_u > 0) {
      label = "split operand (" + t.operand_note + ")";
      return t.operand_u;
    }
    const Format& s = storage_format(input, operand);
    label = std::string(s.tag);
    if (exact) {
      label += ", inputs representable";
      return 0.0;
    }
    return unit(s, t.input_rounding);
  };
  std::string la, lb;
  const double uA = storage_u(*t.a_input, *t.a_operand, in.a_exact, la);
  const double uB = storage_u(*t.b_input, *t.b_operand, in.b_exact, lb);
  const double uP = t.exact_products ? 0.0 : unit(*t.product_format);
  // Accumulation.
  const double uAcc = unit(*t.acc, t.acc_rounding);
  const bool acc_linear = directed(t.acc_rounding);
  const double N = t.promote_every > 0 ? std::min<double>(t.promote_every, K) : K;
  const double blocks = t.promote_every > 0 ? std::ceil(K / N) : 1;
  const double uPromote = t.promote_every > 0 ? unit(*t.promote_format) : 0.0;
  const double uOut = (t.out->precision() < t.acc->precision() ||
                       (t.promote_every > 0 && t.out->precision() < t.promote_format->precision()))
                          ? unit(*t.out)
                          : 0.0;
  b.out_term = uOut;
  // Underflow terms: half the smallest positive value of each format a rounding may land in.
  auto half_eta = [](const Format& f) { return f.min_subnormal() / 2; };
  if (t.operand_u == 0) {
    b.eta_a = in.a_exact ? 0.0 : half_eta(storage_format(*t.a_input, *t.a_operand));
    b.eta_b = in.b_exact ? 0.0 : half_eta(storage_format(*t.b_input, *t.b_operand));
  } else {  // split slices can be subnormal in the slice format: bounded by the fp32 operand's eta
    b.eta_a = b.eta_b = half_eta(f32) * 4;
  }
  b.eta_abs = K * half_eta(*t.acc) + (t.out == t.acc ? 0.0 : half_eta(*t.out)) +
              (t.exact_products ? 0.0 : K * half_eta(*t.product_format)) +
              (t.promote_every > 0 ? blocks * half_eta(*t.promote_format) : 0.0);
  auto eta_term = [&] {
    if (b.eta_a > 0 || b.eta_b > 0 || b.eta_abs > 0)
      b.terms.push_back({"underflow (absolute)", b.eta_abs,
                         fmt::format("{} * sum_k|b_kj| + {} * sum_k|a_ik| + {:.4g} (eta/2 of storage; K eta_acc/2 + eta_out/2)",
                                     pow2_text(b.eta_a), pow2_text(b.eta_b), b.eta_abs)});
  };
  const std::string accname = fmt::format("{} ({})", t.acc->tag, to_string(t.acc_rounding));

  if (v == BoundVariant::WorstCase) {
    bool vac = false;
    const double gAcc = gamma(N, uAcc, vac);
    const double gPro = t.promote_every > 0 ? gamma(blocks, uPromote, vac) : 0.0;
    b.vacuous = vac;
    const double total = (1 + uA) * (1 + uB) * (1 + uP) * (1 + gAcc) * (1 + gPro) - 1;
    b.terms.push_back({"storage A (" + la + ")", uA, "u_sA = " + pow2_text(uA)});
    b.terms.push_back({"storage B (" + lb + ")", uB, "u_sB = " + pow2_text(uB)});
    if (uP > 0) b.terms.push_back({"products", uP, "u_p = " + pow2_text(uP)});
    b.terms.push_back({"accumulation " + accname, gAcc,
                       fmt::format("gamma_{} = {} * {} / (1 - {} * {}) = {:.4g}", N, N, pow2_text(uAcc), N,
                                   pow2_text(uAcc), gAcc)});
    if (t.promote_every > 0)
      b.terms.push_back({fmt::format("promotion to {}", t.promote_format->tag), gPro,
                         fmt::format("gamma_{} = {:.4g} over {} blocks of {}", blocks, gPro, blocks, N)});
    b.rtol = total;
    b.arithmetic = fmt::format("rtol = (1+u_sA)(1+u_sB)(1+u_p)(1+gamma_acc){} - 1 = {:.6g}{}; allowed_ij = rtol * (|A||B|)_ij + {} * |ref_ij|",
                               t.promote_every > 0 ? "(1+gamma_promote)" : "", total, vac ? " (vacuous: K u >= 1)" : "",
                               pow2_text(uOut));
    b.allowed = "|c - ref| <= rtol * (|A||B|)_ij + u_out * |ref| + underflow terms";
    eta_term();
    return b;
  }

  // Probabilistic variants: c * (sqrt(K) * (u_sA + u_sB + u_p) + accumulation) + u_out.
  const double tA = c * sK * uA, tB = c * sK * uB, tP = c * sK * uP;
  double tAcc;
  std::string accf;
  if (t.promote_every > 0) {
    const double gN = acc_linear ? N : std::sqrt(N);
    tAcc = c * (gN * uAcc + std::sqrt(blocks) * uPromote);
    accf = fmt::format("{} * ({}({}) * {} + sqrt({}) * {})", c, acc_linear ? "" : "sqrt", N, pow2_text(uAcc), blocks,
                       pow2_text(uPromote));
  } else {
    const double g = acc_linear ? K : sK;
    tAcc = c * g * uAcc;
    accf = fmt::format("{} * {} * {}", c, acc_linear ? fmt::format("{}", K) : fmt::format("sqrt({})", K), pow2_text(uAcc));
  }
  b.terms.push_back({"storage A (" + la + ")", tA, fmt::format("{} * sqrt({}) * {} = {:.6g}", c, K, pow2_text(uA), tA)});
  b.terms.push_back({"storage B (" + lb + ")", tB, fmt::format("{} * sqrt({}) * {} = {:.6g}", c, K, pow2_text(uB), tB)});
  if (uP > 0) b.terms.push_back({"products", tP, fmt::format("{} * sqrt({}) * {} = {:.6g}", c, K, pow2_text(uP), tP)});
  b.terms.push_back({"accumulation " + accname + (acc_linear ? " (truncation: grows like K)" : ""), tAcc,
                     fmt::format("{} = {:.6g}", accf, tAcc)});
  if (uOut > 0) b.terms.push_back({fmt::format("output ({})", t.out->tag), uOut, fmt::format("u_out = {}", pow2_text(uOut))});
  const double sum = tA + tB + tP + tAcc + uOut;
  if (v == BoundVariant::Independent) {
    const double floor = t.out->epsilon();
    b.terms.push_back({fmt::format("floor (eps of {})", t.out->tag), floor, fmt::format("2^-{}", t.out->frac_bits)});
    b.rtol = std::max(floor, sum);
    b.atol = b.rtol * in.ref_max_abs;
    b.out_term = 0;
    b.arithmetic = fmt::format("rtol = max({}, {:.6g}) = {:.6g}; atol = rtol * max|ref| = {:.6g} * {:.6g} = {:.6g}",
                               pow2_text(floor), sum, b.rtol, b.rtol, in.ref_max_abs, b.atol);
    b.allowed = "|c - ref| <= atol + rtol * |ref| + underflow terms";
  } else {
    b.rtol = tA + tB + tP + tAcc;
    b.arithmetic = fmt::format("rtol = {:.6g}; allowed_ij = rtol * (|A||B|)_ij + {} * |ref_ij|", b.rtol, pow2_text(uOut));
    b.allowed = "|c - ref| <= rtol * (|A||B|)_ij + u_out * |ref| + underflow terms";
  }
  eta_term();
  return b;
}

std::string alpha_beta_unsupported(const KernelTraits& t) {
  if (!t.alpha_beta) return "the kernel does not declare alpha/beta (D = alpha AB + beta C; KernelTraits::alpha_beta): it is called with alpha = 1, beta = 0 and no C";
  if (t.block.active()) return "alpha/beta cases do not grade block-scaled kernels (their reference is the quantized product)";
  if (t.acc->precision() > 26 || t.out->precision() > 26 || t.a_input->precision() > 26 || t.b_input->precision() > 26)
    return "alpha/beta cases grade formats of at most 26 significant bits (alpha a and beta c exact in double)";
  return {};
}

}  // namespace fpcert
