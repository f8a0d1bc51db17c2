// generators/norm/norm_bwd.cpp — inputs for LayerNorm / RMSNorm backward kernels (family `norm_bwd`; docs/backward.md,
// "LayerNorm and RMSNorm backward"): rows with a large mean and a small variance (the cancellation of x - mean, as real
// activations have), dy correlated with xh (g_j = dy_j gamma_j close to c + xh_j: the cancellation of g_j - mean(g) -
// xh_j mean(g xh)), gamma with mixed signs and magnitudes, up to 8192 rows (dgamma and dbeta sum over them).
#include "generators/norm/norm_bwd.hpp"

#include <cmath>
#include <stdexcept>

#include "generators/family.hpp"

namespace fpcert {
namespace detail {
namespace {

constexpr std::uint32_t kNormBwdId = 29;

void make_norm_bwd(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const std::int64_t rows = ps.integer("rows"), cols = ps.integer("cols");
  if (2 * rows * cols > kMaxElements) ps.fail("2 x rows x cols exceeds the limit of " + std::to_string(kMaxElements) + " entries");
  const Format& src = *p.source;
  const std::string dy_mode = ps.choice("dy"), affine = ps.choice("affine");
  const double spread = ps.real("spread"), offset = ps.real("offset"), noise = ps.real("noise"), dscale = ps.real("dscale");
  const double eps = static_cast<float>(ps.real("eps"));
  p.m = 2 * rows;
  p.k = cols;
  p.n = 1;
  p.dot = false;
  const Stream sa = stream_for(p.seed, kNormBwdId, kOpA), sd = stream_for(p.seed, kNormBwdId, kOpA + 1),
               sg = stream_for(p.seed, kNormBwdId, kOpB);
  const auto c = static_cast<std::uint64_t>(cols);
  // gamma: +-(1 + u) 2^e, e in -4 .. 4, signs and magnitudes mixed (affine gamma); 1 when absent.
  p.b = Matrix(cols, 1);
  fill_source(p.b, src, ctx, [&](std::uint64_t j) {
    if (affine == "none") return 1.0;
    const double u = uniform01(sg, 2 * j), v = uniform01(sg, 2 * j + 1);
    return (u < 0.5 ? -1.0 : 1.0) * (1 + v) * std::ldexp(1.0, static_cast<int>(std::floor(9 * u * 2)) % 9 - 4);
  });
  Matrix x(rows, cols), dy(rows, cols);
  fill_source(x, src, ctx, [&](std::uint64_t i) { return offset + spread * (uniform01(sa, i) - 0.5); });
  // The row statistics in double (what dy's correlation needs; the kernels get the exact fp32 ones).
  std::vector<double> mean(static_cast<std::size_t>(rows)), rstd(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0, q = 0;
    for (std::int64_t j = 0; j < cols; ++j) s += x(r, j);
    const double m = s / static_cast<double>(cols);
    for (std::int64_t j = 0; j < cols; ++j) q += (x(r, j) - m) * (x(r, j) - m);
    mean[static_cast<std::size_t>(r)] = m;
    rstd[static_cast<std::size_t>(r)] = 1 / std::sqrt(q / static_cast<double>(cols) + eps);
  }
  fill_source(dy, src, ctx, [&](std::uint64_t i) {
    const auto r = static_cast<std::int64_t>(i / c), j = static_cast<std::int64_t>(i % c);
    const double u = uniform01(sd, i);
    if (dy_mode == "uniform") return dscale * (2 * u - 1);
    // g_j = dy_j gamma_j = 0.75 + xh_j + noise (u - 1/2): dx = rstd (g - mean g - xh mean(g xh)) cancels to the noise.
    const double xh = (x(r, j) - mean[static_cast<std::size_t>(r)]) * rstd[static_cast<std::size_t>(r)];
    return dscale * ((0.75 + xh) / p.b(j, 0) + noise * (u - 0.5));
  });
  p.a = Matrix(2 * rows, cols);
  std::copy(x.data.begin(), x.data.end(), p.a.data.begin());
  std::copy(dy.data.begin(), dy.data.end(), p.a.data.begin() + static_cast<std::ptrdiff_t>(x.data.size()));
  p.achieved["norm_bwd_rows"] = static_cast<double>(rows);
  p.achieved["norm_bwd_cols"] = static_cast<double>(cols);
  p.achieved["norm_eps"] = eps;
  p.achieved["norm_gamma"] = affine == "none" ? 0 : 1;
  p.achieved["norm_mean_over_spread"] = spread > 0 ? std::fabs(offset) / spread : 0;
}

}  // namespace

std::vector<Family> norm_bwd_families() {
  GeneratorInfo g;
  g.name = "norm_bwd";
  g.summary = "a LayerNorm / RMSNorm backward problem: x and dy (rows x cols each, stacked in A), gamma (B), eps";
  g.details = "x = offset + spread (u - 1/2) (offset >> spread: the cancellation of x - mean in activations); dy uniform: "
              "dscale (2u - 1); correlated: dy_j = dscale ((0.75 + xh_j) / gamma_j + noise (u - 1/2)), so that g - mean(g) "
              "- xh mean(g xh) cancels to the noise; affine gamma: gamma = +-(1 + u) 2^e, e in -4 .. 4 (mixed signs and "
              "magnitudes), none: 1. eps rounded to fp32. The saved mean and rstd are the correctly rounded fp32 statistics "
              "of x (the runner computes them).";
  g.reference = "this project (docs/backward.md, \"LayerNorm and RMSNorm backward\"; issue 45)";
  g.params = {p_int("rows", 64, 1, kMaxDim, "rows (dgamma and dbeta sum over them)"),
              p_int("cols", 1000, 1, kMaxDim, "entries per row (n)"),
              p_real("spread", 2, 0, 1e38, "width of x's range"),
              p_real("offset", 0, -1e38, 1e38, "centre of x (the row's mean, about)"),
              p_choice("dy", "uniform", {"uniform", "correlated"}, "how dy is drawn"),
              p_real("noise", 1e-2, 0, 1e38, "correlated dy: the part of g not explained by c + xh"),
              p_real("dscale", 1, 0, 1e38, "scale of dy"),
              p_choice("affine", "gamma", {"none", "gamma"}, "whether the problem gives gamma"),
              p_real("eps", 1e-5, 0, 1e30, "the forward's eps, rounded to fp32"),
              p_seed(),
              p_format("source", "f32", {"f32", "f16", "bf16"}, "format every input is exactly representable in")};
  return {Family{g, make_norm_bwd}};
}

}  // namespace detail

bool is_norm_bwd_problem(const Problem& p) { return p.achieved.count("norm_bwd_rows") != 0; }

namespace {
void require(const Problem& p) {
  if (!is_norm_bwd_problem(p)) throw std::invalid_argument("'" + p.spec + "' is not a norm_bwd problem");
}
}  // namespace

std::int64_t norm_bwd_rows(const Problem& p) {
  require(p);
  return p.m / 2;
}
std::int64_t norm_bwd_cols(const Problem& p) {
  require(p);
  return p.k;
}
double norm_bwd_eps(const Problem& p) {
  require(p);
  return p.achieved.at("norm_eps");
}
bool norm_bwd_has_gamma(const Problem& p) {
  require(p);
  return p.achieved.at("norm_gamma") != 0;
}

}  // namespace fpcert
