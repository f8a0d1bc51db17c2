// generators/softmax_bwd/softmax_bwd.cpp — saved outputs and incoming gradients for softmax and log-softmax backward kernels (family
// `softmax_bwd`; docs/generators.md and docs/backward.md, "Softmax and log-softmax backward"): y is the forward reference
// (oracle/softmax/softmax_ref.hpp) of generated logits rounded into the source format, so every row is a real forward
// output; dy is random, one-hot (a cross-entropy's gradient), or built from y's pattern so that dy_j - D (log-softmax:
// dy_j - e^{y_j} G) cancels; logits with one dominant entry, long rows of small probabilities, masked entries.
#include "generators/softmax_bwd/softmax_bwd.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "generators/family.hpp"

namespace fpcert {
namespace detail {
namespace {

constexpr std::uint32_t kSoftmaxBwdId = 451;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double in_format(const Format& f, double v) { return to_double(f, round_double(f, v, Rounder::nearest(f)).code); }

void make_softmax_bwd(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  (void)ctx;
  const std::int64_t rows = ps.integer("rows"), cols = ps.integer("cols");
  if (rows * cols > kMaxElements) ps.fail("rows x cols exceeds the limit of " + std::to_string(kMaxElements) + " entries");
  const Format& src = *p.source;
  const std::string mode = ps.choice("mode"), dymode = ps.choice("dy"), mask = ps.choice("mask");
  const SoftmaxFn fn = ps.choice("fn") == "log_softmax" ? SoftmaxFn::LogSoftmax : SoftmaxFn::Softmax;
  const double spread = ps.real("spread"), dyscale = ps.real("dyscale"), noise = ps.real("noise");
  const double scale = static_cast<float>(ps.real("scale"));
  if (!(scale > 0)) ps.fail("scale must be positive");
  p.m = rows;
  p.k = cols;
  p.n = rows;
  p.dot = false;
  p.a = Matrix(rows, cols);
  p.b = Matrix(cols, rows);
  const Stream sz = stream_for(p.seed, kSoftmaxBwdId, kOpA), sd = stream_for(p.seed, kSoftmaxBwdId, kOpA + 1);
  const Stream sm = stream_for(p.seed, kSoftmaxBwdId, kOpA + 2), sg = stream_for(p.seed, kSoftmaxBwdId, kOpB);
  const Stream sh = stream_for(p.seed, kSoftmaxBwdId, kOpB + 1);
  const auto c = static_cast<std::uint64_t>(cols);
  const auto n = static_cast<std::size_t>(cols);
  std::vector<double> z(n);
  std::vector<std::uint64_t> codes(n);
  std::int64_t masked = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto ru = static_cast<std::uint64_t>(r);
    const std::uint64_t dom = uniform_below(sd, ru, c), hot = uniform_below(sh, ru, c);
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t i = ru * c + j;
      const double u = uniform01(sz, i);
      double v = mode == "dominant" ? (j == dom ? spread : u - 0.5) : spread * (u - 0.5);
      z[j] = static_cast<float>(v);
      if (mask == "random" && j != dom && bernoulli(sm, i, 0.5)) z[j] = kNegInf;
    }
    softmax_reference_row(fn, z.data(), n, src, MaskedRowPolicy::Zero, codes.data(), nullptr);
    const double k0 = dyscale * (2 * uniform01(sg, ru * 2 + 1) - 1);  // the row's common part (cancel)
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t i = ru * c + j;
      const double y = to_double(src, codes[j]);
      p.a(r, static_cast<std::int64_t>(j)) = y;
      const double u = 2 * uniform01(sg, c * rows + i) - 1;
      double d = dyscale * u;
      if (dymode == "onehot") d = j == hot ? -dyscale : 0.0;
      if (dymode == "cancel") d = fn == SoftmaxFn::Softmax ? k0 * (1 + noise * u) : k0 * std::exp(y) * (1 + noise * u);
      if (z[j] == kNegInf) {
        ++masked;
        if (fn == SoftmaxFn::LogSoftmax) d = 0;  // a loss never reads a masked log-probability
      }
      p.b(static_cast<std::int64_t>(j), r) = in_format(src, d);
    }
  }
  p.achieved["softmax_bwd_rows"] = static_cast<double>(rows);
  p.achieved["softmax_bwd_cols"] = static_cast<double>(cols);
  p.achieved["softmax_bwd_log"] = fn == SoftmaxFn::LogSoftmax ? 1 : 0;
  p.achieved["softmax_bwd_scale"] = scale;
  p.achieved["softmax_bwd_masked_entries"] = static_cast<double>(masked);
}

}  // namespace

std::vector<Family> softmax_bwd_families() {
  GeneratorInfo g;
  g.name = "softmax_bwd";
  g.summary = "softmax / log-softmax backward inputs: the saved output y (rows x cols in A, a real forward output) and dy "
              "(transposed in B), with the forward's scale";
  g.details = "y: the correctly rounded softmax (fn=softmax) or log-softmax (fn=log_softmax) of logits spread (u - 1/2) "
              "(mode random) or with one entry at spread and the rest (u - 1/2) (mode dominant), rounded into the source "
              "format; mask random: each logit but the dominant one masked (-Inf) with probability 1/2 (y = 0, log-softmax "
              "-Inf). dy: random: dyscale u, u uniform in [-1, 1]; onehot: -dyscale at one entry, 0 elsewhere (a "
              "cross-entropy's gradient); cancel: softmax dy_j = k (1 + noise u_j) with k per row, so that dy_j - D = "
              "k noise (u_j - sum y u) cancels; log-softmax dy_j = k e^{y_j} (1 + noise u_j), so that dy_j - e^{y_j} G "
              "cancels; masked log-softmax entries get dy = 0. Every dy rounded into the source format. scale: the "
              "forward's s, rounded to fp32.";
  g.reference = "this project (docs/backward.md, \"Softmax and log-softmax backward\"; issue 45)";
  g.params = {p_int("rows", 64, 1, kMaxDim, "rows"),
              p_int("cols", 1000, 1, kMaxDim, "entries per row"),
              p_choice("fn", "softmax", {"softmax", "log_softmax"}, "the forward y is the output of"),
              p_choice("mode", "random", {"random", "dominant"}, "how the logits are drawn"),
              p_real("spread", 8, 0, 1e4, "width of the logits' range (dominant: the lead of the dominant entry)"),
              p_choice("mask", "none", {"none", "random"}, "logits masked to -Inf"),
              p_choice("dy", "random", {"random", "onehot", "cancel"}, "how dy is drawn"),
              p_real("dyscale", 1, 0, 1e30, "the magnitude of dy"),
              p_real("noise", 0x1p-9, 0, 1, "cancel: the relative spread of dy around y's pattern"),
              p_real("scale", 1, 0, 1e30, "the forward's scale s, rounded to fp32"),
              p_seed(),
              p_format("source", "f32", {"f32", "f16", "bf16"}, "format y and dy are exactly representable in")};
  Family f{g, make_softmax_bwd};
  f.non_finite = true;  // log-softmax's masked -Inf
  return {f};
}

}  // namespace detail

bool is_softmax_bwd_problem(const Problem& p) { return p.achieved.count("softmax_bwd_rows") != 0; }

namespace {
void require(const Problem& p) {
  if (!is_softmax_bwd_problem(p)) throw std::invalid_argument("'" + p.spec + "' is not a softmax backward problem");
}
}  // namespace

std::int64_t softmax_bwd_rows(const Problem& p) {
  require(p);
  return p.m;
}
std::int64_t softmax_bwd_cols(const Problem& p) {
  require(p);
  return p.k;
}
SoftmaxFn softmax_bwd_fn(const Problem& p) {
  require(p);
  return p.achieved.at("softmax_bwd_log") != 0 ? SoftmaxFn::LogSoftmax : SoftmaxFn::Softmax;
}
double softmax_bwd_scale(const Problem& p) {
  require(p);
  return p.achieved.at("softmax_bwd_scale");
}

}  // namespace fpcert
