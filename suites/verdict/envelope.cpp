// suites/verdict/envelope.cpp — the envelope's constants per declared order class, printed term by term.
// docs/bound_model.md, "The envelope", proves every line.
#include "suites/verdict/envelope.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <cstring>

#include "base/parallel.hpp"
#include "kernels/emu/split.hpp"
#include "oracle/ulp.hpp"
#include "suites/verdict/bound.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/error_stats.hpp"
#include "suites/verdict/grade.hpp"
#include "suites/verdict/order_free.hpp"

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
    case OrderKind::Ozaki2:      // exact integer sums in the domain (docs/fp64.md, "What it claims"): the same
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
      // Sequential or atomic (any arrival order, one rounding per partial added): recursive summation of the
      // partials in some order, at most `splits` roundings per product; pairwise: the tree's depth.
      const double dout = o.outer == Combine::Pairwise ? clog2(o.splits) : o.splits;
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

  // Exact sums (EnvelopeModel::exact_bits): only where every step of the declared arithmetic is known to keep its bits.
  const bool card_known = o.block_model.instruction.empty() || o.block_model.params;
  if (e.exists && t.exact_products && uop == 0 && e.u_oa == 0 && e.u_ob == 0 && e.eta_a == 0 && e.eta_b == 0 && !t.block.active() &&
      o.final_scale == FinalScale::None && o.kind != OrderKind::SplitProducts && o.kind != OrderKind::Pow2Scaled && card_known) {
    int w = acc.precision();
    int min_exp = std::ilogb(acc.min_subnormal());
    double limit = acc.max_finite();
    if (promote) {
      w = std::min(w, t.promote_format->precision());
      min_exp = std::max(min_exp, std::ilogb(t.promote_format->min_subnormal()));
      limit = std::min(limit, t.promote_format->max_finite());
    }
    if (o.block_model.params) {
      const CardBits cb = card_bits(*o.block_model.params);
      w = std::min({w, cb.t, o.block_model.params->acc_bits + 1});
      if (!o.block_model.params->output_subnormals) min_exp = std::max(min_exp, std::ilogb(acc.min_normal()));
    }
    e.exact_bits = std::max(0, w);
    e.exact_min_exp = min_exp;
    e.exact_limit = limit;
  }

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

bool saturated_overflow(const Format& out, double exact, double got) {
  const double out_max = out.max_finite();
  return !out.has_inf() && std::fabs(exact) > out_max && got == std::copysign(out_max, exact);
}

int lsb_exponent(double v) {
  int e = 0;
  const double f = std::frexp(std::fabs(v), &e);  // |v| = f 2^e, f in [0.5, 1)
  const auto mant = static_cast<std::uint64_t>(std::ldexp(f, 53));  // 53 bits, exact
  return e - 53 + std::countr_zero(mant);
}

std::vector<int> line_grid_exponents(const std::vector<double>& v, std::int64_t rows, std::int64_t cols, bool by_columns) {
  std::vector<int> q(static_cast<std::size_t>(by_columns ? cols : rows), std::numeric_limits<int>::max());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const double x = v[static_cast<std::size_t>(r * cols + c)];
      int& l = q[static_cast<std::size_t>(by_columns ? c : r)];
      if (!std::isfinite(x)) l = std::numeric_limits<int>::min();
      else if (x != 0 && l != std::numeric_limits<int>::min()) l = std::min(l, lsb_exponent(x));
    }
  return q;
}

bool exact_accumulation(const EnvelopeModel& e, double abs_op, long q) {
  if (e.exact_bits <= 0 || !std::isfinite(abs_op)) return false;
  if (abs_op == 0) return true;  // no nonzero product
  if (q < e.exact_min_exp || q > 4096) return false;  // below the formats' grid, or a line without a finite grid
  return abs_op < std::ldexp(1.0, static_cast<int>(q) + e.exact_bits) && abs_op < e.exact_limit;
}

double envelope_allowed(const EnvelopeModel& e, double ref_op_abs, double abs_op, double row_abs_a, double col_abs_b) {
  if (!e.exists) return INFINITY;
  const double E = e.coef * abs_op + e.eta_arith + (e.eta_a * col_abs_b + e.eta_b * row_abs_a) * (1 + e.coef);
  // Eight operations on non-negative numbers, each within a relative 2^-53: 2^-49 covers them all.
  return (E + e.out_unit * (ref_op_abs + E) + e.eta_out) * (1 + 0x1p-49);
}

EnvelopeVerdict evaluate_envelope(const EnvelopeModel& e, const Format& out, std::int64_t m, std::int64_t n, const GemmRef& ref_op,
                                  const std::vector<std::uint64_t>& codes, const std::vector<double>& row_abs_a,
                                  const std::vector<double>& col_abs_b, std::vector<double>* fracs, const WideSums* wide) {
  const auto mn = static_cast<std::size_t>(m * n);
  if (fracs) fracs->assign(mn, NAN);
  const double out_max = to_double(out, out.max_finite_code());
  // In parallel chunks merged in chunk order, the worst as one pass in element order finds it: the first graded
  // element starts it, then only a strictly larger fraction replaces it (a NaN fraction, from an allowance that is NaN,
  // is kept where it starts and never replaces).
  struct Part {
    EnvelopeVerdict v;                 // this chunk alone, as the one pass would leave it starting empty
    double max = -INFINITY;            // the largest non-NaN fraction of the chunk and its first index
    std::int64_t max_index = -1;
  };
  const Part all = parallel_reduce(mn, kGradeChunk, Part{}, [&](std::uint64_t x0, std::uint64_t x1) {
    Part P;
    EnvelopeVerdict& v = P.v;
    // Element x is (i, j): kept by counting instead of two divisions per element.
    const auto nn = static_cast<std::size_t>(n);
    std::size_t i = x0 / nn, j = x0 % nn;
    for (std::uint64_t x = x0; x < x1; ++x, ++j) {
      if (j == nn) j = 0, ++i;
      const RefValue& r = ref_op.c[x];
      if (!std::isfinite(r.hi)) continue;
      const FpClass gc = classify(out, codes[x]);
      if (gc == FpClass::NaN || gc == FpClass::Inf) {
        if (fracs && std::fabs(r.hi) <= out_max) (*fracs)[x] = INFINITY;
        continue;
      }
      const double got = to_double(out, codes[x]);
      if (saturated_overflow(out, r.hi, got)) continue;  // NaN (above) or the saturated value beyond an e4m3 D's range
      ++v.graded;
      double frac;
      if (const WideSums::Sums* w = wide ? wide->find(static_cast<std::int64_t>(x)) : nullptr) {  // sums beyond double
        const WideGrade g = wide_fraction(got, r, *w, [&](double ra, double as, double rw, double cl) {
          return envelope_allowed(e, ra, as, rw, cl);
        });
        frac = g.frac;
        v.admit_zero += std::ldexp(std::fabs(r.hi), -w->shift) * (1 - 0x1p-50) <= g.allowed;
      } else {
        const double allowed = envelope_allowed(e, std::fabs(r.hi), ref_op.abs_sum[x], row_abs_a[i], col_abs_b[j]);
        const double err = error_from_below(got, r);  // |c - ref'|, never above the truth
        v.admit_zero += std::fabs(r.hi) * (1 - 0x1p-50) <= allowed;
        frac = err == 0 ? 0 : (allowed > 0 ? err / allowed : INFINITY);
      }
      if (fracs) (*fracs)[x] = frac;
      if (frac > 1) ++v.exceed;
      if (v.worst_index < 0 || frac > v.worst) {
        v.worst = frac;
        v.worst_index = static_cast<std::int64_t>(x);
      }
      if (frac > P.max) {
        P.max = frac;
        P.max_index = static_cast<std::int64_t>(x);
      }
    }
    return P;
  }, [](Part& acc, const Part& P) {
    EnvelopeVerdict& v = acc.v;
    v.graded += P.v.graded;
    v.admit_zero += P.v.admit_zero;
    v.exceed += P.v.exceed;
    if (v.worst_index < 0) {
      v.worst = P.v.worst;
      v.worst_index = P.v.worst_index;
    } else if (P.max_index >= 0 && P.max > v.worst) {
      v.worst = P.max;
      v.worst_index = P.max_index;
    }
  });
  return all.v;
}

double overflow_limit(const KernelTraits& t) {
  double lim = std::min(t.acc->max_finite(), t.out->max_finite());
  if (!t.exact_products && t.product_format) lim = std::min(lim, t.product_format->max_finite());
  if (t.promote_every > 0 && t.promote_format) lim = std::min(lim, t.promote_format->max_finite());
  return lim;
}

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
}

OverflowReach overflow_reach(const std::vector<double>& a, const std::vector<double>& b, std::int64_t n, std::int64_t k, std::int64_t x,
                             double growth, double limit) {
  const std::int64_t i = x / n, j = x % n;
  double pos = 0, neg = 0;
  for (std::int64_t q = 0; q < k; ++q) {
    const double av = a[static_cast<std::size_t>(i * k + q)], bv = b[static_cast<std::size_t>(q * n + j)];
    const double pr = av * bv;
    // fp64 operands: a product of two finite values can overflow double itself; it reaches the limit on its sign's
    // side (operands of fp32's range never get here: their products stay below 2^256).
    if (std::isinf(pr) && std::isfinite(av) && std::isfinite(bv)) {
      (pr > 0 ? pos : neg) = INFINITY;
      continue;
    }
    if (!std::isfinite(pr)) continue;
    (pr > 0 ? pos : neg) += std::fabs(pr);
  }
  // K double additions and products, each within 2^-53 relative: 2^-30 covers them (K < 2^23).
  const double slack = growth * (1 + 0x1p-30);
  return {pos * slack >= limit, neg * slack >= limit};
}

std::vector<std::string> error_sources(const KernelTraits& t) {
  std::vector<std::string> s;
  // A block-scaled kernel's operands are its quantizer's values dequantized, exact in the operand format on every
  // case the runner grades (it refuses the others: suites/ops/gemm/runner.cpp), and the quantization is specified arithmetic
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

namespace {

/// The spacing of the output format's codes at |v| (its ulp there; the subnormal spacing below the normal range).
double ulp_at(const Format& f, double v) {
  const int e = v == 0 || !std::isfinite(v) ? f.emin() : std::max(std::ilogb(v), f.emin());
  return std::ldexp(1.0, e - f.frac_bits);
}

}  // namespace

SpreadModel make_spread_model(const KernelTraits& t, std::int64_t k) {
  SpreadModel s;
  s.env = make_envelope(t, k);
  const SummationOrder& o = t.sum_order;
  // Atomic split-K into the output format itself: the partials P_s are each the same bits in every run (a chunk
  // is summed in a fixed order); only the order in which they are added into C (+0 first, one rounding each)
  // changes. Recursive summation of S values in any order is within gamma_{S-1}(u) sum |P_s| of their exact sum
  // (Higham, Accuracy and Stability, 2nd ed., eq. (4.4); the first addition, to +0, is exact), so two orders
  // differ by at most 2 gamma_{S-1}(u) sum |P_s|, and sum |P_s| <= growth (abs' + eta_A sum|b'| + eta_B sum|a'|) +
  // eta_arith (growth bounds every partial sum a valid order forms, eta_A and eta_B the operands' underflow where
  // they are narrower than the inputs, eta_arith the underflow of the roundings inside the chunks). An addition is
  // exact in the subnormal range (its relative error bound holds there too): no absolute term of its own.
  if (o.kind == OrderKind::SplitK && o.outer == Combine::Atomic && *t.out == *t.acc && t.promote_every == 0 &&
      o.final_scale == FinalScale::None && s.env.exists) {
    const double u = unit(*t.acc, t.acc_rounding), d = o.splits - 1;
    if (d * u < 1) {
      s.atomic = true;
      s.coef = 2 * d * u / (1 - d * u);
      s.text = fmt::format("2 gamma_{}({}) (growth sum|a'b'| + eta) = {:.6g} x ({:.6g} sum|a'b'| + {:.4g}): two arrival orders of "
                           "{} partials added into C",
                           d, pow2_text(u), s.coef, s.env.growth, s.env.eta_arith, o.splits);
      return s;
    }
  }
  s.text = "2 x the envelope's allowance (two admissible orders each lie within it of ref')";
  return s;
}

double spread_allowed(const SpreadModel& s, double ref_op_abs, double abs_op, double row_abs_a, double col_abs_b) {
  // Operands narrower than the inputs may each be off by eta_A (eta_B) below their format's normal range, beyond the
  // relative part growth carries: their products' magnitudes by eta_A sum|b'| + eta_B sum|a'| more (as the envelope's E).
  if (s.atomic)
    return s.coef * (s.env.growth * (abs_op + s.env.eta_a * col_abs_b + s.env.eta_b * row_abs_a) + s.env.eta_arith) *
           (1 + 0x1p-49);  // a few roundings of non-negative terms
  return 2 * envelope_allowed(s.env, ref_op_abs, abs_op, row_abs_a, col_abs_b);
}

void envelope_later_runs(const GradeInput& in, const CheckedRunBasis& basis, CaseResult& out) {
  const KernelTraits& t = *in.traits;
  const Problem& p = *in.problem;
  const Format& of = *t.out;
  const auto mn = static_cast<std::size_t>(p.m * p.n);
  const std::vector<std::uint64_t>& first = *in.codes;
  const std::vector<std::vector<std::uint64_t>>& later = *in.later;
  const std::vector<double>& a_in = basis.a_in;
  const std::vector<double>& b_in = basis.b_in;
  const std::vector<double>& row_in = basis.row_in;
  const std::vector<double>& col_in = basis.col_in;
  const GemmRef& rop = basis.rop;
  const OrderFreeElements& free = basis.free;
  RunSpread sp;
  sp.runs = in.runs;
  sp.differing_runs = in.differing_runs;
  const SpreadModel model = make_spread_model(t, p.k);
  const double limit = overflow_limit(t);
  sp.bound = model.text;
  sp.order_free = free.count();
  std::vector<std::uint8_t> differs(mn, 0), free_bad(mn, 0), env_bad(mn, 0);  // each element counted once over the runs
  std::int64_t env_first = -1, free_first = -1;
  int free_first_run = 0;
  std::vector<double> fracs;
  for (std::size_t r = 0; r < later.size(); ++r) {
    const std::vector<std::uint64_t>& c = later[r];
    // The envelope on its own. An element whose non-finite output the checked run's special-value checks accepted
    // (the same bits here) is not graded again.
    evaluate_envelope(model.env, of, p.m, p.n, rop, c, row_in, col_in, &fracs, &basis.wide);
    std::int64_t diff_here = 0;
    for (std::size_t x = 0; x < mn; ++x) {
      const FpClass c0 = classify(of, first[x]), c1 = classify(of, c[x]);
      const bool finite0 = c0 != FpClass::NaN && c0 != FpClass::Inf, finite1 = c1 != FpClass::NaN && c1 != FpClass::Inf;
      double f = fracs[x];
      // A non-finite output of a finite exact result that a partial sum's overflow explains is accepted, not graded
      // (in either run: then the two runs' difference is no spread to bound either).
      auto accepted = [&](std::uint64_t code, FpClass cls) {
        return cls != FpClass::NaN && cls != FpClass::Inf ? false
               : std::isfinite(rop.c[x].hi) && overflow_reach(a_in, b_in, p.n, p.k, static_cast<std::int64_t>(x), model.env.growth, limit)
                                                   .explains(cls == FpClass::NaN, std::signbit(to_double(of, code)));
      };
      const bool overflow1 = accepted(c[x], c1), overflow0 = !finite0 && accepted(first[x], c0);
      if (overflow1) f = NAN;
      if (!std::isnan(f) && !(!finite0 && c[x] == first[x])) {
        sp.envelope_worst = std::max(sp.envelope_worst, f);
        if (f > 1 && !env_bad[x]) {
          env_bad[x] = 1;
          ++sp.envelope_exceed;
          if (env_first < 0) env_first = static_cast<std::int64_t>(x);
        }
      }
      if (!free.kind.empty() && free.kind[x] != OrderFreeKind::None &&
          !(free.kind[x] == OrderFreeKind::ExactZero ? c1 == FpClass::Zero : c[x] == free.expect[x]) && !free_bad[x]) {
        free_bad[x] = 1;
        ++sp.order_free_differ;
        if (free_first < 0) free_first = static_cast<std::int64_t>(x), free_first_run = static_cast<int>(r);
      }
      if (c[x] == first[x] || (c0 == FpClass::NaN && c1 == FpClass::NaN)) continue;
      ++diff_here;
      if (!differs[x]) ++sp.elements;
      differs[x] = 1;
      // The difference between the two runs, in ulps of the output and against what two admissible orders allow.
      const double v0 = to_double(of, first[x]), v1 = to_double(of, c[x]);
      const RefValue& rv = rop.c[x];
      if (!std::isfinite(rv.hi)) continue;  // a non-finite reference: the special-value rules, not a bound
      // In ulps as the ULP statistics count them: not where cancellation dominates the exact value (results/results.hpp,
      // kCancellationRatio; a difference there is many ulps of a small result, and max_frac judges it).
      if (!cancellation_dominated(rv.hi, rop.abs_sum[x]))
        sp.max_ulps = std::max(sp.max_ulps, finite0 && finite1 ? ulp_distance(of, c[x], RefValue{v0, 0.0, 0}) : INFINITY);
      if (overflow0 || overflow1) continue;  // an accepted overflow in one of the runs: not a spread to bound
      double diff = finite0 && finite1 ? std::fabs(v1 - v0) : INFINITY;
      double allowed, frac;
      if (const WideSums::Sums* w = basis.wide.find(static_cast<std::int64_t>(x)); w && finite0 && finite1) {
        // Sums beyond double: the two runs' difference graded in the element's scale (reported unscaled: +Inf where
        // beyond double).
        // The allowance's |ref'| is the exact value's (as > 0 always but in the constants' call, allowed(0, 0, 0, 0)).
        const WideGrade g = wide_fraction(v1, RefValue{v0, 0.0, 0}, *w, [&](double, double as, double rw, double cl) {
          return spread_allowed(model, as > 0 ? std::ldexp(std::fabs(rv.hi), -w->shift) : 0.0, as, rw, cl);
        });
        frac = g.frac;
        allowed = std::ldexp(g.allowed, w->shift);
        diff = std::ldexp(std::fabs(std::ldexp(v1, -w->shift) - std::ldexp(v0, -w->shift)), w->shift);
      } else {
        allowed = spread_allowed(model, std::fabs(rv.hi), rop.abs_sum[x], row_in[x / static_cast<std::size_t>(p.n)],
                                 col_in[x % static_cast<std::size_t>(p.n)]);
        frac = diff == 0 ? 0 : allowed > 0 ? diff / allowed : INFINITY;
      }
      if (sp.worst_index < 0 || frac > sp.max_frac) {
        sp.max_frac = frac;
        sp.worst_index = static_cast<std::int64_t>(x);
        sp.worst_diff = diff;
        sp.worst_allowed = allowed;
        sp.worst_allowed_ulps = allowed / ulp_at(of, std::max(std::fabs(v0), std::fabs(v1)));
      }
    }
    sp.max_elements = std::max(sp.max_elements, diff_here);
  }
  auto at = [&](std::int64_t x) { return fmt::format("({}, {})", x / p.n, x % p.n); };
  const int compared = std::max(0, in.runs - 1);
  // Every later run graded on its own by the envelope (the checked run's is grade's envelope check).
  if (!later.empty())
    out.checks.push_back({CheckKind::Envelope, sp.envelope_exceed == 0,
                          sp.envelope_exceed ? fmt::format("a later run beyond the envelope at {} element(s), first at {}: max |c - ref'| / "
                                                           "allowed = {:.4g} over the {} distinct later output(s)",
                                                           sp.envelope_exceed, at(env_first), sp.envelope_worst, later.size())
                                             : fmt::format("every later run within the envelope: max |c - ref'| / allowed = {:.4g} over "
                                                           "the {} distinct later output(s)",
                                                           sp.envelope_worst, later.size()),
                          env_first, sp.envelope_worst, 1});
  const bool beyond = sp.max_frac > 1;
  std::string detail;
  if (sp.order_free_differ) {
    const auto x = static_cast<std::size_t>(free_first);
    detail = fmt::format("order-free element(s) differ between runs: {} of the {} element(s) that have one value in every summation order "
                         "take another in a later run, first at {}: got {}, every order of the declared arithmetic gives {}",
                         sp.order_free_differ, sp.order_free, at(free_first), hex_code(of, later[static_cast<std::size_t>(free_first_run)][x]),
                         free.kind[x] == OrderFreeKind::ExactZero ? std::string("a zero") : hex_code(of, free.expect[x]));
  }
  if (beyond)
    detail += fmt::format("{}run-to-run difference beyond what two admissible orders allow at {}: |c_run - c_checked| = {:.4g} against "
                          "{:.4g} ({:.3g} ulp; {})",
                          detail.empty() ? "" : "; ", at(sp.worst_index), sp.worst_diff, sp.worst_allowed, sp.worst_allowed_ulps, sp.bound);
  if (detail.empty())
    detail = sp.differing_runs == 0
                 ? fmt::format("declared run-to-run nondeterminism: the {} later run(s) equal the checked run bit for bit this time; {} "
                               "order-free element(s)",
                               compared, sp.order_free)
                 : fmt::format("declared run-to-run nondeterminism: {} of {} later run(s) differ, in up to {} element(s) ({} in all), by "
                               "at most {:.3g} ulp; largest difference / allowed = {:.3g} at {} ({:.3g} ulp allowed there: {}); the {} "
                               "order-free element(s) equal their one value in every run",
                               sp.differing_runs, compared, sp.max_elements, sp.elements, sp.max_ulps, sp.max_frac, at(sp.worst_index),
                               sp.worst_allowed_ulps, sp.bound, sp.order_free);
  out.checks.push_back({CheckKind::Spread, !sp.order_free_differ && !beyond, detail, sp.order_free_differ ? free_first : sp.worst_index,
                        sp.max_frac, 1});
  out.spread = sp;
}

}  // namespace fpcert
