// suites/ops/gemm/alpha_beta.cpp — the exact D = alpha (A'B') + beta C and its per-element bound (derivation in the header).
#include "suites/ops/gemm/alpha_beta.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "oracle/gemm_ref.hpp"
#include "oracle/ulp.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {

namespace {

std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<double> rounded(const std::vector<double>& v, const Format& f, Rounding r) {
  std::vector<double> o(v.size());
  const Rounder rr{r, default_saturation(f), NanPayload::Preserve};
  for (std::size_t i = 0; i < v.size(); ++i) o[i] = to_double(f, round_double(f, v[i], rr).code);
  return o;
}

/// x * y when it is exact in double (fma's residual 0), else NaN.
double exact_product(double x, double y) {
  const double p = x * y;
  return std::isfinite(p) && std::fma(x, y, -p) == 0 ? p : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

std::vector<double> alpha_beta_c(const AlphaBetaCase& ab, const Format& out, std::int64_t m, std::int64_t n) {
  std::vector<double> c(static_cast<std::size_t>(m * n), std::numeric_limits<double>::quiet_NaN());
  if (ab.beta == 0) return c;
  std::uint64_t s = ab.c_seed;
  const Rounder rn = Rounder::nearest(out);
  for (double& v : c) {
    const double u01 = static_cast<double>(splitmix64(s) >> 11) * 0x1p-53;  // [0, 1), 53 bits
    v = to_double(out, round_double(out, 2 * u01 - 1, rn).code);
  }
  return c;
}

double alpha_beta_scalar(double v, const KernelTraits& t) { return to_double(*t.acc, round_double(*t.acc, v, Rounder::nearest(*t.acc)).code); }

std::string alpha_beta_unsupported(const KernelTraits& t) {
  if (!t.alpha_beta) return "the kernel does not declare alpha/beta (D = alpha AB + beta C; KernelTraits::alpha_beta): it is called with alpha = 1, beta = 0 and no C";
  if (t.block.active()) return "alpha/beta cases do not grade block-scaled kernels (their reference is the quantized product)";
  if (t.acc->precision() > 26 || t.out->precision() > 26 || t.a_input->precision() > 26 || t.b_input->precision() > 26)
    return "alpha/beta cases grade formats of at most 26 significant bits (alpha a and beta c exact in double)";
  return {};
}

double alpha_beta_allowed(double alpha, double beta, double E, double ref_abs, double c_abs, double d_abs, double u, double eta,
                          double u_out, double eta_out) {
  const double aa = std::fabs(alpha), bb = beta == 0 ? 0.0 : std::fabs(beta) * c_abs;
  const double P = aa * (ref_abs + E) + bb;
  const double X = aa * E + (2 * u + u * u) * P + 2 * eta;
  // About a dozen operations on non-negative numbers, each within a relative 2^-53: 2^-48 covers them all.
  return (X + u_out * (d_abs + X) + eta_out / 2) * (1 + 0x1p-48);
}

void grade_alpha_beta(const AlphaBetaGrade& in, CaseResult& out) {
  const Problem& p = *in.problem;
  const KernelTraits& t = *in.traits;
  const Format& of = *t.out;
  const std::int64_t m = p.m, n = p.n, k = p.k;
  const auto a_in = rounded(p.a.data, *t.a_input, t.input_rounding);
  const auto b_in = rounded(p.b.data, *t.b_input, t.input_rounding);
  // ref' = A'B' (the accumulation's centre) and the exact D through the augmented product (header).
  const GemmRef rop = gemm_reference(MatrixView::row_major(a_in.data(), m, k), MatrixView::row_major(b_in.data(), k, n));
  const bool with_c = in.beta != 0;
  const std::int64_t kk = k + (with_c ? n : 0);
  std::vector<double> a2(static_cast<std::size_t>(m * kk), 0.0), b2(static_cast<std::size_t>(kk * n), 0.0);
  bool exact = true;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t q = 0; q < k; ++q) {
      const double v = a_in[static_cast<std::size_t>(i * k + q)];
      const double pr = v == 0 || in.alpha == 0 ? 0.0 : exact_product(in.alpha, v);
      exact = exact && (std::isfinite(pr) || !std::isfinite(v));
      a2[static_cast<std::size_t>(i * kk + q)] = std::isfinite(v) ? pr : in.alpha * v;
    }
    if (with_c)
      for (std::int64_t j = 0; j < n; ++j) {
        const double v = (*in.c)[static_cast<std::size_t>(i * n + j)];
        const double pr = v == 0 ? 0.0 : exact_product(in.beta, v);
        exact = exact && std::isfinite(pr);
        a2[static_cast<std::size_t>(i * kk + k + j)] = pr;
      }
  }
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t j = 0; j < n; ++j) b2[static_cast<std::size_t>(q * n + j)] = b_in[static_cast<std::size_t>(q * n + j)];
  if (with_c)
    for (std::int64_t j = 0; j < n; ++j) b2[static_cast<std::size_t>((k + j) * n + j)] = 1.0;
  out.tier = Tier::Envelope;
  auto add = [&](CheckKind kind, bool passed, std::string detail, std::int64_t index, double measured = 0, double limit = 0) {
    out.checks.push_back({kind, passed, std::move(detail), index, measured, limit});
    if (passed) return;
    if (out.status == CaseStatus::Pass) out.status = CaseStatus::Fail;
    out.reason += (out.reason.empty() ? "" : "; ") + out.checks.back().detail;
  };
  if (!exact) {
    out.status = CaseStatus::NotSupported;
    out.tier = Tier::None;
    out.reason = "alpha a'_ik or beta c_ij is not an exact double: the exact reference of D is not formed this way";
    return;
  }
  const GemmRef dref = gemm_reference(MatrixView::row_major(a2.data(), m, kk), MatrixView::row_major(b2.data(), kk, n));

  EnvelopeModel e = make_envelope(t, k);
  e.out_unit = 0;  // the accumulation's error alone: the epilogue's roundings and the output's are alpha_beta_allowed's
  e.eta_out = 0;
  const Format& ef = t.promote_every > 0 && t.promote_format ? *t.promote_format : *t.acc;
  // A kernel whose accumulator rounds otherwise than to nearest may round its epilogue so too: unit 2u and eta, the
  // coarser bounds of a directed rounding (cuBLAS's tensor-core kernels declare toward zero).
  const bool nearest = t.acc_rounding == Rounding::NearestEven || t.acc_rounding == Rounding::NearestAway;
  const double u = nearest ? ef.unit_roundoff() : 2 * ef.unit_roundoff(), eta = nearest ? ef.min_subnormal() : 2 * ef.min_subnormal();
  const bool out_rounds = of.precision() < ef.precision() || of.emin() > ef.emin();
  const double u_out = out_rounds ? of.unit_roundoff() : 0.0, eta_out = out_rounds ? of.min_subnormal() : 0.0;
  std::vector<double> row_a(static_cast<std::size_t>(m), 0.0), col_b(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < k; ++q) row_a[static_cast<std::size_t>(i)] += std::fabs(a_in[static_cast<std::size_t>(i * k + q)]);
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t j = 0; j < n; ++j) col_b[static_cast<std::size_t>(j)] += std::fabs(b_in[static_cast<std::size_t>(q * n + j)]);
  for (double& v : row_a) v *= 1 + 0x1p-45;  // sums of up to 2^20 terms rounded to nearest: within (1 + 2^-53)^K of the truth
  for (double& v : col_b) v *= 1 + 0x1p-45;

  const double out_max = of.max_finite();
  std::int64_t graded = 0, exceed = 0, admit_zero = 0, nonfinite = 0, first_nonfinite = -1, worst_index = -1;
  double worst = 0, max_abs = 0, max_ulp = 0, ref_max = 0;
  const auto& codes = *in.codes;
  for (std::int64_t x = 0; x < m * n; ++x) {
    const auto xs = static_cast<std::size_t>(x);
    const RefValue& d = dref.c[xs];
    if (!std::isfinite(d.hi) || !std::isfinite(rop.c[xs].hi)) continue;
    const FpClass gc = classify(of, codes[xs]);
    if (gc == FpClass::NaN || gc == FpClass::Inf) {
      if (std::fabs(d.hi) <= out_max) {
        ++nonfinite;
        if (first_nonfinite < 0) first_nonfinite = x;
      }
      continue;
    }
    const double E = envelope_allowed(e, std::fabs(rop.c[xs].hi), rop.abs_sum[xs], row_a[static_cast<std::size_t>(x / n)],
                                      col_b[static_cast<std::size_t>(x % n)]);
    const double c_abs = with_c ? std::fabs((*in.c)[xs]) : 0.0;
    const double allowed = alpha_beta_allowed(in.alpha, in.beta, E, std::fabs(rop.c[xs].hi), c_abs, std::fabs(d.hi), u, eta, u_out, eta_out);
    const double got = to_double(of, codes[xs]);
    // |D^ - D| in double, shrunk so that it never exceeds the truth (as evaluate_envelope).
    const double err = std::max(0.0, std::fabs((got - d.hi) - d.lo) * (1 - 0x1p-50) - std::fabs(d.lo) * 0x1p-52);
    ++graded;
    max_abs = std::max(max_abs, err);
    ref_max = std::max(ref_max, std::fabs(d.hi));
    max_ulp = std::max(max_ulp, ulp_distance(of, codes[xs], d));
    admit_zero += std::fabs(d.hi) * (1 - 0x1p-50) <= allowed;
    const double frac = err == 0 ? 0 : (allowed > 0 ? err / allowed : INFINITY);
    if (frac > 1) ++exceed;
    if (worst_index < 0 || frac > worst) worst = frac, worst_index = x;
  }
  out.metrics.max_abs = max_abs;
  out.metrics.ref_max_abs = ref_max;
  out.metrics.ulp_max = max_ulp;
  out.metrics.err_frac_max = worst;
  out.metrics.nonfinite = nonfinite;
  out.metrics.first_nonfinite = first_nonfinite;
  out.metrics.unwritten = in.unwritten;
  out.metrics.first_unwritten = in.first_unwritten;
  out.worst_index = worst_index;
  const std::string scal = fmt::format("alpha = {:.9g}, beta = {:.9g}", in.alpha, in.beta);
  add(CheckKind::Envelope, exceed == 0,
      exceed ? fmt::format("{} of {} element(s) of D = alpha A'B' + beta C beyond the epilogue's envelope ({}), worst {:.4g} x the "
                           "allowance at ({}, {})",
                           exceed, graded, scal, worst, worst_index / n, worst_index % n)
             : fmt::format("every element of D = alpha A'B' + beta C within the epilogue's envelope ({}; worst {:.4g} of the allowance)",
                           scal, worst),
      exceed ? worst_index : -1, worst, 1);
  add(CheckKind::Nonfinite, nonfinite == 0,
      nonfinite ? fmt::format("{} element(s) NaN or Inf where D is finite, first at ({}, {}){}", nonfinite, first_nonfinite / n,
                              first_nonfinite % n, in.beta == 0 ? " (beta = 0 and C holds NaN: was C read?)" : "")
                : "no NaN or Inf where D is finite",
      first_nonfinite, static_cast<double>(nonfinite), 0);
  add(CheckKind::Unwritten, in.unwritten == 0,
      in.unwritten ? fmt::format("{} output(s) never written, first at ({}, {})", in.unwritten, in.first_unwritten / n, in.first_unwritten % n)
                   : "every output written",
      in.first_unwritten, static_cast<double>(in.unwritten), 0);
  out.vacuous = graded > 0 && admit_zero == graded;
  if (out.vacuous) out.flags.push_back("vacuous: the epilogue's envelope admits an all-zeros output here (no evidence)");
  out.flags.push_back("alpha/beta: " + scal + (with_c ? "" : " (C filled with NaN: BLAS does not read C when beta = 0)"));
  out.envelope.variant = BoundVariant::Componentwise;
  out.envelope.rtol = e.coef;
  out.envelope.out_term = u_out;
  out.envelope.terms.push_back({"accumulation (envelope)", e.coef, "E_ij of A'B' (suites/verdict/envelope.hpp), output term left out"});
  out.envelope.terms.push_back({"epilogue", 2 * u + u * u, "RN(RN(alpha acc) + RN(beta c)): (2u + u^2) (|alpha| (|ref'| + E) + |beta c|) + 2 eta"});
  out.envelope.allowed = "|D^ - D| <= |alpha| E + (2u + u^2) P + 2 eta + u_out (|D| + X) + eta_out / 2, D = alpha A'B' + beta C exact "
                         "(suites/ops/gemm/alpha_beta.hpp)";
}

}  // namespace fpcert
