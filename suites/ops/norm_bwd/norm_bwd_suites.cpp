// suites/ops/norm_bwd/norm_bwd_suites.cpp — the LayerNorm / RMSNorm backward suites (docs/backward.md, "Suites"): uniform
// rows at lengths that split a warp, a large mean against a small spread (x - mean cancels, as in activations), dy
// correlated with xh (g - mean(g) - xh mean(g xh) cancels), gamma with mixed signs and magnitudes, no gamma, tiny dy
// (subnormal results), 1 .. 8192 rows (dgamma and dbeta sum over them), and NaNs in dy; inputs made in the kernel's
// input format.
#include <fmt/format.h>

#include "suites/ops/norm_bwd/norm_bwd_operation.hpp"

namespace fpcert {

std::vector<CaseSpec> norm_bwd_cases(const std::string& suite, const NormBwdTraits& t) {
  const bool quick = suite == "norm_backward_quick";
  const std::string src = t.input->tag == "f16" || t.input->tag == "bf16" ? std::string(t.input->tag) : "f32";
  const bool f16in = src == "f16";
  const std::string s = ",source=" + src;
  std::vector<CaseSpec> c;
  auto add = [&](std::string id, std::string spec, std::string note, std::string family) {
    c.push_back({std::move(id), std::move(spec), BoundVariant::Independent, std::move(note), std::move(family)});
  };
  const std::vector<int> lengths = quick ? std::vector<int>{33, 1000} : std::vector<int>{1, 7, 33, 1000, 4097};
  for (int n : lengths) {
    const int rows = n >= 4097 ? 16 : n >= 1000 ? 64 : 128;
    add(fmt::format("uniform_n{}", n), fmt::format("norm_bwd:rows={},cols={},offset=0.5,spread=2,seed={}{}", rows, n, 70 + n, s),
        "x uniform in [-0.5, 1.5], dy uniform in [-1, 1], gamma +-2^-4 .. 2^5", "uniform");
  }
  // |mean| / spread as the forward's suite has it: about 2500 (f32), 1000 (f16), 250 (bf16).
  const std::string big = src == "f32" ? "offset=1e4,spread=4" : f16in ? "offset=1024,spread=2" : "offset=256,spread=4";
  add("mean_large", fmt::format("norm_bwd:rows=64,cols=256,{},seed=71{}", big, s),
      "mean >> spread: x - mean cancels (activations), xh carries the rounding of the saved mean", "cancel");
  add("dy_correlated", fmt::format("norm_bwd:rows=64,cols=1000,offset=0,spread=2,dy=correlated,noise=1e-2,seed=72{}", s),
      "g = c + xh + 1e-2 noise: g - mean(g) - xh mean(g xh) cancels to the noise (dx ~ 1e-2 of its terms)", "cancel");
  if (!quick) {
    add("dy_correlated_tight", fmt::format("norm_bwd:rows=64,cols=257,offset=0,spread=2,dy=correlated,noise=1e-4,seed=73{}", s),
        "the same with 1e-4 noise: the combination's rounding shows at 1e-4 of its terms", "cancel");
    add("affine_none", fmt::format("norm_bwd:rows=64,cols=1000,offset=0.5,spread=2,affine=none,seed=74{}", s), "no gamma (gamma = 1)",
        "affine");
    add("tiny_dy", fmt::format("norm_bwd:rows=64,cols=256,offset=0,spread=2,dscale={},seed=75{}", f16in ? "1e-6" : "1e-37", s),
        f16in ? "dy among fp16's subnormals" : "dy near 1e-37: dx and dgamma near fp32's smallest normal", "range");
    add("rows_8192", fmt::format("norm_bwd:rows=8192,cols=96,offset=0.5,spread=2,seed=76{}", s),
        "8192 rows: dgamma and dbeta each sum 8192 terms (an f16 column sum stalls)", "batch");
    add("rows_1", fmt::format("norm_bwd:rows=1,cols=1000,offset=0.5,spread=2,seed=77{}", s), "one row: dgamma_j = dy_j xh_j", "batch");
  } else {
    add("rows_2048", fmt::format("norm_bwd:rows=2048,cols=96,offset=0.5,spread=2,seed=78{}", s), "2048 rows: the column sums' accumulation",
        "batch");
  }
  if (t.input->has_inf())
    add("specials", fmt::format("norm_bwd:rows=30,cols=33,offset=0.5,spread=2,seed=79{}", s), "a NaN put into dy of every third row by the runner",
        "specials");
  return c;
}

std::string norm_bwd_suite_name(const SuiteInfo& suite) {
  if (suite.operation == Operation::NormBackward) return suite.name;
  return suite.name == "quick" ? "norm_backward_quick" : "norm_backward";
}

std::vector<SuiteInfo> norm_bwd_suites() {
  auto make = [](std::string name, std::string description) {
    SuiteInfo s;
    s.name = name;
    s.description = std::move(description);
    s.operation = Operation::NormBackward;
    s.cases = [name](const SuiteContext&) { return norm_bwd_cases(name, NormBwdTraits{}); };  // an fp32 LayerNorm, for listings
    return s;
  };
  return {make("norm_backward",
               "LayerNorm and RMSNorm backward (dx, dgamma, dbeta): lengths 1 .. 4097, mean >> spread, dy correlated with xh "
               "(cancellation), no gamma, tiny dy, 1 and 8192 rows (the column sums), NaNs in dy"),
          make("norm_backward_quick", "LayerNorm / RMSNorm backward, a few cases of the norm_backward suite")};
}

}  // namespace fpcert
