// generators/softmax.cpp — logits and masks for softmax kernels (family `softmax`; docs/generators.md, "Softmax"):
// large spreads, values near the overflow of exp in a format, ties, a single dominant entry, and masks that leave rows
// partly or fully masked.
#include "generators/softmax.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "generators/family.hpp"

namespace fpcert {
namespace detail {
namespace {

constexpr std::uint32_t kSoftmaxId = 24;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

void make_softmax(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const std::int64_t rows = ps.integer("rows"), cols = ps.integer("cols");
  if (rows * cols > kMaxElements) ps.fail("rows x cols exceeds the limit of " + std::to_string(kMaxElements) + " entries");
  const Format& src = *p.source;
  const std::string mode = ps.choice("mode"), mask = ps.choice("mask");
  const double spread = ps.real("spread"), offset = ps.real("offset");
  const double scale = static_cast<float>(ps.real("scale"));  // an fp32 value, as kernels receive it
  if (!(scale > 0)) ps.fail("scale must be positive");
  p.m = rows;
  p.k = cols;
  p.n = rows;
  p.dot = false;
  p.a = Matrix(rows, cols);
  p.b = Matrix(cols, rows);
  const Stream sa = stream_for(p.seed, kSoftmaxId, kOpA), sd = stream_for(p.seed, kSoftmaxId, kOpA + 1);
  const Stream sm = stream_for(p.seed, kSoftmaxId, kOpB), sk = stream_for(p.seed, kSoftmaxId, kOpB + 1);
  const auto c = static_cast<std::uint64_t>(cols);
  fill_source(p.a, src, ctx, [&](std::uint64_t i) {
    const std::uint64_t r = i / c, j = i % c;
    const double u = uniform01(sa, i);
    if (mode == "ties") {
      if (r % 4 == 3) return offset;  // a row of equal logits: y = 1 / n
      return offset + spread * (std::floor(u * 3) / 2 - 0.5);  // three values, many equal
    }
    if (mode == "dominant") {
      const std::uint64_t at = uniform_below(sd, r, c);
      return j == at ? offset + spread : offset + (u - 0.5);
    }
    return offset + spread * (u - 0.5);  // uniform
  });
  std::int64_t fully = 0, partly = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto ru = static_cast<std::uint64_t>(r);
    const std::uint64_t keep = uniform_below(sk, ru, c);  // the entry a partly masked row keeps
    std::int64_t masked = 0;
    for (std::int64_t j = 0; j < cols; ++j) {
      const auto ju = static_cast<std::uint64_t>(j);
      bool m = false;
      if (mask == "causal") m = ju + 1 > std::max<std::uint64_t>(1, ((ru + 1) * c + static_cast<std::uint64_t>(rows) - 1) / static_cast<std::uint64_t>(rows));
      if (mask == "random" || mask == "rows") m = ju != keep && bernoulli(sm, ru * c + ju, 0.5);
      if (mask == "rows" && r % 4 == 3) m = true;  // every fourth row fully masked
      p.b(j, r) = m ? kNegInf : 0.0;
      masked += m;
    }
    fully += masked == cols;
    partly += masked > 0 && masked < cols;
  }
  p.achieved["softmax_rows"] = static_cast<double>(rows);
  p.achieved["softmax_cols"] = static_cast<double>(cols);
  p.achieved["softmax_scale"] = scale;
  p.achieved["softmax_masked"] = mask == "none" ? 0 : 1;
  p.achieved["softmax_fully_masked_rows"] = static_cast<double>(fully);
  p.achieved["softmax_partly_masked_rows"] = static_cast<double>(partly);
}

}  // namespace

std::vector<Family> softmax_families() {
  GeneratorInfo g;
  g.name = "softmax";
  g.summary = "logits of softmax rows (rows x cols in A), an additive mask of 0 and -Inf (transposed in B) and a scale";
  g.details = "mode uniform: offset + spread (u - 1/2) (a large spread leaves most exp(x - max) far below 1; offset 95 puts "
              "every exp(x) beyond fp32's range, offset 12 beyond fp16's); ties: three values offset + spread {-1/2, 0, 1/2}, "
              "every fourth row all equal; dominant: one entry offset + spread, the rest offset + (u - 1/2). mask causal: row r "
              "keeps its first ceil((r + 1) cols / rows) entries; random: each entry masked with probability 1/2, one kept; "
              "rows: random, and every fourth row fully masked. scale: rounded to fp32; the kernel computes softmax(s x + mask).";
  g.reference = "this project (docs/softmax.md, \"Generators\"; issue 40)";
  g.params = {p_int("rows", 64, 1, kMaxDim, "rows (softmax is over each row)"),
              p_int("cols", 1000, 1, kMaxDim, "entries per row"),
              p_choice("mode", "uniform", {"uniform", "ties", "dominant"}, "how the logits are drawn"),
              p_real("spread", 8, 0, 1e30, "width of the logits' range (dominant: the lead of the dominant entry)"),
              p_real("offset", 0, -1e30, 1e30, "centre of the logits"),
              p_choice("mask", "none", {"none", "causal", "random", "rows"}, "the additive mask"),
              p_real("scale", 1, 0, 1e30, "the scale (temperature's inverse) applied to the logits, rounded to fp32"),
              p_seed(),
              p_format("source", "f32", {"f32", "f16", "bf16"}, "format every logit is exactly representable in")};
  Family f{g, make_softmax};
  f.non_finite = true;  // the mask's -Inf
  return {f};
}

}  // namespace detail

bool is_softmax_problem(const Problem& p) { return p.achieved.count("softmax_rows") != 0; }

namespace {
void require(const Problem& p) {
  if (!is_softmax_problem(p)) throw std::invalid_argument("'" + p.spec + "' is not a softmax problem");
}
}  // namespace

std::int64_t softmax_rows(const Problem& p) {
  require(p);
  return p.m;
}
std::int64_t softmax_cols(const Problem& p) {
  require(p);
  return p.k;
}
bool softmax_masked(const Problem& p) {
  require(p);
  return p.achieved.at("softmax_masked") != 0;
}
double softmax_scale(const Problem& p) {
  require(p);
  return p.achieved.at("softmax_scale");
}

}  // namespace fpcert
