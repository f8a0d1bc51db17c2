// suites/ops/norm/norm_suites.cpp — the LayerNorm / RMSNorm suites (docs/normalization.md, "Suites"): uniform rows at
// lengths that split a warp, a large mean against a small spread (the one-pass variance's cancellation), constant rows
// (var = 0), a spread below sqrt(eps), tiny values, squares near the overflow of the compute format, without gamma/beta
// and with gamma only, and special values; inputs made in the kernel's input format.
#include <fmt/format.h>

#include "suites/ops/norm/norm_operation.hpp"

namespace fpcert {

std::vector<CaseSpec> norm_cases(const std::string& suite, const NormTraits& t) {
  const bool quick = suite == "norm_quick";
  const std::string src = t.x_input->tag == "f16" || t.x_input->tag == "bf16" ? std::string(t.x_input->tag) : "f32";
  const bool f16in = src == "f16";
  const std::string s = ",source=" + src;
  std::vector<CaseSpec> c;
  auto add = [&](std::string id, std::string spec, std::string note, std::string family) {
    c.push_back({std::move(id), std::move(spec), BoundVariant::Independent, std::move(note), std::move(family)});
  };
  const std::vector<int> lengths = quick ? std::vector<int>{33, 1000} : std::vector<int>{1, 7, 32, 33, 1000, 4097};
  for (int n : lengths) {
    const int rows = n >= 4097 ? 16 : n >= 1000 ? 64 : 128;
    add(fmt::format("uniform_n{}", n), fmt::format("norm:rows={},cols={},offset=0.5,spread=2,seed={}{}", rows, n, 60 + n, s),
        "x uniform in [-0.5, 1.5], gamma and beta drawn", "uniform");
  }
  // |mean| / spread: about 2500 (f32), 1000 (f16), 250 (bf16: what 8 bits of precision leave of a spread).
  const std::string big = src == "f32" ? "offset=1e4,spread=4" : f16in ? "offset=1024,spread=2" : "offset=256,spread=4";
  add("mean_large", fmt::format("norm:rows=64,cols=256,{},seed=61{}", big, s),
      "mean >> spread: E[x^2] - E[x]^2 cancels (the one-pass variance's trap), the two-pass bound stays small", "cancel");
  add("tiny_spread", fmt::format("norm:rows=64,cols=256,offset=0,spread=2e-3,seed=62{}", s),
      "var ~ 3e-7 < eps = 1e-5: eps decides the scale (inside vs outside the square root)", "eps");
  if (!quick) {
    add("constant", fmt::format("norm:rows=64,cols=1000,mode=constant,offset=3,spread=2,seed=63{}", s),
        "even rows constant (var = 0: y = beta exactly), odd rows uniform", "eps");
    add("tiny", fmt::format("norm:rows=64,cols=256,offset=0,spread={},seed=64{}", f16in ? "1e-6" : "1e-30", s),
        f16in ? "values among fp16's subnormals" : "values near 1e-30: squares below fp32's subnormals, eps dominates", "range");
    add("near_overflow", fmt::format("norm:rows=32,cols=1000,offset=0,spread={},seed=65{}", f16in ? "1.2e5" : "1e17", s),
        f16in ? "values up to 6e4, near fp16's largest" : "values up to 5e16: the sum of squares near 1e36, below fp32's overflow",
        "range");
    add("affine_none", fmt::format("norm:rows=64,cols=1000,offset=0.5,spread=2,affine=none,seed=66{}", s), "no gamma, no beta", "affine");
    add("affine_gamma", fmt::format("norm:rows=64,cols=1000,offset=0.5,spread=2,affine=gamma,seed=67{}", s), "gamma only (RMSNorm's usual form)",
        "affine");
  }
  if (t.x_input->has_inf())
    add("specials", fmt::format("norm:rows=30,cols=33,offset=0.5,spread=2,seed=68{}", s), "a NaN or a +Inf put into rows by the runner",
        "specials");
  return c;
}

std::string norm_suite_name(const SuiteInfo& suite) {
  if (suite.operation == Operation::Norm) return suite.name;
  return suite.name == "quick" ? "norm_quick" : "norm";
}

std::vector<SuiteInfo> norm_suites() {
  auto make = [](std::string name, std::string description) {
    SuiteInfo s;
    s.name = name;
    s.description = std::move(description);
    s.operation = Operation::Norm;
    s.cases = [name](const SuiteContext&) { return norm_cases(name, NormTraits{}); };  // an fp32 LayerNorm, for listings
    return s;
  };
  return {make("norm",
               "LayerNorm and RMSNorm over rows: lengths 1 .. 4097, mean >> spread (one-pass cancellation), constant rows, a "
               "spread below sqrt(eps), tiny values, squares near overflow, with and without gamma/beta, NaN and Inf inputs"),
          make("norm_quick", "LayerNorm / RMSNorm, a few cases of the norm suite")};
}

}  // namespace fpcert
