// suites/ops/attention_bwd/attention_bwd_suites.cpp — the attention backward suites (docs/backward.md, "Attention
// backward", "Suites"): lengths off every tile (1, 17, 77, 200, 300), head dims 64 and 128 (256 in
// `attention_backward`), batch 2 with 4 query heads over 4, 2 and 1 key/value heads (dK, dV summed over groups), causal
// masks top-left and bottom-right (fully masked queries), an additive mask, nearly masked rows, and every generator (a
// dominant key, dO correlated with O: dP - D cancels, structured dO, V that cancels, scores beyond exp's range, many
// small probabilities); inputs made in the kernel's input format.
#include <fmt/format.h>

#include "suites/ops/attention_bwd/attention_bwd_operation.hpp"

namespace fpcert {

std::vector<CaseSpec> attention_bwd_cases(const std::string& suite, const AttentionBwdTraits& t) {
  const bool quick = suite == "attention_backward_quick";
  const std::string src = t.input->tag == "f16" || t.input->tag == "bf16" ? std::string(t.input->tag) : "f32";
  const std::string s = ",source=" + src;
  std::vector<CaseSpec> c;
  auto add = [&](std::string id, std::string shape, std::string extra, int seed, std::string note, std::string family) {
    c.push_back({std::move(id), fmt::format("attention_bwd:batch=2,heads_q=4,{}{},seed={}{}", shape, extra, seed, s),
                 BoundVariant::Independent, std::move(note), std::move(family)});
  };
  add("normal_l17_kv2", "heads_kv=2,len_q=17,len_k=17,head_dim=64", "", 451, "17 x 17, grouped heads 4 / 2 (dK, dV summed over pairs)",
      "shape");
  add("like_o_l77_kv1", "heads_kv=1,len_q=77,len_k=77,head_dim=64", ",mode=aligned,spread=8,grad=like_o", 452,
      "a dominant key per row and dO ~ O: dP - D cancels, one kv head for four query heads", "cancel");
  add("causal_bottom_right", "heads_kv=2,len_q=77,len_k=17,head_dim=64", ",causal=bottom_right", 453,
      "len_q 77 > len_k 17, bottom-right: the first 60 queries see no key (dQ rows 0)", "mask");
  add("nearly_masked", "heads_kv=4,len_q=33,len_k=200,head_dim=64", ",mask=nearly,grad=structured", 454,
      "an additive mask, queries 1 mod 3 with two keys left, structured dO", "mask");
  add("normal_l200_d128", "heads_kv=2,len_q=200,len_k=200,head_dim=128", "", 455,
      "200 x 200 (three key blocks of 64 and a partial one), head_dim 128", "shape");
  if (quick) return c;
  add("normal_l1", "heads_kv=4,len_q=1,len_k=1,head_dim=64", "", 456, "one query, one key: P = 1 within the LSE's rounding", "shape");
  add("causal_top_left_l300", "heads_kv=1,len_q=300,len_k=300,head_dim=64", ",causal=top_left", 457,
      "300 x 300, causal top-left (PyTorch's is_causal), one kv head", "mask");
  add("causal_top_left_mha", "heads_kv=4,len_q=131,len_k=131,head_dim=64", ",causal=top_left,grad=structured", 466,
      "131 x 131, causal top-left with a kv head per query head (the form PyTorch's SDPA backward ops take), structured dO", "mask");
  add("causal_bottom_right_long", "heads_kv=2,len_q=17,len_k=300,head_dim=128", ",causal=bottom_right,grad=like_o", 458,
      "bottom-right with len_k > len_q: the last query sees every key; dO ~ O", "mask");
  add("additive_mask", "heads_kv=2,len_q=77,len_k=200,head_dim=64", ",mask=additive", 459,
      "an additive mask (-4 u, -Inf with probability 1/8, queries 5 mod 16 fully masked)", "mask");
  add("normal_l77_d256", "heads_kv=2,len_q=77,len_k=77,head_dim=256", "", 460, "head_dim 256", "shape");
  add("structured_l300", "heads_kv=4,len_q=300,len_k=300,head_dim=64", ",grad=structured", 461,
      "structured dO (small integers over 8) over 300 x 300", "structured");
  add("cancel_v", "heads_kv=4,len_q=33,len_k=200,head_dim=64", ",mode=cancel", 462,
      "V = +-(1 + 2^-8 noise) alternating, near-uniform P: O and D nearly cancel", "cancel");
  add("scores_overflow", "heads_kv=2,len_q=33,len_k=77,head_dim=64", src == "f16" ? ",mode=overflow,spread=6" : ",mode=overflow,spread=10",
      463, "scores beyond exp's range before the LSE is subtracted", "range");
  add("mass_long", "heads_kv=1,len_q=9,len_k=300,head_dim=128", ",mode=mass,grad=like_o", 464,
      "one key holds half the mass, 299 small probabilities the other half; dO ~ O", "mass");
  add("additive_mask_min", "heads_kv=2,len_q=77,len_k=200,head_dim=64", ",mask=additive_min", 465,
      "the additive mask with the input format's most negative finite value where -Inf was (torch.finfo(dtype).min): far keys, "
      "their P below e^-110 (docs/backward.md); queries 5 mod 16 see only such keys (not covered by the bound)",
      "mask");
  return c;
}

std::string attention_bwd_suite_name(const SuiteInfo& suite) {
  if (suite.operation == Operation::AttentionBackward) return suite.name;
  return suite.name == "quick" ? "attention_backward_quick" : "attention_backward";
}

std::vector<SuiteInfo> attention_bwd_suites() {
  auto make = [](std::string name, std::string description) {
    SuiteInfo s;
    s.name = name;
    s.description = std::move(description);
    s.operation = Operation::AttentionBackward;
    s.cases = [name](const SuiteContext&) { return attention_bwd_cases(name, AttentionBwdTraits{}); };  // an f16 kernel, for listings
    return s;
  };
  return {make("attention_backward",
               "attention backward (dQ, dK, dV from Q, K, V, the saved O and LSE, dO): lengths 1 .. 300 off every tile, head dims 64 / "
               "128 / 256, grouped heads, causal top-left and bottom-right (fully masked queries), additive and nearly masked rows, a "
               "dominant key with dO ~ O (dP - D cancels), structured dO, V that cancels, scores beyond exp's range; per element"),
          make("attention_backward_quick", "attention backward, five cases of the attention_backward suite")};
}

}  // namespace fpcert
