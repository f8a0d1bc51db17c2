// tests/suites/diagnose_norm_recipe_test.cpp — the norm hypotheses beyond the fault catalogue (suites/diagnose/
// norm_recipe.hpp; docs/diagnose.md, "Reductions, softmax and normalisation"). LayerNorms written here, each declaring
// model_layernorm_f32_twopass's traits and computing one change of it in its own code (not the recipe's): the plain
// two-pass loop is "declared"; 1 / sqrtf is rsqrt=sqrt_div, FMA contraction contract=fma, sums over 32 strided lanes
// joined by a butterfly sums=warp32 (a "hint": a member of the declared any order), products by 1/n divide=reciprocal, Welford's recurrence variance=welford. Each change
// is first shown to change results on the cases (the test can fail). The recipe with no change equals every built-in
// CPU model bit for bit (the recipes are the models' arithmetic, computed by other code), and a kernel whose declaration no
// model has gets the unchanged recipe as a hypothesis of its own.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "kernels/norm/norm_kernel.hpp"
#include "suites/diagnose/diagnose.hpp"
#include "suites/diagnose/diagnose_rows.hpp"
#include "suites/diagnose/norm_recipe.hpp"

using namespace fpcert;

namespace {

enum class Mode { Plain, SqrtDiv, Fma, Warp32, Reciprocal, Welford, Welford64 };

/// A f32 LayerNorm written here: two-pass sequential sums, divisions by n, rsqrt as one rounding of 1/sqrt in double,
/// each operation as written (this file is built with -ffp-contract=off) — but for the change its mode names.
class TestNorm final : public NormKernel {
 public:
  TestNorm(std::string name, Mode m) : name_(std::move(name)), m_(m), t_(make_norm_kernel("model_layernorm_f32_twopass")->norm_traits()) {
    if (m_ == Mode::Welford64) {  // a declaration no built-in model has: the hypotheses are made from the kernel itself
      t_.arith.variance = NormVariance::WelfordCombined;
      t_.arith.welford = {WelfordShape{64, 1}};
    }
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return "test fixture"; }
  Backend backend() const override { return Backend::Cpu; }
  const NormTraits& norm_traits() const override { return t_; }
  void run(const NormOperands& o) override {
    const auto n = static_cast<std::size_t>(o.cols);
    const auto ld = [](const void* p, std::int64_t i) { return std::bit_cast<float>(static_cast<std::uint32_t>(load_code(p, i, 4))); };
    std::vector<float> x(n);
    for (std::int64_t r = 0; r < o.rows; ++r) {
      for (std::size_t j = 0; j < n; ++j) x[j] = ld(o.x, r * o.ldx + static_cast<std::int64_t>(j));
      const float nf = static_cast<float>(n);
      float mean = 0, var = 0;
      if (m_ == Mode::Welford || m_ == Mode::Welford64) {
        const std::size_t parts = m_ == Mode::Welford ? 1 : 64;
        std::vector<float> cnt(parts, 0), mu(parts, 0), m2(parts, 0);
        for (std::size_t j = 0; j < n; ++j) {
          const std::size_t p = j % parts;
          cnt[p] = cnt[p] + 1;
          const float d = x[j] - mu[p];
          mu[p] = mu[p] + d / cnt[p];
          m2[p] = m2[p] + d * (x[j] - mu[p]);
        }
        for (std::size_t half = parts / 2; half > 0; half /= 2)  // part l takes part l + half: lane 0 of a butterfly
          for (std::size_t l = 0; l < half; ++l) {
            const std::size_t h = l + half;
            if (cnt[h] == 0) continue;
            if (cnt[l] == 0) {
              cnt[l] = cnt[h], mu[l] = mu[h], m2[l] = m2[h];
              continue;
            }
            const float c = cnt[l] + cnt[h], d = mu[h] - mu[l], w = cnt[h] / c;
            m2[l] = (m2[l] + m2[h]) + (d * d) * (cnt[l] * w);
            mu[l] = mu[l] + d * w;
            cnt[l] = c;
          }
        mean = mu[0];
        var = m2[0] / nf;
      } else {
        mean = divide(sum(x), nf);
        std::vector<float> sq(n);
        for (std::size_t j = 0; j < n; ++j) sq[j] = x[j] - mean;
        var = divide(squares(sq), nf);
      }
      const float t = var + o.eps;
      const float rs = m_ == Mode::SqrtDiv ? 1.0f / std::sqrt(t) : static_cast<float>(1.0 / std::sqrt(static_cast<double>(t)));
      for (std::size_t j = 0; j < n; ++j) {
        const float g = o.gamma ? ld(o.gamma, static_cast<std::int64_t>(j)) : 1.0f, b = o.beta ? ld(o.beta, static_cast<std::int64_t>(j)) : 0.0f;
        float y = (x[j] - mean) * rs;
        if (m_ == Mode::Fma && o.beta) y = o.gamma ? std::fma(y, g, b) : std::fma(x[j] - mean, rs, b);
        else {
          if (o.gamma) y = y * g;
          if (o.beta) y = y + b;
        }
        store_code(o.out, r * o.ldo + static_cast<std::int64_t>(j), 4, std::bit_cast<std::uint32_t>(y));
      }
    }
  }

 private:
  float divide(float s, float nf) const { return m_ == Mode::Reciprocal ? s * (1.0f / nf) : s / nf; }
  /// Sequential from +0, or 32 lanes (lane l: entries l, l + 32, ...) joined by an xor butterfly (every lane adds its
  /// partner's value at offsets 16, 8, 4, 2, 1; addition commutes, so lane 0's value is every lane's).
  float sum(const std::vector<float>& v) const {
    if (m_ != Mode::Warp32) {
      float s = 0;
      for (float e : v) s = s + e;
      return s;
    }
    float lane[32] = {};
    for (std::size_t j = 0; j < v.size(); ++j) lane[j % 32] = lane[j % 32] + v[j];
    for (int o = 16; o > 0; o /= 2) {
      float next[32];
      for (int l = 0; l < 32; ++l) next[l] = lane[l] + lane[l ^ o];
      std::copy(next, next + 32, lane);
    }
    return lane[0];
  }
  float squares(const std::vector<float>& c) const {
    if (m_ == Mode::Fma) {
      float q = 0;
      for (float e : c) q = std::fma(e, e, q);
      return q;
    }
    std::vector<float> sq(c.size());
    for (std::size_t j = 0; j < c.size(); ++j) sq[j] = c[j] * c[j];
    return sum(sq);
  }

  std::string name_;
  Mode m_;
  NormTraits t_;
};

std::string fixture(const std::string& name, Mode m) {
  register_kernel(name, Backend::Cpu, false, [name, m] { return std::make_unique<TestNorm>(name, m); }, Operation::Norm);
  return name;
}

bool same_outputs(const RowRun& a, const RowRun& b) {
  if (a.out.size() != b.out.size()) return false;
  for (std::size_t c = 0; c < a.out.size(); ++c)
    if (a.out[c].size() != b.out[c].size() ||
        !std::equal(a.out[c].begin(), a.out[c].end(), b.out[c].begin(), [](double x, double y) { return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y) || (std::isnan(x) && std::isnan(y)); }))
      return false;
  return true;
}

}  // namespace

TEST_CASE("norm recipes: the unchanged recipe is every built-in CPU model, bit for bit, on the norm suite") {
  std::vector<std::string> models;  // named first: registering below may move the registry's entries
  for (const KernelInfo& k : kernel_registry())
    if (k.operation == Operation::Norm && k.backend == Backend::Cpu && !k.mutant && k.name.starts_with("model_")) models.push_back(k.name);
  CHECK(models.size() >= 11);
  for (const std::string& m : models) {
    CAPTURE(m);
    const NormTraits t = make_norm_kernel(m)->norm_traits();
    const std::string name = "test_recipe_of_" + m;
    register_kernel(name, Backend::Cpu, true, [name, t] { return make_norm_recipe_kernel(name, t, norm_model_recipe(t)); }, Operation::Norm);
    const RowRun a = run_row_kernel(m, "certify", {}), b = run_row_kernel(name, "certify", {});
    REQUIRE_FALSE(a.out.empty());
    CHECK(same_outputs(a, b));
  }
}

TEST_CASE("norm recipes: LayerNorms written here with one change are named by it, bit for bit") {
  const std::string plain = fixture("test_norm_plain", Mode::Plain);
  CHECK(row_base_kernel(plain) == "model_layernorm_f32_twopass");
  const RowHypothesisSet set = row_hypothesis_set("model_layernorm_f32_twopass", "quick", {});
  const RowRun rp = run_row_kernel(plain, "quick", {});
  {
    const DiagnosisRecord r = diagnose_row_kernel(plain, "quick", {}, 20, &set);
    CHECK(r.kind == "declared");
    CHECK(top_is(r, "declared"));
    CHECK(r.ranked.front().matched == r.ranked.front().elements);
  }
  for (const auto& [mode, id] : std::vector<std::pair<Mode, std::string>>{{Mode::SqrtDiv, "rsqrt=sqrt_div"},
                                                                         {Mode::Fma, "contract=fma"},
                                                                         {Mode::Warp32, "sums=warp32"},
                                                                         {Mode::Reciprocal, "divide=reciprocal"},
                                                                         {Mode::Welford, "variance=welford"}}) {
    CAPTURE(id);
    const std::string k = fixture("test_norm_" + id, mode);
    REQUIRE_FALSE(same_outputs(run_row_kernel(k, "quick", {}), rp));  // the change changes results on these cases
    const DiagnosisRecord r = diagnose_row_kernel(k, "quick", {}, 20, &set);
    // The warp order is a member of the declared "any order": the kernel keeps its declaration (a hint, exit code 0).
    CHECK(r.kind == (id == "sums=warp32" ? "hint" : "consistent"));
    CHECK(top_is(r, id));
    CHECK(r.ranked.front().matched == r.ranked.front().elements);
    CHECK(r.ranked.front().envelope_exceed == 0);  // the declared bound covers each of these arithmetics on these cases
  }
}

TEST_CASE("norm recipes: a declaration no model has gets the unchanged recipe as a hypothesis (Welford over 64 parts)") {
  const std::string k = fixture("test_norm_welford64", Mode::Welford64);
  std::string note;
  CHECK(row_base_kernel(k, &note) == k);  // no CPU model declares 64 parts
  REQUIRE_FALSE(same_outputs(run_row_kernel(k, "quick", {}), run_row_kernel("model_layernorm_f32_welford_w32", "quick", {})));
  const DiagnosisRecord r = diagnose_row_kernel(k, "quick", {}, 20);
  CHECK(r.kind == "declared");
  const auto it = std::find_if(r.ranked.begin(), r.ranked.end(), [](const DiagnosisHypothesis& h) { return h.id == "recipe=model"; });
  REQUIRE(it != r.ranked.end());
  CHECK(it->matched == it->elements);  // the recipe's Welford over 64 parts is the one written above, bit for bit
  CHECK(std::find(it->same_as.begin(), it->same_as.end(), "declared") != it->same_as.end());
}
