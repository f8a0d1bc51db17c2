// generators/norm/norm.cpp — inputs for LayerNorm and RMSNorm kernels (family `norm`; docs/generators.md, "Normalisation"):
// a large mean against a small spread (the cancellation of the one-pass variance E[x^2] - E[x]^2), constant rows
// (var = 0: eps decides), values near the format's overflow and tiny values, with gamma and beta drawn apart.
#include "generators/norm/norm.hpp"

#include <cmath>
#include <stdexcept>

#include "generators/family.hpp"

namespace fpcert {
namespace detail {
namespace {

constexpr std::uint32_t kNormId = 25;

void make_norm(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const std::int64_t rows = ps.integer("rows"), cols = ps.integer("cols");
  if (rows * cols > kMaxElements) ps.fail("rows x cols exceeds the limit of " + std::to_string(kMaxElements) + " entries");
  const Format& src = *p.source;
  const std::string mode = ps.choice("mode"), affine = ps.choice("affine");
  const double spread = ps.real("spread"), offset = ps.real("offset");
  const double eps = static_cast<float>(ps.real("eps"));  // an fp32 value, as kernels receive it
  p.m = rows;
  p.k = cols;
  p.n = 2;
  p.dot = false;
  p.a = Matrix(rows, cols);
  p.b = Matrix(cols, 2);
  const Stream sa = stream_for(p.seed, kNormId, kOpA), sg = stream_for(p.seed, kNormId, kOpB);
  const auto c = static_cast<std::uint64_t>(cols);
  fill_source(p.a, src, ctx, [&](std::uint64_t i) {
    const std::uint64_t r = i / c;
    const double u = uniform01(sa, i);
    if (mode == "constant" && r % 2 == 0) return offset;  // var = 0: y = beta exactly (eps > 0)
    return offset + spread * (u - 0.5);
  });
  // gamma in +-[0.5, 1.5], beta in [-1, 1] (column 0, column 1); +1 and 0 when absent.
  fill_source(p.b, src, ctx, [&](std::uint64_t i) {
    const std::uint64_t j = i / 2, col = i % 2;  // B is cols x 2, filled row-major: (j, col)
    const double u = uniform01(sg, i);
    if (col == 0) return affine == "none" ? 1.0 : (j % 3 == 2 ? -1.0 : 1.0) * (0.5 + u);
    return affine == "both" ? 2 * u - 1 : 0.0;
  });
  p.achieved["norm_rows"] = static_cast<double>(rows);
  p.achieved["norm_cols"] = static_cast<double>(cols);
  p.achieved["norm_eps"] = eps;
  p.achieved["norm_gamma"] = affine == "none" ? 0 : 1;
  p.achieved["norm_beta"] = affine == "both" ? 1 : 0;
  p.achieved["norm_mean_over_spread"] = spread > 0 ? std::fabs(offset) / spread : 0;
}

}  // namespace

std::vector<Family> norm_families() {
  GeneratorInfo g;
  g.name = "norm";
  g.summary = "rows of a LayerNorm / RMSNorm (rows x cols in A), gamma and beta (columns of B), eps";
  g.details = "mode uniform: offset + spread (u - 1/2) (offset >> spread: the one-pass variance's cancellation; tiny "
              "offset and spread: values near underflow; a large spread: squares near overflow); constant: even rows all "
              "equal to offset (var = 0, eps decides), odd rows uniform. affine none: no gamma or beta; gamma: gamma in "
              "+-[0.5, 1.5]; both: gamma and beta in [-1, 1]. eps rounded to fp32.";
  g.reference = "this project (docs/normalization.md, \"Generators\"; issue 40)";
  g.params = {p_int("rows", 64, 1, kMaxDim, "rows (the normalisation is over each row)"),
              p_int("cols", 1000, 1, kMaxDim, "entries per row"),
              p_choice("mode", "uniform", {"uniform", "constant"}, "how rows are drawn"),
              p_real("spread", 2, 0, 1e38, "width of the values' range"),
              p_real("offset", 0, -1e38, 1e38, "centre of the values (the row's mean, about)"),
              p_choice("affine", "both", {"none", "gamma", "both"}, "which of gamma and beta the problem gives"),
              p_real("eps", 1e-5, 0, 1e30, "added to the variance, rounded to fp32"),
              p_seed(),
              p_format("source", "f32", {"f32", "f16", "bf16"}, "format every input is exactly representable in")};
  return {Family{g, make_norm}};
}

}  // namespace detail

bool is_norm_problem(const Problem& p) { return p.achieved.count("norm_rows") != 0; }

namespace {
void require(const Problem& p) {
  if (!is_norm_problem(p)) throw std::invalid_argument("'" + p.spec + "' is not a norm problem");
}
}  // namespace

std::int64_t norm_rows(const Problem& p) {
  require(p);
  return p.m;
}
std::int64_t norm_cols(const Problem& p) {
  require(p);
  return p.k;
}
double norm_eps(const Problem& p) {
  require(p);
  return p.achieved.at("norm_eps");
}
bool norm_has_gamma(const Problem& p) {
  require(p);
  return p.achieved.at("norm_gamma") != 0;
}
bool norm_has_beta(const Problem& p) {
  require(p);
  return p.achieved.at("norm_beta") != 0;
}

}  // namespace fpcert
