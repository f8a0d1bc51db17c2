// generators/pattern.cpp — deterministic integer patterns times a constant: the reference course's
// three-pipeline inputs (small non-negative integers repeating along the flattened matrix).
#include "generators/family.hpp"

namespace fpcert::detail {
namespace {

void make_int_pattern(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  set_gemm_shape(ps, p);
  const Format& src = *p.source;
  for (auto [mat, mod_key, scale_key] : {std::tuple{&p.a, "a_mod", "a_scale"}, std::tuple{&p.b, "b_mod", "b_scale"}}) {
    const auto mod = static_cast<std::uint64_t>(ps.integer(mod_key));
    // The constant as the source holds it, s = RN_src(scale); then RN_src(j s), the source format's own
    // multiplication: j < 2^20 and s has at most 24 bits (f32, bf16, f16), so j s is exact in double and
    // fill_source rounds once (an f64 source: the double product is that rounding).
    const double s = to_source(src, ps.real(scale_key));
    fill_source(*mat, src, ctx, [&](std::uint64_t i) { return static_cast<double>(i % mod) * s; });
  }
}

}  // namespace

std::vector<Family> pattern_families() {
  GeneratorInfo g;
  g.name = "int_pattern";
  g.summary = "a repeating pattern of small non-negative integers times a constant: A's flattened entry t (row-major) is "
              "(t mod a_mod) * a_scale, B's (t mod b_mod) * b_scale, multiplied in the source format";
  g.details = "No random draw (the seed is recorded only). With the defaults (mod 7 and 5, scales 0.013 and 0.017) every "
              "nonzero entry rounds in f16 and bf16, and all products are non-negative: sums grow linearly with K, with no "
              "cancellation to hide accumulation error. The reference course's three-pipeline inputs.";
  g.params = p_shape(64, 64, 64);
  g.params.push_back(p_int("a_mod", 7, 1, 1 << 20, "A's integers repeat 0, 1, ..., a_mod - 1"));
  g.params.push_back(p_int("b_mod", 5, 1, 1 << 20, "B's integers repeat 0, 1, ..., b_mod - 1"));
  g.params.push_back(p_real("a_scale", 0.013, 1e-300, 1e300, "constant multiplying A's integers (rounded to the source first)"));
  g.params.push_back(p_real("b_scale", 0.017, 1e-300, 1e300, "constant multiplying B's integers (rounded to the source first)"));
  g.params.push_back(p_seed());
  g.params.push_back(p_source());
  return {{g, make_int_pattern}};
}

}  // namespace fpcert::detail
