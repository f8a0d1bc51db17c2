// generators/attention/attention.cpp — Q, K, V and additive masks for attention kernels (family `attention`; docs/generators.md,
// "Attention"): normal inputs; a key aligned with the queries (one dominant score); scores near exp's overflow after
// scaling (large inputs); a dominant key beside many small probabilities that sum to half the mass; V rows of mixed
// signs whose weighted sum nearly cancels; an additive mask with -Inf entries; causal alignments that leave rows fully
// masked (bottom-right with len_q > len_k) are the kernel call's, recorded here.
#include "generators/attention/attention.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "generators/family.hpp"

namespace fpcert {
namespace detail {
namespace {

constexpr std::uint32_t kAttentionId = 26;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

void make_attention(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  AttentionProblemShape s;
  s.batch = ps.integer("batch");
  s.heads_q = ps.integer("heads_q");
  s.heads_kv = ps.integer("heads_kv");
  s.len_q = ps.integer("len_q");
  s.len_k = ps.integer("len_k");
  s.head_dim = ps.integer("head_dim");
  if (s.heads_q % s.heads_kv != 0) ps.fail("heads_q must be a multiple of heads_kv");
  const std::int64_t rq = s.batch * s.heads_q * s.len_q, rk = s.batch * s.heads_kv * s.len_k;
  if ((rq + 2 * rk) * s.head_dim > kMaxElements || s.len_q * s.len_k > kMaxElements)
    ps.fail("the tensors exceed the limit of " + std::to_string(kMaxElements) + " entries");
  const std::string mode = ps.choice("mode"), mask = ps.choice("mask"), causal = ps.choice("causal");
  const double spread = ps.real("spread"), v_mean = ps.real("v_mean");
  double scale = ps.real("scale");
  if (scale == 0) scale = 1 / std::sqrt(static_cast<double>(s.head_dim));
  s.scale = static_cast<float>(scale);  // an fp32 value, as kernels receive it
  s.mask = mask != "none";
  // additive_min: the hidden entries hold the source format's most negative finite value instead of -Inf (torch.finfo(dtype).min,
  // as Hugging Face transformers builds its masks): finite, so the kernel adds it to the score and exponentiates the sum.
  const bool min_mask = mask == "additive_min";
  s.causal = causal == "top_left" ? 1 : causal == "bottom_right" ? 2 : 0;
  const Format& src = *p.source;
  p.m = rq;
  p.k = s.head_dim;
  p.n = s.len_k;
  p.dot = false;
  p.a = Matrix(rq + 2 * rk, s.head_dim);
  p.b = Matrix(s.len_q, s.len_k);
  const Stream sa = stream_for(p.seed, kAttentionId, kOpA), sn = stream_for(p.seed, kAttentionId, kOpA + 1);
  const Stream sm = stream_for(p.seed, kAttentionId, kOpB), sd = stream_for(p.seed, kAttentionId, kOpB + 1);
  const auto d = static_cast<std::uint64_t>(s.head_dim), lk = static_cast<std::uint64_t>(s.len_k);
  const auto q0 = static_cast<std::uint64_t>(rq), v0 = static_cast<std::uint64_t>(rq + rk);
  // The dominant key's score after scaling: mass: log(len_k) (it holds half the mass, the rest 1/(2 len_k) each);
  // aligned: spread (default 8: e^8 over every other key).
  const bool fp8 = ps.choice("fp8_scale") == "amax";
  if (fp8 && src.tag != e4m3.tag) ps.fail("fp8_scale=amax quantises the inputs to e4m3: it needs source=e4m3");
  fill_source(p.a, fp8 ? f32 : src, ctx, [&](std::uint64_t i) {
    const std::uint64_t row = i / d, c = i % d;
    const double g = normal(sa, i);
    const bool is_q = row < q0, is_v = row >= v0;
    if (is_v) {
      if (mode == "cancel") {  // +-(1 + 2^-8 noise): signs alternate along the keys, the weighted sum nearly cancels
        const std::uint64_t j = (row - v0) % lk;
        return (j % 2 == 0 ? 1.0 : -1.0) * (1 + 0x1p-8 * g);
      }
      return v_mean + g;
    }
    const std::uint64_t j = is_q ? 0 : (row - q0) % lk;
    // A direction shared by every query and the dominant key of a head: its first coordinate.
    const double dir = c == 0 ? 1.0 : 0.0;
    if (mode == "overflow") return spread * g;  // |s x| ~ spread^2: beyond exp's range unless shifted
    if (mode == "cancel") return 0.25 * g;      // near-uniform probabilities
    if (mode == "aligned" || mode == "mass") {
      const std::uint64_t star = uniform_below(sd, (row - q0) / lk, lk);
      const double lead = mode == "mass" ? std::log(static_cast<double>(s.len_k)) : spread;
      if (is_q) return dir + 0x1p-6 * g;  // q ~ e_0
      if (j == star) return dir * lead / static_cast<double>(static_cast<float>(scale));  // s q.k* ~ lead
      return 0x1p-6 * g;  // s q.k ~ 0
    }
    return std::sqrt(spread) * g;  // normal: q.k ~ N(0, d spread^2), s q.k ~ N(0, spread^2)
  });
  // fp8_scale=amax (FP8 with per-tensor scaling, as Transformer Engine and cuDNN's FP8 attention quantise): each of Q, K,
  // V drawn as above, then quantised per tensor as x8 = RN_e4m3(x / d) with d = RN_f32(amax |x| / 448) (448: e4m3's
  // largest finite value); the values stored are the e4m3 codes, the descale factors d are the call's.
  if (fp8) {
    const std::int64_t bounds[4] = {0, rq, rq + rk, rq + 2 * rk};
    const char* names[3] = {"attention_descale_q", "attention_descale_k", "attention_descale_v"};
    for (int t = 0; t < 3; ++t) {
      double amax = 0;
      for (std::int64_t r = bounds[t]; r < bounds[t + 1]; ++r)
        for (std::int64_t c = 0; c < s.head_dim; ++c) amax = std::max(amax, std::fabs(p.a(r, c)));
      const double dsc = amax > 0 ? static_cast<double>(static_cast<float>(amax / e4m3.max_finite())) : 1.0;
      for (std::int64_t r = bounds[t]; r < bounds[t + 1]; ++r)
        for (std::int64_t c = 0; c < s.head_dim; ++c)
          p.a(r, c) = to_source(e4m3, std::clamp(p.a(r, c) / dsc, -e4m3.max_finite(), e4m3.max_finite()));
      p.achieved[names[t]] = dsc;
    }
  }
  std::int64_t fully = 0;
  for (std::int64_t i = 0; i < s.len_q; ++i) {
    std::int64_t masked = 0;
    for (std::int64_t j = 0; j < s.len_k; ++j) {
      const auto at = static_cast<std::uint64_t>(i * s.len_k + j);
      double m = 0;
      if (s.mask) m = bernoulli(sm, at, 0.125) ? kNegInf : to_source(src, -4 * uniform01(sn, at));  // fp32 values of the source format
      if (s.mask && i % 16 == 5) m = kNegInf;  // a fully masked row
      bool hidden = m == kNegInf;
      if (hidden && min_mask) m = -src.max_finite();  // exact in fp32: every source format is at most binary32
      if (s.causal == 1) hidden = hidden || j > i;
      if (s.causal == 2) hidden = hidden || j > i + s.len_k - s.len_q;
      p.b(i, j) = m;
      masked += hidden;
    }
    fully += masked == s.len_k;
  }
  p.achieved["attention_batch"] = static_cast<double>(s.batch);
  p.achieved["attention_heads_q"] = static_cast<double>(s.heads_q);
  p.achieved["attention_heads_kv"] = static_cast<double>(s.heads_kv);
  p.achieved["attention_len_q"] = static_cast<double>(s.len_q);
  p.achieved["attention_len_k"] = static_cast<double>(s.len_k);
  p.achieved["attention_head_dim"] = static_cast<double>(s.head_dim);
  p.achieved["attention_scale"] = s.scale;
  p.achieved["attention_mask"] = s.mask ? 1 : 0;
  p.achieved["attention_causal"] = s.causal;
  p.achieved["attention_fully_masked_queries"] = static_cast<double>(fully);
}

}  // namespace

std::vector<Family> attention_families() {
  GeneratorInfo g;
  g.name = "attention";
  g.summary = "Q, K, V of a scaled-dot-product attention (stacked in A), an additive mask (B), a causal alignment";
  g.details = "mode normal: q, k, v ~ N(0, 1), scores s q.k ~ N(0, spread^2); aligned: every query near e_0, one key per kv "
              "head s q.k ~ spread (one dominant score); overflow: q, k ~ spread N(0, 1) (scores ~ spread^2: beyond exp's range "
              "unless the max is subtracted; f16 inputs large); mass: one key of score log(len_k) (half the mass), the others "
              "near 0 (many small probabilities summing to the other half; with v_mean, V of one sign: a lost or doubled small mass moves O "
              "coherently); cancel: v = +-(1 + 2^-8 N(0,1)) alternating along "
              "the keys and near-uniform probabilities (the output nearly cancels). mask additive: -4 u in the source format (an fp32 value), -Inf with "
              "probability 1/8, every query i = 5 mod 16 fully masked; additive_min: the source format's most negative finite value (torch.finfo(dtype).min) instead of -Inf. causal: recorded for the call (bottom_right with len_q > "
              "len_k leaves the first rows fully masked). scale 0: 1/sqrt(head_dim); rounded to fp32. fp8_scale amax: each of Q, K, V "
              "quantised per tensor to e4m3 by its amax (descale RN_f32(amax / 448)), the factors the call's.";
  g.reference = "this project (docs/attention.md, \"Generators\"; issue 41)";
  g.params = {p_int("batch", 1, 1, 64, "batch"),
              p_int("heads_q", 1, 1, 256, "query heads"),
              p_int("heads_kv", 1, 1, 256, "key / value heads (heads_q a multiple of it: grouped-query attention)"),
              p_int("len_q", 64, 1, kMaxDim, "queries per head"),
              p_int("len_k", 64, 1, kMaxDim, "keys per head"),
              p_int("head_dim", 64, 1, 1024, "head dimension of Q, K and V"),
              p_choice("mode", "normal", {"normal", "aligned", "overflow", "mass", "cancel"}, "how Q, K and V are drawn"),
              p_real("spread", 1, 0, 1e4, "normal: the scores' deviation; aligned: the dominant score; overflow: the inputs' deviation"),
              p_real("v_mean", 0, -1e4, 1e4, "added to every V entry (not mode cancel): V of one sign, whose weighted sum does not cancel"),
              p_choice("mask", "none", {"none", "additive", "additive_min"},
                       "the additive mask (additive_min: the source format's most negative finite value where additive puts -Inf)"),
              p_choice("causal", "none", {"none", "top_left", "bottom_right"}, "the causal mask's alignment (the kernel call's)"),
              p_real("scale", 0, 0, 1e30, "s (0: 1/sqrt(head_dim)), rounded to fp32"),
              p_seed(),
              p_format("source", "f16", {"f32", "f16", "bf16", "e4m3"}, "format every input is exactly representable in"),
              p_choice("fp8_scale", "none", {"none", "amax"},
                       "amax (source=e4m3): Q, K, V each quantised per tensor to e4m3 with descale d = RN_f32(amax / 448); the "
                       "call's descale factors (FP8 attention)")};
  Family f{g, make_attention};
  f.non_finite = true;  // the mask's -Inf
  return {f};
}

}  // namespace detail

bool is_attention_problem(const Problem& p) { return p.achieved.count("attention_len_q") != 0; }

AttentionProblemShape attention_shape(const Problem& p) {
  if (!is_attention_problem(p)) throw std::invalid_argument("'" + p.spec + "' is not an attention problem");
  const auto at = [&](const char* k) { return p.achieved.at(k); };
  AttentionProblemShape s;
  s.batch = static_cast<std::int64_t>(at("attention_batch"));
  s.heads_q = static_cast<std::int64_t>(at("attention_heads_q"));
  s.heads_kv = static_cast<std::int64_t>(at("attention_heads_kv"));
  s.len_q = static_cast<std::int64_t>(at("attention_len_q"));
  s.len_k = static_cast<std::int64_t>(at("attention_len_k"));
  s.head_dim = static_cast<std::int64_t>(at("attention_head_dim"));
  s.scale = at("attention_scale");
  s.mask = at("attention_mask") != 0;
  s.causal = static_cast<int>(at("attention_causal"));
  if (const auto it = p.achieved.find("attention_descale_q"); it != p.achieved.end()) {
    s.descaled = true;
    s.descale_q = it->second;
    s.descale_k = at("attention_descale_k");
    s.descale_v = at("attention_descale_v");
  }
  return s;
}

std::string attention_base2_mask_domain(const Problem& p) {
  const AttentionProblemShape ps = attention_shape(p);
  // The base-2 folded form computes RN(mask / s) in fp32: past s FLT_MAX it is -Inf, and a query whose every visible key
  // carries such a mask is fully masked in the kernel's arithmetic (O 0, LSE +Inf; a backward overflows RN(L log2 e)
  // too) while its exact softmax is of the scores. The declaration covers masks within that range on at least one visible
  // key of every query (docs/attention.md, "Bound", step 10); a far key past it alone is covered (its exp is 0).
  if (!ps.mask) return {};
  const double limit = static_cast<double>(ps.scale) * static_cast<double>(std::numeric_limits<float>::max());
  const std::int64_t off = ps.causal == 2 ? ps.len_k - ps.len_q : 0;
  for (std::int64_t i = 0; i < ps.len_q; ++i) {
    bool finite_seen = false, within = false;
    double smallest = std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < ps.len_k && !within; ++j) {
      if (ps.causal != 0 && j > i + off) break;
      const double m = p.b(i, j);
      if (m == -std::numeric_limits<double>::infinity()) continue;
      finite_seen = true;
      within = std::fabs(m) <= limit;
      smallest = std::min(smallest, std::fabs(m));
    }
    if (finite_seen && !within)
      return fmt::format("query {} sees only keys whose mask passes s FLT_MAX = {:.4g} (the least |mask| there {:.4g}): the kernel's "
                         "base-2 folded form makes RN(mask / s) -Inf there, a fully masked row its declaration does not cover",
                         i, limit, smallest);
  }
  return {};
}

}  // namespace fpcert
