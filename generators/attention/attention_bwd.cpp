// generators/attention/attention_bwd.cpp — Q, K, V, dO and masks for attention backward kernels (family `attention_bwd`;
// docs/generators.md, "Attention backward"; docs/backward.md). Q, K, V and the mask are the forward family's (`attention`:
// a dominant key, scores beyond exp's range, many small probabilities, V that cancels, causal alignments), plus what made
// backward bugs visible: nearly masked rows (one or two keys left), dO correlated with O (D_i = dO_i . O_i then nearly
// equals dP_ij of the dominant keys: dP - D cancels), structured dO (small integers over 8: no Gaussian averaging hides
// a wrong term), several grouped-query heads (the shapes).
#include "generators/attention/attention_bwd.hpp"

#include <cmath>
#include <limits>

#include "generators/family.hpp"
#include "generators/generate.hpp"

namespace fpcert {
namespace detail {
namespace {

constexpr std::uint32_t kAttentionBwdId = 45;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

void make_attention_bwd(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const std::string mask = ps.choice("mask"), grad = ps.choice("grad");
  // The forward's problem (its generator, its checks), then dO appended.
  std::string fwd = "attention:";
  for (const char* key : {"batch", "heads_q", "heads_kv", "len_q", "len_k", "head_dim", "mode", "spread", "causal", "scale", "seed", "source"})
    fwd += std::string(key) + "=" + ps.text(key) + ",";
  fwd += std::string("mask=") + (mask == "none" ? "none" : mask == "additive_min" ? "additive_min" : "additive");
  GenerateOptions go;
  go.threads = ctx.threads;
  const Problem f = generate(fwd, go);
  const AttentionProblemShape s = attention_shape(f);
  const std::int64_t rq = s.batch * s.heads_q * s.len_q, d = s.head_dim;
  const std::int64_t rows = attention_do_row0(s) + rq;
  if (rows * d > kMaxElements) ps.fail("the tensors exceed the limit of " + std::to_string(kMaxElements) + " entries");
  p.m = rq;
  p.k = d;
  p.n = s.len_k;
  p.dot = false;
  p.a = Matrix(rows, d);
  p.b = f.b;
  for (std::int64_t r = 0; r < attention_do_row0(s); ++r)
    for (std::int64_t c = 0; c < d; ++c) p.a(r, c) = f.a(r, c);
  // Nearly masked rows: queries 1 mod 3 keep two keys (j0 = 5 i mod len_k, and the next with mask -8), the rest -Inf.
  if (mask == "nearly")
    for (std::int64_t i = 0; i < s.len_q; ++i) {
      if (i % 3 != 1) continue;
      const std::int64_t j0 = (5 * i) % s.len_k, j1 = (j0 + 1) % s.len_k;
      for (std::int64_t j = 0; j < s.len_k; ++j) p.b(i, j) = j == j0 ? 0.0 : j == j1 ? -8.0 : kNegInf;
    }
  // dO: like_o: O of a plain double forward (the reference is computed by the runner; correlation is what matters)
  // times (1 + 2^-6 noise); structured: ((7 i + 3 c) mod 9 - 4) / 8; normal: N(0, 1).
  const Format& src = *p.source;
  const Stream sg = stream_for(p.seed, kAttentionBwdId, kOpA);
  const std::int64_t q0 = 0, k0 = attention_k_row0(s), v0 = attention_v_row0(s), g0 = attention_do_row0(s);
  const std::int64_t group = s.heads_q / s.heads_kv;
  std::vector<double> z(static_cast<std::size_t>(s.len_k));
  for (std::int64_t r = 0; r < rq; ++r) {
    const std::int64_t i = r % s.len_q, bh = r / s.len_q, b = bh / s.heads_q, h = bh % s.heads_q;
    const std::int64_t kv = (b * s.heads_kv + h / group) * s.len_k;
    std::vector<double> o(static_cast<std::size_t>(d), 0.0);
    if (grad == "like_o") {
      double m = kNegInf, sum = 0;
      for (std::int64_t j = 0; j < s.len_k; ++j) {
        const double mk = s.mask || mask == "nearly" ? p.b(i, j) : 0.0;
        bool hidden = mk == kNegInf;
        if (s.causal == 1) hidden = hidden || j > i;
        if (s.causal == 2) hidden = hidden || j > i + s.len_k - s.len_q;
        double x = 0;
        for (std::int64_t c = 0; c < d && !hidden; ++c) x += p.a(q0 + r, c) * p.a(k0 + kv + j, c);
        z[static_cast<std::size_t>(j)] = hidden ? kNegInf : s.scale * x + mk;
        m = std::max(m, z[static_cast<std::size_t>(j)]);
      }
      for (std::int64_t j = 0; j < s.len_k && m != kNegInf; ++j) {
        const double w = std::exp(z[static_cast<std::size_t>(j)] - m);
        sum += w;
        for (std::int64_t c = 0; c < d; ++c) o[static_cast<std::size_t>(c)] += w * p.a(v0 + kv + j, c);
      }
      for (double& x : o) x = sum > 0 ? x / sum : 0.0;
    }
    for (std::int64_t c = 0; c < d; ++c) {
      const auto at = static_cast<std::uint64_t>(r * d + c);
      double g;
      if (grad == "like_o") g = o[static_cast<std::size_t>(c)] * (1 + 0x1p-6 * normal(sg, at)) + 0x1p-10 * normal(sg, at + 1);
      else if (grad == "structured") g = static_cast<double>((7 * i + 3 * c) % 9 - 4) / 8;
      else g = normal(sg, at);
      p.a(g0 + r, c) = to_source(src, g);
    }
  }
  p.achieved = f.achieved;
  p.achieved["attention_mask"] = s.mask || mask == "nearly" ? 1 : 0;
  p.achieved["attention_bwd_grad"] = grad == "like_o" ? 1 : grad == "structured" ? 2 : 0;
}

}  // namespace

std::vector<Family> attention_bwd_families() {
  GeneratorInfo g;
  g.name = "attention_bwd";
  g.summary = "Q, K, V, dO of an attention backward (stacked in A), an additive mask (B), a causal alignment";
  g.details = "Q, K, V, mask and causal as the `attention` family (mode normal, aligned, overflow, mass, cancel); mask nearly: "
              "the additive mask, and queries 1 mod 3 see two keys only (one at mask 0, one at -8); grad normal: dO ~ N(0, 1); "
              "like_o: dO = O (1 + 2^-6 N) + 2^-10 N with O a double forward (D = dO . O then nearly cancels dP of the "
              "dominant keys); structured: dO_ic = ((7 i + 3 c) mod 9 - 4) / 8. O and LSE are the runner's: the correctly "
              "rounded forward.";
  g.reference = "this project (docs/backward.md, \"Attention backward\"; issue 45)";
  g.params = {p_int("batch", 1, 1, 64, "batch"),
              p_int("heads_q", 1, 1, 256, "query heads"),
              p_int("heads_kv", 1, 1, 256, "key / value heads (heads_q a multiple of it)"),
              p_int("len_q", 64, 1, kMaxDim, "queries per head"),
              p_int("len_k", 64, 1, kMaxDim, "keys per head"),
              p_int("head_dim", 64, 1, 1024, "head dimension"),
              p_choice("mode", "normal", {"normal", "aligned", "overflow", "mass", "cancel"}, "Q, K, V as the attention family draws them"),
              p_real("spread", 1, 0, 1e4, "as the attention family"),
              p_choice("mask", "none", {"none", "additive", "nearly", "additive_min"},
                       "the additive mask (nearly: rows with two keys left; additive_min: the forward's, torch.finfo(dtype).min where -Inf was)"),
              p_choice("causal", "none", {"none", "top_left", "bottom_right"}, "the causal mask's alignment (the kernel call's)"),
              p_choice("grad", "normal", {"normal", "like_o", "structured"}, "how dO is drawn"),
              p_real("scale", 0, 0, 1e30, "s (0: 1/sqrt(head_dim)), rounded to fp32"),
              p_seed(),
              p_format("source", "f16", {"f32", "f16", "bf16"}, "format every input is exactly representable in")};
  Family f{g, make_attention_bwd};
  f.non_finite = true;  // the mask's -Inf
  return {f};
}

}  // namespace detail

bool is_attention_bwd_problem(const Problem& p) { return p.achieved.count("attention_bwd_grad") != 0; }

}  // namespace fpcert
