// kernels/norm/cpu/norm_bwd_models.cpp — CPU models of LayerNorm and RMSNorm backward kernels (docs/backward.md,
// "LayerNorm and RMSNorm backward"): f32 arithmetic through the FPU's float operations (x86-64 SSE: nearest even, no
// flush; the runner pins the environment) in PyTorch's order, xh_j = (x_j - mean) rstd, g_j = dy_j gamma_j, the row sums
// A = sum g and B = sum g xh sequential, a = A (1/n), b = B (1/n), dx_j = rstd ((g_j - a) - xh_j b) rounded into the input
// format; dgamma_j = sum_rows dy_j xh_j and dbeta_j = sum_rows dy_j in f32, sequential over the rows (deterministic).
// Each model carries the faults of NormBwdBug in its own arithmetic (with_bug).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "kernels/norm/norm_backward_kernel.hpp"
#include "kernels/register.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

struct ModelSpec {
  std::string name;
  NormKind kind = NormKind::LayerNorm;
  const Format* in = &f32;
  std::string note;
};

float to_f16(float v) { return static_cast<float>(to_double(f16, round_double(f16, static_cast<double>(v), Rounder::nearest(f16)).code)); }

class NormBwdModel final : public NormBwdKernel {
 public:
  NormBwdModel(ModelSpec s, NormBwdBug bug) : s_(std::move(s)), bug_(bug) {
    t_.kind = s_.kind;
    t_.input = s_.in;
    t_.compute = &f32;
    t_.acc = &f32;
    t_.dx_out = s_.in;
    t_.param_acc = &f32;
    t_.param_order = ReduceOrder::sequential();
    t_.param_determinism = Determinism::Deterministic;
    t_.param_out = &f32;
    t_.note = s_.note;
    name_ = bug_ == NormBwdBug::None ? s_.name : s_.name + "~" + std::string(to_string(bug_));
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return s_.note + " (" + describe_norm_bwd_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return bug_ != NormBwdBug::None; }
  const NormBwdTraits& norm_bwd_traits() const override { return t_; }
  std::unique_ptr<NormBwdKernel> with_bug(NormBwdBug bug) const override { return std::make_unique<NormBwdModel>(s_, bug); }

  void run(const NormBwdOperands& o) override {
    const Format& in = *s_.in;
    const int xb = container_bytes(in);
    const bool ln = s_.kind == NormKind::LayerNorm;
    const auto n = static_cast<std::size_t>(o.cols);
    auto ld = [&](const void* p, std::int64_t i) { return static_cast<float>(to_double(in, load_code(p, i, xb))); };
    auto ld32 = [](const void* p, std::int64_t i) { return static_cast<const float*>(p)[i]; };
    std::vector<float> gam(n, 1.0f), xh(n), g(n), dgam(n, 0.0f), dbet(n, 0.0f);
    if (o.gamma && bug_ != NormBwdBug::GammaIgnored)
      for (std::size_t j = 0; j < n; ++j) gam[j] = ld(o.gamma, static_cast<std::int64_t>(j));
    const float inv_n = 1.0f / static_cast<float>(n);
    for (std::int64_t r = 0; r < o.rows; ++r) {
      const float mean = ln ? ld32(o.mean, r) : 0.0f;
      float rstd = ld32(o.rstd, r);
      if (bug_ == NormBwdBug::RstdSquared) rstd = rstd * rstd;
      float a = 0, b = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const auto jj = static_cast<std::int64_t>(j);
        const float x = ld(o.x, r * o.ldx + jj), dy = ld(o.dy, r * o.lddy + jj);
        xh[j] = (x - mean) * rstd;
        g[j] = dy * gam[j];
        a += g[j];
        b += g[j] * xh[j];
        dgam[j] = add_param(dgam[j], bug_ == NormBwdBug::DGammaNoXhat ? dy : dy * xh[j]);
        dbet[j] = add_param(dbet[j], dy);
      }
      a = ln && bug_ != NormBwdBug::NoMeanTerm ? a * inv_n : 0.0f;
      b = bug_ == NormBwdBug::NoProjTerm ? 0.0f : b * inv_n;
      for (std::size_t j = 0; j < n; ++j) {
        const float dx = rstd * ((g[j] - a) - xh[j] * b);
        const double v = bug_ == NormBwdBug::Zeros ? 0.0 : static_cast<double>(dx);
        store_code(o.dx, r * o.lddx + static_cast<std::int64_t>(j), xb, to_container(in, round_double(in, v, Rounder::nearest(in)).code));
      }
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (o.dgamma) static_cast<float*>(o.dgamma)[j] = bug_ == NormBwdBug::Zeros ? 0.0f : dgam[j];
      if (o.dbeta && ln) static_cast<float*>(o.dbeta)[j] = bug_ == NormBwdBug::Zeros ? 0.0f : dbet[j];
    }
  }

 private:
  float add_param(float s, float e) const { return bug_ == NormBwdBug::DGammaF16 ? to_f16(s + e) : s + e; }

  ModelSpec s_;
  NormBwdBug bug_;
  NormBwdTraits t_;
  std::string name_;
};

}  // namespace

void register_norm_bwd_models() {
  const std::vector<ModelSpec> specs = {
      {"model_layernorm_bwd_f32", NormKind::LayerNorm, &f32, "f32 LayerNorm backward in PyTorch's order, column sums sequential"},
      {"model_layernorm_bwd_f16", NormKind::LayerNorm, &f16, "f16 storage, f32 arithmetic (torch native_layer_norm_backward on half)"},
      {"model_layernorm_bwd_bf16", NormKind::LayerNorm, &bf16, "bf16 storage, f32 arithmetic"},
      {"model_rmsnorm_bwd_f16", NormKind::RmsNorm, &f16, "f16 storage, f32 arithmetic, x rstd"},
      {"model_rmsnorm_bwd_bf16", NormKind::RmsNorm, &bf16, "bf16 storage, f32 arithmetic, x rstd"},
  };
  for (const ModelSpec& s : specs)
    register_kernel(s.name, Backend::Cpu, false, [s] { return std::make_unique<NormBwdModel>(s, NormBwdBug::None); },
                    Operation::NormBackward);
}

}  // namespace fpcert
