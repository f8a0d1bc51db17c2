// suites/ops/softmax_bwd/softmax_bwd_suites.cpp — the softmax backward suites (docs/backward.md, "Softmax and log-softmax
// backward", "Suites"): y a real forward output (softmax or log-softmax, as the kernel declares) in the kernel's y format,
// rows and lengths that do not split into warps (1, 17, 77, 1000, 4097 columns), random and one-hot dy, dy correlated with
// y so that dy_j - D cancels, a dominant probability, long rows of small probabilities, masked entries, scales that round
// (large and small), and special values.
#include <fmt/format.h>

#include "suites/ops/softmax_bwd/softmax_bwd_operation.hpp"

namespace fpcert {

std::vector<CaseSpec> softmax_bwd_cases(const std::string& suite, const SoftmaxBwdTraits& t) {
  const bool quick = suite == "softmax_backward_quick";
  const std::string src = t.y_input->tag == "f16" || t.y_input->tag == "bf16" ? std::string(t.y_input->tag) : "f32";
  const std::string s = fmt::format(",fn={},source={}", to_string(t.fn), src);
  std::vector<CaseSpec> c;
  auto add = [&](std::string id, std::string spec, std::string note, std::string family) {
    c.push_back({std::move(id), "softmax_bwd:" + spec + s, BoundVariant::Independent, std::move(note), std::move(family)});
  };
  const std::vector<int> lengths = quick ? std::vector<int>{77} : std::vector<int>{1, 17, 77, 1000, 4097};
  for (int n : lengths) {
    const int rows = n >= 4097 ? 7 : n >= 1000 ? 33 : 65;
    add(fmt::format("random_n{}", n), fmt::format("rows={},cols={},spread=8,scale=0.7,seed={}", rows, n, 450 + n),
        "logits uniform in [-4, 4], dy uniform in [-1, 1], s = 0.7 (rounds)", "random");
  }
  add("cancel", "rows=33,cols=1000,spread=8,dy=cancel,dyscale=1000,seed=451",
      "dy_j = k (1 + 2^-9 u_j), |k| <= 1000: dy_j - D (log-softmax dy_j - e^{y_j} G) cancels nine bits", "cancel");
  if (!quick) {
    add("cancel_long", "rows=7,cols=4097,spread=2,dy=cancel,dyscale=1000,noise=0.004,scale=0.7,seed=452",
        "4097 entries of dy correlated with y: D's accumulation error shows through the cancellation", "cancel");
    add("dominant", "rows=33,cols=1000,mode=dominant,spread=12,seed=453",
        "one logit 12 above the rest: one probability near 0.994, the others near 6e-6 (subnormal in f16)", "dominant");
    add("onehot", "rows=65,cols=77,spread=8,dy=onehot,seed=454", "dy = -1 at one entry (a cross-entropy's gradient)", "onehot");
    add("long", "rows=7,cols=4097,spread=2,seed=455", "4097 small probabilities (near 2.4e-4 each)", "long");
    add("scale_small", fmt::format("rows=33,cols=1000,spread=8,scale={},seed=456", 1 / std::sqrt(128.0)),
        "s = 1/sqrt(128) rounded to fp32 (attention's scale)", "scale");
  }
  add("masked", "rows=33,cols=1000,spread=8,mask=random,seed=457",
      "half the logits masked: zero probabilities (softmax) or -Inf log-probabilities with dy = 0 (log-softmax)", "mask");
  add("scale_large", "rows=33,cols=1000,spread=8,scale=11.3137085,dyscale=1000,seed=458",
      "s = sqrt(128) rounded to fp32 and dy up to 1000: large gradients", "scale");
  if (t.dy_input->has_inf())
    add("specials", "rows=16,cols=33,spread=8,seed=459", "a NaN or +Inf dy, a zero probability or a masked entry put in by the runner",
        "specials");
  return c;
}

std::string softmax_bwd_suite_name(const SuiteInfo& suite) {
  if (suite.operation == Operation::SoftmaxBackward) return suite.name;
  return suite.name == "quick" ? "softmax_backward_quick" : "softmax_backward";
}

std::vector<SuiteInfo> softmax_bwd_suites() {
  auto make = [](std::string name, std::string description) {
    SuiteInfo s;
    s.name = name;
    s.description = std::move(description);
    s.operation = Operation::SoftmaxBackward;
    s.cases = [name](const SuiteContext&) { return softmax_bwd_cases(name, SoftmaxBwdTraits{}); };  // fp32 softmax, for listings
    return s;
  };
  return {make("softmax_backward",
               "softmax and log-softmax backward over rows: lengths 1 .. 4097, random and one-hot dy, dy_j - D cancelling, a "
               "dominant probability, long rows, masked entries, scales 1/sqrt(128) .. sqrt(128), NaN and Inf gradients"),
          make("softmax_backward_quick", "softmax backward, a few cases of the softmax_backward suite")};
}

}  // namespace fpcert
