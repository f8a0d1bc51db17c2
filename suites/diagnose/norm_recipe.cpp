// suites/diagnose/norm_recipe.cpp — see norm_recipe.hpp.
#include "suites/diagnose/norm_recipe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/codes.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

/// The row statistics as fp32 operations in the recipe's order (every operation rounded to nearest, no flush: the runner
/// pins the environment; -ffp-contract=off keeps each expression as written, std::fma where the recipe fuses).
class NormRecipeKernel final : public NormKernel {
 public:
  NormRecipeKernel(std::string name, NormTraits t, NormRecipe r) : name_(std::move(name)), t_(std::move(t)), r_(r) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "diagnosis hypothesis (" + describe(r_) + "; " + describe_norm_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return true; }
  const NormTraits& norm_traits() const override { return t_; }

  void run(const NormOperands& o) override {
    const Format& in = *t_.x_input;
    const Format& out = *t_.arith.out;
    const int xb = container_bytes(in), ob = container_bytes(out);
    const auto n = static_cast<std::size_t>(o.cols);
    const auto ld = [&](const void* p, std::int64_t i) { return static_cast<float>(to_double(in, from_container(in, load_code(p, i, xb)))); };
    std::vector<float> x(n), g(n, 1.0f), b(n, 0.0f);
    for (std::size_t j = 0; j < n; ++j) {
      if (o.gamma) g[j] = ld(o.gamma, static_cast<std::int64_t>(j));
      if (o.beta) b[j] = ld(o.beta, static_cast<std::int64_t>(j));
    }
    for (std::int64_t row = 0; row < o.rows; ++row) {
      for (std::size_t j = 0; j < n; ++j) x[j] = ld(o.x, row * o.ldx + static_cast<std::int64_t>(j));
      float mean = 0, var = 0;
      stats(x, mean, var);
      const float t = var + o.eps;
      const float rs = r_.rsqrt_sqrt_div ? 1.0f / std::sqrt(t) : static_cast<float>(1.0 / std::sqrt(static_cast<double>(t)));
      for (std::size_t j = 0; j < n; ++j) {
        const float c = x[j] - mean;
        float y = 0;
        if (r_.contract && o.beta) y = o.gamma ? std::fma(c * rs, g[j], b[j]) : std::fma(c, rs, b[j]);
        else {
          y = c * rs;
          if (o.gamma) y = y * g[j];
          if (o.beta) y = y + b[j];
        }
        store_code(o.out, row * o.ldo + static_cast<std::int64_t>(j), ob,
                   to_container(out, round_double(out, static_cast<double>(y), Rounder::nearest(out)).code));
      }
    }
  }

 private:
  float sum(const std::vector<double>& v) const { return static_cast<float>(emulate_sum(v.data(), v.size(), r_.sums, arith(ProductRounding::Exact))); }
  /// Sum of v_j^2: each square rounded, then added (no FMA), or fused into the addition.
  float squares(const std::vector<double>& v) const {
    return static_cast<float>(emulate_dot(v.data(), v.data(), v.size(), r_.sums, arith(r_.contract ? ProductRounding::Exact : ProductRounding::Rounded)));
  }
  static ReduceArith arith(ProductRounding p) {
    ReduceArith a;
    a.products = p;
    return a;
  }
  float per_n(float s, float nf) const { return r_.divide_by_reciprocal ? s * (1.0f / nf) : s / nf; }

  struct Part {
    float n = 0, m = 0, q = 0;
  };
  float fmadd(float a, float b, float c) const { return r_.contract ? std::fma(a, b, c) : a * b + c; }
  void welford_step(Part& p, float v) const {
    p.n += 1;
    const float d1 = v - p.m;
    p.m = p.m + d1 / p.n;
    p.q = fmadd(d1, v - p.m, p.q);
  }
  Part combine(const Part& a, const Part& b) const {
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    const float n = a.n + b.n, d = b.m - a.m, w = b.n / n;
    return {n, fmadd(d, w, a.m), fmadd(d * d, a.n * w, a.q + b.q)};
  }

  void stats(const std::vector<float>& x, float& mean, float& var) const {
    const std::size_t n = x.size();
    const auto nf = static_cast<float>(n);
    std::vector<double> v(x.begin(), x.end());
    if (r_.kind == NormKind::RmsNorm) {
      mean = 0;
      var = per_n(squares(v), nf);
      return;
    }
    switch (r_.variance) {
      case NormVariance::TwoPass: {
        mean = per_n(sum(v), nf);
        for (std::size_t j = 0; j < n; ++j) v[j] = static_cast<double>(x[j] - mean);
        var = per_n(squares(v), nf);
        return;
      }
      case NormVariance::OnePass: {
        mean = per_n(sum(v), nf);
        const float q = per_n(squares(v), nf);
        var = r_.contract ? std::fma(-mean, mean, q) : q - mean * mean;
        return;
      }
      case NormVariance::Welford: {
        Part p;
        for (float e : x) welford_step(p, e);
        mean = p.m;
        var = per_n(p.q, nf);
        return;
      }
      case NormVariance::WelfordCombined: {
        std::vector<Part> p(static_cast<std::size_t>(r_.parts));
        for (std::size_t j = 0; j < n; ++j) welford_step(p[j % p.size()], x[j]);
        for (std::size_t o = p.size() / 2; o > 0; o /= 2)
          for (std::size_t l = 0; l < o; ++l) p[l] = combine(p[l], p[l + o]);
        mean = p[0].m;
        var = per_n(p[0].q, nf);
        return;
      }
    }
  }

  std::string name_;
  NormTraits t_;
  NormRecipe r_;
};

}  // namespace

std::string describe(const NormRecipe& r) {
  const std::string alg = r.kind == NormKind::RmsNorm ? "rms" : r.variance == NormVariance::WelfordCombined ? fmt::format("welford over {} parts", r.parts)
                                                                                                          : std::string(to_string(r.variance));
  const bool sums = r.kind == NormKind::RmsNorm || r.variance == NormVariance::TwoPass || r.variance == NormVariance::OnePass;
  return fmt::format("{}{}, {}, rsqrt {}, {}", alg, sums ? ", sums " + describe(r.sums) : "", r.divide_by_reciprocal ? "products by fl(1/n)" : "divisions by n",
                     r.rsqrt_sqrt_div ? "1 / sqrt (two roundings)" : "fl32(1/sqrt) in double", r.contract ? "FMA contraction" : "no FMA");
}

NormRecipe norm_model_recipe(const NormTraits& t) {
  NormRecipe r;
  r.kind = t.arith.kind;
  r.variance = t.arith.variance;
  if (r.variance == NormVariance::WelfordCombined && !t.arith.welford.empty()) r.parts = t.arith.welford.front().parts;
  return r;
}

std::unique_ptr<NormKernel> make_norm_recipe_kernel(std::string name, NormTraits t, NormRecipe r) {
  return std::make_unique<NormRecipeKernel>(std::move(name), std::move(t), r);
}

std::vector<NormRecipeChange> norm_recipe_changes(const NormTraits& declared) {
  const NormRecipe base = norm_model_recipe(declared);
  std::vector<NormRecipeChange> cs;
  const auto add = [&](std::string id, std::string what, NormRecipe r, NormTraits t, bool member = false) {
    cs.push_back({std::move(id), std::move(what), r, std::move(t), member});
  };
  if (base.kind == NormKind::LayerNorm) {
    const std::pair<NormVariance, int> algs[] = {{NormVariance::TwoPass, 0}, {NormVariance::Welford, 0}, {NormVariance::WelfordCombined, 32}};
    for (const auto& [v, parts] : algs) {
      if (v == base.variance && (v != NormVariance::WelfordCombined || parts == base.parts)) continue;
      NormRecipe r = base;
      r.variance = v;
      NormTraits t = declared;
      t.arith.variance = v;
      if (parts) {
        r.parts = parts;
        t.arith.welford = {WelfordShape{parts, 1}};
      }
      const std::string tag = parts ? fmt::format("welford_w{}", parts) : std::string(to_string(v));
      add("variance=" + tag,
          fmt::format("the variance by {} where {} is declared", parts ? fmt::format("Welford over {} strided parts combined by a butterfly", parts) : tag,
                      to_string(base.variance)),
          r, t);
    }
  }
  if (base.kind == NormKind::RmsNorm || base.variance == NormVariance::TwoPass || base.variance == NormVariance::OnePass) {
    NormRecipe r = base;
    r.sums = ReduceOrder::warp_tree(32);
    add("sums=warp32", "the row sums in a warp's order (32 strided lanes, xor butterfly): a member of the declared 'any order'", r, declared, true);
  }
  NormRecipe r = base;
  r.divide_by_reciprocal = true;
  add("divide=reciprocal", "the mean and variance as products by fl(1/n) (two roundings) instead of divisions by n", r, declared);
  r = base;
  r.rsqrt_sqrt_div = true;
  NormTraits t = declared;
  t.arith.rsqrt_ulps = std::max(t.arith.rsqrt_ulps, 1 + 0x1p-22);  // RN(1/RN(sqrt t)): relative error 2u/(1 - u)
  t.arith.rsqrt_source = "1 / sqrt(t), both correctly rounded: relative error 2u/(1 - u)";
  add("rsqrt=sqrt_div", "rsqrt as 1 / sqrtf(t), two roundings, instead of one rounding of 1/sqrt(t)", r, t);
  r = base;
  r.contract = true;
  add("contract=fma", "products fused into the additions after them (FMA: nvcc's default -fmad=true; the squares into their sums, y * g + b)", r, declared);
  return cs;
}

}  // namespace fpcert
