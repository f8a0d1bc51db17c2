// suites/ops/gemm/epilogue_exact.cpp — the exact Z = alpha' A'B' + beta C + bias as one exact GEMM of augmented operands
// (epilogue_exact.hpp; suites/ops/gemm/epilogue.hpp, header, states the construction).
#include "suites/ops/gemm/epilogue_exact.hpp"

#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "oracle/gemm_ref.hpp"
#include "oracle/mpfr_ref.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {
namespace {

using mpfr_ref::Mpfr;

/// alpha' = alpha scale_a scale_b exactly (MPFR at 3 x 53 bits), as pieces of at most `width` significant bits each whose
/// sum is alpha' (the leading `width` bits, then the next, ...): piece a' is exact in double when a' has 53 - width bits.
std::vector<double> alpha_pieces(double alpha, double scale_a, double scale_b, int width) {
  Mpfr p(3 * 53 + 8), q(std::max(2, width));
  mpfr_set_d(p, alpha, MPFR_RNDN);
  mpfr_mul_d(p, p, scale_a, MPFR_RNDN);
  mpfr_mul_d(p, p, scale_b, MPFR_RNDN);
  if (mpfr_zero_p(p.get())) return {0.0};
  std::vector<double> pieces;
  while (!mpfr_zero_p(p.get())) {
    mpfr_set(q, p, MPFR_RNDZ);
    pieces.push_back(mpfr_get_d(q, MPFR_RNDN));
    mpfr_sub(p, p, q, MPFR_RNDN);  // exact: drops the leading bits
  }
  return pieces;
}

/// x * y when it is exact in double (fma's residual 0), else NaN.
double exact_product(double x, double y) {
  const double p = x * y;
  return std::isfinite(p) && std::fma(x, y, -p) == 0 ? p : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

EpilogueZ epilogue_exact_z(const EpilogueGrade& in) {
  if (!in.problem || !in.traits) throw std::invalid_argument("epilogue_exact_z: problem and traits are required");
  const auto mn = static_cast<std::size_t>(in.problem->m * in.problem->n);
  if (in.beta != 0 && (!in.c || in.c->size() != mn))
    throw std::invalid_argument(fmt::format("grade_epilogue: beta = {} needs C's {} values (alpha_beta_c), got {}", in.beta, mn, in.c ? in.c->size() : 0));
  if (in.epilogue && in.epilogue->active && in.epilogue->bias != BiasKind::None) {
    const auto want = static_cast<std::size_t>(in.epilogue->bias == BiasKind::PerRow ? in.problem->m : in.problem->n);
    if (!in.bias || in.bias->size() != want)
      throw std::invalid_argument(fmt::format("grade_epilogue: a bias per {} has {} values (epilogue_bias), got {}", to_string(in.epilogue->bias),
                                              want, in.bias ? in.bias->size() : 0));
  }
  const Problem& p = *in.problem;
  const KernelTraits& t = *in.traits;
  const EpilogueCase none;
  const EpilogueCase& ec = in.epilogue ? *in.epilogue : none;
  const std::int64_t m = p.m, n = p.n, k = p.k;
  const bool with_c = in.beta != 0 && in.c;
  const std::vector<double> no_bias;
  const std::vector<double>& bias = in.bias && ec.active && ec.bias != BiasKind::None ? *in.bias : no_bias;
  const bool per_row = ec.bias == BiasKind::PerRow;
  const double sa = ec.active && ec.fp8_scaling ? in.scale_a : 1.0, sb = ec.active && ec.fp8_scaling ? in.scale_b : 1.0;
  EpilogueZ r;
  const auto a_in = rounded_into(p.a.data, *t.a_input, t.input_rounding);
  const auto b_in = rounded_into(p.b.data, *t.b_input, t.input_rounding);
  // ref' = A'B' (the accumulation's centre) and the exact Z through the augmented product (header):
  //   A'' = [p_1 A' | ... | p_r A' | beta C | bias or ones],  B'' = [B' ; ... ; B' ; I_n ; ones or bias],
  // p_1 + ... + p_r = alpha' exactly, each p_l a' exact in double (alpha_pieces).
  const GemmRef rop = gemm_reference(MatrixView::row_major(a_in.data(), m, k), MatrixView::row_major(b_in.data(), k, n));
  const std::vector<double> pieces = alpha_pieces(in.alpha, sa, sb, 53 - t.a_input->precision());
  const double alpha_eff = in.alpha * sa * sb;  // for the bound: rounded to nearest (relative 2^-52 at most)
  const int factors = (in.alpha != 1) + (sa != 1) + (sb != 1);
  const int alpha_roundings = std::max(0, factors - 1);
  const auto np = static_cast<std::int64_t>(pieces.size());
  const bool with_bias = !bias.empty();
  const std::int64_t kc = np * k + (with_c ? n : 0), kk = kc + (with_bias ? 1 : 0);
  std::vector<double> a2(static_cast<std::size_t>(m * kk), 0.0), b2(static_cast<std::size_t>(kk * n), 0.0);
  bool exact = true;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t l = 0; l < np; ++l)
      for (std::int64_t q = 0; q < k; ++q) {
        const double v = a_in[static_cast<std::size_t>(i * k + q)], pc = pieces[static_cast<std::size_t>(l)];
        const double pr = v == 0 || pc == 0 ? 0.0 : exact_product(pc, v);
        exact = exact && (std::isfinite(pr) || !std::isfinite(v));
        a2[static_cast<std::size_t>(i * kk + l * k + q)] = std::isfinite(v) ? pr : pc * v;
      }
    if (with_c)
      for (std::int64_t j = 0; j < n; ++j) {
        const double v = (*in.c)[static_cast<std::size_t>(i * n + j)];
        const double pr = v == 0 ? 0.0 : exact_product(in.beta, v);
        exact = exact && std::isfinite(pr);
        a2[static_cast<std::size_t>(i * kk + np * k + j)] = pr;
      }
    if (with_bias) a2[static_cast<std::size_t>(i * kk + kc)] = per_row ? bias[static_cast<std::size_t>(i)] : 1.0;
  }
  for (std::int64_t l = 0; l < np; ++l)
    for (std::int64_t q = 0; q < k; ++q)
      std::copy_n(b_in.begin() + q * n, n, b2.begin() + (l * k + q) * n);
  if (with_c)
    for (std::int64_t j = 0; j < n; ++j) b2[static_cast<std::size_t>((np * k + j) * n + j)] = 1.0;
  if (with_bias)
    for (std::int64_t j = 0; j < n; ++j) b2[static_cast<std::size_t>(kc * n + j)] = per_row ? 1.0 : bias[static_cast<std::size_t>(j)];
  if (!exact) {
    r.why = "a piece of alpha' times a'_ik or beta c_ij is not an exact double: the exact reference of D is not formed this way";
    return r;
  }
  const GemmRef zr = gemm_reference(MatrixView::row_major(a2.data(), m, kk), MatrixView::row_major(b2.data(), kk, n));
  r.z.assign(zr.c.begin(), zr.c.end());
  EnvelopeModel env = make_envelope(t, k);
  env.out_unit = 0;  // the accumulation's error alone: the epilogue's roundings and the output's are epilogue_allowed's
  env.eta_out = 0;
  std::vector<double> row_a(static_cast<std::size_t>(m), 0.0), col_b(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < k; ++q) row_a[static_cast<std::size_t>(i)] += std::fabs(a_in[static_cast<std::size_t>(i * k + q)]);
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t j = 0; j < n; ++j) col_b[static_cast<std::size_t>(j)] += std::fabs(b_in[static_cast<std::size_t>(q * n + j)]);
  for (double& v : row_a) v *= 1 + 0x1p-45;  // sums of up to 2^20 terms rounded to nearest: within (1 + 2^-53)^K of the truth
  for (double& v : col_b) v *= 1 + 0x1p-45;

  // Exact sums (EnvelopeModel::exact_bits): products on a grid 2^q whose magnitudes sum below 2^(q + w) accumulate
  // exactly in any valid order of the declared arithmetic, so E = 0 there.
  r.exact_bits = env.exact_bits;
  std::vector<int> qa, qb;
  if (env.exact_bits > 0) qa = line_grid_exponents(a_in, m, k, false), qb = line_grid_exponents(b_in, k, n, true);
  r.el.resize(mn);
  for (std::int64_t x = 0; x < m * n; ++x) {
    const auto xs = static_cast<std::size_t>(x);
    EpilogueElement& el = r.el[xs];
    el.alpha_eff = alpha_eff;
    el.alpha_roundings = alpha_roundings;
    const bool exact_sum = env.exact_bits > 0 && exact_accumulation(env, rop.abs_sum[xs],
                                                                   static_cast<long>(qa[static_cast<std::size_t>(x / n)]) + qb[static_cast<std::size_t>(x % n)]);
    r.exact_sums += exact_sum;
    el.E = exact_sum ? 0.0
                     : envelope_allowed(env, std::fabs(rop.c[xs].hi), rop.abs_sum[xs], row_a[static_cast<std::size_t>(x / n)],
                                        col_b[static_cast<std::size_t>(x % n)]);
    el.ref_abs = std::fabs(rop.c[xs].hi) * (1 + 0x1p-52);
    el.beta_c = with_c ? std::fabs(in.beta * (*in.c)[xs]) : 0.0;
    el.bias_abs = with_bias ? std::fabs(bias[static_cast<std::size_t>(per_row ? x / n : x % n)]) : 0.0;
    el.z_abs = std::fabs(r.z[xs].hi) * (1 + 0x1p-52);
  }
  return r;
}

}  // namespace fpcert
