// suites/envelope.cpp — the envelope's constants per declared order class, printed term by term.
// docs/bound_model.md, "The envelope", proves every line.
#include "suites/envelope.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/emu/split.hpp"
#include "suites/bound.hpp"
#include "suites/emulate.hpp"

namespace fpcert {

namespace {

bool nearest(Rounding r) { return r == Rounding::NearestEven || r == Rounding::NearestAway; }
/// Relative error of one rounding into f: u = 2^-p to nearest, 2u directed or stochastic.
double unit(const Format& f, Rounding r) { return nearest(r) ? f.unit_roundoff() : 2 * f.unit_roundoff(); }
/// Absolute error of one rounding into f's underflow range: eta/2 to nearest, eta otherwise.
double eta(const Format& f, Rounding r) { return nearest(r) ? f.min_subnormal() / 2 : f.min_subnormal(); }
bool narrower(const Format& f, const Format& wide) { return narrower_format(f, wide); }
double clog2(double x) { return x <= 1 ? 0 : std::ceil(std::log2(x)); }

/// One growth factor g (the error is at most g times the sum of magnitudes it acts on), with its formula.
struct Growth {
  double g = 0;
  bool exists = true;
  std::string formula;
};
/// gamma_d(u) = d u / (1 - d u) (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Lemma 3.1).
Growth gamma(double d, double u, const std::string& what) {
  Growth r;
  if (d <= 0) {
    r.formula = what + ": no rounding";
    return r;
  }
  if (d * u >= 1) {
    r.exists = false;
    r.g = INFINITY;
    r.formula = fmt::format("{}: gamma_{} with u = {} does not exist ({} u >= 1)", what, d, pow2_text(u), d);
    return r;
  }
  r.g = d * u / (1 - d * u);
  r.formula = fmt::format("{}: gamma_{}({}) = {:.6g}", what, d, pow2_text(u), r.g);
  return r;
}
/// (1 + eps)^n - 1: n chained blocks, each with relative error eps of the magnitudes it adds.
Growth chained(double n, double eps, const std::string& what) {
  Growth r;
  r.g = n <= 0 ? 0 : std::expm1(n * std::log1p(eps));
  r.exists = std::isfinite(r.g);
  r.formula = fmt::format("{}: (1 + {:.6g})^{} - 1 = {:.6g}", what, eps, n, r.g);
  return r;
}
Growth compose(const Growth& a, const Growth& b) {
  Growth r;
  r.exists = a.exists && b.exists;
  r.g = r.exists ? (1 + a.g) * (1 + b.g) - 1 : INFINITY;
  r.formula = a.formula + "; " + b.formula;
  return r;
}

/// Relative error of one tensor-core block of f products plus the accumulator input, aligned to the
/// largest term with t fraction bits kept (each of the f other terms loses less than 2^-t of the largest)
/// and rounded once with unit u_r: eps = f 2^-t + u_r (1 + f 2^-t).
double tc_block_eps(int f, int t, double u_r) {
  const double trunc = f * std::ldexp(1.0, -t);
  return trunc + u_r * (1 + trunc);
}

/// A behaviour card's measured block (docs/tensor_cores.md, "Certifying tensor-core kernels"): t, the
/// fraction bits kept in alignment (one fewer with alignment groups: a term is cut once in its group and the
/// group's sum once more, together within 2^-(t-1) of the largest), and u_r, the unit of the block result's
/// rounding to acc_bits fraction bits (2^-(acc_bits+1) to nearest, twice that directed).
struct CardBits {
  int t;
  double u_r;
  std::string text;
};
CardBits card_bits(const FusedDotParams& p) {
  CardBits c;
  c.t = p.align_bits - (p.grouping != Grouping::None && p.groups > 1 ? 1 : 0);
  c.u_r = std::ldexp(nearest(p.block_rounding) ? 1.0 : 2.0, -(p.acc_bits + 1));
  c.text = fmt::format("measured: {} alignment bits{}, result to {} fraction bits {}", p.align_bits,
                       c.t != p.align_bits ? " (groups: 1 fewer)" : "", p.acc_bits, to_string(p.block_rounding));
  return c;
}

}  // namespace

EnvelopeModel make_envelope(const KernelTraits& t, std::int64_t k) {
  EnvelopeModel e;
  const SummationOrder& o = t.sum_order;
  const double K = static_cast<double>(std::max<std::int64_t>(k, 1));
  const Format& acc = *t.acc;
  const double ua = unit(acc, t.acc_rounding);
  const int tbits = acc.frac_bits;
  const bool promote = t.promote_every > 0 && t.promote_format;
  const double N = promote ? std::min<double>(t.promote_every, K) : K;
  const double nprom = promote ? std::ceil(K / N) : 0;
  const double upro = promote ? unit(*t.promote_format, Rounding::NearestEven) : 0.0;
  const std::string accname = fmt::format("{} ({})", acc.tag, to_string(t.acc_rounding));
  Bound& b = e.bound;
  // variant: none (the envelope is no course-gate variant; CaseResult::envelope names it)

  // Accumulation by the declared order class: the growth over the products' magnitudes.
  Growth g;
  double roundings = K;  // roundings into the accumulator per element (underflow terms)
  auto with_promotion = [&](const Growth& inner) {
    return promote ? compose(inner, gamma(nprom, upro, fmt::format("promotion to {} ({} blocks, from +0)", t.promote_format->tag, nprom)))
                   : inner;
  };
  switch (o.kind) {
    case OrderKind::Pow2Scaled:  // the scaling is exact within the domain: bounded as the worst valid order
    case OrderKind::Unknown: {
      // The worst valid order: any tree of correctly rounded additions (a product passes at most K
      // roundings), or tensor-core blocks that truncate each aligned term below 2^-t of the block's
      // largest: per product at most u_acc + 2^-t. With the behaviour cards of the instructions the kernel
      // may run, t and the block result's unit are the measured ones (the coarsest card), not the
      // accumulator's nominal fraction bits.
      double u_step = ua;
      int t_step = tbits;
      std::string what = fmt::format("u + 2^-{} per rounding", tbits);
      if (o.block_model.params) {
        const CardBits cb = card_bits(*o.block_model.params);
        u_step = std::max(ua, cb.u_r);
        t_step = cb.t;
        what = fmt::format("{} + 2^-{} per rounding; {}", pow2_text(u_step), t_step, cb.text);
      }
      const double step = u_step + std::ldexp(1.0, -t_step);
      g = with_promotion(gamma(N, step, fmt::format("accumulation {} in an unknown order (worst valid order, tensor-core "
                                                    "alignment included: {})", accname, what)));
      e.depth = N;
      e.step_unit = step;
      break;
    }
    case OrderKind::Sequential:
      g = with_promotion(gamma(N, ua, fmt::format("accumulation {} sequential ({}), K = {}", accname, to_string(o.step), N)));
      e.depth = N;
      e.step_unit = ua;
      break;
    case OrderKind::BlockedK: {
      const double bl = std::min<double>(o.block, K), nb = std::ceil(K / o.block);
      // Within a block: one rounding per product (sequential), a tree's depth (pairwise), or one (exact).
      const double din = o.inner == Combine::Sequential ? bl : o.inner == Combine::Pairwise ? clog2(bl) + 1 : 1;
      const double dout = o.outer == Combine::Sequential ? nb : clog2(nb);
      if (promote) {
        g = compose(gamma(din, ua, fmt::format("blocks of {} ({}) in {}", bl, to_string(o.inner), accname)),
                    gamma(dout, upro, fmt::format("{} partials ({}) in {}", nb, to_string(o.outer), t.promote_format->tag)));
      } else {
        g = gamma(din + dout, ua, fmt::format("accumulation {} blocked: {} within a block of {} ({}) + {} joining {} partials ({})",
                                              accname, din, bl, to_string(o.inner), dout, nb, to_string(o.outer)));
      }
      e.depth = din + dout;
      e.step_unit = ua;
      break;
    }
    case OrderKind::SplitK: {
      const double chunk = std::ceil(K / o.splits);
      const double dout = o.outer == Combine::Sequential ? o.splits : clog2(o.splits);
      g = gamma(chunk + dout, ua, fmt::format("accumulation {} split-K: {} per chunk + {} combining {} partials ({})", accname, chunk,
                                              dout, o.splits, to_string(o.outer)));
      e.depth = chunk + dout;
      e.step_unit = ua;
      break;
    }
    case OrderKind::Pairwise:
      g = gamma(clog2(K) + 1, ua, fmt::format("accumulation {} pairwise: ceil(log2 {}) + 1", accname, K));
      e.depth = clog2(K) + 1;
      e.step_unit = ua;
      break;
    case OrderKind::TensorCoreBlock:
    case OrderKind::SplitProducts: {
      if (o.kind == OrderKind::SplitProducts && o.term_order != OrderKind::TensorCoreBlock) {
        g = gamma(K, ua, fmt::format("each slice product summed sequentially in {}", accname));
        e.depth = K;
        e.step_unit = ua;
        break;
      }
      // An unmeasured block model may fuse fewer products than the instruction's k: the worst case is one
      // product per block (the bound grows as the fused length shrinks).
      const int f = !o.block_model.measured ? 1 : o.block_model.fused_length > 0 ? o.block_model.fused_length : std::max(1, o.block);
      double ur = unit(acc, o.block_model.block_rounding);
      int tb = tbits;
      if (o.block_model.params) {  // the behaviour card's measured block
        const CardBits cb = card_bits(*o.block_model.params);
        ur = cb.u_r;
        tb = cb.t;
      }
      const double eps = tc_block_eps(f, tb, ur);
      // Split products on tensor cores may chain every term's blocks in one accumulator: T times as many.
      const SplitScheme* sc = o.kind == OrderKind::SplitProducts ? find_split_scheme(o.split_scheme) : nullptr;
      const double blocks = std::ceil(N / f) * (sc ? static_cast<double>(sc->terms.size()) : 1.0);
      g = with_promotion(chained(blocks, eps,
                                 fmt::format("tensor-core blocks of {} products + C aligned with {} fraction bits, rounded {} ({} "
                                             "blocks): eps = {} 2^-{} + u_r (1 + {} 2^-{})",
                                             f, tb, to_string(o.block_model.block_rounding), blocks, f, tb, f, tb)));
      roundings = std::ceil(K / f);
      e.depth = blocks;
      e.step_unit = eps;
      break;
    }
  }
  // NVFP4's tensor scales after the accumulation: RN(s_A s_B), then RN(acc * that), two more roundings.
  if (o.final_scale == FinalScale::Tensor) {
    g = compose(g, gamma(2, unit(acc, Rounding::NearestEven), fmt::format("the tensor scales: RN(s_A s_B), RN(acc * it) in {}", acc.tag)));
    roundings += 2;
  }
  // Split products: the operand error the scheme declares, the slices' magnitudes (each slice of x is
  // within 2 u_s of what is left of x: the slices sum to at most (1 + 5 u_s)|x|) and the merge of T terms.
  double split_factor = 1;
  if (o.kind == OrderKind::SplitProducts) {
    if (const SplitScheme* sc = find_split_scheme(o.split_scheme)) {
      const double us = sc->slice->unit_roundoff();
      split_factor = (1 + 5 * us) * (1 + 5 * us);
      g = compose(g, gamma(static_cast<double>(sc->terms.size()), ua, fmt::format("merge of {} terms in fp32", sc->terms.size())));
      // Below the slice format's smallest subnormal the remainder of a tiny x is lost whole: at most
      // eta_slice per operand (relative bounds do not hold there; exp_low cases).
      e.eta_a = e.eta_b = sc->slice->min_subnormal();
    }
  }
  const double uop = t.operand_u;
  const double up = t.exact_products ? 0.0 : unit(*t.product_format, t.acc_rounding);
  // The kernel's own narrowing of its inputs into the operand formats (tf32 inside a TF32 tensor core, an
  // fp16 cast): bounded, not measured, since a kernel may round otherwise than it declares within the
  // declared mode's unit (any faithful rounding is within 2u: "toward zero, the coarser" covers them all);
  // below the operand format's normal range an absolute eta per operand.
  if (uop == 0 && narrower(*t.a_operand, *t.a_input)) {
    e.u_oa = unit(*t.a_operand, t.input_rounding);
    e.eta_a = eta(*t.a_operand, t.input_rounding);
  }
  if (uop == 0 && narrower(*t.b_operand, *t.b_input)) {
    e.u_ob = unit(*t.b_operand, t.input_rounding);
    e.eta_b = eta(*t.b_operand, t.input_rounding);
  }
  // Magnitude growth: (1 + u)^(roundings) per factor, as a sum of logarithms (finite whatever d u).
  e.growth = split_factor * std::exp(2 * std::log1p(uop) + std::log1p(e.u_oa) + std::log1p(e.u_ob) + std::log1p(up) +
                                     e.depth * std::log1p(e.step_unit) + (promote ? nprom * std::log1p(upro) : 0.0)) *
             (1 + 0x1p-40);  // exp and log1p within a few ulps: 2^-40 relative covers them
  e.exists = g.exists;
  if (e.exists) {
    // Operand and product errors on |a||b|, the accumulation's on the (slices') product magnitudes.
    e.coef = (1 + uop) * (1 + uop) * (1 + e.u_oa) * (1 + e.u_ob) * (1 + up) * (1 + split_factor * g.g) - 1;
    // Underflow: every rounding may add eta (products, accumulation, promotion), amplified by the
    // later roundings at most by (1 + coef).
    const double prod_eta = t.exact_products ? 0.0 : K * eta(*t.product_format, t.acc_rounding);
    // A card whose results flush subnormals loses up to the smallest normal value per rounding.
    const bool flushes = o.block_model.params && !o.block_model.params->output_subnormals;
    const double acc_eta = roundings * (flushes ? acc.min_normal()
                                                : eta(acc, o.kind == OrderKind::TensorCoreBlock ? o.block_model.block_rounding : t.acc_rounding));
    const double pro_eta = promote ? nprom * eta(*t.promote_format, Rounding::NearestEven) : 0.0;
    e.eta_arith = (prod_eta + acc_eta + pro_eta + K * e.eta_a * e.eta_b) * (1 + e.coef);
  } else {
    e.coef = INFINITY;
    e.eta_arith = INFINITY;
  }
  const Format& final_fmt = promote ? *t.promote_format : acc;
  if (narrower(*t.out, final_fmt)) {
    e.out_unit = unit(*t.out, Rounding::NearestEven);
    e.eta_out = eta(*t.out, Rounding::NearestEven);
  }
  e.growth *= 1 + e.out_unit;
  if (o.kind == OrderKind::SplitProducts)  // the merge of the scheme's terms, each a rounding in the accumulator
    if (const SplitScheme* sc = find_split_scheme(o.split_scheme)) e.growth *= std::exp(static_cast<double>(sc->terms.size()) * std::log1p(ua));

  // Printable.
  b.rtol = e.coef;
  b.out_term = e.out_unit;
  b.vacuous = !e.exists;
  b.eta_abs = e.eta_arith + e.eta_out;
  b.eta_a = e.eta_a;
  b.eta_b = e.eta_b;
  b.terms.push_back({"storage (measured)", 0, "ref'_ij - ref_ij: the exact product of the inputs as the kernel receives them minus "
                                              "that of the case's values, exact per element: the envelope's centre is ref'"});
  if (uop > 0) b.terms.push_back({"split operands (" + t.operand_note + ")", uop, "(1 + u_op)^2 with u_op = " + pow2_text(uop)});
  if (e.u_oa > 0)
    b.terms.push_back({fmt::format("operand A ({} -> {}, {})", t.a_input->tag, t.a_operand->tag, to_string(t.input_rounding)), e.u_oa,
                       fmt::format("u = {}, eta = {}", pow2_text(e.u_oa), pow2_text(e.eta_a))});
  if (e.u_ob > 0)
    b.terms.push_back({fmt::format("operand B ({} -> {}, {})", t.b_input->tag, t.b_operand->tag, to_string(t.input_rounding)), e.u_ob,
                       fmt::format("u = {}, eta = {}", pow2_text(e.u_ob), pow2_text(e.eta_b))});
  if (up > 0) b.terms.push_back({fmt::format("products ({})", t.product_format->tag), up, "u_p = " + pow2_text(up)});
  if (split_factor > 1) b.terms.push_back({"slice magnitudes", split_factor - 1, "(1 + 5 u_slice)^2 on the accumulation's growth"});
  b.terms.push_back({"accumulation", g.g, g.formula});
  if (e.out_unit > 0) b.terms.push_back({fmt::format("output ({})", t.out->tag), e.out_unit, "u_out = " + pow2_text(e.out_unit)});
  b.terms.push_back({"underflow (absolute)", b.eta_abs,
                     fmt::format("{:.4g} (each rounding into a format's subnormal range: eta/2, eta when directed)", b.eta_abs)});
  b.arithmetic = e.exists ? fmt::format("coef = (1+u_op)^2 (1+u_A)(1+u_B) (1+u_p) (1 + s g) - 1 = {:.6g}; |c - ref'|_ij <= E_ij + {} (|ref'_ij| + E_ij) + "
                                        "eta_out, E_ij = coef abs'_ij + {:.4g} + operand terms",
                                        e.coef, pow2_text(e.out_unit), e.eta_arith)
                          : "the accumulation's gamma does not exist at this K: no rigorous bound (vacuous)";
  b.allowed = "|c - ref'| <= coef (|A'||B'|)_ij + u_out (|ref'| + E) + underflow terms, ref' the exact product of the kernel's inputs";
  return e;
}

double envelope_allowed(const EnvelopeModel& e, double ref_op_abs, double abs_op, double row_abs_a, double col_abs_b) {
  if (!e.exists) return INFINITY;
  const double E = e.coef * abs_op + e.eta_arith + (e.eta_a * col_abs_b + e.eta_b * row_abs_a) * (1 + e.coef);
  // Eight operations on non-negative numbers, each within a relative 2^-53: 2^-49 covers them all.
  return (E + e.out_unit * (ref_op_abs + E) + e.eta_out) * (1 + 0x1p-49);
}

EnvelopeVerdict evaluate_envelope(const EnvelopeModel& e, const Format& out, std::int64_t m, std::int64_t n, const GemmRef& ref_op,
                                  const std::vector<std::uint64_t>& codes, const std::vector<double>& row_abs_a,
                                  const std::vector<double>& col_abs_b, std::vector<double>* fracs) {
  EnvelopeVerdict v;
  const auto mn = static_cast<std::size_t>(m * n);
  if (fracs) fracs->assign(mn, NAN);
  const double out_max = to_double(out, out.max_finite_code());
  for (std::size_t x = 0; x < mn; ++x) {
    const RefValue& r = ref_op.c[x];
    if (!std::isfinite(r.hi)) continue;
    const FpClass gc = classify(out, codes[x]);
    if (gc == FpClass::NaN || gc == FpClass::Inf) {
      if (fracs && std::fabs(r.hi) <= out_max) (*fracs)[x] = INFINITY;
      continue;
    }
    const double got = to_double(out, codes[x]);
    const double allowed = envelope_allowed(e, std::fabs(r.hi), ref_op.abs_sum[x], row_abs_a[x / static_cast<std::size_t>(n)],
                                            col_abs_b[x % static_cast<std::size_t>(n)]);
    // |c - ref'| in double: two roundings (within 2^-52 of it) and the reference's tail (hi + lo is within
    // 2^-53 |lo| of the exact value): shrunk by 2^-50 relative and |lo| 2^-52 it never exceeds the truth.
    const double err = std::max(0.0, std::fabs((got - r.hi) - r.lo) * (1 - 0x1p-50) - std::fabs(r.lo) * 0x1p-52);
    ++v.graded;
    v.admit_zero += std::fabs(r.hi) * (1 - 0x1p-50) <= allowed;
    const double frac = err == 0 ? 0 : (allowed > 0 ? err / allowed : INFINITY);
    if (fracs) (*fracs)[x] = frac;
    if (frac > 1) ++v.exceed;
    if (v.worst_index < 0 || frac > v.worst) {
      v.worst = frac;
      v.worst_index = static_cast<std::int64_t>(x);
    }
  }
  return v;
}

double overflow_limit(const KernelTraits& t) {
  double lim = std::min(t.acc->max_finite(), t.out->max_finite());
  if (!t.exact_products && t.product_format) lim = std::min(lim, t.product_format->max_finite());
  if (t.promote_every > 0 && t.promote_format) lim = std::min(lim, t.promote_format->max_finite());
  return lim;
}

std::vector<std::string> error_sources(const KernelTraits& t) {
  std::vector<std::string> s;
  // A block-scaled kernel's operands are its quantizer's values dequantized, exact in the operand format on every
  // case the runner grades (it refuses the others: suites/runner.cpp), and the quantization is specified arithmetic
  // graded exactly: neither is an error source. Elsewhere a narrower operand format rounds the inputs.
  if (!t.block.active()) {
    if (narrower(*t.a_operand, *t.a_input)) s.push_back(fmt::format("operand A ({} -> {})", t.a_input->tag, t.a_operand->tag));
    if (narrower(*t.b_operand, *t.b_input)) s.push_back(fmt::format("operand B ({} -> {})", t.b_input->tag, t.b_operand->tag));
  }
  if (t.operand_u > 0) s.push_back("split operands");
  if (!t.exact_products) s.push_back("products");
  s.push_back("accumulation");
  if (t.promote_every > 0) s.push_back("promotion");
  if (narrower(*t.out, t.promote_every > 0 && t.promote_format ? *t.promote_format : *t.acc)) s.push_back("output");
  return s;
}

}  // namespace fpcert
