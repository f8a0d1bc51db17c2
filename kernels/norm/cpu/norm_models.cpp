// kernels/norm/cpu/norm_models.cpp — CPU models of LayerNorm and RMSNorm kernels (docs/normalization.md, "Kernels"):
// two-pass, Welford, Welford over 32 parts combined pairwise (a CUDA warp's lanes) and the naive one-pass variance
// (declared weaker), fp32 arithmetic through the FPU's float operations (x86-64 SSE: nearest even, no flush; the runner
// pins the environment), the rsqrt as the fp32 rounding of 1 / sqrt in double (within 0.5 ulp + 2^-28 ulp: declared
// 1 ulp). Each model carries the faults of NormBug in its own arithmetic (with_bug).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "kernels/norm/norm_kernel.hpp"
#include "kernels/register.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

struct ModelSpec {
  std::string name;
  NormKind kind = NormKind::LayerNorm;
  NormVariance variance = NormVariance::TwoPass;
  const Format* in = &f32;
  std::string note;
};

class NormModel final : public NormKernel {
 public:
  NormModel(ModelSpec s, NormBug bug) : s_(std::move(s)), bug_(bug) {
    NormArith& a = t_.arith;
    a.kind = s_.kind;
    a.variance = s_.variance;
    a.compute = &f32;
    a.acc = &f32;
    a.rsqrt_ulps = 1;
    a.rsqrt_source = "fl32(1 / sqrt(t)) in double: 0.5 ulp + 2^-28 ulp";
    a.out = s_.in;
    t_.x_input = s_.in;
    t_.note = s_.note;
    name_ = bug_ == NormBug::None ? s_.name : s_.name + "~" + std::string(to_string(bug_));
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return s_.note + " (" + describe_norm_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return bug_ != NormBug::None; }
  const NormTraits& norm_traits() const override { return t_; }
  std::unique_ptr<NormKernel> with_bug(NormBug bug) const override { return std::make_unique<NormModel>(s_, bug); }

  void run(const NormOperands& o) override {
    const Format& in = *s_.in;
    const int xb = container_bytes(in);
    const auto n = static_cast<std::size_t>(o.cols);
    auto ld = [&](const void* p, std::int64_t i) { return static_cast<float>(to_double(in, load_code(p, i, xb))); };
    std::vector<float> x(n), g(n, 1.0f), b(n, 0.0f);
    for (std::size_t j = 0; j < n; ++j) {
      if (o.gamma) g[j] = ld(o.gamma, static_cast<std::int64_t>(j));
      if (o.beta) b[j] = ld(o.beta, static_cast<std::int64_t>(j));
    }
    for (std::int64_t r = 0; r < o.rows; ++r) {
      for (std::size_t j = 0; j < n; ++j) x[j] = ld(o.x, r * o.ldx + static_cast<std::int64_t>(j));
      float mean = 0, var = 0;
      stats(x, mean, var);
      const float t = var + o.eps;
      const float rs = bug_ == NormBug::EpsOutsideSqrt ? 1.0f / (std::sqrt(var) + o.eps)
                                                        : static_cast<float>(1.0 / std::sqrt(static_cast<double>(t)));
      for (std::size_t j = 0; j < n; ++j) {
        float y = (x[j] - mean) * rs;
        if (bug_ == NormBug::AffineSwapped) y = y * b[j] + g[j];
        else if (bug_ != NormBug::AffineIgnored) {
          if (o.gamma) y = y * g[j];
          if (o.beta) y = y + b[j];
        }
        const double v = bug_ == NormBug::Zeros ? 0.0 : static_cast<double>(y);
        store_code(o.out, r * o.ldo + static_cast<std::int64_t>(j), xb, to_container(in, round_double(in, v, Rounder::nearest(in)).code));
      }
    }
  }

 private:
  float add(float s, float e) const {
    if (bug_ != NormBug::F16RowSum && bug_ != NormBug::Bf16RowSum) return s + e;
    const Format& acc = bug_ == NormBug::F16RowSum ? f16 : bf16;
    return static_cast<float>(to_double(acc, round_double(acc, static_cast<double>(s) + static_cast<double>(e), Rounder::nearest(acc)).code));
  }

  void stats(const std::vector<float>& x, float& mean, float& var) const {
    const std::size_t n = x.size();
    const auto nf = static_cast<float>(n);
    const float div = bug_ == NormBug::Bessel && n > 1 ? nf - 1 : nf;
    const bool rms = s_.kind == NormKind::RmsNorm || bug_ == NormBug::NoMeanSubtract;
    if (rms) {
      float q = 0;
      for (float v : x) q = add(q, v * v);
      mean = 0;
      var = q / div;
      return;
    }
    const NormVariance alg = bug_ == NormBug::OnePassVariance ? NormVariance::OnePass : s_.variance;
    if (alg == NormVariance::TwoPass) {
      float s = 0;
      for (float v : x) s = add(s, v);
      mean = s / nf;
      float q = 0;
      for (float v : x) q = add(q, (v - mean) * (v - mean));
      var = q / div;
    } else if (alg == NormVariance::WelfordCombined) {
      float m2 = 0;
      welford_parts(x, mean, m2);
      var = m2 / div;
    } else if (alg == NormVariance::Welford) {
      float m = 0, m2 = 0;
      for (std::size_t k = 0; k < n; ++k) {
        const float d1 = x[k] - m;
        m = add(m, d1 / static_cast<float>(k + 1));
        m2 = add(m2, d1 * (x[k] - m));
      }
      mean = m;
      var = m2 / div;
    } else {
      float s = 0, q = 0;
      for (float v : x) s = add(s, v), q = add(q, v * v);
      mean = s / nf;
      var = bug_ == NormBug::Bessel ? (q - nf * mean * mean) / div : q / nf - mean * mean;
    }
  }

  /// Welford's (count, mean, M2) of one part, and Chan, Golub and LeVeque's combination of two parts (docs/normalization.md,
  /// "Welford per part, combined"); the CUDA kernels (kernels/norm/cuda/norm_cuda.cu) run the same operations.
  struct Part {
    float n = 0, m = 0, q = 0;
  };
  void welford_step(Part& p, float x) const {
    p.n += 1;
    const float d1 = x - p.m;
    p.m = add(p.m, d1 / p.n);
    p.q = add(p.q, d1 * (x - p.m));
  }
  Part combine(const Part& a, const Part& b) const {
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    const float n = a.n + b.n, d = b.m - a.m, w = b.n / n;
    return {n, add(a.m, d * w), add(add(a.q, b.q), (d * d) * (a.n * w))};
  }
  /// Part l holds x_j for j = l, l + P, ... (P = the declared parts); lane 0 of a butterfly over the parts: at offset o
  /// (P/2, ..., 1) part l < o takes combine(part l, part l + o).
  void welford_parts(const std::vector<float>& x, float& mean, float& m2) const {
    std::vector<Part> p(static_cast<std::size_t>(t_.arith.welford.front().parts));
    for (std::size_t j = 0; j < x.size(); ++j) welford_step(p[j % p.size()], x[j]);
    for (std::size_t o = p.size() / 2; o > 0; o /= 2)
      for (std::size_t l = 0; l < o; ++l) p[l] = combine(p[l], p[l + o]);
    mean = p[0].m;
    m2 = p[0].q;
  }

  ModelSpec s_;
  NormBug bug_;
  NormTraits t_;
  std::string name_;
};

}  // namespace

void register_norm_models() {
  const std::vector<ModelSpec> specs = {
      {"model_layernorm_f32_twopass", NormKind::LayerNorm, NormVariance::TwoPass, &f32, "mean, then sum (x - mean)^2 / n (two passes)"},
      {"model_layernorm_f16_twopass", NormKind::LayerNorm, NormVariance::TwoPass, &f16, "f16 storage, f32 arithmetic (torch layer_norm on half)"},
      {"model_layernorm_bf16_twopass", NormKind::LayerNorm, NormVariance::TwoPass, &bf16, "bf16 storage, f32 arithmetic"},
      {"model_layernorm_f32_welford", NormKind::LayerNorm, NormVariance::Welford, &f32, "Welford's running mean and M2 (one pass)"},
      {"model_layernorm_f32_welford_w32", NormKind::LayerNorm, NormVariance::WelfordCombined, &f32,
       "Welford per part over 32 strided parts (j = l, l + 32, ...), combined by a butterfly (Chan, Golub and LeVeque)"},
      {"model_layernorm_f16_welford_w32", NormKind::LayerNorm, NormVariance::WelfordCombined, &f16,
       "f16 storage, f32 arithmetic, Welford over 32 parts combined by a butterfly (layernorm_f16_welford_cuda's order)"},
      {"model_layernorm_bf16_welford_w32", NormKind::LayerNorm, NormVariance::WelfordCombined, &bf16,
       "bf16 storage, f32 arithmetic, Welford over 32 parts combined by a butterfly (layernorm_bf16_welford_cuda's order)"},
      {"model_layernorm_f32_onepass", NormKind::LayerNorm, NormVariance::OnePass, &f32,
       "E[x^2] - E[x]^2 in one pass (declared weaker: its bound grows with mean^2 / var)"},
      {"model_rmsnorm_f32", NormKind::RmsNorm, NormVariance::TwoPass, &f32, "x / sqrt(mean(x^2) + eps)"},
      {"model_rmsnorm_f16", NormKind::RmsNorm, NormVariance::TwoPass, &f16, "f16 storage, f32 arithmetic"},
      {"model_rmsnorm_bf16", NormKind::RmsNorm, NormVariance::TwoPass, &bf16, "bf16 storage, f32 arithmetic"},
  };
  for (const ModelSpec& s : specs)
    register_kernel(s.name, Backend::Cpu, false, [s] { return std::make_unique<NormModel>(s, NormBug::None); }, Operation::Norm);
}

}  // namespace fpcert
