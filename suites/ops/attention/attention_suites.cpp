// suites/ops/attention/attention_suites.cpp — the attention suites (docs/attention.md, "Suites"): lengths that are not
// multiples of any tile (1, 17, 77, 200), head dims 64 and 128 (256 in `attention`), batch 2 with 4 query heads over
// 4, 2 and 1 key/value heads, causal masks top-left and bottom-right (fully masked rows), an additive mask, and every
// generator mode (a dominant key, scores beyond exp's range before the shift, many small probabilities, V that cancels);
// inputs made in the kernel's input format.
#include <fmt/format.h>

#include "suites/ops/attention/attention_operation.hpp"

namespace fpcert {

std::vector<CaseSpec> attention_cases(const std::string& suite, const AttentionTraits& t) {
  const bool quick = suite == "attention_quick";
  const std::string src = t.input->tag == "f16" || t.input->tag == "bf16" || t.input->tag == "e4m3" ? std::string(t.input->tag) : "f32";
  // A kernel that takes FP8 descale factors gets every case quantised per tensor (fp8_scale=amax): its descales are the call's.
  const std::string s = ",source=" + src + (t.descales && src == "e4m3" ? ",fp8_scale=amax" : "");
  std::vector<CaseSpec> c;
  auto add = [&](std::string id, std::string shape, std::string extra, int seed, std::string note, std::string family) {
    c.push_back({std::move(id), fmt::format("attention:batch=2,heads_q=4,{}{},seed={}{}", shape, extra, seed, s), BoundVariant::Independent,
                 std::move(note), std::move(family)});
  };
  add("normal_l17_kv2", "heads_kv=2,len_q=17,len_k=17,head_dim=64", "", 71, "17 x 17, grouped heads 4 / 2", "shape");
  add("normal_l200", "heads_kv=4,len_q=200,len_k=200,head_dim=64", "", 72,
      "200 keys: three blocks of 64 and a partial one (the running max grows across blocks)", "shape");
  add("causal_bottom_right", "heads_kv=1,len_q=77,len_k=17,head_dim=64", ",causal=bottom_right", 73,
      "len_q 77 > len_k 17, bottom-right: the first 60 queries see no key (fully masked rows)", "mask");
  add("additive_mask", "heads_kv=2,len_q=33,len_k=200,head_dim=64", ",mask=additive", 74,
      "an additive mask (-4 u, -Inf with probability 1/8, queries 5 mod 16 fully masked)", "mask");
  add("cancel_v", "heads_kv=4,len_q=33,len_k=200,head_dim=64", ",mode=cancel", 75,
      "V = +-(1 + 2^-8 noise) alternating, near-uniform probabilities: O nearly cancels", "cancel");
  if (quick) return c;
  add("normal_l1", "heads_kv=4,len_q=1,len_k=1,head_dim=64", "", 76, "one query, one key: O = v exactly", "shape");
  add("normal_l77_d128_kv1", "heads_kv=1,len_q=77,len_k=77,head_dim=128", "", 77, "77 x 77, head_dim 128, one kv head", "shape");
  add("normal_l77_d256", "heads_kv=2,len_q=77,len_k=77,head_dim=256", "", 78, "head_dim 256", "shape");
  add("causal_top_left", "heads_kv=2,len_q=77,len_k=77,head_dim=64", ",causal=top_left", 79, "causal, top-left (PyTorch's is_causal)",
      "mask");
  add("causal_bottom_right_long", "heads_kv=2,len_q=17,len_k=200,head_dim=64", ",causal=bottom_right", 80,
      "bottom-right with len_k > len_q: the last query sees every key", "mask");
  add("aligned_key", "heads_kv=2,len_q=17,len_k=200,head_dim=64", ",mode=aligned,spread=8", 81,
      "every query aligned with one key per head (score 8 above the rest)", "dominant");
  add("scores_overflow", "heads_kv=2,len_q=33,len_k=77,head_dim=64", src == "f16" ? ",mode=overflow,spread=6" : ",mode=overflow,spread=10",
      82, src == "f16" ? "scores ~ 36: e^z beyond f16's range unless the max is subtracted" : "scores ~ 100: e^z beyond f32's range unless shifted",
      "range");
  add("mass_long", "heads_kv=1,len_q=9,len_k=1000,head_dim=64", ",mode=mass", 83,
      "one key holds half the mass, 999 small probabilities the other half", "mass");
  add("mass_v_positive", "heads_kv=1,len_q=9,len_k=1000,head_dim=64", ",mode=mass,v_mean=3", 85,
      "mass_long with V ~ 3 + N(0, 1): the 999 small probabilities (~1/2000 each) move O coherently, so a kernel that loses or "
      "doubles them (an FP8 P rounded as a probability, below e4m3's 2^-9) is off by a fraction of O, not by a random walk",
      "mass");
  add("additive_mask_min", "heads_kv=2,len_q=33,len_k=200,head_dim=64", ",mask=additive_min", 84,
      "the additive mask with the input format's most negative finite value where -Inf was (torch.finfo(dtype).min): far keys "
      "(docs/attention.md, \"Far keys\"); queries 5 mod 16 see only such keys, whose exact softmax is of the scores",
      "mask");
  return c;
}

std::string attention_suite_name(const SuiteInfo& suite) {
  if (suite.operation == Operation::Attention) return suite.name;
  return suite.name == "quick" ? "attention_quick" : "attention";
}

std::vector<SuiteInfo> attention_suites() {
  auto make = [](std::string name, std::string description) {
    SuiteInfo s;
    s.name = name;
    s.description = std::move(description);
    s.operation = Operation::Attention;
    s.cases = [name](const SuiteContext&) { return attention_cases(name, AttentionTraits{}); };  // an f16 kernel, for listings
    return s;
  };
  return {make("attention",
               "scaled-dot-product attention: lengths 1 .. 1000 off every tile, head dims 64 / 128 / 256, grouped heads, causal "
               "top-left and bottom-right (fully masked rows), an additive mask, a dominant key, scores beyond exp's range, many "
               "small probabilities, V that cancels; O and LSE per element"),
          make("attention_quick", "attention, five cases of the attention suite")};
}

}  // namespace fpcert
