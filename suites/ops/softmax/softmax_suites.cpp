// suites/ops/softmax/softmax_suites.cpp — the softmax suites (docs/softmax.md, "Suites"): uniform logits at lengths that
// split a warp, large spreads, logits near exp's overflow in fp32 and fp16, ties, a dominant entry, a scale that forces
// rounding, causal, random and fully masked rows, and special values; the logits made in the kernel's input format.
#include <fmt/format.h>

#include "suites/ops/softmax/softmax_operation.hpp"

namespace fpcert {

std::vector<CaseSpec> softmax_cases(const std::string& suite, const SoftmaxTraits& t) {
  const bool quick = suite == "softmax_quick";
  const std::string src = t.x_input->tag == "f16" || t.x_input->tag == "bf16" ? std::string(t.x_input->tag) : "f32";
  const std::string s = ",source=" + src;
  std::vector<CaseSpec> c;
  auto add = [&](std::string id, std::string spec, std::string note, std::string family) {
    c.push_back({std::move(id), std::move(spec), BoundVariant::Independent, std::move(note), std::move(family)});
  };
  const std::vector<int> lengths = quick ? std::vector<int>{33, 1000} : std::vector<int>{1, 7, 32, 33, 1000, 4097};
  for (int n : lengths) {
    const int rows = n >= 4097 ? 16 : n >= 1000 ? 64 : 128;
    add(fmt::format("uniform_n{}", n), fmt::format("softmax:rows={},cols={},spread=8,seed={}{}", rows, n, 40 + n, s),
        "logits uniform in [-4, 4]", "uniform");
  }
  add("near_overflow", fmt::format("softmax:rows=64,cols=1000,spread=8,offset=95,seed=41{}", s),
      "logits in [91, 99]: every exp(x) beyond fp32's range (the max subtraction's case)", "range");
  if (!quick) {
    add("near_overflow_f16", fmt::format("softmax:rows=64,cols=1000,spread=4,offset=12,seed=42{}", s),
        "logits in [10, 14]: exp(x) beyond fp16's range", "range");
    add("spread_200", fmt::format("softmax:rows=64,cols=1000,spread=200,seed=43{}", s),
        "logits in [-100, 100]: most weights far below the largest, many below fp32's normal range", "range");
    add("spread_3000", fmt::format("softmax:rows=32,cols=1000,spread=3000,seed=44{}", s),
        "logits in [-1500, 1500]: nearly one entry per row carries the weight", "range");
    add("ties", fmt::format("softmax:rows=64,cols=1000,mode=ties,spread=2,seed=45{}", s),
        "three logit values per row, every fourth row all equal (y = 1/n)", "ties");
    add("scale_0.7", fmt::format("softmax:rows=64,cols=1000,spread=16,scale=0.7,seed=46{}", s),
        "scale 0.7 (an fp32 value): RN(s x) rounds", "scale");
    add("mask_causal", fmt::format("softmax:rows=64,cols=1000,spread=8,mask=causal,seed=47{}", s),
        "a causal mask: row r keeps its first ceil((r + 1) cols / rows) entries", "mask");
    add("mask_random", fmt::format("softmax:rows=64,cols=1000,spread=8,mask=random,seed=48{}", s),
        "half of every row masked at random", "mask");
  }
  add("dominant", fmt::format("softmax:rows=64,cols=1000,mode=dominant,spread=20,seed=49{}", s),
      "one entry 20 above the rest: the others' weights near 2e-9 (an all-zeros output passes a 1e-2 tolerance)", "dominant");
  add("mask_rows", fmt::format("softmax:rows=64,cols=1000,spread=8,mask=rows,seed=50{}", s),
      "random masks, every fourth row fully masked (the declared policy)", "mask");
  if (t.x_input->has_inf())
    add("specials", fmt::format("softmax:rows=64,cols=33,spread=8,seed=51{}", s),
        "a NaN, a +Inf or a -Inf logit put into rows by the runner", "specials");
  return c;
}

std::string softmax_suite_name(const SuiteInfo& suite) {
  if (suite.operation == Operation::Softmax) return suite.name;
  return suite.name == "quick" ? "softmax_quick" : "softmax";
}

std::vector<SuiteInfo> softmax_suites() {
  auto make = [](std::string name, std::string description) {
    SuiteInfo s;
    s.name = name;
    s.description = std::move(description);
    s.operation = Operation::Softmax;
    s.cases = [name](const SuiteContext&) { return softmax_cases(name, SoftmaxTraits{}); };  // an fp32 softmax, for listings
    return s;
  };
  return {make("softmax",
               "softmax and log-softmax over rows: lengths 1 .. 4097, spreads to 3000, logits near exp's overflow (fp32, "
               "fp16), ties, a dominant entry, a rounding scale, causal/random/fully masked rows, NaN and Inf logits"),
          make("softmax_quick", "softmax, a few cases of the softmax suite")};
}

}  // namespace fpcert
